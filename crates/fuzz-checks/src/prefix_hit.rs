//! `prefix_hit`: the hybrid-model functions of `prefetch_policy` (fold,
//! unfold, their grouped and ranked forms, the grid plan) against the
//! scalar references of [`hybrid_model`], and the bit
//! moves of `bitmap_core::layout` against [`bit_moves`].
//!
//! # The input
//!
//! A chunk count up to [`MAX_CHUNKS`], 0 to 8 ranks (0 must be refused), 0
//! to [`MAX_GROUPS`] windows in −3…60 (empty must be refused), a present
//! pattern for the flat layout of any length near `C·G·R` (bits past its
//! end read as absent), a second set of rows for the grouped form (one row
//! maybe of another length, or one row too many or too few), a hit to
//! unfold (clamped to `C`), and up to [`MAX_TIERS`] L1 and L2 grids for the
//! grid plan under `prefix` or `full`.
//!
//! # What is checked
//!
//! - `fold`, `fold_into` (into a reused, dirty output), `unfold`,
//!   `unfold_into`, `fold_unfold_ranked`, `fold_unfold_ranked_into`,
//!   `fold_unfold` (one rank) equal the references bit for bit, or refuse
//!   exactly the inputs the definitions refuse, with an error that is true
//!   of the input;
//! - the grouped forms likewise on the flat pattern split into its `G·R`
//!   rows (each with its group's window), where they must also equal the
//!   flat forms; and on independent rows;
//! - `plan_grid_into` (into a reused plan) equals the cell-by-cell grid
//!   plan, and a refused request leaves the plan empty.

use arbitrary::Arbitrary;
use bitmap_core::Bitmap;
use prefetch_policy::{
    FetchingPolicy, FoldWorkspace, Grid, GridMap, GridPlan, GridRequest, HybridError, fold, fold_grouped,
    fold_grouped_into, fold_into, fold_unfold, fold_unfold_grouped, fold_unfold_grouped_into, fold_unfold_ranked,
    fold_unfold_ranked_into, plan_grid_into, unfold, unfold_grouped, unfold_grouped_into, unfold_into,
};

use crate::bit_moves::{self, MovesInput};
use crate::fill::{Fill, Length};
use crate::hybrid_model::{self, Tier};

/// The most chunks: past four words, so the word loops run whole words and
/// a tail; small enough for the `O(C²)` references.
pub const MAX_CHUNKS: usize = 300;

/// The most groups (windows).
pub const MAX_GROUPS: usize = 6;

/// The most ranks; 0 is allowed (and must be refused).
pub const MAX_RANKS: u8 = 8;

/// The most grids per tier in the grid plan.
pub const MAX_TIERS: usize = 5;

/// One fuzz input.
#[derive(Arbitrary, Debug)]
pub struct Input {
    num_chunks: Length,
    num_ranks: u8,
    /// Each taken modulo 64, minus 3: −3…60.
    windows: Vec<u8>,
    found: Fill,
    /// `found` has `C·G·R` bits plus this (minus 8, at least 0).
    found_len_delta: u8,
    /// Independent rows for the grouped forms (one per window, their
    /// lengths all `C`, unless `ragged` says otherwise).
    rows: Vec<Fill>,
    /// Makes the row at this position (modulo the count) this many bits
    /// longer (1…4).
    ragged: Option<(u8, u8)>,
    /// Unfolds this hit (beyond `C` on purpose).
    hit_probe: u16,
    grid: GridInput,
    moves: MovesInput,
}

/// The grid plan's input: the windows are the input's, the width `C`.
#[derive(Arbitrary, Debug)]
struct GridInput {
    /// `(is_l2, index modulo 12, cells)`; a repeated index of a tier
    /// replaces the earlier grid.
    tiers: Vec<(bool, u8, Fill)>,
    full: bool,
    /// Plans into a plan left over from another request first.
    reuse: bool,
}

/// Runs one input.
///
/// # Panics
///
/// On any difference from the references.
pub fn check(input: Input) {
    let num_chunks = input.num_chunks.bits(MAX_CHUNKS);
    let num_ranks = usize::from(input.num_ranks % (MAX_RANKS + 1));
    let windows: Vec<i64> = input.windows.iter().take(MAX_GROUPS).map(|&w| i64::from(w % 64) - 3).collect();
    let found_len = (num_chunks * windows.len() * num_ranks + usize::from(input.found_len_delta)).saturating_sub(8);
    let found_bits = input.found.bits(found_len, None);
    let found = Bitmap::from_bools(&found_bits);

    check_flat(&found, &found_bits, num_chunks, num_ranks, &windows, usize::from(input.hit_probe));
    if num_ranks >= 1 && !windows.is_empty() {
        check_split_rows(&found, &found_bits, num_chunks, num_ranks, &windows);
    }
    check_grouped_rows(&input, num_chunks, &windows);
    check_grid_plan(&input.grid, num_chunks, &windows);
    bit_moves::check(&input.moves);
}

/// The error the flat functions owe this shape, if any.
fn flat_error(num_ranks: usize, windows: &[i64]) -> Option<[HybridError; 2]> {
    match (num_ranks == 0, windows.is_empty()) {
        (false, false) => None,
        // Either is true of an input with both problems.
        (true, true) => Some([HybridError::ZeroRanks, HybridError::NoWindows]),
        (true, false) => Some([HybridError::ZeroRanks, HybridError::ZeroRanks]),
        (false, true) => Some([HybridError::NoWindows, HybridError::NoWindows]),
    }
}

#[track_caller]
fn assert_refused<T: core::fmt::Debug>(result: Result<T, HybridError>, allowed: &[HybridError; 2], what: &str) {
    match result {
        Err(error) => assert!(allowed.contains(&error), "{what}: error {error:?}, expected one of {allowed:?}"),
        Ok(value) => panic!("{what}: accepted an input it must refuse ({allowed:?}): {value:?}"),
    }
}

#[track_caller]
fn assert_bits(actual: &Bitmap, expected: &[bool], what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: length");
    if let Some(at) = (0..expected.len()).find(|&i| actual.test(i) != expected[i]) {
        panic!("{what}: bit {at} of {} is {}, expected {}", expected.len(), actual.test(at), expected[at]);
    }
}

fn check_flat(found: &Bitmap, found_bits: &[bool], num_chunks: usize, num_ranks: usize, windows: &[i64], probe: usize) {
    let mut ws = FoldWorkspace::new();
    // Outputs dirty from another shape: the `_into` forms must reset them.
    let mut out = Bitmap::with_prefix(num_chunks + 77, usize::MAX);
    let mut mask = Bitmap::with_prefix(3, 2);
    if let Some(allowed) = flat_error(num_ranks, windows) {
        assert_refused(fold(found, num_chunks, num_ranks, windows), &allowed, "fold");
        assert_refused(fold_into(found, num_chunks, num_ranks, windows, &mut ws, &mut out), &allowed, "fold_into");
        assert_refused(unfold(probe, num_chunks, num_ranks, windows), &allowed, "unfold");
        assert_refused(unfold_into(probe, num_chunks, num_ranks, windows, &mut mask), &allowed, "unfold_into");
        assert_refused(fold_unfold_ranked(found, num_chunks, num_ranks, windows), &allowed, "fold_unfold_ranked");
        let into = fold_unfold_ranked_into(found, num_chunks, num_ranks, windows, &mut ws, &mut mask);
        assert_refused(into, &allowed, "fold_unfold_ranked_into");
        return;
    }
    let folded = hybrid_model::fold(found_bits, num_chunks, num_ranks, windows);
    let hit = hybrid_model::hit_of(&folded);
    let unfolded = hybrid_model::unfold(hit, num_chunks, num_ranks, windows);

    assert_bits(&fold(found, num_chunks, num_ranks, windows).expect("fold"), &folded, "fold");
    fold_into(found, num_chunks, num_ranks, windows, &mut ws, &mut out).expect("fold_into");
    assert_bits(&out, &folded, "fold_into");
    let probed = hybrid_model::unfold(probe, num_chunks, num_ranks, windows);
    assert_bits(&unfold(probe, num_chunks, num_ranks, windows).expect("unfold"), &probed, "unfold of the probe");
    unfold_into(probe, num_chunks, num_ranks, windows, &mut mask).expect("unfold_into");
    assert_bits(&mask, &probed, "unfold_into of the probe");

    let (ranked_hit, ranked_mask) = fold_unfold_ranked(found, num_chunks, num_ranks, windows).expect("ranked");
    assert_eq!(ranked_hit, hit, "fold_unfold_ranked: hit");
    assert_bits(&ranked_mask, &unfolded, "fold_unfold_ranked: mask");
    let into_hit = fold_unfold_ranked_into(found, num_chunks, num_ranks, windows, &mut ws, &mut mask).expect("into");
    assert_eq!(into_hit, hit, "fold_unfold_ranked_into: hit");
    assert_bits(&mask, &unfolded, "fold_unfold_ranked_into: mask");
    if num_ranks == 1 {
        let (one_hit, one_mask) = fold_unfold(found, num_chunks, windows).expect("fold_unfold");
        assert_eq!(one_hit, hit, "fold_unfold: hit");
        assert_bits(&one_mask, &unfolded, "fold_unfold: mask");
    }
}

/// The flat pattern as `G·R` rows (row `g·R + r` is group `g`, rank `r`,
/// with its group's window): the grouped forms must equal the flat ones.
fn check_split_rows(found: &Bitmap, found_bits: &[bool], num_chunks: usize, num_ranks: usize, windows: &[i64]) {
    let width = windows.len() * num_ranks;
    let bit = |index: usize| found_bits.get(index).copied().unwrap_or(false);
    let rows: Vec<Vec<bool>> = (0..width).map(|k| (0..num_chunks).map(|j| bit(j * width + k)).collect()).collect();
    let row_windows: Vec<i64> = (0..width).map(|k| windows[k / num_ranks]).collect();
    let bitmaps: Vec<Bitmap> = rows.iter().map(|row| Bitmap::from_bools(row)).collect();

    let flat = fold(found, num_chunks, num_ranks, windows).expect("checked by check_flat");
    let grouped = fold_grouped(&bitmaps, &row_windows).expect("fold_grouped of the split rows");
    assert_eq!(grouped, flat, "fold_grouped of the split rows against the flat fold");
    assert_bits(&grouped, &hybrid_model::fold_grouped(&rows, &row_windows), "fold_grouped of the split rows");
    let (hit, mask) = fold_unfold_grouped(&bitmaps, &row_windows).expect("fold_unfold_grouped");
    let (flat_hit, flat_mask) = fold_unfold_ranked(found, num_chunks, num_ranks, windows).expect("checked");
    assert_eq!(hit, flat_hit, "fold_unfold_grouped of the split rows: hit");
    for (k, row) in mask.iter().enumerate() {
        let flat_row: Vec<bool> = (0..num_chunks).map(|j| flat_mask.test(j * width + k)).collect();
        assert_bits(row, &flat_row, &format!("fold_unfold_grouped of the split rows: row {k}"));
    }
}

fn check_grouped_rows(input: &Input, num_chunks: usize, windows: &[i64]) {
    let fills = &input.rows[..input.rows.len().min(MAX_GROUPS + 1)];
    let mut rows: Vec<Vec<bool>> = Vec::with_capacity(fills.len());
    for fill in fills {
        let previous = rows.last().map(Vec::as_slice);
        rows.push(fill.bits(num_chunks, previous));
    }
    if let (Some((at, extra)), false) = (input.ragged, rows.is_empty()) {
        let at = usize::from(at) % rows.len();
        rows[at].extend(std::iter::repeat_n(true, 1 + usize::from(extra % 4)));
    }
    let bitmaps: Vec<Bitmap> = rows.iter().map(|row| Bitmap::from_bools(row)).collect();
    let mut ws = FoldWorkspace::new();
    let mut out = Bitmap::with_prefix(5, 5);
    let mut unfolded_rows = vec![Bitmap::with_prefix(9, 4); 3];

    // The errors the definitions give, any of which is true of the input.
    let len0 = rows.first().map_or(0, Vec::len);
    let ragged = rows.iter().enumerate().find(|(_, row)| row.len() != len0);
    let mut allowed: Vec<HybridError> = Vec::new();
    if windows.is_empty() {
        allowed.push(HybridError::NoWindows);
    }
    if rows.len() != windows.len() {
        allowed.push(HybridError::RowWindowMismatch { rows: rows.len(), windows: windows.len() });
    }
    if let Some((row, bits)) = ragged {
        allowed.push(HybridError::RaggedRows { row, len: bits.len(), expected: len0 });
    }
    let check_error = |error: HybridError, what: &str| {
        assert!(allowed.contains(&error), "{what}: error {error:?}, expected one of {allowed:?}");
    };
    if !allowed.is_empty() {
        let refused = |result: Result<(), HybridError>, what: &str| match result {
            Err(error) => check_error(error, what),
            Ok(()) => panic!("{what}: accepted an input it must refuse ({allowed:?})"),
        };
        refused(fold_grouped(&bitmaps, windows).map(drop), "fold_grouped");
        refused(fold_grouped_into(&bitmaps, windows, &mut ws, &mut out), "fold_grouped_into");
        refused(fold_unfold_grouped(&bitmaps, windows).map(drop), "fold_unfold_grouped");
        refused(fold_unfold_grouped_into(&bitmaps, windows, &mut ws, &mut unfolded_rows).map(drop), "_into");
        if windows.is_empty() {
            assert_eq!(unfold_grouped(3, num_chunks, windows), Err(HybridError::NoWindows), "unfold_grouped");
        }
        return;
    }
    // `ragged` on the only row changes every row's length: C is row 0's.
    let num_chunks = len0;
    let folded = hybrid_model::fold_grouped(&rows, windows);
    let hit = hybrid_model::hit_of(&folded);
    let unfolded = hybrid_model::unfold_grouped(hit, num_chunks, windows);
    assert_bits(&fold_grouped(&bitmaps, windows).expect("fold_grouped"), &folded, "fold_grouped");
    fold_grouped_into(&bitmaps, windows, &mut ws, &mut out).expect("fold_grouped_into");
    assert_bits(&out, &folded, "fold_grouped_into");
    let (grouped_hit, mask) = fold_unfold_grouped(&bitmaps, windows).expect("fold_unfold_grouped");
    assert_eq!(grouped_hit, hit, "fold_unfold_grouped: hit");
    assert_eq!(mask.len(), windows.len(), "fold_unfold_grouped: one row per window");
    let into_hit = fold_unfold_grouped_into(&bitmaps, windows, &mut ws, &mut unfolded_rows).expect("into");
    assert_eq!(into_hit, hit, "fold_unfold_grouped_into: hit");
    assert_eq!(unfolded_rows.len(), windows.len(), "fold_unfold_grouped_into: one row per window");
    for (k, expected) in unfolded.iter().enumerate() {
        assert_bits(&mask[k], expected, &format!("fold_unfold_grouped: row {k}"));
        assert_bits(&unfolded_rows[k], expected, &format!("fold_unfold_grouped_into: row {k}"));
    }
    let probe = usize::from(input.hit_probe);
    let probed = hybrid_model::unfold_grouped(probe, num_chunks, windows);
    let direct = unfold_grouped(probe, num_chunks, windows).expect("unfold_grouped");
    unfold_grouped_into(probe, num_chunks, windows, &mut unfolded_rows).expect("unfold_grouped_into");
    for (k, expected) in probed.iter().enumerate() {
        assert_bits(&direct[k], expected, &format!("unfold_grouped of the probe: row {k}"));
        assert_bits(&unfolded_rows[k], expected, &format!("unfold_grouped_into of the probe: row {k}"));
    }
}

/// The grid request an input describes: the tiers as maps (for the plan)
/// and as sorted cell lists (for the reference).
pub(crate) fn grid_tiers(tiers: &[(bool, u8, Fill)], rows: usize, num_chunks: usize) -> (GridMap, GridMap, Tier, Tier) {
    let mut model: [Vec<(usize, Vec<Vec<bool>>)>; 2] = [Vec::new(), Vec::new()];
    let mut previous: Option<Vec<bool>> = None;
    for (is_l2, index, fill) in tiers.iter().take(2 * MAX_TIERS) {
        let cells = fill.bits(rows * num_chunks, previous.as_deref());
        let grid: Vec<Vec<bool>> = cells.chunks(num_chunks.max(1)).take(rows).map(<[bool]>::to_vec).collect();
        let grid = if num_chunks == 0 { vec![Vec::new(); rows] } else { grid };
        let tier = &mut model[usize::from(*is_l2)];
        let index = usize::from(index % 12);
        match tier.iter_mut().find(|(at, _)| *at == index) {
            Some(entry) => entry.1 = grid,
            None => tier.push((index, grid)),
        }
        previous = Some(cells);
    }
    let [mut l1, mut l2] = model;
    l1.sort_by_key(|&(index, _)| index);
    l2.sort_by_key(|&(index, _)| index);
    let map = |tier: &Tier| {
        GridMap::from_entries(tier.iter().map(|(index, cells)| {
            let bitmaps = cells.iter().map(|row| Bitmap::from_bools(row)).collect();
            (*index, Grid::from_rows(bitmaps).expect("rows of one length"))
        }))
        .expect("grids of one shape")
    };
    (map(&l1), map(&l2), l1, l2)
}

fn check_grid_plan(input: &GridInput, num_chunks: usize, windows: &[i64]) {
    let rows = windows.len();
    let (l1, l2, model_l1, model_l2) = grid_tiers(&input.tiers, rows, num_chunks);
    let fetching = if input.full { FetchingPolicy::Full } else { FetchingPolicy::Prefix };
    let request = GridRequest::new(windows, num_chunks, &l1, &l2, fetching);
    let mut plan = GridPlan::new();
    if input.reuse {
        // Another shape, other tiers, into the same plan first.
        let other = GridMap::from_entries([(7, Grid::from_fn(2, 70, |r, c| (r + c) % 3 != 0))]).expect("one grid");
        plan_grid_into(&GridRequest::new(&[-1, 5], 70, &other, &other, FetchingPolicy::Prefix), &mut plan)
            .expect("a valid request");
    }
    let result = plan_grid_into(&request, &mut plan);
    match (hybrid_model::grid_plan(windows, num_chunks, &model_l1, &model_l2, input.full), result) {
        (None, Err(error)) => {
            let expected = if rows == 0 {
                HybridError::NoWindows
            } else {
                let (row, &window) = windows.iter().enumerate().find(|&(_, &w)| w >= 1).expect("a sliding window");
                HybridError::SlidingWindowInFullFetch { row, window }
            };
            assert_eq!(error, expected, "plan_grid_into: the error");
            assert!(plan.l1().is_empty() && plan.l2().is_empty() && plan.hit() == 0, "a refused plan is not empty");
        }
        (None, Ok(())) => panic!("plan_grid_into accepted a request it must refuse: {windows:?}, full {}", input.full),
        (Some(_), Err(error)) => panic!("plan_grid_into refused a valid request: {error}"),
        (Some((hit, expected_l1, expected_l2)), Ok(())) => {
            assert_eq!(plan.hit(), hit, "plan_grid_into: hit");
            assert_eq!(plan.shape(), Grid::zeros(rows, num_chunks).shape(), "plan_grid_into: shape");
            assert_tier(plan.l1(), &expected_l1, "l1");
            assert_tier(plan.l2(), &expected_l2, "l2");
        }
    }
}

#[track_caller]
fn assert_tier(actual: &GridMap, expected: &Tier, tier: &str) {
    let indices: Vec<usize> = actual.indices().collect();
    let expected_indices: Vec<usize> = expected.iter().map(|(index, _)| *index).collect();
    assert_eq!(indices, expected_indices, "plan_grid_into: {tier} indices that plan something");
    for ((index, grid), (_, cells)) in actual.iter().zip(expected) {
        for (r, row) in cells.iter().enumerate() {
            let bits = grid.row(r).unwrap_or_else(|| panic!("plan_grid_into: {tier} index {index} has no row {r}"));
            assert_bits(&bits, row, &format!("plan_grid_into: {tier} index {index}, row {r}"));
        }
    }
}
