//! [`Outcome`]: LMCache's `L1Error` codes, one per key of a batch.

use core::fmt;

/// What happened to one key of a batch call: LMCache's `L1Error`
/// (`lmcache/v1/distributed/error.py`), with the same names and meanings.
///
/// A batch answers with a success mask and the outcome of each key that
/// failed ([`Answer::failed`](crate::Answer::failed)); `Success` never appears
/// there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Outcome {
    /// The operation succeeded.
    Success = 0,
    /// The key does not exist (or, for a writer, its tag stages nothing for it).
    KeyNotExist = 1,
    /// The key exists but cannot be read: it is not read-locked.
    KeyNotReadable = 2,
    /// The key exists but cannot be written: it is resident, or the tag
    /// already stages it under a live write lock.
    KeyNotWritable = 3,
    /// The key is in the wrong state: a finish on a lock that is not held
    /// (expired or never taken).
    KeyInWrongState = 4,
    /// The key is locked (read-locked, or staged under a live write lock)
    /// and cannot be deleted.
    KeyIsLocked = 5,
    /// Not enough capacity for the key's object.
    OutOfMemory = 6,
}

impl Outcome {
    /// Every outcome, in code order.
    pub const ALL: [Outcome; 7] = [
        Outcome::Success,
        Outcome::KeyNotExist,
        Outcome::KeyNotReadable,
        Outcome::KeyNotWritable,
        Outcome::KeyInWrongState,
        Outcome::KeyIsLocked,
        Outcome::OutOfMemory,
    ];

    /// LMCache's name for the code, e.g. `"KEY_NOT_EXIST"`.
    pub const fn name(self) -> &'static str {
        match self {
            Outcome::Success => "SUCCESS",
            Outcome::KeyNotExist => "KEY_NOT_EXIST",
            Outcome::KeyNotReadable => "KEY_NOT_READABLE",
            Outcome::KeyNotWritable => "KEY_NOT_WRITABLE",
            Outcome::KeyInWrongState => "KEY_IN_WRONG_STATE",
            Outcome::KeyIsLocked => "KEY_IS_LOCKED",
            Outcome::OutOfMemory => "OUT_OF_MEMORY",
        }
    }

    /// The outcome whose [`name`](Outcome::name) this is.
    pub fn from_name(name: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|outcome| outcome.name() == name)
    }

    /// Whether this is [`Outcome::Success`].
    pub const fn is_success(self) -> bool {
        matches!(self, Outcome::Success)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
