//! The 64×64 bit-matrix transpose and the row split and join of a flat,
//! interleaved layout built on it (64 rows) or on the strided gather and
//! scatter (other row counts).

use super::moves::BitMoves;
use super::strided::{gather_and, scatter_or};

/// Transposes each whole 64-word block of `words` as a 64×64 bit matrix
/// (bit `c` of word `r` ↔ bit `r` of word `c`), in place; a partial last
/// block is left as it is. Hacker's Delight's recursive block swap: six
/// rounds of 32 masked swaps.
#[inline(always)]
pub(crate) fn transpose64(words: &mut [u64]) {
    for block in words.chunks_exact_mut(64) {
        let mut width = 32;
        let mut mask: u64 = 0x0000_0000_FFFF_FFFF;
        while width != 0 {
            // Pairs (r, r + width) of each 2·width run, as two slices: the
            // loop over them has no aliasing, so for width >= 4 the
            // compiler vectorises it for the kernel's features.
            for pair in block.chunks_exact_mut(2 * width) {
                let (low, high) = pair.split_at_mut(width);
                for (a, b) in low.iter_mut().zip(high.iter_mut()) {
                    let t = ((*a >> width) ^ *b) & mask;
                    *a ^= t << width;
                    *b ^= t;
                }
            }
            width >>= 1;
            mask ^= mask << width;
        }
    }
}

/// The row split (see `kernel::split_rows`): 64 rows by 64×64 transposes
/// of each block of 64 flat words, other counts by a [`gather_and`] of
/// each row, with `gather` (the kernel's choice of it).
#[inline(always)]
pub(crate) fn split_rows_with(
    src: &[u64],
    rows: &mut [&mut [u64]],
    gather: impl Fn(&[u64], usize, usize, usize, &mut [u64]),
) {
    let n = rows.len();
    if n == 64 {
        let len = rows.first().map_or(0, |r| r.len());
        let mut block = [0u64; 64];
        for b in 0..len {
            let start = (b * 64).min(src.len());
            let words = &src[start..(start + 64).min(src.len())];
            block[..words.len()].copy_from_slice(words);
            block[words.len()..].fill(0);
            transpose64(&mut block);
            for (row, &word) in rows.iter_mut().zip(&block) {
                row[b] = word;
            }
        }
        return;
    }
    for (k, row) in rows.iter_mut().enumerate() {
        gather(src, n, k, 1, row);
    }
}

/// The row join (see `kernel::join_rows`): 64 rows by 64×64 transposes,
/// other counts by a [`scatter_or`] of each row, with `scatter`.
#[inline(always)]
pub(crate) fn join_rows_with(rows: &[&[u64]], dst: &mut [u64], scatter: impl Fn(&[u64], usize, usize, &mut [u64])) {
    let n = rows.len();
    if n == 64 {
        let len = rows.first().map_or(0, |r| r.len()).min(dst.len().div_ceil(64));
        let mut block = [0u64; 64];
        for b in 0..len {
            for (slot, row) in block.iter_mut().zip(rows) {
                *slot = row[b];
            }
            transpose64(&mut block);
            let start = b * 64;
            let end = (start + 64).min(dst.len());
            dst[start..end].copy_from_slice(&block[..end - start]);
        }
        let done = (len * 64).min(dst.len());
        dst[done..].fill(0);
        return;
    }
    dst.fill(0);
    for (k, row) in rows.iter().enumerate() {
        scatter(row, n, k, dst);
    }
}

/// The row split with `moves` (the scalar kernel's).
#[inline(always)]
pub(crate) fn split_rows<B: BitMoves>(moves: B, src: &[u64], rows: &mut [&mut [u64]]) {
    split_rows_with(src, rows, |src, stride, offset, width, dst| gather_and(moves, src, stride, offset, width, dst));
}

/// The row join with `moves` (the scalar kernel's).
#[inline(always)]
pub(crate) fn join_rows<B: BitMoves>(moves: B, rows: &[&[u64]], dst: &mut [u64]) {
    join_rows_with(rows, dst, |src, stride, offset, dst| scatter_or(moves, src, stride, offset, dst));
}
