//! Deterministic pseudo-random inputs.
//!
//! Benchmarks use fixed seeds so two runs time the same bits, and generate
//! whole words at a time so that even the 64 MiB inputs take milliseconds to
//! build.

/// SplitMix64 (Steele, Lea and Flood, 2014): a tiny, fast generator whose
/// output passes BigCrush, which is all a benchmark input needs.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator started from `seed`.
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Bits of precision of [`random_bits`]' density.
const DENSITY_BITS: u32 = 16;

/// `words` words whose bits are each set with probability `density`
/// (rounded to a multiple of 2⁻¹⁶, so 1% is 655/65536 ≈ 0.9995%),
/// independently, from the generator seeded with `seed`.
///
/// Each output word is built from up to 16 random words: reading the
/// density's binary digits from the least significant, `r = r | w` for a 1
/// and `r = r & w` for a 0 turns a bit's probability `p` into `(1 + p) / 2`
/// or `p / 2`, so after all digits it is exactly the density. That costs a
/// handful of nanoseconds per word, where a comparison per bit would cost a
/// random number per bit.
///
/// # Panics
///
/// If `density` is not within `0.0..=1.0`.
///
/// ```
/// use bitplan_benches::data::random_bits;
/// let words = random_bits(1 << 10, 0.5, 7);
/// let ones: u32 = words.iter().map(|w| w.count_ones()).sum();
/// assert!((20_000..45_000).contains(&ones), "{ones} of 65536 bits set");
/// assert!(random_bits(4, 0.0, 7).iter().all(|&w| w == 0));
/// assert!(random_bits(4, 1.0, 7).iter().all(|&w| w == u64::MAX));
/// ```
pub fn random_bits(words: usize, density: f64, seed: u64) -> Vec<u64> {
    assert!((0.0..=1.0).contains(&density), "density {density} is not a probability");
    let scale = f64::from(1u32 << DENSITY_BITS);
    // In 0..=65536 by the assertion, so the conversion is exact.
    let numerator = (density * scale).round() as u32;
    if numerator == 0 {
        return vec![0; words];
    }
    if numerator >= 1 << DENSITY_BITS {
        return vec![u64::MAX; words];
    }
    // Leading zero digits (from the least significant end) would AND random
    // words into zero: start at the lowest one.
    let first_digit = numerator.trailing_zeros();
    let mut rng = SplitMix64::new(seed);
    (0..words)
        .map(|_| {
            (first_digit..DENSITY_BITS).fold(0u64, |r, digit| {
                let w = rng.next_u64();
                if numerator >> digit & 1 == 1 { r | w } else { r & w }
            })
        })
        .collect()
}

/// `words` uniformly random words (density 50%).
pub fn random_words(words: usize, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed);
    (0..words).map(|_| rng.next_u64()).collect()
}

/// How the adapters' lookup hits overlap in a plan benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    /// Each adapter independently holds a random 60% of the keys: the
    /// realistic case, where the first-wins split has real work to do.
    Random60,
    /// Every adapter holds every key (a fully replicated cache tier): the
    /// first adapter gets everything and the others nothing.
    Replicated,
}

impl Overlap {
    /// The share of keys each adapter holds.
    pub const fn density(self) -> f64 {
        match self {
            Overlap::Random60 => 0.6,
            Overlap::Replicated => 1.0,
        }
    }
}

/// The lookup hits of `adapters` adapters over `keys` keys (a multiple of
/// 64), as word vectors: adapter `i`'s vector has bit `k` set if it holds key
/// `k`.
pub fn lookup_words(keys: usize, adapters: usize, overlap: Overlap) -> Vec<Vec<u64>> {
    assert_eq!(keys % 64, 0, "plan benchmarks use whole words of keys");
    (0..adapters).map(|i| random_bits(keys / 64, overlap.density(), 0x100 + i as u64)).collect()
}
