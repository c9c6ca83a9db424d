//! How a batch of keys is given ([`Keys`]: a slice of [`TierKey`]s, or
//! [`GridKeys`], a request's chunk hashes × row ids) and how its per-key
//! flags are ([`Flags`]).

use bitmap_core::Bitmap;
use prefetch_policy::Grid;

use crate::answer::{Answer, Batch, GridBatch};
use crate::error::TierError;
use crate::key::TierKey;
pub use crate::pos::Pos;

/// A batch of keys that a [`Tier`](crate::Tier) call takes, and the kind of
/// answer it fills: [`[TierKey]`](TierKey) answers in a [`Batch`],
/// [`GridKeys`] in a [`GridBatch`].
///
/// Sealed: the tier's calls are written once over these two forms.
pub trait Keys: sealed::Sealed {
    /// The answer a call over these keys fills.
    type Answer: Answer;
    /// How many keys.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The grid shape of the request, `(rows, cols)`; `(1, len)` for a slice,
    /// `(0, 0)` for a grid without rows.
    fn shape(&self) -> (usize, usize);
    /// Calls `f` with each key and its position, in request order.
    fn for_each(&self, f: impl FnMut(Pos, TierKey));
    /// The first key whose row is `rows` or more, with its position.
    fn first_row_at_least(&self, rows: u32) -> Option<(usize, u32)>;
    /// The keys as a grid request, if they are one (the tier then probes
    /// its table once a chunk, not once a key).
    #[doc(hidden)]
    fn as_grid(&self) -> Option<GridKeys<'_>> {
        None
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for [super::TierKey] {}
    impl Sealed for super::GridKeys<'_> {}
}

impl Keys for [TierKey] {
    type Answer = Batch;

    fn len(&self) -> usize {
        <[TierKey]>::len(self)
    }

    fn shape(&self) -> (usize, usize) {
        (1, <[TierKey]>::len(self))
    }

    #[inline]
    fn for_each(&self, mut f: impl FnMut(Pos, TierKey)) {
        for (index, &key) in self.iter().enumerate() {
            // A batch's length was checked against u32 before any call.
            let index = index as u32;
            f(Pos { index, row: 0, col: index }, key);
        }
    }

    fn first_row_at_least(&self, rows: u32) -> Option<(usize, u32)> {
        self.iter().position(|key| key.row >= rows).map(|index| (index, self[index].row))
    }
}

/// A controller request's keys in its grid layout: cell (`r`, `c`) is the
/// key (`hashes[c]`, `rows[r]`), chunk `c` of row `r`, as prefetch-policy's
/// [`Grid`] lays a request out (rows × chunks). Request order is row-major:
/// position `r × hashes.len() + c`.
///
/// ```
/// use tier_state::{GridKeys, Keys, TierKey};
/// let hashes = [10, 11, 12];
/// let rows = [0, 5];
/// let keys = GridKeys::new(&hashes, &rows);
/// assert_eq!(keys.shape(), (2, 3));
/// let mut all = Vec::new();
/// keys.for_each(|_, key| all.push(key));
/// assert_eq!(all[4], TierKey::new(11, 5));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct GridKeys<'a> {
    /// The request's chunk hashes, one per column.
    pub hashes: &'a [u64],
    /// The request's row ids, one per row.
    pub rows: &'a [u32],
}

impl<'a> GridKeys<'a> {
    /// The keys `hashes × rows`.
    pub const fn new(hashes: &'a [u64], rows: &'a [u32]) -> GridKeys<'a> {
        GridKeys { hashes, rows }
    }
}

impl Keys for GridKeys<'_> {
    type Answer = GridBatch;

    fn len(&self) -> usize {
        self.hashes.len() * self.rows.len()
    }

    fn shape(&self) -> (usize, usize) {
        // A grid without rows has the shape (0, 0), as `Grid` (and
        // LMCache's `Bitmap2D([])`) has it.
        if self.rows.is_empty() { (0, 0) } else { (self.rows.len(), self.hashes.len()) }
    }

    #[inline]
    fn for_each(&self, mut f: impl FnMut(Pos, TierKey)) {
        let mut index = 0u32;
        for (row, &row_id) in self.rows.iter().enumerate() {
            for (col, &hash) in self.hashes.iter().enumerate() {
                // The request's size was checked against u32 before any call.
                f(Pos { index, row: row as u32, col: col as u32 }, TierKey { hash, row: row_id });
                index += 1;
            }
        }
    }

    fn first_row_at_least(&self, rows: u32) -> Option<(usize, u32)> {
        let r = self.rows.iter().position(|&row| row >= rows)?;
        (!self.hashes.is_empty()).then(|| (r * self.hashes.len(), self.rows[r]))
    }

    fn as_grid(&self) -> Option<GridKeys<'_>> {
        Some(*self)
    }
}

/// Per-key flags (`reserve_write`'s `is_temporary`), in request order.
#[derive(Clone, Copy, Debug)]
pub enum Flags<'a> {
    /// The same flag for every key.
    All(bool),
    /// One flag per key, in request order (LMCache's `list[bool]`).
    Each(&'a [bool]),
    /// One bit per key, in request order.
    Bits(&'a Bitmap),
    /// One cell per key of a grid request, in its shape.
    Cells(&'a Grid),
}

impl Flags<'_> {
    /// Checks the flags against keys of `shape`; `what` names the call.
    pub(crate) fn check(&self, what: &'static str, shape: (usize, usize)) -> Result<(), TierError> {
        let len = shape.0 * shape.1;
        let mismatch = |right: usize| TierError::LengthMismatch {
            what,
            left_name: "keys",
            left: len,
            right_name: "is_temporary",
            right,
        };
        match *self {
            Flags::All(_) => Ok(()),
            Flags::Each(flags) if flags.len() != len => Err(mismatch(flags.len())),
            Flags::Bits(bits) if bits.len() != len => Err(mismatch(bits.len())),
            Flags::Cells(grid) if grid.shape() != shape => Err(TierError::ShapeMismatch {
                what,
                rows: shape.0,
                cols: shape.1,
                flag_rows: grid.num_rows(),
                flag_cols: grid.num_cols(),
            }),
            _ => Ok(()),
        }
    }

    /// The flag of the key at `pos` (checked first).
    #[inline]
    pub(crate) fn get(&self, pos: Pos) -> bool {
        match *self {
            Flags::All(flag) => flag,
            Flags::Each(flags) => flags[pos.index as usize],
            Flags::Bits(bits) => bits.test(pos.index as usize),
            Flags::Cells(grid) => grid.test(pos.row as usize, pos.col as usize),
        }
    }
}
