//! The grid plan, LMCache's newer `plan_load`: which L1 manager or L2
//! adapter loads which cell of a hybrid model's request, [`plan_grid_into`]
//! and its reusable output [`GridPlan`].
//!
//! # How
//!
//! 1. `found` = the union of every L1 and L2 grid, row by row.
//! 2. The needed cells. `prefix`: `fold_grouped` over found's rows (each
//!    row under its own window) gives the hit length `hit`, and row `r`
//!    needs found's cells in `unfold_range(hit, window[r])`: that range *is*
//!    row `r` of `unfold_grouped(hit, …)`, so the mask is never built.
//!    `full`: every found cell; a sliding-window row is an error.
//! 3. The tiers in order (L1 indices ascending, then L2 indices ascending),
//!    each taking `remaining & locked` and removing it from `remaining`.
//!    That is, per row, bitmap-core's first-wins split of the tiers' rows
//!    (one pass over the words, each output written once), restricted to
//!    the needed range. Restricting after the split is the same as before
//!    it: the mask applies to every tier alike.
//!
//! So a planned cell is needed, was locked by its tier, and is planned once.

use core::fmt;
use core::str::FromStr;

use bitmap_core::Bitmap;

use crate::grid::Grid;
use crate::grid::map::GridMap;
use crate::hybrid::{FoldWorkspace, HybridError, fold_grouped_into, unfold_range};

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

    /// The hit length in chunks: with [`FetchingPolicy::Prefix`], the
    /// longest prefix every row can serve under its window from what the
    /// tiers hold (`fold_unfold_grouped`'s hit); with
    /// [`FetchingPolicy::Full`] (full attention only), the shortest row's
    /// run of held chunks from chunk 0, which is the same rule.
    pub fn hit(&self) -> usize {
        self.hit
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

/// Tiers kept in stack arrays by the split; more take one `Vec`.
const STACK_TIERS: usize = 16;

/// Plans `request` into `plan` (see the [module docs](self) and
/// [`GridPlan`]), reusing its buffers.
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

    // 1. found: the union of every tier, row by row.
    let mut sources = request.l1.entries().iter().chain(request.l2.entries()).map(|(_, grid)| grid);
    match sources.next() {
        None => plan.found.reset(rows, cols),
        Some(first) => {
            plan.found.copy_from(first);
            for grid in sources {
                plan.found.union_with(grid);
            }
        }
    }

    // 2. The hit and the needed range of each row.
    plan.hit = match request.fetching {
        FetchingPolicy::Prefix => {
            fold_grouped_into(plan.found.rows(), request.windows, &mut plan.fold, &mut plan.folded)?;
            plan.folded.last_set().map_or(0, |last| last + 1)
        }
        // All full attention: a prefix is servable iff every row holds it.
        FetchingPolicy::Full => plan.found.rows().iter().map(Bitmap::count_leading_ones).min().unwrap_or(0),
    };
    if tiers == 0 {
        return Ok(());
    }

    // 3. The first-wins split of the tiers, row by row, into the plan's grids.
    for (_, grid) in plan.l1.prepare_slots(request.l1.indices()) {
        grid.prepare_overwrite(rows, cols);
    }
    for (_, grid) in plan.l2.prepare_slots(request.l2.indices()) {
        grid.prepare_overwrite(rows, cols);
    }
    let locked = || request.l1.entries().iter().chain(request.l2.entries()).map(|(_, grid)| grid);
    let mut spill: Vec<&Bitmap> = Vec::new();
    for (row, &window) in request.windows.iter().enumerate() {
        let mut stack: [&Bitmap; STACK_TIERS] = [&plan.folded; STACK_TIERS];
        let sources: &[&Bitmap] = if tiers <= STACK_TIERS {
            for (slot, grid) in stack.iter_mut().zip(locked()) {
                *slot = &grid.rows()[row];
            }
            &stack[..tiers]
        } else {
            spill.clear();
            spill.extend(locked().map(|grid| &grid.rows()[row]));
            &spill
        };
        let outputs =
            plan.l1.entries_mut().iter_mut().chain(plan.l2.entries_mut()).map(|(_, grid)| &mut grid.rows_mut()[row]);
        Bitmap::first_wins_split(sources, outputs).map_err(|_| shape_error(request))?;
        if request.fetching == FetchingPolicy::Prefix {
            let (lo, hi) = unfold_range(plan.hit as i64, window);
            for (_, grid) in plan.l1.entries_mut().iter_mut().chain(plan.l2.entries_mut()) {
                let bits = &mut grid.rows_mut()[row];
                bits.clear_range(..lo);
                bits.clear_range(hi..);
            }
        }
    }
    plan.l1.remove_empty();
    plan.l2.remove_empty();
    Ok(())
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

/// The error for the first locked grid of another shape than the request's.
fn shape_error(request: &GridRequest<'_>) -> HybridError {
    let expected = request.shape();
    let actual = request.l1.iter().chain(request.l2.iter()).map(|(_, grid)| grid.shape()).find(|&s| s != expected);
    shape_mismatch(expected, actual.unwrap_or(expected))
}

fn shape_mismatch(expected: (usize, usize), found: (usize, usize)) -> HybridError {
    HybridError::ShapeMismatch { expected, found }
}
