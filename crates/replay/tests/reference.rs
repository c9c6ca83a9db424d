//! The Rust replay against the plain-Python reference model
//! (`reference_replay.py`, dicts and OrderedDicts) on generated traces: the
//! same counts, tier by tier, for LRU, FIFO and LFU, with and without
//! adapters, at capacities from 0 to `inf`, at strict capacity and under
//! LMCache's timed trigger.

use std::path::{Path, PathBuf};
use std::process::Command;

use kv_replay::synthetic::{SyntheticOptions, generate, write_mooncake};
use kv_replay::{Eviction, ReplayConfig, Replayer, Report, Trace, TraceOptions, Trigger};
use serde_json::Value;

fn python() -> &'static str {
    if Command::new("python3").arg("--version").output().is_ok() { "python3" } else { "python" }
}

fn reference(trace: &Path, config: &ReplayConfig) -> Value {
    let capacity = |capacity: Option<usize>| capacity.map_or("inf".to_owned(), |c| c.to_string());
    let mut command = Command::new(python());
    command.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference_replay.py")).arg(trace);
    command.args(["--l1", &capacity(config.l1)]);
    for adapter in &config.adapters {
        command.args(["--l2", &capacity(adapter.capacity)]);
    }
    command.args(["--eviction", config.eviction.name(), "--policy", &config.policy]);
    if let Some(trigger) = config.l1_trigger {
        command.args(["--l1-watermark", &trigger.watermark.to_string(), "--evict-ratio", &trigger.ratio.to_string()]);
    }
    if config.adapters.iter().any(|adapter| adapter.trigger.is_some()) {
        for adapter in &config.adapters {
            // The reference takes a trigger for every adapter or none: a
            // watermark of 2 never fires, which is strict capacity.
            let trigger = adapter.trigger.unwrap_or(Trigger { watermark: 2.0, ratio: 0.0 });
            command.args(["--l2-watermark", &trigger.watermark.to_string()]);
            command.args(["--l2-evict-ratio", &trigger.ratio.to_string()]);
        }
    }
    command.args(["--evict-interval-ms", &config.evict_interval_ms.to_string()]);
    let output = command.output().expect("python3 runs the reference model");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The fields both reports have, from the Rust one.
fn comparable(report: &Report) -> Value {
    let tier = |t: &kv_replay::TierReport| {
        serde_json::json!({
            "hit_blocks": t.hit_blocks,
            "evictions": t.evictions,
            "entries": t.entries,
            "peak_entries": t.peak_entries,
            "checks_fired": t.checks_fired,
            "evicted_by_checks": t.evicted_by_checks,
            "dropped_full": t.dropped_full,
        })
    };
    serde_json::json!({
        "requests": report.requests,
        "blocks": report.blocks,
        "tokens": report.tokens,
        "hit_blocks": report.hit_blocks,
        "hit_tokens": report.hit_tokens,
        "computed_blocks": report.computed_blocks,
        "hit_ratio": {
            "block": report.hit_ratio.block,
            "token": report.hit_ratio.token,
            "request_mean": report.hit_ratio.request_mean,
        },
        "l1": tier(&report.l1),
        "l2": report.l2.iter().map(tier).collect::<Vec<_>>(),
    })
}

fn write_trace(name: &str, trace: &Trace) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let mut text = Vec::new();
    write_mooncake(trace, &mut text).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn config(l1: Option<usize>, l2: &[Option<usize>], eviction: Eviction, policy: &str) -> ReplayConfig {
    let mut config = ReplayConfig::new(l1, l2);
    config.eviction = eviction;
    config.policy = policy.to_owned();
    config
}

/// Equal, but for floats within a relative 1e-12: serde_json reads floats
/// without `float_roundtrip`, which can be one ulp off Python's repr.
fn same(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Number(a), Value::Number(b)) if a.is_f64() || b.is_f64() => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
        }
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b)),
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(key, value)| b.get(key).is_some_and(|other| same(value, other)))
        }
        _ => left == right,
    }
}

fn assert_agrees(path: &Path, trace: &Trace, config: &ReplayConfig) -> Report {
    let report = Replayer::new(config).unwrap().replay(trace).unwrap();
    let (rust, python) = (comparable(&report), reference(path, config));
    assert!(same(&rust, &python), "{config:?}\nrust:   {rust}\npython: {python}");
    report
}

/// Checks fired, keys they evicted and blocks dropped, over all tiers of
/// some reports: what a trigger test must see for its agreement to mean
/// anything.
fn trigger_counts(reports: &[Report]) -> (u64, u64, u64) {
    let tiers = reports.iter().flat_map(|report| std::iter::once(&report.l1).chain(&report.l2));
    tiers.fold((0, 0, 0), |(checks, evicted, dropped), tier| {
        (checks + tier.checks_fired, evicted + tier.evicted_by_checks, dropped + tier.dropped_full)
    })
}

#[test]
fn agrees_with_the_python_reference_on_a_mooncake_shaped_trace() {
    let trace = generate(&SyntheticOptions::default().with_size(1_000, 12).with_seed(3));
    let path = write_trace("reference-mooncake.jsonl", &trace);
    let configs = [
        config(Some(500), &[Some(2_000), None], Eviction::Lru, "default"),
        config(Some(0), &[Some(300)], Eviction::Fifo, "default"),
        config(None, &[], Eviction::Lru, "default"),
        config(Some(200), &[Some(1_000), Some(3_000), Some(50)], Eviction::Fifo, "retain"),
        config(Some(1_000), &[Some(0), Some(5_000)], Eviction::Lru, "default"),
        config(Some(60), &[Some(200), Some(20)], Eviction::Lfu, "default"),
    ];
    for config in &configs {
        assert_agrees(&path, &trace, config);
    }
}

#[test]
fn agrees_with_the_python_reference_on_keys_that_repeat_within_a_request() {
    // Plain lines over a universe of 150 keys, repeats and all: the edge
    // cases a Mooncake trace never has (a key touched twice in a request,
    // a key evicted by the request's own later keys).
    let mut state = 12345u64;
    let mut next = |n: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut text = String::new();
    for _ in 0..800 {
        let len = 1 + next(12);
        let keys: Vec<String> = (0..len).map(|_| next(150).to_string()).collect();
        text.push_str(&format!("{{\"keys\": [{}]}}\n", keys.join(", ")));
    }
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("reference-plain.jsonl");
    std::fs::write(&path, &text).unwrap();
    let trace = Trace::parse(text.as_bytes(), &TraceOptions::default()).unwrap();
    for config in [
        config(Some(8), &[Some(40), Some(100)], Eviction::Lru, "default"),
        config(Some(8), &[Some(40), Some(100)], Eviction::Fifo, "default"),
        config(Some(3), &[Some(1)], Eviction::Lru, "retain"),
        config(Some(8), &[Some(40), Some(100)], Eviction::Lfu, "default"),
        config(Some(2), &[Some(1), None], Eviction::Lfu, "retain"),
    ] {
        assert_agrees(&path, &trace, &config);
    }
}

fn triggered(
    mut config: ReplayConfig,
    l1: Option<(f64, f64)>,
    l2: &[Option<(f64, f64)>],
    interval: u64,
) -> ReplayConfig {
    config.l1_trigger = l1.map(|(watermark, ratio)| Trigger::new(watermark, ratio).unwrap());
    for (adapter, trigger) in config.adapters.iter_mut().zip(l2) {
        adapter.trigger = trigger.map(|(watermark, ratio)| Trigger::new(watermark, ratio).unwrap());
    }
    config.evict_interval_ms = interval;
    config
}

#[test]
fn agrees_with_the_python_reference_under_lmcaches_trigger() {
    // 100 ms apart: a check every 10 requests at the default interval.
    let trace = generate(&SyntheticOptions::default().with_size(1_500, 12).with_seed(11));
    let path = write_trace("reference-trigger.jsonl", &trace);
    let configs = [
        triggered(config(Some(500), &[], Eviction::Lru, "default"), Some((0.8, 0.2)), &[], 1_000),
        triggered(config(Some(300), &[Some(2_000)], Eviction::Fifo, "default"), Some((0.5, 0.5)), &[None], 1_000),
        triggered(
            config(Some(300), &[Some(1_000)], Eviction::Lfu, "default"),
            Some((0.9, 0.1)),
            &[Some((0.6, 0.3))],
            700,
        ),
        triggered(config(Some(0), &[Some(400), None], Eviction::Lru, "retain"), None, &[Some((0.8, 0.2)), None], 1_000),
        triggered(
            config(Some(150), &[Some(600)], Eviction::Lru, "default"),
            Some((0.0, 1.0)),
            &[Some((1.0, 0.0))],
            250,
        ),
        triggered(config(None, &[Some(900)], Eviction::Lru, "default"), Some((0.8, 0.2)), &[None], 5_000),
    ];
    let reports: Vec<Report> = configs.iter().map(|config| assert_agrees(&path, &trace, config)).collect();
    let (checks, evicted, dropped) = trigger_counts(&reports);
    assert!(checks > 100 && evicted > 1_000 && dropped > 1_000, "{checks} {evicted} {dropped}");
    // A watermark of 0 fires at every check, even on an empty tier.
    assert_eq!(reports[4].l1.checks_fired, trace.request(trace.len() - 1).timestamp_ms / 250);
}

#[test]
fn agrees_with_the_python_reference_under_the_trigger_on_repeating_keys() {
    // Plain lines with timestamps every 0-900 ms, some without one (they
    // keep the previous line's), keys repeating within a request.
    let mut state = 777u64;
    let mut next = |n: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let (mut text, mut now) = (String::new(), 0);
    for _ in 0..800 {
        let len = 1 + next(12);
        let keys: Vec<String> = (0..len).map(|_| next(150).to_string()).collect();
        now += next(900);
        let timestamp = if next(5) == 0 { String::new() } else { format!("\"timestamp\": {now}, ") };
        text.push_str(&format!("{{{timestamp}\"keys\": [{}]}}\n", keys.join(", ")));
    }
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("reference-trigger-plain.jsonl");
    std::fs::write(&path, &text).unwrap();
    let trace = Trace::parse(text.as_bytes(), &TraceOptions::default()).unwrap();
    let mut reports = Vec::new();
    for eviction in [Eviction::Lru, Eviction::Fifo, Eviction::Lfu] {
        let base = config(Some(10), &[Some(40), Some(100)], eviction, "default");
        let trigger = triggered(base, Some((0.8, 0.2)), &[Some((0.7, 0.4)), Some((0.9, 0.1))], 1_000);
        reports.push(assert_agrees(&path, &trace, &trigger));
        let base = config(Some(3), &[Some(1)], eviction, "retain");
        reports.push(assert_agrees(&path, &trace, &triggered(base, Some((0.3, 0.6)), &[Some((0.0, 0.0))], 400)));
    }
    let (checks, evicted, dropped) = trigger_counts(&reports);
    assert!(checks > 100 && evicted > 100 && dropped > 100, "{checks} {evicted} {dropped}");
}
