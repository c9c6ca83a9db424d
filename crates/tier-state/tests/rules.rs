//! One test per rule of LMCache's `L1Manager`, on small hand-made cases.

use tier_state::{
    Answer, Batch, Eligible, EvictionPolicy, Flags, Lru, ManualClock, NO_SLOT, Outcome, Tier, TierConfig, TierKey,
};

const READ_TTL: u64 = 100;
const WRITE_TTL: u64 = 50;

fn tier(capacity: usize) -> (Tier, ManualClock) {
    let clock = ManualClock::new(0);
    let config = TierConfig::new(capacity).with_ttls_ms(READ_TTL, WRITE_TTL);
    (Tier::with_parts(config, Box::new(clock.clone()), Box::new(Lru::new())).unwrap(), clock)
}

fn k(i: u64) -> TierKey {
    TierKey::new(i, 0)
}

/// Stages and finishes `keys` with tag 0, non-temporary.
fn write(tier: &mut Tier, keys: &[TierKey]) {
    let mut a = Batch::default();
    tier.reserve_write(keys, Flags::All(false), 0, &mut a).unwrap();
    assert_eq!(a.num_ok(), keys.len());
    tier.finish_write(keys, 0, &mut a).unwrap();
    assert_eq!(a.num_ok(), keys.len());
}

fn lru_order(tier: &mut Tier) -> Vec<TierKey> {
    let mut order = Vec::new();
    tier.policy_mut().victims(1.0, Eligible::All, &mut order);
    order.iter().map(|&s| tier.key_of(s).unwrap()).collect()
}

#[test]
fn staged_keys_are_invisible_to_readers_and_other_tags() {
    let (mut t, _) = tier(8);
    let mut a = Batch::default();
    t.reserve_write(&[k(1)][..], Flags::All(false), 7, &mut a).unwrap();
    t.reserve_read(&[k(1)][..], 1, &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::KeyNotExist);
    t.unsafe_read(&[k(1)][..], &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::KeyNotExist);
    // Another tag may stage the same key; the first tag may not again.
    t.reserve_write(&[k(1)][..], Flags::All(false), 8, &mut a).unwrap();
    assert!(a.ok().test(0));
    t.reserve_write(&[k(1)][..], Flags::All(false), 7, &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::KeyNotWritable);
    assert_eq!((t.num_stages(k(1)), t.num_objects()), (2, 2));
    // A tag that stages nothing cannot finish.
    t.finish_write(&[k(1)][..], 9, &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::KeyNotExist);
}

#[test]
fn finishing_a_write_makes_the_key_resident_and_a_late_tag_is_discarded() {
    let (mut t, _) = tier(8);
    let mut a = Batch::default();
    t.reserve_write(&[k(1)][..], Flags::All(false), 7, &mut a).unwrap();
    t.reserve_write(&[k(1)][..], Flags::All(false), 8, &mut a).unwrap();
    t.finish_write(&[k(1)][..], 8, &mut a).unwrap();
    assert!(a.ok().test(0) && t.is_resident(k(1)));
    assert_eq!((t.num_resident(), t.num_staging()), (1, 1));
    // Resident keys are not writable.
    t.reserve_write(&[k(1)][..], Flags::All(false), 9, &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::KeyNotWritable);
    // Tag 7 finishes later: SUCCESS, its object discarded.
    t.finish_write(&[k(1)][..], 7, &mut a).unwrap();
    assert!(a.ok().test(0));
    assert_eq!((t.num_resident(), t.num_staging(), t.num_objects()), (1, 0, 1));
}

#[test]
fn read_locks_count_and_are_clamped_to_1_through_128() {
    let (mut t, _) = tier(8);
    write(&mut t, &[k(1)]);
    let mut a = Batch::default();
    t.reserve_read(&[k(1)][..], 0, &mut a).unwrap(); // clamped to 1
    assert_eq!(t.read_count(k(1)), 1);
    t.reserve_read(&[k(1)][..], 1_000, &mut a).unwrap(); // clamped to 128
    assert_eq!(t.read_count(k(1)), 129);
    t.finish_read(&[k(1)][..], 500, &mut a).unwrap(); // releases 128
    assert_eq!(t.read_count(k(1)), 1);
    t.finish_read(&[k(1)][..], -4, &mut a).unwrap(); // releases 1
    assert_eq!(t.read_count(k(1)), 0);
    t.finish_read(&[k(1)][..], 1, &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::KeyInWrongState);
    t.unsafe_read(&[k(1)][..], &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::KeyNotReadable);
    t.finish_read(&[k(2)][..], 1, &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::KeyNotExist);
}

#[test]
fn an_expired_read_lock_counts_as_unlocked_and_restarts_from_the_new_count() {
    let (mut t, clock) = tier(8);
    write(&mut t, &[k(1)]);
    let mut a = Batch::default();
    t.reserve_read(&[k(1)][..], 3, &mut a).unwrap();
    clock.advance(READ_TTL - 1);
    assert!(t.is_read_locked(k(1)));
    t.reserve_read(&[k(1)][..], 1, &mut a).unwrap(); // held: 4, TTL restarts
    clock.advance(READ_TTL - 1);
    assert_eq!(t.read_count(k(1)), 4);
    clock.advance(1);
    assert!(!t.is_read_locked(k(1)));
    t.finish_read(&[k(1)][..], 1, &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::KeyInWrongState);
    t.delete(&[k(1)][..], false, &mut a).unwrap();
    assert!(a.ok().test(0), "an expired read lock does not pin the key");
    write(&mut t, &[k(2)]);
    t.reserve_read(&[k(2)][..], 5, &mut a).unwrap();
    clock.advance(READ_TTL);
    t.reserve_read(&[k(2)][..], 2, &mut a).unwrap();
    assert_eq!(t.read_count(k(2)), 2, "expired: starts again from 2");
}

#[test]
fn an_expired_write_lock_is_handed_over_to_the_same_tag_and_refused_at_finish() {
    let (mut t, clock) = tier(8);
    let mut a = Batch::default();
    t.reserve_write(&[k(1), k(2)][..], Flags::All(false), 7, &mut a).unwrap();
    let slot = a.slots()[0];
    clock.advance(WRITE_TTL);
    t.finish_write(&[k(1)][..], 7, &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::KeyInWrongState);
    assert_eq!(t.stage_state(k(1), 7), Some(false), "stays staged for eviction to reclaim");
    // The same tag reserves again: handed over, no new object.
    t.reserve_write(&[k(1)][..], Flags::All(true), 7, &mut a).unwrap();
    assert_eq!((a.ok().test(0), a.slots()[0]), (true, slot));
    assert_eq!(t.num_objects(), 2);
    t.finish_write(&[k(1)][..], 7, &mut a).unwrap();
    assert!(t.is_temporary(k(1)), "the hand-over took the new temporary flag");
    // The other expired reservation: finish_write_and_delete refuses it too.
    t.finish_write_and_delete(&[k(2)][..], 7, &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::KeyInWrongState);
}

#[test]
fn temporary_objects_go_when_their_last_read_finishes() {
    let (mut t, _) = tier(8);
    let mut a = Batch::default();
    t.reserve_write(&[k(1), k(2)][..], Flags::Each(&[true, false]), 0, &mut a).unwrap();
    t.finish_write_and_reserve_read(&[k(1), k(2)][..], 2, 0, &mut a).unwrap();
    assert_eq!(a.num_ok(), 2);
    t.finish_read(&[k(1), k(2)][..], 1, &mut a).unwrap();
    assert!(t.is_resident(k(1)));
    t.finish_read(&[k(1), k(2)][..], 1, &mut a).unwrap();
    assert!(!t.is_resident(k(1)) && t.slot_of(k(1)).is_none());
    assert!(t.is_resident(k(2)));
    assert_eq!(lru_order(&mut t), [k(2)], "the temporary key left the policy");
}

#[test]
fn finish_write_and_reserve_read_locks_the_resident_object_when_one_exists() {
    let (mut t, _) = tier(8);
    let mut a = Batch::default();
    t.reserve_write(&[k(1)][..], Flags::All(false), 1, &mut a).unwrap();
    t.reserve_write(&[k(1)][..], Flags::All(false), 2, &mut a).unwrap();
    t.finish_write(&[k(1)][..], 1, &mut a).unwrap();
    let resident_slot = t.slot_of(k(1)).unwrap();
    t.finish_write_and_reserve_read(&[k(1)][..], 3, 2, &mut a).unwrap();
    assert_eq!(a.slots(), &[resident_slot]);
    assert_eq!((t.read_count(k(1)), t.num_objects()), (3, 1));
}

#[test]
fn delete_follows_lmcaches_precedence() {
    let (mut t, clock) = tier(8);
    let mut a = Batch::default();
    t.delete(&[k(9)][..], true, &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::KeyNotExist);
    // A live reservation pins the key, unless forced.
    t.reserve_write(&[k(1)][..], Flags::All(false), 0, &mut a).unwrap();
    t.delete(&[k(1)][..], false, &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::KeyIsLocked);
    t.delete(&[k(1)][..], true, &mut a).unwrap();
    assert!(a.ok().test(0) && t.slot_of(k(1)).is_none());
    // An expired reservation is reclaimed: SUCCESS.
    t.reserve_write(&[k(2)][..], Flags::All(false), 0, &mut a).unwrap();
    clock.advance(WRITE_TTL);
    t.delete(&[k(2)][..], false, &mut a).unwrap();
    assert!(a.ok().test(0));
    assert_eq!(t.num_objects(), 0);
    // A read-locked resident key: locked, unless forced.
    write(&mut t, &[k(3)]);
    t.reserve_read(&[k(3)][..], 1, &mut a).unwrap();
    t.delete(&[k(3)][..], false, &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::KeyIsLocked);
    t.delete(&[k(3)][..], true, &mut a).unwrap();
    assert!(a.ok().test(0) && !t.is_resident(k(3)));
}

#[test]
fn capacity_counts_objects_and_a_reservation_that_does_not_fit_leaves_nothing() {
    let (mut t, clock) = tier(3);
    let mut a = Batch::default();
    t.reserve_write(&[k(1), k(2)][..], Flags::All(false), 0, &mut a).unwrap();
    clock.advance(WRITE_TTL);
    // k(1) is handed over; k(3), k(4) need two objects and one is free: both OUT_OF_MEMORY.
    t.reserve_write(&[k(3), k(1), k(4)][..], Flags::All(false), 0, &mut a).unwrap();
    assert_eq!(a.outcomes(), [Outcome::OutOfMemory, Outcome::Success, Outcome::OutOfMemory]);
    assert_eq!(a.slots()[0], NO_SLOT);
    assert_eq!((t.num_objects(), t.num_keys()), (2, 2));
    assert!(t.slot_of(k(3)).is_none() && t.slot_of(k(4)).is_none());
    // One fits.
    t.reserve_write(&[k(3)][..], Flags::All(false), 0, &mut a).unwrap();
    assert!(a.ok().test(0));
    // A second tag's reservation of a staged key is an object too.
    t.reserve_write(&[k(3)][..], Flags::All(false), 1, &mut a).unwrap();
    assert_eq!(a.outcome(0), Outcome::OutOfMemory);
}

#[test]
fn freed_slots_are_reused() {
    let (mut t, _) = tier(4);
    write(&mut t, &[k(1), k(2)]);
    let freed = t.slot_of(k(1)).unwrap();
    let mut a = Batch::default();
    t.delete(&[k(1)][..], false, &mut a).unwrap();
    t.reserve_write(&[k(5)][..], Flags::All(false), 0, &mut a).unwrap();
    assert_eq!(a.slots(), &[freed]);
    assert_eq!(t.slot_count(), 2);
}

#[test]
fn policy_events_follow_the_l1_listener_bridge() {
    let (mut t, _) = tier(16);
    let mut a = Batch::default();
    // Created on reserve_write, walking the batch in reverse: k(1) ends most recent.
    t.reserve_write(&[k(1), k(2), k(3)][..], Flags::Each(&[false, false, true]), 0, &mut a).unwrap();
    assert_eq!(lru_order(&mut t), [k(3), k(2), k(1)]);
    // finish_write creates the non-temporary admissions again: k(3) (temporary) stays oldest.
    t.finish_write(&[k(3), k(2)][..], 0, &mut a).unwrap();
    assert_eq!(lru_order(&mut t), [k(3), k(1), k(2)]);
    // Reads are nothing; touch refreshes tracked keys only.
    t.reserve_read(&[k(3)][..], 1, &mut a).unwrap();
    t.touch(&[k(3), k(9)][..], &mut a).unwrap();
    assert_eq!(a.outcomes(), [Outcome::Success, Outcome::KeyNotExist]);
    assert_eq!(lru_order(&mut t), [k(1), k(2), k(3)]);
    // Deletes remove.
    t.delete(&[k(2)][..], false, &mut a).unwrap();
    assert_eq!(lru_order(&mut t), [k(1), k(3)]);
    // An expired reservation handed over with no new allocation in the batch is not reported (LMCache returns early).
    let (mut t, clock) = tier(16);
    t.reserve_write(&[k(1), k(2)][..], Flags::All(false), 0, &mut a).unwrap();
    clock.advance(WRITE_TTL);
    t.reserve_write(&[k(2)][..], Flags::All(false), 0, &mut a).unwrap();
    assert!(a.ok().test(0));
    assert_eq!(lru_order(&mut t), [k(2), k(1)]);
    t.reserve_write(&[k(2), k(4)][..], Flags::All(false), 1, &mut a).unwrap();
    assert_eq!(lru_order(&mut t), [k(1), k(4), k(2)]);
}

#[test]
fn evictable_is_lmcaches_is_key_evictable() {
    let (mut t, clock) = tier(16);
    write(&mut t, &[k(1), k(2), k(3)]);
    let mut a = Batch::default();
    t.reserve_read(&[k(2)][..], 1, &mut a).unwrap();
    t.reserve_write(&[k(4), k(5)][..], Flags::All(false), 0, &mut a).unwrap();
    let mut ev = bitmap_core::Bitmap::new(0);
    t.evictable_into(&mut ev);
    let keys = |t: &Tier, ev: &bitmap_core::Bitmap| -> Vec<TierKey> {
        let mut v: Vec<TierKey> = ev.ones().map(|s| t.key_of(s as u32).unwrap()).collect();
        v.sort();
        v
    };
    assert_eq!(keys(&t, &ev), [k(1), k(3)]);
    clock.advance(WRITE_TTL);
    t.evictable_into(&mut ev);
    assert_eq!(keys(&t, &ev), [k(1), k(3), k(4), k(5)], "expired reservations are evictable");
    clock.advance(READ_TTL);
    t.evictable_into(&mut ev);
    assert_eq!(keys(&t, &ev), [k(1), k(2), k(3), k(4), k(5)], "an expired read lock is unlocked");
    assert!(t.read_locked().none(), "evictable_into swept the expired read lock");
}

#[test]
fn evict_takes_lru_victims_among_the_evictable() {
    let (mut t, _) = tier(16);
    write(&mut t, &[k(1)]);
    write(&mut t, &[k(2)]);
    write(&mut t, &[k(3)]);
    write(&mut t, &[k(4)]);
    let mut a = Batch::default();
    t.reserve_read(&[k(1)][..], 1, &mut a).unwrap();
    let mut evicted = Vec::new();
    // int(4 × 0.5) = 2 victims, oldest first, skipping the read-locked k(1).
    assert_eq!(t.evict(0.5, &mut evicted), 2);
    assert_eq!(evicted, [k(2), k(3)]);
    assert_eq!(t.policy().num_tracked(), 2);
}

#[test]
fn clear_keeps_what_is_locked_unless_forced() {
    let (mut t, clock) = tier(16);
    write(&mut t, &[k(1), k(2)]);
    let mut a = Batch::default();
    t.reserve_read(&[k(1)][..], 1, &mut a).unwrap();
    t.reserve_write(&[k(3)][..], Flags::All(false), 0, &mut a).unwrap();
    t.reserve_write(&[k(4)][..], Flags::All(false), 0, &mut a).unwrap();
    clock.advance(WRITE_TTL - 1);
    t.reserve_write(&[k(4)][..], Flags::All(false), 1, &mut a).unwrap();
    clock.advance(1);
    let report = t.clear(false);
    assert_eq!((report.cleared, report.staging_freed, report.locked_remaining, report.staging_remaining), (1, 2, 1, 1));
    assert!(t.is_resident(k(1)) && !t.is_resident(k(2)));
    assert_eq!(t.num_stages(k(4)), 1);
    assert!(t.slot_of(k(3)).is_none());
    let report = t.clear(true);
    assert_eq!((report.cleared, report.staging_freed), (1, 1));
    assert_eq!((t.num_objects(), t.num_keys(), t.policy().num_tracked()), (0, 0, 0));
}

#[test]
fn lru_victims_skip_the_ineligible_and_round_like_lmcache() {
    let mut lru = Lru::new();
    lru.on_created(&[4, 3, 2, 1, 0]); // recency: 0 (oldest) … 4
    assert_eq!(lru.order(), [0, 1, 2, 3, 4]);
    let mut out = Vec::new();
    let mut odd = |s: u32| s % 2 == 1;
    lru.victims(0.4, Eligible::Predicate(&mut odd), &mut out);
    assert_eq!(out, [1, 3]);
    out.clear();
    lru.victims(0.01, Eligible::All, &mut out);
    assert_eq!(out, [0], "at least one when the ratio is above 0");
    out.clear();
    lru.on_removed(&[0, 7]);
    lru.on_touched(&[1, 9]);
    assert_eq!(lru.order(), [2, 3, 4, 1]);
    let bits = bitmap_core::Bitmap::from_indices(8, [3, 4]).unwrap();
    lru.victims(1.0, Eligible::Bits(&bits), &mut out);
    assert_eq!(out, [3, 4]);
}

#[test]
fn a_tier_moves_between_threads_and_a_shared_tier_is_shared() {
    fn send<T: Send>() {}
    fn sync<T: Sync + Send>() {}
    send::<Tier>();
    sync::<tier_state::SharedTier>();
}

/// A policy with ghost history (ARC's B1/B2) keeps its slots naming their
/// keys: a key's slot is not given to another key while the policy
/// remembers it, so the key finds its history when it comes back; once
/// nothing remembers it, the slot's block is reused.
#[test]
fn slots_remembered_by_the_policy_are_not_reused_for_other_keys() {
    for rows in [None, Some(4)] {
        let mut config = TierConfig::new(10);
        if let Some(rows) = rows {
            config = config.with_rows(rows);
        }
        let policy = Box::new(tier_state::Arc::new());
        let mut tier = Tier::with_parts(config, Box::new(ManualClock::new(0)), policy).unwrap();
        let (a, c) = (TierKey::new(1, 0), TierKey::new(3, 0));
        write(&mut tier, &[a]);
        let slot_a = tier.slot_of(a).unwrap();
        let mut evicted = Vec::new();
        assert_eq!(tier.evict(1.0, &mut evicted), 1);
        assert_eq!(evicted, [a]);
        assert_eq!((tier.slot_of(a), tier.num_keys()), (None, 0));
        assert!(tier.policy().remembers(slot_a), "a is a ghost in B2");
        write(&mut tier, &[c]);
        assert_ne!(tier.slot_of(c), Some(slot_a), "a ghost's slot is kept for its key");
        write(&mut tier, &[a]);
        assert_eq!(tier.slot_of(a), Some(slot_a), "the key comes back to its history");
        // Forced deletes are not pending victims: no ghost stays, and the
        // slots' blocks are free again.
        let mut answer = Batch::default();
        tier.delete(&[a, c][..], true, &mut answer).unwrap();
        assert!(!tier.policy().remembers(slot_a));
        assert_eq!(tier.num_keys(), 0);
        let slots_before = tier.slot_count();
        let slot_c = Some(tier.slot_count() as u32 - tier.block_width());
        write(&mut tier, &[TierKey::new(9, 0)]);
        let slot_new = tier.slot_of(TierKey::new(9, 0));
        assert!(slot_new == Some(slot_a) || slot_new == slot_c, "a freed slot is reused");
        assert_eq!(tier.slot_count(), slots_before);
    }
}
