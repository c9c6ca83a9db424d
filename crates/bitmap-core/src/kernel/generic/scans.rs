//! The generic counts and searches over a [`Source`]: a Harley–Seal
//! popcount and the first non-zero word.

use super::sources::Source;
use crate::kernel::vector::Vector;

/// Harley–Seal carry-save adder: returns `(carry, sum)` of three vectors,
/// bit by bit.
#[inline(always)]
unsafe fn carry_save<V: Vector>(a: V, b: V, c: V) -> (V, V) {
    // SAFETY: the caller guarantees V's CPU feature.
    unsafe {
        let u = a.xor(b);
        (a.and(b).or(u.and(c)), u.xor(c))
    }
}

/// A Harley–Seal population count in progress (Muła, Kurz and Lemire,
/// "Faster population counts using AVX2 instructions"): a tree of
/// carry-save adders folds 16 vectors into one "sixteens" vector, so the
/// comparatively costly per-lane popcount runs once per 16 vectors instead
/// of once per vector. The partial sums live in five vectors, which is what
/// lets [`class_counts`](super::class_counts) keep one of these per class on the stack.
#[derive(Clone, Copy)]
pub(super) struct HarleySeal<V> {
    /// Per-lane counts of the folded sixteens.
    sixteens: V,
    ones: V,
    twos: V,
    fours: V,
    eights: V,
}

impl<V: Vector> HarleySeal<V> {
    /// Nothing counted yet.
    ///
    /// # Safety
    /// The CPU supports `V`'s feature.
    #[inline(always)]
    pub(super) unsafe fn new() -> Self {
        // SAFETY: the caller guarantees V's feature.
        let zero = unsafe { V::zero() };
        HarleySeal { sixteens: zero, ones: zero, twos: zero, fours: zero, eights: zero }
    }

    /// Adds the set bits of the 16 vectors `vector(0)`, …, `vector(15)`.
    ///
    /// # Safety
    /// The CPU supports `V`'s feature.
    #[inline(always)]
    pub(super) unsafe fn add16(&mut self, vector: impl Fn(usize) -> V) {
        // SAFETY: the caller guarantees V's feature.
        unsafe {
            let HarleySeal { ones, twos, fours, eights, .. } = *self;
            let (twos_a, o) = carry_save(ones, vector(0), vector(1));
            let (twos_b, o) = carry_save(o, vector(2), vector(3));
            let (fours_a, t) = carry_save(twos, twos_a, twos_b);
            let (twos_a, o) = carry_save(o, vector(4), vector(5));
            let (twos_b, o) = carry_save(o, vector(6), vector(7));
            let (fours_b, t) = carry_save(t, twos_a, twos_b);
            let (eights_a, f) = carry_save(fours, fours_a, fours_b);
            let (twos_a, o) = carry_save(o, vector(8), vector(9));
            let (twos_b, o) = carry_save(o, vector(10), vector(11));
            let (fours_a, t) = carry_save(t, twos_a, twos_b);
            let (twos_a, o) = carry_save(o, vector(12), vector(13));
            let (twos_b, o) = carry_save(o, vector(14), vector(15));
            let (fours_b, t) = carry_save(t, twos_a, twos_b);
            let (eights_b, f) = carry_save(f, fours_a, fours_b);
            let (sixteens, e) = carry_save(eights, eights_a, eights_b);
            self.sixteens = self.sixteens.add_lanes(sixteens.popcount_lanes());
            (self.ones, self.twos, self.fours, self.eights) = (o, t, f, e);
        }
    }

    /// The number of set bits added.
    ///
    /// # Safety
    /// The CPU supports `V`'s feature.
    #[inline(always)]
    pub(super) unsafe fn count(self) -> u64 {
        // SAFETY: the caller guarantees V's feature.
        // 16·sixteens + 8·eights + … by Horner's rule in the lanes, so
        // that one horizontal sum does: a class count folds 15 of these.
        unsafe {
            let mut lanes = self.sixteens;
            for partial in [self.eights, self.fours, self.twos, self.ones] {
                lanes = lanes.add_lanes(lanes).add_lanes(partial.popcount_lanes());
            }
            lanes.sum_lanes()
        }
    }
}

/// Counts the set bits of the first `n` words of `src`: [`HarleySeal`] over
/// blocks of 16 vectors, then single vectors, then words.
///
/// # Safety
/// `src` is valid for `n` words; the CPU supports `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn popcount<V: Vector, S: Source>(src: S, n: usize) -> u64 {
    let w = V::WORDS;
    let mut i = 0;
    // SAFETY: every index passed to `src` is checked against
    // `n` by the loop conditions; the caller guarantees V's feature.
    unsafe {
        let mut blocks = HarleySeal::<V>::new();
        while i + 16 * w <= n {
            // `i + 16 * w <= n`: every vector is within `src`.
            blocks.add16(|k| src.vector::<V>(i + k * w));
            i += 16 * w;
        }
        let mut rest = V::zero();
        while i + w <= n {
            rest = rest.add_lanes(src.vector::<V>(i).popcount_lanes());
            i += w;
        }
        let mut count = rest.sum_lanes();
        // Short inputs never entered the Harley–Seal loop: skip folding its
        // five (zero) accumulators, which would cost more than the count.
        if n >= 16 * w {
            count += blocks.count();
        }
        while i < n {
            count += u64::from(src.word(i).count_ones());
            i += 1;
        }
        count
    }
}

/// The index of the first of the first `n` words of `src` that is not zero.
///
/// # Safety
/// `src` is valid for `n` words; the CPU supports `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn position_nonzero<V: Vector, S: Source>(src: S, n: usize) -> Option<usize> {
    let w = V::WORDS;
    let mut i = 0;
    // SAFETY: indices are checked against `n` by the loop
    // conditions; the caller guarantees V's feature.
    unsafe {
        // Four vectors per test: one branch per 4 * w words while the
        // prefix is zero, which is the long, common case.
        while i + 4 * w <= n {
            let any = src
                .vector::<V>(i)
                .or(src.vector::<V>(i + w))
                .or(src.vector::<V>(i + 2 * w))
                .or(src.vector::<V>(i + 3 * w));
            if !any.is_zero() {
                break;
            }
            i += 4 * w;
        }
        while i < n {
            if src.word(i) != 0 {
                return Some(i);
            }
            i += 1;
        }
        None
    }
}
