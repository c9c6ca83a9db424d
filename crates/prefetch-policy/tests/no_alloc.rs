//! Proves that planning into reused buffers does no heap allocation, with a
//! counting global allocator.
//!
//! The allocator counts every thread of the process, so this file is its own
//! test binary without libtest's harness (`harness = false` in Cargo.toml):
//! libtest's main thread prints and bookkeeps while a test runs, and those
//! allocations would be counted. Here `main` runs the checks one after the
//! other on the only thread.

use std::alloc::System;

use bitmap_core::Bitmap;
use prefetch_policy::reference::naive_first_wins_plan;
use prefetch_policy::{
    AdapterDescriptor, BalancedPolicy, DefaultPolicy, Keys, LoadPlan, LookupResults, MAX_DENSE_PARTICIPANTS,
    PARALLEL_THRESHOLD_WORDS, Parallelism, PlanContract, PrefetchDecision, PrefetchPolicy, RetainPolicy,
    plan_first_wins_into,
};
use prefetch_policy::{
    FetchingPolicy, Grid, GridMap, GridPlan, GridPolicy, GridRequest, RetainGridPolicy, plan_grid_into,
};
use prefetch_policy::{
    FoldWorkspace, fold_grouped_into, fold_into, fold_unfold_grouped_into, fold_unfold_ranked, fold_unfold_ranked_into,
    unfold_grouped_into, unfold_into,
};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Runs `work` `times` times and returns the number of allocations,
/// reallocations and deallocations it made.
fn heap_operations(times: usize, mut work: impl FnMut()) -> usize {
    let region = Region::new(GLOBAL);
    for _ in 0..times {
        work();
    }
    let change = region.change();
    change.allocations + change.reallocations + change.deallocations
}

fn adapters(indices: &[usize]) -> Vec<AdapterDescriptor> {
    indices.iter().map(|&index| AdapterDescriptor::new(index, format!("adapter-{index}"))).collect()
}

/// Overlapping lookups: adapter `a` holds every key `k` with `(k + a) % (a + 2) != 0`.
fn lookup(num_keys: usize, holders: &[usize]) -> LookupResults {
    holders.iter().map(|&a| (a, (0..num_keys).map(|k| (k + a) % (a + 2) != 0).collect::<Bitmap>())).collect()
}

/// The first kernel call in the process picks the kernel (reading the
/// environment allocates): make it before counting anything. Also checks
/// that the counter sees allocations at all.
fn counter_sees_the_allocating_form() {
    let three = adapters(&[0, 1, 2]);
    let lookup_3 = lookup(1024, &[0, 1, 2]);
    let policy = DefaultPolicy::new();
    let warm_up = policy.select_load_plan(Keys::count(1024), &lookup_3, &three).unwrap();
    let allocating = heap_operations(1, || {
        let plan = policy.select_load_plan(Keys::count(1024), &lookup_3, &three).unwrap();
        assert_eq!(plan, warm_up);
    });
    assert!(allocating > 0, "the counting allocator saw nothing");
}

/// 1,024 keys × 3 adapters into a pre-sized plan: nothing, from the first call.
fn presized_plan_1024_keys_3_adapters() {
    let three = adapters(&[0, 1, 2]);
    let lookup_3 = lookup(1024, &[0, 1, 2]);
    let mut plan = LoadPlan::with_capacity(1024, 3);
    let ops = heap_operations(1000, || {
        DefaultPolicy::new().select_load_plan_into(Keys::count(1024), &lookup_3, &three, &mut plan).unwrap();
    });
    assert_eq!(ops, 0);
    assert_eq!(plan, naive_first_wins_plan(1024, &lookup_3, &three).unwrap());

    // The same through a trait object, with `retain`.
    let boxed: Box<dyn PrefetchPolicy> = Box::new(RetainPolicy::new());
    let ops = heap_operations(1000, || {
        boxed.select_load_plan_into(Keys::count(1024), &lookup_3, &three, &mut plan).unwrap();
    });
    assert_eq!(ops, 0, "through dyn PrefetchPolicy");
}

/// `balanced`, 1,024 keys × 3 weighted adapters, into a pre-sized plan:
/// nothing, from the first call; and with the most participants its
/// word-parallel engine takes, into a warmed plan.
fn balanced_1024_keys() {
    let three: Vec<AdapterDescriptor> = [(0, 2.0), (1, 1.0), (2, 0.5)]
        .iter()
        .map(|&(i, w)| adapters(&[i])[0].clone().with_weight(w).unwrap())
        .collect();
    let lookup_3 = lookup(1024, &[0, 1, 2]);
    let policy = BalancedPolicy::new();
    let mut plan = LoadPlan::with_capacity(1024, 3);
    let ops = heap_operations(1000, || {
        policy.select_load_plan_into(Keys::count(1024), &lookup_3, &three, &mut plan).unwrap();
    });
    assert_eq!(ops, 0);
    assert_eq!(plan.validate_with(&lookup_3, &three, PlanContract::Complete), Ok(()));
    assert_eq!(plan, policy.select_load_plan(Keys::count(1024), &lookup_3, &three).unwrap());

    let indices: Vec<usize> = (0..MAX_DENSE_PARTICIPANTS).collect();
    let many = adapters(&indices);
    let lookup_many = lookup(1024, &indices);
    let mut plan = LoadPlan::new(0);
    policy.select_load_plan_into(Keys::count(1024), &lookup_many, &many, &mut plan).unwrap();
    let expected = plan.clone();
    let ops = heap_operations(100, || {
        policy.select_load_plan_into(Keys::count(1024), &lookup_many, &many, &mut plan).unwrap();
    });
    assert_eq!(ops, 0, "{MAX_DENSE_PARTICIPANTS} participants");
    assert_eq!(plan, expected);
}

/// 9 adapters listed out of order, two without a lookup, one unlisted
/// lookup, into a plan warmed by one call.
fn warmed_plan_1024_keys_9_adapters() {
    let nine = adapters(&[8, 3, 0, 7, 1, 5, 2, 6, 4]);
    let lookup_9 = lookup(1024, &[0, 1, 2, 3, 5, 6, 8, 11]);
    let policy = DefaultPolicy::new();
    let mut plan = LoadPlan::new(0);
    policy.select_load_plan_into(Keys::count(1024), &lookup_9, &nine, &mut plan).unwrap();
    let expected = plan.clone();
    assert!(expected.len() > 3);
    let ops = heap_operations(1000, || {
        policy.select_load_plan_into(Keys::count(1024), &lookup_9, &nine, &mut plan).unwrap();
    });
    assert_eq!(ops, 0);
    assert_eq!(plan, expected);
}

/// Requests of different shapes within the plan's capacity.
fn mixed_shapes_within_capacity() {
    let shapes = [(4096, &[0, 1, 2, 3, 4][..]), (1024, &[0, 1, 2]), (100, &[1, 3]), (0, &[0]), (4000, &[4, 2])];
    let inputs: Vec<(usize, LookupResults, Vec<AdapterDescriptor>)> =
        shapes.iter().map(|&(n, holders)| (n, lookup(n, holders), adapters(holders))).collect();
    let mut plan = LoadPlan::with_capacity(4096, 5);
    let ops = heap_operations(100, || {
        for (n, lookup, adapters) in &inputs {
            DefaultPolicy::new().select_load_plan_into(Keys::count(*n), lookup, adapters, &mut plan).unwrap();
        }
    });
    assert_eq!(ops, 0);
}

/// The sequential path stays allocation-free at any size, here the
/// parallel threshold.
fn sequential_at_the_parallel_threshold() {
    let big = PARALLEL_THRESHOLD_WORDS * 64;
    let three = adapters(&[0, 1, 2]);
    let lookup_big = lookup(big, &[0, 1, 2]);
    let mut plan = LoadPlan::with_capacity(big, 3);
    let ops = heap_operations(3, || {
        plan_first_wins_into(big, &lookup_big, &three, Parallelism::Sequential, &mut plan).unwrap();
    });
    assert_eq!(ops, 0);
}

/// A whole controller decision (plan, prefix trim, unlock masks,
/// retentions), warmed once; and the inputs refilled in place.
fn controller_decision_and_lookup_refill() {
    let three = adapters(&[0, 1, 2]);
    let lookup_3 = lookup(1024, &[0, 1, 2]);
    let mut decision = PrefetchDecision::with_capacity(1024, 3);
    decision.decide(&RetainPolicy::new(), Keys::count(1024), &lookup_3, &three).unwrap();
    let ops = heap_operations(1000, || {
        decision.decide(&RetainPolicy::new(), Keys::count(1024), &lookup_3, &three).unwrap();
    });
    assert_eq!(ops, 0, "PrefetchDecision::decide");

    let mut reused = LookupResults::with_capacity(1024, 3);
    let ops = heap_operations(1000, || {
        reused.clear();
        for adapter in [2, 0, 1] {
            reused.insert_clear(adapter, 1024).set_range(adapter * 100..);
        }
    });
    assert_eq!(ops, 0, "LookupResults::clear + insert_clear");

    let mut retentions = Vec::with_capacity(1024);
    let ops = heap_operations(1000, || {
        RetainPolicy::new().select_l1_retentions_into(Keys::count(1024), &mut retentions);
    });
    assert_eq!(ops, 0, "select_l1_retentions_into");
}

fn main() {
    let checks: [(&str, fn()); 11] = [
        ("counter_sees_the_allocating_form", counter_sees_the_allocating_form),
        ("presized_plan_1024_keys_3_adapters", presized_plan_1024_keys_3_adapters),
        ("balanced_1024_keys", balanced_1024_keys),
        ("warmed_plan_1024_keys_9_adapters", warmed_plan_1024_keys_9_adapters),
        ("mixed_shapes_within_capacity", mixed_shapes_within_capacity),
        ("sequential_at_the_parallel_threshold", sequential_at_the_parallel_threshold),
        ("controller_decision_and_lookup_refill", controller_decision_and_lookup_refill),
        ("no_rayon_below_the_threshold", no_rayon_below_the_threshold),
        ("hybrid_fold_unfold_into_forms", hybrid_fold_unfold_into_forms),
        ("grid_plan_into_a_warmed_plan", grid_plan_into_a_warmed_plan),
        ("a_fold_warmed_without_gaps", a_fold_warmed_without_gaps),
    ];
    // A failed check panics, which fails the binary with the message.
    for (name, check) in checks {
        check();
        println!("test {name} ... ok");
    }
    println!("\nno_alloc: {} passed, 0 failed", checks.len());
}

/// `Auto` below the threshold never touches rayon: starting rayon's global
/// pool (threads, queues) would allocate, so a first `Auto` plan in a
/// process that has not used rayon allocates nothing.
fn no_rayon_below_the_threshold() {
    let three = adapters(&[0, 1, 2]);
    let n = (PARALLEL_THRESHOLD_WORDS - 1) * 64;
    let lookup_3 = lookup(n, &[0, 1, 2]);
    let mut plan = LoadPlan::with_capacity(n, 3);
    let ops = heap_operations(1, || {
        plan_first_wins_into(n, &lookup_3, &three, Parallelism::Auto, &mut plan).unwrap();
    });
    assert_eq!(ops, 0);
}

/// The hybrid fold's `_into` forms, warmed once on the largest shape: then
/// nothing, on that shape and on smaller ones, flat and grouped.
fn hybrid_fold_unfold_into_forms() {
    let (chunks, ranks) = (4096, 8);
    let windows = [-1, -1, -1, -1, 128, 128, 1, 1];
    let width = windows.len() * ranks;
    let mut found = Bitmap::with_prefix(chunks * width, chunks * width);
    found.clear(4000 * width + 5 * ranks + 3); // a window-128 group misses chunk 4000
    let row_windows: Vec<i64> = (0..width).map(|k| windows[k / ranks]).collect();
    let rows: Vec<Bitmap> = (0..width).map(|k| (0..chunks).map(|j| found.test(j * width + k)).collect()).collect();
    let smaller = Bitmap::with_prefix(300 * 5 * 4, 1000);

    let mut ws = FoldWorkspace::new();
    let (mut servable, mut mask, mut mask_rows) = (Bitmap::new(0), Bitmap::new(0), Vec::new());
    let mut run = || {
        let hit = fold_unfold_ranked_into(&found, chunks, ranks, &windows, &mut ws, &mut mask).unwrap();
        assert_eq!(hit, 4000);
        fold_into(&found, chunks, ranks, &windows, &mut ws, &mut servable).unwrap();
        unfold_into(hit, chunks, ranks, &windows, &mut mask).unwrap();
        let grouped_hit = fold_unfold_grouped_into(&rows, &row_windows, &mut ws, &mut mask_rows).unwrap();
        assert_eq!(grouped_hit, hit);
        fold_grouped_into(&rows, &row_windows, &mut ws, &mut servable).unwrap();
        unfold_grouped_into(hit, chunks, &row_windows, &mut mask_rows).unwrap();
        fold_unfold_ranked_into(&smaller, 300, 4, &[-1, -1, 8, 32, 1], &mut ws, &mut mask).unwrap();
    };
    run(); // warm-up: every buffer grows to its largest shape
    assert_eq!(heap_operations(100, &mut run), 0);
    let expected = fold_unfold_ranked(&smaller, 300, 4, &[-1, -1, 8, 32, 1]).unwrap();
    assert_eq!(
        (expected.0, &expected.1),
        (fold_unfold_ranked_into(&smaller, 300, 4, &[-1, -1, 8, 32, 1], &mut ws, &mut mask).unwrap(), &mask)
    );
}

/// The grid plan, 300 chunks × 20 rows (mixed windows) × 3 tiers, prefix
/// and full, into a plan warmed by one call of each; and through
/// `dyn GridPolicy`.
fn grid_plan_into_a_warmed_plan() {
    let (rows, cols) = (20, 300);
    let windows: Vec<i64> = (0..rows).map(|r| [-1, 8, 32, 1][r % 4]).collect();
    let full_windows = vec![-1; rows];
    let grid = |seed: usize| Grid::from_fn(rows, cols, |r, c| !(r * 7 + c * 13 + seed).is_multiple_of(seed + 3));
    let l1 = GridMap::from_entries([(0, grid(0))]).unwrap();
    let l2 = GridMap::from_entries([(0, grid(1)), (2, grid(2))]).unwrap();
    let prefix = GridRequest::new(&windows, cols, &l1, &l2, FetchingPolicy::Prefix);
    let full = GridRequest::new(&full_windows, cols, &l1, &l2, FetchingPolicy::Full);
    let mut plan = GridPlan::new();
    plan_grid_into(&prefix, &mut plan).unwrap();
    plan_grid_into(&full, &mut plan).unwrap();
    let ops = heap_operations(100, || {
        plan_grid_into(&prefix, &mut plan).unwrap();
        plan_grid_into(&full, &mut plan).unwrap();
    });
    assert_eq!(ops, 0);
    assert!(plan.planned_count() > 0);
    let policy: Box<dyn GridPolicy> = Box::new(RetainGridPolicy::new());
    let ops = heap_operations(100, || policy.plan_load_into(&prefix, &mut plan).unwrap());
    assert_eq!(ops, 0, "through dyn GridPolicy");
}

/// The fold and the grid plan warmed on rows without gaps, then given a
/// sliding-window row whose gaps send the run test over the whole row (the
/// hybrid replay's case: its warm-up cannot know the rows to come):
/// nothing, the workspace sized for the shape rather than for the rows.
fn a_fold_warmed_without_gaps() {
    let (rows, cols) = (2, 300);
    let windows = [-1, 8];
    let full = Grid::from_fn(rows, cols, |_, _| true);
    let gaps = Grid::from_fn(rows, cols, |r, c| r == 0 || c % 9 != 0);
    let (mut ws, mut retain) = (FoldWorkspace::new(), Grid::empty());
    full.fold_unfold_grouped_into(&windows, &mut ws, &mut retain).unwrap();
    let ops =
        heap_operations(10, || assert_eq!(gaps.fold_unfold_grouped_into(&windows, &mut ws, &mut retain), Ok(297)));
    assert_eq!(ops, 0, "fold_unfold_grouped_into");

    let empty = GridMap::new();
    let (held, gappy) = (GridMap::from_entries([(0, full)]).unwrap(), GridMap::from_entries([(0, gaps)]).unwrap());
    let mut plan = GridPlan::new();
    plan_grid_into(&GridRequest::new(&windows, cols, &held, &empty, FetchingPolicy::Prefix), &mut plan).unwrap();
    let request = GridRequest::new(&windows, cols, &gappy, &empty, FetchingPolicy::Prefix);
    let ops = heap_operations(10, || plan_grid_into(&request, &mut plan).unwrap());
    // The window row's last gap is chunk 297, after 8 held chunks.
    assert_eq!((ops, plan.hit()), (0, 297), "plan_grid_into");
}
