//! Proves that every eviction policy, once its arrays have grown, handles
//! created, touched and removed batches and victim requests (all three
//! eligibility forms) without heap allocation: after `reserve_slots`, and
//! after a warm-up cycle without it. Its own test binary without libtest's
//! harness (the allocator counts every thread), as `no_alloc.rs` is.

use std::alloc::System;

use bitmap_core::Bitmap;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tier_state::{Eligible, EvictionPolicy, KeyMeta, POLICY_NAMES, create_policy};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const KEYS: u32 = 4096;

fn heap_operations(mut work: impl FnMut()) -> usize {
    let region = Region::new(GLOBAL);
    work();
    let change = region.change();
    change.allocations + change.reallocations + change.deallocations
}

struct Inputs {
    order: Vec<u32>,
    meta: Vec<KeyMeta>,
    bits: Bitmap,
    victims: Vec<u32>,
    released: Vec<u32>,
}

/// Creates every key (with meta: families of 4 in two salts), touches
/// them, asks for victims in every form and removes them, then removes the
/// rest: the policy ends empty.
fn cycle(p: &mut dyn EvictionPolicy, inputs: &mut Inputs, with_meta: bool) {
    for (slots, meta) in inputs.order.chunks(64).zip(inputs.meta.chunks(64)) {
        if with_meta {
            p.on_created_with(slots, meta);
        } else {
            p.on_created(slots);
        }
    }
    for slots in inputs.order.chunks(64).rev() {
        p.on_touched(slots);
    }
    for form in 0..3 {
        inputs.victims.clear();
        let mut odd = |slot: u32| slot % 8 < 4;
        let eligible = match form {
            0 => Eligible::All,
            1 => Eligible::Bits(&inputs.bits),
            _ => Eligible::Predicate(&mut odd),
        };
        p.victims_in_salt(0, 0.1, eligible, &mut inputs.victims);
        p.on_removed(&inputs.victims);
    }
    for slots in inputs.order.chunks(64) {
        p.on_removed(slots);
    }
    inputs.released.clear();
    p.drain_released(&mut inputs.released);
    assert_eq!(p.num_tracked(), 0);
}

fn main() {
    // An odd multiplier permutes 0..KEYS (a power of two).
    let order: Vec<u32> = (0..KEYS).map(|i| i.wrapping_mul(2_654_435_761) % KEYS).collect();
    let meta = (0..KEYS)
        .map(|s| KeyMeta { family: s / 4, namespace: 0, kv_rank: (s % 4) / 2, group: s % 2, salt: s / 4 % 2 })
        .collect();
    let bits = Bitmap::from_indices(KEYS as usize, (0..KEYS as usize).filter(|s| s % 8 < 4)).unwrap();
    let mut inputs = Inputs {
        order,
        meta,
        bits,
        victims: Vec::with_capacity(KEYS as usize),
        released: Vec::with_capacity(KEYS as usize),
    };
    let mut checked = 0;
    for &name in POLICY_NAMES {
        for with_meta in [false, true] {
            for reserve in [false, true] {
                let mut p = create_policy(name).unwrap();
                if reserve {
                    p.reserve_slots(KEYS as usize);
                }
                // Warm-up: grows what reserve_slots does not (meta tables,
                // the visited set, ARC's release log).
                let first = heap_operations(|| cycle(p.as_mut(), &mut inputs, with_meta));
                if !reserve && name != "noop" {
                    assert!(first > 0, "{name}: the counter sees the first growth");
                }
                for round in 0..3 {
                    let ops = heap_operations(|| cycle(p.as_mut(), &mut inputs, with_meta));
                    assert_eq!(
                        ops, 0,
                        "{name} meta={with_meta} reserve={reserve} round {round}: {ops} heap operations"
                    );
                }
                checked += 1;
            }
        }
    }
    println!("policy_no_alloc: {checked} policy setups, no heap operation after warm-up");
}
