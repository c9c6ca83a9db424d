//! [`Fill`]: a bit pattern of any length described in a few bytes.
//!
//! Fuzzer bytes are few and the interesting bitmaps are long (the SIMD
//! kernels only run past 4 words, the AVX2 popcount's main loop past 64), so
//! the targets describe bitmaps by pattern rather than bit by bit: a few
//! bytes give thousands of bits, and mutating them changes the pattern in
//! meaningful ways (a run moves, a density changes, a bit of a copy flips).

use arbitrary::Arbitrary;

/// A length in bits, drawn so that the lengths where kernels change loops
/// are common: whole numbers of words (every SIMD block and vector boundary
/// is a multiple of 64 bits) and one bit either side of them. A plain
/// integer would hit a given word count a few times in ten thousand, and
/// the fuzzer gets no coverage signal for the lengths where a loop is
/// entered one time fewer.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Length {
    /// Any length up to the maximum.
    Bits(u16),
    /// Exactly this many words (modulo the maximum).
    Words(u8),
    /// This many words and one bit more.
    WordsAndOneBit(u8),
    /// This many words less one bit.
    WordsLessOneBit(u8),
    /// This many words and a partial word of `1 + (n % 63)` bits.
    WordsAndPart(u8, u8),
}

impl Length {
    /// The length in bits, at most `max_bits`.
    pub fn bits(self, max_bits: usize) -> usize {
        let max_words = max_bits / 64;
        let words = |n: u8| usize::from(n) % (max_words + 1) * 64;
        let bits = match self {
            Length::Bits(n) => usize::from(n),
            Length::Words(n) => words(n),
            Length::WordsAndOneBit(n) => words(n) + 1,
            Length::WordsLessOneBit(n) => words(n).saturating_sub(1),
            Length::WordsAndPart(n, part) => words(n) + 1 + usize::from(part) % 63,
        };
        bits % (max_bits + 1)
    }
}

/// How to fill a bitmap of a given length.
#[derive(Arbitrary, Clone, Debug, PartialEq, Eq)]
pub enum Fill {
    /// Every bit clear.
    Zeros,
    /// Every bit set.
    Ones,
    /// The bytes repeated: bit `i` is bit `i % 8` of byte `(i / 8) % n`
    /// (all clear if there are none).
    Bytes(Vec<u8>),
    /// Alternating runs of clear and set bits (clear first), the run lengths
    /// taken modulo 512 and repeated, so runs start and end at every offset
    /// within a word and cross word boundaries.
    Runs(Vec<u16>),
    /// Pseudo-random bits from `seed`, at a density chosen by `density`:
    /// uniform, sparse, dense, nearly empty, nearly full.
    Random {
        /// Seeds the generator.
        seed: u64,
        /// Chooses the density (modulo 5).
        density: u8,
    },
    /// The base pattern: the bitmap under test, or the previous lookup.
    Base,
    /// The base pattern with every bit flipped.
    InvertedBase,
    /// The base pattern with these bits (modulo the length) flipped: nearly
    /// equal operands, for subset, disjointness and first-wins edge cases.
    EditedBase(Vec<u16>),
}

impl Fill {
    /// The pattern at `len` bits. `base` (cut or padded with clear bits to
    /// `len`) is what the `*Base` variants start from; without one they
    /// start from all clear.
    pub fn bits(&self, len: usize, base: Option<&[bool]>) -> Vec<bool> {
        let base = || {
            let mut bits = base.map_or_else(Vec::new, <[bool]>::to_vec);
            bits.resize(len, false);
            bits
        };
        match self {
            Fill::Zeros => vec![false; len],
            Fill::Ones => vec![true; len],
            Fill::Bytes(bytes) if bytes.is_empty() => vec![false; len],
            Fill::Bytes(bytes) => (0..len).map(|i| bytes[(i / 8) % bytes.len()] >> (i % 8) & 1 == 1).collect(),
            Fill::Runs(runs) => runs_of(runs, len),
            Fill::Random { seed, density } => random_bits(*seed, *density, len),
            Fill::Base => base(),
            Fill::InvertedBase => base().into_iter().map(|bit| !bit).collect(),
            Fill::EditedBase(flips) => {
                let mut bits = base();
                if len > 0 {
                    for &flip in flips {
                        let i = usize::from(flip) % len;
                        bits[i] = !bits[i];
                    }
                }
                bits
            }
        }
    }
}

fn runs_of(runs: &[u16], len: usize) -> Vec<bool> {
    let lengths: Vec<usize> = runs.iter().map(|&run| usize::from(run) % 512).collect();
    if lengths.iter().all(|&run| run == 0) {
        return vec![false; len];
    }
    let mut bits = Vec::with_capacity(len);
    let mut set = false;
    for &run in lengths.iter().cycle() {
        if bits.len() >= len {
            break;
        }
        bits.extend(std::iter::repeat_n(set, run.min(len - bits.len())));
        set = !set;
    }
    bits
}

fn random_bits(seed: u64, density: u8, len: usize) -> Vec<bool> {
    let mut rng = SplitMix64(seed);
    let mut bits = Vec::with_capacity(len);
    while bits.len() < len {
        let word = match density % 5 {
            0 => rng.next(),
            1 => rng.next() & rng.next() & rng.next(),
            2 => rng.next() | rng.next() | rng.next(),
            3 => rng.sparse_word(),
            _ => !rng.sparse_word(),
        };
        let take = (len - bits.len()).min(64);
        bits.extend((0..take).map(|bit| word >> bit & 1 == 1));
    }
    bits
}

/// SplitMix64: tiny, no dependency, and (unlike xorshift) fine with a zero
/// seed, which the fuzzer will try first.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// One bit in about one word of four: long zero stretches, the case the
    /// bulk-skipping iterators and searches are optimised for.
    fn sparse_word(&mut self) -> u64 {
        let r = self.next();
        if r.is_multiple_of(4) { 1 << (r >> 58) } else { 0 }
    }
}

/// The words of `bits` (bit `i` in word `i / 64` at position `i % 64`),
/// computed bit by bit: the model's view of a bitmap's memory.
pub fn words_of(bits: &[bool]) -> Vec<u64> {
    bits.chunks(64)
        .map(|chunk| chunk.iter().enumerate().fold(0, |word, (bit, &set)| word | u64::from(set) << bit))
        .collect()
}

/// `bits` as a string of `0`s and `1`s, bit 0 first.
pub fn text_of(bits: &[bool]) -> String {
    bits.iter().map(|&bit| if bit { '1' } else { '0' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fill_has_the_asked_length() {
        let base = [true, false, true];
        let fills = [
            Fill::Zeros,
            Fill::Ones,
            Fill::Bytes(vec![]),
            Fill::Bytes(vec![0b1010]),
            Fill::Runs(vec![]),
            Fill::Runs(vec![0, 512]),
            Fill::Runs(vec![3, 70]),
            Fill::Random { seed: 0, density: 3 },
            Fill::Base,
            Fill::InvertedBase,
            Fill::EditedBase(vec![1, 1000]),
        ];
        for fill in &fills {
            for len in [0, 1, 3, 64, 65, 1000] {
                assert_eq!(fill.bits(len, Some(&base)).len(), len, "{fill:?} at {len}");
                assert_eq!(fill.bits(len, None).len(), len, "{fill:?} at {len} without base");
            }
        }
    }

    #[test]
    fn lengths_stay_within_the_maximum() {
        assert_eq!(Length::Words(3).bits(10_000), 192);
        assert_eq!(Length::WordsAndOneBit(3).bits(10_000), 193);
        assert_eq!(Length::WordsLessOneBit(3).bits(10_000), 191);
        assert_eq!(Length::WordsLessOneBit(0).bits(10_000), 0);
        assert_eq!(Length::WordsAndPart(1, 64).bits(10_000), 66);
        assert_eq!(Length::Words(156).bits(10_000), 9984);
        assert_eq!(Length::Words(157).bits(10_000), 0); // 157 % 157
        for n in 0..=255 {
            for length in [Length::Bits(n * 257), Length::WordsAndOneBit(n as u8), Length::WordsAndPart(n as u8, 255)] {
                assert!(length.bits(10_000) <= 10_000, "{length:?}");
                assert!(length.bits(100) <= 100, "{length:?}");
            }
        }
    }

    #[test]
    fn patterns() {
        assert_eq!(text_of(&Fill::Runs(vec![2, 3]).bits(12, None)), "001110011100");
        assert_eq!(text_of(&Fill::Bytes(vec![0b0000_0101]).bits(10, None)), "1010000010");
        let base = [true, false, true];
        assert_eq!(text_of(&Fill::Base.bits(5, Some(&base))), "10100");
        assert_eq!(text_of(&Fill::InvertedBase.bits(2, Some(&base))), "01");
        assert_eq!(text_of(&Fill::EditedBase(vec![1, 3]).bits(3, Some(&base))), "011"); // 3 % 3 == 0
        assert_eq!(words_of(&Fill::Ones.bits(65, None)), [u64::MAX, 1]);
    }
}
