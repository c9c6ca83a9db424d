//! [`Grid`]: rows of equal width, LMCache's `Bitmap2D`, the shape a hybrid
//! model's keys take (one row per object group and rank, one column per
//! chunk).
//!
//! The operators are in `grid/ops.rs`, the map of index → grid in
//! `grid/map.rs`, the grid plan in `grid/plan.rs` and its policies in
//! `grid/policy.rs`.

use core::borrow::Borrow;
use core::fmt;
use core::ops::{Bound, Range, RangeBounds};

use bitmap_core::{Bitmap, Ones, kernel};

use crate::error::GridError;

pub(crate) mod columns;
mod hit;
pub(crate) mod map;
mod moves;
mod ops;
pub(crate) mod plan;
pub(crate) mod policy;

pub use moves::FlatOrder;

/// A grid of bits: `rows` rows of `cols` bits each, LMCache's `Bitmap2D`.
///
/// In the controller's use, row `r` is one (object group, rank) pair of a
/// request and column `c` its chunk `c`, so a grid is the set of cells
/// (keys) an L1 manager or an L2 adapter holds, or a plan loads.
///
/// # Layout
///
/// The cells live in one buffer of `u64` words, row after row: row `r` is
/// [`row_words(r)`](Grid::row_words), the [`words_per_row`](Grid::words_per_row)
/// words from `r × words_per_row`, with the bits of its last word past
/// `cols` clear. One buffer rather than a bitmap per row, because a
/// controller's grids are small and many: a 64 × 24 grid is 64 words, and
/// a union of two is one allocation and one kernel call over all of them,
/// where a row of bitmaps made 64 of each (as LMCache's list of rows does).
///
/// A grid without rows has the shape `(0, 0)`, as `Bitmap2D([])` does.
///
/// The operators `|` (union, LMCache's `+`), `&` and `-` (and-not) work
/// on owned and borrowed grids with their assign forms, reusing an owned
/// operand's buffer; like `Bitmap`'s they panic on a shape mismatch (a
/// caller bug), and the named `try_` forms return [`GridError`] instead.
///
/// # Reuse
///
/// [`reset`](Grid::reset) and [`copy_from`](Grid::copy_from) keep the
/// buffer, so a grid used for request after request stops allocating once
/// it has held the largest shape.
///
/// ```
/// use prefetch_policy::Grid;
///
/// let mut held = Grid::zeros(2, 6);
/// held.set_range(0, 0..4);
/// held.set_range(1, 2..);
/// assert_eq!(held.shape(), (2, 6));
/// assert_eq!(held.popcount(), 8);
/// assert_eq!(held.to_string(), "[111100, 001111]");
///
/// let other: Grid = Grid::from_rows(vec!["100000".parse()?, "000001".parse()?])?;
/// assert_eq!((&held - &other).to_string(), "[011100, 001110]");
/// assert_eq!((&held & &other).popcount(), 2);
/// assert!(held.try_union_with(&Grid::zeros(3, 6)).is_err());
///
/// let keys = [["a0", "a1", "a2", "a3", "a4", "a5"], ["b0", "b1", "b2", "b3", "b4", "b5"]];
/// assert_eq!(other.gather_rows(&keys)?, [vec![&"a0"], vec![&"b5"]]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Default)]
pub struct Grid {
    /// `rows × words_per_row(cols)` words, row after row, as a bitmap of
    /// that many whole words: bitmap-core's storage starts them on a cache
    /// line (a `Vec<u64>` does not, which made the first-wins split of a
    /// 4,096-chunk plan measurably slower) and its kernels combine two
    /// grids in one pass. Its capacity past them is kept for a later,
    /// larger shape.
    words: Bitmap,
    rows: usize,
    cols: usize,
}

/// The words one row of `cols` bits takes.
#[inline]
pub(crate) const fn words_per_row(cols: usize) -> usize {
    cols.div_ceil(64)
}

/// The mask of the bits of a row's last word below `cols` (all ones for a
/// multiple of 64).
#[inline]
pub(crate) const fn last_word_mask(cols: usize) -> u64 {
    if cols.is_multiple_of(64) { !0 } else { (1u64 << (cols % 64)) - 1 }
}

/// # Construction and reuse
impl Grid {
    /// A grid of `rows` rows of `cols` clear bits (LMCache's
    /// `Bitmap2D.zeros`).
    ///
    /// # Panics
    ///
    /// If `rows × cols` bits do not fit in memory's address space (a
    /// caller that takes sizes from outside checks them first).
    pub fn zeros(rows: usize, cols: usize) -> Grid {
        let mut grid = Grid::default();
        grid.reset(rows, cols);
        grid
    }

    /// The grid without rows, shape `(0, 0)`; allocates nothing.
    pub const fn empty() -> Grid {
        Grid { words: Bitmap::empty(), rows: 0, cols: 0 }
    }

    /// A grid of `rows`, which must all have the same length.
    ///
    /// # Errors
    ///
    /// [`GridError::RaggedRows`] for the first row whose length differs
    /// from row 0's.
    pub fn from_rows(rows: Vec<Bitmap>) -> Result<Grid, GridError> {
        Grid::from_row_slice(&rows)
    }

    /// [`from_rows`](Grid::from_rows) from borrowed rows (copied into the
    /// grid's buffer).
    ///
    /// # Errors
    ///
    /// As [`from_rows`](Grid::from_rows).
    pub fn from_row_slice<B: Borrow<Bitmap>>(rows: &[B]) -> Result<Grid, GridError> {
        let cols = rows.first().map_or(0, |row| row.borrow().len());
        if let Some((row, len)) = rows.iter().map(|row| row.borrow().len()).enumerate().find(|&(_, len)| len != cols) {
            return Err(GridError::RaggedRows { row, len, expected: cols });
        }
        let mut grid = Grid::empty();
        grid.reset(rows.len(), cols);
        for (r, row) in rows.iter().enumerate() {
            grid.row_words_mut(r).copy_from_slice(row.borrow().as_words());
        }
        Ok(grid)
    }

    /// A grid of `rows` rows of `cols` bits whose row `r` holds the bits of
    /// `cells(r, c)`.
    ///
    /// ```
    /// use prefetch_policy::Grid;
    /// let diagonal = Grid::from_fn(3, 3, |r, c| r == c);
    /// assert_eq!(diagonal.to_string(), "[100, 010, 001]");
    /// ```
    pub fn from_fn(rows: usize, cols: usize, mut cells: impl FnMut(usize, usize) -> bool) -> Grid {
        let mut grid = Grid::zeros(rows, cols);
        for r in 0..rows {
            for c in 0..cols {
                if cells(r, c) {
                    grid.set(r, c);
                }
            }
        }
        grid
    }

    /// Makes this `rows` × `cols` clear bits, reusing the buffer: no
    /// allocation if the grid has held at least as many words.
    pub fn reset(&mut self, rows: usize, cols: usize) {
        let cols = if rows == 0 { 0 } else { cols };
        let bits = rows
            .checked_mul(words_per_row(cols))
            .and_then(|words| words.checked_mul(64))
            .expect("prefetch-policy: grid size overflows usize");
        // bitmap-core reuses the buffer, and zeroes a large fresh one by
        // the allocator (fresh pages) rather than by a pass of stores.
        self.words.reset(bits);
        self.rows = rows;
        self.cols = cols;
    }

    /// Makes this a copy of `other`, reusing the buffer.
    pub fn copy_from(&mut self, other: &Grid) {
        self.words.copy_from(&other.words);
        self.rows = other.rows;
        self.cols = other.cols;
    }

    /// Frees the buffer's capacity past the current shape.
    pub fn release_spares(&mut self) {
        // A clone allocates what the words need, no more.
        self.words = self.words.clone();
    }

    /// Makes the grid `rows` × `cols` if it has another shape (clearing
    /// it); leaves it as it is if it has that shape already, for a caller
    /// that overwrites every word.
    pub(crate) fn ensure_shape(&mut self, rows: usize, cols: usize) {
        if self.shape() != Grid::zeros_shape(rows, cols) {
            self.reset(rows, cols);
        }
    }

    /// A grid of `rows` × `cols` over `words` (a bitmap of exactly their
    /// words, which the crate's writers make, tails clear).
    #[inline]
    pub(crate) fn from_words(words: Bitmap, rows: usize, cols: usize) -> Grid {
        debug_assert_eq!(words.len(), rows * words_per_row(cols) * 64);
        Grid { words, rows, cols: if rows == 0 { 0 } else { cols } }
    }

    /// The whole buffer, mutably, for the crate's writers: they keep every
    /// row's bits past `cols` clear.
    #[inline]
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        self.words.whole_words_mut().expect("a grid's bitmap is whole words")
    }

    /// Row `row`'s words, mutably (same contract as
    /// [`words_mut`](Grid::words_mut)).
    #[inline]
    #[track_caller]
    pub(crate) fn row_words_mut(&mut self, row: usize) -> &mut [u64] {
        let range = self.row_range(row);
        &mut self.words_mut()[range]
    }
}

/// # Reading
impl Grid {
    /// `(rows, cols)`; `(0, 0)` for a grid without rows.
    #[inline]
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// The number of rows.
    #[inline]
    pub fn num_rows(&self) -> usize {
        self.rows
    }

    /// The number of bits of each row.
    #[inline]
    pub fn num_cols(&self) -> usize {
        self.cols
    }

    /// The number of cells, rows × cols.
    #[inline]
    pub fn num_cells(&self) -> usize {
        self.rows * self.cols
    }

    /// Whether the grid has no rows (LMCache's `len(grid) == 0`).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The words each row takes in the buffer: `cols.div_ceil(64)`.
    #[inline]
    pub fn words_per_row(&self) -> usize {
        words_per_row(self.cols)
    }

    /// The buffer: the rows' words, row after row (see the type's docs).
    #[inline]
    pub fn as_words(&self) -> &[u64] {
        self.words.as_words()
    }

    #[inline]
    #[track_caller]
    fn row_range(&self, row: usize) -> Range<usize> {
        assert!(row < self.rows, "prefetch-policy: row {row} is out of range for a grid of {} rows", self.rows);
        let stride = self.words_per_row();
        row * stride..(row + 1) * stride
    }

    /// Row `row`'s words: `cols` bits, bit `c` in word `c / 64`, the bits
    /// past `cols` clear.
    ///
    /// # Panics
    ///
    /// If `row` is not below [`num_rows`](Grid::num_rows).
    #[inline]
    #[track_caller]
    pub fn row_words(&self, row: usize) -> &[u64] {
        &self.words.as_words()[self.row_range(row)]
    }

    /// The rows' words in order.
    pub fn row_slices(&self) -> impl ExactSizeIterator<Item = &[u64]> + Clone + '_ {
        (0..self.rows).map(move |row| self.row_words(row))
    }

    /// A copy of row `row` as a bitmap, or `None` past the last row.
    pub fn row(&self, row: usize) -> Option<Bitmap> {
        (row < self.rows).then(|| self.row_bitmap(row))
    }

    #[track_caller]
    fn row_bitmap(&self, row: usize) -> Bitmap {
        Bitmap::from_word_slice(self.cols, self.row_words(row)).expect("a row is its columns' words, tail clear")
    }

    /// Copies of the rows, as bitmaps.
    pub fn to_rows(&self) -> Vec<Bitmap> {
        (0..self.rows).map(|row| self.row_bitmap(row)).collect()
    }

    /// Whether cell (`row`, `col`) is set; `false` outside the grid (as
    /// LMCache's `test` past the end).
    #[inline]
    pub fn test(&self, row: usize, col: usize) -> bool {
        row < self.rows && col < self.cols && self.row_words(row)[col / 64] >> (col % 64) & 1 == 1
    }

    /// The number of set cells.
    pub fn popcount(&self) -> usize {
        self.words.popcount()
    }

    /// The number of set cells of row `row`.
    ///
    /// # Panics
    ///
    /// If `row` is not below [`num_rows`](Grid::num_rows).
    #[track_caller]
    pub fn row_popcount(&self, row: usize) -> usize {
        kernel::popcount(self.row_words(row)) as usize
    }

    /// The run of set cells from column 0 of row `row` (its
    /// `count_leading_ones`).
    ///
    /// # Panics
    ///
    /// If `row` is not below [`num_rows`](Grid::num_rows).
    #[track_caller]
    pub fn row_leading_ones(&self, row: usize) -> usize {
        crate::hybrid::leading_ones(self.row_words(row), self.cols)
    }

    /// Whether any cell is set.
    pub fn any(&self) -> bool {
        self.words.any()
    }

    /// Whether no cell is set.
    pub fn none(&self) -> bool {
        !self.any()
    }

    /// The set columns of row `row`, ascending.
    ///
    /// # Panics
    ///
    /// If `row` is not below [`num_rows`](Grid::num_rows).
    #[track_caller]
    pub fn row_ones(&self, row: usize) -> Ones<'_> {
        Ones::over_words(self.row_words(row))
    }

    /// Each row's set columns, ascending: the grid in the CLI's
    /// `[[indices], …]` shape.
    pub fn to_index_lists(&self) -> Vec<Vec<usize>> {
        (0..self.rows).map(|row| self.row_ones(row).collect()).collect()
    }

    /// The set cells as `(row, col)`, row by row.
    pub fn cells(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.rows).flat_map(move |r| self.row_ones(r).map(move |c| (r, c)))
    }

    /// The items of row `row` whose bits are set: `&items[c]` for each set
    /// column `c`, ascending (LMCache's per-row `gather(group.keys)`).
    ///
    /// # Errors
    ///
    /// [`GridError::RowOutOfRange`] for a row past the last one,
    /// [`GridError::ItemCountMismatch`] if `items` does not have
    /// [`num_cols`](Grid::num_cols) items.
    pub fn gather_row<'a, T>(
        &self,
        row: usize,
        items: &'a [T],
    ) -> Result<impl Iterator<Item = &'a T> + use<'_, 'a, T>, GridError> {
        if row >= self.rows {
            return Err(GridError::RowOutOfRange { row, rows: self.rows });
        }
        if items.len() != self.cols {
            return Err(GridError::ItemCountMismatch { expected: self.cols, actual: items.len() });
        }
        Ok(self.row_ones(row).map(move |c| &items[c]))
    }

    /// [`gather_row`](Grid::gather_row) for every row: `keys[r]` are row
    /// `r`'s items.
    ///
    /// # Errors
    ///
    /// [`GridError::ItemCountMismatch`] if there is not one item list per
    /// row, or a list does not have [`num_cols`](Grid::num_cols) items.
    pub fn gather_rows<'a, T, K: AsRef<[T]>>(&self, keys: &'a [K]) -> Result<Vec<Vec<&'a T>>, GridError> {
        self.check_key_rows(keys.len())?;
        (0..self.rows).zip(keys).map(|(row, items)| Ok(self.gather_row(row, items.as_ref())?.collect())).collect()
    }

    /// The items of every set cell in one list, row by row (LMCache's
    /// controller's `_gather_keys`): `keys[r][c]` for each set `(r, c)`.
    ///
    /// ```
    /// use prefetch_policy::Grid;
    /// let grid = Grid::from_fn(2, 3, |r, c| (r + c) % 2 == 0);
    /// let keys = [["a", "b", "c"], ["d", "e", "f"]];
    /// assert_eq!(grid.gather_flat(&keys)?, [&"a", &"c", &"e"]);
    /// # Ok::<(), prefetch_policy::GridError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`gather_rows`](Grid::gather_rows).
    pub fn gather_flat<'a, T, K: AsRef<[T]>>(&self, keys: &'a [K]) -> Result<Vec<&'a T>, GridError> {
        self.check_key_rows(keys.len())?;
        let mut out = Vec::with_capacity(self.popcount());
        for (row, items) in keys.iter().enumerate() {
            out.extend(self.gather_row(row, items.as_ref())?);
        }
        Ok(out)
    }

    fn check_key_rows(&self, rows: usize) -> Result<(), GridError> {
        if rows == self.rows { Ok(()) } else { Err(GridError::ItemCountMismatch { expected: self.rows, actual: rows }) }
    }
}

/// # Single cells and ranges
impl Grid {
    /// Sets cell (`row`, `col`); a no-op outside the grid (as LMCache's
    /// `set` past the end; `Bitmap::set` would panic).
    #[inline]
    pub fn set(&mut self, row: usize, col: usize) {
        if row < self.rows && col < self.cols {
            self.row_words_mut(row)[col / 64] |= 1 << (col % 64);
        }
    }

    /// Clears cell (`row`, `col`); a no-op outside the grid.
    #[inline]
    pub fn clear(&mut self, row: usize, col: usize) {
        if row < self.rows && col < self.cols {
            self.row_words_mut(row)[col / 64] &= !(1 << (col % 64));
        }
    }

    /// Sets the columns of `range` in row `row` (clamped to the row, as
    /// `Bitmap::set_range` is); a no-op for a row past the last.
    pub fn set_range(&mut self, row: usize, range: impl RangeBounds<usize>) {
        if row >= self.rows {
            return;
        }
        let lo = match range.start_bound() {
            Bound::Included(&lo) => lo,
            Bound::Excluded(&lo) => lo.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let hi = match range.end_bound() {
            Bound::Included(&hi) => hi.saturating_add(1),
            Bound::Excluded(&hi) => hi,
            Bound::Unbounded => self.cols,
        }
        .min(self.cols);
        if lo < hi {
            fill_bits(self.row_words_mut(row), lo, hi);
        }
    }

    /// Replaces row `row` with a copy of `bits`.
    ///
    /// # Errors
    ///
    /// [`GridError::RowOutOfRange`], or [`GridError::ShapeMismatch`] if
    /// `bits` does not have [`num_cols`](Grid::num_cols) bits (`right` is
    /// `(1, bits.len())`); the grid is unchanged.
    pub fn copy_row_from(&mut self, row: usize, bits: &Bitmap) -> Result<(), GridError> {
        let (rows, cols) = self.shape();
        if row >= rows {
            return Err(GridError::RowOutOfRange { row, rows });
        }
        if bits.len() != cols {
            return Err(GridError::ShapeMismatch { left: (1, cols), right: (1, bits.len()) });
        }
        self.row_words_mut(row).copy_from_slice(bits.as_words());
        Ok(())
    }

    /// Sets every cell (LMCache's `ones_like`).
    pub fn set_all(&mut self) {
        let (stride, mask) = (self.words_per_row(), last_word_mask(self.cols));
        self.words.set_all();
        if stride > 0 {
            for row in self.words_mut().chunks_exact_mut(stride) {
                row[stride - 1] = mask;
            }
        }
    }
}

/// Sets bits `lo..hi` (`lo < hi`) of `words`.
fn fill_bits(words: &mut [u64], lo: usize, hi: usize) {
    let (first, last) = (lo / 64, (hi - 1) / 64);
    let low = !0u64 << (lo % 64);
    let high = last_word_mask(hi);
    if first == last {
        words[first] |= low & high;
    } else {
        words[first] |= low;
        words[first + 1..last].fill(!0);
        words[last] |= high;
    }
}

impl Clone for Grid {
    /// One allocation: the rows' words, without the spare capacity.
    fn clone(&self) -> Grid {
        Grid { words: self.words.clone(), rows: self.rows, cols: self.cols }
    }

    fn clone_from(&mut self, source: &Grid) {
        self.copy_from(source);
    }
}

impl PartialEq for Grid {
    /// Same shape and same cells (spare capacity does not count).
    fn eq(&self, other: &Grid) -> bool {
        self.shape() == other.shape() && self.words == other.words
    }
}

impl Eq for Grid {}

impl fmt::Display for Grid {
    /// The rows as bit strings (bit 0 first) in brackets: `[0110, 1000]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for row in 0..self.rows {
            if row > 0 {
                f.write_str(", ")?;
            }
            let words = self.row_words(row);
            for col in 0..self.cols {
                f.write_str(if words[col / 64] >> (col % 64) & 1 == 1 { "1" } else { "0" })?;
            }
        }
        f.write_str("]")
    }
}

impl fmt::Debug for Grid {
    /// As [`Display`](fmt::Display), which shows every cell.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl TryFrom<Vec<Bitmap>> for Grid {
    type Error = GridError;

    fn try_from(rows: Vec<Bitmap>) -> Result<Grid, GridError> {
        Grid::from_rows(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(rows: &[&str]) -> Grid {
        Grid::from_rows(rows.iter().map(|row| row.parse().unwrap()).collect()).unwrap()
    }

    #[test]
    fn shapes() {
        assert_eq!(Grid::zeros(3, 5).shape(), (3, 5));
        assert_eq!(Grid::zeros(0, 5).shape(), (0, 0));
        assert_eq!(Grid::empty().shape(), (0, 0));
        assert_eq!(Grid::zeros(2, 0).shape(), (2, 0));
        assert_eq!(Grid::from_fn(0, 4, |_, _| true).shape(), (0, 0));
        assert!(Grid::zeros(0, 3).is_empty() && !Grid::zeros(1, 0).is_empty());
        assert_eq!(Grid::zeros(3, 5).num_cells(), 15);
    }

    #[test]
    fn ragged_rows_are_refused() {
        let rows = vec![Bitmap::new(4), Bitmap::new(4), Bitmap::new(3)];
        assert_eq!(Grid::from_rows(rows).unwrap_err(), GridError::RaggedRows { row: 2, len: 3, expected: 4 });
        assert_eq!(Grid::try_from(vec![]).unwrap(), Grid::empty());
    }

    #[test]
    fn cells_and_counts() {
        let mut g = Grid::zeros(2, 70);
        g.set(1, 69);
        g.set(0, 3);
        g.set(2, 0); // no such row: nothing
        g.set(0, 70); // no such column: nothing
        assert_eq!(g.cells().collect::<Vec<_>>(), [(0, 3), (1, 69)]);
        assert!(g.test(1, 69) && !g.test(1, 70) && !g.test(5, 0));
        g.clear(1, 69);
        assert_eq!(g.popcount(), 1);
        assert!(g.any());
        g.clear(0, 3);
        assert!(g.none());
    }

    #[test]
    fn reset_keeps_the_buffer() {
        let mut g = Grid::zeros(4, 128);
        g.set(3, 127);
        let buffer = g.as_words().as_ptr();
        g.reset(1, 64);
        assert_eq!(g.shape(), (1, 64));
        assert!(g.words.capacity_bits() >= 8 * 64);
        g.reset(4, 100);
        assert!(g.none());
        assert_eq!(g.as_words().as_ptr(), buffer);
        let copy = grid(&["01", "10"]);
        g.copy_from(&copy);
        assert_eq!(g, copy);
        assert_eq!(g.as_words().len(), 2);
        assert!(g.words.capacity_bits() >= 8 * 64);
        // Let go of the 8-word buffer: what is left is the 2 words and at
        // most the 7 words of slack bitmap-core keeps to start on a line.
        g.release_spares();
        assert_eq!(g, copy);
        assert!(g.words.capacity_bits() <= (2 + 7) * 64);
    }

    #[test]
    fn rows_live_in_one_buffer_with_clear_tails() {
        let mut g = Grid::zeros(3, 70);
        g.set_range(1, 60..);
        g.set_all();
        assert_eq!(g.words_per_row(), 2);
        assert_eq!(g.as_words(), [!0, 0x3f, !0, 0x3f, !0, 0x3f]);
        assert_eq!(g.row_popcount(2), 70);
        let mut h = Grid::zeros(2, 130);
        h.set_range(0, 3..129);
        assert_eq!(h.row_words(0), [!0 << 3, !0, 1]);
        assert_eq!(h.row_leading_ones(0), 0);
        h.set_range(1, ..65);
        assert_eq!(h.row_leading_ones(1), 65);
        assert_eq!(h.row(1).unwrap(), Bitmap::with_prefix(130, 65));
        assert_eq!(h.row(2), None);
        assert_eq!(Grid::from_rows(h.to_rows()).unwrap(), h);
        assert_eq!(Grid::zeros(2, 0).as_words(), [0u64; 0]);
    }

    #[test]
    fn ranges_clamp_to_the_row() {
        let mut g = Grid::zeros(1, 10);
        g.set_range(0, 8..=20);
        g.set_range(0, 3..3);
        g.set_range(0, ..=1);
        assert_eq!(g.to_string(), "[1100000011]");
        g.set_range(5, ..); // no such row: nothing
        assert_eq!(g.popcount(), 4);
    }

    #[test]
    fn gather_flat_is_the_rows_gathers_in_order() {
        let g = grid(&["101", "010"]);
        let keys = [["a", "b", "c"], ["d", "e", "f"]];
        assert_eq!(g.gather_flat(&keys).unwrap(), [&"a", &"c", &"e"]);
        assert_eq!(g.gather_flat(&keys[..1]).unwrap_err(), GridError::ItemCountMismatch { expected: 2, actual: 1 });
        assert!(g.gather_flat(&[["x"], ["y"]]).is_err());
    }

    #[test]
    fn gather_per_row() {
        let g = grid(&["101", "010"]);
        let keys = [["a", "b", "c"], ["d", "e", "f"]];
        assert_eq!(g.gather_rows(&keys).unwrap(), [vec![&"a", &"c"], vec![&"e"]]);
        assert_eq!(g.gather_row(1, &keys[1]).unwrap().collect::<Vec<_>>(), [&"e"]);
        assert_eq!(g.gather_row(2, &keys[1]).err(), Some(GridError::RowOutOfRange { row: 2, rows: 2 }));
        assert_eq!(g.gather_row(0, &["x"]).err(), Some(GridError::ItemCountMismatch { expected: 3, actual: 1 }));
        assert_eq!(g.gather_rows(&keys[..1]).unwrap_err(), GridError::ItemCountMismatch { expected: 2, actual: 1 });
    }

    #[test]
    fn copy_row_checks_the_shape() {
        let mut g = Grid::zeros(2, 3);
        g.copy_row_from(1, &"011".parse().unwrap()).unwrap();
        assert_eq!(g.to_index_lists(), [vec![], vec![1, 2]]);
        assert!(g.copy_row_from(2, &Bitmap::new(3)).is_err());
        assert!(g.copy_row_from(0, &Bitmap::new(4)).is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(grid(&["01", "11"]).to_string(), "[01, 11]");
        assert_eq!(format!("{:?}", Grid::empty()), "[]");
    }
}
