//! Small traces with answers computed by hand: each test pins one rule of
//! the model (docs/REPLAY.md).

use kv_replay::{AdapterConfig, Eviction, ReplayConfig, Replayer, Report, Trace};

fn trace(requests: &[&[u64]]) -> Trace {
    let mut trace = Trace::new(512);
    for keys in requests {
        trace.push(keys, keys.len() as u64 * 512);
    }
    trace
}

fn replay(config: &ReplayConfig, trace: &Trace) -> Report {
    Replayer::new(config).unwrap().replay(trace).unwrap()
}

#[test]
fn loads_past_a_gap_are_trimmed_and_not_counted() {
    // Request 1 fills the adapter with 1, 2, 3 and L1 (capacity 0) with
    // nothing. Request 2 = [1, 9, 3]: 1 and 3 are in the adapter, 9 is
    // nowhere, so h = 1: the load of 3 is trimmed. The adapter then touches
    // 1 (served) and 9, 3 (computed).
    let report = replay(&ReplayConfig::new(Some(0), &[Some(3)]), &trace(&[&[1, 2, 3], &[1, 9, 3]]));
    assert_eq!((report.hit_blocks, report.l2[0].hit_blocks, report.l1.hit_blocks), (1, 1, 0));
    // Adapter of 3: holds 1, 2, 3; touches 1 (moves), 9 (evicts 2), 3.
    assert_eq!((report.l2[0].evictions, report.l2[0].entries), (1, 3));
    assert_eq!(report.l1.evictions, 6);
    assert_eq!(report.computed_blocks, 3 + 2);
}

#[test]
fn a_key_in_l1_is_not_loaded_from_an_adapter() {
    // Both tiers hold everything after request 1: request 2 is all L1.
    let report = replay(&ReplayConfig::new(None, &[None]), &trace(&[&[1, 2], &[1, 2]]));
    assert_eq!((report.l1.hit_blocks, report.l2[0].hit_blocks), (2, 0));
}

#[test]
fn the_lowest_adapter_that_holds_a_key_serves_it() {
    // Request 1 writes 1..=4 through to both adapters; adapter 0 holds 2
    // keys (3, 4 at the end), adapter 1 all four. L1 holds nothing.
    let report = replay(&ReplayConfig::new(Some(0), &[Some(2), None]), &trace(&[&[1, 2, 3, 4], &[1, 2, 3, 4]]));
    assert_eq!((report.l2[0].hit_blocks, report.l2[1].hit_blocks), (2, 2));
}

#[test]
fn lru_and_fifo_differ_on_a_reused_key() {
    // L1 of 2: [1, 2], [1], [3], [1]. LRU: touching 1 again makes 2 the
    // oldest, 3 evicts 2, and the last 1 hits. FIFO: 3 evicts 1 (inserted
    // first), and the last 1 misses.
    let requests = trace(&[&[1, 2], &[1], &[3], &[1]]);
    let mut config = ReplayConfig::new(Some(2), &[]);
    assert_eq!(replay(&config, &requests).hit_blocks, 2);
    config.eviction = Eviction::Fifo;
    assert_eq!(replay(&config, &requests).hit_blocks, 1);
}

#[test]
fn a_request_longer_than_l1_evicts_its_own_prefix() {
    // L1 of 2, request [1, 2, 3] twice: after the first, L1 = {2, 3}; the
    // second misses 1 at once (h = 0), though 2 and 3 are in L1.
    let report = replay(&ReplayConfig::new(Some(2), &[]), &trace(&[&[1, 2, 3], &[1, 2, 3]]));
    assert_eq!(report.hit_blocks, 0);
}

#[test]
fn the_three_hit_ratios() {
    // Request 1: [1, 2], 1000 tokens (the second block is partial); request
    // 2: [1, 2, 3], 1100 tokens, hits 2 blocks = min(1024, 1100) tokens;
    // request 3: [1], 100 tokens, hits 1 block = min(512, 100) tokens.
    let mut requests = Trace::new(512);
    requests.push(&[1, 2], 1000);
    requests.push(&[1, 2, 3], 1100);
    requests.push(&[1], 100);
    let report = replay(&ReplayConfig::new(None, &[]), &requests);
    assert_eq!((report.hit_blocks, report.hit_tokens), (3, 1024 + 100));
    assert_eq!(report.hit_ratio.block, 3.0 / 6.0);
    assert_eq!(report.hit_ratio.token, 1124.0 / 2200.0);
    assert_eq!(report.hit_ratio.request_mean, (0.0 + 2.0 / 3.0 + 1.0) / 3.0);
}

#[test]
fn bytes_and_load_seconds() {
    // 16-token blocks of 1,000 bytes a token: 16,000 bytes a block; the
    // adapter serves 2 blocks at 8,000 bytes/s: 4 seconds.
    let mut requests = Trace::new(16);
    requests.push(&[1, 2], 32);
    requests.push(&[1, 2], 32);
    let mut config = ReplayConfig::new(Some(0), &[None]);
    config.kv_bytes_per_token = Some(1000);
    config.adapters[0].bandwidth = Some(8000.0);
    let report = replay(&config, &requests);
    assert_eq!((report.l2[0].hit_bytes, report.l2[0].load_seconds), (Some(32_000), Some(4.0)));
    assert_eq!(report.l1.hit_bytes, Some(0));
}

#[test]
fn balanced_shares_the_hits_by_weight() {
    // Both adapters hold 30 keys; balanced with weights 1 and 2 splits
    // them 10 and 20 (the first-wins `default` would give all to 0).
    let keys: Vec<u64> = (0..30).collect();
    let requests = trace(&[&keys, &keys]);
    let mut config = ReplayConfig::new(Some(0), &[None, None]);
    config.policy = "balanced".to_owned();
    config.adapters[1] = AdapterConfig { weight: 2.0, ..AdapterConfig::new(None) };
    let report = replay(&config, &requests);
    assert_eq!(report.hit_blocks, 30);
    assert_eq!((report.l2[0].hit_blocks, report.l2[1].hit_blocks), (10, 20));
    config.policy = "default".to_owned();
    let report = replay(&config, &requests);
    assert_eq!((report.l2[0].hit_blocks, report.l2[1].hit_blocks), (30, 0));
}

#[test]
fn an_unknown_policy_is_refused() {
    let mut config = ReplayConfig::new(None, &[]);
    config.policy = "nope".to_owned();
    assert!(Replayer::new(&config).unwrap_err().to_string().contains("nope"));
}

#[test]
fn planner_times_are_recorded_per_request() {
    let report = replay(&ReplayConfig::new(None, &[None]), &trace(&[&[1], &[1, 2], &[3]]));
    assert!(report.planner_ns.p50 <= report.planner_ns.p99 && report.planner_ns.p99 <= report.planner_ns.max);
    assert!(report.replay_seconds > 0.0 && report.requests_per_second > 0.0);
}

/// Strict capacity's results, pinned: the counts of the replay at the
/// start of issue #29's branch (80ff6b8's `prefetch-plan replay`, on the
/// same synthetic trace), which LMCache's policies and trigger must leave
/// unchanged when neither is asked for.
#[test]
fn strict_capacity_results_are_those_before_lmcaches_eviction() {
    use kv_replay::synthetic::{SyntheticOptions, generate};
    let trace = generate(&SyntheticOptions::default().with_size(2_000, 24).with_seed(1));
    // (hit blocks, L1 hits, L1 evictions, adapter 0 hits, its evictions,
    // adapter 1 hits), at L1 of 0, 300, 1,000 and inf, adapters of 3,000
    // and inf.
    let pinned = [
        (
            Eviction::Lru,
            [
                (28592, 0, 46886, 22565, 15294, 6027),
                (28592, 11656, 35050, 11020, 15294, 5916),
                (28592, 16633, 29315, 6233, 15294, 5726),
                (28592, 28592, 0, 0, 15294, 0),
            ],
        ),
        (
            Eviction::Fifo,
            [
                (28592, 0, 46886, 19256, 15294, 9336),
                (28592, 10845, 35892, 10659, 15294, 7088),
                (28592, 16390, 29542, 6058, 15294, 6144),
                (28592, 28592, 0, 0, 15294, 0),
            ],
        ),
        (
            Eviction::Lfu,
            [
                (28592, 0, 46886, 13391, 15294, 15201),
                (28592, 4998, 41655, 9035, 15294, 14559),
                (28592, 7893, 38122, 7753, 15294, 12946),
                (28592, 28592, 0, 0, 15294, 0),
            ],
        ),
    ];
    for (eviction, expected) in pinned {
        for (l1, expected) in [Some(0), Some(300), Some(1_000), None].into_iter().zip(expected) {
            let mut config = ReplayConfig::new(l1, &[Some(3_000), None]);
            config.eviction = eviction;
            let report = replay(&config, &trace);
            let (l1, l2) = (&report.l1, &report.l2);
            let counts =
                (report.hit_blocks, l1.hit_blocks, l1.evictions, l2[0].hit_blocks, l2[0].evictions, l2[1].hit_blocks);
            assert_eq!(counts, expected, "{eviction:?} {config:?}");
            assert_eq!((report.evict_interval_ms, l1.checks_fired, l1.dropped_full), (None, 0, 0));
        }
    }
}
