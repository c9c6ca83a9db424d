//! Proves that a warmed-up tier answers a request's whole lifecycle without
//! heap allocation, in both key forms, with a counting global allocator.
//!
//! The allocator counts every thread, so this file is its own test binary
//! without libtest's harness (`harness = false` in Cargo.toml), as
//! prefetch-policy's `tests/no_alloc.rs` is.

use std::alloc::System;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tier_state::{Answer, Batch, Flags, GridBatch, GridKeys, Keys, Lru, ManualClock, Tier, TierConfig, TierKey};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn heap_operations(mut work: impl FnMut()) -> usize {
    let region = Region::new(GLOBAL);
    work();
    let change = region.change();
    change.allocations + change.reallocations + change.deallocations
}

/// One request's lifecycle over `keys`, ending with the tier as it began.
fn lifecycle<K: Keys + ?Sized>(tier: &mut Tier, keys: &K, answer: &mut K::Answer) {
    let n = keys.len();
    tier.reserve_write(keys, Flags::All(false), 1, answer).unwrap();
    assert_eq!(answer.num_ok(), n);
    tier.finish_write(keys, 1, answer).unwrap();
    tier.reserve_read(keys, 2, answer).unwrap();
    tier.unsafe_read(keys, answer).unwrap();
    tier.finish_read(keys, 2, answer).unwrap();
    tier.touch(keys, answer).unwrap();
    tier.delete(keys, false, answer).unwrap();
    assert_eq!(answer.num_ok(), n);
    tier.reserve_write(keys, Flags::All(true), 2, answer).unwrap();
    tier.finish_write_and_reserve_read(keys, 1, 2, answer).unwrap();
    tier.finish_read(keys, 1, answer).unwrap(); // temporary: deleted
    tier.reserve_write(keys, Flags::All(false), 3, answer).unwrap();
    tier.finish_prefetch(keys, 3, answer).unwrap();
    tier.delete(keys, true, answer).unwrap();
    tier.reserve_write(keys, Flags::All(false), 4, answer).unwrap();
    tier.finish_write_and_delete(keys, 4, answer).unwrap();
    assert_eq!(answer.num_ok(), n);
}

fn main() {
    let hashes: Vec<u64> = (0..64u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    let rows: Vec<u32> = (0..16).collect();
    let flat: Vec<TierKey> = rows.iter().flat_map(|&r| hashes.iter().map(move |&h| TierKey::new(h, r))).collect();
    let config = TierConfig::new(4 * flat.len());
    let mut tier = Tier::with_parts(config, Box::new(ManualClock::new(0)), Box::new(Lru::new())).unwrap();

    // The counter sees allocations: the first lifecycle grows everything.
    let mut batch = Batch::default();
    assert!(heap_operations(|| lifecycle(&mut tier, &flat[..], &mut batch)) > 0);
    let warm = heap_operations(|| lifecycle(&mut tier, &flat[..], &mut batch));
    assert_eq!(warm, 0, "a slice request after warm-up: {warm} heap operations");

    let grid = GridKeys::new(&hashes, &rows);
    let mut grid_batch = GridBatch::default();
    lifecycle(&mut tier, &grid, &mut grid_batch);
    let warm = heap_operations(|| lifecycle(&mut tier, &grid, &mut grid_batch));
    assert_eq!(warm, 0, "a grid request after warm-up: {warm} heap operations");
    println!("no_alloc: a warmed-up tier answers both key forms without heap allocation");
}
