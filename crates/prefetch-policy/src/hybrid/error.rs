//! [`HybridError`] and the boundary check [`chunk_count`].

/// Why a hybrid-model fold, unfold or grid plan refused its input. Every
/// variant names the values that make it an error; nothing in the module
/// panics on bad input.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::{HybridError, fold};
///
/// let error = fold(&Bitmap::new(8), 4, 0, &[-1]).unwrap_err();
/// assert_eq!(error, HybridError::ZeroRanks);
/// assert_eq!(error.to_string(), "the number of ranks must be at least 1 (got 0)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum HybridError {
    /// The number of ranks is 0; a chunk needs at least one rank bit.
    #[error("the number of ranks must be at least 1 (got 0)")]
    ZeroRanks,
    /// The window list is empty: there is no group to serve a prefix.
    #[error("the window list is empty: at least one group is needed")]
    NoWindows,
    /// A chunk count from a signed boundary (CLI JSON, Python) is negative.
    #[error("the number of chunks must not be negative (got {num_chunks})")]
    NegativeChunkCount {
        /// The rejected count.
        num_chunks: i64,
    },
    /// The rows of a grouped input have different lengths.
    #[error("row {row} has {len} bits, but row 0 has {expected}")]
    RaggedRows {
        /// The first row whose length differs from row 0's.
        row: usize,
        /// That row's length.
        len: usize,
        /// Row 0's length.
        expected: usize,
    },
    /// A grouped input has a different number of rows and windows.
    #[error("{rows} rows but {windows} windows: each row needs exactly one window")]
    RowWindowMismatch {
        /// The number of rows.
        rows: usize,
        /// The number of windows.
        windows: usize,
    },
    /// The grid plan's `full` fetching policy got a sliding-window row; a
    /// full fetch is defined only when every row is full attention.
    #[error("row {row} has sliding window {window}, which the full fetching policy does not allow")]
    SlidingWindowInFullFetch {
        /// The row.
        row: usize,
        /// Its window (at least 1).
        window: i64,
    },
    /// Two grids of a grid plan have different shapes.
    #[error("a grid of shape {found:?} (rows, columns) where {expected:?} was expected")]
    ShapeMismatch {
        /// The shape every grid must have, `(rows, columns)`.
        expected: (usize, usize),
        /// The shape found, `(rows, columns)`.
        found: (usize, usize),
    },
    /// The flat layout's key count `num_chunks × groups × ranks` does not
    /// fit in a `usize`.
    #[error("{num_chunks} chunks × {num_groups} groups × {num_ranks} ranks is more bits than fit in a usize")]
    SizeOverflow {
        /// The number of chunks.
        num_chunks: usize,
        /// The number of groups (windows).
        num_groups: usize,
        /// The number of ranks.
        num_ranks: usize,
    },
}

/// Checks a chunk count that comes from a signed boundary (CLI JSON, a
/// Python `int`): LMCache raises `ValueError` on a negative count, so this
/// returns [`HybridError::NegativeChunkCount`].
///
/// ```
/// use prefetch_policy::{HybridError, chunk_count};
///
/// assert_eq!(chunk_count(300), Ok(300));
/// assert_eq!(chunk_count(-1), Err(HybridError::NegativeChunkCount { num_chunks: -1 }));
/// ```
///
/// # Errors
///
/// [`HybridError::NegativeChunkCount`] if `num_chunks < 0`.
pub fn chunk_count(num_chunks: i64) -> Result<usize, HybridError> {
    usize::try_from(num_chunks).map_err(|_| HybridError::NegativeChunkCount { num_chunks })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_their_values() {
        let cases = [
            (HybridError::NoWindows, "the window list is empty: at least one group is needed"),
            (HybridError::NegativeChunkCount { num_chunks: -3 }, "the number of chunks must not be negative (got -3)"),
            (HybridError::RaggedRows { row: 2, len: 7, expected: 8 }, "row 2 has 7 bits, but row 0 has 8"),
            (
                HybridError::RowWindowMismatch { rows: 3, windows: 2 },
                "3 rows but 2 windows: each row needs exactly one window",
            ),
            (
                HybridError::SlidingWindowInFullFetch { row: 1, window: 4 },
                "row 1 has sliding window 4, which the full fetching policy does not allow",
            ),
            (
                HybridError::ShapeMismatch { expected: (2, 8), found: (2, 9) },
                "a grid of shape (2, 9) (rows, columns) where (2, 8) was expected",
            ),
            (
                HybridError::SizeOverflow { num_chunks: usize::MAX, num_groups: 2, num_ranks: 1 },
                &format!("{} chunks × 2 groups × 1 ranks is more bits than fit in a usize", usize::MAX),
            ),
        ];
        for (error, message) in cases {
            assert_eq!(error.to_string(), message);
        }
    }
}
