//! The error of every fallible [`Bitmap`](crate::Bitmap) operation.

use core::fmt;

/// What went wrong in a fallible [`Bitmap`](crate::Bitmap) operation.
///
/// Every message names the numbers involved. The panicking forms of the same
/// operations (`set`, the operators, `gather`, …) panic with the same message.
///
/// `#[non_exhaustive]`: later versions may add variants.
///
/// ```
/// use bitmap_core::{Bitmap, BitmapError};
///
/// let mut bits = Bitmap::new(10);
/// let error = bits.try_set(12).unwrap_err();
/// assert_eq!(error, BitmapError::IndexOutOfRange { index: 12, len: 10 });
/// assert_eq!(error.to_string(), "index 12 is out of range for a bitmap of 10 bits");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum BitmapError {
    /// Two operands of one operation differ in length: two bitmaps, or a
    /// bitmap and the items slice of [`gather`](crate::Bitmap::gather).
    #[error("length mismatch: left is {left}, right is {right}")]
    LengthMismatch {
        /// The length of the bitmap the operation was called on (or of the
        /// left operand).
        left: usize,
        /// The length of the other operand.
        right: usize,
    },
    /// A bit index is not below the bitmap's length.
    #[error("index {index} is out of range for a bitmap of {len} bits")]
    IndexOutOfRange {
        /// The index that was given.
        index: usize,
        /// The bitmap's length in bits.
        len: usize,
    },
    /// Raw words, bytes or a bit string of the wrong size for the length.
    #[error("wrong size: expected {expected} {unit}, got {actual}")]
    WrongSize {
        /// How many units the length needs.
        expected: usize,
        /// How many were given.
        actual: usize,
        /// What was counted.
        unit: SizeUnit,
    },
    /// Raw words or bytes have a bit set at or past the bitmap's length,
    /// which would break the bitmap's invariant (every bit past the length is
    /// clear). Such input is rejected rather than silently truncated.
    #[error("bit {index} is set but the bitmap has only {len} bits")]
    BitPastEnd {
        /// The first set bit at or past `len`.
        index: usize,
        /// The bitmap's length in bits.
        len: usize,
    },
    /// A list of rows has the wrong number of entries: the output rows of
    /// [`split_rows_into`](crate::layout::split_rows_into), or the rows or
    /// outputs paired with the masks of
    /// [`deposit_rows_into`](crate::layout::deposit_rows_into) and
    /// [`extract_rows_into`](crate::layout::extract_rows_into).
    #[error("row count mismatch: expected {expected} rows, got {actual}")]
    RowCountMismatch {
        /// The number of rows needed.
        expected: usize,
        /// The number given.
        actual: usize,
    },
    /// The rows of one layout have different lengths.
    #[error("ragged rows: row {row} has {len} bits, but row 0 has {expected}")]
    RaggedRows {
        /// The first row whose length differs from row 0's.
        row: usize,
        /// Its length.
        len: usize,
        /// Row 0's length.
        expected: usize,
    },
    /// A deposit's source has fewer bits than the masks have set positions.
    #[error("the source has {len} bits, but the masks have {needed} set positions")]
    SourceTooShort {
        /// The masks' total popcount.
        needed: usize,
        /// The source's length.
        len: usize,
    },
    /// The bitmap's words could not be allocated: more memory than the
    /// allocator (or the address space) can give, from
    /// [`Bitmap::try_new`](crate::Bitmap::try_new).
    #[error("cannot allocate a bitmap of {len} bits")]
    AllocationFailed {
        /// The length asked for, in bits.
        len: usize,
    },
    /// A bit string has a character other than `0` or `1`.
    #[error("invalid character {found:?} at position {position}: expected '0' or '1'")]
    InvalidChar {
        /// The character's position in the string, counted in characters
        /// from 0 (which is also the bit it would have described).
        position: usize,
        /// The character found there.
        found: char,
    },
}

/// The unit of [`BitmapError::WrongSize`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SizeUnit {
    /// Characters of a bit string (one per bit).
    Bits,
    /// Bytes (`len.div_ceil(8)` for a bitmap of `len` bits).
    Bytes,
    /// `u64` words (`len.div_ceil(64)` for a bitmap of `len` bits).
    Words,
}

impl fmt::Display for SizeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SizeUnit::Bits => "bits",
            SizeUnit::Bytes => "bytes",
            SizeUnit::Words => "words",
        })
    }
}

/// Panics with the message of [`BitmapError::IndexOutOfRange`]. Out of line
/// and cold so the checks that call it stay small enough to inline.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn index_out_of_range(index: usize, len: usize) -> ! {
    panic!("{}", BitmapError::IndexOutOfRange { index, len })
}

/// Panics with the message of [`BitmapError::LengthMismatch`].
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn length_mismatch(left: usize, right: usize) -> ! {
    panic!("{}", BitmapError::LengthMismatch { left, right })
}
