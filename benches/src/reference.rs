//! Plain implementations that are obviously right, to check every benchmark
//! against before it is timed (a fast wrong kernel must fail loudly, not win
//! a table), and the `copy` baseline that stands for the memory limit.
//!
//! These deliberately do not call bitmap-core: a bug shared by the code
//! under test and its reference would go unnoticed.

/// The number of set bits.
pub fn popcount(words: &[u64]) -> u64 {
    words.iter().map(|w| u64::from(w.count_ones())).sum()
}

/// A two-operand bitwise operation, applied word by word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `a & b`
    And,
    /// `a | b`
    Or,
    /// `a ^ b`
    Xor,
    /// `a & !b`
    AndNot,
}

impl BinaryOp {
    /// All four, in the order the report lists them.
    pub const ALL: [BinaryOp; 4] = [BinaryOp::And, BinaryOp::Or, BinaryOp::Xor, BinaryOp::AndNot];

    /// The operation on one pair of words.
    #[inline]
    pub fn apply(self, a: u64, b: u64) -> u64 {
        match self {
            BinaryOp::And => a & b,
            BinaryOp::Or => a | b,
            BinaryOp::Xor => a ^ b,
            BinaryOp::AndNot => a & !b,
        }
    }

    /// The name of bitmap-core's in-place kernel, used as the benchmark
    /// group (`and_assign`, …).
    pub const fn assign_name(self) -> &'static str {
        match self {
            BinaryOp::And => "and_assign",
            BinaryOp::Or => "or_assign",
            BinaryOp::Xor => "xor_assign",
            BinaryOp::AndNot => "and_not_assign",
        }
    }

    /// `a OP b`, word by word.
    pub fn words(self, a: &[u64], b: &[u64]) -> Vec<u64> {
        assert_eq!(a.len(), b.len());
        a.iter().zip(b).map(|(&a, &b)| self.apply(a, b)).collect()
    }
}

/// Every word complemented.
pub fn not(words: &[u64]) -> Vec<u64> {
    words.iter().map(|w| !w).collect()
}

/// The union of `sources`, all of `words` words.
pub fn union(words: usize, sources: &[Vec<u64>]) -> Vec<u64> {
    let mut union = vec![0; words];
    for source in sources {
        assert_eq!(source.len(), words);
        for (u, s) in union.iter_mut().zip(source) {
            *u |= s;
        }
    }
    union
}

/// The seed's first-wins split: each set bit goes to the first input that
/// has it.
pub fn first_wins(inputs: &[Vec<u64>]) -> Vec<Vec<u64>> {
    let words = inputs.first().map_or(0, Vec::len);
    let mut claimed = vec![0u64; words];
    inputs
        .iter()
        .map(|input| {
            input
                .iter()
                .zip(claimed.iter_mut())
                .map(|(&hits, claimed)| {
                    let mine = hits & !*claimed;
                    *claimed |= hits;
                    mine
                })
                .collect()
        })
        .collect()
}

/// The indices of the set bits, in increasing order, one at a time: the
/// obvious loop, with no word-level tricks.
pub fn ones(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    (0..words.len() * 64).filter(move |&i| words[i / 64] >> (i % 64) & 1 == 1)
}

/// A fingerprint of a sequence of bit indices. Iteration benchmarks compare
/// an implementation's fingerprint with the reference's instead of
/// collecting hundreds of millions of indices.
///
/// A wrong index, a dropped or an extra one changes the count, the sum or
/// the sum of squares (a change that preserves all three needs at least
/// three indices to move in concert); an index out of order clears
/// `increasing`. Every part is a cheap independent accumulation, so
/// fingerprinting half a billion indices takes a fraction of a second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexFingerprint {
    /// The number of indices.
    pub count: u64,
    /// Their sum, wrapping.
    pub sum: u64,
    /// The sum of their squares, wrapping.
    pub sum_of_squares: u64,
    /// Whether each index is greater than the one before.
    pub increasing: bool,
}

impl IndexFingerprint {
    /// The fingerprint of `indices`.
    pub fn of(indices: impl IntoIterator<Item = usize>) -> IndexFingerprint {
        let mut fingerprint = IndexFingerprint { count: 0, sum: 0, sum_of_squares: 0, increasing: true };
        let mut previous: Option<u64> = None;
        for index in indices {
            let index = index as u64;
            fingerprint.count += 1;
            fingerprint.sum = fingerprint.sum.wrapping_add(index);
            fingerprint.sum_of_squares = fingerprint.sum_of_squares.wrapping_add(index.wrapping_mul(index));
            fingerprint.increasing &= previous.is_none_or(|p| index > p);
            previous = Some(index);
        }
        fingerprint
    }

    /// The fingerprint of the set bits of `words`, found with the obvious
    /// test of each bit (no `trailing_zeros` tricks), so it is independent
    /// of every iterator under test.
    pub fn of_words(words: &[u64]) -> IndexFingerprint {
        IndexFingerprint::of(ones(words))
    }
}

/// Copies `src` into `dst` with a plain loop: the `copy` baseline, the cost
/// of moving the same bytes through the memory hierarchy once.
///
/// It is our own loop, not `copy_from_slice`, because that calls libc's
/// `memcpy`, whose strategy depends on the environment: glibc switches to
/// `rep movsb` above a tunable threshold (slow at some offsets on AMD CPUs)
/// and to non-temporal stores for copies larger than a share of L3. Either
/// would make the baseline measure glibc rather than the machine, and
/// non-temporal stores are not a fair bar for kernels that (rightly) use
/// ordinary stores.
///
/// # Panics
///
/// If the slices differ in length.
///
/// ```
/// use bitplan_benches::reference::copy_words;
/// let mut dst = [0u64; 3];
/// copy_words(&mut dst, &[1, 2, 3]);
/// assert_eq!(dst, [1, 2, 3]);
/// ```
#[inline(never)]
pub fn copy_words(dst: &mut [u64], src: &[u64]) {
    assert_eq!(dst.len(), src.len(), "copy_words: slices differ in length");
    // OR-ing in a zero the optimiser cannot see keeps LLVM's loop-idiom pass
    // from turning the loop into a `memcpy` call; the loop still vectorises,
    // and the OR is free next to the loads and stores.
    let opaque_zero = std::hint::black_box(0u64);
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s | opaque_zero;
    }
}

/// A new `Vec` holding a copy of `src`, written once (collected from an
/// exact-size iterator, so the buffer is not zeroed first), with the same
/// loop as [`copy_words`] rather than libc's `memcpy`.
pub fn copy_words_fresh(src: &[u64]) -> Vec<u64> {
    let opaque_zero = std::hint::black_box(0u64);
    src.iter().map(|&s| s | opaque_zero).collect()
}

/// Panics, naming the benchmark and the first differing word, unless `got`
/// equals `expected`.
#[track_caller]
pub fn assert_words_eq(benchmark: &str, got: &[u64], expected: &[u64]) {
    assert_eq!(got.len(), expected.len(), "{benchmark}: result has {} words, expected {}", got.len(), expected.len());
    if let Some(i) = got.iter().zip(expected).position(|(g, e)| g != e) {
        panic!("{benchmark}: wrong result: word {i} is {:#018x}, expected {:#018x}", got[i], expected[i]);
    }
}

/// Panics, naming the benchmark, unless `got == expected`.
#[track_caller]
pub fn assert_value_eq<T: PartialEq + std::fmt::Debug>(benchmark: &str, got: T, expected: T) {
    assert!(got == expected, "{benchmark}: wrong result: {got:?}, expected {expected:?}");
}
