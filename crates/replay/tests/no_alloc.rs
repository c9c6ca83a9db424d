//! Proves that the replay's per-request work allocates nothing once its
//! buffers have seen the longest request, with a counting global allocator.
//!
//! As in prefetch-policy's `tests/no_alloc.rs`, the allocator counts every
//! thread of the process, so this file runs without libtest's harness
//! (`harness = false`): `main` runs the checks one after the other on the
//! only thread.

use std::alloc::System;

use kv_replay::hybrid::{CellModel, HybridReplayer};
use kv_replay::synthetic::{SyntheticOptions, generate};
use kv_replay::{Eviction, Planner, ReplayConfig, Replayer, Tier, Trigger};
use prefetch_policy::{AdapterDescriptor, DefaultPolicy, PrefetchPolicy, create_prefetch_policy};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn heap_operations(work: impl FnOnce()) -> usize {
    let region = Region::new(GLOBAL);
    work();
    let change = region.change();
    change.allocations + change.reallocations + change.deallocations
}

/// The planner over 24-key requests and 3 adapters: after the first
/// request, nothing, for every registered built-in policy.
fn planner_after_the_first_request() {
    let trace = generate(&SyntheticOptions::default().with_size(2_000, 24));
    let l1 = Tier::new(Some(5_000), Eviction::Lru);
    let mut l2: Vec<Tier> = (0..3).map(|j| Tier::new(Some(10_000 * (j + 1)), Eviction::Lru)).collect();
    for (i, request) in trace.requests().enumerate() {
        for &key in request.keys {
            l2[i % 3].touch(key);
        }
    }
    let adapters: Vec<_> = (0..3).map(|j| AdapterDescriptor::new(j, format!("l2-{j}"))).collect();
    for name in ["default", "retain", "balanced"] {
        let policy: Box<dyn PrefetchPolicy> = create_prefetch_policy(name).unwrap();
        let mut planner = Planner::new();
        let longest = trace.requests().max_by_key(|request| request.keys.len()).unwrap();
        planner.plan(longest.keys, &l1, &l2, policy.as_ref(), &adapters).unwrap();
        let ops = heap_operations(|| {
            for request in trace.requests() {
                planner.plan(request.keys, &l1, &l2, policy.as_ref(), &adapters).unwrap();
            }
        });
        assert_eq!(ops, 0, "{name}");
    }
    // Pre-sized: nothing from the first request on.
    let mut planner = Planner::with_capacity(trace.max_keys(), 3);
    let ops = heap_operations(|| {
        for request in trace.requests() {
            planner.plan(request.keys, &l1, &l2, &DefaultPolicy::new(), &adapters).unwrap();
        }
    });
    assert_eq!(ops, 0, "pre-sized");
}

/// A whole replay step (plan, counts, touches, evictions) with tiers
/// reserved for the trace: nothing per request.
fn replay_steps_with_reserved_tiers() {
    let trace = generate(&SyntheticOptions::default().with_size(3_000, 24));
    let config = ReplayConfig::new(Some(2_000), &[Some(10_000), None]);
    let mut replayer = Replayer::with_reserve(&config, trace.distinct_keys(), trace.max_keys()).unwrap();
    let ops = heap_operations(|| {
        for request in trace.requests() {
            replayer.step(request, trace.block_tokens()).unwrap();
        }
    });
    assert_eq!(ops, 0);
    assert!(replayer.l1().evictions() > 0, "the test must evict to mean anything");
}

/// LMCache's policies (through `tier-state`'s trait), at strict capacity
/// and under the trigger on L1 and a bounded adapter: once a pass over the
/// trace has sized the reused buffers (victims, batches, ARC's release
/// log), a second pass allocates nothing. Not LFU: its list keeps the tail
/// of each touch count's run in a vector indexed by count, which grows
/// (rarely, by the largest count) as a second pass raises the counts.
fn policy_tiers_after_a_first_pass() {
    let trace = generate(&SyntheticOptions::default().with_size(3_000, 24).with_seed(5));
    for eviction in Eviction::ALL.into_iter().filter(|&eviction| eviction != Eviction::Lfu) {
        for trigger in [None, Some(Trigger::LMCACHE_DEFAULT)] {
            let mut config = ReplayConfig::new(Some(2_000), &[Some(10_000), None]);
            config.eviction = eviction;
            config.l1_trigger = trigger;
            config.adapters[0].trigger = trigger;
            let mut replayer = Replayer::with_reserve(&config, trace.distinct_keys(), trace.max_keys()).unwrap();
            for request in trace.requests() {
                replayer.step(request, trace.block_tokens()).unwrap();
            }
            let ops = heap_operations(|| {
                for request in trace.requests() {
                    replayer.step(request, trace.block_tokens()).unwrap();
                }
            });
            assert_eq!(ops, 0, "{eviction:?} {trigger:?}");
            let counts = replayer.l1().counts();
            let evicted = counts.evictions + counts.dropped_full;
            assert!(evicted > 0, "{eviction:?} {trigger:?}: L1 must fill to mean anything");
        }
    }
}

/// The hybrid replay's steps (the tiers' grids, fold, grid plan, counts,
/// touches, drops and evictions) under full attention, a window of 4 and
/// Mamba on 2 ranks, L1 and 2 adapters all bounded: nothing per request,
/// pre-sized, or once the longest request has been replayed.
fn hybrid_steps_with_bounded_tiers() {
    let trace = generate(&SyntheticOptions::default().with_size(3_000, 24).with_seed(7));
    let model = CellModel { windows: vec![-1, 4, 1], ranks: 2 };
    let config = model.in_cells(&ReplayConfig::new(Some(2_000), &[Some(5_000), Some(12_000)]));
    let (distinct, longest) = (trace.distinct_keys(), trace.max_keys());
    let mut replayer = HybridReplayer::with_reserve(&config, &model, distinct, longest).unwrap();
    let ops = heap_operations(|| {
        for request in trace.requests() {
            replayer.step(request, trace.block_tokens()).unwrap();
        }
    });
    assert_eq!(ops, 0, "pre-sized");
    let report = replayer.report();
    let evictions = [report.l1.evictions, report.l2[0].evictions, report.l2[1].evictions];
    assert!(evictions.iter().all(|&evicted| evicted > 0), "every tier must evict to mean anything: {evictions:?}");
    assert!(report.cells_dropped_by_retain > 0 && report.hit_blocks > 0, "{report:?}");

    // Tiers reserved, buffers not: the first request (the longest) sizes
    // them, and nothing follows.
    let mut replayer = HybridReplayer::with_reserve(&config, &model, distinct, 0).unwrap();
    let first = trace.requests().max_by_key(|request| request.keys.len()).unwrap();
    replayer.step(first, trace.block_tokens()).unwrap();
    let ops = heap_operations(|| {
        for request in trace.requests() {
            replayer.step(request, trace.block_tokens()).unwrap();
        }
    });
    assert_eq!(ops, 0, "after the longest request");
}

/// A full tier under churn (every touch a new key, so every touch evicts),
/// reserved for the keys it will see: evicting reuses the node, nothing
/// grows.
fn a_full_tier_under_churn() {
    let mut tier = Tier::with_reserve(Some(1_000), Eviction::Lru, 200_000);
    let ops = heap_operations(|| {
        for key in 0..200_000 {
            tier.touch(key);
        }
    });
    assert_eq!((ops, tier.evictions()), (0, 199_000));
}

fn main() {
    a_full_tier_under_churn();
    planner_after_the_first_request();
    replay_steps_with_reserved_tiers();
    hybrid_steps_with_bounded_tiers();
    policy_tiers_after_a_first_pass();
    println!("no_alloc: 5 checks passed");
}
