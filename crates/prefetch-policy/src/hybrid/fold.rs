//! `fold`: which prefix lengths every group can serve.

use core::borrow::Borrow;

use bitmap_core::Bitmap;

use super::error::HybridError;
use super::words::{gather_cells, window_test_in_place};
use super::workspace::FoldWorkspace;

/// The effective rule of a window for `num_chunks` chunks: `None` for full
/// attention (`window <= 0`, or a window that covers every prefix, which
/// serves exactly what full attention serves), else the window in chunks.
#[inline]
pub(crate) fn sliding(window: i64, num_chunks: usize) -> Option<usize> {
    match usize::try_from(window) {
        Ok(w) if w >= 1 && w < num_chunks => Some(w),
        _ => None,
    }
}

/// Checks the flat layout's shape and returns `groups × ranks`, the bits
/// per chunk.
pub(crate) fn chunk_width(num_chunks: usize, num_ranks: usize, windows: &[i64]) -> Result<usize, HybridError> {
    if num_ranks < 1 {
        return Err(HybridError::ZeroRanks);
    }
    if windows.is_empty() {
        return Err(HybridError::NoWindows);
    }
    let overflow = || HybridError::SizeOverflow { num_chunks, num_groups: windows.len(), num_ranks };
    let width = windows.len().checked_mul(num_ranks).ok_or_else(overflow)?;
    Ok(width)
}

/// Which prefix lengths every group can serve, over the flat chunk-major
/// layout (bit `j·G·R + g·R + r` is chunk `j`, group `g`, rank `r`, with
/// `G = windows.len()`).
///
/// Returns `num_chunks` bits: bit `j` is set iff every group can serve
/// prefix length `j + 1`. A chunk is present for a group iff all `num_ranks`
/// of its rank bits are set; group `g` serves length `L` iff its chunks
/// `0..L` are present (full attention, `windows[g] <= 0`) or its chunks
/// `max(0, L − w)..L` are (sliding window `w = windows[g] >= 1`; `w = 1` is a
/// Mamba/recurrent group, which needs only the last chunk). Bits past the
/// end of `found` read as absent; bits past `num_chunks · G · R` are ignored.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::{FULL_ATTENTION_WINDOW, fold};
///
/// // 5 chunks, 1 rank, groups [full attention, window 2]; bit 2j + g.
/// // Full holds chunks 0..4, the window-2 group holds chunks 2, 3, 4.
/// let found = Bitmap::from_indices(10, [0, 2, 4, 5, 6, 7, 9])?;
/// let servable = fold(&found, 5, 1, &[FULL_ATTENTION_WINDOW, 2])?;
/// assert_eq!(servable.to_indices(), [3]); // only length 4
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`HybridError::ZeroRanks`] if `num_ranks < 1`, [`HybridError::NoWindows`]
/// if `windows` is empty, [`HybridError::SizeOverflow`] if `G · R` does not
/// fit in a `usize`.
pub fn fold(found: &Bitmap, num_chunks: usize, num_ranks: usize, windows: &[i64]) -> Result<Bitmap, HybridError> {
    let mut out = Bitmap::new(0);
    fold_into(found, num_chunks, num_ranks, windows, &mut FoldWorkspace::new(), &mut out)?;
    Ok(out)
}

/// [`fold`] into `out` (made `num_chunks` bits long, its buffer reused),
/// with temporaries in `ws`: once `ws` and `out` have served a call of the
/// same shape, this allocates nothing.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::{FoldWorkspace, fold_into};
///
/// let mut ws = FoldWorkspace::new();
/// let mut servable = Bitmap::new(0);
/// // 3 chunks × 2 ranks, one full-attention group: chunk 1 misses rank 1.
/// fold_into(&"111011".parse()?, 3, 2, &[-1], &mut ws, &mut servable)?;
/// assert_eq!(servable.to_string(), "100");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`fold`]; `out` is unspecified after an error.
pub fn fold_into(
    found: &Bitmap,
    num_chunks: usize,
    num_ranks: usize,
    windows: &[i64],
    ws: &mut FoldWorkspace,
    out: &mut Bitmap,
) -> Result<(), HybridError> {
    let width = chunk_width(num_chunks, num_ranks, windows)?;
    out.reset(num_chunks);
    // A chunk that runs past the end of `found` is absent for the last
    // group, and every rule needs the prefix's last chunk: no length past
    // the last whole chunk of `found` is servable.
    let mut cap = num_chunks.min(found.len() / width);
    // Full-attention groups first: each serves exactly its leading present
    // chunks, so together they cap the lengths any group needs to be
    // tested for (LMCache PR #5266's early stop).
    for (g, &window) in windows.iter().enumerate() {
        if cap == 0 {
            break;
        }
        if sliding(window, num_chunks).is_none() {
            gather_cells(found, width, g * num_ranks, num_ranks, cap, &mut ws.present);
            cap = cap.min(ws.present.count_leading_ones());
        }
    }
    out.set_range(..cap);
    for (g, &window) in windows.iter().enumerate() {
        if cap == 0 {
            break;
        }
        if let Some(w) = sliding(window, num_chunks) {
            gather_cells(found, width, g * num_ranks, num_ranks, cap, &mut ws.present);
            and_window_into(&mut ws.present, w, out);
        }
    }
    Ok(())
}

/// Applies window `w` to the presence row `row` (at most `out.len()` bits)
/// and ANDs the servable row into the first words of `out`. `out`'s bits
/// past `row.len()` must already be clear.
fn and_window_into(row: &mut Bitmap, w: usize, out: &mut Bitmap) {
    let mut row_words = row.words_mut();
    window_test_in_place(&mut row_words, w);
    let mut out_words = out.words_mut();
    for (o, r) in out_words.iter_mut().zip(row_words.iter()) {
        *o &= *r;
    }
}

/// Which prefix lengths every row can serve, each under its own window:
/// the grouped layout, one row per (group, rank) of `C = rows[0].len()`
/// chunks, paired one to one with `windows`. Bit `j` of the result is set
/// iff every row can serve length `j + 1` under [`fold`]'s rule (a row is
/// one rank of one group, so no rank reduction).
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::fold_grouped;
///
/// let full: Bitmap = "111100".parse()?;
/// let window_2: Bitmap = "000011".parse()?;
/// // full attention caps at 4; a window-2 row holding only chunks 4, 5 serves
/// // length 6 alone, but full attention does not.
/// assert_eq!(fold_grouped(&[&full, &window_2], &[-1, 2])?.to_string(), "000000");
/// assert_eq!(fold_grouped(&[&window_2], &[2])?.to_string(), "000001");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`HybridError::NoWindows`] if `windows` is empty (checked first, so
/// `fold_grouped(&[], &[])` fails), [`HybridError::RowWindowMismatch`] if
/// the counts differ, [`HybridError::RaggedRows`] if the rows' lengths
/// differ.
pub fn fold_grouped<B: Borrow<Bitmap>>(rows: &[B], windows: &[i64]) -> Result<Bitmap, HybridError> {
    let mut out = Bitmap::new(0);
    fold_grouped_into(rows, windows, &mut FoldWorkspace::new(), &mut out)?;
    Ok(out)
}

/// Checks a grouped input and returns its chunk count.
pub(crate) fn grouped_chunks<B: Borrow<Bitmap>>(rows: &[B], windows: &[i64]) -> Result<usize, HybridError> {
    if windows.is_empty() {
        return Err(HybridError::NoWindows);
    }
    if rows.len() != windows.len() {
        return Err(HybridError::RowWindowMismatch { rows: rows.len(), windows: windows.len() });
    }
    let expected = rows[0].borrow().len();
    if let Some((row, len)) = rows.iter().map(|r| r.borrow().len()).enumerate().find(|&(_, len)| len != expected) {
        return Err(HybridError::RaggedRows { row, len, expected });
    }
    Ok(expected)
}

/// [`fold_grouped`] into `out` (made `C` bits long, its buffer reused), with
/// temporaries in `ws`: allocates nothing once warm.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::{FoldWorkspace, fold_grouped_into};
///
/// let rows: [Bitmap; 2] = ["11011".parse()?, "11111".parse()?];
/// let (mut ws, mut out) = (FoldWorkspace::new(), Bitmap::new(0));
/// fold_grouped_into(&rows, &[1, -1], &mut ws, &mut out)?; // Mamba beside full
/// assert_eq!(out.to_string(), "11011");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`fold_grouped`]; `out` is unspecified after an error.
pub fn fold_grouped_into<B: Borrow<Bitmap>>(
    rows: &[B],
    windows: &[i64],
    ws: &mut FoldWorkspace,
    out: &mut Bitmap,
) -> Result<(), HybridError> {
    let num_chunks = grouped_chunks(rows, windows)?;
    out.reset(num_chunks);
    let mut cap = num_chunks;
    for (row, &window) in rows.iter().zip(windows) {
        if sliding(window, num_chunks).is_none() {
            cap = cap.min(row.borrow().count_leading_ones());
        }
    }
    out.set_range(..cap);
    for (row, &window) in rows.iter().zip(windows) {
        if cap == 0 {
            break;
        }
        if let Some(w) = sliding(window, num_chunks) {
            copy_prefix(row.borrow(), cap, &mut ws.present);
            and_window_into(&mut ws.present, w, out);
        }
    }
    Ok(())
}

/// Makes `dst` the first `len` bits of `src`, reusing its buffer.
fn copy_prefix(src: &Bitmap, len: usize, dst: &mut Bitmap) {
    dst.reset(len);
    let mut words = dst.words_mut();
    let n = words.len();
    words.copy_from_slice(&src.as_words()[..n]);
}
