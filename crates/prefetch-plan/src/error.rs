//! The errors: [`CaseError`] for a case that cannot be parsed,
//! [`AnswerError`] for one that parsed but cannot be planned, [`CliError`]
//! for a command that failed, and the exit status each one maps to.
//!
//! This module imports none of the crate's other modules (they import it):
//! `case` and `answer` re-export their errors from here, so the parser, the
//! planner and the errors do not depend on each other in a circle.

use core::fmt;
use std::io;

use bitmap_core::kernel::KernelError;
use prefetch_policy::{HybridError, PlanError, RegistryError};

/// Why a case was rejected: what is wrong ([`kind`](CaseError::kind)), in
/// which field ([`field`](CaseError::field), a JSON path such as
/// `lookup."1"[2]`), and where in the case's text
/// ([`line`](CaseError::line), [`column`](CaseError::column)).
///
/// Its `Display` is `field: message` (or only the message when no single
/// field is to blame, as for a JSON syntax error); the position is left to
/// the caller, which knows where the case's text starts in its input.
///
/// ```
/// use prefetch_plan::case::{parse_case, CaseErrorKind};
///
/// let error = parse_case(r#"{"num_keys": 5, "adapters": [1], "lookup": {"1": [1, 7]}}"#).unwrap_err();
/// assert_eq!(error.to_string(), r#"lookup."1"[1]: key index 7 is out of range for num_keys 5"#);
/// assert_eq!(error.field(), Some(r#"lookup."1"[1]"#));
/// assert_eq!(error.kind(), &CaseErrorKind::KeyOutOfRange { key: 7, num_keys: 5 });
/// assert_eq!((error.line(), error.column()), (1, None));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseError {
    line: usize,
    column: Option<usize>,
    field: Option<String>,
    kind: CaseErrorKind,
}

impl CaseError {
    pub(crate) fn new(line: usize, column: Option<usize>, field: Option<String>, kind: CaseErrorKind) -> CaseError {
        CaseError { line, column, field, kind }
    }

    /// The line of the case's text (from 1) where the offending value
    /// starts, or where the JSON parser stopped.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The column (from 1) where the JSON parser stopped, for errors the
    /// parser found; `None` for errors in a field's value, which
    /// [`field`](CaseError::field) locates instead.
    pub fn column(&self) -> Option<usize> {
        self.column
    }

    /// The JSON path of the offending value: `num_keys`, `adapters[2]`,
    /// `adapters[0].index`, `lookup."1"`, `lookup."1"[4]`, `policy`.
    /// `None` when the case as a whole is at fault (not JSON, a field
    /// missing, unknown or repeated: the message names it).
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// What is wrong.
    pub fn kind(&self) -> &CaseErrorKind {
        &self.kind
    }
}

impl fmt::Display for CaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        fmt::Display::fmt(&self.kind, f)
    }
}

impl std::error::Error for CaseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.kind.source()
    }
}

/// What is wrong with a case.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CaseErrorKind {
    /// The JSON parser's complaint: a syntax error, a case that is not an
    /// object, a field that is missing, unknown or given twice, a mistyped
    /// field inside an adapter object. The message names the field.
    #[error("{message}")]
    Json {
        /// serde_json's message, without its position (see
        /// [`CaseError::line`] and [`CaseError::column`]).
        message: String,
    },
    /// A field's value has the wrong JSON type or range.
    #[error("expected {expected}, found {found}")]
    WrongType {
        /// What the field takes.
        expected: &'static str,
        /// The value found, as (the start of) its JSON text.
        found: String,
    },
    /// A lookup entry is keyed by something other than an adapter index.
    #[error("a lookup key must be an adapter index (decimal digits), found {key:?}")]
    InvalidAdapterKey {
        /// The key.
        key: String,
    },
    /// A key index in a lookup list is at or past `num_keys`.
    #[error("key index {key} is out of range for num_keys {num_keys}")]
    KeyOutOfRange {
        /// The key index.
        key: u64,
        /// The case's number of keys.
        num_keys: usize,
    },
    /// A lookup bit string's length differs from `num_keys`.
    #[error("the bit string has {len} characters, but num_keys is {num_keys}")]
    BitStringLength {
        /// The string's length in characters.
        len: usize,
        /// The case's number of keys.
        num_keys: usize,
    },
    /// An index in a list (a grid row's chunks, a flat bitmap's bits) is at
    /// or past the number of bits it indexes.
    #[error("index {index} is out of range for {name} {len}")]
    IndexOutOfRange {
        /// The index.
        index: u64,
        /// The number of bits.
        len: usize,
        /// What that number is called: `num_chunks`, or the flat layout's
        /// `num_chunks × groups × ranks`.
        name: &'static str,
    },
    /// A bit string (a grid row, a flat bitmap) has the wrong length.
    #[error("the bit string has {len} characters, but {name} is {expected}")]
    BitsLength {
        /// The string's length in characters.
        len: usize,
        /// The length it must have.
        expected: usize,
        /// What that length is called.
        name: &'static str,
    },
    /// The hybrid-model semantics refuse the case (no windows, no ranks, a
    /// negative chunk count, rows of different lengths, a sliding window
    /// under a full fetch).
    #[error(transparent)]
    Hybrid(#[from] HybridError),
    /// A lookup bit string holds a character other than `0` or `1`.
    #[error("invalid character {found:?} at position {position} of the bit string: expected '0' or '1'")]
    BitStringChar {
        /// The character's position, from 0 (the key it would describe).
        position: usize,
        /// The character.
        found: char,
    },
    /// Two adapter descriptors have the same index.
    #[error("adapter index {index} is listed more than once (first at adapters[{first}])")]
    DuplicateAdapter {
        /// The repeated index.
        index: usize,
        /// The position in `adapters` of its first occurrence.
        first: usize,
    },
    /// Two lookup entries name the same adapter (`"1"` and `"01"`, or `"1"`
    /// twice: JSON parsers disagree on which would win, so neither does).
    #[error("adapter {index} has more than one lookup entry")]
    DuplicateLookup {
        /// The adapter index.
        index: usize,
    },
    /// `policy` names no registered policy.
    #[error(transparent)]
    Policy(#[from] RegistryError),
    /// The lookup bitmaps would take more memory than the parser's limit
    /// (see [`CaseLimits`](crate::case::CaseLimits)).
    #[error("the lookup bitmaps would take {needed} bytes, more than the limit of {limit} bytes")]
    TooLarge {
        /// The bytes the entries up to this one need (saturating at
        /// `u64::MAX`).
        needed: u64,
        /// The limit.
        limit: usize,
    },
}

/// Why a case could not be planned, although it parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    /// The policy's name is not registered.
    #[error(transparent)]
    Policy(#[from] RegistryError),
    /// The policy refused the inputs.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The grid plan or the hit computation refused the inputs.
    #[error(transparent)]
    Hybrid(#[from] HybridError),
}

/// Why a command failed. [`exit_code`](CliError::exit_code) maps each to the
/// process's exit status: 2 for bad input (a bad case, a bad option or
/// environment), 1 for a failure of the machine (I/O, a failed self-check).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// A case was rejected.
    #[error("{location}: {error}")]
    BadCase {
        /// Where, in the input.
        location: Location,
        /// What. (Boxed: a `CliError` travels up every call of the
        /// command, the common case is no error at all.)
        error: Box<CaseError>,
    },
    /// A case's text is not UTF-8.
    #[error("{location}: the input is not valid UTF-8")]
    NotUtf8 {
        /// Where the first invalid byte is.
        location: Location,
    },
    /// The policy refused a case that passed the parser's checks (a policy
    /// with rules of its own).
    #[error("{location}: {error}")]
    Plan {
        /// The case's position in the input.
        location: Location,
        /// The policy's error.
        error: AnswerError,
    },
    /// An option's value is not acceptable.
    #[error("{option}: {message}")]
    BadOption {
        /// The option, as typed (`--policy`).
        option: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// `BITMAP_CORE_KERNEL` names a kernel that cannot run here.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// Reading or writing failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being read or written.
        context: String,
        /// The error.
        source: io::Error,
    },
    /// `bench` found a kernel that disagrees with the scalar reference.
    #[error("self-check failed: {0}")]
    SelfCheck(String),
    /// `replay`: a trace line was rejected (its line and field are in the
    /// message).
    #[error(transparent)]
    BadTrace(Box<kv_replay::TraceError>),
    /// `replay`: the replay refused its configuration (an unknown policy).
    #[error(transparent)]
    Replay(kv_replay::ReplayError),
}

impl CliError {
    /// The exit status: 2 for bad input, 1 for an I/O failure or a failed
    /// self-check.
    pub fn exit_code(&self) -> u8 {
        match self {
            // The machine failed, not the trace.
            CliError::BadTrace(error) if matches!(error.kind(), kv_replay::TraceErrorKind::Read { .. }) => 1,
            CliError::BadCase { .. }
            | CliError::NotUtf8 { .. }
            | CliError::Plan { .. }
            | CliError::BadOption { .. }
            | CliError::BadTrace(_)
            | CliError::Replay(_)
            | CliError::Kernel(_) => 2,
            CliError::Io { .. } | CliError::SelfCheck(_) => 1,
        }
    }

    /// Whether this is a write to a pipe whose reader has gone (`| head`):
    /// not worth a message, the reader has all it wanted.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
    }

    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(io::Error) -> CliError {
        let context = context.into();
        move |source| CliError::Io { context, source }
    }
}

/// A position in the input of `plan`: a line, maybe a column, and the line
/// where the case containing it starts if that is another one (a case
/// spread over several lines).
///
/// ```
/// use prefetch_plan::error::Location;
/// assert_eq!(Location { line: 3, column: None, case_line: 3 }.to_string(), "line 3");
/// assert_eq!(
///     Location { line: 5, column: Some(2), case_line: 3 }.to_string(),
///     "line 5, column 2 (in the case that starts on line 3)"
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1, when known.
    pub column: Option<usize>,
    /// The line where the case starts.
    pub case_line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}", self.line)?;
        if let Some(column) = self.column {
            write!(f, ", column {column}")?;
        }
        if self.case_line != self.line {
            write!(f, " (in the case that starts on line {})", self.case_line)?;
        }
        Ok(())
    }
}
