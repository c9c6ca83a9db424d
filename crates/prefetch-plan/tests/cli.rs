//! The built `prefetch-plan` binary, run as a user runs it: the LMCache
//! cases, both lookup encodings, NDJSON and multi-line input, `--trim`,
//! every kind of bad input with its exit status and message, `features`,
//! `bench` and `--help`.

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::Value;

/// The outcome of one run.
#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// A command for the binary, with `BITMAP_CORE_KERNEL` removed so each
/// test decides the kernel (CI runs the suite under every kernel; tests
/// that plan inherit it, tests about the variable set it).
fn command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_prefetch-plan"));
    command.current_dir(workspace_root());
    command
}

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(command: &mut Command) -> Run {
    let output = command.output().expect("the binary runs");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// Runs `plan` with `args` on `stdin`.
fn plan(args: &[&str], stdin: &str) -> Run {
    run(command().arg("plan").args(args).write_stdin(stdin))
}

/// Runs `plan` on `stdin`, asserts success, and returns the answer lines.
fn answers(args: &[&str], stdin: &str) -> Vec<String> {
    let run = plan(args, stdin);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stderr, "", "{run:?}");
    run.stdout.lines().map(str::to_owned).collect()
}

/// The answer line for a plan and retention list, as the binary writes it.
fn answer_line(plan: &[(usize, &[usize])], retain: &[bool], prefix_len: usize) -> String {
    let entries: Vec<String> = plan.iter().map(|(adapter, keys)| format!("\"{adapter}\": {}", list(keys))).collect();
    format!("{{\"plan\": {{{}}}, \"retain\": {}, \"prefix_len\": {prefix_len}}}", entries.join(", "), list(retain))
}

fn list<T: ToString>(items: &[T]) -> String {
    format!("[{}]", items.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))
}

fn read_example(name: &str) -> String {
    std::fs::read_to_string(workspace_root().join("examples").join(name)).expect("example file")
}

/// The LMCache cases of the prefetch-policy issue: the case (keys numbered
/// from 0) and the plan LMCache expects.
type LmcacheCase = (&'static str, &'static [(usize, &'static [usize])]);

const LMCACHE_CASES: &[LmcacheCase] = &[
    (r#"{"num_keys": 3, "adapters": [0], "lookup": {"0": [0, 1, 2]}}"#, &[(0, &[0, 1, 2])]),
    (r#"{"num_keys": 4, "adapters": [0], "lookup": {"0": [0, 2]}}"#, &[(0, &[0, 2])]),
    (r#"{"num_keys": 3, "adapters": [0, 1], "lookup": {"0": [0, 1], "1": [1, 2]}}"#, &[(0, &[0, 1]), (1, &[2])]),
    (r#"{"num_keys": 4, "adapters": [0, 1], "lookup": {"0": [0, 1], "1": [2, 3]}}"#, &[(0, &[0, 1]), (1, &[2, 3])]),
    (r#"{"num_keys": 3, "adapters": [0, 1], "lookup": {"0": [], "1": []}}"#, &[]),
    (r#"{"num_keys": 3, "adapters": [], "lookup": {}}"#, &[]),
    (r#"{"num_keys": 0, "adapters": [], "lookup": {}}"#, &[]),
    (r#"{"num_keys": 0, "adapters": [0], "lookup": {"0": []}}"#, &[]),
    (r#"{"num_keys": 1, "adapters": [1, 0], "lookup": {"0": [0], "1": [0]}}"#, &[(0, &[0])]),
    (
        r#"{"num_keys": 5, "adapters": [0, 1, 2], "lookup": {"0": [0, 3], "1": [1, 2, 3], "2": [2, 3, 4]}}"#,
        &[(0, &[0, 3]), (1, &[1, 2]), (2, &[4])],
    ),
    (r#"{"num_keys": 2, "adapters": [0, 1], "lookup": {"1": [0, 1]}}"#, &[(1, &[0, 1])]),
    (r#"{"num_keys": 2, "adapters": [1], "lookup": {"1": [0, 1]}}"#, &[(1, &[0, 1])]),
    (
        r#"{"num_keys": 3, "adapters": [0, 1, 2], "lookup": {"0": [0, 1, 2], "1": [0, 1, 2], "2": [0, 1, 2]}}"#,
        &[(0, &[0, 1, 2])],
    ),
];

/// The expected answer to an LMCache case under `default` (nothing
/// retained) without trimming.
fn expected_default_answer(plan: &[(usize, &[usize])]) -> String {
    let mut planned: Vec<usize> = plan.iter().flat_map(|(_, keys)| keys.iter().copied()).collect();
    planned.sort_unstable();
    let prefix_len = planned.iter().enumerate().take_while(|&(i, &key)| i == key).count();
    answer_line(plan, &vec![false; planned.len()], prefix_len)
}

#[test]
fn every_lmcache_case_one_at_a_time() {
    for &(case, plan) in LMCACHE_CASES {
        assert_eq!(answers(&[], case), [expected_default_answer(plan)], "{case}");
    }
}

#[test]
fn lmcache_cases_as_ndjson_in_input_order() {
    let input: String = LMCACHE_CASES.iter().map(|(case, _)| format!("{case}\n")).collect();
    let expected: Vec<String> = LMCACHE_CASES.iter().map(|(_, plan)| expected_default_answer(plan)).collect();
    assert_eq!(answers(&[], &input), expected);
    // "-" is standard input too.
    assert_eq!(answers(&["-"], &input), expected);
}

#[test]
fn the_readme_example_reproduces_its_expected_output() {
    let run = run(command().args(["plan", "examples/lmcache.ndjson"]));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, read_example("lmcache.expected.ndjson"));
    assert_eq!(run.stderr, "");
    // The same answers from the same cases with 0/1 strings.
    let run = self::run(command().args(["plan", "examples/bitstrings.ndjson"]));
    assert_eq!(run.stdout, read_example("lmcache.expected.ndjson"), "{run:?}");
}

#[test]
fn the_expected_file_holds_the_issues_answers() {
    // The issue's worked example, written out by hand.
    let expected = read_example("lmcache.expected.ndjson");
    assert!(expected.lines().any(|line| line
        == r#"{"plan": {"0": [0, 3], "1": [1, 2], "2": [4]}, "retain": [false, false, false, false, false], "prefix_len": 5}"#));
    assert_eq!(expected.lines().count(), read_example("lmcache.ndjson").lines().count());
}

#[test]
fn both_lookup_encodings_give_the_same_answers() {
    for (indices, bits) in [
        (r#"{"0": [0, 3], "1": [1, 2, 3], "2": [2, 3, 4]}"#, r#"{"0": "10010", "1": "01110", "2": "00111"}"#),
        (r#"{"0": [], "1": [4, 0]}"#, r#"{"0": "00000", "1": "10001"}"#),
        (r#"{"0": [0, 3], "1": "01110"}"#, r#"{"0": "10010", "1": [3, 2, 1, 2]}"#),
    ] {
        let case = |lookup: &str| format!(r#"{{"num_keys": 5, "adapters": [0, 1, 2], "lookup": {lookup}}}"#);
        assert_eq!(answers(&[], &case(indices)), answers(&[], &case(bits)), "{indices} / {bits}");
    }
}

#[test]
fn large_cases_in_both_encodings() {
    let num_keys = 100_003;
    let bits: String = (0..num_keys).map(|key| if key % 3 == 0 { '1' } else { '0' }).collect();
    let evens: Vec<String> = (0..num_keys).step_by(2).map(|key| key.to_string()).collect();
    let case = format!(
        r#"{{"num_keys": {num_keys}, "adapters": [{{"index": 1, "name": "ssd"}}, 0], "lookup": {{"0": "{bits}", "1": [{}]}}}}"#,
        evens.join(",")
    );
    let lines = answers(&["--policy", "retain"], &case);
    assert_eq!(lines.len(), 1);
    let answer: Value = serde_json::from_str(&lines[0]).unwrap();
    let zero: Vec<u64> = (0..num_keys).step_by(3).collect();
    let one: Vec<u64> = (0..num_keys).filter(|key| key % 2 == 0 && key % 3 != 0).collect();
    assert_eq!(answer["plan"]["0"], serde_json::json!(zero));
    assert_eq!(answer["plan"]["1"], serde_json::json!(one));
    assert_eq!(answer["retain"].as_array().map(Vec::len), Some(zero.len() + one.len()));
    assert!(answer["retain"].as_array().unwrap().iter().all(|r| r == true));
    assert_eq!(answer["prefix_len"], 1);
}

#[test]
fn a_single_object_over_several_lines() {
    let run = run(command().args(["plan", "examples/single-case.json"]));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, format!("{}\n", answer_line(&[(0, &[0, 1, 5]), (1, &[2, 3]), (2, &[4, 6])], &[true; 7], 7)));
    // Pretty-printed cases mixed with NDJSON ones.
    let input = "{\n  \"num_keys\": 2,\n  \"adapters\": [0],\n  \"lookup\": {\"0\": [\n    1\n  ]}\n}\n\
                 {\"num_keys\": 1, \"adapters\": [0], \"lookup\": {\"0\": \"1\"}}\n";
    assert_eq!(answers(&[], input), [answer_line(&[(0, &[1])], &[false], 0), answer_line(&[(0, &[0])], &[false], 1)]);
}

#[test]
fn trim_prefix_cuts_the_plan_and_its_retentions() {
    let run = run(command().args(["plan", "--trim", "prefix", "examples/trim.ndjson"]));
    assert_eq!(run.code, Some(0), "{run:?}");
    let expected = [
        answer_line(&[(0, &[0, 1]), (1, &[2])], &[false; 3], 3),
        answer_line(&[(0, &[0, 1]), (1, &[2])], &[true; 3], 3),
        answer_line(&[], &[], 0),
        answer_line(&[(0, &[0, 1]), (1, &[2, 3])], &[false; 4], 4),
    ];
    assert_eq!(run.stdout.lines().collect::<Vec<_>>(), expected);
    // Untrimmed, the same file plans every held key.
    let untrimmed = self::run(command().args(["plan", "examples/trim.ndjson"]));
    assert_eq!(
        untrimmed.stdout.lines().next(),
        Some(answer_line(&[(0, &[0, 1, 4, 5]), (1, &[2])], &[false; 5], 3).as_str())
    );
}

#[test]
fn policy_from_the_case_else_the_option_else_default() {
    let case = r#"{"num_keys": 2, "adapters": [0], "lookup": {"0": "11"}}"#;
    let retained = r#"{"num_keys": 2, "adapters": [0], "lookup": {"0": "11"}, "policy": "retain"}"#;
    let input = format!("{case}\n{retained}\n");
    let plan_line = |retain: bool| answer_line(&[(0, &[0, 1])], &[retain; 2], 2);
    assert_eq!(answers(&[], &input), [plan_line(false), plan_line(true)]);
    assert_eq!(answers(&["--policy", "retain"], &input), [plan_line(true), plan_line(true)]);
    let defaulted = r#"{"num_keys": 2, "adapters": [0], "lookup": {"0": "11"}, "policy": "default"}"#;
    assert_eq!(answers(&["--policy", "retain"], defaulted), [plan_line(false)]);
}

#[test]
fn balanced_example_shares_replicated_keys_by_weight() {
    let run = run(command().args(["plan", "examples/balanced.ndjson"]));
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""), "{run:?}");
    let all: Vec<usize> = (0..12).collect();
    let expected = [
        // `default`: everything from adapter 0.
        answer_line(&[(0, &all)], &[false; 12], 12),
        // `balanced`, equal weights: a third each, in key order.
        answer_line(&[(0, &all[..4]), (1, &all[4..8]), (2, &all[8..])], &[false; 12], 12),
        // `balanced`, weights 2:1:1.
        answer_line(&[(0, &all[..6]), (1, &all[6..9]), (2, &all[9..])], &[false; 12], 12),
        // Partial replicas, weights 1 : 0.5 : 0.5: adapter 0 alone holds
        // keys 0-1, adapter 2 alone key 8; the largest weighted load is 5.
        answer_line(&[(0, &[0, 1, 2, 3, 4]), (1, &[6, 7]), (2, &[5, 8])], &[false; 9], 9),
    ];
    assert_eq!(run.stdout.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn adapter_weights_are_checked() {
    assert_bad_case(
        r#"{"num_keys": 1, "adapters": [{"index": 0, "weight": 0}], "lookup": {}}"#,
        "line 2: adapters[0].weight: expected an adapter weight (a finite number greater than 0), found `0`",
    );
    assert_bad_case(
        r#"{"num_keys": 1, "adapters": [0, {"index": 1, "weight": -2.5}], "lookup": {}, "policy": "balanced"}"#,
        "line 2: adapters[1].weight: expected an adapter weight (a finite number greater than 0), found `-2.5`",
    );
    // A weight is accepted by every policy; only `balanced` reads it.
    let case = r#"{"num_keys": 4, "adapters": [{"index": 0, "weight": 3}, {"index": 1, "weight": 1}],
                   "lookup": {"0": "1111", "1": "1111"}}"#;
    let case = case.replace('\n', " ");
    assert_eq!(answers(&[], &case), [answer_line(&[(0, &[0, 1, 2, 3])], &[false; 4], 4)]);
    assert_eq!(answers(&["--policy", "balanced"], &case), [answer_line(&[(0, &[0, 1, 2]), (1, &[3])], &[false; 4], 4)]);
}

#[test]
fn empty_input_and_blank_lines() {
    assert_eq!(answers(&[], ""), Vec::<String>::new());
    assert_eq!(answers(&[], "\n  \n\r\n"), Vec::<String>::new());
    let case = r#"{"num_keys": 1, "adapters": [0], "lookup": {"0": [0]}}"#;
    assert_eq!(answers(&[], &format!("\n\n{case}\n\n{case}")).len(), 2);
}

/// Runs a bad case after a good one and before another good one; checks
/// exit status 2, the first answer alone on stdout, and the message.
fn assert_bad_case(bad: &str, message: &str) {
    let good = r#"{"num_keys": 1, "adapters": [0], "lookup": {"0": [0]}}"#;
    let run = plan(&[], &format!("{good}\n{bad}\n{good}\n"));
    assert_eq!(run.code, Some(2), "{bad}\n{run:?}");
    assert_eq!(run.stdout, format!("{}\n", answer_line(&[(0, &[0])], &[false], 1)), "{bad}");
    assert_eq!(run.stderr, format!("prefetch-plan: {message}\n"), "{bad}");
    assert!(!run.stderr.contains("panicked"));
}

#[test]
fn malformed_json() {
    assert_bad_case(r#"{"num_keys": 1, "adapters": [0] "lookup": {}}"#, "line 2, column 33: expected `,` or `}`");
    assert_bad_case(r#"{"num_keys": 1, "adapters": [0], "lookup": {}}}"#, "line 2, column 47: trailing characters");
    assert_bad_case(
        "not json",
        "line 2, column 1: expected a case: a JSON object with num_keys, adapters and lookup, found `not json`",
    );
    assert_bad_case(
        r#"[1, [0], {}]"#,
        "line 2, column 1: expected a case: a JSON object with num_keys, adapters and lookup, found `[1, [0], {}]`",
    );
}

#[test]
fn an_object_left_open_at_the_end_of_the_input() {
    let run = plan(&[], "{\"num_keys\": 1,\n\"adapters\": [0],\n");
    assert_eq!(run.code, Some(2));
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr, "prefetch-plan: line 2 (in the case that starts on line 1): EOF while parsing a value\n");
}

#[test]
fn missing_and_unknown_fields() {
    assert_bad_case(r#"{"num_keys": 1, "adapters": [0]}"#, "line 2, column 32: missing field `lookup`");
    assert_bad_case(r#"{"adapters": [0], "lookup": {}}"#, "line 2, column 31: missing field `num_keys`");
    assert_bad_case(
        r#"{"num_keys": 1, "adapters": [0], "lookup": {}, "polcy": "retain"}"#,
        "line 2, column 54: unknown field `polcy`, expected one of `num_keys`, `adapters`, `lookup`, `policy`",
    );
    assert_bad_case(
        r#"{"num_keys": 1, "adapters": [{"index": 0, "speed": 2.0}], "lookup": {}}"#,
        "line 2: adapters[0]: unknown field `speed`, expected one of `index`, `name`, `weight`",
    );
}

#[test]
fn mistyped_fields() {
    assert_bad_case(
        r#"{"num_keys": -1, "adapters": [0], "lookup": {}}"#,
        "line 2: num_keys: expected a number of keys (an integer from 0), found `-1`",
    );
    assert_bad_case(
        r#"{"num_keys": 1, "adapters": [0, "ssd"], "lookup": {}}"#,
        r#"line 2: adapters[1]: expected an adapter: an index (an integer from 0) or an object such as {"index": 0, "name": "ssd0"}, found `"ssd"`"#,
    );
    assert_bad_case(
        r#"{"num_keys": 1, "adapters": [0], "lookup": {"0": 1}}"#,
        r#"line 2: lookup."0": expected the keys the adapter holds: an array of key indices or a string of 0/1 characters, found `1`"#,
    );
    assert_bad_case(
        r#"{"num_keys": 1, "adapters": [0], "lookup": {"0": [true]}}"#,
        r#"line 2: lookup."0"[0]: invalid type: boolean `true`, expected a key index (an integer from 0)"#,
    );
    assert_bad_case(
        r#"{"num_keys": 1, "adapters": [0], "lookup": {"first": [0]}}"#,
        r#"line 2: lookup."first": a lookup key must be an adapter index (decimal digits), found "first""#,
    );
    assert_bad_case(
        r#"{"num_keys": 1, "adapters": [0], "lookup": {}, "policy": ["retain"]}"#,
        r#"line 2: policy: expected a policy name (a string), found `["retain"]`"#,
    );
}

#[test]
fn key_index_out_of_range() {
    assert_bad_case(
        r#"{"num_keys": 5, "adapters": [0, 1], "lookup": {"0": [0], "1": [0, 4, 5, 1]}}"#,
        r#"line 2: lookup."1"[2]: key index 5 is out of range for num_keys 5"#,
    );
    assert_bad_case(
        r#"{"num_keys": 0, "adapters": [0], "lookup": {"0": [0]}}"#,
        r#"line 2: lookup."0"[0]: key index 0 is out of range for num_keys 0"#,
    );
}

#[test]
fn bit_strings_of_the_wrong_length_or_with_other_characters() {
    assert_bad_case(
        r#"{"num_keys": 5, "adapters": [0], "lookup": {"0": "0110"}}"#,
        r#"line 2: lookup."0": the bit string has 4 characters, but num_keys is 5"#,
    );
    assert_bad_case(
        r#"{"num_keys": 3, "adapters": [0], "lookup": {"0": "0111"}}"#,
        r#"line 2: lookup."0": the bit string has 4 characters, but num_keys is 3"#,
    );
    assert_bad_case(
        r#"{"num_keys": 4, "adapters": [0], "lookup": {"0": "01x1"}}"#,
        r#"line 2: lookup."0": invalid character 'x' at position 2 of the bit string: expected '0' or '1'"#,
    );
    assert_bad_case(
        r#"{"num_keys": 4, "adapters": [0], "lookup": {"0": "0112"}}"#,
        r#"line 2: lookup."0": invalid character '2' at position 3 of the bit string: expected '0' or '1'"#,
    );
}

#[test]
fn duplicate_adapter_indices() {
    assert_bad_case(
        r#"{"num_keys": 1, "adapters": [0, 1, {"index": 1, "name": "again"}], "lookup": {}}"#,
        "line 2: adapters[2]: adapter index 1 is listed more than once (first at adapters[1])",
    );
    assert_bad_case(
        r#"{"num_keys": 1, "adapters": [0], "lookup": {"0": [0], "0": "1"}}"#,
        r#"line 2: lookup."0": adapter 0 has more than one lookup entry"#,
    );
}

#[test]
fn unknown_policy_lists_the_known_ones() {
    assert_bad_case(
        r#"{"num_keys": 1, "adapters": [0], "lookup": {}, "policy": "fastest"}"#,
        r#"line 2: policy: unknown prefetch policy "fastest"; known: balanced, default, retain"#,
    );
    // As an option: refused before any input is read.
    let run = plan(&["--policy", "fastest"], "not even JSON");
    assert_eq!(run.code, Some(2));
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "prefetch-plan: --policy: unknown prefetch policy \"fastest\"; known: balanced, default, retain\n"
    );
}

#[test]
fn errors_in_a_multi_line_case_name_the_line_of_the_value() {
    let input = "{\"num_keys\": 0, \"adapters\": [], \"lookup\": {}}\n{\n  \"num_keys\": 3,\n  \"adapters\": [0],\n  \
                 \"lookup\": {\n    \"0\": \"01\"\n  }\n}\n";
    let run = plan(&[], input);
    assert_eq!(run.code, Some(2));
    assert_eq!(run.stdout.lines().count(), 1);
    assert_eq!(
        run.stderr,
        "prefetch-plan: line 6 (in the case that starts on line 2): lookup.\"0\": the bit string has 2 characters, \
         but num_keys is 3\n"
    );
}

#[test]
fn a_bad_case_stops_the_run_so_answers_stay_aligned() {
    let good = |n: usize| format!(r#"{{"num_keys": {n}, "adapters": [0], "lookup": {{"0": "{}"}}}}"#, "1".repeat(n));
    let input = format!("{}\n{}\n{{\"num_keys\": 1}}\n{}\n", good(1), good(2), good(3));
    let run = plan(&[], &input);
    assert_eq!(run.code, Some(2));
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        [answer_line(&[(0, &[0])], &[false], 1), answer_line(&[(0, &[0, 1])], &[false; 2], 2)]
    );
    assert_eq!(run.stderr.lines().count(), 1, "{run:?}");
    assert!(run.stderr.starts_with("prefetch-plan: line 3, column 15: missing field `adapters`"), "{run:?}");
}

#[test]
fn invalid_utf8_is_bad_input() {
    let mut input = br#"{"num_keys": 1, "adapters": [0], "lookup": {"0": "#.to_vec();
    input.extend_from_slice(b"\"\xff\"}}\n");
    let run = run(command().arg("plan").write_stdin(input));
    assert_eq!(run.code, Some(2));
    assert_eq!(run.stderr, "prefetch-plan: line 1, column 51: the input is not valid UTF-8\n");
}

#[test]
fn the_memory_limit_is_an_option() {
    let case = r#"{"num_keys": 100000, "adapters": [0, 1], "lookup": {"0": [5], "1": [6]}}"#;
    assert_eq!(answers(&[], case).len(), 1);
    let run = plan(&["--max-lookup-mib", "0"], case);
    assert_eq!(run.code, Some(2));
    assert_eq!(
        run.stderr,
        "prefetch-plan: line 1: lookup.\"0\": the lookup bitmaps would take 12504 bytes, more than the limit of 0 bytes\n"
    );
    let run = plan(&[], r#"{"num_keys": 100000000000000, "adapters": [0], "lookup": {"0": [5]}}"#);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("more than the limit of 1073741824 bytes"), "{run:?}");
}

#[test]
fn a_file_that_cannot_be_read_is_an_io_failure() {
    let run = run(command().args(["plan", "examples/no-such-file.ndjson"]));
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stdout, "");
    assert!(run.stderr.starts_with("prefetch-plan: cannot open examples/no-such-file.ndjson: "), "{run:?}");
    let run = self::run(command().args(["plan", "examples"]));
    assert_eq!(run.code, Some(1), "a directory: {run:?}");
}

#[test]
fn a_bad_kernel_variable_is_bad_input_not_a_panic() {
    let run = run(command().args(["plan", "examples/lmcache.ndjson"]).env("BITMAP_CORE_KERNEL", "sse9"));
    assert_eq!(run.code, Some(2));
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "prefetch-plan: BITMAP_CORE_KERNEL=\"sse9\": unknown kernel \"sse9\": expected one of scalar, portable, avx2, \
         avx512, neon, auto\n"
    );
}

#[test]
fn every_kernel_gives_the_same_answers() {
    let expected = read_example("lmcache.expected.ndjson");
    for kernel in ["scalar", "portable", "auto"] {
        let run = run(command().args(["plan", "examples/lmcache.ndjson"]).env("BITMAP_CORE_KERNEL", kernel));
        assert_eq!(run.code, Some(0), "{kernel}: {run:?}");
        assert_eq!(run.stdout, expected, "{kernel}");
    }
}

fn features_json(kernel: Option<&str>) -> (Run, Value) {
    let mut command = command();
    command.args(["features", "--json"]);
    match kernel {
        Some(kernel) => command.env("BITMAP_CORE_KERNEL", kernel),
        None => command.env_remove("BITMAP_CORE_KERNEL"),
    };
    let run = run(&mut command);
    assert_eq!(run.stdout.lines().count(), 1, "{run:?}");
    let value = serde_json::from_str(&run.stdout).expect("features --json is JSON");
    (run, value)
}

#[test]
fn features_json_reports_the_kernels() {
    let (run, report) = features_json(None);
    assert_eq!(run.code, Some(0));
    assert_eq!(report["arch"], std::env::consts::ARCH);
    let kernels: Vec<&str> = report["kernels"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
    assert_eq!(kernels[..2], ["scalar", "portable"]);
    // Not forced: the fastest, which is the last listed.
    assert_eq!(report["active"], *kernels.last().unwrap());
    assert_eq!(report["forced_by_env"], Value::Null);
    let features = report["features"].as_object().unwrap();
    assert!(features.values().all(Value::is_boolean));
    if cfg!(target_arch = "x86_64") {
        for name in ["popcnt", "avx2", "avx512f", "avx512bw", "avx512vl", "avx512vpopcntdq"] {
            assert!(features.contains_key(name), "{name}");
        }
        assert_eq!(
            kernels.contains(&"avx2"),
            report["features"]["avx2"] == true && report["features"]["popcnt"] == true
        );
        assert_eq!(kernels.contains(&"avx512"), features.values().all(|has| *has == true));
    }
    if cfg!(target_arch = "aarch64") {
        assert_eq!(report["features"]["neon"], true);
    }
}

#[test]
fn features_honours_the_kernel_variable() {
    let (run, report) = features_json(Some("scalar"));
    assert_eq!(run.code, Some(0));
    assert_eq!((&report["active"], &report["forced_by_env"]), (&Value::from("scalar"), &Value::from("scalar")));
    let (run, report) = features_json(Some("auto"));
    assert_eq!(run.code, Some(0));
    assert_eq!(report["forced_by_env"], "auto");
    // A kernel this CPU cannot run (one of them never exists on a machine).
    let missing = if cfg!(target_arch = "aarch64") { "avx2" } else { "neon" };
    let (run, report) = features_json(Some(missing));
    assert_eq!(run.code, Some(2));
    assert_eq!(report["active"], Value::Null);
    assert!(
        run.stderr.starts_with(&format!(
            "prefetch-plan: BITMAP_CORE_KERNEL=\"{missing}\": kernel `{missing}` is not available"
        ))
    );
}

#[test]
fn features_as_text() {
    let run = run(command().arg("features").env_remove("BITMAP_CORE_KERNEL"));
    assert_eq!(run.code, Some(0));
    let labels: Vec<&str> = run.stdout.lines().map(|line| line.split(':').next().unwrap()).collect();
    assert_eq!(labels, ["arch", "features", "kernels", "active"]);
    assert!(run.stdout.contains("scalar, portable"));
}

#[test]
fn bench_runs_and_prints_its_table() {
    let run = run(command().args(["bench", "--small", "64", "--large", "1Ki", "--adapters", "2", "--measure-ms", "1"]));
    assert_eq!(run.code, Some(0), "{run:?}");
    // Not a terminal: no progress on stderr.
    assert_eq!(run.stderr, "");
    let lines: Vec<&str> = run.stdout.lines().collect();
    let header = lines.iter().position(|line| line.starts_with("kernel")).expect("a header row");
    let columns: Vec<&str> = lines[header].split_whitespace().collect();
    assert_eq!(
        columns,
        ["kernel", "operation", "bits", "bytes", "ns/call", "GB/s", "copy", "ns", "copy", "GB/s", "x", "copy"]
    );
    let rows: Vec<Vec<&str>> = lines[header + 1..].iter().map(|line| line.split_whitespace().collect()).collect();
    let (_, features) = features_json(None);
    let kernels = features["kernels"].as_array().unwrap().len();
    assert_eq!(rows.len(), 2 * (3 * kernels + 1), "{}", run.stdout);
    for size in ["64", "1Ki"] {
        for operation in ["popcount", "or_assign", "first_wins", "plan"] {
            assert!(rows.iter().any(|row| row[1] == operation && row[2] == size), "{operation} at {size}");
        }
    }
    // Sizes: one word; 16 words, twice for the two adapters.
    assert!(rows.iter().any(|row| row[1] == "popcount" && row[2] == "64" && row[3..5] == ["8", "B"]));
    assert!(rows.iter().any(|row| row[1] == "first_wins" && row[2] == "1Ki" && row[3..5] == ["256", "B"]));
}

#[test]
fn bench_json_and_bad_options() {
    let run = run(command().args(["bench", "--small", "100", "--large", "200", "--measure-ms", "1", "--json"]));
    assert_eq!(run.code, Some(0), "{run:?}");
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["adapters"], 3);
    for row in report["rows"].as_array().unwrap() {
        assert!(row["ns_per_call"].as_f64().unwrap() > 0.0, "{row}");
        assert!(row["gb_per_s"].as_f64().unwrap() > 0.0, "{row}");
    }
    for args in [&["--small", "0"][..], &["--adapters", "0"], &["--large", "lots"], &["--measure-ms", "0"]] {
        let run = self::run(command().arg("bench").args(args));
        assert_eq!(run.code, Some(2), "{args:?}: {run:?}");
        assert_eq!(run.stdout, "");
    }
}

#[test]
fn help_describes_the_commands_and_the_rules() {
    let run = run(command().arg("--help"));
    assert_eq!(run.code, Some(0));
    for text in ["plan", "features", "bench", "Exit status"] {
        assert!(run.stdout.contains(text), "{text}: {}", run.stdout);
    }
    let run = self::run(command().args(["plan", "--help"]));
    assert_eq!(run.code, Some(0));
    for text in ["--policy", "--trim", "A bad case stops the run", "Exit status", "\"prefix_len\""] {
        assert!(run.stdout.contains(text), "{text}: {}", run.stdout);
    }
    // No subcommand: a usage error.
    assert_eq!(self::run(&mut command()).code, Some(2));
}

// ---------------------------------------------------------------------------
// Hybrid models: `hit`, and grid cases in `plan`
// ---------------------------------------------------------------------------

/// Runs `hit` with `args` on `stdin`.
fn hit(args: &[&str], stdin: &str) -> Run {
    run(command().arg("hit").args(args).write_stdin(stdin))
}

#[test]
fn the_hit_example_reproduces_its_expected_output() {
    let run = run(command().args(["hit", "examples/hit.ndjson"]));
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""), "{run:?}");
    assert_eq!(run.stdout, read_example("hit.expected.ndjson"));
    // The issue's worked cases, written out by hand.
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], r#"{"hit": 4, "retain": [0, 2, 4, 5, 6, 7]}"#);
    assert_eq!(lines[1], r#"{"hit": 6, "retain": [[0, 1, 2, 3, 4, 5], [4, 5]]}"#);
    assert_eq!(lines[2], r#"{"hit": 4, "retain": [[0, 1, 2, 3], [3]]}"#);
    assert_eq!(lines[3], r#"{"hit": 1, "retain": [0, 1]}"#);
    let adversarial: Value = serde_json::from_str(lines[4]).unwrap();
    assert_eq!(adversarial["hit"], 130);
    // Groups 0 and 1 (full) keep chunks 0..130, group 2 (window 8)
    // 122..130, group 3 (window 32) 98..130, group 4 (Mamba) chunk 129;
    // all 4 ranks of each.
    let (groups, ranks) = (5, 4);
    let mut expected = Vec::new();
    for chunk in 0..130u64 {
        for (group, lo) in [(0, 0), (1, 0), (2, 122), (3, 98), (4, 129)] {
            if chunk >= lo {
                expected.extend((0..ranks).map(|rank| chunk * groups * ranks + group * ranks + rank));
            }
        }
    }
    assert_eq!(adversarial["retain"], serde_json::json!(expected));
    assert_eq!(lines[5], r#"{"hit": 0, "retain": []}"#);
}

#[test]
fn hit_reads_both_encodings_and_multi_line_cases() {
    let run = hit(
        &["-"],
        "{\"num_chunks\": 2, \"windows\": [-1, 1], \"found\": \"1111\"}\n\n{\n  \"rows\": [[0, 1], \"11\"],\n  \"windows\": [-1, 1],\n  \"num_chunks\": 2\n}\n",
    );
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""), "{run:?}");
    assert_eq!(run.stdout, "{\"hit\": 2, \"retain\": [0, 2, 3]}\n{\"hit\": 2, \"retain\": [[0, 1], [1]]}\n");
}

/// Runs a bad hit case between two good ones: exit status 2, the first
/// answer alone on stdout, and the message.
fn assert_bad_hit_case(bad: &str, message: &str) {
    let good = r#"{"rows": ["1"], "windows": [-1]}"#;
    let run = hit(&[], &format!("{good}\n{bad}\n{good}\n"));
    assert_eq!(run.code, Some(2), "{bad}\n{run:?}");
    assert_eq!(run.stdout, "{\"hit\": 1, \"retain\": [[0]]}\n", "{bad}");
    assert_eq!(run.stderr, format!("prefetch-plan: {message}\n"), "{bad}");
}

#[test]
fn bad_hit_cases_stop_the_run_with_their_line() {
    assert_bad_hit_case(
        r#"{"num_chunks": 2, "num_ranks": 0, "windows": [-1], "found": []}"#,
        "line 2: num_ranks: the number of ranks must be at least 1 (got 0)",
    );
    assert_bad_hit_case(
        r#"{"num_chunks": 2, "windows": [], "found": []}"#,
        "line 2: windows: the window list is empty: at least one group is needed",
    );
    assert_bad_hit_case(
        r#"{"num_chunks": -1, "windows": [-1], "found": []}"#,
        "line 2: num_chunks: the number of chunks must not be negative (got -1)",
    );
    assert_bad_hit_case(
        r#"{"rows": ["11", "111"], "windows": [-1, 2]}"#,
        "line 2: rows[1]: row 1 has 3 bits, but row 0 has 2",
    );
    assert_bad_hit_case(
        r#"{"rows": ["11"], "windows": [-1, 2]}"#,
        "line 2: rows: 1 rows but 2 windows: each row needs exactly one window",
    );
    assert_bad_hit_case(
        r#"{"num_chunks": 2, "windows": [-1], "found": [0, 2]}"#,
        "line 2: found[1]: index 2 is out of range for num_chunks × groups × ranks 2",
    );
    assert_bad_hit_case(
        r#"{"rows": ["11"], "windows": [-1], "extra": 1}"#,
        "line 2, column 41: unknown field `extra`, expected one of `windows`, `num_chunks`, `num_ranks`, `found`, `rows`",
    );
    assert_bad_hit_case(
        r#"{"windows": [-1], "rows": ["1"], "found": [0]}"#,
        "line 2: a hit case has `found` (flat) or `rows` (grouped), not both",
    );
    assert_bad_hit_case(
        "not json",
        "line 2, column 1: expected a hit case: a JSON object with windows and found or rows, found `not json`",
    );
    assert_bad_hit_case(
        r#"[[-1], ["1"]]"#,
        r#"line 2, column 1: expected a hit case: a JSON object with windows and found or rows, found `[[-1], ["1"]]`"#,
    );
}

#[test]
fn the_grid_plan_example_reproduces_its_expected_output() {
    let run = run(command().args(["plan", "examples/grid-plan.ndjson"]));
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""), "{run:?}");
    assert_eq!(run.stdout, read_example("grid-plan.expected.ndjson"));
    let lines: Vec<&str> = run.stdout.lines().collect();
    // L1 before L2.
    assert_eq!(lines[0], r#"{"l1": {"5": [[1, 2]]}, "l2": {"0": [[0, 3]]}, "hit": 4}"#);
    // The lower index wins by number.
    assert_eq!(lines[1], r#"{"l1": {}, "l2": {"2": [[1, 2]], "10": [[0]]}, "hit": 3}"#);
    // `full` keeps the cell past the gap.
    assert_eq!(lines[5], r#"{"l1": {"0": [[0, 1, 3], [1, 2]]}, "l2": {"3": [[], [0]]}, "hit": 2}"#);
}

#[test]
fn flat_and_grid_cases_mix_in_one_input() {
    let input = concat!(
        r#"{"num_keys": 2, "adapters": [0], "lookup": {"0": "11"}}"#,
        "\n",
        r#"{"windows": [-1], "num_chunks": 2, "l2": {"0": ["11"]}}"#,
        "\n"
    );
    assert_eq!(
        answers(&["--policy", "retain"], input),
        [answer_line(&[(0, &[0, 1])], &[true, true], 2), r#"{"l1": {}, "l2": {"0": [[0, 1]]}, "hit": 2}"#.to_owned()]
    );
}

#[test]
fn bad_grid_cases_stop_the_run_with_their_line() {
    let good = r#"{"num_keys": 1, "adapters": [0], "lookup": {"0": [0]}}"#;
    for (bad, message) in [
        (
            r#"{"windows": [-1, 4], "num_chunks": 2, "l1": {"0": ["11", "11"]}, "fetching": "full"}"#,
            "line 2: row 1 has sliding window 4, which the full fetching policy does not allow",
        ),
        (
            r#"{"windows": [-1], "num_chunks": 2, "l1": {"0": ["11", "11"]}}"#,
            r#"line 2: l1."0": 2 rows but 1 windows: each row needs exactly one window"#,
        ),
        (
            r#"{"windows": [-1], "num_chunks": 2, "l2": {"0": [[0, 2]]}}"#,
            r#"line 2: l2."0"[0][1]: index 2 is out of range for num_chunks 2"#,
        ),
        (
            r#"{"windows": [-1], "num_chunks": 2, "l2": {"0": ["111"]}}"#,
            r#"line 2: l2."0"[0]: the bit string has 3 characters, but num_chunks is 2"#,
        ),
        (
            r#"{"windows": [-1], "num_chunks": 2, "fetching": "most"}"#,
            r#"line 2: fetching: expected a fetching policy: "prefix" or "full", found `"most"`"#,
        ),
        (
            r#"{"windows": [], "num_chunks": 2}"#,
            "line 2: windows: the window list is empty: at least one group is needed",
        ),
    ] {
        let run = plan(&[], &format!("{good}\n{bad}\n{good}\n"));
        assert_eq!(run.code, Some(2), "{bad}\n{run:?}");
        assert_eq!(run.stdout, format!("{}\n", answer_line(&[(0, &[0])], &[false], 1)), "{bad}");
        assert_eq!(run.stderr, format!("prefetch-plan: {message}\n"), "{bad}");
    }
}

/// `[workspace.package] version` of the root Cargo.toml: the one place the
/// version is written (the crates and the Python package inherit it).
fn workspace_version() -> String {
    let manifest = std::fs::read_to_string(workspace_root().join("Cargo.toml")).expect("the workspace Cargo.toml");
    let section = manifest.split("[workspace.package]").nth(1).expect("a [workspace.package] section");
    let line = section.lines().find(|line| line.starts_with("version = ")).expect("a version in [workspace.package]");
    line.trim_start_matches("version = ").trim_matches('"').to_owned()
}

#[test]
fn version_is_the_workspace_version() {
    let version = workspace_version();
    let run = run(command().arg("--version"));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, format!("prefetch-plan {version}\n"));
    // Cargo needs a version beside each path dependency to publish, and it
    // cannot inherit one: those requirements must name this version.
    let manifest = std::fs::read_to_string(workspace_root().join("Cargo.toml")).unwrap();
    let internal: Vec<&str> = manifest.lines().filter(|line| line.contains("path = \"crates/")).collect();
    // bitmap-core, prefetch-policy, kv-replay, prefetch-plan and tier-state.
    assert_eq!(internal.len(), 5, "{internal:?}");
    for line in internal {
        assert!(line.contains(&format!("version = \"{version}\"")), "{line} does not require version {version}");
    }
}
