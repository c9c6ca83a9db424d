//! `prefetch-plan replay` as a user runs it: JSON reports, sweeps, `--bench`,
//! and every kind of bad input with exit status 2 and a message naming the
//! line and field (or the option).

use std::path::PathBuf;

use assert_cmd::Command;
use kv_replay::synthetic::{SyntheticOptions, generate, write_mooncake};
use serde_json::Value;

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn replay(args: &[&str], stdin: &str) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_prefetch-plan"));
    command.arg("replay").args(args).write_stdin(stdin.to_owned());
    let output = command.output().expect("the binary runs");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

fn json_lines(run: &Run) -> Vec<Value> {
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    run.stdout.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

const SMALL: &str = "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 5, \"hash_ids\": [0, 1]}
{\"timestamp\": 9, \"input_length\": 1500, \"output_length\": 5, \"hash_ids\": [0, 1, 2]}
";

#[test]
fn a_replay_prints_one_json_report() {
    let rows = json_lines(&replay(&["-", "--l1", "inf", "--l2", "inf", "--kv-bytes-per-token", "2"], SMALL));
    assert_eq!(rows.len(), 1);
    let report = &rows[0];
    assert_eq!(
        (report["requests"].as_u64(), report["blocks"].as_u64(), report["tokens"].as_u64()),
        (Some(2), Some(5), Some(2500))
    );
    assert_eq!(report["hit_blocks"], 2);
    assert_eq!(report["hit_tokens"], 1024);
    assert_eq!(report["l1"]["hit_bytes"], 2 * 1024);
    assert_eq!(report["l2"][0]["hit_blocks"], 0);
    assert!(report["planner_ns"]["p99"].is_u64());
}

#[test]
fn a_sweep_prints_one_row_per_capacity() {
    let mut trace = Vec::new();
    write_mooncake(&generate(&SyntheticOptions::default().with_size(400, 12)), &mut trace).unwrap();
    let trace = String::from_utf8(trace).unwrap();
    let rows = json_lines(&replay(&["-", "--l1", "0,100,1e3,inf", "--l2", "500", "--threads", "2"], &trace));
    let ratios: Vec<f64> = rows.iter().map(|row| row["hit_ratio"]["block"].as_f64().unwrap()).collect();
    assert_eq!(ratios.len(), 4);
    // Not monotonic in general: a key served by L1 is not touched in the
    // adapter (rule (e)), so a bigger L1 changes the adapter's LRU order.
    assert!(ratios.iter().all(|ratio| (0.0..=1.0).contains(ratio)) && ratios[3] > ratios[1], "{ratios:?}");
    let capacities: Vec<Value> = rows.iter().map(|row| row["l1"]["capacity_blocks"].clone()).collect();
    assert_eq!(capacities, [Value::from(0), Value::from(100), Value::from(1000), Value::Null]);
}

#[test]
fn bench_reports_medians() {
    let rows = json_lines(&replay(&["-", "--l1", "1,10", "--bench", "3", "--json"], SMALL));
    assert_eq!(rows[0]["runs"], 3);
    assert_eq!(rows[0]["rows"].as_array().map(Vec::len), Some(2));
}

#[test]
fn bench_times_hybrid_models() {
    let args = ["-", "--l1", "1,10", "--l2", "inf", "--groups", "3", "--ranks", "2", "--windows", "-1,4,1"];
    let rows = json_lines(&replay(&[&args[..], &["--bench", "3", "--json"]].concat(), SMALL));
    assert_eq!((rows.len(), rows[0]["runs"].as_u64(), rows[0]["cells_per_chunk"].as_u64()), (1, Some(3), Some(6)));
    let timed = rows[0]["rows"].as_array().unwrap();
    assert_eq!(timed.len(), 2);
    assert_eq!(timed[1]["l1_blocks"], 10);
    for row in timed {
        let (blocks, cells) =
            (row["block_refs_per_second"].as_f64().unwrap(), row["cell_refs_per_second"].as_f64().unwrap());
        assert!(blocks > 0.0 && (cells / blocks - 6.0).abs() < 1e-9, "{row}");
    }
    // The flat bench's JSON has no hybrid fields.
    let flat = json_lines(&replay(&["-", "--l1", "10", "--bench", "2", "--json"], SMALL));
    assert!(flat[0].get("cells_per_chunk").is_none() && flat[0]["rows"][0].get("cell_refs_per_second").is_none());
}

#[test]
fn a_file_argument_is_read() {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replay-cli-small.jsonl");
    std::fs::write(&path, SMALL).unwrap();
    let rows = json_lines(&replay(&[path.to_str().unwrap(), "--l1", "1", "--eviction", "fifo"], ""));
    assert_eq!(rows[0]["eviction"], "fifo");
    let missing = replay(&["/nonexistent/trace.jsonl", "--l1", "1"], "");
    assert_eq!(missing.code, Some(1), "{}", missing.stderr);
}

#[test]
fn bad_lines_name_the_line_and_field_and_report_nothing() {
    for (line, message) in [
        (r#"{"input_length": 512}"#, "line 2: missing field"),
        (r#"{"hash_ids": [0, "a"]}"#, "line 2: hash_ids[1]: expected a non-negative integer id"),
        (r#"{"hash_ids": [0, 1.5]}"#, "line 2: hash_ids[1]: expected a non-negative integer id"),
        (r#"{"input_length": 0, "hash_ids": []}"#, "line 2: input_length: must be at least 1, found 0"),
        (
            r#"{"input_length": 2000, "hash_ids": [1]}"#,
            "line 2: hash_ids: 1 ids, but 2000 tokens in blocks of 512 make 4",
        ),
        (r#"{"hash_ids": [1]"#, "line 2: "),
    ] {
        let run = replay(&["-", "--l1", "10"], &format!("{{\"hash_ids\": [0]}}\n{line}\n"));
        assert_eq!(run.code, Some(2), "{line}: {}", run.stderr);
        assert!(run.stderr.starts_with(&format!("prefetch-plan: {message}")), "{line}: {}", run.stderr);
        assert_eq!(run.stdout, "", "nothing is half-reported");
    }
}

#[test]
fn bad_options_exit_2() {
    for (args, message) in [
        (&["--l1", "lots"][..], "not a capacity"),
        (&["--l1", "10", "--l2", "5:speed=3"], "not a tier option"),
        (&["--l1", "64GiB"], "--kv-bytes-per-token"),
        (&["--l1", "10", "--policy", "nope"], "nope"),
        (&["--l1", "10", "--eviction", "random"], "random"),
        (&["--l1", "10", "--block-tokens", "0"], "0"),
        // Whole numbers too large for a tier, in each form: the limit,
        // not "not a whole number".
        (
            &["--l1", "99999999999999999999"],
            "\"99999999999999999999\" is more than a tier can hold: at most 4294967294 blocks (use inf)",
        ),
        (
            &["--l1", "10", "--l2", "5000000000"],
            "\"5000000000\" is 5000000000 blocks, more than a tier can hold: at most 4294967294 blocks",
        ),
        (&["--l1", "1e30tok"], "tok\" is more than a tier can hold: at most 4294967294 blocks (use inf)"),
        (
            &["--l1", "1e30B", "--kv-bytes-per-token", "2"],
            "B\" is more than a tier can hold: at most 4294967294 blocks",
        ),
    ] {
        let mut argv = vec!["-"];
        argv.extend_from_slice(args);
        let run = replay(&argv, SMALL);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(message), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn chart_draws_the_sweep() {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replay-cli-chart.svg");
    let run = replay(&["-", "--l1", "1,2,4", "--chart", path.to_str().unwrap()], SMALL);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(std::fs::read_to_string(&path).unwrap().starts_with("<svg"));
    let single = replay(&["-", "--l1", "4", "--chart", path.to_str().unwrap()], SMALL);
    assert_eq!(single.code, Some(2), "{}", single.stderr);
    assert!(single.stderr.contains("--chart"), "{}", single.stderr);
}

#[test]
fn hybrid_models_replay_cells() {
    let rows = json_lines(&replay(&["-", "--l1", "inf", "--windows", "-1,1", "--ranks", "2"], SMALL));
    let report = &rows[0];
    assert_eq!((report["cells_per_chunk"].as_u64(), report["hit_blocks"].as_u64()), (Some(4), Some(2)));
    // Request 2 hits chunks 0, 1: the Mamba rows need only chunk 1's cells.
    assert_eq!(report["cells_dropped_by_retain"], 2);
    // One full-attention group is the flat replay.
    let flat = json_lines(&replay(&["-", "--l1", "2", "--l2", "inf"], SMALL));
    let cells = json_lines(&replay(&["-", "--l1", "2", "--l2", "inf", "--groups", "1", "--windows", "-1"], SMALL));
    assert_eq!(cells[0]["hit_ratio"], flat[0]["hit_ratio"]);
    // --groups with one window repeats it.
    let eight = json_lines(&replay(&["-", "--l1", "inf", "--groups", "8", "--windows", "-1"], SMALL));
    assert_eq!(eight[0]["cells_per_chunk"], 8);
    for args in
        [&["--groups", "3", "--windows", "-1,1"][..], &["--ranks", "2"], &["--windows", "-1", "--chart", "x.svg"]]
    {
        let mut argv = vec!["-", "--l1", "10"];
        argv.extend_from_slice(args);
        let run = replay(&argv, SMALL);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("--windows"), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn a_trace_that_is_not_utf8_exits_2() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_prefetch-plan"));
    command.args(["replay", "-", "--l1", "10"]).write_stdin(b"{\"keys\": [1]}\n{\"keys\": [\xff]}\n".to_vec());
    let output = command.output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("line 2: the line is not valid UTF-8"), "{stderr}");
}

fn synthetic(requests: usize) -> String {
    let mut trace = Vec::new();
    write_mooncake(&generate(&SyntheticOptions::default().with_size(requests, 12)), &mut trace).unwrap();
    String::from_utf8(trace).unwrap()
}

#[test]
fn policies_and_triggers_sweep_one_row_each() {
    let trace = synthetic(600);
    let args = ["-", "--l1", "200,800", "--eviction", "lru,s3fifo,arc", "--l1-watermark", "0.8,0.95", "--json"];
    let rows = json_lines(&replay(&args, &trace));
    assert_eq!(rows.len(), 3 * 2 * 2);
    // Policies vary slowest, then watermarks, then capacities.
    let shape: Vec<(String, f64, u64)> = rows
        .iter()
        .map(|row| {
            let l1 = &row["l1"];
            (
                row["eviction"].as_str().unwrap().to_owned(),
                l1["watermark"].as_f64().unwrap(),
                l1["capacity_blocks"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(shape[0], ("lru".to_owned(), 0.8, 200));
    assert_eq!(shape[3], ("lru".to_owned(), 0.95, 800));
    assert_eq!(shape[11], ("arc".to_owned(), 0.95, 800));
    for row in &rows {
        let l1 = &row["l1"];
        assert_eq!((row["evict_interval_ms"].as_u64(), l1["evict_ratio"].as_f64()), (Some(1_000), Some(0.2)));
        // 600 requests 100 ms apart: 59 checks, and a small L1 fills.
        assert!(l1["checks_fired"].as_u64().unwrap() > 0, "{row}");
        assert!(l1["peak_entries"].as_u64() <= l1["capacity_blocks"].as_u64());
        assert!(l1["index_bytes"].as_u64().unwrap() > 0);
    }
    assert!(rows.iter().any(|row| row["l1"]["dropped_full"].as_u64().unwrap() > 0));

    // Strict capacity (the default) reports no checks or drops, and its
    // results are those of a replay that names nothing of this.
    let strict = json_lines(&replay(&["-", "--l1", "200", "--l2", "1e3"], &trace));
    let named = json_lines(&replay(&["-", "--l1", "200", "--l2", "1e3", "--eviction", "lru"], &trace));
    assert_eq!(strict[0]["hit_blocks"], named[0]["hit_blocks"]);
    assert_eq!(
        (strict[0]["evict_interval_ms"].clone(), strict[0]["l1"]["checks_fired"].as_u64()),
        (Value::Null, Some(0))
    );
    assert_eq!(strict[0]["l1"]["watermark"], Value::Null);
}

#[test]
fn adapters_take_their_own_triggers() {
    let trace = synthetic(300);
    let args = ["-", "--l1", "0", "--l2", "100", "--l2", "inf", "--l2-watermark", "0.5,0.9", "--l2-evict-ratio", "0.3"];
    let rows = json_lines(&replay(&args, &trace));
    let l2 = &rows[0]["l2"];
    assert_eq!((l2[0]["watermark"].as_f64(), l2[0]["evict_ratio"].as_f64()), (Some(0.5), Some(0.3)));
    assert_eq!((l2[1]["watermark"].as_f64(), l2[1]["checks_fired"].as_u64()), (Some(0.9), Some(0)));
    assert!(l2[0]["checks_fired"].as_u64().unwrap() > 0);
    assert_eq!(rows[0]["l1"]["watermark"], Value::Null);
}

#[test]
fn bad_eviction_options_exit_2_naming_the_flag() {
    for (args, expected) in [
        (&["--l1-watermark", "1.5"][..], "--l1-watermark: 1.5 is outside [0, 1]"),
        (&["--l1-watermark", "0.8", "--evict-ratio", "-0.2"], "--evict-ratio: -0.2 is outside [0, 1]"),
        (&["--l2-watermark", "2"], "--l2-watermark: 2 is outside [0, 1]"),
        (&["--l2-watermark", "0.5", "--l2-evict-ratio", "1.01"], "--l2-evict-ratio: 1.01 is outside [0, 1]"),
        (&["--evict-ratio", "0.5"], "--evict-ratio: needs --l1-watermark"),
        (&["--evict-interval-ms", "10"], "--evict-interval-ms: needs"),
        (&["--l1-watermark", "0.8", "--evict-interval-ms", "0"], "--evict-interval-ms: must be at least 1"),
        (&["--l2-watermark", "0.5,0.6,0.7"], "--l2-watermark: 3 values for 1 --l2 adapters"),
    ] {
        let mut full = vec!["-", "--l1", "10", "--l2", "100"];
        full.extend_from_slice(args);
        let run = replay(&full, SMALL);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(expected), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty());
    }
    let run = replay(&["-", "--l1", "10", "--eviction", "lru,clock"], SMALL);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("'clock'"), "{}", run.stderr);
    for name in ["lru", "fifo", "lfu", "s3fifo", "arc", "noop"] {
        assert!(run.stderr.contains(name), "{name}: {}", run.stderr);
    }
    let run = replay(&["-", "--l1", "10", "--eviction", "arc", "--windows", "-1"], SMALL);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("hybrid replay keeps lru, fifo or lfu"), "{}", run.stderr);
}

#[test]
fn the_chart_draws_one_line_per_policy() {
    let trace = synthetic(300);
    let path = std::env::temp_dir().join(format!("replay-cli-policies-{}.svg", std::process::id()));
    let path_text = path.to_str().unwrap();
    let args = ["-", "--l1", "50,200,1000", "--eviction", "lru,s3fifo,arc", "--chart", path_text, "--json"];
    let rows = json_lines(&replay(&args, &trace));
    assert_eq!(rows.len(), 9);
    let svg = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(svg.contains("by eviction") && svg.contains("s3fifo") && svg.contains("arc"), "{}", &svg[..300]);
}
