//! The errors: [`TraceError`] for a bad trace line, [`SpecError`] for a bad
//! tier specification, [`ReplayError`] for a configuration the replay
//! refuses.
//!
//! This module imports none of the crate's other modules (they import it).

use core::fmt;

use prefetch_policy::{PlanError, RegistryError};

/// A trace line that cannot be replayed: where ([`line`](TraceError::line),
/// [`field`](TraceError::field)) and what ([`kind`](TraceError::kind)).
///
/// Its `Display` is `line N: field: message`.
///
/// ```
/// use kv_replay::{Trace, TraceOptions};
///
/// let text = "{\"hash_ids\": [0, 1]}\n{\"input_length\": 0, \"hash_ids\": []}\n";
/// let error = Trace::parse(text.as_bytes(), &TraceOptions::default()).unwrap_err();
/// assert_eq!(error.to_string(), "line 2: input_length: must be at least 1, found 0");
/// assert_eq!((error.line(), error.field()), (2, Some("input_length")));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    line: usize,
    field: Option<String>,
    kind: TraceErrorKind,
}

impl TraceError {
    pub(crate) fn new(line: usize, field: Option<String>, kind: TraceErrorKind) -> TraceError {
        TraceError { line, field, kind }
    }

    /// The line, from 1.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The offending field as a JSON path (`hash_ids[3]`, `input_length`),
    /// or `None` when the line as a whole is at fault (not JSON, not an
    /// object).
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// What is wrong.
    pub fn kind(&self) -> &TraceErrorKind {
        &self.kind
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: ", self.line)?;
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        fmt::Display::fmt(&self.kind, f)
    }
}

impl std::error::Error for TraceError {}

/// What is wrong with a trace line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceErrorKind {
    /// The line is not JSON, or not a JSON object.
    #[error("{message}")]
    Json {
        /// serde_json's message, without its position.
        message: String,
    },
    /// The line is not UTF-8.
    #[error("the line is not valid UTF-8")]
    NotUtf8,
    /// Reading the input failed (not the line's fault).
    #[error("reading the trace failed: {message}")]
    Read {
        /// The I/O error's message.
        message: String,
    },
    /// Neither `hash_ids` nor `keys` is given.
    #[error("missing field: a line needs \"hash_ids\" (Mooncake) or \"keys\"")]
    MissingKeys,
    /// Both `hash_ids` and `keys`, or both `input_length` and `tokens`.
    #[error("given together with {other}: give one of them")]
    Conflicting {
        /// The other field.
        other: &'static str,
    },
    /// A field's value has the wrong JSON type or range.
    #[error("expected {expected}, found {found}")]
    WrongType {
        /// What the field takes.
        expected: &'static str,
        /// The value found, as (the start of) its JSON text.
        found: String,
    },
    /// `input_length` (or `tokens`) is zero or negative.
    #[error("must be at least 1, found {found}")]
    NotPositive {
        /// The value found.
        found: String,
    },
    /// The number of ids disagrees with the token count.
    #[error("{ids} ids, but {tokens} tokens in blocks of {block_tokens} make {expected}")]
    LengthMismatch {
        /// The number of ids.
        ids: usize,
        /// The token count.
        tokens: u64,
        /// The block size.
        block_tokens: u64,
        /// ceil(tokens / block_tokens).
        expected: u64,
    },
}

/// A tier specification (`--l1`, `--l2`) that cannot be read or resolved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The capacity is not a number of blocks, `…tok`, bytes or `inf`.
    #[error("{found:?} is not a capacity: give blocks (20000, 1e4), tokens (1e7tok), bytes (64GiB, 500GB) or inf")]
    BadCapacity {
        /// The text.
        found: String,
    },
    /// A capacity in blocks that is not a whole number.
    #[error("{found:?} blocks is not a whole number")]
    FractionalBlocks {
        /// The text.
        found: String,
    },
    /// A capacity in bytes (or a bandwidth) without `--kv-bytes-per-token`.
    #[error("{found:?} is in bytes: give --kv-bytes-per-token too")]
    NeedsBytesPerToken {
        /// The text.
        found: String,
    },
    /// A capacity too large for a tier (more than
    /// [`Tier::MAX_CAPACITY`](crate::Tier::MAX_CAPACITY) blocks; use
    /// `inf`), whatever its form.
    #[error(
        "{found:?} is {}more than a tier can hold: at most {} blocks (use inf)",
        blocks.map_or(String::new(), |blocks| format!("{blocks} blocks, ")),
        crate::Tier::MAX_CAPACITY
    )]
    TooLarge {
        /// The text.
        found: String,
        /// The blocks it makes, `None` if they are 2^64 or more.
        blocks: Option<u64>,
    },
    /// An option after `:` that is not `weight=W` or `bw=RATE`.
    #[error("{found:?} is not a tier option: give weight=W or bw=RATE (bytes per second: 12GB/s, 2GiB/s)")]
    BadOption {
        /// The text.
        found: String,
    },
    /// A weight that is not a finite number greater than 0.
    #[error("weight {found:?} is not a finite number greater than 0")]
    BadWeight {
        /// The text.
        found: String,
    },
}

/// Why a replay cannot start or stopped.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The policy's name is not registered.
    #[error(transparent)]
    Policy(#[from] RegistryError),
    /// The policy refused a request's lookups.
    #[error("request {request}: {error}")]
    Plan {
        /// The request, from 0.
        request: usize,
        /// The policy's error.
        error: PlanError,
    },
    /// A tier's specification.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// More adapters than a plan can index.
    #[error("{0} L2 adapters: at most 64")]
    TooManyAdapters(usize),
    /// A trigger's watermark or ratio outside [0, 1].
    #[error("{what} {value} is outside [0, 1]")]
    OutOfRange {
        /// `watermark` or `eviction ratio`.
        what: &'static str,
        /// The value given.
        value: f64,
    },
    /// An eviction check interval of 0 ms.
    #[error("the eviction check interval must be at least 1 ms")]
    ZeroInterval,
}
