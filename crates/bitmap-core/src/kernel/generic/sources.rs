//! The operands a generic loop reads: one slice, its complement, or a
//! lane-wise binary operation over two, as vectors and as single words.

use core::marker::PhantomData;

use crate::kernel::vector::Vector;

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
