//! Every SIMD loop, written once over [`Vector`].
//!
//! The functions here are `#[inline(always)]` and `unsafe`: each kernel module
//! instantiates them inside a `#[target_feature]` wrapper, so the vector type's
//! intrinsics inline into code compiled for that feature.
//!
//! # Memory safety
//!
//! No function here trusts its callers about lengths: each one works over the
//! shortest of the slices it is given, so the only precondition of every
//! function is the one of [`Vector`] itself (the CPU supports `V`'s feature).
//! The safe entry points in [`super::Kernel`] reject mismatched lengths before
//! they get here; that is a matter of meaning, not of memory safety.

use core::marker::PhantomData;
use core::mem::MaybeUninit;

use super::vector::Vector;

/// A lane-wise binary operation, as vectors and as single words.
pub(crate) trait BinaryOp: Copy {
    /// The operation on two vectors.
    ///
    /// # Safety
    /// As [`Vector`]: the CPU supports `V`'s feature.
    unsafe fn vector<V: Vector>(a: V, b: V) -> V;
    /// The same operation on one word, for tails.
    fn word(a: u64, b: u64) -> u64;
}

macro_rules! binary_op {
    ($(#[$doc:meta])* $name:ident, $vector:ident, |$a:ident, $b:ident| $word:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub(crate) struct $name;

        impl BinaryOp for $name {
            #[inline(always)]
            unsafe fn vector<V: Vector>(a: V, b: V) -> V {
                // SAFETY: the caller guarantees V's CPU feature.
                unsafe { a.$vector(b) }
            }
            #[inline(always)]
            fn word($a: u64, $b: u64) -> u64 {
                $word
            }
        }
    };
}

binary_op!(
    /// `a & b`
    And, and, |a, b| a & b
);
binary_op!(
    /// `a | b`
    Or, or, |a, b| a | b
);
binary_op!(
    /// `a ^ b`
    Xor, xor, |a, b| a ^ b
);
binary_op!(
    /// `a & !b`
    AndNot, and_not, |a, b| a & !b
);

/// Something that yields words and vectors by word index: one slice, an
/// inverted slice, or a binary operation over two slices. The popcount and
/// search loops are written over this, so a fused count such as
/// `and_popcount` is the plain popcount loop with a different source and
/// never materialises the intermediate bitmap.
pub(crate) trait Source: Copy {
    /// The vector of words `i .. i + V::WORDS`.
    ///
    /// # Safety
    /// `i + V::WORDS` is at most the length the source was built for, and
    /// the CPU supports `V`'s feature.
    unsafe fn vector<V: Vector>(self, i: usize) -> V;
    /// Word `i`.
    ///
    /// # Safety
    /// `i` is less than the length the source was built for.
    unsafe fn word(self, i: usize) -> u64;
}

/// The words of one slice.
#[derive(Clone, Copy)]
pub(crate) struct Words(*const u64);

impl Words {
    #[inline(always)]
    pub(crate) fn new(words: &[u64]) -> Self {
        Words(words.as_ptr())
    }
}

impl Source for Words {
    #[inline(always)]
    unsafe fn vector<V: Vector>(self, i: usize) -> V {
        // SAFETY: the caller keeps `i + V::WORDS` within the slice.
        unsafe { V::load(self.0.add(i)) }
    }
    #[inline(always)]
    unsafe fn word(self, i: usize) -> u64 {
        // SAFETY: the caller keeps `i` within the slice.
        unsafe { *self.0.add(i) }
    }
}

/// The complement of each word of one slice.
#[derive(Clone, Copy)]
pub(crate) struct Inverted(*const u64);

impl Inverted {
    #[inline(always)]
    pub(crate) fn new(words: &[u64]) -> Self {
        Inverted(words.as_ptr())
    }
}

impl Source for Inverted {
    #[inline(always)]
    unsafe fn vector<V: Vector>(self, i: usize) -> V {
        // SAFETY: the caller keeps `i + V::WORDS` within the slice.
        unsafe { V::load(self.0.add(i)).not() }
    }
    #[inline(always)]
    unsafe fn word(self, i: usize) -> u64 {
        // SAFETY: the caller keeps `i` within the slice.
        unsafe { !*self.0.add(i) }
    }
}

/// `O` applied to two slices, word by word.
#[derive(Clone, Copy)]
pub(crate) struct Pair<O>(*const u64, *const u64, PhantomData<O>);

impl<O: BinaryOp> Pair<O> {
    #[inline(always)]
    pub(crate) fn new(a: &[u64], b: &[u64]) -> Self {
        Pair(a.as_ptr(), b.as_ptr(), PhantomData)
    }
}

impl<O: BinaryOp> Source for Pair<O> {
    #[inline(always)]
    unsafe fn vector<V: Vector>(self, i: usize) -> V {
        // SAFETY: the caller keeps `i + V::WORDS` within both slices.
        unsafe { O::vector(V::load(self.0.add(i)), V::load(self.1.add(i))) }
    }
    #[inline(always)]
    unsafe fn word(self, i: usize) -> u64 {
        // SAFETY: the caller keeps `i` within both slices.
        unsafe { O::word(*self.0.add(i), *self.1.add(i)) }
    }
}

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

/// Counts the set bits of the first `n` words of `src`.
///
/// Harley–Seal over 16 vectors at a time (Muła, Kurz and Lemire, "Faster
/// population counts using AVX2 instructions"): a tree of carry-save adders
/// folds 16 vectors into one "sixteens" vector, so the comparatively costly
/// per-lane popcount runs once per 16 vectors instead of once per vector.
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
        let mut total = V::zero();
        let (mut ones, mut twos, mut fours, mut eights) = (V::zero(), V::zero(), V::zero(), V::zero());
        while i + 16 * w <= n {
            let (twos_a, o) = carry_save(ones, src.vector::<V>(i), src.vector::<V>(i + w));
            let (twos_b, o) = carry_save(o, src.vector::<V>(i + 2 * w), src.vector::<V>(i + 3 * w));
            let (fours_a, t) = carry_save(twos, twos_a, twos_b);
            let (twos_a, o) = carry_save(o, src.vector::<V>(i + 4 * w), src.vector::<V>(i + 5 * w));
            let (twos_b, o) = carry_save(o, src.vector::<V>(i + 6 * w), src.vector::<V>(i + 7 * w));
            let (fours_b, t) = carry_save(t, twos_a, twos_b);
            let (eights_a, f) = carry_save(fours, fours_a, fours_b);
            let (twos_a, o) = carry_save(o, src.vector::<V>(i + 8 * w), src.vector::<V>(i + 9 * w));
            let (twos_b, o) = carry_save(o, src.vector::<V>(i + 10 * w), src.vector::<V>(i + 11 * w));
            let (fours_a, t) = carry_save(t, twos_a, twos_b);
            let (twos_a, o) = carry_save(o, src.vector::<V>(i + 12 * w), src.vector::<V>(i + 13 * w));
            let (twos_b, o) = carry_save(o, src.vector::<V>(i + 14 * w), src.vector::<V>(i + 15 * w));
            let (fours_b, t) = carry_save(t, twos_a, twos_b);
            let (eights_b, f) = carry_save(f, fours_a, fours_b);
            let (sixteens, e) = carry_save(eights, eights_a, eights_b);
            total = total.add_lanes(sixteens.popcount_lanes());
            (ones, twos, fours, eights) = (o, t, f, e);
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
            count += 16 * total.sum_lanes()
                + 8 * eights.popcount_lanes().sum_lanes()
                + 4 * fours.popcount_lanes().sum_lanes()
                + 2 * twos.popcount_lanes().sum_lanes()
                + ones.popcount_lanes().sum_lanes();
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

/// `dst[i] = O(dst[i], src[i])` over the common length.
///
/// # Safety
/// The CPU supports `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn assign<V: Vector, O: BinaryOp>(dst: &mut [u64], src: &[u64]) {
    let n = dst.len().min(src.len());
    let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
    let w = V::WORDS;
    let mut i = 0;
    // SAFETY: indices are checked against `n`, the shorter
    // length, by the loop conditions; the caller guarantees V's feature.
    unsafe {
        while i + 4 * w <= n {
            let a = [0, 1, 2, 3].map(|k| V::load(d.add(i + k * w)));
            let b = [0, 1, 2, 3].map(|k| V::load(s.add(i + k * w)));
            for k in 0..4 {
                O::vector(a[k], b[k]).store(d.add(i + k * w));
            }
            i += 4 * w;
        }
        while i + w <= n {
            O::vector(V::load(d.add(i)), V::load(s.add(i))).store(d.add(i));
            i += w;
        }
        while i < n {
            *d.add(i) = O::word(*d.add(i), *s.add(i));
            i += 1;
        }
    }
}

/// `dst[i] = !dst[i]`.
///
/// # Safety
/// The CPU supports `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn not<V: Vector>(dst: &mut [u64]) {
    let n = dst.len();
    let d = dst.as_mut_ptr();
    let w = V::WORDS;
    let mut i = 0;
    // SAFETY: indices are checked against `n` by the loop
    // conditions; the caller guarantees V's feature.
    unsafe {
        while i + 4 * w <= n {
            let a = [0, 1, 2, 3].map(|k| V::load(d.add(i + k * w)));
            for (k, v) in a.into_iter().enumerate() {
                v.not().store(d.add(i + k * w));
            }
            i += 4 * w;
        }
        while i + w <= n {
            V::load(d.add(i)).not().store(d.add(i));
            i += w;
        }
        while i < n {
            *d.add(i) = !*d.add(i);
            i += 1;
        }
    }
}

/// The common length of a destination and a list of sources.
#[inline(always)]
fn common_len(first: usize, rest: impl Iterator<Item = usize>) -> usize {
    rest.fold(first, usize::min)
}

/// `dst = srcs[0] | srcs[1] | ...` in one pass: each destination vector is
/// written once, after OR-ing the sources in registers. No sources clears
/// `dst`.
///
/// # Safety
/// The CPU supports `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn union_many<V: Vector>(dst: &mut [u64], srcs: &[&[u64]]) {
    let n = common_len(dst.len(), srcs.iter().map(|s| s.len()));
    let d = dst.as_mut_ptr();
    let w = V::WORDS;
    let mut i = 0;
    // SAFETY: every slice holds at least `n` words, and indices
    // are checked against `n` by the loop conditions; the caller guarantees
    // V's feature.
    unsafe {
        while i + 2 * w <= n {
            let (mut a0, mut a1) = (V::zero(), V::zero());
            for s in srcs {
                let p = s.as_ptr();
                a0 = a0.or(V::load(p.add(i)));
                a1 = a1.or(V::load(p.add(i + w)));
            }
            a0.store(d.add(i));
            a1.store(d.add(i + w));
            i += 2 * w;
        }
        while i < n {
            let mut acc = 0;
            for s in srcs {
                acc |= *s.as_ptr().add(i);
            }
            *d.add(i) = acc;
            i += 1;
        }
    }
}

/// The first-adapter-wins plan in one pass over the words: for every word,
/// in input order, `outputs[a] = inputs[a] & !claimed; claimed |= inputs[a]`.
///
/// `claimed` lives in registers, each output is written exactly once, and no
/// intermediate bitmap exists. Inputs beyond the number of outputs (or the
/// other way round) are ignored.
///
/// The outputs may be uninitialised: every word of the common length is
/// written (and none read), which is what lets a fresh plan skip zeroing
/// its buffers first.
///
/// # Safety
/// The CPU supports `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn first_wins<V: Vector>(inputs: &[&[u64]], outputs: &mut [&mut [MaybeUninit<u64>]]) {
    let m = inputs.len().min(outputs.len());
    let (inputs, outputs) = (&inputs[..m], &mut outputs[..m]);
    let n = common_len(usize::MAX, inputs.iter().map(|s| s.len()).chain(outputs.iter().map(|s| s.len())));
    if m == 0 {
        return;
    }
    let w = V::WORDS;
    let mut i = 0;
    // SAFETY: every slice holds at least `n` words, indices are
    // checked against `n` by the loop conditions, and `a < m` indexes both
    // lists; the caller guarantees V's feature.
    unsafe {
        // Two vectors (a cache line with AVX2) per adapter per step keep two
        // independent dependency chains on `claimed`.
        while i + 2 * w <= n {
            let (mut c0, mut c1) = (V::zero(), V::zero());
            for a in 0..m {
                let src = inputs.get_unchecked(a).as_ptr();
                let dst = outputs.get_unchecked_mut(a).as_mut_ptr().cast::<u64>();
                let x0 = V::load(src.add(i));
                let x1 = V::load(src.add(i + w));
                x0.and_not(c0).store(dst.add(i));
                x1.and_not(c1).store(dst.add(i + w));
                c0 = c0.or(x0);
                c1 = c1.or(x1);
            }
            i += 2 * w;
        }
        while i < n {
            let mut claimed = 0;
            for a in 0..m {
                let x = *inputs.get_unchecked(a).as_ptr().add(i);
                outputs.get_unchecked_mut(a).as_mut_ptr().cast::<u64>().add(i).write(x & !claimed);
                claimed |= x;
            }
            i += 1;
        }
    }
}
