//! Prints ns per key for each eviction policy's events (created, touched,
//! removed) and ns per victim for a victim request at 10 %, at 1,024 and
//! 65,536 keys, against [`Lru`] measured in the same rounds, and each
//! policy's bytes per key.
//!
//! Each round clears every policy (capacity kept: no allocation in the timed
//! part) and runs, per policy in turn (interleaved, so load drifts hit all
//! alike): every key created in batches of 64 (a shuffled order), every key
//! touched in batches of 64 (another order), `victims(0.1, All)` and the
//! removal of the victims, then `victims(0.1, Bits)` over a bitmap of every
//! other run of four slots (every other family), and the removal of every key
//! in batches of 64.
//! Medians over the rounds are printed, and each median's ratio to `Lru`'s.
//!
//! "with families": slots come with [`KeyMeta`] through `on_created_with`,
//! four keys a family (2 kv ranks × 2 groups), one salt, created as LMCache
//! stores them: one (rank, group) row of 64 chunks a batch.
//!
//! `cargo run --release -p tier-state --example policy_speed [-- rounds [keys...]]`
//! (default 41 rounds, 1,024 and 65,536 keys; key counts are multiples of 256).

use std::hint::black_box;
use std::time::Instant;

use bitmap_core::Bitmap;
use tier_state::{Arc, ChunkLru, Eligible, EvictionPolicy, IsolatedLru, KeyMeta, Lru, S3Fifo};

const BATCH: usize = 64;
const PHASES: [&str; 5] = ["created", "touched", "victims 10%", "victims 10% (bits)", "removed"];

/// A permutation of `0..n` (a fixed LCG shuffle).
fn shuffled(n: u32, seed: u64) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n).collect();
    let mut x = seed;
    for i in (1..v.len()).rev() {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        v.swap(i, (x >> 33) as usize % (i + 1));
    }
    v
}

struct Case {
    name: &'static str,
    policy: Box<dyn EvictionPolicy>,
    families: bool,
    /// Per phase: ns per key (or per victim), one per round.
    ns: [Vec<f64>; 5],
}

fn meta(slot: u32) -> KeyMeta {
    KeyMeta { family: slot / 4, namespace: 0, kv_rank: (slot % 4) / 2, group: slot % 2, salt: 0 }
}

/// The creation order with families: LMCache's store batches, one
/// (rank, group) row of 64 chunks at a time, chunk groups in shuffled order.
fn family_order(n: u32) -> Vec<u32> {
    let mut order = Vec::with_capacity(n as usize);
    for block in shuffled(n / 4 / BATCH as u32, 3) {
        for coord in 0..4 {
            order.extend((0..BATCH as u32).map(|c| (block * BATCH as u32 + c) * 4 + coord));
        }
    }
    order
}

fn round(
    case: &mut Case,
    plain_order: &[u32],
    family_order: &[u32],
    touch_order: &[u32],
    metas: &[KeyMeta],
    bits: &Bitmap,
) {
    let p = case.policy.as_mut();
    p.clear();
    let create_order = if case.families { family_order } else { plain_order };
    let n = create_order.len();
    let start = Instant::now();
    for (slots, meta) in create_order.chunks(BATCH).zip(metas.chunks(BATCH)) {
        if case.families {
            p.on_created_with(slots, meta);
        } else {
            p.on_created(slots);
        }
    }
    case.ns[0].push(start.elapsed().as_nanos() as f64 / n as f64);
    assert_eq!(p.num_tracked(), n, "{}", case.name);

    let start = Instant::now();
    for slots in touch_order.chunks(BATCH) {
        p.on_touched(slots);
    }
    case.ns[1].push(start.elapsed().as_nanos() as f64 / n as f64);

    let mut victims = Vec::with_capacity(n);
    for (phase, use_bits) in [(2, false), (3, true)] {
        victims.clear();
        let start = Instant::now();
        let eligible = if use_bits { Eligible::Bits(bits) } else { Eligible::All };
        p.victims_in_salt(0, 0.1, eligible, &mut victims);
        let elapsed = start.elapsed().as_nanos() as f64;
        assert!(!victims.is_empty(), "{}", case.name);
        case.ns[phase].push(elapsed / victims.len() as f64);
        p.on_removed(black_box(&victims));
    }

    let start = Instant::now();
    for slots in create_order.chunks(BATCH) {
        p.on_removed(slots);
    }
    case.ns[4].push(start.elapsed().as_nanos() as f64 / n as f64);
    assert_eq!(p.num_tracked(), 0, "{}", case.name);
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(41);
    let sizes: Vec<u32> = std::env::args().skip(2).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![1_024, 65_536] } else { sizes };
    for n in sizes {
        assert!(n % (4 * BATCH as u32) == 0, "key counts are multiples of {}", 4 * BATCH);
        let create_order = shuffled(n, 1);
        let touch_order = shuffled(n, 2);
        let family_order = family_order(n);
        let metas: Vec<KeyMeta> = family_order.iter().map(|&s| meta(s)).collect();
        let bits = Bitmap::from_indices(n as usize, (0..n as usize).filter(|s| s / 4 % 2 == 0)).expect("in range");
        let mut cases: Vec<Case> = [
            ("Lru (baseline)", Box::new(Lru::new()) as Box<dyn EvictionPolicy>, false),
            ("ChunkLru", Box::new(ChunkLru::new()), false),
            ("ChunkLru with families", Box::new(ChunkLru::new()), true),
            ("IsolatedLru with families", Box::new(IsolatedLru::new()), true),
            ("S3Fifo", Box::new(S3Fifo::new()), false),
            ("Arc", Box::new(Arc::new()), false),
        ]
        .into_iter()
        .map(|(name, policy, families)| Case { name, policy, families, ns: Default::default() })
        .collect();
        // Warm-up: grows every array once (clear keeps the capacity).
        for case in &mut cases {
            round(case, &create_order, &family_order, &touch_order, &metas, &bits);
            case.ns = Default::default();
        }
        for _ in 0..rounds {
            for case in &mut cases {
                round(case, &create_order, &family_order, &touch_order, &metas, &bits);
            }
        }
        let medians: Vec<[f64; 5]> = cases.iter_mut().map(|c| core::array::from_fn(|i| median(&mut c.ns[i]))).collect();
        println!("{n} keys: median ns per key (victims: per victim) over {rounds} rounds; × Lru's median");
        print!("  {:28}", "");
        for phase in PHASES {
            print!(" {phase:>20}");
        }
        println!(" {:>8}", "B/key");
        for (case, m) in cases.iter().zip(&medians) {
            print!("  {:28}", case.name);
            for (i, v) in m.iter().enumerate() {
                print!(" {:>9.1} (×{:>5.2}) ", v, v / medians[0][i]);
            }
            println!(" {:>7.1}", case.policy.memory_bytes() as f64 / f64::from(n));
        }
    }
}
