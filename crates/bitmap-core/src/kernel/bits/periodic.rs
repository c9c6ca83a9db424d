//! The periodic fill of the unfold: ORing the repetition of a pattern's
//! first `period` bits into a range of words.

use super::words::{bits_from, low_bits, word};

/// The 64 bits of the infinite repetition of `pattern`'s first `period`
/// bits, from position `phase < period` of it.
#[inline(always)]
fn periodic_bits(pattern: &[u64], period: usize, phase: usize, small: u128) -> u64 {
    if period < 64 {
        return (small >> phase) as u64;
    }
    let head = period - phase;
    let first = bits_from(pattern, phase);
    if head >= 64 { first } else { (first & low_bits(head as u32)) | bits_from(pattern, 0) << head }
}

/// The longest word cycle [`fill_periodic`] precomputes on the stack.
const CYCLE_WORDS: usize = 64;
/// The cycles [`fill_periodic`] keeps in a buffer of this many words.
const SMALL_CYCLE_WORDS: usize = 8;

/// ORs into `dst` bits `start..end` (clamped to `dst`) the repetition of the
/// first `period >= 1` bits of `pattern`: bit `p` gets pattern bit
/// `(p − start) % period`.
#[inline(always)]
pub(crate) fn fill_periodic(dst: &mut [u64], start: usize, end: usize, pattern: &[u64], period: usize) {
    let end = end.min(dst.len() * 64);
    if start >= end {
        return;
    }
    // For a short period, the first 128 bits of the repetition, so any 64
    // bits of it are one shift away.
    let mut small = 0u128;
    if period < 64 {
        small = u128::from(word(pattern, 0) & low_bits(period as u32));
        let mut filled = period;
        while filled < 128 {
            small |= small << filled;
            filled *= 2;
        }
    }
    if 64usize.is_multiple_of(period) {
        // Every word holds the same bits: a splat, fused with the OR.
        let bit = start % 64;
        let unit = periodic_bits(pattern, period, 0, small);
        let word_bits = unit.rotate_left(bit as u32);
        let (first, last) = (start / 64, (end - 1) / 64);
        let edge = |o: usize| {
            let lo = if o == first { u64::MAX << bit } else { u64::MAX };
            let hi = if o == last { low_bits(((end - 1) % 64 + 1) as u32) } else { u64::MAX };
            lo & hi
        };
        dst[first] |= word_bits & edge(first);
        if last > first {
            for w in &mut dst[first + 1..last] {
                *w |= word_bits;
            }
            dst[last] |= word_bits & edge(last);
        }
        return;
    }
    // The first (partial) word, then whole words: the phase advances by
    // `64 % period` per word, kept below `period` by one subtraction.
    let bit = start % 64;
    let n = (64 - bit).min(end - start);
    dst[start / 64] |= (periodic_bits(pattern, period, 0, small) & low_bits(n as u32)) << bit;
    let step = 64 % period;
    let mut phase = n % period;
    let mut p = start + n;
    // The whole words repeat every `period / gcd(period, 64)` words: when
    // that cycle fits a stack buffer, compute it once and OR it in round
    // and round.
    let cycle = period / (1usize << period.trailing_zeros().min(6));
    if cycle <= CYCLE_WORDS && p + 64 * cycle <= end {
        // Short cycles (every period up to 8 words, and 20 = 5 words, the
        // 5 groups × 4 ranks of a 300-chunk request) in a small buffer:
        // clearing the full 512 bytes showed in the profile of such a
        // fold_unfold as `memset` (5.8% of it; 4.5% after).
        let mut small_words = [0u64; SMALL_CYCLE_WORDS];
        let mut large_words;
        let words: &mut [u64] = if cycle <= SMALL_CYCLE_WORDS {
            &mut small_words
        } else {
            large_words = [0u64; CYCLE_WORDS];
            &mut large_words
        };
        for w in &mut words[..cycle] {
            *w = periodic_bits(pattern, period, phase, small);
            phase += step;
            if phase >= period {
                phase -= period;
            }
        }
        let whole = (end - p) / 64;
        let first = p / 64;
        // By whole cycles: a fixed-length inner loop the compiler unrolls
        // and vectorises, where `iter().cycle()` tests for its wrap-around
        // at every word.
        let cycle_words = &words[..cycle];
        for block in dst[first..first + whole].chunks_mut(cycle) {
            for (d, &w) in block.iter_mut().zip(cycle_words) {
                *d |= w;
            }
        }
        // `phase` is back where it started after `cycle` words; advance it
        // over the rest of the whole words.
        for _ in 0..whole % cycle {
            phase += step;
            if phase >= period {
                phase -= period;
            }
        }
        p += whole * 64;
    }
    while p + 64 <= end {
        dst[p / 64] |= periodic_bits(pattern, period, phase, small);
        phase += step;
        if phase >= period {
            phase -= period;
        }
        p += 64;
    }
    if p < end {
        dst[p / 64] |= periodic_bits(pattern, period, phase, small) & low_bits((end - p) as u32);
    }
}
