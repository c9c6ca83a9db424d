//! [`Grid`]: rows of equal width, LMCache's `Bitmap2D`, the shape a hybrid
//! model's keys take (one row per object group and rank, one column per
//! chunk).
//!
//! The operators are in `grid/ops.rs`, the map of index → grid in
//! `grid/map.rs`, the grid plan in `grid/plan.rs` and its policies in
//! `grid/policy.rs`.

use core::fmt;

use bitmap_core::{Bitmap, Gather};

use crate::error::GridError;

pub(crate) mod map;
mod ops;
pub(crate) mod plan;
pub(crate) mod policy;

/// A grid of bits: `rows` rows of `cols` bits each, LMCache's `Bitmap2D`.
///
/// In the controller's use, row `r` is one (object group, rank) pair of a
/// request and column `c` its chunk `c`, so a grid is the set of cells
/// (keys) an L1 manager or an L2 adapter holds, or a plan loads.
///
/// Every row has exactly [`num_cols`](Grid::num_cols) bits: the
/// constructors check it and no method changes one row's length alone. A
/// grid without rows has the shape `(0, 0)`, as `Bitmap2D([])` does.
///
/// The operators `|` (union, LMCache's `+`), `&` and `-` (and-not) work
/// on owned and borrowed grids with their assign forms, reusing an owned
/// operand's buffers; like `Bitmap`'s they panic on a shape mismatch (a
/// caller bug), and the named `try_` forms return [`GridError`] instead.
///
/// # Reuse
///
/// [`reset`](Grid::reset) and [`copy_from`](Grid::copy_from) keep the row
/// buffers, including the rows past a smaller shape, so a grid used for
/// request after request stops allocating once it has held the largest
/// shape.
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
    /// `rows[..live]` are the rows, each `cols` bits; `rows[live..]` are
    /// spare buffers kept for a later, taller shape.
    rows: Vec<Bitmap>,
    live: usize,
    cols: usize,
}

/// # Construction and reuse
impl Grid {
    /// A grid of `rows` rows of `cols` clear bits (LMCache's
    /// `Bitmap2D.zeros`).
    pub fn zeros(rows: usize, cols: usize) -> Grid {
        let mut grid = Grid::default();
        grid.reset(rows, cols);
        grid
    }

    /// The grid without rows, shape `(0, 0)`; allocates nothing.
    pub const fn empty() -> Grid {
        Grid { rows: Vec::new(), live: 0, cols: 0 }
    }

    /// A grid of `rows`, which must all have the same length.
    ///
    /// # Errors
    ///
    /// [`GridError::RaggedRows`] for the first row whose length differs
    /// from row 0's.
    pub fn from_rows(rows: Vec<Bitmap>) -> Result<Grid, GridError> {
        let cols = rows.first().map_or(0, Bitmap::len);
        if let Some((row, bits)) = rows.iter().enumerate().find(|(_, bits)| bits.len() != cols) {
            return Err(GridError::RaggedRows { row, len: bits.len(), expected: cols });
        }
        let live = rows.len();
        Ok(Grid { rows, live, cols })
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
        let rows: Vec<Bitmap> = (0..rows).map(|r| (0..cols).map(|c| cells(r, c)).collect()).collect();
        let live = rows.len();
        Grid { rows, live, cols: if live == 0 { 0 } else { cols } }
    }

    /// Makes this `rows` × `cols` clear bits, reusing the row buffers: no
    /// allocation if the grid has held at least `rows` rows of at least
    /// `cols` bits.
    pub fn reset(&mut self, rows: usize, cols: usize) {
        if self.rows.len() < rows {
            self.rows.resize_with(rows, || Bitmap::new(cols));
        }
        for row in &mut self.rows[..rows] {
            row.reset(cols);
        }
        self.live = rows;
        self.cols = if rows == 0 { 0 } else { cols };
    }

    /// Makes this a copy of `other`, reusing the row buffers.
    pub fn copy_from(&mut self, other: &Grid) {
        if self.rows.len() < other.live {
            self.rows.resize_with(other.live, Bitmap::empty);
        }
        for (row, source) in self.rows.iter_mut().zip(other.rows()) {
            row.copy_from(source);
        }
        self.live = other.live;
        self.cols = other.cols;
    }

    /// Frees the spare row buffers.
    pub fn release_spares(&mut self) {
        self.rows.truncate(self.live);
        self.rows.shrink_to_fit();
    }

    /// The rows, mutably, for the crate's own writers: they keep every
    /// row's length at `cols` (or set `cols` to match).
    pub(crate) fn rows_mut(&mut self) -> &mut [Bitmap] {
        &mut self.rows[..self.live]
    }

    /// Makes the grid `rows` × `cols` if it has another shape (clearing
    /// it); leaves it as it is if it has that shape already, for a caller
    /// that overwrites every word.
    pub(crate) fn ensure_shape(&mut self, rows: usize, cols: usize) {
        // Every row has `cols` bits (the invariant), so the shape says it all.
        if self.shape() != Grid::zeros_shape(rows, cols) {
            self.reset(rows, cols);
        }
    }
}

/// # Reading
impl Grid {
    /// `(rows, cols)`; `(0, 0)` for a grid without rows.
    #[inline]
    pub fn shape(&self) -> (usize, usize) {
        (self.live, self.cols)
    }

    /// The number of rows.
    #[inline]
    pub fn num_rows(&self) -> usize {
        self.live
    }

    /// The number of bits of each row.
    #[inline]
    pub fn num_cols(&self) -> usize {
        self.cols
    }

    /// The number of cells, rows × cols.
    #[inline]
    pub fn num_cells(&self) -> usize {
        self.live * self.cols
    }

    /// Whether the grid has no rows (LMCache's `len(grid) == 0`).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The rows, in order.
    #[inline]
    pub fn rows(&self) -> &[Bitmap] {
        &self.rows[..self.live]
    }

    /// Row `row`, or `None` past the last row.
    #[inline]
    pub fn row(&self, row: usize) -> Option<&Bitmap> {
        self.rows().get(row)
    }

    /// Whether cell (`row`, `col`) is set; `false` outside the grid (as
    /// LMCache's `test` past the end).
    #[inline]
    pub fn test(&self, row: usize, col: usize) -> bool {
        self.row(row).and_then(|bits| bits.get(col)).unwrap_or(false)
    }

    /// The number of set cells.
    pub fn popcount(&self) -> usize {
        self.rows().iter().map(Bitmap::popcount).sum()
    }

    /// Whether any cell is set.
    pub fn any(&self) -> bool {
        self.rows().iter().any(Bitmap::any)
    }

    /// Whether no cell is set.
    pub fn none(&self) -> bool {
        !self.any()
    }

    /// Each row's set columns, ascending: the grid in the CLI's
    /// `[[indices], …]` shape.
    pub fn to_index_lists(&self) -> Vec<Vec<usize>> {
        self.rows().iter().map(Bitmap::to_indices).collect()
    }

    /// The set cells as `(row, col)`, row by row.
    pub fn cells(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.rows().iter().enumerate().flat_map(|(r, bits)| bits.ones().map(move |c| (r, c)))
    }

    /// The items of row `row` whose bits are set: `&items[c]` for each set
    /// column `c`, ascending (LMCache's per-row `gather(group.keys)`).
    ///
    /// # Errors
    ///
    /// [`GridError::RowOutOfRange`] for a row past the last one,
    /// [`GridError::ItemCountMismatch`] if `items` does not have
    /// [`num_cols`](Grid::num_cols) items.
    pub fn gather_row<'a, T>(&self, row: usize, items: &'a [T]) -> Result<Gather<'_, 'a, T>, GridError> {
        let bits = self.row(row).ok_or(GridError::RowOutOfRange { row, rows: self.live })?;
        bits.try_gather(items).map_err(|_| GridError::ItemCountMismatch { expected: self.cols, actual: items.len() })
    }

    /// [`gather_row`](Grid::gather_row) for every row: `keys[r]` are row
    /// `r`'s items.
    ///
    /// # Errors
    ///
    /// [`GridError::ItemCountMismatch`] if there is not one item list per
    /// row, or a list does not have [`num_cols`](Grid::num_cols) items.
    pub fn gather_rows<'a, T, K: AsRef<[T]>>(&self, keys: &'a [K]) -> Result<Vec<Vec<&'a T>>, GridError> {
        if keys.len() != self.live {
            return Err(GridError::ItemCountMismatch { expected: self.live, actual: keys.len() });
        }
        (0..self.live).zip(keys).map(|(row, items)| Ok(self.gather_row(row, items.as_ref())?.collect())).collect()
    }
}

/// # Single cells and ranges
impl Grid {
    /// Sets cell (`row`, `col`); a no-op outside the grid (as LMCache's
    /// `set` past the end; `Bitmap::set` would panic).
    pub fn set(&mut self, row: usize, col: usize) {
        if let Some(bits) = self.rows_mut().get_mut(row)
            && col < bits.len()
        {
            bits.set(col);
        }
    }

    /// Clears cell (`row`, `col`); a no-op outside the grid.
    pub fn clear(&mut self, row: usize, col: usize) {
        if let Some(bits) = self.rows_mut().get_mut(row)
            && col < bits.len()
        {
            bits.clear(col);
        }
    }

    /// Sets the columns of `range` in row `row` (clamped to the row, as
    /// `Bitmap::set_range` is); a no-op for a row past the last.
    pub fn set_range(&mut self, row: usize, range: impl core::ops::RangeBounds<usize>) {
        if let Some(bits) = self.rows_mut().get_mut(row) {
            bits.set_range(range);
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
        let target = self.rows_mut().get_mut(row).ok_or(GridError::RowOutOfRange { row, rows })?;
        if bits.len() != cols {
            return Err(GridError::ShapeMismatch { left: (1, cols), right: (1, bits.len()) });
        }
        target.copy_from(bits);
        Ok(())
    }
}

impl Clone for Grid {
    /// Clones the rows, not the spare buffers.
    fn clone(&self) -> Grid {
        Grid { rows: self.rows().to_vec(), live: self.live, cols: self.cols }
    }

    fn clone_from(&mut self, source: &Grid) {
        self.copy_from(source);
    }
}

impl PartialEq for Grid {
    /// Same shape and same cells (spare buffers do not count).
    fn eq(&self, other: &Grid) -> bool {
        self.shape() == other.shape() && self.rows() == other.rows()
    }
}

impl Eq for Grid {}

impl fmt::Display for Grid {
    /// The rows as bit strings (bit 0 first) in brackets: `[0110, 1000]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (r, row) in self.rows().iter().enumerate() {
            if r > 0 {
                f.write_str(", ")?;
            }
            fmt::Display::fmt(row, f)?;
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
    fn reset_keeps_spare_rows() {
        let mut g = Grid::zeros(4, 128);
        g.set(3, 127);
        g.reset(1, 64);
        assert_eq!(g.shape(), (1, 64));
        assert_eq!(g.rows.len(), 4);
        g.reset(4, 100);
        assert!(g.none());
        let copy = grid(&["01", "10"]);
        g.copy_from(&copy);
        assert_eq!(g, copy);
        assert_eq!(g.rows.len(), 4);
        g.release_spares();
        assert_eq!(g.rows.len(), 2);
    }

    #[test]
    fn gather_per_row() {
        let g = grid(&["101", "010"]);
        let keys = [["a", "b", "c"], ["d", "e", "f"]];
        assert_eq!(g.gather_rows(&keys).unwrap(), [vec![&"a", &"c"], vec![&"e"]]);
        assert_eq!(g.gather_row(1, &keys[1]).unwrap().collect::<Vec<_>>(), [&"e"]);
        assert_eq!(g.gather_row(2, &keys[1]).unwrap_err(), GridError::RowOutOfRange { row: 2, rows: 2 });
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
