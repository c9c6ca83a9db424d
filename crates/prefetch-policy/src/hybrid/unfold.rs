//! `unfold`: the keys a prefix hit needs, group by group.

use bitmap_core::{Bitmap, kernel};

use super::error::HybridError;
use super::fold::chunk_width;

/// The longest chunk (`groups × ranks` bits, in words) that
/// [`unfold_into`] fills from a pattern on the stack.
const PATTERN_WORDS: usize = 16;

/// The chunks `lo..hi` a group with window `window` needs to serve a prefix
/// of `prefix_len` chunks: `(0, 0)` if `prefix_len <= 0`, else
/// `(0, prefix_len)` for full attention (`window <= 0`) and
/// `(max(0, prefix_len − window), prefix_len)` for a sliding window.
///
/// ```
/// use prefetch_policy::unfold_range;
///
/// assert_eq!(unfold_range(10, -1), (0, 10));
/// assert_eq!(unfold_range(10, 4), (6, 10));
/// assert_eq!(unfold_range(3, 4), (0, 3));
/// assert_eq!(unfold_range(0, 4), (0, 0));
/// assert_eq!(unfold_range(-5, -1), (0, 0));
/// ```
pub fn unfold_range(prefix_len: i64, window: i64) -> (usize, usize) {
    match usize::try_from(prefix_len) {
        Ok(hit) if hit > 0 => chunk_range(hit, window),
        _ => (0, 0),
    }
}

/// [`unfold_range`] for a non-negative prefix length.
#[inline]
pub(crate) fn chunk_range(hit: usize, window: i64) -> (usize, usize) {
    match usize::try_from(window) {
        Ok(w) if w >= 1 => (hit.saturating_sub(w), hit),
        _ => (0, hit),
    }
}

/// The keys needed to serve a prefix hit of `hit` chunks, in the flat
/// chunk-major layout of [`fold`](crate::fold): `num_chunks · G · R` bits,
/// with, for each group `g`, all `num_ranks` rank bits of the chunks
/// [`unfold_range`]`(hit, windows[g])` set. `hit` is clamped to
/// `num_chunks`; a hit of 0 gives all zeros.
///
/// ```
/// use prefetch_policy::unfold;
///
/// // 4 chunks × 2 ranks, groups [full, window 1]: hit 3 needs chunks 0..3 of
/// // the full group and chunk 2 of the Mamba group.
/// let mask = unfold(3, 4, 2, &[-1, 1])?;
/// assert_eq!(mask.to_string(), "1100110011110000");
/// assert_eq!(unfold(99, 3, 1, &[-1])?.to_indices(), [0, 1, 2]); // clamped
/// # Ok::<(), prefetch_policy::HybridError>(())
/// ```
///
/// # Errors
///
/// As [`fold`](crate::fold), and [`HybridError::SizeOverflow`] if
/// `num_chunks · G · R` does not fit in a `usize`.
pub fn unfold(hit: usize, num_chunks: usize, num_ranks: usize, windows: &[i64]) -> Result<Bitmap, HybridError> {
    let mut out = Bitmap::new(0);
    unfold_into(hit, num_chunks, num_ranks, windows, &mut out)?;
    Ok(out)
}

/// [`unfold`] into `mask` (made `num_chunks · G · R` bits long, its buffer
/// reused): allocates nothing once `mask` has held that many bits.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::unfold_into;
///
/// let mut mask = Bitmap::new(0);
/// unfold_into(2, 3, 1, &[-1, -1], &mut mask)?;
/// assert_eq!(mask.to_string(), "111100");
/// # Ok::<(), prefetch_policy::HybridError>(())
/// ```
///
/// # Errors
///
/// As [`unfold`]; `mask` is unspecified after an error.
pub fn unfold_into(
    hit: usize,
    num_chunks: usize,
    num_ranks: usize,
    windows: &[i64],
    mask: &mut Bitmap,
) -> Result<(), HybridError> {
    let width = chunk_width(num_chunks, num_ranks, windows)?;
    let len = num_chunks.checked_mul(width).ok_or(HybridError::SizeOverflow {
        num_chunks,
        num_groups: windows.len(),
        num_ranks,
    })?;
    mask.reset(len);
    let hit = hit.min(num_chunks);
    // From the highest `lo` on, every group needs every chunk: one range.
    let top = windows.iter().map(|&w| chunk_range(hit, w).0).max().unwrap_or(0);
    mask.set_range(top * width..hit * width);
    if top == 0 {
        return Ok(());
    }
    // Below it, the chunks between two successive `lo`s all need the same
    // groups: one periodic fill of that pattern (a chunk's `width` bits)
    // per segment, at most one per group.
    if width > PATTERN_WORDS * 64 {
        // A chunk too wide for the pattern on the stack: a range per chunk.
        for (g, &window) in windows.iter().enumerate() {
            let (lo, _) = chunk_range(hit, window);
            for chunk in lo..top {
                let start = chunk * width + g * num_ranks;
                mask.set_range(start..start + num_ranks);
            }
        }
        return Ok(());
    }
    let lo_of = |w: i64| chunk_range(hit, w).0;
    let mut words = mask.words_mut();
    let mut from = windows.iter().map(|&w| lo_of(w)).min().unwrap_or(top);
    while from < top {
        let to = windows.iter().map(|&w| lo_of(w)).filter(|&lo| lo > from).min().unwrap_or(top);
        let mut pattern = [0u64; PATTERN_WORDS];
        for (g, _) in windows.iter().enumerate().filter(|&(_, &w)| lo_of(w) <= from) {
            set_bits(&mut pattern, g * num_ranks, num_ranks);
        }
        kernel::fill_periodic(&mut words, from * width, to * width, &pattern, width);
        from = to;
    }
    Ok(())
}

/// Sets bits `start..start + n` of `words`, a word at a time.
fn set_bits(words: &mut [u64], start: usize, n: usize) {
    let (mut i, end) = (start, start + n);
    while i < end {
        let (word, bit) = (i / 64, i % 64);
        let take = (64 - bit).min(end - i);
        let ones = if take == 64 { u64::MAX } else { (1 << take) - 1 };
        words[word] |= ones << bit;
        i += take;
    }
}

/// The grouped form of [`unfold`]: one `num_chunks`-bit row per window,
/// row `i` with the chunks [`unfold_range`]`(hit, windows[i])` set (`hit`
/// clamped to `num_chunks`).
///
/// ```
/// use prefetch_policy::unfold_grouped;
///
/// let rows = unfold_grouped(4, 5, &[-1, 2])?;
/// assert_eq!([rows[0].to_string(), rows[1].to_string()], ["11110", "00110"]);
/// # Ok::<(), prefetch_policy::HybridError>(())
/// ```
///
/// # Errors
///
/// [`HybridError::NoWindows`] if `windows` is empty.
pub fn unfold_grouped(hit: usize, num_chunks: usize, windows: &[i64]) -> Result<Vec<Bitmap>, HybridError> {
    let mut out = Vec::new();
    unfold_grouped_into(hit, num_chunks, windows, &mut out)?;
    Ok(out)
}

/// [`unfold_grouped`] into `out`, which is resized to `windows.len()` rows,
/// each made `num_chunks` bits long with its buffer reused: allocates
/// nothing once `out` has held as many rows of that length.
///
/// ```
/// use prefetch_policy::unfold_grouped_into;
///
/// let mut rows = Vec::new();
/// unfold_grouped_into(3, 3, &[1], &mut rows)?;
/// assert_eq!(rows[0].to_string(), "001");
/// # Ok::<(), prefetch_policy::HybridError>(())
/// ```
///
/// # Errors
///
/// As [`unfold_grouped`]; `out` is unspecified after an error.
pub fn unfold_grouped_into(
    hit: usize,
    num_chunks: usize,
    windows: &[i64],
    out: &mut Vec<Bitmap>,
) -> Result<(), HybridError> {
    if windows.is_empty() {
        return Err(HybridError::NoWindows);
    }
    let hit = hit.min(num_chunks);
    out.truncate(windows.len());
    out.resize_with(windows.len(), Bitmap::default);
    for (row, &window) in out.iter_mut().zip(windows) {
        row.reset(num_chunks);
        let (lo, hi) = chunk_range(hit, window);
        row.set_range(lo..hi);
    }
    Ok(())
}
