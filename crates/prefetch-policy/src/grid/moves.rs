//! The moves between a grid and the flat bitmaps a controller's tiers
//! answer in: splitting a flat lookup result into rows and joining rows
//! back ([`FlatOrder`] says which bit is which cell), and the deposit and
//! extract of a load's result over a plan's cells (PDEP and PEXT over the
//! rows, in row-major order).
//!
//! Each is one pass over the grid's buffer on bitmap-core's kernels: the
//! row split of a chunk-major bitmap is its transposition
//! ([`layout::split_rows_strided`]), the row-major one a shifted copy per
//! row.

use core::str::FromStr;

use bitmap_core::{Bitmap, kernel, layout};

use crate::error::GridError;
use crate::grid::{Grid, last_word_mask};

/// Which bit of a flat bitmap of `rows × cols` bits is cell (`r`, `c`).
///
/// ```
/// use prefetch_policy::{FlatOrder, Grid};
///
/// use bitmap_core::Bitmap;
///
/// let flat: Bitmap = "110100".parse()?;
/// // Chunk-major, LMCache's ranked layout: bit c·rows + r.
/// assert_eq!(Grid::from_flat(&flat, 2, FlatOrder::ChunkMajor)?.to_string(), "[100, 110]");
/// // Row-major, the order LMCache's controller concatenates its key
/// // groups in: bit r·cols + c.
/// assert_eq!(Grid::from_flat(&flat, 2, FlatOrder::RowMajor)?.to_string(), "[110, 100]");
/// assert_eq!(Grid::from_flat(&flat, 3, FlatOrder::RowMajor)?.to_flat(FlatOrder::RowMajor), flat);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FlatOrder {
    /// Bit `c · rows + r`: each chunk's cells together, as LMCache's ranked
    /// `fold` lays out groups and ranks (`"chunk"`).
    #[default]
    ChunkMajor,
    /// Bit `r · cols + c`: each row's cells together, as LMCache's
    /// controller concatenates its key groups' keys before the tiers'
    /// lookups (`"row"`).
    RowMajor,
}

impl FromStr for FlatOrder {
    type Err = GridError;

    /// `"chunk"` or `"row"`.
    fn from_str(name: &str) -> Result<FlatOrder, GridError> {
        match name {
            "chunk" => Ok(FlatOrder::ChunkMajor),
            "row" => Ok(FlatOrder::RowMajor),
            _ => Err(GridError::UnknownFlatOrder { name: name.to_owned() }),
        }
    }
}

/// # Flat bitmaps, deposit and extract
impl Grid {
    /// Splits `flat` into `num_rows` rows of `flat.len() / num_rows` bits,
    /// cell (`r`, `c`) taken from the bit `order` names.
    ///
    /// # Errors
    ///
    /// [`GridError::FlatLength`] if `num_rows` is 0 or does not divide
    /// `flat.len()`.
    pub fn from_flat(flat: &Bitmap, num_rows: usize, order: FlatOrder) -> Result<Grid, GridError> {
        let mut grid = Grid::empty();
        grid.assign_flat(flat, num_rows, order)?;
        Ok(grid)
    }

    /// [`from_flat`](Grid::from_flat) into this grid, reusing its buffer.
    ///
    /// # Errors
    ///
    /// As [`from_flat`](Grid::from_flat); the grid is then unchanged.
    pub fn assign_flat(&mut self, flat: &Bitmap, num_rows: usize, order: FlatOrder) -> Result<(), GridError> {
        let len = flat.len();
        if num_rows == 0 || !len.is_multiple_of(num_rows) {
            return Err(GridError::FlatLength { len, rows: num_rows });
        }
        let cols = len / num_rows;
        self.ensure_shape(num_rows, cols);
        match order {
            FlatOrder::ChunkMajor => {
                layout::split_rows_strided(flat, num_rows, cols, self.words_mut())
                    .expect("the grid has the flat bitmap's shape");
            }
            FlatOrder::RowMajor => {
                let src = flat.as_words();
                for row in 0..num_rows {
                    copy_bits_from(src, row * cols, cols, self.row_words_mut(row));
                }
            }
        }
        Ok(())
    }

    /// The grid as one flat bitmap of `rows × cols` bits, cell (`r`, `c`)
    /// at the bit `order` names; the inverse of
    /// [`from_flat`](Grid::from_flat).
    pub fn to_flat(&self, order: FlatOrder) -> Bitmap {
        let mut flat = Bitmap::new(0);
        self.to_flat_into(order, &mut flat);
        flat
    }

    /// [`to_flat`](Grid::to_flat) into `flat`, reusing its buffer.
    pub fn to_flat_into(&self, order: FlatOrder, flat: &mut Bitmap) {
        let (rows, cols) = self.shape();
        match order {
            FlatOrder::ChunkMajor => {
                layout::join_rows_strided(self.as_words(), rows, cols, flat)
                    .expect("a grid's buffer is its shape's words");
            }
            FlatOrder::RowMajor => {
                flat.reset(rows * cols);
                let mut words = flat.words_mut();
                for row in 0..rows {
                    or_bits_into(self.row_words(row), cols, row * cols, &mut words);
                }
            }
        }
    }

    /// PDEP over the rows: a grid of this shape whose `i`-th set cell of
    /// `self`, in row-major order, holds bit `i` of `src` (LMCache's
    /// controller's `_scatter_bitmaps(planned, loaded)`: a load's result
    /// over its planned cells, back into the grid).
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// use prefetch_policy::Grid;
    ///
    /// let planned = Grid::from_rows(vec!["0110".parse()?, "1001".parse()?])?;
    /// let loaded: Bitmap = "1101".parse()?;
    /// let cells = planned.deposit(&loaded)?;
    /// assert_eq!(cells.to_string(), "[0110, 0001]");
    /// assert_eq!(planned.extract(&cells)?, loaded);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`GridError::ItemCountMismatch`] if `src` has fewer bits than the
    /// grid has set cells (`expected` is the popcount); bits past those are
    /// not read.
    pub fn deposit(&self, src: &Bitmap) -> Result<Grid, GridError> {
        let expected = self.popcount();
        if src.len() < expected {
            return Err(GridError::ItemCountMismatch { expected, actual: src.len() });
        }
        let mut out = Grid::zeros(self.num_rows(), self.num_cols());
        let mut taken = 0;
        for row in 0..self.num_rows() {
            taken += kernel::deposit(src.as_words(), taken, self.row_words(row), out.row_words_mut(row));
        }
        Ok(out)
    }

    /// PEXT over the rows: the cells of `values` at this grid's set cells,
    /// in row-major order, as one bitmap of `self.popcount()` bits; the
    /// inverse of [`deposit`](Grid::deposit) on the set cells.
    ///
    /// # Errors
    ///
    /// [`GridError::ShapeMismatch`] if `values` has another shape.
    pub fn extract(&self, values: &Grid) -> Result<Bitmap, GridError> {
        self.check_same_shape(values)?;
        let mut out = Bitmap::new(self.popcount());
        let mut words = out.words_mut();
        let mut written = 0;
        for row in 0..self.num_rows() {
            written += kernel::extract(values.row_words(row), self.row_words(row), &mut words, written);
        }
        drop(words);
        Ok(out)
    }
}

/// Makes `dst` (a row of `len` bits) bits `start..start + len` of `src`
/// (bits past `src`'s end read as 0), its bits past `len` clear.
fn copy_bits_from(src: &[u64], start: usize, len: usize, dst: &mut [u64]) {
    let (word, shift) = (start / 64, start % 64);
    let at = |i: usize| src.get(i).copied().unwrap_or(0);
    for (k, out) in dst.iter_mut().enumerate() {
        *out = if shift == 0 { at(word + k) } else { at(word + k) >> shift | at(word + k + 1) << (64 - shift) };
    }
    if let Some(last) = dst.last_mut() {
        *last &= last_word_mask(len);
    }
}

/// ORs the `len` bits of `row` into `dst` at bit `start` (`dst` has room).
fn or_bits_into(row: &[u64], len: usize, start: usize, dst: &mut [u64]) {
    let (word, shift) = (start / 64, start % 64);
    let end_word = (start + len).div_ceil(64);
    for (k, &bits) in row.iter().enumerate() {
        dst[word + k] |= bits << shift;
        if shift > 0 && word + k + 1 < end_word {
            dst[word + k + 1] |= bits >> (64 - shift);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat_of(len: usize, cells: impl Fn(usize) -> bool) -> Bitmap {
        (0..len).map(cells).collect()
    }

    #[test]
    fn both_orders_against_the_definition() {
        for rows in [1, 2, 3, 8, 64, 65] {
            for cols in [0, 1, 5, 63, 64, 65, 130] {
                let flat = flat_of(rows * cols, |i| (i * 7 + i / 3) % 5 < 2);
                for order in [FlatOrder::ChunkMajor, FlatOrder::RowMajor] {
                    let grid = Grid::from_flat(&flat, rows, order).unwrap();
                    assert_eq!(grid.shape(), (rows, cols));
                    for r in 0..rows {
                        for c in 0..cols {
                            let bit = match order {
                                FlatOrder::ChunkMajor => c * rows + r,
                                FlatOrder::RowMajor => r * cols + c,
                            };
                            assert_eq!(grid.test(r, c), flat.test(bit), "{order:?} {rows}x{cols} ({r}, {c})");
                        }
                    }
                    let mut tail_check = grid.clone();
                    tail_check.set_all();
                    assert_eq!(tail_check.popcount(), rows * cols, "tails stay clear");
                    assert_eq!(grid.to_flat(order), flat, "{order:?} {rows}x{cols}");
                }
            }
        }
    }

    #[test]
    fn flat_lengths_that_do_not_split_are_refused() {
        let flat = Bitmap::new(10);
        assert_eq!(Grid::from_flat(&flat, 3, FlatOrder::RowMajor), Err(GridError::FlatLength { len: 10, rows: 3 }));
        assert_eq!(Grid::from_flat(&flat, 0, FlatOrder::ChunkMajor), Err(GridError::FlatLength { len: 10, rows: 0 }));
        assert_eq!(Grid::from_flat(&Bitmap::new(0), 4, FlatOrder::RowMajor).unwrap().shape(), (4, 0));
        assert_eq!("row".parse::<FlatOrder>(), Ok(FlatOrder::RowMajor));
        assert!("column".parse::<FlatOrder>().is_err());
    }

    #[test]
    fn deposit_and_extract_against_the_definition() {
        let mask = Grid::from_fn(5, 70, |r, c| (r * 3 + c) % 4 != 0);
        let values = Grid::from_fn(5, 70, |r, c| (r + c * c) % 3 == 0);
        let extracted = mask.extract(&values).unwrap();
        let expected: Bitmap = mask.cells().map(|(r, c)| values.test(r, c)).collect();
        assert_eq!(extracted, expected);
        let deposited = mask.deposit(&extracted).unwrap();
        assert_eq!(deposited, &values & &mask);
        let mut longer = extracted.clone();
        longer.push(true);
        assert_eq!(mask.deposit(&longer).unwrap(), deposited);
        assert_eq!(
            mask.deposit(&Bitmap::new(3)).unwrap_err(),
            GridError::ItemCountMismatch { expected: mask.popcount(), actual: 3 }
        );
        assert!(mask.extract(&Grid::zeros(5, 71)).is_err());
    }
}
