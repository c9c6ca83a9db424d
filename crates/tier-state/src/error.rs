//! [`TierError`]: bad input to a tier, refused before anything changes.

/// Why a tier refused a call or could not be built.
///
/// Every batch call checks its input first; when it returns one of these,
/// the tier is exactly as it was.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TierError {
    /// Two inputs that go together differ in length, e.g. keys and their
    /// temporary flags.
    #[error("{what}: {left_name} has {left} entries but {right_name} has {right}")]
    LengthMismatch {
        /// The call that got them.
        what: &'static str,
        /// The first input's name, e.g. `"keys"`.
        left_name: &'static str,
        /// Its length.
        left: usize,
        /// The second input's name, e.g. `"is_temporary"`.
        right_name: &'static str,
        /// Its length.
        right: usize,
    },
    /// A grid of flags, or a request's cell mask, has another shape than
    /// the request's keys.
    #[error("{what}: the keys are {rows} x {cols} but the {grid} are {flag_rows} x {flag_cols}")]
    ShapeMismatch {
        /// What has the wrong shape: `"flags"`, `"cells"`.
        grid: &'static str,
        /// The call that got them.
        what: &'static str,
        /// The keys' rows.
        rows: usize,
        /// The keys' columns (chunks).
        cols: usize,
        /// The grid's rows.
        flag_rows: usize,
        /// The grid's columns.
        flag_cols: usize,
    },
    /// A key's row is not below the tier's [`rows`](crate::TierConfig::rows).
    #[error("{what}: row {row} of key {index} is out of range: the tier has {rows} rows")]
    RowOutOfRange {
        /// The call that got it.
        what: &'static str,
        /// The key's position in the request.
        index: usize,
        /// The row.
        row: u32,
        /// The tier's row count.
        rows: u32,
    },
    /// A batch longer than the `u32` positions a batch answers with.
    #[error("{what}: {len} keys, more than the {max} one batch can hold")]
    BatchTooLong {
        /// The call that got it.
        what: &'static str,
        /// The batch's length.
        len: usize,
        /// The longest batch.
        max: usize,
    },
    /// A capacity no tier can have: more objects than slot ids, or more
    /// bytes of state than the address space. Nothing was allocated.
    #[error("impossible capacity of {capacity} objects: at most {max} ({reason})")]
    ImpossibleCapacity {
        /// The capacity asked for.
        capacity: usize,
        /// The largest capacity allowed.
        max: usize,
        /// Why.
        reason: &'static str,
    },
}
