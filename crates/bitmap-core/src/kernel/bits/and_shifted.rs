//! The shifted AND of the windowed run test.

/// `words[i] &= words[i − shift]` for every bit `i` (bits before 0 read as
/// set): one step of the windowed run test. In place, top block first:
/// each block's shifted words are computed from the original words into a
/// stack buffer (a loop without aliasing, which the compiler vectorises for
/// the kernel's features), then ANDed in; blocks below are still original.
#[inline(always)]
pub(crate) fn and_shifted(words: &mut [u64], shift: usize) {
    const BLOCK: usize = 32;
    let (word_shift, bit_shift) = (shift / 64, (shift % 64) as u32);
    let n = words.len();
    // Words whose sources are all real words (index `i − word_shift − 1
    // >= 0`) go by blocks; the few below, one by one.
    let first_full = (word_shift + 1).min(n);
    let mut end = n;
    let mut shifted = [0u64; BLOCK];
    while end > first_full {
        let start = end.saturating_sub(BLOCK).max(first_full);
        let len = end - start;
        let (low, high) =
            (&words[start - word_shift - 1..end - word_shift - 1], &words[start - word_shift..end - word_shift]);
        if bit_shift == 0 {
            shifted[..len].copy_from_slice(high);
        } else {
            for ((s, &h), &l) in shifted[..len].iter_mut().zip(high).zip(low) {
                *s = (h << bit_shift) | (l >> (64 - bit_shift));
            }
        }
        for (w, &s) in words[start..end].iter_mut().zip(&shifted[..len]) {
            *w &= s;
        }
        end = start;
    }
    let read = |words: &[u64], k: usize| if k < word_shift { u64::MAX } else { words[k - word_shift] };
    for i in (0..end).rev() {
        let shifted = if bit_shift == 0 {
            read(words, i)
        } else {
            let below = if i == 0 { u64::MAX } else { read(words, i - 1) };
            (read(words, i) << bit_shift) | (below >> (64 - bit_shift))
        };
        words[i] &= shifted;
    }
}
