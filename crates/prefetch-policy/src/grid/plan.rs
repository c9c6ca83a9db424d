//! The grid plan, LMCache's newer `plan_load`: which L1 manager or L2
//! adapter loads which cell of a hybrid model's request, [`plan_grid_into`]
//! and its reusable output [`GridPlan`].
//!
//! # How
//!
//! The tiers in order (L1 indices ascending, then L2 indices ascending),
//! each taking `remaining & locked` and removing it from `remaining`, is
//! exactly bitmap-core's first-wins split of the tiers' rows, one pass over
//! each row's words with each output word written once, straight into the
//! plan rows' words.
//!
//! - `full`: every found cell is needed (a sliding-window row is an error),
//!   so the split is the plan. It needs no hit ([`GridPlan::hit`] computes
//!   it from the plan when asked), and no union is built.
//! - `prefix`: the split gets one more input, a row of all ones, last: its
//!   output is the complement of the union of the tiers (`found`), which
//!   the fold needs, so the union costs no pass of its own over the tiers.
//!   `fold_grouped` over found's rows (each under its own window) gives the
//!   hit, and row `r` keeps only its cells in `unfold_range(hit, window[r])`:
//!   that range *is* row `r` of `unfold_grouped(hit, …)`, so the mask is
//!   never built. Cutting the split's outputs to the range is the same as
//!   cutting its inputs: the mask applies to every tier alike.
//!
//! So a planned cell is needed, was locked by its tier, and is planned once.

use core::fmt;
use core::str::FromStr;

use bitmap_core::{Bitmap, kernel};

use crate::grid::map::GridMap;
use crate::grid::{Grid, words_per_row};
use crate::hybrid::{FoldWorkspace, HybridError, fold_word_rows_into, sliding, unfold_range};

/// Which cells a request needs: LMCache's `FetchingPolicy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FetchingPolicy {
    /// The longest prefix every row can serve under its window, and of each
    /// row only the cells that prefix needs (`"prefix"`).
    #[default]
    Prefix,
    /// Every cell any tier holds, gaps and all (`"full"`); only for rows of
    /// full attention.
    Full,
}

impl FetchingPolicy {
    /// Its name as LMCache spells it: `"prefix"` or `"full"`.
    pub const fn name(self) -> &'static str {
        match self {
            FetchingPolicy::Prefix => "prefix",
            FetchingPolicy::Full => "full",
        }
    }
}

impl fmt::Display for FetchingPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name other than `prefix` or `full`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[error("unknown fetching policy {name:?}: expected \"prefix\" or \"full\"")]
pub struct UnknownFetchingPolicy {
    /// The name given.
    pub name: String,
}

impl FromStr for FetchingPolicy {
    type Err = UnknownFetchingPolicy;

    fn from_str(name: &str) -> Result<FetchingPolicy, UnknownFetchingPolicy> {
        match name {
            "prefix" => Ok(FetchingPolicy::Prefix),
            "full" => Ok(FetchingPolicy::Full),
            _ => Err(UnknownFetchingPolicy { name: name.to_owned() }),
        }
    }
}

/// The inputs of a grid plan: the rows' windows (one per row: a row is an
/// object group and rank), the chunk count, the grids each L1 manager and
/// each L2 adapter locked (shape `windows.len()` × `num_chunks`; a missing
/// index has locked nothing), and the fetching policy.
#[derive(Clone, Copy, Debug)]
pub struct GridRequest<'a> {
    /// One window per row: `w <= 0` full attention, `w >= 1` a sliding
    /// window of `w` chunks (1: Mamba).
    pub windows: &'a [i64],
    /// The number of chunks: every row's width.
    pub num_chunks: usize,
    /// L1 manager index → the cells it locked.
    pub l1: &'a GridMap,
    /// L2 adapter index → the cells it locked.
    pub l2: &'a GridMap,
    /// Which cells are needed.
    pub fetching: FetchingPolicy,
}

impl<'a> GridRequest<'a> {
    /// A request from its parts.
    pub const fn new(
        windows: &'a [i64],
        num_chunks: usize,
        l1: &'a GridMap,
        l2: &'a GridMap,
        fetching: FetchingPolicy,
    ) -> GridRequest<'a> {
        GridRequest { windows, num_chunks, l1, l2, fetching }
    }

    /// The shape every grid must have: `(windows.len(), num_chunks)`.
    pub fn shape(&self) -> (usize, usize) {
        Grid::zeros_shape(self.windows.len(), self.num_chunks)
    }
}

/// A grid plan: which cells each L1 manager and each L2 adapter loads, and
/// the hit length.
///
/// Entries are by tier index, ascending; an index with nothing to load has
/// no entry. The plan's cells are exactly the needed ones, each in one
/// entry, each locked by that entry's tier.
///
/// # Reuse
///
/// The plan keeps its grids, spare ones and its temporaries (the union of
/// the tiers, the fold's workspace) between calls of [`plan_grid_into`]:
/// once it has planned a request of a given shape and number of tiers, it
/// plans such requests without allocating (up to 16 tiers in all).
///
/// ```
/// use prefetch_policy::{FetchingPolicy, Grid, GridMap, GridPlan, GridRequest, plan_grid_into};
///
/// // Two rows (a full-attention group and a window-2 group), 5 chunks.
/// let windows = [-1, 2];
/// let l1 = GridMap::from_entries([(0, Grid::from_fn(2, 5, |r, c| r == 0 && c < 2))])?;
/// let l2 = GridMap::from_entries([(1, Grid::from_fn(2, 5, |r, c| r == 0 || c >= 2))])?;
/// let mut plan = GridPlan::new();
/// plan_grid_into(&GridRequest::new(&windows, 5, &l1, &l2, FetchingPolicy::Prefix), &mut plan)?;
/// assert_eq!(plan.hit(), 5);
/// assert_eq!(plan.l1().to_index_lists(), [(0, vec![vec![0, 1], vec![]])]);
/// assert_eq!(plan.l2().to_index_lists(), [(1, vec![vec![2, 3, 4], vec![3, 4]])]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct GridPlan {
    fetching: FetchingPolicy,
    shape: (usize, usize),
    hit: usize,
    l1: GridMap,
    l2: GridMap,
    /// The union of every tier's grid.
    found: Grid,
    /// The fold of `found`.
    folded: Bitmap,
    fold: FoldWorkspace,
    /// Every cell set, tails clear: the split's last input under
    /// `prefix`, whose output is the complement of the union.
    ones: Grid,
    /// One row of `0..hit`, the cut of the full-attention rows.
    prefix: Bitmap,
}

impl GridPlan {
    /// An empty plan.
    pub fn new() -> GridPlan {
        GridPlan::default()
    }

    /// What each L1 manager loads.
    pub fn l1(&self) -> &GridMap {
        &self.l1
    }

    /// What each L2 adapter loads.
    pub fn l2(&self) -> &GridMap {
        &self.l2
    }

    /// The hit length in chunks: the longest prefix every row can serve
    /// under its window from what the tiers hold (`fold_unfold_grouped`'s
    /// hit).
    ///
    /// With [`FetchingPolicy::Prefix`] the plan computed it. With
    /// [`FetchingPolicy::Full`] (full attention only, where it is the
    /// shortest row's run of held chunks from chunk 0) the plan does not
    /// need it, as LMCache's `plan_load` does not: it is computed here from
    /// the plan, which holds every found cell, a block of words at a time
    /// (`O(rows × chunks)` at worst; call it once).
    pub fn hit(&self) -> usize {
        match self.fetching {
            FetchingPolicy::Prefix => self.hit,
            FetchingPolicy::Full => {
                let (rows, cols) = self.shape;
                let entries = || self.l1.entries().iter().chain(self.l2.entries()).map(|(_, grid)| grid);
                let mut hit = if self.l1.is_empty() && self.l2.is_empty() { 0 } else { cols };
                for row in 0..rows {
                    if hit == 0 {
                        break;
                    }
                    hit = hit.min(leading_ones_of_union(entries().map(|grid| grid.row_words(row)), hit));
                }
                hit
            }
        }
    }

    /// The shape of the request planned: `(rows, chunks)`.
    pub fn shape(&self) -> (usize, usize) {
        self.shape
    }

    /// The fetching policy of the request planned.
    pub fn fetching(&self) -> FetchingPolicy {
        self.fetching
    }

    /// The number of cells planned, over both tiers.
    pub fn planned_count(&self) -> usize {
        self.l1.popcount() + self.l2.popcount()
    }

    /// The cells planned on any tier (the needed cells), as a new grid of
    /// the request's shape.
    pub fn merged(&self) -> Grid {
        let mut merged = Grid::zeros(self.shape.0, self.shape.1);
        for (_, grid) in self.l1.iter().chain(self.l2.iter()) {
            merged.union_with(grid);
        }
        merged
    }

    /// Empties the plan for a request of `shape`.
    fn reset(&mut self, shape: (usize, usize), fetching: FetchingPolicy) {
        self.shape = shape;
        self.fetching = fetching;
        self.hit = 0;
        self.l1.clear();
        self.l2.clear();
    }
}

impl Clone for GridPlan {
    /// Clones the plan, not its temporaries.
    fn clone(&self) -> GridPlan {
        GridPlan {
            fetching: self.fetching,
            shape: self.shape,
            hit: self.hit,
            l1: self.l1.clone(),
            l2: self.l2.clone(),
            ..GridPlan::default()
        }
    }
}

impl PartialEq for GridPlan {
    /// Same request shape, fetching policy, hit and entries.
    fn eq(&self, other: &GridPlan) -> bool {
        (self.fetching, self.shape, self.hit) == (other.fetching, other.shape, other.hit)
            && self.l1 == other.l1
            && self.l2 == other.l2
    }
}

impl Eq for GridPlan {}

/// Tiers kept in stack arrays by the union and the split; more take a
/// `Vec` (an allocation per row).
const STACK_TIERS: usize = 16;

/// Words of a row's union computed at a time on the stack by the `full`
/// hit (as `LoadPlan::prefix_len` does): 512 bytes.
const BLOCK_WORDS: usize = 64;

/// Plans `request` into `plan`, reusing its buffers (see [`GridPlan`]).
///
/// `found` is the union of every L1 and L2 grid. Under `prefix`, the hit is
/// `fold_grouped` of found's rows (each under its own window) and row `r`
/// needs found's cells in `unfold_range(hit, windows[r])`; under `full`,
/// every found cell. Then the L1 indices in ascending order, then the L2
/// indices, each take the needed cells it locked that no earlier one took:
/// per row, bitmap-core's first-wins split of the tiers' rows. No cell is
/// planned twice, and only on a tier that locked it.
///
/// # Errors
///
/// [`HybridError::NoWindows`] without rows, [`HybridError::ShapeMismatch`]
/// for a locked grid whose shape is not `(windows.len(), num_chunks)`,
/// [`HybridError::SlidingWindowInFullFetch`] for a row with a window of 1
/// or more under [`FetchingPolicy::Full`]. The plan is then empty (as
/// LMCache's `plan_load` returns an empty plan for bad input).
pub fn plan_grid_into(request: &GridRequest<'_>, plan: &mut GridPlan) -> Result<(), HybridError> {
    let shape = request.shape();
    plan.reset(shape, request.fetching);
    check_request(request)?;
    let (rows, cols) = shape;
    let tiers = request.l1.len() + request.l2.len();
    let locked = || request.l1.entries().iter().chain(request.l2.entries()).map(|(_, grid)| grid);

    if tiers == 0 {
        // Nothing found: no prefix is servable, nothing to plan.
        return Ok(());
    }
    for (_, grid) in plan.l1.prepare_slots(request.l1.indices()) {
        grid.ensure_shape(rows, cols);
    }
    for (_, grid) in plan.l2.prepare_slots(request.l2.indices()) {
        grid.ensure_shape(rows, cols);
    }

    let stride = words_per_row(cols);
    if request.fetching == FetchingPolicy::Full {
        // Every found cell is needed and no hit is (`GridPlan::hit` computes
        // it from the plan when asked): the first-wins split of the tiers
        // into the plan's grids, over the whole buffers at once (the rows
        // are contiguous and their tails clear on every side).
        let all = 0..rows * stride;
        let inputs = locked().map(|grid| &grid.as_words()[all.clone()]);
        let outputs =
            plan.l1.entries_mut().iter_mut().chain(plan.l2.entries_mut()).map(|(_, g)| &mut g.words_mut()[all.clone()]);
        split(inputs, outputs, tiers, 0, all.len() * 64);
    } else {
        // A full-attention row needs every found cell up to the hit: the
        // split first, over the whole row, with one more input of all ones
        // last, whose output is the complement of the union, so the union
        // the fold needs costs no pass of its own over the tiers; after the
        // hit, the row is cut to it. Consecutive full-attention rows are
        // contiguous words, so each run of them is split in one kernel call
        // (row by row, the split's set-up was most of a 64-row plan's
        // time). A sliding-window row needs only its window's last chunks,
        // a few of its words: its union is built alone, and it is split
        // after the hit over those words only (splitting it whole and then
        // clearing most of it is most of the plan's time with windows, as
        // measured).
        plan.found.ensure_shape(rows, cols);
        if plan.ones.shape() != (rows, cols) {
            plan.ones.reset(rows, cols);
            plan.ones.set_all();
        }
        let mut row = 0;
        while row < rows {
            let window = sliding(request.windows[row], cols);
            // The run of rows from `row` on that are all full attention, or
            // all sliding (of any window): contiguous words.
            let end =
                (row..rows).find(|&r| sliding(request.windows[r], cols).is_some() != window.is_some()).unwrap_or(rows);
            let run = row * stride..end * stride;
            if window.is_some() {
                union_row(
                    locked().map(|grid| &grid.as_words()[run.clone()]),
                    tiers,
                    &mut plan.found.words_mut()[run.clone()],
                );
                row = end;
                continue;
            }
            let ones = &plan.ones.as_words()[run.clone()];
            let union = &mut plan.found.words_mut()[run.clone()];
            let inputs = locked().map(|grid| &grid.as_words()[run.clone()]).chain(core::iter::once(ones));
            let outputs = plan
                .l1
                .entries_mut()
                .iter_mut()
                .chain(plan.l2.entries_mut())
                .map(|(_, g)| &mut g.words_mut()[run.clone()])
                .chain(core::iter::once(&mut *union));
            split(inputs, outputs, tiers + 1, 0, run.len() * 64);
            // The complement back to the union, tails clear again.
            kernel::not_assign(union);
            kernel::and_assign(union, ones);
            row = end;
        }
        fold_word_rows_into(plan.found.row_slices(), cols, request.windows, &mut plan.fold, &mut plan.folded);
        plan.hit = plan.folded.last_set().map_or(0, |last| last + 1);
        let mut row = 0;
        while row < rows {
            let window = request.windows[row];
            if sliding(window, cols).is_none() {
                row += 1;
                continue;
            }
            let (lo, hi) = unfold_range(plan.hit as i64, window);
            if stride > SPLIT_WHOLE_ROW_WORDS {
                // A long row: the split over the window's words only.
                let inputs = locked().map(|grid| grid.row_words(row));
                let outputs =
                    plan.l1.entries_mut().iter_mut().chain(plan.l2.entries_mut()).map(|(_, g)| g.row_words_mut(row));
                split(inputs, outputs, tiers, lo, hi);
                row += 1;
                continue;
            }
            // Short rows: the run of rows of this window split in one call,
            // then each row cut to `lo..hi`.
            let end = (row..rows).find(|&r| request.windows[r] != window).unwrap_or(rows);
            let run = row * stride..end * stride;
            let inputs = locked().map(|grid| &grid.as_words()[run.clone()]);
            let outputs = plan
                .l1
                .entries_mut()
                .iter_mut()
                .chain(plan.l2.entries_mut())
                .map(|(_, g)| &mut g.words_mut()[run.clone()]);
            split(inputs, outputs, tiers, 0, run.len() * 64);
            plan.prefix.reset(cols);
            plan.prefix.set_range(lo..hi);
            let keep = plan.prefix.as_words();
            for (_, grid) in plan.l1.entries_mut().iter_mut().chain(plan.l2.entries_mut()) {
                for words in grid.words_mut()[run.clone()].chunks_exact_mut(stride) {
                    for (word, &keep) in words.iter_mut().zip(keep) {
                        *word &= keep;
                    }
                }
            }
            row = end;
        }
        if plan.hit < cols {
            // Every full-attention row is cut to `0..hit`: one mask row,
            // ANDed into each such row of each tier (a call per row and
            // tier was a third of a 64-row plan's time).
            plan.prefix.reset(cols);
            plan.prefix.set_range(..plan.hit);
            let prefix = plan.prefix.as_words();
            for (_, grid) in plan.l1.entries_mut().iter_mut().chain(plan.l2.entries_mut()) {
                for (row, &window) in request.windows.iter().enumerate() {
                    if sliding(window, cols).is_none() {
                        for (word, &keep) in grid.row_words_mut(row).iter_mut().zip(prefix) {
                            *word &= keep;
                        }
                    }
                }
            }
        }
    }
    plan.l1.remove_empty();
    plan.l2.remove_empty();
    Ok(())
}

/// Rows of up to this many words are split whole after the hit, a run of
/// rows of one window in one call, and then cut to the window's range; a
/// longer row only over the window's words, one row at a time. At a
/// request's size (24 chunks, one word a row) the per-row set-up was most
/// of a plan with windows; at 4,096 chunks the window's few words are all
/// that need splitting.
const SPLIT_WHOLE_ROW_WORDS: usize = 8;

/// The first-wins split of `inputs` (`count` rows of words) into
/// `outputs`, keeping bits `lo..hi`, with stack arrays sized to the common
/// case (their set-up is per row).
fn split<'i, 'o>(
    inputs: impl Iterator<Item = &'i [u64]>,
    outputs: impl Iterator<Item = &'o mut [u64]>,
    count: usize,
    lo: usize,
    hi: usize,
) {
    match count {
        0..=4 => split_row::<4>(inputs, outputs, count, lo, hi),
        5..=STACK_TIERS => split_row::<STACK_TIERS>(inputs, outputs, count, lo, hi),
        _ => split_row_spilled(inputs, outputs, lo, hi),
    }
}

/// Makes `union` (a row of the request's width) the OR of `inputs`
/// (`count` rows of words), in one pass.
fn union_row<'i>(inputs: impl Iterator<Item = &'i [u64]>, count: usize, union: &mut [u64]) {
    if count <= STACK_TIERS {
        let mut sources: [&[u64]; STACK_TIERS] = [&[]; STACK_TIERS];
        for (slot, input) in sources.iter_mut().zip(inputs) {
            *slot = input;
        }
        kernel::union_many(union, &sources[..count]);
    } else {
        let sources: Vec<&[u64]> = inputs.collect();
        kernel::union_many(union, &sources);
    }
}

/// The length of the run of set bits from bit 0 of the union of `rows`,
/// at most `limit`, a block of words at a time on the stack (only the words
/// below `limit` are read).
fn leading_ones_of_union<'w>(mut rows: impl Iterator<Item = &'w [u64]> + Clone, limit: usize) -> usize {
    let Some(first) = rows.next() else { return 0 };
    let words = first.len().min(limit.div_ceil(64));
    let mut block = [0u64; BLOCK_WORDS];
    for start in (0..words).step_by(BLOCK_WORDS) {
        let end = words.min(start + BLOCK_WORDS);
        let block = &mut block[..end - start];
        block.copy_from_slice(&first[start..end]);
        for other in rows.clone() {
            kernel::or_assign(block, &other[start..end]);
        }
        if let Some(word) = kernel::position_not_all_ones(block) {
            return ((start + word) * 64 + block[word].trailing_ones() as usize).min(limit);
        }
    }
    limit
}

/// The words `first..end` of a row holding bits `lo..hi` (none if the
/// range is empty).
fn word_range(lo: usize, hi: usize) -> (usize, usize) {
    if lo < hi { (lo / 64, hi.div_ceil(64)) } else { (0, 0) }
}

/// Writes the first-wins split of `inputs` (one row of each of `count <= N`
/// tiers, as words) into `outputs` (the plan's rows, as long), keeping only
/// bits `lo..hi`: the kernel runs over the words of that range, the words
/// outside it are cleared, and so are the bits of its edge words outside it.
fn split_row<'i, 'o, const N: usize>(
    inputs: impl Iterator<Item = &'i [u64]>,
    outputs: impl Iterator<Item = &'o mut [u64]>,
    count: usize,
    lo: usize,
    hi: usize,
) {
    let (first, end) = word_range(lo, hi);
    let mut sliced: [&[u64]; N] = [&[]; N];
    for (slot, input) in sliced.iter_mut().zip(inputs) {
        *slot = &input[first..end];
    }
    let mut ranges: [&mut [u64]; N] = core::array::from_fn(|_| <&mut [u64]>::default());
    for (slot, output) in ranges.iter_mut().zip(outputs) {
        *slot = clear_outside(output, first, end);
    }
    if first < end {
        kernel::first_wins(&sliced[..count], &mut ranges[..count]);
        mask_edges(&mut ranges[..count], lo, hi);
    }
}

/// [`split_row`] for more tiers than the stack arrays hold.
fn split_row_spilled<'i, 'o>(
    inputs: impl Iterator<Item = &'i [u64]>,
    outputs: impl Iterator<Item = &'o mut [u64]>,
    lo: usize,
    hi: usize,
) {
    let (first, end) = word_range(lo, hi);
    let sliced: Vec<&[u64]> = inputs.map(|input| &input[first..end]).collect();
    let mut ranges: Vec<&mut [u64]> = outputs.map(|output| clear_outside(output, first, end)).collect();
    if first < end {
        kernel::first_wins(&sliced, &mut ranges);
        mask_edges(&mut ranges, lo, hi);
    }
}

/// Clears the words of `words` outside `first..end` and returns those.
fn clear_outside(words: &mut [u64], first: usize, end: usize) -> &mut [u64] {
    let (before, rest) = words.split_at_mut(first);
    let (range, after) = rest.split_at_mut(end - first);
    if !before.is_empty() {
        before.fill(0);
    }
    if !after.is_empty() {
        after.fill(0);
    }
    range
}

/// Clears the bits below `lo` in the first word of each (non-empty) range
/// and from `hi` on in its last (the ranges are words `lo / 64` up to
/// `hi.div_ceil(64)` of a row).
fn mask_edges(outputs: &mut [&mut [u64]], lo: usize, hi: usize) {
    let low_mask = !0u64 << (lo % 64);
    let high_mask = if hi.is_multiple_of(64) { !0 } else { (1u64 << (hi % 64)) - 1 };
    for words in outputs {
        let last = words.len() - 1;
        words[0] &= low_mask;
        words[last] &= high_mask;
    }
}

/// [`plan_grid_into`] into a new [`GridPlan`].
///
/// # Errors
///
/// As [`plan_grid_into`].
pub fn plan_grid(request: &GridRequest<'_>) -> Result<GridPlan, HybridError> {
    let mut plan = GridPlan::new();
    plan_grid_into(request, &mut plan)?;
    Ok(plan)
}

/// Checks the windows and every locked grid's shape.
fn check_request(request: &GridRequest<'_>) -> Result<(), HybridError> {
    if request.windows.is_empty() {
        return Err(HybridError::NoWindows);
    }
    if request.fetching == FetchingPolicy::Full
        && let Some((row, &window)) = request.windows.iter().enumerate().find(|&(_, &window)| window >= 1)
    {
        return Err(HybridError::SlidingWindowInFullFetch { row, window });
    }
    let expected = request.shape();
    for (_, grid) in request.l1.iter().chain(request.l2.iter()) {
        if grid.shape() != expected {
            return Err(shape_mismatch(expected, grid.shape()));
        }
    }
    Ok(())
}

fn shape_mismatch(expected: (usize, usize), found: (usize, usize)) -> HybridError {
    HybridError::ShapeMismatch { expected, found }
}
