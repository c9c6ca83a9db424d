//! `fold`: which prefix lengths every group can serve.

use core::borrow::Borrow;

use bitmap_core::{Bitmap, kernel};

use super::error::HybridError;
use super::words::{extend_runs, periodic_mask, reduce_ranks};
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
    let groups = windows.len();
    out.reset(num_chunks);
    // A chunk that runs past the end of `found` is absent for the last
    // group, and every rule needs the prefix's last chunk: no length past
    // the last whole chunk of `found` is servable.
    let whole = num_chunks.min(found.len() / width);
    // The leading chunks every group holds whole serve every length up to
    // them; only the cells from a window's reach before the first gap on
    // need a look, from a multiple of 64 chunks so that the flat bits and
    // the cells both start on a word.
    let present = whole.min(found.count_leading_ones() / width);
    if present == whole {
        out.set_range(..whole);
        return Ok(());
    }
    let reach = windows.iter().filter_map(|&w| sliding(w, num_chunks)).max().unwrap_or(0);
    if reach == 0 {
        // Every group is full attention: the first chunk some group lacks
        // ends every prefix, and it is the chunk of found's first zero.
        out.set_range(..present);
        return Ok(());
    }
    let base = present.saturating_sub(reach) / 64 * 64;
    reduce_ranks(found, base * width, num_ranks, (whole - base) * groups, &mut ws.cells);

    // Full-attention groups serve exactly their leading present chunks:
    // together they cap the lengths worth testing (LMCache PR #5266's early
    // stop). The first absent cell of a full group is the first zero of
    // `cells | !full`.
    let is_full = |g: &usize| sliding(windows[*g], num_chunks).is_none();
    let mut cap = whole;
    if (0..groups).any(|g| is_full(&g)) {
        periodic_mask(groups, (0..groups).filter(is_full), ws.cells.len(), &mut ws.pattern, &mut ws.mask);
        let gap = ws
            .cells
            .as_words()
            .iter()
            .zip(ws.mask.as_words())
            .map(|(&c, &m)| c | !m)
            .enumerate()
            .find(|&(_, w)| w != u64::MAX)
            .map(|(i, w)| i * 64 + w.trailing_ones() as usize);
        if let Some(cell) = gap {
            cap = cap.min(base + cell / groups);
        }
    }
    out.set_range(..cap);
    if cap <= present {
        return Ok(());
    }

    // Sliding-window groups: the windowed run test over the chunk-major
    // cells (a chunk is `groups` bits), each window's groups taken when the
    // doubling passes reach their window. The cells before `base` are
    // present, which is what the shifts bring in.
    let cells_len = (cap - base) * groups;
    ws.runs.reset(cells_len);
    {
        let mut runs = ws.runs.words_mut();
        let n = runs.len();
        runs.copy_from_slice(&ws.cells.as_words()[..n]);
    }
    ws.servable.reset(cells_len);
    ws.servable.set_all();
    ws.windows.clear();
    ws.windows.extend(windows.iter().filter_map(|&w| sliding(w, num_chunks)));
    ws.windows.sort_unstable();
    ws.windows.dedup();
    let mut covered = 1;
    for i in 0..ws.windows.len() {
        let window = ws.windows[i];
        covered = extend_runs(&mut ws.runs.words_mut(), groups, covered, window);
        let members = (0..groups).filter(|&g| sliding(windows[g], num_chunks) == Some(window));
        periodic_mask(groups, members, cells_len, &mut ws.pattern, &mut ws.mask);
        // servable &= runs | !mask, as: mask &= !runs (this window's
        // failing cells), then servable &= !mask.
        ws.mask.difference_with(&ws.runs);
        ws.servable.difference_with(&ws.mask);
    }
    // A length is servable iff all `groups` cells of its last chunk are.
    ws.chunks.reset(cap - base);
    kernel::gather_and(ws.servable.as_words(), groups, 0, groups, &mut ws.chunks.words_mut());
    let mut out_words = out.words_mut();
    let tail = &mut out_words[base / 64..];
    let n = tail.len().min(ws.chunks.num_words());
    kernel::and_assign(&mut tail[..n], &ws.chunks.as_words()[..n]);
    Ok(())
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
    fold_word_rows_into(rows.iter().map(|row| row.borrow().as_words()), num_chunks, windows, ws, out);
    Ok(())
}

/// The fold of [`fold_grouped_into`] over rows given as words (each row
/// `num_chunks` bits in `num_chunks.div_ceil(64)` words, bits past it
/// clear), one per window: the checks are the caller's. The grid plan
/// folds its contiguous grid's rows with it.
pub(crate) fn fold_word_rows_into<'r>(
    rows: impl Iterator<Item = &'r [u64]> + Clone,
    num_chunks: usize,
    windows: &[i64],
    ws: &mut FoldWorkspace,
    out: &mut Bitmap,
) {
    out.reset(num_chunks);
    // The run test below copies up to a whole row into `ws.runs`, as far as
    // the rows' gaps say: room for the whole row now, so that a later call
    // of this shape allocates nothing whatever its rows hold (a workspace
    // warmed on rows without gaps would otherwise grow on the first gap).
    if ws.runs.capacity_bits() < num_chunks {
        ws.runs = Bitmap::with_capacity_bits(num_chunks);
    }
    let mut cap = num_chunks;
    for (row, &window) in rows.clone().zip(windows) {
        if sliding(window, num_chunks).is_none() {
            cap = cap.min(leading_ones(row, num_chunks));
        }
    }
    out.set_range(..cap);
    for (row, &window) in rows.zip(windows) {
        let Some(w) = sliding(window, num_chunks) else { continue };
        // The row serves every length up to its leading ones; from a
        // window's reach before its first gap on, the run test decides.
        let present = leading_ones(row, num_chunks);
        if present >= cap {
            continue;
        }
        let base = present.saturating_sub(w) / 64 * 64;
        copy_range(row, base, cap, &mut ws.runs);
        extend_runs(&mut ws.runs.words_mut(), 1, 1, w);
        let mut out_words = out.words_mut();
        let tail = &mut out_words[base / 64..];
        let n = tail.len().min(ws.runs.num_words());
        kernel::and_assign(&mut tail[..n], &ws.runs.as_words()[..n]);
    }
}

/// The run of set bits from bit 0 of `words`, at most `len` (the row's
/// length: its bits past it are clear).
#[inline]
pub(crate) fn leading_ones(words: &[u64], len: usize) -> usize {
    match kernel::position_not_all_ones(words) {
        Some(word) => (word * 64 + words[word].trailing_ones() as usize).min(len),
        None => len,
    }
}

/// Makes `dst` bits `start..end` of the row `src` (`start` a multiple of
/// 64), reusing its buffer.
fn copy_range(src: &[u64], start: usize, end: usize, dst: &mut Bitmap) {
    dst.reset(end - start);
    let mut words = dst.words_mut();
    let n = words.len();
    words.copy_from_slice(&src[start / 64..start / 64 + n]);
}
