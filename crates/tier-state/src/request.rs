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
    /// How many keys (for a grid with a cell mask, its set cells).
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
/// [`with_cells`](GridKeys::with_cells) narrows a call to some cells of the
/// request (the controller unlocks the dropped cells, reserves the planned
/// ones, …): the keys are then the set cells in row-major order, position
/// `i` the `i`-th set cell, and the answer's mask keeps the request's shape.
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
    /// The cells the call is about (`None`: every cell).
    cells: Option<&'a Grid>,
}

impl<'a> GridKeys<'a> {
    /// The keys `hashes × rows`.
    pub const fn new(hashes: &'a [u64], rows: &'a [u32]) -> GridKeys<'a> {
        GridKeys { hashes, rows, cells: None }
    }

    /// The same request narrowed to the cells set in `cells`, a grid of
    /// the request's shape.
    ///
    /// ```
    /// use prefetch_policy::Grid;
    /// use tier_state::{Answer, Flags, GridBatch, GridKeys, Keys, Tier, TierConfig};
    /// let (hashes, rows) = ([10, 11, 12], [0, 1]);
    /// let keys = GridKeys::new(&hashes, &rows);
    /// let mut tier = Tier::new(TierConfig::new(16).with_rows(2))?;
    /// let mut answer = GridBatch::default();
    /// let diagonal = Grid::from_fn(2, 3, |r, c| r == c);
    /// let some = keys.with_cells(&diagonal)?;
    /// assert_eq!(some.len(), 2);
    /// tier.reserve_write(&some, Flags::All(false), 0, &mut answer)?;
    /// tier.finish_write(&some, 0, &mut answer)?;
    /// tier.reserve_read(&keys, 1, &mut answer)?;
    /// assert_eq!(answer.ok(), &diagonal);
    /// # Ok::<(), tier_state::TierError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`TierError::ShapeMismatch`] if `cells` has another shape.
    pub fn with_cells(self, cells: &'a Grid) -> Result<GridKeys<'a>, TierError> {
        let shape = self.shape();
        if cells.shape() != shape {
            return Err(TierError::ShapeMismatch {
                what: "with_cells",
                grid: "cells",
                rows: shape.0,
                cols: shape.1,
                flag_rows: cells.num_rows(),
                flag_cols: cells.num_cols(),
            });
        }
        Ok(GridKeys { cells: Some(cells), ..self })
    }

    /// The cell mask, if the request is narrowed to some cells.
    pub const fn cells(&self) -> Option<&'a Grid> {
        self.cells
    }
}

impl Keys for GridKeys<'_> {
    type Answer = GridBatch;

    fn len(&self) -> usize {
        match self.cells {
            Some(cells) => cells.popcount(),
            None => self.hashes.len() * self.rows.len(),
        }
    }

    fn shape(&self) -> (usize, usize) {
        // A grid without rows has the shape (0, 0), as `Grid` (and
        // LMCache's `Bitmap2D([])`) has it.
        if self.rows.is_empty() { (0, 0) } else { (self.rows.len(), self.hashes.len()) }
    }

    #[inline]
    fn for_each(&self, mut f: impl FnMut(Pos, TierKey)) {
        let mut index = 0u32;
        // The request's size was checked against u32 before any call.
        if let Some(cells) = self.cells {
            for (row, &row_id) in self.rows.iter().enumerate() {
                for col in cells.row_ones(row) {
                    f(Pos { index, row: row as u32, col: col as u32 }, TierKey { hash: self.hashes[col], row: row_id });
                    index += 1;
                }
            }
            return;
        }
        for (row, &row_id) in self.rows.iter().enumerate() {
            for (col, &hash) in self.hashes.iter().enumerate() {
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
    /// Checks the flags against `len` keys of a request of `shape`; `what`
    /// names the call.
    pub(crate) fn check(&self, what: &'static str, len: usize, shape: (usize, usize)) -> Result<(), TierError> {
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
                grid: "flags",
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
