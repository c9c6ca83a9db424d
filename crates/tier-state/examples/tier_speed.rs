//! Prints ns/key for each batch call at 4,096 keys (table lookups
//! included), and the bytes per resident key. Both key forms: a slice of
//! keys (key by key) and a grid request (64 rows × 64 chunks: a chunk's
//! rows are one word of each state bitmap, so most calls go a chunk at a
//! time). The tier holds `resident`
//! other keys besides the request's, so lookups miss the caches as they
//! would in a full tier. Each call is timed per round; the median and the
//! minimum over the rounds are printed (the machine is shared: the minimum
//! is the least disturbed round).
//!
//! Keys are a controller's: chunks × 64 rows (key `i` is row `i % 64` of
//! chunk `i / 64`). The tier is configured with 64 rows, so a chunk's rows
//! share one block of slots (one table probe a chunk for a grid request);
//! `any-row` configures it for any row instead (a block a key, one probe a
//! key), the layout of an LMCache-shaped tier whose keys have no rows.
//!
//! `cargo run --release -p tier-state --example tier_speed [-- rounds [resident [lru|noop [rows64|any-row]]]]`
//! (defaults: 300 rounds, 100,000 resident keys, LRU, rows64).

use std::hint::black_box;
use std::time::Instant;

use tier_state::{
    Answer, Batch, EvictionPolicy, Flags, GridBatch, GridKeys, Lru, NoEviction, SystemClock, Tier, TierConfig, TierKey,
};

const BATCH: usize = 4096;

fn mix(i: u64) -> u64 {
    i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5555
}

/// Per-call timings: name → ns per key, one per round.
#[derive(Default)]
struct Timings(Vec<(&'static str, Vec<f64>)>);

impl Timings {
    fn add(&mut self, name: &'static str, ns_per_key: f64) {
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, all)) => all.push(ns_per_key),
            None => self.0.push((name, vec![ns_per_key])),
        }
    }

    fn print(&mut self, title: &str) {
        println!("{title}: ns/key, median (min) over rounds");
        for (name, all) in &mut self.0 {
            all.sort_by(f64::total_cmp);
            println!("  {name:32} {:6.2} ({:5.2})", all[all.len() / 2], all[0]);
        }
    }
}

fn timed<A: Answer>(
    timings: &mut Timings,
    tier: &mut Tier,
    answer: &mut A,
    name: &'static str,
    mut call: impl FnMut(&mut Tier, &mut A),
) {
    let start = Instant::now();
    call(tier, answer);
    timings.add(name, start.elapsed().as_nanos() as f64 / BATCH as f64);
    assert_eq!(answer.num_ok(), BATCH, "{name}");
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(300);
    let resident: usize = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let policy: Box<dyn EvictionPolicy> = match std::env::args().nth(3).as_deref() {
        Some("noop") => Box::new(NoEviction),
        _ => Box::new(Lru::new()),
    };
    let mut config = TierConfig::new(resident + 4 * BATCH);
    if std::env::args().nth(4).as_deref() != Some("any-row") {
        config = config.with_rows(64);
    }
    let mut tier = Tier::with_parts(config, Box::new(SystemClock::new()), policy).expect("capacity");
    let mut answer = Batch::default();
    let others: Vec<TierKey> = (0..resident as u64).map(|i| TierKey::new(mix(i / 64), (i % 64) as u32)).collect();
    tier.reserve_write(&others[..], Flags::All(false), 0, &mut answer).unwrap();
    tier.finish_write(&others[..], 0, &mut answer).unwrap();
    if resident > 0 {
        println!(
            "{} resident keys: {} bytes, {:.1} bytes per key (table + state); LRU {:.1} bytes per key",
            tier.num_keys(),
            tier.memory_bytes(),
            tier.bytes_per_key(),
            tier.policy().memory_bytes() as f64 / tier.num_keys() as f64
        );
    }

    let mut t = Timings::default();
    for round in 0..rounds {
        let base = (1u64 << 40) + (round as u64) * BATCH as u64;
        let keys: Vec<TierKey> = (0..BATCH as u64).map(|i| TierKey::new(mix(base + i / 64), (i % 64) as u32)).collect();
        let k = &keys[..];
        let a = &mut answer;
        timed(&mut t, &mut tier, a, "reserve_write", |t, a| t.reserve_write(k, Flags::All(false), 1, a).unwrap());
        timed(&mut t, &mut tier, a, "finish_write", |t, a| t.finish_write(k, 1, a).unwrap());
        timed(&mut t, &mut tier, a, "reserve_read", |t, a| t.reserve_read(k, 1, a).unwrap());
        timed(&mut t, &mut tier, a, "unsafe_read", |t, a| t.unsafe_read(k, a).unwrap());
        timed(&mut t, &mut tier, a, "finish_read", |t, a| t.finish_read(k, 1, a).unwrap());
        timed(&mut t, &mut tier, a, "touch", |t, a| t.touch(k, a).unwrap());
        timed(&mut t, &mut tier, a, "delete", |t, a| t.delete(k, false, a).unwrap());
        timed(&mut t, &mut tier, a, "reserve_write (tag 2)", |t, a| {
            t.reserve_write(k, Flags::All(true), 2, a).unwrap()
        });
        timed(&mut t, &mut tier, a, "finish_write_and_reserve_read", |t, a| {
            t.finish_write_and_reserve_read(k, 1, 2, a).unwrap()
        });
        timed(&mut t, &mut tier, a, "finish_read (temporary: deletes)", |t, a| t.finish_read(k, 1, a).unwrap());
        timed(&mut t, &mut tier, a, "reserve_write (tag 3)", |t, a| {
            t.reserve_write(k, Flags::All(false), 3, a).unwrap()
        });
        timed(&mut t, &mut tier, a, "finish_write_and_delete", |t, a| t.finish_write_and_delete(k, 3, a).unwrap());
        assert_eq!(tier.num_keys(), resident);
    }
    t.print(&format!("slice of {BATCH} keys, {rounds} rounds"));

    let rows: Vec<u32> = (0..64).collect();
    let mut grid_answer = GridBatch::default();
    let mut t = Timings::default();
    for round in 0..rounds {
        let base = (1u64 << 50) + (round as u64) * 64;
        let hashes: Vec<u64> = (0..64).map(|i| mix(base + i)).collect();
        let k = GridKeys::new(&hashes, &rows);
        let a = &mut grid_answer;
        timed(&mut t, &mut tier, a, "reserve_write", |t, a| t.reserve_write(&k, Flags::All(false), 1, a).unwrap());
        timed(&mut t, &mut tier, a, "finish_write", |t, a| t.finish_write(&k, 1, a).unwrap());
        timed(&mut t, &mut tier, a, "reserve_read", |t, a| t.reserve_read(&k, 1, a).unwrap());
        timed(&mut t, &mut tier, a, "unsafe_read", |t, a| t.unsafe_read(&k, a).unwrap());
        timed(&mut t, &mut tier, a, "finish_read", |t, a| t.finish_read(&k, 1, a).unwrap());
        timed(&mut t, &mut tier, a, "touch", |t, a| t.touch(&k, a).unwrap());
        timed(&mut t, &mut tier, a, "delete", |t, a| t.delete(&k, false, a).unwrap());
        timed(&mut t, &mut tier, a, "reserve_write (tag 2)", |t, a| {
            t.reserve_write(&k, Flags::All(true), 2, a).unwrap()
        });
        timed(&mut t, &mut tier, a, "finish_write_and_reserve_read", |t, a| {
            t.finish_write_and_reserve_read(&k, 1, 2, a).unwrap()
        });
        timed(&mut t, &mut tier, a, "finish_read (temporary: deletes)", |t, a| t.finish_read(&k, 1, a).unwrap());
        timed(&mut t, &mut tier, a, "reserve_write (tag 3)", |t, a| {
            t.reserve_write(&k, Flags::All(false), 3, a).unwrap()
        });
        timed(&mut t, &mut tier, a, "finish_write_and_delete", |t, a| t.finish_write_and_delete(&k, 3, a).unwrap());
        assert_eq!(tier.num_keys(), resident);
    }
    t.print("grid of 64 rows x 64 chunks");
    black_box(&tier);
}
