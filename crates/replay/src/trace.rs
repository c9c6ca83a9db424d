//! [`Trace`]: a request stream read from NDJSON, each request a list of
//! block keys and its token count.
//!
//! Two line forms, mixed freely:
//!
//! - Mooncake's: `{"timestamp": ms, "input_length": tokens, "output_length":
//!   tokens, "hash_ids": [id, …]}` (only `hash_ids` is required; other
//!   fields are ignored);
//! - plain: `{"keys": [id, …], "tokens": n}` (`tokens` optional).
//!
//! Either may carry a `timestamp` in milliseconds (a non-negative number,
//! read down to a whole millisecond): only the replay of LMCache's timed
//! eviction trigger reads it. A line without one has the previous line's
//! (0 for the first).
//!
//! Ids are non-negative integers below 2^64. Without a token count, a
//! request counts `keys × block_tokens` tokens. With one, the number of ids
//! must be `ceil(tokens / block_tokens)`. Blank lines are skipped. The
//! first bad line stops the parse with a [`TraceError`]; nothing is
//! replayed from a trace that does not parse.

use std::io::BufRead;

use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::Value;

use crate::error::{TraceError, TraceErrorKind};
use crate::fast_line;

/// How a trace is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TraceOptions {
    /// Tokens a block (`--block-tokens`): 512 in Mooncake's traces.
    pub block_tokens: u64,
}

impl Default for TraceOptions {
    fn default() -> TraceOptions {
        TraceOptions { block_tokens: 512 }
    }
}

impl TraceOptions {
    /// These options with `block_tokens` tokens a block.
    ///
    /// # Panics
    ///
    /// If `block_tokens` is 0.
    #[must_use]
    pub fn with_block_tokens(mut self, block_tokens: u64) -> TraceOptions {
        assert!(block_tokens > 0, "a block holds at least one token");
        self.block_tokens = block_tokens;
        self
    }
}

/// One request: its keys in order and its input tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request<'t> {
    /// The block keys, first block first, as the trace's dense ids (see
    /// [`Trace`]).
    pub keys: &'t [u32],
    /// The input tokens (`input_length`).
    pub tokens: u64,
    /// When it arrives, in milliseconds from the trace's start
    /// (`timestamp`; see the module's doc for a line without one).
    pub timestamp_ms: u64,
}

/// A parsed trace, held in three flat vectors (all keys back to back, the
/// end of each request's keys, each request's tokens) rather than a vector
/// per request: one allocation each, and the replay reads it in order.
///
/// Keys are interned as they are read: the trace's ids, whatever they are,
/// become dense `u32` ids numbered from 0 in order of first appearance (so
/// Mooncake's ids, numbered that way already, are unchanged). The tiers
/// index keys by these ids with a plain vector instead of hashing them
/// (see [`Tier`](crate::Tier)).
///
/// ```
/// use kv_replay::{Trace, TraceOptions};
///
/// let text = r#"{"timestamp": 0, "input_length": 700, "output_length": 9, "hash_ids": [0, 1]}
/// {"keys": [0, 5, 6]}
/// "#;
/// let trace = Trace::parse(text.as_bytes(), &TraceOptions::default())?;
/// assert_eq!((trace.len(), trace.block_refs(), trace.tokens()), (2, 5, 700 + 3 * 512));
/// assert_eq!(trace.request(1).keys, [0, 2, 3]); // ids 5, 6 are the 3rd and 4th seen
/// assert_eq!(trace.distinct_keys(), 4);
/// # Ok::<(), kv_replay::TraceError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Trace {
    keys: Vec<u32>,
    /// Each id's dense id.
    dense: FxHashMap<u64, u32>,
    ends: Vec<usize>,
    tokens: Vec<u64>,
    timestamps_ms: Vec<u64>,
    block_tokens: u64,
}

/// Two traces are equal if they have the same requests (as dense ids) and
/// block size, whatever ids they were read from.
impl PartialEq for Trace {
    fn eq(&self, other: &Trace) -> bool {
        (&self.keys, &self.ends, &self.tokens, &self.timestamps_ms, self.block_tokens)
            == (&other.keys, &other.ends, &other.tokens, &other.timestamps_ms, other.block_tokens)
    }
}

impl Eq for Trace {}

/// The fast path's view of a line: serde fills it without building a
/// `Value`; a line it refuses is parsed again as a `Value` to say which
/// field is wrong.
#[derive(Deserialize)]
struct Line {
    hash_ids: Option<Vec<u64>>,
    keys: Option<Vec<u64>>,
    input_length: Option<i64>,
    tokens: Option<i64>,
    timestamp: Option<f64>,
}

impl Trace {
    /// An empty trace of `block_tokens`-token blocks, to
    /// [`push`](Trace::push) requests into.
    pub fn new(block_tokens: u64) -> Trace {
        Trace { block_tokens, ..Trace::default() }
    }

    /// Reads a trace from NDJSON, line by line.
    ///
    /// # Errors
    ///
    /// The first bad line's [`TraceError`]; a read error is reported on the
    /// line it happened at, as [`TraceErrorKind::NotUtf8`] or
    /// [`TraceErrorKind::Read`].
    pub fn parse(mut input: impl BufRead, options: &TraceOptions) -> Result<Trace, TraceError> {
        let mut trace = Trace::new(options.block_tokens);
        let mut text = String::new();
        let mut keys = Vec::new();
        for line in 1.. {
            text.clear();
            let read = input.read_line(&mut text);
            match read {
                Ok(0) => break,
                Ok(_) => {}
                Err(error) => {
                    let kind = if error.kind() == std::io::ErrorKind::InvalidData {
                        TraceErrorKind::NotUtf8
                    } else {
                        TraceErrorKind::Read { message: error.to_string() }
                    };
                    return Err(TraceError::new(line, None, kind));
                }
            }
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            let (tokens, timestamp_ms) = parse_line(text, options.block_tokens, &mut keys)
                .map_err(|(field, kind)| TraceError::new(line, field, kind))?;
            match timestamp_ms {
                Some(timestamp_ms) => trace.push_timed(&keys, tokens, timestamp_ms),
                None => trace.push(&keys, tokens),
            }
        }
        Ok(trace)
    }

    /// Appends a request, interning its keys, at the previous request's
    /// time (0 for the first). `tokens` is not checked against the keys.
    ///
    /// # Panics
    ///
    /// Past 2^32 − 1 distinct keys.
    pub fn push(&mut self, keys: &[u64], tokens: u64) {
        let timestamp_ms = self.timestamps_ms.last().copied().unwrap_or(0);
        self.push_timed(keys, tokens, timestamp_ms);
    }

    /// [`push`](Trace::push), arriving at `timestamp_ms`.
    ///
    /// # Panics
    ///
    /// Past 2^32 − 1 distinct keys.
    pub fn push_timed(&mut self, keys: &[u64], tokens: u64, timestamp_ms: u64) {
        for &key in keys {
            let next = u32::try_from(self.dense.len()).ok().filter(|&next| next != u32::MAX);
            let dense = *self.dense.entry(key).or_insert_with(|| next.expect("fewer than 2^32 - 1 distinct keys"));
            self.keys.push(dense);
        }
        self.ends.push(self.keys.len());
        self.tokens.push(tokens);
        self.timestamps_ms.push(timestamp_ms);
    }

    /// The number of requests.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there is no request.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Tokens a block.
    pub fn block_tokens(&self) -> u64 {
        self.block_tokens
    }

    /// The number of block references: every request's keys, counted with
    /// repeats.
    pub fn block_refs(&self) -> usize {
        self.keys.len()
    }

    /// The input tokens of all requests.
    pub fn tokens(&self) -> u64 {
        self.tokens.iter().sum()
    }

    /// The longest request, in keys.
    pub fn max_keys(&self) -> usize {
        self.requests().map(|request| request.keys.len()).max().unwrap_or(0)
    }

    /// The number of distinct keys: the dense ids are `0..distinct_keys()`.
    pub fn distinct_keys(&self) -> usize {
        self.dense.len()
    }

    /// Request `index`.
    ///
    /// # Panics
    ///
    /// If `index >= len()`.
    pub fn request(&self, index: usize) -> Request<'_> {
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        Request {
            keys: &self.keys[start..self.ends[index]],
            tokens: self.tokens[index],
            timestamp_ms: self.timestamps_ms[index],
        }
    }

    /// The requests in order.
    pub fn requests(&self) -> impl ExactSizeIterator<Item = Request<'_>> + '_ {
        (0..self.len()).map(|index| self.request(index))
    }

    /// Calls `step(index, request)` for each request in order, stopping at
    /// the first error, and `progress(requests)` with the number done since
    /// its last call every [`PROGRESS_EVERY`] requests and at the end (for
    /// a progress bar): the loop of both replays.
    pub(crate) fn try_for_each_with_progress<E>(
        &self,
        mut progress: impl FnMut(usize),
        mut step: impl FnMut(usize, Request<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        for (index, request) in self.requests().enumerate() {
            step(index, request)?;
            if index % PROGRESS_EVERY == PROGRESS_EVERY - 1 {
                progress(PROGRESS_EVERY);
            }
        }
        if !self.len().is_multiple_of(PROGRESS_EVERY) {
            progress(self.len() % PROGRESS_EVERY);
        }
        Ok(())
    }
}

/// Requests between two progress reports of a replay: often enough for a
/// bar to move, rarely enough to cost nothing.
const PROGRESS_EVERY: usize = 4096;

/// What is wrong with a line: the field at fault (when the kind does not
/// imply it) and the kind.
type LineError = (Option<String>, TraceErrorKind);

/// One line's keys (into `keys`, replacing its contents), tokens and
/// timestamp: the fast path when it takes the line, else serde.
fn parse_line(text: &str, block_tokens: u64, keys: &mut Vec<u64>) -> Result<(u64, Option<u64>), LineError> {
    if let Some(line) = fast_line::read(text.as_bytes(), keys) {
        let tokens = line.tokens.map(|(field, tokens)| (field, tokens as i64));
        return Ok((tokens_of(line.keys_field, keys.len(), tokens, block_tokens)?, line.timestamp));
    }
    let line: Line = serde_json::from_str(text).map_err(|error| diagnose(text, error))?;
    let timestamp_ms = match line.timestamp {
        // Down to a whole millisecond: the trigger's checks fall on whole
        // milliseconds, so `t >= check` is the same either way.
        Some(timestamp) if timestamp >= 0.0 && timestamp < u64::MAX as f64 => Some(timestamp as u64),
        Some(timestamp) => {
            let kind = TraceErrorKind::WrongType {
                expected: "a non-negative number of milliseconds",
                found: timestamp.to_string(),
            };
            return Err((Some("timestamp".to_owned()), kind));
        }
        None => None,
    };
    let (keys_field, ids) = match (line.hash_ids, line.keys) {
        (Some(_), Some(_)) => return Err((Some("keys".to_owned()), TraceErrorKind::Conflicting { other: "hash_ids" })),
        (Some(ids), None) => (Some("hash_ids"), ids),
        (None, Some(ids)) => (Some("keys"), ids),
        (None, None) => (None, Vec::new()),
    };
    let tokens = match (line.input_length, line.tokens) {
        (Some(_), Some(_)) => {
            return Err((Some("tokens".to_owned()), TraceErrorKind::Conflicting { other: "input_length" }));
        }
        (Some(tokens), None) => Some(("input_length", tokens)),
        (None, Some(tokens)) => Some(("tokens", tokens)),
        (None, None) => None,
    };
    *keys = ids;
    Ok((tokens_of(keys_field, keys.len(), tokens, block_tokens)?, timestamp_ms))
}

/// The rules both paths share: the keys must be there, the token count
/// (if any) positive and consistent with them; returns the tokens.
fn tokens_of(
    keys_field: Option<&'static str>,
    keys: usize,
    tokens: Option<(&'static str, i64)>,
    block_tokens: u64,
) -> Result<u64, LineError> {
    let Some(keys_field) = keys_field else {
        return Err((None, TraceErrorKind::MissingKeys));
    };
    let Some((tokens_field, tokens)) = tokens else {
        return Ok(keys as u64 * block_tokens);
    };
    if tokens <= 0 {
        return Err((Some(tokens_field.to_owned()), TraceErrorKind::NotPositive { found: tokens.to_string() }));
    }
    let tokens = tokens as u64;
    let expected = tokens.div_ceil(block_tokens);
    if keys as u64 != expected {
        let kind = TraceErrorKind::LengthMismatch { ids: keys, tokens, block_tokens, expected };
        return Err((Some(keys_field.to_owned()), kind));
    }
    Ok(tokens)
}

/// Why serde refused a line, field by field: the slow path, taken once, at
/// the line that stops the parse.
fn diagnose(text: &str, error: serde_json::Error) -> LineError {
    let json = |error: serde_json::Error| {
        let message = error.to_string();
        // serde_json appends " at line L column C": the line is the trace's.
        let message = message.rsplit_once(" at line ").map_or(message.as_str(), |(message, _)| message);
        (None, TraceErrorKind::Json { message: message.to_owned() })
    };
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return json(error);
    };
    let Value::Object(object) = &value else {
        return (None, TraceErrorKind::Json { message: format!("expected a JSON object, found {}", preview(&value)) });
    };
    for field in ["hash_ids", "keys"] {
        match object.get(field) {
            None | Some(Value::Null) => {}
            Some(Value::Array(ids)) => {
                if let Some((index, id)) = ids.iter().enumerate().find(|(_, id)| id.as_u64().is_none()) {
                    let kind = TraceErrorKind::WrongType {
                        expected: "a non-negative integer id below 2^64",
                        found: preview(id),
                    };
                    return (Some(format!("{field}[{index}]")), kind);
                }
            }
            Some(other) => {
                let kind = TraceErrorKind::WrongType { expected: "an array of ids", found: preview(other) };
                return (Some(field.to_owned()), kind);
            }
        }
    }
    match object.get("timestamp") {
        None | Some(Value::Null | Value::Number(_)) => {}
        Some(other) => {
            let kind = TraceErrorKind::WrongType { expected: "a number of milliseconds", found: preview(other) };
            return (Some("timestamp".to_owned()), kind);
        }
    }
    for field in ["input_length", "tokens"] {
        match object.get(field) {
            None | Some(Value::Null) => {}
            Some(number) if number.as_i64().is_some() => {}
            Some(number @ Value::Number(_)) if number.as_u64().is_some() => {
                let kind = TraceErrorKind::WrongType { expected: "a token count below 2^63", found: preview(number) };
                return (Some(field.to_owned()), kind);
            }
            Some(other) => {
                let kind = TraceErrorKind::WrongType { expected: "an integer token count", found: preview(other) };
                return (Some(field.to_owned()), kind);
            }
        }
    }
    json(error)
}

/// The start of a value's JSON text, for messages.
fn preview(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 40 { text } else { format!("{}…", text.chars().take(40).collect::<String>()) }
}
