//! Hybrid models: each chunk is G·R cells (a group's layers on a rank),
//! each cached and evicted on its own; the hit is `fold_unfold_grouped`
//! over the cells found, the loads follow the grid plan, and a tier keeps
//! only the cells the retain mask says a later hit can use, plus the
//! computed ones, dropping the others. `docs/REPLAY.md` ("Hybrid models")
//! states the rules.

use std::time::Instant;

use prefetch_policy::{
    FetchingPolicy, Grid, GridMap, GridPlan, GridRequest, HybridError, plan_grid_into, unfold_range,
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

/// Replays a trace under a cell model: the tiers hold cells, not chunks
/// (a [`HybridReplayer`] reserved for the trace, over every request).
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
    HybridReplayer::with_reserve(config, model, trace.distinct_keys(), trace.max_keys())?.replay(trace)
}

/// Replays requests under a cell model, one at a time, in buffers it keeps
/// from one request to the next: reserved for a trace's distinct keys and
/// longest request ([`with_reserve`](HybridReplayer::with_reserve)), a
/// step allocates nothing (`tests/no_alloc.rs` counts).
///
/// ```
/// use kv_replay::hybrid::{CellModel, HybridReplayer};
/// use kv_replay::{ReplayConfig, Trace};
///
/// let model = CellModel { windows: vec![-1, 4, 1], ranks: 2 };
/// let mut trace = Trace::new(512);
/// trace.push(&[1, 2, 3], 1536);
/// trace.push(&[1, 2, 3, 4], 2048);
/// let config = model.in_cells(&ReplayConfig::new(Some(100), &[Some(400)]));
/// let mut replayer = HybridReplayer::with_reserve(&config, &model, trace.distinct_keys(), trace.max_keys())?;
/// let hits: Vec<usize> = trace.requests().map(|request| replayer.step(request, 512)).collect::<Result<_, _>>()?;
/// assert_eq!(hits, [0, 3]);
/// // 3 chunks × 6 cells, then the 6 of chunk 4; the second request's
/// // Mamba cells of keys 1 and 2 (2 ranks each) are dropped from L1 and
/// // from the adapter (only key 3's are needed).
/// assert_eq!((replayer.l1().len(), replayer.report().cells_dropped_by_retain), (24 - 4, 4 + 4));
/// # Ok::<(), prefetch_policy::HybridError>(())
/// ```
#[derive(Debug)]
pub struct HybridReplayer {
    /// One window per row (group-major: row `g·R + r`).
    row_windows: Vec<i64>,
    /// Dense keys must stay below this, so that every cell id
    /// `key·rows + row` is below the tiers' 2^32 − 1.
    key_limit: u64,
    l1: Tier,
    l2: Vec<Tier>,
    state: State,
    /// The counts so far; [`report`](HybridReplayer::report) adds the
    /// ratios, the tiers and the times.
    totals: HybridReport,
    l1_hits: u64,
    served: Vec<u64>,
    /// Σ h/n over the requests with keys.
    ratio_sum: f64,
    planner_ns: Vec<u64>,
    elapsed_ns: u64,
}

impl HybridReplayer {
    /// A replayer with empty tiers and buffers: the first requests size
    /// them.
    ///
    /// # Errors
    ///
    /// [`HybridError::NoWindows`] or [`HybridError::ZeroRanks`] for a model
    /// without rows.
    pub fn new(config: &ReplayConfig, model: &CellModel) -> Result<HybridReplayer, HybridError> {
        HybridReplayer::with_reserve(config, model, 0, 0)
    }

    /// [`new`](HybridReplayer::new), with tiers reserved for the cells of
    /// `distinct_keys` keys and the grids, the plan and the fold sized for
    /// requests of `max_keys` keys: a replay of a known trace then
    /// allocates nothing per request. `config`'s capacities count cells
    /// (see [`CellModel::in_cells`]). The report's `cells_all` is
    /// `distinct_keys` × cells a chunk until a
    /// [`replay`](HybridReplayer::replay) sets it from its trace.
    ///
    /// # Errors
    ///
    /// As [`new`](HybridReplayer::new).
    ///
    /// # Panics
    ///
    /// If `distinct_keys` times the cells a chunk reach 2^32 − 1; if
    /// `config` has a trigger or an eviction that is not a
    /// [list order](crate::Eviction::is_list_order) (the hybrid replay
    /// keeps strict LRU, FIFO or LFU tiers).
    pub fn with_reserve(
        config: &ReplayConfig,
        model: &CellModel,
        distinct_keys: usize,
        max_keys: usize,
    ) -> Result<HybridReplayer, HybridError> {
        let rows = model.rows();
        if rows == 0 {
            return Err(if model.ranks == 0 { HybridError::ZeroRanks } else { HybridError::NoWindows });
        }
        let key_limit = (u64::from(u32::MAX) - 1) / rows as u64;
        assert!(distinct_keys as u64 <= key_limit, "distinct keys × cells a chunk below 2^32 - 1");
        let cells = distinct_keys * rows;
        assert!(
            config.eviction.is_list_order() && !config.has_trigger(),
            "the hybrid replay evicts by lru, fifo or lfu at strict capacity"
        );
        let tier = |capacity: Option<usize>| Tier::with_reserve(capacity, config.eviction, cells);
        let row_windows = model.row_windows();
        let mut state = State::default();
        state.reserve(&row_windows, config.adapters.len(), max_keys)?;
        Ok(HybridReplayer {
            key_limit,
            l1: tier(config.l1),
            l2: config.adapters.iter().map(|adapter| tier(adapter.capacity)).collect(),
            state,
            totals: HybridReport {
                groups: model.windows.len(),
                ranks: model.ranks,
                cells_per_chunk: rows,
                cells_all: cells as u64,
                ..HybridReport::default()
            },
            l1_hits: 0,
            served: vec![0; config.adapters.len()],
            ratio_sum: 0.0,
            planner_ns: Vec::new(),
            elapsed_ns: 0,
            row_windows,
        })
    }

    /// Replays every request of `trace`, then reports.
    ///
    /// # Errors
    ///
    /// The grid plan's [`HybridError`] (none for a model with rows).
    ///
    /// # Panics
    ///
    /// If the trace's distinct keys times the cells a chunk reach 2^32 − 1.
    pub fn replay(&mut self, trace: &Trace) -> Result<HybridReport, HybridError> {
        self.replay_with_progress(trace, |_| {})
    }

    /// [`replay`](HybridReplayer::replay), calling `progress(requests)`
    /// with the number of requests replayed since the last call, every
    /// 4,096 requests and at the end (for a progress bar).
    ///
    /// # Errors
    ///
    /// As [`replay`](HybridReplayer::replay).
    ///
    /// # Panics
    ///
    /// As [`replay`](HybridReplayer::replay).
    pub fn replay_with_progress(
        &mut self,
        trace: &Trace,
        progress: impl FnMut(usize),
    ) -> Result<HybridReport, HybridError> {
        // The trace's dense keys are below its distinct count: one check
        // for every request, rather than one a request as `step` makes.
        let distinct = trace.distinct_keys();
        assert!(distinct as u64 <= self.key_limit, "distinct keys × cells a chunk below 2^32 - 1");
        self.totals.cells_all = (distinct * self.row_windows.len()) as u64;
        self.planner_ns.reserve(trace.len());
        let block_tokens = trace.block_tokens();
        let start = Instant::now();
        trace.try_for_each_with_progress(progress, |_, request| {
            self.step_unchecked(request, block_tokens, true).map(drop)
        })?;
        self.elapsed_ns += start.elapsed().as_nanos() as u64;
        Ok(self.report())
    }

    /// Replays one request, (a)–(e), and returns its hit in chunks.
    ///
    /// # Errors
    ///
    /// As [`replay`](HybridReplayer::replay).
    ///
    /// # Panics
    ///
    /// If a key times the cells a chunk reaches 2^32 − 1.
    pub fn step(&mut self, request: Request<'_>, block_tokens: u64) -> Result<usize, HybridError> {
        let key_limit = self.key_limit;
        assert!(request.keys.iter().all(|&key| u64::from(key) < key_limit), "a key × cells a chunk below 2^32 - 1");
        self.step_unchecked(request, block_tokens, false)
    }

    /// L1 (in cells).
    pub fn l1(&self) -> &Tier {
        &self.l1
    }

    /// The adapters' tiers (in cells).
    pub fn l2(&self) -> &[Tier] {
        &self.l2
    }

    /// The report of what was replayed so far.
    pub fn report(&self) -> HybridReport {
        let mut report = self.totals.clone();
        let ratio = |part: u64, whole: u64| if whole == 0 { 0.0 } else { part as f64 / whole as f64 };
        report.hit_ratio = HitRatios {
            block: ratio(report.hit_blocks, report.blocks),
            token: ratio(report.hit_tokens, report.tokens),
            request_mean: if report.requests == 0 { 0.0 } else { self.ratio_sum / report.requests as f64 },
        };
        report.capacity_saving =
            self.l1.capacity().is_none().then(|| 1.0 - ratio(self.l1.len() as u64, report.cells_all));
        report.l1 = TierReport::of_strict(&self.l1, self.l1_hits);
        report.l2 =
            self.l2.iter().zip(&self.served).map(|(tier, &served)| TierReport::of_strict(tier, served)).collect();
        report.planner_ns = Percentiles::of(&self.planner_ns);
        report.replay_seconds = self.elapsed_ns as f64 / 1e9;
        report
    }

    /// One request, its keys known to be below `key_limit`; with `timed`,
    /// the planner's time (lookups, fold and grid plan) goes into
    /// `planner_ns` (reserved by the replay, so the push does not allocate).
    fn step_unchecked(&mut self, request: Request<'_>, block_tokens: u64, timed: bool) -> Result<usize, HybridError> {
        let totals = &mut self.totals;
        totals.requests += 1;
        totals.tokens += request.tokens;
        if request.keys.is_empty() {
            // Nothing to look up, hit or touch; it counts as a ratio of 0.
            return Ok(0);
        }
        let start = timed.then(Instant::now);
        let hit = self.state.plan(request.keys, &self.row_windows, &self.l1, &self.l2)?;
        if let Some(start) = start {
            self.planner_ns.push(start.elapsed().as_nanos() as u64);
        }
        self.apply(request, hit, block_tokens);
        Ok(hit)
    }

    /// The counts, then (d) L1's and (e) each adapter's touches and drops:
    /// the retained cells of the hit chunks (L1: all of them, it served or
    /// loaded them; an adapter: those it served), and every cell of the
    /// computed chunks; a held cell of a hit chunk outside the retain mask
    /// is dropped.
    fn apply(&mut self, request: Request<'_>, hit: usize, block_tokens: u64) {
        let (keys, rows) = (request.keys, self.row_windows.len());
        let n = keys.len();
        let totals = &mut self.totals;
        totals.blocks += n as u64;
        totals.hit_blocks += hit as u64;
        totals.hit_tokens += (hit as u64 * block_tokens).min(request.tokens);
        self.ratio_sum += hit as f64 / n as f64;
        let plan = &self.state.plan;
        self.l1_hits += plan.l1().get(0).map_or(0, Grid::popcount) as u64;
        for (j, served) in self.served.iter_mut().enumerate() {
            *served += plan.l2().get(j).map_or(0, Grid::popcount) as u64;
        }
        // Of the hit chunks, row `row` retains `retain_from[row]..hit`.
        let retain_from = &self.state.retain_from;
        let cell = |i: usize, row: usize| (keys[i] as usize * rows + row) as u32;
        for i in 0..n {
            for (row, &from) in retain_from.iter().enumerate() {
                if i >= from {
                    self.l1.touch(cell(i, row));
                    totals.cells_touched += 1;
                } else if self.l1.remove(cell(i, row)) {
                    totals.cells_dropped_by_retain += 1;
                }
            }
        }
        for (j, tier) in self.l2.iter_mut().enumerate() {
            let loads = plan.l2().get(j);
            for i in 0..hit {
                for (row, &from) in retain_from.iter().enumerate() {
                    if loads.is_some_and(|loads| loads.test(row, i)) {
                        tier.touch(cell(i, row));
                        totals.cells_touched += 1;
                    } else if i < from && tier.remove(cell(i, row)) {
                        totals.cells_dropped_by_retain += 1;
                    }
                }
            }
            for i in hit..n {
                for row in 0..rows {
                    tier.touch(cell(i, row));
                    totals.cells_touched += 1;
                }
            }
        }
    }
}

/// One request's buffers, kept from one request to the next.
#[derive(Debug, Default)]
struct State {
    /// Per row, the first chunk the retain mask keeps: row `r` retains
    /// chunks `retain_from[r]..hit` (`unfold_range(hit, window)`).
    retain_from: Vec<usize>,
    /// Chunk-major, each looked-up cell's first holder (see `plan`).
    holder: Vec<u32>,
    /// L1's grid as manager 0, and each adapter's: filled in place, their
    /// buffers reused (`GridMap::insert_zeros`).
    l1_map: GridMap,
    l2_map: GridMap,
    plan: GridPlan,
}

impl State {
    /// Sizes every buffer for requests of up to `max_keys` keys over
    /// `adapters` adapters, by planning one such request with every cell
    /// in every tier (the plan then has an entry per tier of the largest
    /// shape, and the fold has seen it).
    fn reserve(&mut self, row_windows: &[i64], adapters: usize, max_keys: usize) -> Result<(), HybridError> {
        let rows = row_windows.len();
        self.l1_map.clear();
        self.l2_map.clear();
        self.l1_map.insert_zeros(0, rows, max_keys).expect(ONE_SHAPE).set_all();
        for j in 0..adapters {
            self.l2_map.insert_zeros(j, rows, max_keys).expect(ONE_SHAPE).set_all();
        }
        self.retain_from.reserve(rows);
        self.holder.reserve(rows * max_keys);
        let request = GridRequest::new(row_windows, max_keys, &self.l1_map, &self.l2_map, FetchingPolicy::Prefix);
        plan_grid_into(&request, &mut self.plan)
    }

    /// (a) the tiers' grids, (c) the grid plan of the loads, and with it
    /// (b) the hit: the plan folds the union of the tiers' grids (the
    /// cells found), which is `fold_unfold_grouped` over them; the retain
    /// mask is its unfold, a range a row.
    ///
    /// A cell goes into the grid of the first tier holding it (L1, then
    /// the adapters in order), which is the one the plan's first-wins
    /// split would load it from anyway; and the lookups stop at the first
    /// chunk that a full-attention row finds in no tier, since the hit
    /// ends there and the plan loads nothing past it. Both save lookups
    /// (most of the planner's time) without changing the hit or the loads.
    fn plan(&mut self, keys: &[u32], row_windows: &[i64], l1: &Tier, l2: &[Tier]) -> Result<usize, HybridError> {
        let (n, rows) = (keys.len(), row_windows.len());
        // (a) chunk by chunk, each cell's first holder: 0 none, 1 L1,
        // 2 + j adapter j.
        self.holder.clear();
        // Room for every cell, though the lookups may stop early: a later
        // request that goes further must not grow it.
        self.holder.reserve(rows * n);
        for &key in keys {
            let first_cell = key as usize * rows;
            let mut gap = false;
            for (row, &window) in row_windows.iter().enumerate() {
                let cell = (first_cell + row) as u32;
                let holder = if l1.contains(cell) {
                    1
                } else {
                    l2.iter().position(|tier| tier.contains(cell)).map_or(0, |j| j as u32 + 2)
                };
                gap |= holder == 0 && window <= 0;
                self.holder.push(holder);
            }
            if gap {
                break;
            }
        }
        self.l1_map.clear();
        self.l2_map.clear();
        let fill = |grid: &mut Grid, tier: u32| {
            for (at, _) in self.holder.iter().enumerate().filter(|&(_, &holder)| holder == tier) {
                grid.set(at % rows, at / rows);
            }
        };
        fill(self.l1_map.insert_zeros(0, rows, n).expect(ONE_SHAPE), 1);
        for j in 0..l2.len() {
            fill(self.l2_map.insert_zeros(j, rows, n).expect(ONE_SHAPE), j as u32 + 2);
        }
        let request = GridRequest::new(row_windows, n, &self.l1_map, &self.l2_map, FetchingPolicy::Prefix);
        plan_grid_into(&request, &mut self.plan)?;
        let hit = self.plan.hit();
        self.retain_from.clear();
        self.retain_from.extend(row_windows.iter().map(|&window| unfold_range(hit as i64, window).0));
        Ok(hit)
    }
}

/// Why `insert_zeros` cannot fail here: every grid of a request has the
/// request's shape, and the maps are cleared between requests.
const ONE_SHAPE: &str = "every grid of a request has its shape";
