//! Reference forms of the hybrid fold and unfold, re-exported from
//! [`crate::reference`]: the oracle written from the definitions, and
//! LMCache's per-bit loop as the benchmarks' baseline.

use core::borrow::Borrow;

use bitmap_core::Bitmap;

use super::error::HybridError;
use super::fold::{chunk_width, grouped_chunks};
use super::unfold::chunk_range;

/// Bit `index` of `bits`, absent past the end.
fn bit(bits: &Bitmap, index: usize) -> bool {
    bits.get(index).unwrap_or(false)
}

/// Whether group `g` can serve `len` chunks, tested chunk by chunk from the
/// definition, `present(j)` saying whether its chunk `j` is present.
fn serves(len: usize, window: i64, present: impl Fn(usize) -> bool) -> bool {
    let lo = if window <= 0 { 0 } else { len.saturating_sub(window.unsigned_abs() as usize) };
    (lo..len).all(present)
}

/// [`fold`](crate::fold) straight from the definition: for each prefix
/// length `L`, each group's rule tested chunk by chunk, each chunk's `R`
/// rank bits one at a time. The oracle of the tests; `O(C² · G · R)`.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::fold;
/// use prefetch_policy::reference::naive_fold;
///
/// let found: Bitmap = "1101101111".parse()?;
/// assert_eq!(naive_fold(&found, 5, 1, &[-1, 2])?, fold(&found, 5, 1, &[-1, 2])?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`fold`](crate::fold).
pub fn naive_fold(found: &Bitmap, num_chunks: usize, num_ranks: usize, windows: &[i64]) -> Result<Bitmap, HybridError> {
    let width = chunk_width(num_chunks, num_ranks, windows)?;
    let present = |g: usize, j: usize| (0..num_ranks).all(|r| bit(found, j * width + g * num_ranks + r));
    Ok((1..=num_chunks)
        .map(|len| windows.iter().enumerate().all(|(g, &w)| serves(len, w, |j| present(g, j))))
        .collect())
}

/// [`unfold`](crate::unfold) bit by bit from the definition.
///
/// # Errors
///
/// As [`unfold`](crate::unfold).
pub fn naive_unfold(hit: usize, num_chunks: usize, num_ranks: usize, windows: &[i64]) -> Result<Bitmap, HybridError> {
    let width = chunk_width(num_chunks, num_ranks, windows)?;
    let len = num_chunks.checked_mul(width).ok_or(HybridError::SizeOverflow {
        num_chunks,
        num_groups: windows.len(),
        num_ranks,
    })?;
    let hit = hit.min(num_chunks);
    Ok((0..len)
        .map(|i| {
            let (j, g) = (i / width, i % width / num_ranks);
            let (lo, hi) = chunk_range(hit, windows[g]);
            lo <= j && j < hi
        })
        .collect())
}

/// [`fold_grouped`](crate::fold_grouped) from the definition, row by row and
/// chunk by chunk.
///
/// # Errors
///
/// As [`fold_grouped`](crate::fold_grouped).
pub fn naive_fold_grouped<B: Borrow<Bitmap>>(rows: &[B], windows: &[i64]) -> Result<Bitmap, HybridError> {
    let num_chunks = grouped_chunks(rows, windows)?;
    Ok((1..=num_chunks)
        .map(|len| rows.iter().zip(windows).all(|(row, &w)| serves(len, w, |j| bit(row.borrow(), j))))
        .collect())
}

/// The hit and mask of [`fold_unfold_ranked`](crate::fold_unfold_ranked)
/// from [`naive_fold`] and [`naive_unfold`].
///
/// # Errors
///
/// As [`fold_unfold_ranked`](crate::fold_unfold_ranked).
pub fn naive_fold_unfold_ranked(
    found: &Bitmap,
    num_chunks: usize,
    num_ranks: usize,
    windows: &[i64],
) -> Result<(usize, Bitmap), HybridError> {
    let servable = naive_fold(found, num_chunks, num_ranks, windows)?;
    let hit = servable.last_set().map_or(0, |last| last + 1);
    Ok((hit, naive_unfold(hit, num_chunks, num_ranks, windows)?))
}

/// LMCache's native `fold_unfold_ranked` loop, bit by bit: for each group,
/// for each length `L`, test the `R` rank bits of chunk `L − 1` and track
/// the run of present chunks; then set each retained chunk's rank bits with
/// one range call per (chunk, group). The baseline the benchmarks measure
/// the word-level engine against (`O(C · G · R)`, like LMCache's).
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::fold_unfold_ranked;
/// use prefetch_policy::reference::lmcache_fold_unfold_ranked;
///
/// let found = Bitmap::with_prefix(64, 50);
/// assert_eq!(lmcache_fold_unfold_ranked(&found, 8, 2, &[-1, 3, 1, -1])?, fold_unfold_ranked(&found, 8, 2, &[-1, 3, 1, -1])?);
/// # Ok::<(), prefetch_policy::HybridError>(())
/// ```
///
/// # Errors
///
/// As [`fold_unfold_ranked`](crate::fold_unfold_ranked).
pub fn lmcache_fold_unfold_ranked(
    found: &Bitmap,
    num_chunks: usize,
    num_ranks: usize,
    windows: &[i64],
) -> Result<(usize, Bitmap), HybridError> {
    let width = chunk_width(num_chunks, num_ranks, windows)?;
    let len = num_chunks.checked_mul(width).ok_or(HybridError::SizeOverflow {
        num_chunks,
        num_groups: windows.len(),
        num_ranks,
    })?;
    let mut servable = vec![true; num_chunks];
    for (g, &window) in windows.iter().enumerate() {
        let effective = if window <= 0 { num_chunks } else { window.unsigned_abs() as usize };
        let mut run = 0;
        for len in 1..=num_chunks {
            let base = (len - 1) * width + g * num_ranks;
            let present = (0..num_ranks).all(|r| bit(found, base + r));
            run = if present { run + 1 } else { 0 };
            servable[len - 1] &= run >= effective.min(len);
        }
    }
    let hit = servable.iter().rposition(|&s| s).map_or(0, |last| last + 1);
    let mut mask = Bitmap::new(len);
    for (g, &window) in windows.iter().enumerate() {
        let (lo, hi) = chunk_range(hit, window);
        for chunk in lo..hi {
            let start = chunk * width + g * num_ranks;
            mask.set_range(start..start + num_ranks);
        }
    }
    Ok((hit, mask))
}
