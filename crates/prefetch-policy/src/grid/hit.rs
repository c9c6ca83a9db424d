//! The prefix hit of a grid: LMCache's `fold_unfold_grouped` over a grid's
//! rows, each under its own window, with the rows read in place from the
//! grid's buffer and the retained cells written into a grid (no row
//! bitmaps in between).

use bitmap_core::Bitmap;

use crate::grid::Grid;
use crate::hybrid::{FoldWorkspace, HybridError, fold_word_rows_into, unfold_range};

impl Grid {
    /// `fold_grouped` of the rows: bit `j` of `out` (made `cols` bits long)
    /// is set iff every row can serve a prefix of `j + 1` chunks under its
    /// window (`windows[r]` for row `r`).
    ///
    /// # Errors
    ///
    /// As [`fold_unfold_grouped_into`](Grid::fold_unfold_grouped_into).
    pub fn fold_grouped_into(
        &self,
        windows: &[i64],
        ws: &mut FoldWorkspace,
        out: &mut Bitmap,
    ) -> Result<(), HybridError> {
        self.check_windows(windows)?;
        fold_word_rows_into(self.row_slices(), self.num_cols(), windows, ws, out);
        Ok(())
    }

    fn check_windows(&self, windows: &[i64]) -> Result<(), HybridError> {
        if windows.is_empty() {
            return Err(HybridError::NoWindows);
        }
        if windows.len() != self.num_rows() {
            return Err(HybridError::RowWindowMismatch { rows: self.num_rows(), windows: windows.len() });
        }
        Ok(())
    }

    /// `fold_unfold_grouped` of the rows: returns the hit (the longest
    /// prefix every row can serve under its window, `windows[r]` for row
    /// `r`) and makes `retain` this shape with, in each row, the cells of
    /// `unfold_range(hit, windows[r])` set. Temporaries live in `ws`; once
    /// warm, nothing is allocated.
    ///
    /// ```
    /// use prefetch_policy::{FoldWorkspace, Grid};
    ///
    /// // A full-attention row with a gap at chunk 3 beside a window-2 row.
    /// let found = Grid::from_rows(vec!["11101".parse()?, "01111".parse()?])?;
    /// let (mut ws, mut retain) = (FoldWorkspace::new(), Grid::empty());
    /// assert_eq!(found.fold_unfold_grouped_into(&[-1, 2], &mut ws, &mut retain)?, 3);
    /// assert_eq!(retain.to_string(), "[11100, 01100]");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`HybridError::NoWindows`] without windows,
    /// [`HybridError::RowWindowMismatch`] if there is not one window per row.
    pub fn fold_unfold_grouped_into(
        &self,
        windows: &[i64],
        ws: &mut FoldWorkspace,
        retain: &mut Grid,
    ) -> Result<usize, HybridError> {
        let cols = self.num_cols();
        let mut folded = core::mem::take(&mut ws.folded);
        let result = self.fold_grouped_into(windows, ws, &mut folded);
        ws.folded = folded;
        result?;
        let hit = ws.folded.last_set().map_or(0, |last| last + 1);
        retain.reset(self.num_rows(), cols);
        for (row, &window) in windows.iter().enumerate() {
            let (lo, hi) = unfold_range(hit as i64, window);
            retain.set_range(row, lo..hi);
        }
        Ok(hit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_row_form() {
        let windows = [-1, 2, 1, 8, 0];
        for seed in 0..40usize {
            let found = Grid::from_fn(5, 70, |r, c| (c * 13 + r * 7 + seed * 31) % 17 != 0 || c < seed);
            let (mut ws, mut retain) = (FoldWorkspace::new(), Grid::empty());
            let hit = found.fold_unfold_grouped_into(&windows, &mut ws, &mut retain).unwrap();
            let (expected_hit, rows) = crate::fold_unfold_grouped(&found.to_rows(), &windows).unwrap();
            assert_eq!(hit, expected_hit, "seed {seed}");
            assert_eq!(retain, Grid::from_rows(rows).unwrap(), "seed {seed}");
        }
        let empty = Grid::zeros(2, 0);
        let mut retain = Grid::empty();
        assert_eq!(empty.fold_unfold_grouped_into(&[-1, 2], &mut FoldWorkspace::new(), &mut retain), Ok(0));
        assert_eq!(retain.to_rows(), [Bitmap::new(0), Bitmap::new(0)]);
        assert_eq!(
            Grid::zeros(2, 3).fold_unfold_grouped_into(&[-1], &mut FoldWorkspace::new(), &mut retain),
            Err(HybridError::RowWindowMismatch { rows: 2, windows: 1 })
        );
        assert_eq!(
            Grid::zeros(2, 3).fold_unfold_grouped_into(&[], &mut FoldWorkspace::new(), &mut retain),
            Err(HybridError::NoWindows)
        );
    }
}
