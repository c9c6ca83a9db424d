//! `from_untrusted`: raw bytes and text fed to every constructor that takes
//! untrusted input, and to the CLI's case parser. Each must return an error
//! or a valid result — never panic, never build a bitmap that breaks its
//! invariant — and an error must be the one the documentation promises.
//!
//! # What is checked
//!
//! - `Bitmap::from_bytes`, `Bitmap::from_words` and `Bitmap::from_word_slice`
//!   at lengths around the input's size (and one read from its first bytes):
//!   the result is
//!   `WrongSize`, `BitPastEnd` (naming the first such bit) or a bitmap with
//!   exactly the input's bits, computed here bit by bit.
//! - `Bitmap::from_indices` from the input's `u16`s: `IndexOutOfRange` for
//!   the first bad index, else exactly those bits.
//! - `FromStr for Bitmap` on the input as text and on a `0`/`1` string made
//!   from it: `InvalidChar` at the first other character, else the bits.
//! - serde's `Deserialize for Bitmap` on the input as JSON: a valid bitmap
//!   that serializes back to the same `len` and `bits`, or an error.
//! - `KernelKind::from_str` on the input as text.
//! - The CLI's case parser (`parse_case_with`, with a small allocation
//!   limit) on every line, and on the whole text: an accepted case has
//!   lookups of `num_keys` bits, distinct adapters, a registered policy and
//!   stays within the limit; it means what the JSON says (cross-checked
//!   against `serde_json::Value`); and it plans, with a plan that passes
//!   its policy's contract and an answer line that is valid JSON. A
//!   rejected one has an error message and a line within the text.
//! - The whole CLI path, `plan_cmd::run`, on the raw bytes: every answer
//!   line it writes is valid JSON, however the input ends.

use bitmap_core::kernel::KernelKind;
use bitmap_core::{Bitmap, BitmapError, SizeUnit};
use prefetch_plan::answer::{Planner, Trim};
use prefetch_plan::case::{Case, CaseLimits, parse_case_with};
use prefetch_plan::plan_cmd::{self, PlanOptions};
use prefetch_policy::{PlanContract, create_prefetch_policy, registered_prefetch_policies};
use serde_json::Value;

use crate::fill::{text_of, words_of};

/// The most bytes a case's lookups may take: large enough for every case
/// the fuzzer can write, small enough that `"num_keys": 1e15` is refused
/// rather than allocated.
pub const MAX_LOOKUP_BYTES: usize = 1 << 16;

/// Runs one input.
///
/// # Panics
///
/// On any finding.
pub fn check(data: &[u8]) {
    check_from_bytes(data);
    check_from_words(data);
    check_from_indices(data);
    check_bit_strings(data);
    check_serde(data);
    if let Ok(text) = std::str::from_utf8(data) {
        check_kernel_name(text);
        let limits = CaseLimits::with_max_lookup_bytes(MAX_LOOKUP_BYTES);
        for line in text.lines() {
            check_case(line, &limits);
        }
        if text.lines().nth(1).is_some() {
            check_case(text, &limits);
        }
    }
    check_cli(data);
}

/// The lengths to try raw input at: exactly what `units` units hold, a
/// little less and more, and one read from the input's first two bytes.
fn lengths(data: &[u8], units: usize, unit_bits: usize) -> Vec<usize> {
    let full = units * unit_bits;
    let mut lengths = vec![full, full.saturating_sub(1), full + 1, full.saturating_sub(unit_bits), full + unit_bits];
    if let [a, b, ..] = data {
        lengths.push(usize::from(u16::from_le_bytes([*a, *b])));
        lengths.push(full.saturating_sub(usize::from(*a) % unit_bits));
    }
    lengths
}

fn check_from_bytes(data: &[u8]) {
    for len in lengths(data, data.len(), 8) {
        let result = Bitmap::from_bytes(len, data);
        let bits: Vec<bool> = (0..data.len() * 8).map(|i| data[i / 8] >> (i % 8) & 1 == 1).collect();
        let expected = if data.len() != len.div_ceil(8) {
            Err(BitmapError::WrongSize { expected: len.div_ceil(8), actual: data.len(), unit: SizeUnit::Bytes })
        } else if let Some(index) = (len..bits.len()).find(|&i| bits[i]) {
            Err(BitmapError::BitPastEnd { index, len })
        } else {
            Ok(&bits[..len])
        };
        match (&result, expected) {
            (Ok(bitmap), Ok(bits)) => {
                check_valid(bitmap, bits, "from_bytes");
                assert_eq!(bitmap.as_bytes(), data, "from_bytes({len}): as_bytes");
            }
            (Err(error), Err(expected)) => assert_eq!(error, &expected, "from_bytes({len}, {} bytes)", data.len()),
            (result, expected) => panic!("from_bytes({len}, {data:?}): {result:?}, expected {expected:?}"),
        }
    }
}

fn check_from_words(data: &[u8]) {
    let words: Vec<u64> = data
        .chunks(8)
        .map(|chunk| {
            let mut bytes = [0; 8];
            bytes[..chunk.len()].copy_from_slice(chunk);
            u64::from_le_bytes(bytes)
        })
        .collect();
    let bits: Vec<bool> = (0..words.len() * 64).map(|i| words[i / 64] >> (i % 64) & 1 == 1).collect();
    for len in lengths(data, words.len(), 64) {
        let result = Bitmap::from_words(len, words.clone());
        assert_eq!(Bitmap::from_word_slice(len, &words), result, "from_word_slice({len}) differs from from_words");
        let expected = if words.len() != len.div_ceil(64) {
            Err(BitmapError::WrongSize { expected: len.div_ceil(64), actual: words.len(), unit: SizeUnit::Words })
        } else if let Some(index) = (len..bits.len()).find(|&i| bits[i]) {
            Err(BitmapError::BitPastEnd { index, len })
        } else {
            Ok(&bits[..len])
        };
        match (&result, expected) {
            (Ok(bitmap), Ok(bits)) => check_valid(bitmap, bits, "from_words"),
            (Err(error), Err(expected)) => assert_eq!(error, &expected, "from_words({len}, {} words)", words.len()),
            (result, expected) => panic!("from_words({len}, {words:?}): {result:?}, expected {expected:?}"),
        }
    }
}

fn check_from_indices(data: &[u8]) {
    let indices: Vec<usize> =
        data.chunks_exact(2).map(|pair| usize::from(u16::from_le_bytes([pair[0], pair[1]]))).collect();
    let len = data.first().map_or(0, |&first| usize::from(first) * 64 + usize::from(data.len() as u8));
    let result = Bitmap::from_indices(len, indices.iter().copied());
    match indices.iter().find(|&&index| index >= len) {
        Some(&index) => assert_eq!(result, Err(BitmapError::IndexOutOfRange { index, len }), "from_indices({len})"),
        None => {
            let mut bits = vec![false; len];
            indices.iter().for_each(|&index| bits[index] = true);
            check_valid(&result.expect("from_indices of indices in range"), &bits, "from_indices");
        }
    }
    let bools: Vec<bool> = data.iter().map(|&byte| byte & 1 == 1).collect();
    check_valid(&Bitmap::from_bools(&bools), &bools, "from_bools");
}

fn check_bit_strings(data: &[u8]) {
    // The input as text, most often rejected at some character.
    if let Ok(text) = std::str::from_utf8(data) {
        check_parse(text);
    }
    // A 0/1 string as long as the input, so that long valid strings are
    // common; then the same with one character replaced.
    let bits: Vec<bool> = data.iter().map(|&byte| byte & 1 == 1).collect();
    let mut text = text_of(&bits);
    check_parse(&text);
    if let [first, .., last] = data {
        let at = usize::from(*first) % text.len();
        let replacement = char::from_u32(u32::from(*last) * 3 + 1).unwrap_or('2');
        text.replace_range(at..=at, replacement.encode_utf8(&mut [0; 4]));
        check_parse(&text);
    }
}

fn check_parse(text: &str) {
    let result = text.parse::<Bitmap>();
    match text.char_indices().find(|&(_, c)| c != '0' && c != '1') {
        Some((position, found)) => {
            assert_eq!(result, Err(BitmapError::InvalidChar { position, found }), "parse {text:?}");
        }
        None => {
            let bits: Vec<bool> = text.bytes().map(|b| b == b'1').collect();
            let bitmap = result.expect("a 0/1 string parses");
            check_valid(&bitmap, &bits, "FromStr");
            assert_eq!(bitmap.to_string(), text, "FromStr then Display");
        }
    }
}

fn check_serde(data: &[u8]) {
    if let Ok(bitmap) = serde_json::from_slice::<Bitmap>(data) {
        let json: Value = serde_json::to_value(&bitmap).expect("a bitmap serializes");
        let bits = json["bits"].as_str().expect("bits is a string");
        assert_eq!(json["len"].as_u64(), Some(bitmap.len() as u64), "serde: len");
        let model: Vec<bool> = bits.bytes().map(|b| b == b'1').collect();
        check_valid(&bitmap, &model, "Deserialize");
        // What it read is what the input said.
        let input: Value = serde_json::from_slice(data).expect("the input was JSON");
        assert_eq!(input["bits"].as_str(), Some(bits), "serde: bits read back differently");
    }
}

fn check_kernel_name(text: &str) {
    match text.parse::<KernelKind>() {
        Ok(kind) => assert!(kind.name().eq_ignore_ascii_case(text.trim()), "{text:?} parsed as {kind}"),
        Err(_) => assert!(
            KernelKind::ALL.iter().all(|kind| !kind.name().eq_ignore_ascii_case(text.trim())),
            "kernel name {text:?} refused"
        ),
    }
}

/// A valid bitmap with exactly these bits: the length, the words bit by bit,
/// and (so) every bit past the length clear.
fn check_valid(bitmap: &Bitmap, bits: &[bool], made_by: &str) {
    assert_eq!(bitmap.len(), bits.len(), "{made_by}: length");
    assert_eq!(bitmap.as_words(), words_of(bits), "{made_by}: words (bits past the length included)");
    assert_eq!(bitmap.popcount(), bits.iter().filter(|&&b| b).count(), "{made_by}: popcount");
}

fn check_case(text: &str, limits: &CaseLimits) {
    let case = match parse_case_with(text, limits) {
        Ok(case) => case,
        Err(error) => {
            assert!(!error.to_string().is_empty(), "empty message for a bad case");
            let lines = text.lines().count().max(1);
            assert!((1..=lines + 1).contains(&error.line()), "error at line {} of {lines}: {error}", error.line());
            return;
        }
    };
    let mut lookup_bytes = 0;
    for (adapter, bitmap) in &case.lookup {
        assert_eq!(bitmap.len(), case.num_keys, "accepted case: lookup of adapter {adapter}");
        assert_eq!(Bitmap::from_words(bitmap.len(), bitmap.as_words().to_vec()).as_ref(), Ok(bitmap), "tail bits");
        lookup_bytes += bitmap.num_words() * 8;
    }
    assert!(lookup_bytes <= limits.max_lookup_bytes, "accepted case needs {lookup_bytes} lookup bytes");
    let mut indices: Vec<usize> = case.adapters.iter().map(|a| a.index).collect();
    indices.sort_unstable();
    assert!(indices.windows(2).all(|pair| pair[0] != pair[1]), "accepted case lists an adapter twice: {indices:?}");
    if let Some(policy) = &case.policy {
        assert!(registered_prefetch_policies().contains(policy), "accepted case names unknown policy {policy:?}");
    }
    check_case_means_its_json(text, &case);

    for trim in [Trim::None, Trim::Prefix] {
        let mut planner = Planner::new("default", trim).expect("`default` is registered");
        let answer = planner.answer(&case).unwrap_or_else(|error| panic!("accepted case not planned: {error}"));
        let name = case.policy.as_deref().unwrap_or("default");
        let contract = create_prefetch_policy(name).expect("registered").contract();
        let plan = answer.plan();
        if case.num_keys > 8 * MAX_LOOKUP_BYTES {
            // No lookup fits in the limit, so there is nothing to plan; and
            // the validator walks all `num_keys / 64` words, which for
            // `"num_keys": 18446744073709551615` would never finish.
            assert!(case.lookup.is_empty() && plan.is_empty(), "a case over the limit planned something");
        } else if trim == Trim::None {
            assert_eq!(plan.validate_with(&case.lookup, &case.adapters, contract), Ok(()), "answer's plan ({name})");
        } else {
            assert_eq!(plan.validate_with(&case.lookup, &case.adapters, PlanContract::Sound), Ok(()), "trimmed plan");
        }
        assert_eq!(answer.retain().len(), plan.planned_count(), "one retention decision per planned key");
        let line = answer.to_string();
        let json: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("answer {line:?} is not JSON: {e}"));
        assert_eq!(json["prefix_len"].as_u64(), Some(answer.prefix_len() as u64), "answer's prefix_len");
        let planned: Vec<(usize, Vec<usize>)> = json["plan"]
            .as_object()
            .expect("plan is an object")
            .iter()
            .map(|(adapter, keys)| (adapter.parse().expect("adapter index"), index_list(keys)))
            .collect();
        assert_eq!(planned, plan.to_index_lists(), "answer's plan");
    }
}

/// An accepted case is what its JSON says (the parser rejects repeated
/// fields, so `serde_json::Value`'s last-one-wins reading is exact here).
fn check_case_means_its_json(text: &str, case: &Case) {
    let json: Value = serde_json::from_str(text).expect("an accepted case is JSON");
    assert_eq!(json["num_keys"].as_u64(), Some(case.num_keys as u64), "num_keys");
    let adapters: Vec<u64> = json["adapters"]
        .as_array()
        .expect("adapters is an array")
        .iter()
        .map(|adapter| adapter.as_u64().or_else(|| adapter["index"].as_u64()).expect("an adapter index"))
        .collect();
    let parsed: Vec<u64> = case.adapters.iter().map(|a| a.index as u64).collect();
    assert_eq!(parsed, adapters, "adapters");
    let lookup = json["lookup"].as_object().expect("lookup is an object");
    assert_eq!(lookup.len(), case.lookup.len(), "lookup entries");
    for (adapter, held) in lookup {
        let bitmap = adapter.parse().ok().and_then(|a: usize| case.lookup.get(a));
        let bitmap = bitmap.unwrap_or_else(|| panic!("lookup entry {adapter:?} lost"));
        match held {
            Value::String(bits) => assert_eq!(&bitmap.to_string(), bits, "lookup.{adapter:?}"),
            keys => {
                let mut keys = index_list(keys);
                keys.sort_unstable();
                keys.dedup();
                assert_eq!(bitmap.to_indices(), keys, "lookup.{adapter:?}");
            }
        }
    }
    assert_eq!(json.get("policy").and_then(Value::as_str), case.policy.as_deref(), "policy");
}

fn index_list(value: &Value) -> Vec<usize> {
    let list = value.as_array().unwrap_or_else(|| panic!("{value} is not an array of indices"));
    list.iter().map(|index| index.as_u64().expect("an index") as usize).collect()
}

/// The whole CLI path on the raw bytes.
fn check_cli(data: &[u8]) {
    let options = PlanOptions::default().with_limits(CaseLimits::with_max_lookup_bytes(MAX_LOOKUP_BYTES));
    let mut output = Vec::new();
    let result = plan_cmd::run(data, &mut output, &options);
    let output = String::from_utf8(output).expect("answers are UTF-8");
    let lines: Vec<&str> = output.lines().collect();
    for line in &lines {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("answer line {line:?} is not JSON: {e}"));
    }
    match result {
        Ok(answered) => assert_eq!(answered, lines.len(), "answers counted"),
        Err(error) => assert!(!error.to_string().is_empty(), "empty CLI error message"),
    }
}
