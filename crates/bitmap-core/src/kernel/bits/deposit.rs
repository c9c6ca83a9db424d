//! Deposit and extract: PDEP and PEXT over whole slices, a compress or
//! expand per mask word, with runs of all-ones mask words copied as
//! shifted whole words.

use super::moves::BitMoves;
use super::words::{BitWriter, bits_from, low_bits};

/// `dst[r]` = the 64 bits of `src` from bit `start + 64r` (0 past its end):
/// a copy shifted by `start % 64`, over pairs of adjacent words so that it
/// vectorises.
#[inline(always)]
fn copy_bits(src: &[u64], start: usize, dst: &mut [u64]) {
    let (first, offset) = (start / 64, (start % 64) as u32);
    let src = &src[first.min(src.len())..];
    // Words whose both halves are within `src`.
    let whole = src.len().saturating_sub(1).min(dst.len());
    let (head, tail) = dst.split_at_mut(whole);
    if offset == 0 {
        head.copy_from_slice(&src[..whole]);
    } else {
        for ((d, &lo), &hi) in head.iter_mut().zip(&src[..whole]).zip(&src[1..=whole]) {
            *d = (lo >> offset) | (hi << (64 - offset));
        }
    }
    for (r, d) in tail.iter_mut().enumerate() {
        *d = bits_from(src, (whole + r) * 64 + offset as usize);
    }
}

/// The number of leading words of `words` equal to `m`, 8 words per test
/// (an OR of XORs, which vectorises) and then one by one.
#[inline(always)]
fn run_len(words: &[u64], m: u64) -> usize {
    let mut run = 0;
    for chunk in words.chunks_exact(8) {
        if chunk.iter().fold(0, |acc, &w| acc | (w ^ m)) != 0 {
            break;
        }
        run += 8;
    }
    run + words[run..].iter().take_while(|&&w| w == m).count()
}

/// PDEP over slices: `dst` (as long as `mask`) gets, at the `i`-th set
/// position of `mask`, bit `src_start + i` of `src` (0 past its end), and 0
/// elsewhere. Returns `popcount(mask)`.
///
/// Runs of empty and of whole mask words (a prefix plan's cells are
/// mostly these) are a fill and a shifted copy. Other words take one
/// expand each, their source bits a funnel shift of the two words under
/// the running bit position; while both are within `src` they are read
/// by plain indexing, without a branch on where the bits come from.
#[inline(always)]
pub(crate) fn deposit<B: BitMoves>(moves: B, src: &[u64], src_start: usize, mask: &[u64], dst: &mut [u64]) -> usize {
    let n = mask.len().min(dst.len());
    let (mask, dst) = (&mask[..n], &mut dst[..n]);
    let mut taken = src_start;
    let mut i = 0;
    // Each word takes at most 64 bits, so the words of a stretch of `k`
    // mask words read source words below `taken / 64 + k + 1`: stretches
    // of up to `RUN` words whose reads all lie within `src` go without
    // per-word bounds tests.
    const RUN: usize = 16;
    while i < n {
        let m = mask[i];
        if m == 0 || m == u64::MAX {
            let run = run_len(&mask[i..], m);
            if m == 0 {
                dst[i..i + run].fill(0);
            } else {
                copy_bits(src, taken, &mut dst[i..i + run]);
                taken += 64 * run;
            }
            i += run;
            continue;
        }
        let k = (n - i).min(RUN);
        let first = taken / 64;
        if first + k + 1 > src.len() {
            dst[i] = moves.expand(bits_from(src, taken), m);
            taken += m.count_ones() as usize;
            i += 1;
            continue;
        }
        let window = &src[first..first + k + 1];
        let mut bit = taken % 64;
        let mut done = 0;
        for (d, &m) in dst[i..i + k].iter_mut().zip(&mask[i..i + k]) {
            if m == 0 || m == u64::MAX {
                break;
            }
            let w = bit / 64;
            // `x >> (64 - bit)` without the undefined shift by 64.
            let x = (window[w] >> (bit % 64)) | ((window[w + 1] << 1) << (63 - bit % 64));
            *d = moves.expand(x, m);
            bit += m.count_ones() as usize;
            done += 1;
        }
        taken = first * 64 + bit;
        i += done;
    }
    taken - src_start
}

/// PEXT over slices: the bits of `src` at the set positions of `mask`, in
/// order, written to `dst` from bit `dst_start` (the bits below it kept,
/// the rest of the last word written cleared, dropped past `dst`'s end).
/// Returns `popcount(mask)` over the common length.
///
/// One compress per word and no branch on the mask or on where the bits
/// land: the output word under construction is stored after every input
/// word (the same word again until it fills), and the bits that spill
/// into the next one replace it by a select, so the mix of word counts a
/// random mask gives costs no mispredicted branches.
#[inline(always)]
pub(crate) fn extract<B: BitMoves>(moves: B, src: &[u64], mask: &[u64], dst: &mut [u64], dst_start: usize) -> usize {
    let n = src.len().min(mask.len());
    let (src, mask) = (&src[..n], &mask[..n]);
    let mut t = dst_start;
    // Bits written past `dst` are dropped: the words that end within it
    // go through the branch-free loop, the rest through the `BitWriter`.
    let fits = dst.len() * 64;
    let mut acc = dst.get(t / 64).map_or(0, |&w| w & low_bits((t % 64) as u32));
    let mut i = 0;
    while i < n && t + 64 <= fits {
        let (s, m) = (src[i], mask[i]);
        if m == 0 || m == u64::MAX {
            // A run of empty words adds nothing; a run of whole words
            // (those that end within `dst`) is the source shifted up to
            // the bit position, over pairs of adjacent words so that it
            // vectorises.
            let run = run_len(&mask[i..], m);
            if m == 0 {
                i += run;
                continue;
            }
            let run = run.min((fits - t) / 64);
            let (o, bit) = (t / 64, (t % 64) as u32);
            let words = &src[i..i + run];
            let out = &mut dst[o..o + run];
            if bit == 0 {
                out.copy_from_slice(words);
            } else {
                out[0] = acc | (words[0] << bit);
                for ((d, &lo), &hi) in out[1..].iter_mut().zip(words).zip(&words[1..]) {
                    *d = (lo >> (64 - bit)) | (hi << bit);
                }
                acc = words[run - 1] >> (64 - bit);
            }
            t += 64 * run;
            i += run;
            continue;
        }
        let x = moves.compress(s, m);
        let c = m.count_ones() as usize;
        let bit = t % 64;
        acc |= x << bit;
        // `x >> (64 - bit)`: the bits that land in the next word.
        let spill = (x >> 1) >> (63 - bit);
        dst[t / 64] = acc;
        let crossed = bit + c >= 64;
        acc = if crossed { spill } else { acc };
        t += c;
        i += 1;
    }
    // The partly filled word (its bits past the run clear), where the
    // `BitWriter` below takes it up.
    if !t.is_multiple_of(64)
        && let Some(w) = dst.get_mut(t / 64)
    {
        *w = acc;
    }
    if i == n {
        return t - dst_start;
    }
    let mut out = BitWriter::new(dst, t);
    let mut count = t - dst_start;
    for (&s, &m) in src[i..].iter().zip(&mask[i..]) {
        let c = m.count_ones();
        out.push(moves.compress(s, m), c);
        count += c as usize;
    }
    out.finish();
    count
}
