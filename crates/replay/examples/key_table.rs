//! What a key lookup costs the replay: the dense-id index it has (a
//! `Vec<bool>` of residence, as a `PolicyTier` keeps, and a strict `Tier`'s
//! `slot_of`) against `tier-state`'s key table (`Tier::slot_of`: hashbrown
//! over `TierKey`s, FxHash), on the block references of a Mooncake-shaped
//! trace, every key present. Interleaved: each round times each form once
//! over the whole trace, the order rotating; the medians over rounds are
//! printed with their ratios to the dense index.
//!
//! ```text
//! $ cargo run --release -p kv-replay --example key_table [REQUESTS MEAN_KEYS ROUNDS]
//! ```
//!
//! The replay makes 4 to 6 lookups a block reference (L1, each adapter,
//! the touches), so at 20 M block references a second a lookup has about
//! 10 ns, all else included.

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Instant;

use kv_replay::synthetic::{SyntheticOptions, generate};
use kv_replay::{Eviction, Tier};
use tier_state::{Batch, Flags, TierConfig, TierKey};

/// A chunk hash for a dense id: splitmix64, so the table sees hashes as
/// spread as real ones.
fn chunk_hash(id: u32) -> u64 {
    let mut z = u64::from(id).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args().skip(1).map(|arg| arg.parse()).collect::<Result<_, _>>()?;
    let (requests, mean_keys, rounds) = (
        args.first().copied().unwrap_or(12_000),
        args.get(1).copied().unwrap_or(24),
        args.get(2).copied().unwrap_or(21),
    );
    let trace = generate(&SyntheticOptions::default().with_size(requests, mean_keys));
    let keys: Vec<u32> = trace.requests().flat_map(|request| request.keys.iter().copied()).collect();
    let distinct = trace.distinct_keys();

    let resident = vec![true; distinct];
    let mut strict = Tier::with_reserve(None, Eviction::Lru, distinct);
    (0..distinct as u32).for_each(|key| strict.touch(key));
    let mut table = tier_state::Tier::new(TierConfig::new(distinct))?;
    let tier_keys: Vec<TierKey> = (0..distinct as u32).map(|id| TierKey::new(chunk_hash(id), 0)).collect();
    let mut answer = Batch::default();
    for chunk in tier_keys.chunks(1024) {
        table.reserve_write(chunk, Flags::All(false), 1, &mut answer)?;
        table.finish_write(chunk, 1, &mut answer)?;
    }
    assert_eq!(table.num_resident(), distinct);
    // The references as the table sees them (hashing the id is the
    // caller's, not the lookup's).
    let trace_keys: Vec<TierKey> = keys.iter().map(|&key| tier_keys[key as usize]).collect();

    let forms: [(&str, &dyn Fn() -> usize); 3] = [
        ("dense Vec<bool>", &|| keys.iter().filter(|&&key| resident[key as usize]).count()),
        ("dense Tier::contains", &|| keys.iter().filter(|&&key| strict.contains(key)).count()),
        ("tier-state slot_of", &|| trace_keys.iter().filter(|&&key| table.slot_of(key).is_some()).count()),
    ];
    let mut samples = vec![Vec::new(); forms.len()];
    for round in 0..rounds {
        for step in 0..forms.len() {
            let form = (round + step) % forms.len();
            let start = Instant::now();
            let found = black_box(forms[form].1());
            samples[form].push(start.elapsed().as_nanos() as f64 / keys.len() as f64);
            assert_eq!(found, keys.len());
        }
    }
    println!("{} block references, {distinct} distinct keys, {rounds} rounds; ns a lookup (median)", keys.len());
    let base = median(samples[0].clone());
    for ((name, _), samples) in forms.iter().zip(samples) {
        let ns = median(samples);
        println!("{name:>22} {ns:>8.2} ns  {:>6.2}x the dense index", ns / base);
    }
    Ok(())
}
