//! Every kind of bad trace line is reported with its line and field, and
//! nothing is returned from a trace that does not parse.

use kv_replay::{Trace, TraceError, TraceErrorKind, TraceOptions};

fn error(text: &str) -> TraceError {
    Trace::parse(text.as_bytes(), &TraceOptions::default()).unwrap_err()
}

/// The error of a trace whose bad line is line 3, after two good ones and
/// a blank line (blank lines count).
fn third_line(line: &str) -> TraceError {
    let error = error(&format!("{{\"hash_ids\": [1]}}\n\n{line}\n{{\"keys\": [2]}}\n"));
    assert_eq!(error.line(), 3, "{error}");
    error
}

#[test]
fn missing_keys() {
    let error = third_line(r#"{"timestamp": 0, "input_length": 512}"#);
    assert_eq!((error.field(), error.kind()), (None, &TraceErrorKind::MissingKeys));
    assert!(error.to_string().starts_with("line 3: missing field"), "{error}");
}

#[test]
fn a_non_integer_id_names_its_index() {
    for (line, found) in [
        (r#"{"hash_ids": [0, 1, 2.5]}"#, "2.5"),
        (r#"{"hash_ids": [0, 1, "x"]}"#, "\"x\""),
        (r#"{"hash_ids": [0, 1, -3]}"#, "-3"),
    ] {
        let error = third_line(line);
        assert_eq!(error.field(), Some("hash_ids[2]"), "{line}");
        assert!(matches!(error.kind(), TraceErrorKind::WrongType { found: f, .. } if f == found), "{error}");
    }
    let error = third_line(r#"{"keys": [7, null]}"#);
    assert_eq!(error.field(), Some("keys[1]"));
    let error = third_line(r#"{"keys": 7}"#);
    assert_eq!(error.field(), Some("keys"));
}

#[test]
fn input_length_must_be_positive() {
    for (line, found) in
        [(r#"{"input_length": 0, "hash_ids": []}"#, "0"), (r#"{"input_length": -5, "hash_ids": [1]}"#, "-5")]
    {
        let error = third_line(line);
        assert_eq!(error.field(), Some("input_length"));
        assert_eq!(error.kind(), &TraceErrorKind::NotPositive { found: found.to_owned() });
    }
    let error = third_line(r#"{"input_length": 12.5, "hash_ids": [1]}"#);
    assert_eq!(error.field(), Some("input_length"));
    assert!(matches!(error.kind(), TraceErrorKind::WrongType { .. }));
    let error = third_line(r#"{"tokens": "many", "keys": [1]}"#);
    assert_eq!(error.field(), Some("tokens"));
}

#[test]
fn ids_must_match_input_length() {
    let error = third_line(r#"{"input_length": 1025, "hash_ids": [1, 2]}"#);
    assert_eq!(error.field(), Some("hash_ids"));
    assert_eq!(error.kind(), &TraceErrorKind::LengthMismatch { ids: 2, tokens: 1025, block_tokens: 512, expected: 3 });
    assert_eq!(error.to_string(), "line 3: hash_ids: 2 ids, but 1025 tokens in blocks of 512 make 3");
    // The same for plain lines, and at another block size.
    let options = TraceOptions::default().with_block_tokens(16);
    let error = Trace::parse(&b"{\"keys\": [1, 2], \"tokens\": 33}\n"[..], &options).unwrap_err();
    assert_eq!((error.line(), error.field()), (1, Some("keys")));
    assert!(Trace::parse(&b"{\"keys\": [1, 2, 3], \"tokens\": 33}\n"[..], &options).is_ok());
}

#[test]
fn conflicting_fields() {
    assert_eq!(third_line(r#"{"hash_ids": [1], "keys": [1]}"#).field(), Some("keys"));
    assert_eq!(third_line(r#"{"hash_ids": [1], "input_length": 5, "tokens": 5}"#).field(), Some("tokens"));
}

#[test]
fn not_json_or_not_an_object() {
    let error = third_line(r#"{"hash_ids": [1"#);
    assert_eq!(error.field(), None);
    assert!(matches!(error.kind(), TraceErrorKind::Json { .. }));
    assert!(!error.to_string().contains("column"), "serde's position is the line's, not the trace's: {error}");
    let error = third_line("[1, 2]");
    assert!(error.to_string().contains("expected a JSON object"), "{error}");
}

#[test]
fn good_lines_with_extra_fields_parse() {
    let text = "{\"timestamp\": 27, \"input_length\": 6955, \"output_length\": 52, \"hash_ids\": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59]}\r\n";
    let trace = Trace::parse(text.as_bytes(), &TraceOptions::default()).unwrap();
    assert_eq!((trace.len(), trace.block_refs(), trace.tokens()), (1, 14, 6955));
}
