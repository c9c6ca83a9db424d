//! `tier_ops`: random operation sequences on a `tier_state::Tier` and on its
//! plain model (`tier_state::model::Model`, a `HashMap` of per-key structs
//! following LMCache's `L1Manager` and `TTLLock`), compared after every
//! step: each key's outcome, the slots handed out, every key's state, the
//! state bitmaps, the evictable set and the LRU order. Every fourth request
//! also goes through the positional form (`GridKeys`) on a twin tier,
//! whose answers must equal the slice form's.

use std::collections::BTreeSet;

use arbitrary::Arbitrary;
use bitmap_core::Bitmap;
use tier_state::model::Model;
use tier_state::{
    Answer, Batch, Clock, Eligible, Flags, GridBatch, GridKeys, Lru, ManualClock, NO_SLOT, Outcome, Tier, TierConfig,
    TierKey,
};

/// Keys: 8 chunk hashes × 3 rows.
const HASHES: u8 = 8;
const ROWS: u8 = 3;
const TAGS: u8 = 4;

/// One operation; key lists are indices into the key universe.
#[derive(Arbitrary, Clone, Debug)]
pub enum Op {
    /// `reserve_read(keys, read_locks)`.
    ReserveRead(Vec<u8>, i8),
    /// `unsafe_read(keys)`.
    UnsafeRead(Vec<u8>),
    /// `finish_read(keys, read_locks)`.
    FinishRead(Vec<u8>, i8),
    /// `reserve_write(keys, temporary, tag)`.
    ReserveWrite(Vec<(u8, bool)>, u8),
    /// `finish_write(keys, tag)`.
    FinishWrite(Vec<u8>, u8),
    /// `finish_prefetch(keys, tag)`.
    FinishPrefetch(Vec<u8>, u8),
    /// `finish_write_and_reserve_read(keys, read_locks, tag)`.
    FinishWriteAndReserveRead(Vec<u8>, i8, u8),
    /// `finish_write_and_delete(keys, tag)`.
    FinishWriteAndDelete(Vec<u8>, u8),
    /// `delete(keys, force)`.
    Delete(Vec<u8>, bool),
    /// `touch(keys)`.
    Touch(Vec<u8>),
    /// `clear(force)`.
    Clear(bool),
    /// `evict(ratio / 255)`.
    Evict(u8),
    /// The clock moves on.
    Advance(u8),
    /// A request of chunk hashes × rows through both key forms.
    Grid(Vec<u8>, Vec<u8>, u8),
}

/// A tier's capacity, lock lifetimes and operations.
#[derive(Arbitrary, Clone, Debug)]
pub struct Input {
    /// Capacity in objects (0–31).
    pub capacity: u8,
    /// Read TTL in ms (0–63).
    pub read_ttl: u8,
    /// Write TTL in ms (0–63).
    pub write_ttl: u8,
    /// The operations, at most 200.
    pub ops: Vec<Op>,
}

fn key(i: u8) -> TierKey {
    let i = i % (HASHES * ROWS);
    TierKey::new(u64::from(i % HASHES).wrapping_mul(0x9e37_79b9_7f4a_7c15), u32::from(i / HASHES))
}

fn keys(list: &[u8]) -> Vec<TierKey> {
    list.iter().take(16).map(|&i| key(i)).collect()
}

/// Runs `input` on a tier and the model; panics on the first difference.
pub fn check(input: Input) {
    let config = TierConfig::new(usize::from(input.capacity % 32))
        .with_ttls_ms(u64::from(input.read_ttl % 64), u64::from(input.write_ttl % 64))
        .with_rows(u32::from(ROWS));
    let clock = ManualClock::new(100);
    let mut tier = Tier::with_parts(config, Box::new(clock.clone()), Box::new(Lru::new())).expect("a small capacity");
    let mut twin = Tier::with_parts(config, Box::new(clock.clone()), Box::new(Lru::new())).expect("a small capacity");
    let mut model = Model::new(config);
    let (mut answer, mut grid_answer) = (Batch::default(), GridBatch::default());
    for op in input.ops.iter().take(200) {
        let now = clock.now_ms();
        let expected: Option<(Vec<TierKey>, Vec<Outcome>, bool)> = match op {
            Op::ReserveRead(k, n) => {
                let k = keys(k);
                tier.reserve_read(&k[..], i64::from(*n), &mut answer).unwrap();
                twin.reserve_read(&k[..], i64::from(*n), &mut answer).unwrap();
                Some((k.clone(), model.reserve_read(&k, i64::from(*n), now), true))
            }
            Op::UnsafeRead(k) => {
                let k = keys(k);
                twin.unsafe_read(&k[..], &mut answer).unwrap();
                tier.unsafe_read(&k[..], &mut answer).unwrap();
                Some((k.clone(), model.unsafe_read(&k, now), true))
            }
            Op::FinishRead(k, n) => {
                let k = keys(k);
                twin.finish_read(&k[..], i64::from(*n), &mut answer).unwrap();
                tier.finish_read(&k[..], i64::from(*n), &mut answer).unwrap();
                Some((k.clone(), model.finish_read(&k, i64::from(*n), now), false))
            }
            Op::ReserveWrite(kt, tag) => {
                let k: Vec<TierKey> = kt.iter().take(16).map(|&(i, _)| key(i)).collect();
                let t: Vec<bool> = kt.iter().take(16).map(|&(_, t)| t).collect();
                let tag = u32::from(tag % TAGS);
                twin.reserve_write(&k[..], Flags::Each(&t), tag, &mut answer).unwrap();
                tier.reserve_write(&k[..], Flags::Each(&t), tag, &mut answer).unwrap();
                Some((k.clone(), model.reserve_write(&k, &t, tag, now), true))
            }
            Op::FinishWrite(k, tag) | Op::FinishPrefetch(k, tag) => {
                let k = keys(k);
                let tag = u32::from(tag % TAGS);
                if matches!(op, Op::FinishWrite(..)) {
                    twin.finish_write(&k[..], tag, &mut answer).unwrap();
                    tier.finish_write(&k[..], tag, &mut answer).unwrap();
                } else {
                    twin.finish_prefetch(&k[..], tag, &mut answer).unwrap();
                    tier.finish_prefetch(&k[..], tag, &mut answer).unwrap();
                }
                Some((k.clone(), model.finish_write(&k, tag, now), false))
            }
            Op::FinishWriteAndReserveRead(k, n, tag) => {
                let k = keys(k);
                let tag = u32::from(tag % TAGS);
                twin.finish_write_and_reserve_read(&k[..], i64::from(*n), tag, &mut answer).unwrap();
                tier.finish_write_and_reserve_read(&k[..], i64::from(*n), tag, &mut answer).unwrap();
                Some((k.clone(), model.finish_write_and_reserve_read(&k, i64::from(*n), tag, now), true))
            }
            Op::FinishWriteAndDelete(k, tag) => {
                let k = keys(k);
                let tag = u32::from(tag % TAGS);
                twin.finish_write_and_delete(&k[..], tag, &mut answer).unwrap();
                tier.finish_write_and_delete(&k[..], tag, &mut answer).unwrap();
                Some((k.clone(), model.finish_write_and_delete(&k, tag, now), false))
            }
            Op::Delete(k, force) => {
                let k = keys(k);
                twin.delete(&k[..], *force, &mut answer).unwrap();
                tier.delete(&k[..], *force, &mut answer).unwrap();
                Some((k.clone(), model.delete(&k, *force, now), false))
            }
            Op::Touch(k) => {
                let k = keys(k);
                twin.touch(&k[..], &mut answer).unwrap();
                tier.touch(&k[..], &mut answer).unwrap();
                Some((k.clone(), model.touch(&k), false))
            }
            Op::Clear(force) => {
                tier.clear(*force);
                twin.clear(*force);
                model.clear(*force, now);
                None
            }
            Op::Evict(ratio) => {
                let ratio = f64::from(*ratio) / 255.0;
                let mut evicted = Vec::new();
                tier.evict(ratio, &mut evicted);
                twin.evict(ratio, &mut Vec::new());
                assert_eq!(evicted, model.evict(ratio, now), "evict({ratio})");
                None
            }
            Op::Advance(ms) => {
                clock.advance(u64::from(*ms % 80));
                None
            }
            Op::Grid(hashes, rows, what) => {
                grid_request(&mut tier, &mut twin, &mut model, hashes, rows, *what, now, &mut answer, &mut grid_answer);
                None
            }
        };
        if let Some((k, outcomes, hands_out)) = expected {
            assert_eq!(answer.outcomes(), outcomes, "{op:?}");
            for (i, outcome) in outcomes.iter().enumerate() {
                if hands_out {
                    let want = if outcome.is_success() { tier.slot_of(k[i]).expect("a slot") } else { NO_SLOT };
                    assert_eq!(answer.slots()[i], want, "slot of key {i} in {op:?}");
                }
            }
        }
        let order = compare(&mut tier, &model, clock.now_ms());
        assert_eq!(tier.resident(), twin.resident());
        assert_eq!(tier.staged(), twin.staged());
        let mut twin_order = Vec::new();
        twin.policy_mut().victims(1.0, Eligible::All, &mut twin_order);
        assert_eq!(order, twin_order, "the twin's LRU order");
    }
}

/// A grid request through the positional form on `twin` and its row-major
/// slice on `tier` (and the model): the same answers.
#[allow(clippy::too_many_arguments)]
fn grid_request(
    tier: &mut Tier,
    twin: &mut Tier,
    model: &mut Model,
    hashes: &[u8],
    rows: &[u8],
    what: u8,
    now: u64,
    answer: &mut Batch,
    grid_answer: &mut GridBatch,
) {
    let hashes: Vec<u64> =
        hashes.iter().take(6).map(|&h| u64::from(h % HASHES).wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    let rows: Vec<u32> = rows.iter().take(3).map(|&r| u32::from(r % ROWS)).collect();
    let grid = GridKeys::new(&hashes, &rows);
    let flat: Vec<TierKey> = rows.iter().flat_map(|&r| hashes.iter().map(move |&h| TierKey::new(h, r))).collect();
    let tag = u32::from(what % TAGS);
    // Rows in block order (0, 1, 2) take the tier's word path.
    let outcomes = match what % 8 {
        0 => {
            twin.reserve_write(&grid, Flags::All(what & 8 != 0), tag, grid_answer).unwrap();
            tier.reserve_write(&flat[..], Flags::All(what & 8 != 0), tag, answer).unwrap();
            model.reserve_write(&flat, &vec![what & 8 != 0; flat.len()], tag, now)
        }
        1 => {
            twin.finish_write(&grid, tag, grid_answer).unwrap();
            tier.finish_write(&flat[..], tag, answer).unwrap();
            model.finish_write(&flat, tag, now)
        }
        2 => {
            twin.reserve_read(&grid, 1, grid_answer).unwrap();
            tier.reserve_read(&flat[..], 1, answer).unwrap();
            model.reserve_read(&flat, 1, now)
        }
        3 => {
            twin.finish_read(&grid, 1, grid_answer).unwrap();
            tier.finish_read(&flat[..], 1, answer).unwrap();
            model.finish_read(&flat, 1, now)
        }
        4 => {
            twin.delete(&grid, what & 8 != 0, grid_answer).unwrap();
            tier.delete(&flat[..], what & 8 != 0, answer).unwrap();
            model.delete(&flat, what & 8 != 0, now)
        }
        5 => {
            twin.touch(&grid, grid_answer).unwrap();
            tier.touch(&flat[..], answer).unwrap();
            model.touch(&flat)
        }
        6 => {
            twin.finish_write_and_reserve_read(&grid, 1, tag, grid_answer).unwrap();
            tier.finish_write_and_reserve_read(&flat[..], 1, tag, answer).unwrap();
            model.finish_write_and_reserve_read(&flat, 1, tag, now)
        }
        _ => {
            twin.finish_write_and_delete(&grid, tag, grid_answer).unwrap();
            tier.finish_write_and_delete(&flat[..], tag, answer).unwrap();
            model.finish_write_and_delete(&flat, tag, now)
        }
    };
    assert_eq!(answer.outcomes(), outcomes, "grid request {what}");
    assert_eq!(grid_answer.failed(), answer.failed());
    assert_eq!(grid_answer.slots(), answer.slots());
    let cols = hashes.len();
    for i in 0..flat.len() {
        assert_eq!(grid_answer.ok().test(i / cols, i % cols), answer.ok().test(i));
    }
}

/// Every key's state, the bitmaps, the evictable set and the LRU order;
/// returns that order (slots, oldest first).
fn compare(tier: &mut Tier, model: &Model, now: u64) -> Vec<u32> {
    assert_eq!(tier.num_objects(), model.num_objects());
    assert!(tier.num_objects() <= tier.config().capacity);
    for i in 0..HASHES * ROWS {
        let k = key(i);
        let resident = model.objects.get(&k);
        assert_eq!(tier.is_resident(k), resident.is_some(), "resident {k:?}");
        let count = resident.filter(|e| e.read_lock.is_locked(now)).map_or(0, |e| e.read_lock.counter);
        assert_eq!(u64::from(tier.read_count(k)), count, "read count {k:?}");
        assert_eq!(tier.is_temporary(k), resident.is_some_and(|e| e.is_temporary), "temporary {k:?}");
        let stages = model.staging.get(&k);
        assert_eq!(tier.num_stages(k), stages.map_or(0, |t| t.len()), "stages {k:?}");
        for tag in 0..u32::from(TAGS) {
            let want = stages.and_then(|t| t.get(&tag)).map(|s| s.write_lock.is_locked(now));
            assert_eq!(tier.stage_state(k, tag), want, "stage {k:?} tag {tag}");
        }
        assert_eq!(tier.slot_of(k).is_some(), resident.is_some() || stages.is_some());
    }
    let mut evictable = Bitmap::new(0);
    tier.evictable_into(&mut evictable);
    let as_keys = |t: &Tier, bits: &Bitmap| -> BTreeSet<TierKey> {
        bits.ones().map(|slot| t.key_of(slot as u32).expect("a live slot")).collect()
    };
    let want: BTreeSet<TierKey> = (0..HASHES * ROWS).map(key).filter(|k| model.is_evictable(k, now)).collect();
    assert_eq!(as_keys(tier, &evictable), want, "evictable");
    let want: BTreeSet<TierKey> = model.objects.keys().copied().collect();
    assert_eq!(as_keys(tier, tier.resident()), want, "resident bitmap");
    let want: BTreeSet<TierKey> = model.staging.keys().copied().collect();
    assert_eq!(as_keys(tier, tier.staged()), want, "staged bitmap");
    let mut order = Vec::new();
    tier.policy_mut().victims(1.0, Eligible::All, &mut order);
    let keys: Vec<TierKey> = order.iter().map(|&slot| tier.key_of(slot).expect("a tracked slot is live")).collect();
    assert_eq!(keys, model.lru, "LRU order");
    order
}
