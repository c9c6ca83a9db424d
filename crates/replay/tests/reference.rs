//! The Rust replay against the plain-Python reference model
//! (`reference_replay.py`, dicts and OrderedDicts) on generated traces: the
//! same counts, tier by tier, for LRU and FIFO, with and without adapters,
//! at capacities from 0 to `inf`.

use std::path::{Path, PathBuf};
use std::process::Command;

use kv_replay::synthetic::{SyntheticOptions, generate, write_mooncake};
use kv_replay::{Eviction, ReplayConfig, Replayer, Report, Trace, TraceOptions};
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
    let output = command.output().expect("python3 runs the reference model");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The fields both reports have, from the Rust one.
fn comparable(report: &Report) -> Value {
    let tier = |hit_blocks: u64, evictions: u64, entries: usize| serde_json::json!({"hit_blocks": hit_blocks, "evictions": evictions, "entries": entries});
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
        "l1": tier(report.l1.hit_blocks, report.l1.evictions, report.l1.entries),
        "l2": report.l2.iter().map(|t| tier(t.hit_blocks, t.evictions, t.entries)).collect::<Vec<_>>(),
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

fn assert_agrees(path: &Path, trace: &Trace, config: &ReplayConfig) {
    let report = Replayer::new(config).unwrap().replay(trace).unwrap();
    let (rust, python) = (comparable(&report), reference(path, config));
    assert!(same(&rust, &python), "{config:?}\nrust:   {rust}\npython: {python}");
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
