//! A grid of at most 64 rows as one word per column: bit `r` of word `c`
//! is cell (`r`, `c`). A tier keeps a chunk's rows in one word of each of
//! its state bitmaps (tier-state's key table files a chunk's 64 rows as a
//! block of 64 slots), so a call over a request works a chunk at a time in
//! this form and turns its answers back into the controller's rows at the
//! end: 64×64 bit transposes on bitmap-core's dispatched kernel.

use bitmap_core::kernel;

use crate::error::GridError;
use crate::grid::{Grid, last_word_mask};

/// The most rows a grid may have to be held as column words.
pub const MAX_COLUMN_ROWS: usize = 64;

impl Grid {
    /// Writes the grid's columns to `out`, one word each: bit `r` of
    /// `out[c]` is cell (`r`, `c`). `out` is made `cols` words long, its
    /// buffer reused.
    ///
    /// ```
    /// use prefetch_policy::Grid;
    /// let grid = Grid::from_fn(3, 4, |r, c| r == c || c == 3);
    /// let mut columns = Vec::new();
    /// grid.columns_into(&mut columns)?;
    /// assert_eq!(columns, [0b001, 0b010, 0b100, 0b111]);
    /// # Ok::<(), prefetch_policy::GridError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`GridError::TooManyRows`] past [`MAX_COLUMN_ROWS`] rows.
    pub fn columns_into(&self, out: &mut Vec<u64>) -> Result<(), GridError> {
        let (rows, cols) = self.shape();
        if rows > MAX_COLUMN_ROWS {
            return Err(GridError::TooManyRows { rows, max: MAX_COLUMN_ROWS });
        }
        out.clear();
        out.resize(cols, 0);
        let mut block = [0u64; 64];
        for (b, chunk) in out.chunks_mut(64).enumerate() {
            for (r, slot) in block.iter_mut().enumerate().take(rows) {
                *slot = self.row_words(r)[b];
            }
            block[rows..].fill(0);
            if block.iter().all(|&w| w == 0) {
                continue;
            }
            kernel::transpose64(&mut block);
            chunk.copy_from_slice(&block[..chunk.len()]);
        }
        Ok(())
    }

    /// Makes the grid `rows × columns.len()` with the cells of `columns`,
    /// one word per column as [`columns_into`](Grid::columns_into) writes
    /// them (bits at `rows` and above are ignored), keeping the buffer.
    ///
    /// ```
    /// use prefetch_policy::Grid;
    /// let mut grid = Grid::default();
    /// grid.assign_columns(2, &[0b01, 0b11, 0b110])?;
    /// assert_eq!(grid.to_string(), "[110, 011]");
    /// # Ok::<(), prefetch_policy::GridError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`GridError::TooManyRows`] past [`MAX_COLUMN_ROWS`] rows; the grid
    /// is unchanged.
    pub fn assign_columns(&mut self, rows: usize, columns: &[u64]) -> Result<(), GridError> {
        if rows > MAX_COLUMN_ROWS {
            return Err(GridError::TooManyRows { rows, max: MAX_COLUMN_ROWS });
        }
        let cols = columns.len();
        self.reset(rows, cols);
        let stride = self.words_per_row();
        let mut block = [0u64; 64];
        for (b, chunk) in columns.chunks(64).enumerate() {
            if chunk.iter().all(|&w| w == 0) {
                continue;
            }
            block[..chunk.len()].copy_from_slice(chunk);
            block[chunk.len()..].fill(0);
            kernel::transpose64(&mut block);
            let mask = if b + 1 == stride { last_word_mask(cols) } else { !0 };
            let words = self.words_mut();
            for (r, &word) in block.iter().enumerate().take(rows) {
                words[r * stride + b] = word & mask;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shape up to 64 rows and across word boundaries of columns.
    #[test]
    fn columns_round_trip_against_cells() {
        for rows in [0usize, 1, 3, 8, 63, 64] {
            for cols in [0usize, 1, 5, 63, 64, 65, 130] {
                let grid = Grid::from_fn(rows, cols, |r, c| (r * 7 + c * 13) % 5 < 2);
                let mut columns = Vec::new();
                grid.columns_into(&mut columns).unwrap();
                assert_eq!(columns.len(), grid.num_cols());
                for (c, &word) in columns.iter().enumerate() {
                    for r in 0..64 {
                        assert_eq!(word >> r & 1 == 1, r < rows && grid.test(r, c), "{rows}x{cols} ({r}, {c})");
                    }
                }
                let mut back = Grid::zeros(2, 2);
                back.assign_columns(rows, &columns).unwrap();
                assert_eq!(back.shape(), grid.shape());
                assert_eq!(back, grid);
            }
        }
    }

    #[test]
    fn bits_past_the_rows_are_ignored_and_too_many_rows_refused() {
        let mut grid = Grid::zeros(1, 1);
        grid.assign_columns(2, &[!0, 0b10]).unwrap();
        assert_eq!(grid.to_string(), "[10, 11]");
        assert_eq!(grid.popcount(), 3);
        let tall = Grid::zeros(65, 3);
        assert_eq!(tall.columns_into(&mut Vec::new()), Err(GridError::TooManyRows { rows: 65, max: 64 }));
        assert_eq!(grid.assign_columns(65, &[0]), Err(GridError::TooManyRows { rows: 65, max: 64 }));
        assert_eq!(grid.to_string(), "[10, 11]");
    }
}
