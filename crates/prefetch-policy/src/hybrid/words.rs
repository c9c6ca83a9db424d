//! The fold's word-level steps over [`bitmap_core::kernel`]'s bit moves:
//! rank reduction, periodic group masks, and the windowed run test as
//! doubling shifted ANDs.

use bitmap_core::Bitmap;
use bitmap_core::kernel;

/// Makes `out` `len` bits long (its buffer reused) and fills it with the
/// cells of `src` from bit `start` (a multiple of 64): bit `i` = the AND of
/// the `ranks` bits of `src` from `start + i·ranks`; bits past `src` read 0.
pub(crate) fn reduce_ranks(src: &Bitmap, start: usize, ranks: usize, len: usize, out: &mut Bitmap) {
    debug_assert_eq!(start % 64, 0);
    out.reset(len);
    let words = &src.as_words()[(start / 64).min(src.num_words())..];
    let mut dst = out.words_mut();
    if ranks == 1 {
        let n = dst.len().min(words.len());
        dst[..n].copy_from_slice(&words[..n]);
    } else {
        kernel::gather_and(words, ranks, 0, ranks, &mut dst);
    }
}

/// Makes `out` `len` bits long with bit `i` set iff `i % period` is in
/// `members` (each below `period`): a group mask over chunk-major cells.
/// `pattern` is scratch.
pub(crate) fn periodic_mask(
    period: usize,
    members: impl Iterator<Item = usize>,
    len: usize,
    pattern: &mut Vec<u64>,
    out: &mut Bitmap,
) {
    pattern.clear();
    pattern.resize(period.div_ceil(64), 0);
    for member in members {
        pattern[member / 64] |= 1 << (member % 64);
    }
    out.reset(len);
    let mut words = out.words_mut();
    kernel::fill_periodic(&mut words, 0, len, pattern, period);
}

/// Applies the windowed run test in place, extending runs already tested
/// for `covered` consecutive cells (of `unit` bits each) to `window`
/// cells: bit `i` stays set iff bits `i − k·unit` are set for every
/// `k < window` (bits before 0 read as set). Doubling: ANDing the row
/// with itself shifted by `s <= covered` cells extends the tested run to
/// `covered + s`, so this takes `O(log window)` passes. Returns the new
/// `covered`.
pub(crate) fn extend_runs(row: &mut [u64], unit: usize, mut covered: usize, window: usize) -> usize {
    while covered < window {
        let step = covered.min(window - covered);
        kernel::and_shifted(row, step * unit);
        covered += step;
    }
    covered
}
