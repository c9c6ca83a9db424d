//! The positional form (`GridKeys`: hashes × rows, answered in a `Grid`)
//! gives exactly what the same keys give as a slice in row-major order,
//! also when narrowed to some cells (`with_cells`: the set cells' keys).

use proptest::prelude::*;
use tier_state::{Answer, Batch, Flags, GridBatch, GridKeys, Lru, ManualClock, Tier, TierConfig, TierKey};

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

fn tier(clock: &ManualClock, capacity: usize) -> Tier {
    let config = TierConfig::new(capacity).with_ttls_ms(30, 20).with_rows(8);
    Tier::with_parts(config, Box::new(clock.clone()), Box::new(Lru::new())).unwrap()
}

proptest! {
    #[test]
    fn grid_requests_answer_as_their_row_major_slices(
        capacity in 0usize..80,
        requests in prop::collection::vec(
            (
                prop::collection::vec(0u64..12, 0..7),
                prop::collection::vec(0u32..8, 0..4),
                op(),
                prop::option::of(prop::collection::vec(prop::bool::weighted(0.6), 28)),
            ),
            1..40,
        ),
    ) {
        let clock = ManualClock::new(0);
        let mut by_grid = tier(&clock, capacity);
        let mut by_slice = tier(&clock, capacity);
        let (mut g, mut b) = (GridBatch::default(), Batch::default());
        for (hashes, rows, op, mask) in &requests {
            let full = GridKeys::new(hashes, rows);
            let asked = |r: usize, c: usize| mask.as_ref().is_none_or(|m| m[r * hashes.len() + c]);
            let cells = prefetch_policy::Grid::from_fn(rows.len(), hashes.len(), asked);
            let grid = if mask.is_some() { full.with_cells(&cells).unwrap() } else { full };
            let flat: Vec<TierKey> = (0..rows.len())
                .flat_map(|r| (0..hashes.len()).filter(move |&c| asked(r, c)).map(move |c| TierKey::new(hashes[c], rows[r])))
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
                    let flags = &flags[..n.min(flags.len())];
                    if flags.len() < n {
                        continue;
                    }
                    // Flag i goes to the i-th asked cell.
                    let mut positions = (0..rows.len() * hashes.len()).filter(|&i| asked(i / hashes.len().max(1), i % hashes.len().max(1)));
                    let mut by_cell = vec![false; rows.len() * hashes.len()];
                    for &flag in flags {
                        by_cell[positions.next().unwrap()] = flag;
                    }
                    let temporary = prefetch_policy::Grid::from_fn(rows.len(), hashes.len(), |r, c| by_cell[r * hashes.len() + c]);
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
        }
    }
}
