//! `prefetch-plan replay -` on Mooncake's real conversation trace, as
//! docs/REPLAY.md runs it: `gzip -dc conversation_trace.jsonl.gz |
//! prefetch-plan replay - ...` (the command reads no gzip itself). The trace
//! is looked for in `$BITPLAN_TRACES_DIR`, by default
//! `<repo>/../shared/traces`; without it (or without `gzip`) the test prints
//! a note and passes: no package carries the traces.

use std::collections::HashSet;
use std::env;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command as Process;

use assert_cmd::Command;
use serde_json::Value;

fn traces_dir() -> PathBuf {
    match env::var_os("BITPLAN_TRACES_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"),
    }
}

/// Says why the test did nothing, past libtest's capture of `eprintln!`.
fn skip(note: &str) {
    writeln!(std::io::stderr(), "note: skipped, {note}").ok();
}

/// The whole conversation trace, decompressed, or `None` with a note.
fn conversation() -> Option<Vec<u8>> {
    let path = traces_dir().join("conversation_trace.jsonl.gz");
    if !path.is_file() {
        skip(&format!("no {} (set BITPLAN_TRACES_DIR to Mooncake's traces)", path.display()));
        return None;
    }
    match Process::new("gzip").arg("-dc").arg(&path).output() {
        Ok(output) if output.status.success() => Some(output.stdout),
        Ok(output) => panic!("gzip -dc {} failed: {}", path.display(), String::from_utf8_lossy(&output.stderr)),
        Err(error) => {
            skip(&format!("gzip does not run ({error})"));
            None
        }
    }
}

#[test]
fn the_conversation_trace_replays_from_standard_input() {
    let Some(trace) = conversation() else { return };
    // What an unbounded cache hits, straight from the file: per request, the
    // run of ids from the first that an earlier request had.
    let text = std::str::from_utf8(&trace).expect("the trace is UTF-8");
    let mut seen = HashSet::new();
    let (mut requests, mut blocks, mut prefix_hits) = (0, 0, 0);
    for line in text.lines() {
        let request: Value = serde_json::from_str(line).unwrap();
        let ids: Vec<u64> = request["hash_ids"].as_array().unwrap().iter().map(|id| id.as_u64().unwrap()).collect();
        requests += 1;
        blocks += ids.len() as u64;
        prefix_hits += ids.iter().take_while(|id| seen.contains(*id)).count() as u64;
        seen.extend(ids);
    }
    assert_eq!(requests, 12_031, "PROVENANCE.txt's line count");

    let output = Command::new(env!("CARGO_BIN_EXE_prefetch-plan"))
        .args(["replay", "-", "--l1", "1e4,inf", "--eviction", "lru,arc", "--l1-watermark", "0.8", "--json"])
        .write_stdin(trace)
        .output()
        .expect("the binary runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let rows: Vec<Value> =
        String::from_utf8(output.stdout).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(rows.len(), 4, "two policies by two capacities");
    for row in &rows {
        assert_eq!((row["requests"].as_u64(), row["blocks"].as_u64()), (Some(requests), Some(blocks)));
        let hits = row["hit_blocks"].as_u64().unwrap();
        if row["l1"]["capacity_blocks"].is_null() {
            assert_eq!(hits, prefix_hits, "{}: unbounded hits the prefix reuse", row["eviction"]);
            assert_eq!(row["l1"]["entries"].as_u64(), Some(seen.len() as u64));
        } else {
            assert!(hits < prefix_hits, "{}: 10,000 blocks hit less than unbounded", row["eviction"]);
            // An hour of timestamps: LMCache's checks run, once a second.
            assert!(row["l1"]["checks_fired"].as_u64().unwrap() > 0);
        }
    }
}
