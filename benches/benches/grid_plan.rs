//! The grid plan (LMCache's newer `plan_load`, `prefetch_policy::plan_grid_into`)
//! against the flat `default` plan over the same number of bits, in the
//! same run (issue #13: within 3× of it).
//!
//! One request: 4,096 chunks × 64 rows (262,144 cells) × 3 tiers: L1
//! manager 0 and L2 adapter 0 each hold a random 60% of the cells, L2
//! adapter 1 holds all of them (so the union is full and the prefix plan
//! needs every cell of a full-attention row: the most work it can do).
//! Every value is `262144x3`: 262,144 cells (keys) × 3 tiers (adapters),
//! one size label for both plans so that `scripts/bench-report` puts them in
//! one table and checks the ratio; throughput counts the bytes of the three
//! inputs.
//!
//! - `grid_plan/prefix`: `plan_grid_into` a reused `GridPlan`, every row
//!   full attention, fetching `prefix` (union, fold, first-wins split per
//!   row restricted to the hit).
//! - `grid_plan/prefix_windows`: the same with the mixed windows
//!   (`[-1 ×4, 128, 128, 1, 1]`, repeated over the rows).
//! - `grid_plan/full`: fetching `full` (union, leading ones, split).
//! - `grid_plan/default_into`: the flat `default` plan of the same bits
//!   (each tier's rows end to end as one 262,144-key lookup, the tiers as
//!   adapters 0, 1, 2) into a reused `LoadPlan`, sequential: the baseline.
//! - `grid_plan/default`: the same, allocating its plan, as `plan/default`
//!   does.
//!
//! Every result is checked before it is timed: the grid plans (all full
//! attention) against the flat plan row by row, the windowed one against
//! its hit and windows.

#![forbid(unsafe_code)]

use std::cell::OnceCell;

use bitmap_core::Bitmap;
use bitplan_benches::data::random_bits;
use bitplan_benches::harness::bench_lazy;
use bitplan_benches::sizes::configure;
use criterion::{Criterion, Throughput};
use prefetch_policy::{
    AdapterDescriptor, DefaultPolicy, FetchingPolicy, Grid, GridMap, GridPlan, GridRequest, Keys, LoadPlan,
    LookupResults, Parallelism, PrefetchPolicy, plan_grid_into,
};

const CHUNKS: usize = 4096;
const ROWS: usize = 64;
const TIERS: usize = 3;

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench_grid_plan(&mut c);
    c.final_summary();
}

/// The three tiers' cells, row by row, as words.
struct Case {
    /// `tiers[t][r]`: tier `t`'s row `r`.
    tiers: Vec<Vec<Vec<u64>>>,
    l1: GridMap,
    l2: GridMap,
    lookup: LookupResults,
    adapters: Vec<AdapterDescriptor>,
    flat_plan: LoadPlan,
}

impl Case {
    fn new() -> Case {
        let words = CHUNKS / 64;
        let tier = |density: f64, seed: u64| -> Vec<Vec<u64>> {
            (0..ROWS).map(|r| random_bits(words, density, seed * 1000 + r as u64)).collect()
        };
        let tiers = vec![tier(0.6, 1), tier(0.6, 2), tier(1.0, 3)];
        let grid = |rows: &[Vec<u64>]| {
            Grid::from_rows(rows.iter().map(|row| Bitmap::from_word_slice(CHUNKS, row).expect("whole words")).collect())
                .expect("rows of one length")
        };
        let l1 = GridMap::from_entries([(0, grid(&tiers[0]))]).expect("one grid");
        let l2 = GridMap::from_entries([(0, grid(&tiers[1])), (1, grid(&tiers[2]))]).expect("one shape");
        let lookup: LookupResults = tiers
            .iter()
            .enumerate()
            .map(|(t, rows)| (t, Bitmap::from_word_slice(ROWS * CHUNKS, &rows.concat()).expect("whole words")))
            .collect();
        let adapters: Vec<AdapterDescriptor> =
            (0..TIERS).map(|t| AdapterDescriptor::new(t, format!("tier{t}"))).collect();
        let flat_plan = DefaultPolicy::new()
            .with_parallelism(Parallelism::Sequential)
            .select_load_plan(Keys::count(ROWS * CHUNKS), &lookup, &adapters)
            .expect("valid lookups");
        Case { tiers, l1, l2, lookup, adapters, flat_plan }
    }

    /// Panics unless an all-full-attention grid plan is the flat plan, row by
    /// row (tier `t` of the grid plan is adapter `t` of the flat one).
    #[track_caller]
    fn check_against_flat(&self, id: &str, plan: &GridPlan) {
        assert_eq!(plan.hit(), CHUNKS, "{id}: hit");
        let entries: Vec<&Grid> = plan.l1().iter().chain(plan.l2().iter()).map(|(_, grid)| grid).collect();
        assert_eq!(entries.len(), TIERS, "{id}: every tier plans something");
        for (t, grid) in entries.iter().enumerate() {
            let flat = self.flat_plan.get(t).expect("every adapter plans something").as_words();
            for (r, row) in grid.row_slices().enumerate() {
                let words = CHUNKS / 64;
                assert_eq!(row, &flat[r * words..(r + 1) * words], "{id}: tier {t}, row {r}");
            }
        }
        assert_eq!(self.tiers.len(), TIERS);
    }
}

fn bench_grid_plan(c: &mut Criterion) {
    let group_name = "grid_plan";
    let mut group = c.benchmark_group(group_name);
    let bytes = (TIERS * ROWS * CHUNKS / 8) as u64;
    configure(&mut group, bytes);
    group.throughput(Throughput::Bytes(bytes));
    // One label for both: the same number of bits, 4,096 × 64 cells or
    // 262,144 keys, × 3 tiers.
    let grid_value = format!("{}x{TIERS}", ROWS * CHUNKS);
    let flat_value = grid_value.clone();
    let case = OnceCell::new();
    let case = || case.get_or_init(Case::new);
    let full_windows = vec![-1i64; ROWS];
    let mixed_windows: Vec<i64> = (0..ROWS).map(|r| [-1, -1, -1, -1, 128, 128, 1, 1][r % 8]).collect();

    for (function, windows, fetching) in [
        ("prefix", &full_windows, FetchingPolicy::Prefix),
        ("prefix_windows", &mixed_windows, FetchingPolicy::Prefix),
        ("full", &full_windows, FetchingPolicy::Full),
    ] {
        let id = format!("{group_name}/{function}/{grid_value}");
        bench_lazy(
            &mut group,
            function,
            &grid_value,
            || {
                let case = case();
                let mut plan = GridPlan::new();
                let request = GridRequest::new(windows, CHUNKS, &case.l1, &case.l2, fetching);
                plan_grid_into(&request, &mut plan).expect("a valid request");
                if function == "prefix_windows" {
                    // The union is full: the hit is every chunk, and each
                    // row plans its window's tail of it.
                    assert_eq!(plan.hit(), CHUNKS, "{id}: hit");
                    let expected: usize = windows.iter().map(|&w| if w <= 0 { CHUNKS } else { w as usize }).sum();
                    assert_eq!(plan.planned_count(), expected, "{id}: planned cells");
                } else {
                    case.check_against_flat(&id, &plan);
                }
                (case, plan)
            },
            |(case, plan)| {
                let request = GridRequest::new(windows, CHUNKS, &case.l1, &case.l2, fetching);
                plan_grid_into(&request, plan).expect("a valid request");
            },
        );
    }

    let sequential = DefaultPolicy::new().with_parallelism(Parallelism::Sequential);
    bench_lazy(
        &mut group,
        "default_into",
        &flat_value,
        || {
            let case = case();
            let mut plan = LoadPlan::with_capacity(ROWS * CHUNKS, TIERS);
            sequential
                .select_load_plan_into(Keys::count(ROWS * CHUNKS), &case.lookup, &case.adapters, &mut plan)
                .unwrap();
            assert_eq!(plan, case.flat_plan, "grid_plan/default_into/{flat_value}");
            (case, plan)
        },
        |(case, plan)| {
            sequential.select_load_plan_into(Keys::count(ROWS * CHUNKS), &case.lookup, &case.adapters, plan).unwrap();
        },
    );
    bench_lazy(&mut group, "default", &flat_value, case, |case| {
        sequential.select_load_plan(Keys::count(ROWS * CHUNKS), &case.lookup, &case.adapters).unwrap()
    });
    group.finish();
}
