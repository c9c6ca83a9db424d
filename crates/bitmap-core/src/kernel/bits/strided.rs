//! The strided gather with an AND over each cell ([`gather_and`]: the rank
//! reduction of a flat layout, the split of one row out of an interleaved
//! bitmap) and the strided scatter ([`scatter_or`]: the join of one row).

use super::moves::BitMoves;
use super::words::{BitWriter, Periodic, bits_from, low_bits, word};

/// `dst` bit `j` (for every bit of `dst`) = the AND of `src` bits
/// `j·stride + offset .. + width` (bits past `src` read 0). `stride` and
/// `width` are at least 1.
///
/// One pass over the source words: each word's cells are the positions of
/// a periodic mask, tested for `width` set bits by a doubling AND over the
/// word and the next (as one `u128`), then compressed out and appended. A
/// cell wider than 64 bits is tested word by word.
#[inline(always)]
pub(crate) fn gather_and<B: BitMoves>(
    moves: B,
    src: &[u64],
    stride: usize,
    offset: usize,
    width: usize,
    dst: &mut [u64],
) {
    let total = dst.len() * 64;
    if total == 0 {
        return;
    }
    if 64usize.is_multiple_of(stride) && offset % 64 + width <= stride {
        return gather_and_aligned(moves, &src[(offset / 64).min(src.len())..], stride, offset % 64, width, dst);
    }
    if stride <= BLOCK_STRIDE && width <= 64 {
        return gather_and_strided(moves, &src[(offset / 64).min(src.len())..], stride, offset % 64, width, dst);
    }
    let mut out = BitWriter::new(dst, 0);
    if width > 64 {
        let mut start = offset;
        for _ in 0..total {
            let mut all = true;
            let mut rest = width;
            let mut p = start;
            while rest > 0 && all {
                let take = rest.min(64);
                all = bits_from(src, p) & low_bits(take as u32) == low_bits(take as u32);
                p = p.saturating_add(take);
                rest -= take;
            }
            out.push(u64::from(all), 1);
            start = start.saturating_add(stride);
        }
        out.finish();
        return;
    }
    let mut cells = Periodic::new(stride, offset % 64);
    let mut i = offset / 64;
    let mut written = 0;
    while written < total && !out.is_full() {
        if i >= src.len() {
            // Every further cell reads as absent: zeros to the end.
            while !out.is_full() {
                out.push(0, 64);
            }
            break;
        }
        let skipped = cells.skip_empty();
        if skipped > 0 {
            i += skipped;
            continue;
        }
        let mask = cells.advance();
        let pair = u128::from(src[i]) | u128::from(word(src, i + 1)) << 64;
        let mut run = pair;
        let mut covered = 1;
        while covered < width {
            let shift = covered.min(width - covered);
            run &= run >> shift;
            covered += shift;
        }
        let n = mask.count_ones();
        out.push(moves.compress(run as u64, mask), n);
        written += n as usize;
        i += 1;
    }
    out.finish();
}

/// The widest stride [`gather_and_strided`] takes: its per-word masks
/// live in a stack array of `stride + 1` words.
const BLOCK_STRIDE: usize = 64;

/// The doubling steps of a `width`-bit AND run (`width <= 64`): after
/// `x &= x >> s` for each, bit `p` is the AND of bits `p..p + width`.
#[inline(always)]
fn run_steps(width: usize) -> ([u32; 6], usize) {
    let mut shifts = [0u32; 6];
    let (mut covered, mut steps) = (1, 0);
    while covered < width {
        let shift = covered.min(width - covered);
        shifts[steps] = shift as u32;
        steps += 1;
        covered += shift;
    }
    (shifts, steps)
}

/// [`gather_and`] for `stride <= 64`, `width <= 64` and `offset < 64`, any
/// stride (3, 5, 20: the shapes that are not powers of two). Output word
/// `k` is cells `64k..64k + 64`, which start in input words `k·stride ..
/// k·stride + stride` (and, for an offset past the first stride, one word
/// more): the same positions in every such block, so the per-word masks
/// and where each word's cells land in the output word are computed once
/// per call, and each output word is a fixed sequence of shifted ANDs
/// (the run test, over a word and the next, as cells may cross a word),
/// one compress per input word and an OR: no per-word bookkeeping.
#[inline(always)]
fn gather_and_strided<B: BitMoves>(moves: B, src: &[u64], stride: usize, offset: usize, width: usize, dst: &mut [u64]) {
    debug_assert!(stride <= BLOCK_STRIDE && width <= 64 && offset < 64);
    // The cell starts of one block, relative to its first word, a word at
    // a time in registers (setting them bit by bit in the array would
    // chain 64 stores through memory, longer than a short call's work),
    // and where word t's cells go in the output word: below 64 for every
    // word, as each of the `words` words holds at least one start.
    let words = (offset + 63 * stride) / 64 + 1;
    let mut masks = [0u64; BLOCK_STRIDE + 1];
    let mut lands = [0u32; BLOCK_STRIDE + 1];
    let mut cells = Periodic::new(stride, offset);
    let mut before = 0;
    for (mask, land) in masks[..words].iter_mut().zip(&mut lands[..words]) {
        *mask = cells.advance();
        *land = before;
        before += mask.count_ones();
    }
    // The 64th start ends the block: a word past it would hold cells of
    // the next output word.
    if let Some(last) = masks[..words].last_mut() {
        let excess = before.saturating_sub(64);
        for _ in 0..excess {
            *last &= !(1u64 << (63 - last.leading_zeros()));
        }
    }
    let (shifts, steps) = run_steps(width);
    let shifts = &shifts[..steps];
    // The run test of a cell starting in `lo` that may end in `hi`: the
    // doubling AND over the 128-bit pair, low word kept.
    let run = |mut lo: u64, mut hi: u64| {
        for &s in shifts {
            lo &= (lo >> s) | (hi << (64 - s));
            hi &= hi >> s;
        }
        lo
    };
    let masks = &masks[..words];
    let lands = &lands[..words];
    // Whole blocks with every word (and the one after) in `src`, by plain
    // indexing; the rest read words past the end as 0.
    let body = if src.len() > words { ((src.len() - words - 1) / stride + 1).min(dst.len()) } else { 0 };
    let (head, tail) = dst.split_at_mut(body);
    for (k, out) in head.iter_mut().enumerate() {
        let block = &src[k * stride..k * stride + words + 1];
        let mut acc = 0;
        for t in 0..words {
            acc |= moves.compress(run(block[t], block[t + 1]), masks[t]) << lands[t];
        }
        *out = acc;
    }
    // Blocks that start past `src` hold only absent cells.
    let live = (src.len() - (body * stride).min(src.len())).div_ceil(stride).min(tail.len());
    let (tail, absent) = tail.split_at_mut(live);
    absent.fill(0);
    for (k, out) in tail.iter_mut().enumerate() {
        let base = (body + k) * stride;
        let mut acc = 0;
        for t in 0..words {
            acc |= moves.compress(run(word(src, base + t), word(src, base + t + 1)), masks[t]) << lands[t];
        }
        *out = acc;
    }
}

/// [`gather_and`] when every word holds the same `64 / stride` whole cells
/// (`stride` divides 64, `offset + width <= stride`): each output word is
/// the compressed cells of `stride` input words, with one mask throughout.
#[inline(always)]
fn gather_and_aligned<B: BitMoves>(moves: B, src: &[u64], stride: usize, offset: usize, width: usize, dst: &mut [u64]) {
    if offset == 0 && width == stride {
        match stride {
            2 => return gather_and_cells::<B, 2>(moves, src, dst),
            4 => return gather_and_cells::<B, 4>(moves, src, dst),
            8 => return gather_and_cells::<B, 8>(moves, src, dst),
            16 => return gather_and_cells::<B, 16>(moves, src, dst),
            32 => return gather_and_cells::<B, 32>(moves, src, dst),
            _ => {}
        }
    }
    if width == 1 {
        match stride {
            2 => return gather_bits::<B, 2>(moves, src, offset, dst),
            4 => return gather_bits::<B, 4>(moves, src, offset, dst),
            8 => return gather_bits::<B, 8>(moves, src, offset, dst),
            16 => return gather_bits::<B, 16>(moves, src, offset, dst),
            32 => return gather_bits::<B, 32>(moves, src, offset, dst),
            _ => {}
        }
    }
    let per_word = 64 / stride;
    let mut mask = 0u64;
    for t in 0..per_word {
        mask |= 1 << (t * stride + offset);
    }
    let compressor = moves.compressor(mask);
    // The doubling steps of the in-word AND run (cells never cross a word
    // here), fixed for the call: at most 6, unused ones shift by 0.
    let mut shifts = [0u32; 6];
    let (mut covered, mut steps) = (1, 0);
    while covered < width {
        let shift = covered.min(width - covered);
        shifts[steps] = shift as u32;
        steps += 1;
        covered += shift;
    }
    let shifts = &shifts[..steps];
    if steps == 0 {
        // One bit per cell (a row split): no run to test.
        return compress_blocks(moves, compressor, src, stride, per_word, dst, |x| x);
    }
    compress_blocks(moves, compressor, src, stride, per_word, dst, |x| {
        let mut run = x;
        for &shift in shifts {
            run &= run >> shift;
        }
        run
    })
}

/// [`gather_and_aligned`] for the rank reduction of a power-of-two rank
/// count `S` (`stride = width = S`, offset 0; the fold's common case):
/// with the stride and the run test's shifts (1, 2, 4, … below `S`)
/// constants, the compiler unrolls the loops over a block's `S` words and
/// over the shifts, where the general form steps through both at run time.
#[inline(always)]
fn gather_and_cells<B: BitMoves, const S: usize>(moves: B, src: &[u64], dst: &mut [u64]) {
    let mut mask = 0u64;
    let mut p = 0;
    while p < 64 {
        mask |= 1 << p;
        p += S;
    }
    compress_blocks(moves, moves.compressor(mask), src, S, 64 / S, dst, |x| {
        let mut run = x;
        let mut shift = 1;
        while shift < S {
            run &= run >> shift;
            shift *= 2;
        }
        run
    })
}

/// [`gather_and_aligned`] for one bit per cell (a row split out of a
/// power-of-two row count `S`, `offset < S`), with the stride a constant
/// so the compiler unrolls the `S` compresses of each output word.
#[inline(always)]
fn gather_bits<B: BitMoves, const S: usize>(moves: B, src: &[u64], offset: usize, dst: &mut [u64]) {
    let mut mask = 0u64;
    let mut p = offset;
    while p < 64 {
        mask |= 1 << p;
        p += S;
    }
    compress_blocks(moves, moves.compressor(mask), src, S, 64 / S, dst, |x| x)
}

/// Each output word of [`gather_and_aligned`]: the compressed cells of
/// `stride` input words, each first mapped by `run`.
#[inline(always)]
fn compress_blocks<B: BitMoves>(
    moves: B,
    compressor: B::Compressor,
    src: &[u64],
    stride: usize,
    per_word: usize,
    dst: &mut [u64],
    run: impl Fn(u64) -> u64,
) {
    let whole = (src.len() / stride).min(dst.len());
    let (full, rest) = dst.split_at_mut(whole);
    for (out, words) in full.iter_mut().zip(src.chunks_exact(stride)) {
        let mut acc = 0;
        for (t, &x) in words.iter().enumerate() {
            acc |= moves.compress_with(compressor, run(x)) << (t * per_word);
        }
        *out = acc;
    }
    // A partial block of input words, then zeros.
    if let Some(out) = rest.first_mut() {
        let mut acc = 0;
        for (t, &x) in src[whole * stride..].iter().enumerate() {
            acc |= moves.compress_with(compressor, run(x)) << (t * per_word);
        }
        *out = acc;
    }
    for out in rest.iter_mut().skip(1) {
        *out = 0;
    }
}

/// `dst` bit `j·stride + offset` |= `src` bit `j`, for every `j` whose
/// position is within `dst`. `stride` is at least 1.
#[inline(always)]
pub(crate) fn scatter_or<B: BitMoves>(moves: B, src: &[u64], stride: usize, offset: usize, dst: &mut [u64]) {
    if 64usize.is_multiple_of(stride) && offset % 64 < stride {
        let first = (offset / 64).min(dst.len());
        let dst = &mut dst[first..];
        let offset = offset % 64;
        return match stride {
            2 => scatter_or_aligned::<B, 2>(moves, src, offset, dst),
            4 => scatter_or_aligned::<B, 4>(moves, src, offset, dst),
            8 => scatter_or_aligned::<B, 8>(moves, src, offset, dst),
            16 => scatter_or_aligned::<B, 16>(moves, src, offset, dst),
            32 => scatter_or_aligned::<B, 32>(moves, src, offset, dst),
            _ => scatter_or_aligned_any(moves, src, stride, offset, dst),
        };
    }
    let src_bits = src.len() * 64;
    let mut cells = Periodic::new(stride, offset % 64);
    let mut o = offset / 64;
    let mut taken = 0;
    while o < dst.len() && taken < src_bits {
        let skipped = cells.skip_empty();
        if skipped > 0 {
            o += skipped;
            continue;
        }
        let mask = cells.advance();
        let n = mask.count_ones() as usize;
        dst[o] |= moves.expand(bits_from(src, taken), mask);
        taken += n;
        o += 1;
    }
}

/// [`scatter_or`] when `stride` divides 64 and `offset < stride` (a row
/// joined into a flat layout of a power-of-two row count): every `dst`
/// word takes the next `64 / stride` bits of `src` at the same positions,
/// so each `src` word is expanded into `stride` whole `dst` words with one
/// mask, without the general loop's per-word bookkeeping.
#[inline(always)]
fn scatter_or_aligned_any<B: BitMoves>(moves: B, src: &[u64], stride: usize, offset: usize, dst: &mut [u64]) {
    let per_word = 64 / stride;
    let mut mask = 0u64;
    for t in 0..per_word {
        mask |= 1 << (offset + t * stride);
    }
    for (words, &s) in dst.chunks_mut(stride).zip(src) {
        for (t, d) in words.iter_mut().enumerate() {
            // `t · per_word < 64`: `t < stride` and `stride · per_word = 64`.
            *d |= moves.expand(s >> (t * per_word), mask);
        }
    }
}

/// [`scatter_or_aligned_any`] with the stride a constant, so the compiler
/// unrolls the `S` expands of each source word.
#[inline(always)]
fn scatter_or_aligned<B: BitMoves, const S: usize>(moves: B, src: &[u64], offset: usize, dst: &mut [u64]) {
    scatter_or_aligned_any(moves, src, S, offset, dst)
}
