//! The positional form (`GridKeys`: hashes × rows, answered in a `Grid`)
//! gives exactly what the same keys give as a slice in row-major order,
//! also when narrowed to some cells (`with_cells`: the set cells' keys).
//!
//! Requests whose rows are a block's rows in order (0, 1, 2, … of a tier of
//! 8 rows, or of 64) take the tier's word-at-a-time path; the slices always
//! go key by key, so these tests hold the word path to the per-key one:
//! outcomes, slots, state bits, counts and the LRU's order.

use proptest::prelude::*;
use tier_state::{Answer, Batch, Eligible, Flags, GridBatch, GridKeys, Lru, ManualClock, Tier, TierConfig, TierKey};

#[derive(Clone, Debug)]
enum Op {
    ReserveRead(i64),
    UnsafeRead,
    FinishRead(i64),
    ReserveWrite(u32, Vec<bool>),
    FinishWrite(u32),
    FinishWriteAndReserveRead(u32),
    FinishWriteAndDelete(u32),
    Delete(bool),
    Touch,
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1i64..3).prop_map(Op::ReserveRead),
        Just(Op::UnsafeRead),
        (1i64..3).prop_map(Op::FinishRead),
        (0u32..2, prop::collection::vec(any::<bool>(), 64)).prop_map(|(t, f)| Op::ReserveWrite(t, f)),
        (0u32..2).prop_map(Op::FinishWrite),
        (0u32..2).prop_map(Op::FinishWriteAndReserveRead),
        (0u32..2).prop_map(Op::FinishWriteAndDelete),
        any::<bool>().prop_map(Op::Delete),
        Just(Op::Touch),
        (0u64..40).prop_map(Op::Advance),
    ]
}

fn tier(clock: &ManualClock, capacity: usize, rows: u32) -> Tier {
    let config = TierConfig::new(capacity).with_ttls_ms(30, 20).with_rows(rows);
    Tier::with_parts(config, Box::new(clock.clone()), Box::new(Lru::new())).unwrap()
}

/// A request's row ids: any rows below `rows`, or the first few in order
/// (a block's rows: the word path).
fn row_ids(rows: u32) -> impl Strategy<Value = Vec<u32>> {
    prop_oneof![
        prop::collection::vec(0..rows, 0..4),
        (0..=rows.min(9)).prop_map(|n| (0..n).collect()),
        Just((0..rows).collect()),
    ]
}

/// The LRU's order, least recent first.
fn lru_order(tier: &mut Tier) -> Vec<u32> {
    let mut order = Vec::new();
    tier.policy_mut().victims(1.0, Eligible::All, &mut order);
    order
}

/// One request: chunk hashes, row ids, the call, and which cells it asks
/// about (`None`: all).
type Request = (Vec<u64>, Vec<u32>, Op, Option<Vec<bool>>);

/// Requests of hashes below 12 (so chunks repeat within and across
/// requests) over a tier of `rows` rows.
fn requests(rows: u32) -> impl Strategy<Value = Vec<Request>> {
    let mask_len = 7 * rows.min(9) as usize;
    prop::collection::vec(
        (
            prop::collection::vec(0u64..12, 0..7),
            row_ids(rows),
            op(),
            prop::option::of(prop::collection::vec(prop::bool::weighted(0.6), mask_len)),
        ),
        1..40,
    )
}

proptest! {
    #[test]
    fn grid_requests_answer_as_their_row_major_slices(capacity in 0usize..80, requests in requests(8)) {
        same_answers(8, capacity, &requests)?;
    }

    #[test]
    fn grid_requests_of_64_rows_answer_as_their_slices(capacity in 0usize..400, requests in requests(64)) {
        same_answers(64, capacity, &requests)?;
    }

    /// A tier of any row files a block a key (width 1): a request of one
    /// row, whichever, takes the word path, its blocks anywhere in a word.
    #[test]
    fn grid_requests_on_a_tier_of_any_row_answer_as_their_slices(
        capacity in 0usize..80,
        requests in requests(8),
    ) {
        same_answers(u32::MAX, capacity, &requests)?;
    }
}

fn same_answers(tier_rows: u32, capacity: usize, requests: &[Request]) -> Result<(), TestCaseError> {
    {
        let clock = ManualClock::new(0);
        let mut by_grid = tier(&clock, capacity, tier_rows);
        let mut by_slice = tier(&clock, capacity, tier_rows);
        let (mut g, mut b) = (GridBatch::default(), Batch::default());
        for (hashes, rows, op, mask) in requests {
            let full = GridKeys::new(hashes, rows);
            let asked =
                |r: usize, c: usize| mask.as_ref().is_none_or(|m| m.get(r * hashes.len() + c).copied().unwrap_or(true));
            let cells = prefetch_policy::Grid::from_fn(rows.len(), hashes.len(), asked);
            let grid = if mask.is_some() { full.with_cells(&cells).unwrap() } else { full };
            let flat: Vec<TierKey> = (0..rows.len())
                .flat_map(|r| {
                    (0..hashes.len()).filter(move |&c| asked(r, c)).map(move |c| TierKey::new(hashes[c], rows[r]))
                })
                .collect();
            let n = flat.len();
            match op {
                Op::ReserveRead(c) => {
                    by_grid.reserve_read(&grid, *c, &mut g).unwrap();
                    by_slice.reserve_read(&flat[..], *c, &mut b).unwrap();
                }
                Op::UnsafeRead => {
                    by_grid.unsafe_read(&grid, &mut g).unwrap();
                    by_slice.unsafe_read(&flat[..], &mut b).unwrap();
                }
                Op::FinishRead(c) => {
                    by_grid.finish_read(&grid, *c, &mut g).unwrap();
                    by_slice.finish_read(&flat[..], *c, &mut b).unwrap();
                }
                Op::ReserveWrite(tag, flags) => {
                    // The 64 flags drawn, cycled over the request's keys.
                    let flags: Vec<bool> = (0..n).map(|i| flags[i % flags.len()]).collect();
                    let flags = &flags[..];
                    // Flag i goes to the i-th asked cell.
                    let mut positions = (0..rows.len() * hashes.len())
                        .filter(|&i| asked(i / hashes.len().max(1), i % hashes.len().max(1)));
                    let mut by_cell = vec![false; rows.len() * hashes.len()];
                    for &flag in flags {
                        by_cell[positions.next().unwrap()] = flag;
                    }
                    let temporary =
                        prefetch_policy::Grid::from_fn(rows.len(), hashes.len(), |r, c| by_cell[r * hashes.len() + c]);
                    by_grid.reserve_write(&grid, Flags::Cells(&temporary), *tag, &mut g).unwrap();
                    by_slice.reserve_write(&flat[..], Flags::Each(flags), *tag, &mut b).unwrap();
                }
                Op::FinishWrite(tag) => {
                    by_grid.finish_write(&grid, *tag, &mut g).unwrap();
                    by_slice.finish_write(&flat[..], *tag, &mut b).unwrap();
                }
                Op::FinishWriteAndReserveRead(tag) => {
                    by_grid.finish_write_and_reserve_read(&grid, 1, *tag, &mut g).unwrap();
                    by_slice.finish_write_and_reserve_read(&flat[..], 1, *tag, &mut b).unwrap();
                }
                Op::FinishWriteAndDelete(tag) => {
                    by_grid.finish_write_and_delete(&grid, *tag, &mut g).unwrap();
                    by_slice.finish_write_and_delete(&flat[..], *tag, &mut b).unwrap();
                }
                Op::Delete(force) => {
                    by_grid.delete(&grid, *force, &mut g).unwrap();
                    by_slice.delete(&flat[..], *force, &mut b).unwrap();
                }
                Op::Touch => {
                    by_grid.touch(&grid, &mut g).unwrap();
                    by_slice.touch(&flat[..], &mut b).unwrap();
                }
                Op::Advance(ms) => {
                    clock.advance(*ms);
                    continue;
                }
            }
            let shape = if rows.is_empty() { (0, 0) } else { (rows.len(), hashes.len()) };
            prop_assert_eq!(g.ok().shape(), shape);
            prop_assert_eq!(g.len(), n);
            let mut i = 0;
            for (r, c) in (0..rows.len()).flat_map(|r| (0..hashes.len()).map(move |c| (r, c))) {
                if asked(r, c) {
                    prop_assert_eq!(g.ok().test(r, c), b.ok().test(i));
                    i += 1;
                } else {
                    prop_assert!(!g.ok().test(r, c), "a cell not asked about");
                }
            }
            prop_assert_eq!(g.failed(), b.failed());
            prop_assert_eq!(g.slots(), b.slots());
            prop_assert_eq!(by_grid.resident(), by_slice.resident());
            prop_assert_eq!(by_grid.staged(), by_slice.staged());
            prop_assert_eq!(by_grid.read_locked(), by_slice.read_locked());
            prop_assert_eq!(by_grid.temporary(), by_slice.temporary());
            prop_assert_eq!(
                (by_grid.num_keys(), by_grid.num_resident(), by_grid.num_staging()),
                (by_slice.num_keys(), by_slice.num_resident(), by_slice.num_staging())
            );
            for &key in &flat {
                prop_assert_eq!(by_grid.read_count(key), by_slice.read_count(key));
                prop_assert_eq!(by_grid.stage_state(key, 0), by_slice.stage_state(key, 0));
                prop_assert_eq!(by_grid.stage_state(key, 1), by_slice.stage_state(key, 1));
            }
            prop_assert_eq!(lru_order(&mut by_grid), lru_order(&mut by_slice));
        }
    }
    Ok(())
}

/// A reservation handed over (same tag, expired) takes the new temporary
/// flag and a new write deadline, in both forms: a sequence the random
/// requests above reach only rarely.
#[test]
fn handed_over_reservations_take_the_new_flag_and_deadline() {
    let hashes: Vec<u64> = vec![3, 5, 7];
    for tier_rows in [8u32, 64] {
        let rows: Vec<u32> = (0..tier_rows).collect();
        let step = |op: Op| (hashes.clone(), rows.clone(), op, None);
        let flags: Vec<bool> = (0..64).map(|i| i % 3 == 0).collect();
        let requests = [
            step(Op::ReserveWrite(1, vec![false; 64])),
            step(Op::Advance(25)),
            step(Op::ReserveWrite(1, flags.clone())),
            step(Op::Advance(19)),
            step(Op::FinishWrite(1)),
            step(Op::ReserveRead(2)),
            step(Op::FinishRead(1)),
            step(Op::Advance(25)),
            step(Op::FinishRead(1)),
            step(Op::ReserveWrite(0, flags.clone())),
            step(Op::Advance(20)),
            step(Op::FinishWriteAndReserveRead(0)),
            step(Op::Delete(false)),
            step(Op::Advance(30)),
            step(Op::Delete(false)),
        ];
        same_answers(tier_rows, 1_000, &requests).unwrap();
        // The second reservation's deadline: held for 19 ms more, gone at
        // 20; and the objects are temporary as the second call said.
        for finish_at in [19, 20] {
            let clock = ManualClock::new(0);
            let mut tier = tier(&clock, 1_000, tier_rows);
            let keys = GridKeys::new(&hashes, &rows);
            let mut answer = GridBatch::default();
            tier.reserve_write(&keys, Flags::All(false), 1, &mut answer).unwrap();
            clock.advance(25);
            let temporary = prefetch_policy::Grid::from_fn(rows.len(), hashes.len(), |r, c| (r + c) % 2 == 0);
            tier.reserve_write(&keys, Flags::Cells(&temporary), 1, &mut answer).unwrap();
            assert_eq!(answer.ok().popcount(), rows.len() * hashes.len());
            clock.advance(finish_at);
            assert_eq!(tier.stage_state(TierKey::new(5, 1), 1), Some(finish_at < 20));
            tier.finish_write(&keys, 1, &mut answer).unwrap();
            if finish_at < 20 {
                for (r, c) in (0..rows.len()).flat_map(|r| (0..hashes.len()).map(move |c| (r, c))) {
                    let key = TierKey::new(hashes[c], rows[r]);
                    assert_eq!(tier.is_temporary(key), temporary.test(r, c), "({r}, {c})");
                }
            } else {
                assert_eq!(answer.ok().popcount(), 0);
            }
        }
        // A held reservation refuses its own tag again.
        let keys = GridKeys::new(&hashes, &rows);
        let mut answer = GridBatch::default();
        let mut held = tier_state::Tier::new(TierConfig::new(1_000).with_rows(tier_rows)).unwrap();
        held.reserve_write(&keys, Flags::All(false), 1, &mut answer).unwrap();
        held.reserve_write(&keys, Flags::All(true), 1, &mut answer).unwrap();
        assert_eq!(answer.ok().popcount(), 0);
        assert_eq!(answer.failed().len(), rows.len() * hashes.len());
    }
}

/// Locks expire at their deadline exactly (read TTL 30 ms, write TTL 20):
/// one ms before it a lock is held, at it expired, in both forms.
#[test]
fn locks_expire_at_their_deadline_exactly() {
    let hashes: Vec<u64> = vec![4, 9];
    for tier_rows in [8u32, 64] {
        let rows: Vec<u32> = (0..tier_rows.min(8)).collect();
        let step = |op: Op| (hashes.clone(), rows.clone(), op, None);
        let requests = [
            step(Op::ReserveWrite(0, vec![false; 64])),
            step(Op::FinishWrite(0)),
            step(Op::ReserveRead(1)),
            step(Op::Advance(29)),
            step(Op::UnsafeRead),
            step(Op::Advance(1)),
            step(Op::UnsafeRead),
            step(Op::FinishRead(1)),
            step(Op::ReserveRead(2)),
            step(Op::Advance(30)),
            step(Op::FinishRead(1)),
            step(Op::Delete(false)),
            step(Op::ReserveWrite(1, vec![true; 64])),
            step(Op::Advance(19)),
            step(Op::FinishWrite(1)),
            step(Op::ReserveRead(1)),
            step(Op::Advance(29)),
            step(Op::Delete(false)),
            step(Op::Advance(1)),
            step(Op::Delete(false)),
            step(Op::ReserveWrite(1, vec![false; 64])),
            step(Op::Advance(20)),
            step(Op::FinishWriteAndReserveRead(1)),
            step(Op::Delete(false)),
            // A reservation expired at its deadline exactly is handed over.
            step(Op::ReserveWrite(0, vec![false; 64])),
            step(Op::Advance(20)),
            step(Op::ReserveWrite(0, vec![true; 64])),
            step(Op::FinishWrite(0)),
        ];
        same_answers(tier_rows, 1_000, &requests).unwrap();
        // The same reads over some cells only (row 0 of chunk 0 left out),
        // so a chunk's locked rows are not a run from its first row.
        let some: Vec<bool> = (0..rows.len() * hashes.len()).map(|i| i != 0).collect();
        let narrow = |op: Op| (hashes.clone(), rows.clone(), op, Some(some.clone()));
        let requests = [
            step(Op::ReserveWrite(0, vec![false; 64])),
            step(Op::FinishWrite(0)),
            narrow(Op::ReserveRead(1)),
            step(Op::Advance(29)),
            narrow(Op::FinishRead(1)),
            narrow(Op::ReserveRead(1)),
            step(Op::Advance(30)),
            narrow(Op::FinishRead(1)),
            narrow(Op::UnsafeRead),
        ];
        same_answers(tier_rows, 1_000, &requests).unwrap();
    }
}
