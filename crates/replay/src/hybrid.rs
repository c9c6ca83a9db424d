//! Hybrid models: each chunk is G·R cells (a group's layers on a rank),
//! each cached and evicted on its own; the hit is `fold_unfold_grouped`
//! over the cells found, the loads follow the grid plan, and a tier keeps
//! only the cells the retain mask says a later hit can use, plus the
//! computed ones, dropping the others. `docs/REPLAY.md` ("Hybrid models")
//! states the rules.

use std::time::Instant;

use bitmap_core::Bitmap;
use prefetch_policy::{
    FetchingPolicy, FoldWorkspace, Grid, GridMap, GridPlan, GridRequest, HybridError, fold_unfold_grouped_into,
    plan_grid_into,
};
use serde::Serialize;

use crate::replayer::ReplayConfig;
use crate::report::{HitRatios, Percentiles, TierReport};
use crate::tier::Tier;
use crate::trace::{Request, Trace};

/// The cell layout: one window per group, and the ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellModel {
    /// One window per group: ≤ 0 full attention, ≥ 1 a sliding window of
    /// that many chunks (1: Mamba).
    pub windows: Vec<i64>,
    /// Tensor-parallel ranks (≥ 1).
    pub ranks: usize,
}

impl CellModel {
    /// Cells a chunk: groups × ranks.
    pub fn rows(&self) -> usize {
        self.windows.len() * self.ranks
    }

    /// `config` with its capacities counted in cells rather than blocks: a
    /// block's worth is [`rows`](CellModel::rows) cells (how the CLI and
    /// `bitplan.replay` read a hybrid replay's capacities).
    ///
    /// ```
    /// use kv_replay::ReplayConfig;
    /// use kv_replay::hybrid::CellModel;
    ///
    /// let model = CellModel { windows: vec![-1, 1], ranks: 4 };
    /// let cells = model.in_cells(&ReplayConfig::new(Some(100), &[None]));
    /// assert_eq!((cells.l1, cells.adapters[0].capacity), (Some(800), None));
    /// ```
    pub fn in_cells(&self, config: &ReplayConfig) -> ReplayConfig {
        let rows = self.rows();
        let mut config = config.clone();
        config.l1 = config.l1.map(|blocks| blocks.saturating_mul(rows));
        for adapter in &mut config.adapters {
            adapter.capacity = adapter.capacity.map(|blocks| blocks.saturating_mul(rows));
        }
        config
    }

    /// One window per row (group-major: row `g·R + r`).
    fn row_windows(&self) -> Vec<i64> {
        self.windows.iter().flat_map(|&window| std::iter::repeat_n(window, self.ranks)).collect()
    }
}

/// What a hybrid replay found, beside the flat report's fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HybridReport {
    /// Layer groups.
    pub groups: usize,
    /// Ranks.
    pub ranks: usize,
    /// Cells a chunk.
    pub cells_per_chunk: usize,
    /// Requests replayed.
    pub requests: u64,
    /// Σn, in chunks.
    pub blocks: u64,
    /// Σ input_length.
    pub tokens: u64,
    /// Σh, in chunks.
    pub hit_blocks: u64,
    /// Σ min(h·block_tokens, input_length).
    pub hit_tokens: u64,
    /// The three hit ratios, over chunks.
    pub hit_ratio: HitRatios,
    /// L1; its `hit_blocks` and `capacity_blocks` count cells.
    pub l1: TierReport,
    /// The adapters, in cells likewise.
    pub l2: Vec<TierReport>,
    /// Cell touches (writes and refreshes) over all tiers under the retain
    /// mask.
    pub cells_touched: u64,
    /// Cells the tiers held and dropped because the retain mask excludes
    /// them (cells before the hit that no hit of this prefix needs).
    pub cells_dropped_by_retain: u64,
    /// The trace's distinct keys × cells a chunk: what an unbounded L1
    /// caching every cell holds at the end.
    pub cells_all: u64,
    /// With an unbounded L1, `1 − l1.entries / cells_all`: the capacity the
    /// retain mask saves against caching every cell. `None` for a bounded
    /// L1, which is full either way (the saving shows in its hit ratio).
    pub capacity_saving: Option<f64>,
    /// The planner's time per request: fold and grid plan.
    pub planner_ns: Percentiles,
    /// The replay's time, parsing excluded.
    pub replay_seconds: f64,
}

/// Replays a trace under a cell model: the tiers hold cells, not chunks.
///
/// ```
/// use kv_replay::hybrid::{CellModel, replay_hybrid};
/// use kv_replay::{ReplayConfig, Trace};
///
/// // A full-attention group and a Mamba group (window 1), one rank.
/// let model = CellModel { windows: vec![-1, 1], ranks: 1 };
/// let mut trace = Trace::new(512);
/// trace.push(&[1, 2, 3], 1536);
/// trace.push(&[1, 2, 3], 1536);
/// let report = replay_hybrid(&trace, &ReplayConfig::new(None, &[]), &model)?;
/// // The first request computes (and writes) all 6 cells. The second hits
/// // all 3 chunks; of its Mamba cells only the last chunk's is needed, so
/// // the retain mask drops the other two from L1.
/// assert_eq!((report.hit_blocks, report.cells_touched, report.cells_dropped_by_retain), (3, 6 + 4, 2));
/// assert_eq!((report.l1.entries, report.cells_all, report.capacity_saving), (4, 6, Some(1.0 - 4.0 / 6.0)));
/// # Ok::<(), prefetch_policy::HybridError>(())
/// ```
///
/// # Errors
///
/// The fold's or the grid plan's [`HybridError`] (an empty window list).
///
/// # Panics
///
/// If the trace's distinct keys times the cells a chunk reach 2^32 − 1.
pub fn replay_hybrid(trace: &Trace, config: &ReplayConfig, model: &CellModel) -> Result<HybridReport, HybridError> {
    let rows = model.rows();
    if rows == 0 {
        return Err(if model.ranks == 0 { HybridError::ZeroRanks } else { HybridError::NoWindows });
    }
    let cells = trace.distinct_keys().checked_mul(rows).filter(|&cells| cells < u32::MAX as usize);
    let cells = cells.expect("distinct keys × cells a chunk below 2^32 - 1");
    let row_windows = model.row_windows();
    let tier = |capacity: Option<usize>| Tier::with_reserve(capacity, config.eviction, cells);
    let mut l1 = tier(config.l1);
    let mut l2: Vec<Tier> = config.adapters.iter().map(|adapter| tier(adapter.capacity)).collect();
    let mut state = State::default();
    let mut report = HybridReport {
        groups: model.windows.len(),
        ranks: model.ranks,
        cells_per_chunk: rows,
        ..HybridReport::default()
    };
    let (mut l1_hits, mut served) = (0u64, vec![0u64; l2.len()]);
    let mut ratio_sum = 0.0;
    let mut planner_ns = Vec::with_capacity(trace.len());
    let start = Instant::now();
    for request in trace.requests() {
        if request.keys.is_empty() {
            // Nothing to look up, hit or touch; it counts as a ratio of 0.
            report.requests += 1;
            report.tokens += request.tokens;
            continue;
        }
        let timed = Instant::now();
        let hit = state.plan(request, rows, &row_windows, &l1, &l2)?;
        planner_ns.push(timed.elapsed().as_nanos() as u64);
        let n = request.keys.len();
        report.requests += 1;
        report.blocks += n as u64;
        report.tokens += request.tokens;
        report.hit_blocks += hit as u64;
        report.hit_tokens += (hit as u64 * trace.block_tokens()).min(request.tokens);
        if n > 0 {
            ratio_sum += hit as f64 / n as f64;
        }
        l1_hits += state.plan.l1().get(0).map_or(0, Grid::popcount) as u64;
        for (j, served) in served.iter_mut().enumerate() {
            *served += state.plan.l2().get(j).map_or(0, Grid::popcount) as u64;
        }
        // (d) L1, then (e) each adapter: the retained cells of the hit
        // chunks (L1: all of them, it served or loaded them; an adapter:
        // those it served), and every cell of the computed chunks; a held
        // cell of a hit chunk outside the retain mask is dropped.
        let cell = |i: usize, row: usize| (request.keys[i] as usize * rows + row) as u32;
        for i in 0..n {
            for row in 0..rows {
                if i >= hit || state.retain[row].test(i) {
                    l1.touch(cell(i, row));
                    report.cells_touched += 1;
                } else if l1.remove(cell(i, row)) {
                    report.cells_dropped_by_retain += 1;
                }
            }
        }
        for (j, tier) in l2.iter_mut().enumerate() {
            let loads = state.plan.l2().get(j);
            for i in 0..hit {
                for row in 0..rows {
                    if loads.is_some_and(|loads| loads.test(row, i)) {
                        tier.touch(cell(i, row));
                        report.cells_touched += 1;
                    } else if !state.retain[row].test(i) && tier.remove(cell(i, row)) {
                        report.cells_dropped_by_retain += 1;
                    }
                }
            }
            for i in hit..n {
                for row in 0..rows {
                    tier.touch(cell(i, row));
                    report.cells_touched += 1;
                }
            }
        }
    }
    report.replay_seconds = start.elapsed().as_secs_f64();
    let ratio = |part: u64, whole: u64| if whole == 0 { 0.0 } else { part as f64 / whole as f64 };
    report.hit_ratio = HitRatios {
        block: ratio(report.hit_blocks, report.blocks),
        token: ratio(report.hit_tokens, report.tokens),
        request_mean: if report.requests == 0 { 0.0 } else { ratio_sum / report.requests as f64 },
    };
    report.cells_all = cells as u64;
    report.capacity_saving = l1.capacity().is_none().then(|| 1.0 - ratio(l1.len() as u64, report.cells_all));
    report.l1 = TierReport::new(&l1, l1_hits, None, None);
    report.l2 = l2.iter().zip(&served).map(|(tier, &served)| TierReport::new(tier, served, None, None)).collect();
    report.planner_ns = Percentiles::of(&planner_ns);
    Ok(report)
}

/// One request's buffers.
#[derive(Debug, Default)]
struct State {
    /// Found cells, one row per (group, rank): L1's or any adapter's.
    found: Vec<Bitmap>,
    retain: Vec<Bitmap>,
    workspace: FoldWorkspace,
    l1_map: GridMap,
    l2_map: GridMap,
    plan: GridPlan,
}

impl State {
    /// (a) the tiers' grids, (b) the hit by `fold_unfold_grouped` over the
    /// cells found, (c) the grid plan of the loads.
    fn plan(
        &mut self,
        request: Request<'_>,
        rows: usize,
        row_windows: &[i64],
        l1: &Tier,
        l2: &[Tier],
    ) -> Result<usize, HybridError> {
        let n = request.keys.len();
        let cell = |i: usize, row: usize| (request.keys[i] as usize * rows + row) as u32;
        self.found.resize_with(rows, Bitmap::default);
        for row in &mut self.found {
            row.reset(n);
        }
        let mut in_l1 = Grid::zeros(rows, n);
        for i in 0..n {
            for row in 0..rows {
                if l1.contains(cell(i, row)) {
                    in_l1.set(row, i);
                    self.found[row].set(i);
                }
            }
        }
        self.l1_map.clear();
        self.l2_map.clear();
        for (j, tier) in l2.iter().enumerate() {
            let mut held = Grid::zeros(rows, n);
            for i in 0..n {
                for row in 0..rows {
                    if !in_l1.test(row, i) && tier.contains(cell(i, row)) {
                        held.set(row, i);
                        self.found[row].set(i);
                    }
                }
            }
            // Same shape as every other grid of this request: cannot fail.
            let _ = self.l2_map.insert(j, held);
        }
        let _ = self.l1_map.insert(0, in_l1);
        let hit = fold_unfold_grouped_into(&self.found, row_windows, &mut self.workspace, &mut self.retain)?;
        let request = GridRequest::new(row_windows, n, &self.l1_map, &self.l2_map, FetchingPolicy::Prefix);
        plan_grid_into(&request, &mut self.plan)?;
        debug_assert_eq!(self.plan.hit(), hit);
        Ok(hit)
    }
}
