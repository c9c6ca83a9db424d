//! Bitwise operations: the operators for every owned/borrowed combination and
//! their assign forms, the named in-place methods and their `try_` forms,
//! fused counts and many-way unions. All bulk work runs on the dispatched
//! [`kernel`] functions.
//!
//! Lengths must match. A mismatch is a caller bug, so the operators and the
//! named methods panic with both lengths; the `try_` forms return
//! [`BitmapError::LengthMismatch`] and leave the bitmap unchanged.
//!
//! None of the binary operations can set a bit past the length (both inputs
//! have those bits clear, and AND, OR, XOR and AND-NOT of two clear bits are
//! clear), so only `!` has to clear the tail afterwards.

use core::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not, Sub, SubAssign};

use crate::bitmap::{Bitmap, words_for};
use crate::error::{BitmapError, length_mismatch};
use crate::kernel::{self, Combine, count};
use crate::storage::Words;

impl Bitmap {
    #[inline]
    #[track_caller]
    fn assert_same_len(&self, other: &Bitmap) {
        if self.len != other.len {
            length_mismatch(self.len, other.len);
        }
    }

    #[inline]
    fn check_same_len(&self, other: &Bitmap) -> Result<(), BitmapError> {
        if self.len == other.len {
            Ok(())
        } else {
            Err(BitmapError::LengthMismatch { left: self.len, right: other.len })
        }
    }
}

/// Declares a named in-place method, its `try_` form and its kernel.
macro_rules! in_place {
    ($(
        $(#[$doc:meta])*
        fn $name:ident / $try_name:ident => $kernel:path;
    )*) => {
        /// # Bitwise operations
        ///
        /// The operators (`&`, `|`, `^`, `-`, `!` and their assign forms)
        /// are implemented for owned and borrowed bitmaps; an owned operand's
        /// buffer is reused for the result, so `a & &b` does not allocate.
        /// `-` is the set difference `a & !b`, as for `HashSet`.
        ///
        /// ```
        /// use bitmap_core::Bitmap;
        /// let a: Bitmap = "1100".parse().unwrap();
        /// let b: Bitmap = "1010".parse().unwrap();
        /// assert_eq!((&a & &b).to_string(), "1000");
        /// assert_eq!((&a | &b).to_string(), "1110");
        /// assert_eq!((&a ^ &b).to_string(), "0110");
        /// assert_eq!((&a - &b).to_string(), "0100");
        /// assert_eq!((!&a).to_string(), "0011");
        ///
        /// let mut c = a.clone();
        /// c.union_with(&b); // same as `c |= &b`
        /// assert_eq!(c.to_string(), "1110");
        /// assert!(c.try_union_with(&Bitmap::new(5)).is_err());
        /// ```
        impl Bitmap {
            $(
                $(#[$doc])*
                ///
                /// # Panics
                ///
                /// If the lengths differ; the `try_` form returns an error
                /// instead.
                #[inline]
                #[track_caller]
                pub fn $name(&mut self, other: &Bitmap) {
                    self.assert_same_len(other);
                    $kernel(&mut self.words, &other.words);
                }

                $(#[$doc])*
                ///
                /// # Errors
                ///
                /// [`BitmapError::LengthMismatch`] if the lengths differ; the
                /// bitmap is unchanged.
                #[inline]
                pub fn $try_name(&mut self, other: &Bitmap) -> Result<(), BitmapError> {
                    self.check_same_len(other)?;
                    $kernel(&mut self.words, &other.words);
                    Ok(())
                }
            )*

            /// Flips every bit (`self = !self`).
            ///
            /// ```
            /// use bitmap_core::Bitmap;
            /// let mut bits: Bitmap = "100".parse().unwrap();
            /// bits.invert();
            /// assert_eq!(bits.to_string(), "011");
            /// ```
            #[inline]
            pub fn invert(&mut self) {
                kernel::not_assign(&mut self.words);
                self.clear_tail();
            }
        }
    };
}

in_place! {
    /// Keeps only the bits also set in `other` (`self &= other`).
    fn intersect_with / try_intersect_with => kernel::and_assign;
    /// Adds the bits set in `other` (`self |= other`).
    fn union_with / try_union_with => kernel::or_assign;
    /// Flips the bits set in `other` (`self ^= other`).
    fn symmetric_difference_with / try_symmetric_difference_with => kernel::xor_assign;
    /// Removes the bits set in `other` (`self -= other`, i.e. `self &= !other`).
    fn difference_with / try_difference_with => kernel::and_not_assign;
}

impl Bitmap {
    /// `self OP other` into a new bitmap, in one pass. The lengths match.
    #[inline]
    fn combined(&self, other: &Bitmap, op: Combine) -> Bitmap {
        // Allocated at its size up front, not through `reserve`'s growth
        // policy, which is for buffers that grow.
        let mut words = Words::with_capacity(self.words.len());
        kernel::combine_overwrite(op, &self.words, &other.words, &mut words);
        // The operations keep clear tails clear (see the module docs).
        Bitmap { len: self.len, words }
    }
}

/// Declares the checked forms of `&a OP &b`, for callers that must not
/// panic on a length mismatch (bindings taking lengths from their users).
macro_rules! new_result {
    ($(
        $(#[$doc:meta])*
        fn $try_name:ident => $op:expr;
    )*) => {
        impl Bitmap {
            $(
                $(#[$doc])*
                ///
                /// # Errors
                ///
                /// [`BitmapError::LengthMismatch`] if the lengths differ.
                #[inline]
                pub fn $try_name(&self, other: &Bitmap) -> Result<Bitmap, BitmapError> {
                    self.check_same_len(other)?;
                    Ok(self.combined(other, $op))
                }
            )*
        }
    };
}

new_result! {
    /// `self & other` as a new bitmap, as `&self & other` but checked.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let a: Bitmap = "1100".parse()?;
    /// assert_eq!(a.try_intersection(&"1010".parse()?)?.to_string(), "1000");
    /// assert!(a.try_intersection(&Bitmap::new(3)).is_err());
    /// # Ok::<(), bitmap_core::BitmapError>(())
    /// ```
    fn try_intersection => Combine::And;
    /// `self | other` as a new bitmap, as `&self | other` but checked.
    fn try_union => Combine::Or;
    /// `self ^ other` as a new bitmap, as `&self ^ other` but checked.
    fn try_symmetric_difference => Combine::Xor;
    /// `self & !other` as a new bitmap, as `&self - other` but checked.
    fn try_difference => Combine::AndNot;
}

/// Implements one binary operator for the four owned/borrowed combinations
/// and its assign form for owned and borrowed right-hand sides.
///
/// `&a OP &b` writes `a OP b` into a new buffer in one pass (`$combine`);
/// `$into_rhs` computes `lhs OP rhs` into `rhs`'s buffer, for `&a OP b`.
macro_rules! operator {
    ($Op:ident::$op:ident, $OpAssign:ident::$op_assign:ident, $in_place:ident, $combine:expr, $into_rhs:expr) => {
        impl $Op<&Bitmap> for &Bitmap {
            type Output = Bitmap;

            /// # Panics
            ///
            /// If the lengths differ.
            #[inline]
            #[track_caller]
            fn $op(self, rhs: &Bitmap) -> Bitmap {
                self.assert_same_len(rhs);
                self.combined(rhs, $combine)
            }
        }

        impl $Op<&Bitmap> for Bitmap {
            type Output = Bitmap;

            /// Reuses `self`'s buffer.
            ///
            /// # Panics
            ///
            /// If the lengths differ.
            #[inline]
            #[track_caller]
            fn $op(mut self, rhs: &Bitmap) -> Bitmap {
                self.$in_place(rhs);
                self
            }
        }

        impl $Op<Bitmap> for &Bitmap {
            type Output = Bitmap;

            /// Reuses `rhs`'s buffer.
            ///
            /// # Panics
            ///
            /// If the lengths differ.
            #[inline]
            #[track_caller]
            fn $op(self, mut rhs: Bitmap) -> Bitmap {
                self.assert_same_len(&rhs);
                let into_rhs: fn(&Bitmap, &mut Bitmap) = $into_rhs;
                into_rhs(self, &mut rhs);
                rhs
            }
        }

        impl $Op<Bitmap> for Bitmap {
            type Output = Bitmap;

            /// Reuses `self`'s buffer.
            ///
            /// # Panics
            ///
            /// If the lengths differ.
            #[inline]
            #[track_caller]
            fn $op(mut self, rhs: Bitmap) -> Bitmap {
                self.$in_place(&rhs);
                self
            }
        }

        impl $OpAssign<&Bitmap> for Bitmap {
            /// # Panics
            ///
            /// If the lengths differ.
            #[inline]
            #[track_caller]
            fn $op_assign(&mut self, rhs: &Bitmap) {
                self.$in_place(rhs);
            }
        }

        impl $OpAssign<Bitmap> for Bitmap {
            /// # Panics
            ///
            /// If the lengths differ.
            #[inline]
            #[track_caller]
            fn $op_assign(&mut self, rhs: Bitmap) {
                self.$in_place(&rhs);
            }
        }
    };
}

operator!(BitAnd::bitand, BitAndAssign::bitand_assign, intersect_with, Combine::And, |lhs, rhs| kernel::and_assign(
    &mut rhs.words,
    &lhs.words
));
operator!(BitOr::bitor, BitOrAssign::bitor_assign, union_with, Combine::Or, |lhs, rhs| kernel::or_assign(
    &mut rhs.words,
    &lhs.words
));
operator!(BitXor::bitxor, BitXorAssign::bitxor_assign, symmetric_difference_with, Combine::Xor, |lhs, rhs| {
    kernel::xor_assign(&mut rhs.words, &lhs.words)
});
// `lhs & !rhs` into `rhs`: invert `rhs` (which sets its tail bits), then AND
// with `lhs`, whose clear tail clears them again. Two passes, no allocation.
operator!(Sub::sub, SubAssign::sub_assign, difference_with, Combine::AndNot, |lhs, rhs| {
    kernel::not_assign(&mut rhs.words);
    kernel::and_assign(&mut rhs.words, &lhs.words);
});

impl Not for Bitmap {
    type Output = Bitmap;

    /// Reuses `self`'s buffer.
    #[inline]
    fn not(mut self) -> Bitmap {
        self.invert();
        self
    }
}

impl Not for &Bitmap {
    type Output = Bitmap;

    #[inline]
    fn not(self) -> Bitmap {
        !self.clone()
    }
}

/// Declares a fused count and its `try_` form.
macro_rules! fused_count {
    ($(
        $(#[$doc:meta])*
        fn $name:ident / $try_name:ident => $kernel:path;
    )*) => {
        /// # Fused counts
        ///
        /// The number of set bits of `self OP other`, computed in one pass
        /// without building `self OP other`.
        ///
        /// ```
        /// use bitmap_core::Bitmap;
        /// let a: Bitmap = "1100".parse().unwrap();
        /// let b: Bitmap = "1010".parse().unwrap();
        /// assert_eq!(a.and_popcount(&b), 1);
        /// assert_eq!(a.or_popcount(&b), 3);
        /// assert_eq!(a.xor_popcount(&b), 2);
        /// assert_eq!(a.and_not_popcount(&b), 1);
        /// assert!(a.try_and_popcount(&Bitmap::new(3)).is_err());
        /// ```
        impl Bitmap {
            $(
                $(#[$doc])*
                ///
                /// # Panics
                ///
                /// If the lengths differ; the `try_` form returns an error
                /// instead.
                #[inline]
                #[track_caller]
                pub fn $name(&self, other: &Bitmap) -> usize {
                    self.assert_same_len(other);
                    count($kernel(&self.words, &other.words))
                }

                $(#[$doc])*
                ///
                /// # Errors
                ///
                /// [`BitmapError::LengthMismatch`] if the lengths differ.
                #[inline]
                pub fn $try_name(&self, other: &Bitmap) -> Result<usize, BitmapError> {
                    self.check_same_len(other)?;
                    Ok(count($kernel(&self.words, &other.words)))
                }
            )*
        }
    };
}

fused_count! {
    /// `(self & other).popcount()`: how many bits are set in both.
    fn and_popcount / try_and_popcount => kernel::and_popcount;
    /// `(self | other).popcount()`: how many bits are set in either.
    fn or_popcount / try_or_popcount => kernel::or_popcount;
    /// `(self ^ other).popcount()`: how many bits differ (the Hamming
    /// distance).
    fn xor_popcount / try_xor_popcount => kernel::xor_popcount;
    /// `(self - other).popcount()`: how many bits are set in `self` but not
    /// in `other`.
    fn and_not_popcount / try_and_not_popcount => kernel::and_not_popcount;
}

/// # Set relations
impl Bitmap {
    /// Whether every bit set in `self` is also set in `other`.
    ///
    /// # Panics
    ///
    /// If the lengths differ.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let a: Bitmap = "0100".parse().unwrap();
    /// let b: Bitmap = "1100".parse().unwrap();
    /// assert!(a.is_subset(&b) && !b.is_subset(&a));
    /// assert!(!a.is_disjoint(&b));
    /// ```
    #[inline]
    #[track_caller]
    pub fn is_subset(&self, other: &Bitmap) -> bool {
        self.and_not_popcount(other) == 0
    }

    /// Whether no bit is set in both `self` and `other`.
    ///
    /// # Panics
    ///
    /// If the lengths differ.
    #[inline]
    #[track_caller]
    pub fn is_disjoint(&self, other: &Bitmap) -> bool {
        self.and_popcount(other) == 0
    }
}

/// Up to this many sources, [`union_words`] passes their word slices to the
/// kernel from a stack array, without allocating. Policies union one bitmap
/// per storage adapter, and a deployment has a handful of adapters.
const STACK_SOURCES: usize = 16;

/// `dst = sources[0] | sources[1] | …` in one pass (all lengths checked by
/// the caller).
fn union_words(dst: &mut [u64], sources: &[&Bitmap]) {
    if sources.len() <= STACK_SOURCES {
        let mut words: [&[u64]; STACK_SOURCES] = [&[]; STACK_SOURCES];
        for (slot, source) in words.iter_mut().zip(sources) {
            *slot = &source.words;
        }
        kernel::union_many(dst, &words[..sources.len()]);
    } else {
        let words: Vec<&[u64]> = sources.iter().map(|source| source.as_words()).collect();
        kernel::union_many(dst, &words);
    }
}

#[inline]
fn check_sources(len: usize, sources: &[&Bitmap]) -> Result<(), BitmapError> {
    match sources.iter().find(|source| source.len != len) {
        Some(source) => Err(BitmapError::LengthMismatch { left: len, right: source.len }),
        None => Ok(()),
    }
}

/// # Many-way unions
///
/// The union of any number of bitmaps in one pass over the words, instead of
/// one pass per `|`. Allocation-free for up to 16 sources (beyond that, one
/// small `Vec` of slices).
impl Bitmap {
    /// The union of `sources`, each of which must be `len` bits long; no
    /// sources gives an all-clear bitmap.
    ///
    /// # Errors
    ///
    /// [`BitmapError::LengthMismatch`] (`left` is `len`, `right` the first
    /// source of another length).
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let a: Bitmap = "1000".parse().unwrap();
    /// let b: Bitmap = "0100".parse().unwrap();
    /// let c: Bitmap = "0001".parse().unwrap();
    /// assert_eq!(Bitmap::union_of(4, &[&a, &b, &c]).unwrap().to_string(), "1101");
    /// assert!(Bitmap::union_of(5, &[&a]).is_err());
    /// ```
    pub fn union_of(len: usize, sources: &[&Bitmap]) -> Result<Bitmap, BitmapError> {
        check_sources(len, sources)?;
        let mut union = Bitmap::new(len);
        union_words(&mut union.words, sources);
        Ok(union)
    }

    /// Overwrites `self` with the union of `sources` (its previous bits are
    /// **not** included; no sources clears it), reusing its buffer.
    ///
    /// # Errors
    ///
    /// [`BitmapError::LengthMismatch`] if a source's length differs from
    /// `self`'s; `self` is unchanged.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let a: Bitmap = "1000".parse().unwrap();
    /// let b: Bitmap = "0100".parse().unwrap();
    /// let mut union: Bitmap = "0011".parse().unwrap();
    /// union.union_many_into(&[&a, &b]).unwrap();
    /// assert_eq!(union.to_string(), "1100");
    /// ```
    pub fn union_many_into(&mut self, sources: &[&Bitmap]) -> Result<(), BitmapError> {
        check_sources(self.len, sources)?;
        union_words(&mut self.words, sources);
        Ok(())
    }
}

/// # First-wins split
///
/// The split behind a first-adapter-wins load plan: each set bit of the
/// sources goes to the first source that has it.
impl Bitmap {
    /// Overwrites `outputs` (one per source, in order) with the first-wins
    /// split of `sources`: bit `i` is set in output `k` iff source `k` has
    /// it and no earlier source does. So the outputs never overlap, each is
    /// a subset of its source, and together they are the union.
    ///
    /// One pass over the words ([`kernel::first_wins`]); each output takes
    /// the sources' length, reusing its buffer if it is large enough, and
    /// its words are written once, never zeroed first, so filling fresh
    /// `Bitmap::default()`s costs an allocation each and no more.
    /// Allocation-free (given buffers) for up to 16 sources.
    ///
    /// # Errors
    ///
    /// [`BitmapError::LengthMismatch`] if the sources differ in length
    /// (`left` is the first source's length); the outputs are unchanged.
    ///
    /// # Panics
    ///
    /// If there are not exactly as many outputs as sources.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let a: Bitmap = "1100".parse().unwrap();
    /// let b: Bitmap = "0110".parse().unwrap();
    /// let c: Bitmap = "1011".parse().unwrap();
    /// let mut outputs = [Bitmap::default(), Bitmap::default(), Bitmap::default()];
    /// Bitmap::first_wins_split(&[&a, &b, &c], &mut outputs).unwrap();
    /// let bits: Vec<String> = outputs.iter().map(Bitmap::to_string).collect();
    /// assert_eq!(bits, ["1100", "0010", "0001"]);
    /// ```
    #[track_caller]
    pub fn first_wins_split<'o>(
        sources: &[&Bitmap],
        outputs: impl IntoIterator<Item = &'o mut Bitmap>,
    ) -> Result<(), BitmapError> {
        let len = sources.first().map_or(0, |source| source.len);
        check_sources(len, sources)?;
        match sources.len() {
            0..=4 => first_wins_split_inline::<4>(len, sources, outputs),
            5..=8 => first_wins_split_inline::<8>(len, sources, outputs),
            9..=STACK_SOURCES => first_wins_split_inline::<STACK_SOURCES>(len, sources, outputs),
            _ => {
                // Beyond the stack arrays: split in the `Vec`-backed way.
                let outputs: Vec<&mut Bitmap> = outputs.into_iter().collect();
                check_output_count(sources.len(), outputs.len());
                let inputs: Vec<&[u64]> = sources.iter().map(|source| source.as_words()).collect();
                let mut words: Vec<&mut [u64]> = Vec::with_capacity(outputs.len());
                for output in outputs {
                    output.reset(len);
                    words.push(&mut output.words);
                }
                kernel::first_wins(&inputs, &mut words);
            }
        }
        Ok(())
    }
}

impl Bitmap {
    /// [`first_wins_split`](Bitmap::first_wins_split) with as many sources
    /// and outputs as a constant `M`: the same result and errors, for a
    /// caller that knows the count (a load plan over a handful of
    /// adapters).
    ///
    /// This is the form for small inputs, where the fixed cost is most of
    /// the time. When every output already has room for the sources'
    /// length (a reused plan), the kernel writes into the outputs' words in
    /// place: a length that changed costs the words it changed by, one that
    /// did not costs nothing. Otherwise (an output must grow) its words are
    /// written once into new capacity, as with `first_wins_split`.
    ///
    /// # Errors
    ///
    /// [`BitmapError::LengthMismatch`] if the sources differ in length
    /// (`left` is the first source's length); the outputs are unchanged.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let a: Bitmap = "1100".parse().unwrap();
    /// let b: Bitmap = "0110".parse().unwrap();
    /// let [mut to_a, mut to_b] = [Bitmap::with_capacity_bits(64), Bitmap::with_capacity_bits(64)];
    /// Bitmap::first_wins_split_array(&[&a, &b], [&mut to_a, &mut to_b]).unwrap();
    /// assert_eq!((to_a.to_string(), to_b.to_string()), ("1100".into(), "0010".into()));
    /// ```
    #[inline]
    pub fn first_wins_split_array<const M: usize>(
        sources: &[&Bitmap; M],
        outputs: [&mut Bitmap; M],
    ) -> Result<(), BitmapError> {
        let len = sources.first().map_or(0, |source| source.len);
        check_sources(len, sources)?;
        let words = words_for(len);
        if outputs.iter().any(|output| output.words.capacity() < words) {
            first_wins_split_inline::<M>(len, sources, outputs);
            return Ok(());
        }
        let mut inputs: [&[u64]; M] = [&[]; M];
        for (input, source) in inputs.iter_mut().zip(sources) {
            *input = source.as_words();
        }
        let mut targets: [&mut [u64]; M] = core::array::from_fn(|_| <&mut [u64]>::default());
        for (target, output) in targets.iter_mut().zip(outputs) {
            // The kernel overwrites every word and the sources' tails are
            // clear, so whatever the words held before does not matter.
            output.words.resize_zeroed(words);
            output.len = len;
            *target = output.words.as_mut_slice();
        }
        kernel::first_wins(&inputs, &mut targets);
        Ok(())
    }
}

/// [`Bitmap::first_wins_split`] with its slices in `N`-slot stack arrays
/// (`sources.len() <= N`, lengths checked).
#[inline]
#[track_caller]
fn first_wins_split_inline<'o, const N: usize>(
    len: usize,
    sources: &[&Bitmap],
    outputs: impl IntoIterator<Item = &'o mut Bitmap>,
) {
    let mut inputs: [&[u64]; N] = [&[]; N];
    for (slot, source) in inputs.iter_mut().zip(sources) {
        *slot = source.as_words();
    }
    let mut slots: [Option<&mut Bitmap>; N] = [const { None }; N];
    let mut count = 0;
    for output in outputs {
        if count < N {
            slots[count] = Some(output);
        }
        count += 1;
    }
    check_output_count(sources.len(), count);
    kernel::first_wins_overwrite(
        &inputs[..sources.len()],
        slots.each_mut().map(|slot| slot.as_mut().map(|bitmap| &mut bitmap.words)),
    );
    // The sources' tails are clear, so the outputs' are.
    for output in slots.iter_mut().flatten() {
        output.len = len;
    }
}

#[track_caller]
fn check_output_count(sources: usize, outputs: usize) {
    assert_eq!(sources, outputs, "bitmap-core: first_wins_split has {sources} sources but {outputs} outputs");
}
