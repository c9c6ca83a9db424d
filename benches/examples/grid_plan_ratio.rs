//! The grid plan's time over the flat `default` plan's, measured
//! interleaved: each round times a batch of every variant one after the
//! other, and the ratio is taken per round, so a machine whose load changes
//! during the run (other builds on a shared machine) moves both sides of
//! each ratio alike. Prints the median per-call time of each variant and
//! the median ratio to the flat plan, over the rounds.
//!
//! The inputs are `benches/grid_plan.rs`'s: 4,096 chunks × 64 rows × 3
//! tiers (L1 0 and L2 0 a random 60% each, L2 1 everything), and the same
//! bits as three 262,144-key lookups for the flat plan.
//!
//! ```text
//! $ cargo run --release -p bitplan-benches --example grid_plan_ratio [ROUNDS]
//! ```

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Instant;

use bitmap_core::Bitmap;
use bitplan_benches::data::random_bits;
use prefetch_policy::{
    AdapterDescriptor, DefaultPolicy, FetchingPolicy, Grid, GridMap, GridPlan, GridRequest, Keys, LoadPlan,
    LookupResults, Parallelism, PrefetchPolicy, plan_grid_into,
};

const CHUNKS: usize = 4096;
const ROWS: usize = 64;
const TIERS: usize = 3;
/// Calls per variant per round: about a millisecond each.
const BATCH: usize = 100;

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|arg| arg.parse().ok()).unwrap_or(200);
    let words = CHUNKS / 64;
    let tiers: Vec<Vec<Vec<u64>>> = [(0.6, 1), (0.6, 2), (1.0, 3)]
        .iter()
        .map(|&(density, seed)| (0..ROWS).map(|r| random_bits(words, density, seed * 1000 + r as u64)).collect())
        .collect();
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
    let adapters: Vec<AdapterDescriptor> = (0..TIERS).map(|t| AdapterDescriptor::new(t, format!("tier{t}"))).collect();
    let full_windows = vec![-1i64; ROWS];
    let mixed_windows: Vec<i64> = (0..ROWS).map(|r| [-1, -1, -1, -1, 128, 128, 1, 1][r % 8]).collect();
    let flat = DefaultPolicy::new().with_parallelism(Parallelism::Sequential);

    let mut flat_plan = LoadPlan::with_capacity(ROWS * CHUNKS, TIERS);
    let mut grid_plans = [GridPlan::new(), GridPlan::new(), GridPlan::new()];
    let requests = [
        ("prefix", GridRequest::new(&full_windows, CHUNKS, &l1, &l2, FetchingPolicy::Prefix)),
        ("prefix_windows", GridRequest::new(&mixed_windows, CHUNKS, &l1, &l2, FetchingPolicy::Prefix)),
        ("full", GridRequest::new(&full_windows, CHUNKS, &l1, &l2, FetchingPolicy::Full)),
    ];
    let mut flat_times = Vec::with_capacity(rounds);
    let mut grid_times: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); requests.len()];
    let mut ratios: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); requests.len()];
    for round in 0..=rounds {
        let start = Instant::now();
        for _ in 0..BATCH {
            flat.select_load_plan_into(Keys::count(ROWS * CHUNKS), &lookup, &adapters, &mut flat_plan).unwrap();
            black_box(&flat_plan);
        }
        let flat_ns = start.elapsed().as_nanos() as f64 / BATCH as f64;
        let mut grid_ns = [0.0; 3];
        for ((_, request), (plan, ns)) in requests.iter().zip(grid_plans.iter_mut().zip(&mut grid_ns)) {
            let start = Instant::now();
            for _ in 0..BATCH {
                plan_grid_into(request, plan).unwrap();
                black_box(&*plan);
            }
            *ns = start.elapsed().as_nanos() as f64 / BATCH as f64;
        }
        if round == 0 {
            continue; // warm-up
        }
        flat_times.push(flat_ns);
        for (i, ns) in grid_ns.iter().enumerate() {
            grid_times[i].push(*ns);
            ratios[i].push(ns / flat_ns);
        }
    }
    assert_eq!(grid_plans[0].hit(), CHUNKS);
    assert_eq!(grid_plans[0].planned_count(), flat_plan.planned_count());
    println!("{rounds} rounds of {BATCH} calls each, medians:");
    println!("  flat default_into  262144x3    {:>9.2} µs", median(&mut flat_times) / 1000.0);
    for (i, (name, _)) in requests.iter().enumerate() {
        println!(
            "  grid {name:<14} 4096x64x3   {:>9.2} µs   {:>5.2}x the flat plan",
            median(&mut grid_times[i]) / 1000.0,
            median(&mut ratios[i])
        );
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
