//! A proptest state machine: random operation sequences (writer tags, lock
//! counts, expiry on a manual clock, temporary keys, forced deletes,
//! capacity) on a `Tier` and on the plain model in `tier_state::model`,
//! comparing every outcome, every key's state, the state bitmaps, the
//! evictable expression and the LRU order after each step. The tier runs
//! with blocks of 1, 2, 4 and 64 slots a chunk (any row; 2, 3 and 64 rows),
//! so a block shared by live and empty rows is exercised.

use std::collections::BTreeSet;

use bitmap_core::Bitmap;
use proptest::prelude::*;
use tier_state::model::Model;
use tier_state::{Answer, Batch, Eligible, Flags, Lru, ManualClock, NO_SLOT, Outcome, Tier, TierConfig, TierKey};

/// The key universe: 6 chunk hashes × 2 rows.
const UNIVERSE: usize = 12;
const TAGS: u32 = 3;

fn key(i: u8) -> TierKey {
    let i = u64::from(i) % UNIVERSE as u64;
    // Spread the hashes so that they are not all small.
    TierKey::new((i % 6).wrapping_mul(0x9e37_79b9_7f4a_7c15), (i / 6) as u32)
}

#[derive(Clone, Debug)]
enum Op {
    ReserveRead(Vec<u8>, i64),
    UnsafeRead(Vec<u8>),
    FinishRead(Vec<u8>, i64),
    ReserveWrite(Vec<(u8, bool)>, u32),
    FinishWrite(Vec<u8>, u32),
    FinishPrefetch(Vec<u8>, u32),
    FinishWriteAndReserveRead(Vec<u8>, i64, u32),
    FinishWriteAndDelete(Vec<u8>, u32),
    Delete(Vec<u8>, bool),
    Touch(Vec<u8>),
    Clear(bool),
    Evict(f64),
    Advance(u64),
    Sweep,
}

fn keys() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(0u8..UNIVERSE as u8, 0..6)
}

fn locks() -> impl Strategy<Value = i64> {
    prop_oneof![Just(1i64), -2i64..4, Just(127), Just(200)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (keys(), locks()).prop_map(|(k, n)| Op::ReserveRead(k, n)),
        1 => keys().prop_map(Op::UnsafeRead),
        3 => (keys(), locks()).prop_map(|(k, n)| Op::FinishRead(k, n)),
        4 => (prop::collection::vec((0u8..UNIVERSE as u8, any::<bool>()), 0..6), 0..TAGS)
            .prop_map(|(k, t)| Op::ReserveWrite(k, t)),
        3 => (keys(), 0..TAGS).prop_map(|(k, t)| Op::FinishWrite(k, t)),
        1 => (keys(), 0..TAGS).prop_map(|(k, t)| Op::FinishPrefetch(k, t)),
        2 => (keys(), locks(), 0..TAGS).prop_map(|(k, n, t)| Op::FinishWriteAndReserveRead(k, n, t)),
        1 => (keys(), 0..TAGS).prop_map(|(k, t)| Op::FinishWriteAndDelete(k, t)),
        2 => (keys(), any::<bool>()).prop_map(|(k, f)| Op::Delete(k, f)),
        2 => keys().prop_map(Op::Touch),
        1 => prop::bool::weighted(0.3).prop_map(Op::Clear),
        1 => prop_oneof![Just(0.0), Just(0.2), Just(0.5), Just(1.0)].prop_map(Op::Evict),
        3 => prop_oneof![Just(0u64), 1u64..20, Just(30), Just(50), 51u64..120].prop_map(Op::Advance),
        1 => Just(Op::Sweep),
    ]
}

struct Pair {
    tier: Tier,
    model: Model,
    clock: ManualClock,
    answer: Batch,
}

impl Pair {
    fn new(capacity: usize, rows: Option<u32>) -> Pair {
        let mut config = TierConfig::new(capacity).with_ttls_ms(50, 30);
        if let Some(rows) = rows {
            config = config.with_rows(rows);
        }
        let clock = ManualClock::new(1_000);
        let tier = Tier::with_parts(config, Box::new(clock.clone()), Box::new(Lru::new())).unwrap();
        Pair { tier, model: Model::new(config), clock, answer: Batch::default() }
    }

    fn now(&self) -> u64 {
        use tier_state::Clock;
        self.clock.now_ms()
    }

    /// Runs `op` on both and checks the outcomes and the slots handed out.
    fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        let now = self.now();
        let expect: Option<(Vec<TierKey>, Vec<Outcome>, bool)> = match op {
            Op::ReserveRead(k, n) => {
                let k: Vec<TierKey> = k.iter().map(|&i| key(i)).collect();
                self.tier.reserve_read(&k[..], *n, &mut self.answer).unwrap();
                let m = self.model.reserve_read(&k, *n, now);
                Some((k, m, true))
            }
            Op::UnsafeRead(k) => {
                let k: Vec<TierKey> = k.iter().map(|&i| key(i)).collect();
                self.tier.unsafe_read(&k[..], &mut self.answer).unwrap();
                let m = self.model.unsafe_read(&k, now);
                Some((k, m, true))
            }
            Op::FinishRead(k, n) => {
                let k: Vec<TierKey> = k.iter().map(|&i| key(i)).collect();
                self.tier.finish_read(&k[..], *n, &mut self.answer).unwrap();
                let m = self.model.finish_read(&k, *n, now);
                Some((k, m, false))
            }
            Op::ReserveWrite(kt, tag) => {
                let k: Vec<TierKey> = kt.iter().map(|&(i, _)| key(i)).collect();
                let t: Vec<bool> = kt.iter().map(|&(_, t)| t).collect();
                self.tier.reserve_write(&k[..], Flags::Each(&t), *tag, &mut self.answer).unwrap();
                let m = self.model.reserve_write(&k, &t, *tag, now);
                Some((k, m, true))
            }
            Op::FinishWrite(k, tag) | Op::FinishPrefetch(k, tag) => {
                let k: Vec<TierKey> = k.iter().map(|&i| key(i)).collect();
                if matches!(op, Op::FinishWrite(..)) {
                    self.tier.finish_write(&k[..], *tag, &mut self.answer).unwrap();
                } else {
                    self.tier.finish_prefetch(&k[..], *tag, &mut self.answer).unwrap();
                }
                let m = self.model.finish_write(&k, *tag, now);
                Some((k, m, false))
            }
            Op::FinishWriteAndReserveRead(k, n, tag) => {
                let k: Vec<TierKey> = k.iter().map(|&i| key(i)).collect();
                self.tier.finish_write_and_reserve_read(&k[..], *n, *tag, &mut self.answer).unwrap();
                let m = self.model.finish_write_and_reserve_read(&k, *n, *tag, now);
                Some((k, m, true))
            }
            Op::FinishWriteAndDelete(k, tag) => {
                let k: Vec<TierKey> = k.iter().map(|&i| key(i)).collect();
                self.tier.finish_write_and_delete(&k[..], *tag, &mut self.answer).unwrap();
                let m = self.model.finish_write_and_delete(&k, *tag, now);
                Some((k, m, false))
            }
            Op::Delete(k, force) => {
                let k: Vec<TierKey> = k.iter().map(|&i| key(i)).collect();
                self.tier.delete(&k[..], *force, &mut self.answer).unwrap();
                let m = self.model.delete(&k, *force, now);
                Some((k, m, false))
            }
            Op::Touch(k) => {
                let k: Vec<TierKey> = k.iter().map(|&i| key(i)).collect();
                self.tier.touch(&k[..], &mut self.answer).unwrap();
                let m = self.model.touch(&k);
                Some((k, m, false))
            }
            Op::Clear(force) => {
                self.tier.clear(*force);
                self.model.clear(*force, now);
                None
            }
            Op::Evict(ratio) => {
                let mut evicted = Vec::new();
                let n = self.tier.evict(*ratio, &mut evicted);
                let m = self.model.evict(*ratio, now);
                prop_assert_eq!(n, evicted.len());
                prop_assert_eq!(evicted, m, "evicted keys");
                None
            }
            Op::Advance(ms) => {
                self.clock.advance(*ms);
                None
            }
            Op::Sweep => {
                self.tier.sweep_expired();
                None
            }
        };
        if let Some((k, outcomes, hands_out)) = expect {
            prop_assert_eq!(self.answer.outcomes(), outcomes.clone(), "outcomes of {:?}", op);
            prop_assert_eq!(self.answer.num_ok(), outcomes.iter().filter(|o| o.is_success()).count());
            let slots = self.answer.slots();
            if hands_out {
                prop_assert_eq!(slots.len(), k.len());
                for (i, outcome) in outcomes.iter().enumerate() {
                    if outcome.is_success() {
                        prop_assert_eq!(Some(slots[i]), self.tier.slot_of(k[i]), "slot of key {}", i);
                    } else {
                        prop_assert_eq!(slots[i], NO_SLOT);
                    }
                }
            } else {
                prop_assert!(slots.is_empty());
            }
        }
        self.compare_state()
    }

    /// Every key's state, the bitmaps, the evictable set and the LRU order.
    fn compare_state(&mut self) -> Result<(), TestCaseError> {
        let now = self.now();
        let m = &self.model;
        prop_assert_eq!(self.tier.num_objects(), m.num_objects());
        prop_assert!(self.tier.num_objects() <= self.tier.config().capacity);
        prop_assert_eq!(self.tier.num_resident(), m.objects.len());
        let mut keys_held = BTreeSet::new();
        for i in 0..UNIVERSE as u8 {
            let k = key(i);
            let resident = m.objects.get(&k);
            prop_assert_eq!(self.tier.is_resident(k), resident.is_some(), "resident {:?}", k);
            let count = resident.filter(|e| e.read_lock.is_locked(now)).map_or(0, |e| e.read_lock.counter);
            prop_assert_eq!(u64::from(self.tier.read_count(k)), count, "read count {:?}", k);
            prop_assert_eq!(self.tier.is_read_locked(k), count > 0);
            prop_assert_eq!(self.tier.is_temporary(k), resident.is_some_and(|e| e.is_temporary));
            let stages = m.staging.get(&k);
            prop_assert_eq!(self.tier.num_stages(k), stages.map_or(0, |t| t.len()), "stages {:?}", k);
            for tag in 0..TAGS {
                let want = stages.and_then(|t| t.get(&tag)).map(|s| s.write_lock.is_locked(now));
                prop_assert_eq!(self.tier.stage_state(k, tag), want, "stage {:?} tag {}", k, tag);
            }
            let held = resident.is_some() || stages.is_some();
            prop_assert_eq!(self.tier.slot_of(k).is_some(), held);
            if let Some(slot) = self.tier.slot_of(k) {
                prop_assert_eq!(self.tier.key_of(slot), Some(k));
                keys_held.insert(slot);
            }
        }
        prop_assert_eq!(self.tier.num_keys(), keys_held.len());
        // The bitmaps over slots, read back as sets of keys.
        let mut evictable = Bitmap::new(0);
        self.tier.evictable_into(&mut evictable);
        let as_keys = |bits: &Bitmap| -> BTreeSet<TierKey> {
            bits.ones().map(|slot| self.tier.key_of(slot as u32).expect("live slot")).collect()
        };
        let want_resident: BTreeSet<TierKey> = m.objects.keys().copied().collect();
        prop_assert_eq!(as_keys(self.tier.resident()), want_resident);
        let want_staged: BTreeSet<TierKey> = m.staging.keys().copied().collect();
        prop_assert_eq!(as_keys(self.tier.staged()), want_staged);
        let want_temp: BTreeSet<TierKey> = m.objects.iter().filter(|(_, e)| e.is_temporary).map(|(k, _)| *k).collect();
        prop_assert_eq!(as_keys(self.tier.temporary()), want_temp);
        let want_evictable: BTreeSet<TierKey> =
            (0..UNIVERSE as u8).map(key).filter(|k| m.is_evictable(k, now)).collect();
        prop_assert_eq!(as_keys(&evictable), want_evictable);
        // After the sweep inside evictable_into, read_locked is exact.
        let want_locked: BTreeSet<TierKey> =
            m.objects.iter().filter(|(_, e)| e.read_lock.is_locked(now)).map(|(k, _)| *k).collect();
        prop_assert_eq!(as_keys(self.tier.read_locked()), want_locked);
        // The LRU order, oldest first: every tracked slot at ratio 1.
        let mut order = Vec::new();
        self.tier.policy_mut().victims(1.0, Eligible::All, &mut order);
        let order: Vec<TierKey> =
            order.iter().map(|&slot| self.tier.key_of(slot).expect("tracked slot is live")).collect();
        prop_assert_eq!(order, self.model.lru.clone(), "LRU order");
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn tier_matches_the_model(
        capacity in 0usize..16,
        rows in prop_oneof![Just(None), Just(Some(2u32)), Just(Some(3)), Just(Some(64))],
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let mut pair = Pair::new(capacity, rows);
        let width = pair.tier.block_width();
        prop_assert_eq!(width, rows.map_or(1, |r| r.next_power_of_two()));
        for op in &ops {
            pair.step(op)?;
        }
    }
}
