//! The replay on slices of Mooncake's real traces (FAST'25 release,
//! Apache-2.0), when they are on this machine: `conversation_trace.jsonl.gz`
//! and `synthetic_trace.jsonl.gz` (or the same names without `.gz`) in
//! `$BITPLAN_TRACES_DIR`, by default `<repo>/../shared/traces`.
//!
//! The traces are not part of this repository or of any package: without
//! them (or without `gzip` for the compressed files) each test prints a note
//! (on standard error, past libtest's capture) and returns, passing. They check properties that hold whatever the trace
//! holds, against computations that do not go through the replay: the
//! request, block and token counts; an unbounded L1's hit, which must be
//! each request's prefix of ids seen before (written out here with a
//! `HashSet` over the file's own ids); strict LRU's hits growing with
//! capacity (its inclusion property: L1 touches every key of every request,
//! whatever hits, so a smaller LRU always holds a subset of a bigger one);
//! no policy, strict or under LMCache's trigger, beating unbounded; and the
//! plain-Python model (`reference_replay.py`) agreeing count for count.

use std::collections::HashSet;
use std::env;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use kv_replay::{Eviction, ReplayConfig, Replayer, Report, Trace, TraceOptions, Trigger};
use serde_json::Value;

/// Mooncake's block: 512 tokens.
const BLOCK_TOKENS: u64 = 512;

/// The first requests of the conversation trace the tests replay: about a
/// third of its 12,031, 20 minutes of its timestamps.
const SLICE: usize = 4000;

/// Where the traces are: `$BITPLAN_TRACES_DIR`, else `../shared/traces`
/// beside the repository.
fn traces_dir() -> PathBuf {
    match env::var_os("BITPLAN_TRACES_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"),
    }
}

/// Says why a test did nothing, on standard error itself rather than
/// through `eprintln!`, which libtest captures: the note shows in a plain
/// `cargo test` run.
fn skip(note: &str) {
    writeln!(std::io::stderr(), "note: skipped, {note}").ok();
}

/// The first `lines` lines of trace `name` (`conversation`, `synthetic`),
/// decompressed by `gzip -dc` when only the `.gz` is there; `None`, with a
/// note on standard output, when the trace (or `gzip`) is missing.
fn trace_lines(name: &str, lines: usize) -> Option<String> {
    let dir = traces_dir();
    let plain = dir.join(format!("{name}_trace.jsonl"));
    let gzipped = dir.join(format!("{name}_trace.jsonl.gz"));
    let text = if plain.is_file() {
        std::fs::read_to_string(&plain).expect("the trace is UTF-8")
    } else if gzipped.is_file() {
        match Command::new("gzip").arg("-dc").arg(&gzipped).output() {
            Ok(output) if output.status.success() => String::from_utf8(output.stdout).expect("the trace is UTF-8"),
            Ok(output) => panic!("gzip -dc {} failed: {}", gzipped.display(), String::from_utf8_lossy(&output.stderr)),
            Err(error) => {
                skip(&format!("gzip does not run ({error}) to read {}", gzipped.display()));
                return None;
            }
        }
    } else {
        skip(&format!("no {name}_trace.jsonl(.gz) in {} (set BITPLAN_TRACES_DIR to Mooncake's traces)", dir.display()));
        return None;
    };
    let mut slice: String = text.lines().take(lines).flat_map(|line| [line, "\n"]).collect();
    slice.shrink_to_fit();
    Some(slice)
}

/// What the file itself says, read with serde_json and a `HashSet` of its
/// own (u64) ids, not through the replay's trace: the counts, and an
/// unbounded cache's hit (per request, the run of ids from the first that
/// an earlier request had).
#[derive(Debug, Default, PartialEq)]
struct Direct {
    requests: u64,
    blocks: u64,
    tokens: u64,
    distinct: usize,
    prefix_hit_blocks: u64,
    prefix_hit_tokens: u64,
    /// Blocks seen before wherever they are in the request: the same as
    /// the prefix hit when ids are chained prefix hashes.
    seen_blocks: u64,
}

fn direct(text: &str) -> Direct {
    let mut seen: HashSet<u64> = HashSet::new();
    let mut totals = Direct::default();
    let mut last_timestamp = 0;
    for line in text.lines() {
        let request: Value = serde_json::from_str(line).expect("a JSON line");
        let ids: Vec<u64> =
            request["hash_ids"].as_array().expect("hash_ids").iter().map(|id| id.as_u64().expect("an id")).collect();
        let tokens = request["input_length"].as_u64().expect("input_length");
        let timestamp = request["timestamp"].as_u64().expect("timestamp");
        assert_eq!(ids.len() as u64, tokens.div_ceil(BLOCK_TOKENS), "Mooncake's blocks are 512 tokens: {line}");
        assert!(timestamp >= last_timestamp, "timestamps never go back: {line}");
        last_timestamp = timestamp;
        let hit = ids.iter().take_while(|id| seen.contains(id)).count() as u64;
        totals.requests += 1;
        totals.blocks += ids.len() as u64;
        totals.tokens += tokens;
        totals.prefix_hit_blocks += hit;
        totals.prefix_hit_tokens += (hit * BLOCK_TOKENS).min(tokens);
        totals.seen_blocks += ids.iter().filter(|id| seen.contains(id)).count() as u64;
        seen.extend(ids);
    }
    totals.distinct = seen.len();
    totals
}

fn parse(text: &str) -> Trace {
    Trace::parse(text.as_bytes(), &TraceOptions::default()).expect("Mooncake's trace parses")
}

fn replay(trace: &Trace, l1: Option<usize>, eviction: Eviction, trigger: Option<(f64, f64)>) -> Report {
    let mut config = ReplayConfig::new(l1, &[]);
    config.eviction = eviction;
    config.l1_trigger = trigger.map(|(watermark, ratio)| Trigger::new(watermark, ratio).expect("a valid trigger"));
    Replayer::new(&config).expect("a valid config").replay(trace).expect("the replay runs")
}

/// An unbounded L1 hits exactly each request's prefix of ids seen before,
/// and the counts are the file's: the first `lines` requests of trace
/// `name`, which must be `requests` of them.
fn unbounded_is_prefix_reuse(name: &str, lines: usize, requests: u64) {
    let Some(text) = trace_lines(name, lines) else { return };
    let expected = direct(&text);
    assert_eq!(expected.requests, requests, "{name}: requests read");
    let trace = parse(&text);
    assert_eq!(trace.len() as u64, expected.requests);
    assert_eq!(trace.distinct_keys(), expected.distinct);
    let report = replay(&trace, None, Eviction::Lru, None);
    let got = Direct {
        requests: report.requests,
        blocks: report.blocks,
        tokens: report.tokens,
        distinct: report.l1.entries,
        prefix_hit_blocks: report.hit_blocks,
        prefix_hit_tokens: report.hit_tokens,
        seen_blocks: expected.seen_blocks,
    };
    assert_eq!(got, expected, "{name}: the replay against the file read directly");
    // Mooncake's ids name a block with everything before it: a block seen
    // before is always in the prefix seen before.
    assert_eq!(expected.seen_blocks, expected.prefix_hit_blocks, "{name}: ids are chained prefix hashes");
    assert_eq!((report.l1.evictions, report.l1.hit_blocks), (0, report.hit_blocks));
    assert_eq!(report.hit_ratio.block, expected.prefix_hit_blocks as f64 / expected.blocks as f64);
    println!(
        "{name}, first {} requests: {} blocks, {} distinct, unbounded hit ratio {:.4} (blocks), {:.4} (tokens)",
        expected.requests, expected.blocks, expected.distinct, report.hit_ratio.block, report.hit_ratio.token
    );
}

#[test]
fn conversation_slice_unbounded_hit_is_its_prefix_reuse() {
    unbounded_is_prefix_reuse("conversation", SLICE, SLICE as u64);
}

/// The whole synthetic trace: its 3,993 requests (PROVENANCE.txt's line
/// count), all read.
#[test]
fn synthetic_trace_unbounded_hit_is_its_prefix_reuse() {
    unbounded_is_prefix_reuse("synthetic", usize::MAX, 3993);
}

/// The whole conversation trace parses into its 12,031 requests
/// (PROVENANCE.txt's line count), none lost between `gzip` and the parser:
/// 288,500 block references, 182,790 distinct blocks, 144,793,823 input
/// tokens (counted in Python from the file, with `json` and a `set`).
#[test]
fn conversation_trace_parses_whole() {
    let Some(text) = trace_lines("conversation", usize::MAX) else { return };
    let trace = parse(&text);
    assert_eq!((trace.len(), trace.block_refs(), trace.distinct_keys()), (12_031, 288_500, 182_790));
    assert_eq!(trace.tokens(), 144_793_823);
}

#[test]
fn conversation_slice_strict_lru_grows_with_capacity_up_to_unbounded() {
    let Some(text) = trace_lines("conversation", SLICE) else { return };
    let trace = parse(&text);
    let unbounded = replay(&trace, None, Eviction::Lru, None).hit_blocks;
    let distinct = trace.distinct_keys();
    let mut last = 0;
    for capacity in [0, 1, 50, 300, 1000, 3000, 10_000, 30_000, distinct - 1, distinct] {
        let report = replay(&trace, Some(capacity), Eviction::Lru, None);
        assert!(report.hit_blocks >= last, "LRU at {capacity} blocks hits {} < {last} at less", report.hit_blocks);
        assert!(report.hit_blocks <= unbounded, "LRU at {capacity} blocks beats unbounded");
        assert!(report.l1.peak_entries <= capacity);
        last = report.hit_blocks;
    }
    assert_eq!(replay(&trace, Some(0), Eviction::Lru, None).hit_blocks, 0, "an L1 of 0 holds nothing");
    assert_eq!(last, unbounded, "an LRU as big as the slice's distinct keys never evicts");
}

#[test]
fn conversation_slice_no_policy_beats_unbounded() {
    let Some(text) = trace_lines("conversation", SLICE) else { return };
    let trace = parse(&text);
    let unbounded = replay(&trace, None, Eviction::Lru, None).hit_blocks;
    let policies = [Eviction::Lru, Eviction::Fifo, Eviction::Lfu, Eviction::S3Fifo, Eviction::Arc];
    for capacity in [500, 5000] {
        for eviction in policies {
            for trigger in [None, Some((0.8, 0.2)), Some((0.95, 0.02))] {
                let report = replay(&trace, Some(capacity), eviction, trigger);
                assert!(
                    report.hit_blocks <= unbounded,
                    "{eviction:?} {trigger:?} at {capacity} blocks beats unbounded"
                );
                assert!(report.l1.peak_entries <= capacity, "{eviction:?} {trigger:?} holds more than {capacity}");
                assert_eq!(report.requests, SLICE as u64);
                if trigger.is_some() {
                    // The slice spans some 20 minutes of timestamps: the
                    // trigger's checks run, and at these sizes they fire.
                    assert!(report.l1.checks_fired > 0, "{eviction:?} {trigger:?} at {capacity}: no check fired");
                }
            }
        }
    }
    let noop = replay(&trace, Some(5000), Eviction::Noop, Some((0.8, 0.2)));
    assert_eq!(noop.l1.evictions, 0, "noop never evicts");
    assert_eq!(noop.l1.entries, 5000, "noop fills L1 and keeps it");
}

/// The plain-Python model of docs/REPLAY.md, on the slice written to a
/// temporary file: every count of L1 must agree, for LRU and FIFO at strict
/// capacity, and LRU (LMCache's) and LFU (the replay's) under LMCache's
/// trigger. Not LFU at strict capacity: the model's victim search is linear,
/// some 12 s on this slice.
#[test]
fn conversation_slice_agrees_with_the_python_reference() {
    let Some(text) = trace_lines("conversation", 2500) else { return };
    let python = if Command::new("python3").arg("--version").output().is_ok() { "python3" } else { "python" };
    if Command::new(python).arg("--version").output().is_err() {
        skip("no python3 to run reference_replay.py");
        return;
    }
    let path = env::temp_dir().join(format!("kv-replay-conversation-slice-{}.jsonl", std::process::id()));
    std::fs::write(&path, &text).expect("the temporary trace is written");
    let trace = parse(&text);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference_replay.py");
    let cases = [
        ("lru", Eviction::Lru, None),
        ("fifo", Eviction::Fifo, None),
        ("lru", Eviction::Lru, Some((0.8, 0.2))),
        ("lfu", Eviction::Lfu, Some((0.95, 0.05))),
        ("fifo", Eviction::Fifo, Some((0.5, 0.02))),
    ];
    for (name, eviction, trigger) in cases {
        let capacity = 2000;
        let mut command = Command::new(python);
        command.arg(&script).arg(&path).args(["--l1", &capacity.to_string(), "--eviction", name]);
        if let Some((watermark, ratio)) = trigger {
            command.args(["--l1-watermark", &watermark.to_string(), "--evict-ratio", &ratio.to_string()]);
        }
        let output = command.output().expect("the reference runs");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let model: Value = serde_json::from_slice(&output.stdout).expect("the reference prints JSON");
        let report = replay(&trace, Some(capacity), eviction, trigger);
        let rust = [
            report.hit_blocks,
            report.hit_tokens,
            report.l1.evictions,
            report.l1.entries as u64,
            report.l1.peak_entries as u64,
            report.l1.checks_fired,
            report.l1.evicted_by_checks,
            report.l1.dropped_full,
        ];
        let l1 = &model["l1"];
        let reference = [
            &model["hit_blocks"],
            &model["hit_tokens"],
            &l1["evictions"],
            &l1["entries"],
            &l1["peak_entries"],
            &l1["checks_fired"],
            &l1["evicted_by_checks"],
            &l1["dropped_full"],
        ]
        .map(|value| value.as_u64().expect("a count"));
        assert_eq!(
            rust, reference,
            "{name} {trigger:?}: hit blocks, hit tokens, evictions, entries, peak, checks, by checks, dropped"
        );
    }
    std::fs::remove_file(&path).ok();
}
