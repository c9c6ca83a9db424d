//! Word-level helpers of the fold: reading a cell's rank bits, and the
//! windowed run test as shifted ANDs. Safe Rust over `u64` words.

use bitmap_core::Bitmap;

/// The `n <= 64` bits of `words` starting at bit `start`, in the low bits of
/// the result; bits past the slice read as 0.
#[inline]
pub(crate) fn bits_at(words: &[u64], start: usize, n: usize) -> u64 {
    debug_assert!(n <= 64);
    if n == 0 {
        return 0;
    }
    let word = start / 64;
    let offset = start % 64;
    let low = words.get(word).copied().unwrap_or(0) >> offset;
    let high = if offset == 0 { 0 } else { words.get(word + 1).copied().unwrap_or(0) << (64 - offset) };
    let all = low | high;
    if n == 64 { all } else { all & ((1 << n) - 1) }
}

/// True if the `n` bits of `words` from bit `start` are all set (bits past
/// the slice read as 0, so a cell that runs past the end is absent).
#[inline]
pub(crate) fn all_set(words: &[u64], mut start: usize, mut n: usize) -> bool {
    while n > 0 {
        let take = n.min(64);
        let want = if take == 64 { u64::MAX } else { (1 << take) - 1 };
        if bits_at(words, start, take) != want {
            return false;
        }
        start += take;
        n -= take;
    }
    true
}

/// Makes `row` the presence row of one cell column of a flat layout: `len`
/// bits, bit `j` set iff the `width` bits from `j * stride + offset` of
/// `flat` are all set.
pub(crate) fn gather_cells(flat: &Bitmap, stride: usize, offset: usize, width: usize, len: usize, row: &mut Bitmap) {
    row.reset(len);
    let source = flat.as_words();
    let mut words = row.words_mut();
    for (w, word) in words.iter_mut().enumerate() {
        let mut bits = 0u64;
        for b in 0..64.min(len - w * 64) {
            let j = w * 64 + b;
            if all_set(source, j * stride + offset, width) {
                bits |= 1 << b;
            }
        }
        *word = bits;
    }
}

/// `row[i] &= row[i - shift]` for every bit `i`, with bits before 0 reading
/// as set. In place, from the top word down, so every word read is still
/// the original.
pub(crate) fn and_shifted_in_place(row: &mut [u64], shift: usize) {
    let word_shift = shift / 64;
    let bit_shift = shift % 64;
    let read = |row: &[u64], k: isize| if k < 0 { u64::MAX } else { row[k as usize] };
    for i in (0..row.len()).rev() {
        let k = i as isize - word_shift as isize;
        let shifted = if bit_shift == 0 {
            read(row, k)
        } else {
            (read(row, k) << bit_shift) | (read(row, k - 1) >> (64 - bit_shift))
        };
        row[i] &= shifted;
    }
}

/// Turns a presence row into its servable row under sliding window
/// `window >= 1`: bit `i` stays set iff bits `max(0, i + 1 - window)..=i`
/// are all set. Doubling: after a pass the row holds runs of `covered`
/// bits, and ANDing it with itself shifted by `s <= covered` extends that to
/// `covered + s`, so the test takes `O(log window)` passes over the words.
pub(crate) fn window_test_in_place(row: &mut [u64], window: usize) {
    let mut covered = 1;
    while covered < window {
        let shift = covered.min(window - covered);
        and_shifted_in_place(row, shift);
        covered += shift;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_at_reads_across_words_and_past_the_end() {
        let words = [u64::MAX << 60, 0b1011];
        assert_eq!(bits_at(&words, 60, 8), 0b1011_1111);
        assert_eq!(bits_at(&words, 64, 64), 0b1011);
        assert_eq!(bits_at(&words, 127, 10), 0);
        assert_eq!(bits_at(&words, 500, 3), 0);
        assert!(all_set(&words, 60, 5) && !all_set(&words, 60, 7));
    }

    #[test]
    fn window_test_matches_the_definition() {
        for seed in 0..50u64 {
            let len = 1 + (seed as usize * 37) % 200;
            let row: Bitmap = (0..len).map(|i| !(i as u64 * 2654435761 + seed * 97).is_multiple_of(11)).collect();
            for window in 1..70 {
                let mut words = row.as_words().to_vec();
                window_test_in_place(&mut words, window);
                let got = Bitmap::from_words(len, words).unwrap();
                let want: Bitmap = (0..len).map(|i| (i.saturating_sub(window - 1)..=i).all(|k| row.test(k))).collect();
                assert_eq!(got, want, "len {len} window {window}");
            }
        }
    }
}
