//! The laws of set algebra, and agreement between the different ways of
//! computing the same thing, on random bitmaps of random lengths.

use bitmap_core::Bitmap;
use proptest::prelude::*;

/// Miri runs the same properties on a handful of cases.
const CASES: u32 = if cfg!(miri) { 4 } else { 256 };

/// Lengths of up to ten words. Under Miri, lengths either of at most three
/// words or of five (past the kernels' inline small-input path, so the
/// dispatched kernel runs too).
fn length() -> BoxedStrategy<usize> {
    if cfg!(miri) { prop_oneof![0..=130usize, 257..=320usize].boxed() } else { (0..=640usize).boxed() }
}

/// A bitmap of the given length with a random density: sometimes empty or
/// full, usually something in between.
fn bitmap_of_len(len: usize) -> impl Strategy<Value = Bitmap> {
    prop_oneof![
        1 => Just(Bitmap::new(len)),
        1 => Just(Bitmap::with_prefix(len, len)),
        2 => prop::collection::vec(prop::bool::weighted(0.05), len).prop_map(|bits| Bitmap::from_bools(&bits)),
        6 => prop::collection::vec(any::<bool>(), len).prop_map(|bits| Bitmap::from_bools(&bits)),
    ]
}

fn one() -> impl Strategy<Value = Bitmap> {
    length().prop_flat_map(bitmap_of_len)
}

fn two() -> impl Strategy<Value = (Bitmap, Bitmap)> {
    length().prop_flat_map(|len| (bitmap_of_len(len), bitmap_of_len(len)))
}

fn three() -> impl Strategy<Value = (Bitmap, Bitmap, Bitmap)> {
    length().prop_flat_map(|len| (bitmap_of_len(len), bitmap_of_len(len), bitmap_of_len(len)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn commutativity((a, b) in two()) {
        prop_assert_eq!(&a & &b, &b & &a);
        prop_assert_eq!(&a | &b, &b | &a);
        prop_assert_eq!(&a ^ &b, &b ^ &a);
    }

    #[test]
    fn associativity((a, b, c) in three()) {
        prop_assert_eq!(&(&a & &b) & &c, &a & &(&b & &c));
        prop_assert_eq!(&(&a | &b) | &c, &a | &(&b | &c));
        prop_assert_eq!(&(&a ^ &b) ^ &c, &a ^ &(&b ^ &c));
    }

    #[test]
    fn distributivity_and_absorption((a, b, c) in three()) {
        prop_assert_eq!(&a & &(&b | &c), &(&a & &b) | &(&a & &c));
        prop_assert_eq!(&a | &(&b & &c), &(&a | &b) & &(&a | &c));
        prop_assert_eq!(&a | &(&a & &b), a.clone());
        prop_assert_eq!(&a & &(&a | &b), a.clone());
    }

    #[test]
    fn de_morgan((a, b) in two()) {
        prop_assert_eq!(!(&a & &b), !&a | !&b);
        prop_assert_eq!(!(&a | &b), !&a & !&b);
    }

    #[test]
    fn complements(a in one()) {
        let len = a.len();
        prop_assert!((&a & !&a).none());
        prop_assert!((&a | !&a).all());
        prop_assert_eq!(!!a.clone(), a.clone());
        prop_assert!((&a ^ &a).none());
        prop_assert!((&a - &a).none());
        prop_assert_eq!(a.popcount() + (!&a).popcount(), len);
        prop_assert_eq!(&a ^ &Bitmap::new(len), a.clone());
        prop_assert_eq!(&a ^ &Bitmap::with_prefix(len, len), !&a);
    }

    #[test]
    fn difference_is_and_not((a, b) in two()) {
        prop_assert_eq!(&a - &b, &a & &!&b);
        prop_assert_eq!(&a ^ &b, &(&a - &b) | &(&b - &a));
        prop_assert!((&a - &b).is_subset(&a));
        prop_assert!((&a - &b).is_disjoint(&b));
    }

    #[test]
    fn every_form_of_an_operation_agrees((a, b) in two()) {
        let and = &a & &b;
        prop_assert_eq!(a.clone() & &b, and.clone());
        prop_assert_eq!(&a & b.clone(), and.clone());
        prop_assert_eq!(a.clone() & b.clone(), and.clone());
        let mut c = a.clone(); c &= &b; prop_assert_eq!(&c, &and);
        let mut c = a.clone(); c &= b.clone(); prop_assert_eq!(&c, &and);
        let mut c = a.clone(); c.intersect_with(&b); prop_assert_eq!(&c, &and);
        prop_assert_eq!(a.try_intersection(&b), Ok(and.clone()));

        let or = &a | &b;
        prop_assert_eq!(a.clone() | &b, or.clone());
        prop_assert_eq!(&a | b.clone(), or.clone());
        prop_assert_eq!(a.clone() | b.clone(), or.clone());
        let mut c = a.clone(); c |= &b; prop_assert_eq!(&c, &or);
        let mut c = a.clone(); c |= b.clone(); prop_assert_eq!(&c, &or);
        let mut c = a.clone(); c.union_with(&b); prop_assert_eq!(&c, &or);
        prop_assert_eq!(a.try_union(&b), Ok(or.clone()));

        let xor = &a ^ &b;
        prop_assert_eq!(a.clone() ^ &b, xor.clone());
        prop_assert_eq!(&a ^ b.clone(), xor.clone());
        prop_assert_eq!(a.clone() ^ b.clone(), xor.clone());
        let mut c = a.clone(); c ^= &b; prop_assert_eq!(&c, &xor);
        let mut c = a.clone(); c ^= b.clone(); prop_assert_eq!(&c, &xor);
        let mut c = a.clone(); c.symmetric_difference_with(&b); prop_assert_eq!(&c, &xor);
        prop_assert_eq!(a.try_symmetric_difference(&b), Ok(xor.clone()));

        let difference = &a - &b;
        prop_assert_eq!(a.clone() - &b, difference.clone());
        prop_assert_eq!(&a - b.clone(), difference.clone());
        prop_assert_eq!(a.clone() - b.clone(), difference.clone());
        let mut c = a.clone(); c -= &b; prop_assert_eq!(&c, &difference);
        let mut c = a.clone(); c -= b.clone(); prop_assert_eq!(&c, &difference);
        let mut c = a.clone(); c.difference_with(&b); prop_assert_eq!(&c, &difference);
        prop_assert_eq!(a.try_difference(&b), Ok(difference.clone()));

        let mut c = a.clone(); c.invert(); prop_assert_eq!(&c, &!&a);
        prop_assert_eq!(!a.clone(), !&a);
    }

    #[test]
    fn fused_counts_equal_materialised_ones((a, b) in two()) {
        prop_assert_eq!(a.and_popcount(&b), (&a & &b).popcount());
        prop_assert_eq!(a.or_popcount(&b), (&a | &b).popcount());
        prop_assert_eq!(a.xor_popcount(&b), (&a ^ &b).popcount());
        prop_assert_eq!(a.and_not_popcount(&b), (&a - &b).popcount());
        // Inclusion–exclusion.
        prop_assert_eq!(a.or_popcount(&b) + a.and_popcount(&b), a.popcount() + b.popcount());
    }

    #[test]
    fn union_of_many_equals_a_fold(
        (len, sources) in length().prop_flat_map(|len| (Just(len), prop::collection::vec(bitmap_of_len(len), 0..20)))
    ) {
        let refs: Vec<&Bitmap> = sources.iter().collect();
        let folded = sources.iter().fold(Bitmap::new(len), |acc, b| acc | b);
        prop_assert_eq!(Bitmap::union_of(len, &refs).unwrap(), folded.clone());
        let mut into = Bitmap::with_prefix(len, len);
        into.union_many_into(&refs).unwrap();
        prop_assert_eq!(into, folded);
    }

    #[test]
    fn round_trips(a in one()) {
        let len = a.len();
        prop_assert_eq!(Bitmap::from_bytes(len, a.as_bytes()).unwrap(), a.clone());
        prop_assert_eq!(Bitmap::from_words(len, a.as_words().to_vec()).unwrap(), a.clone());
        prop_assert_eq!(a.to_string().parse::<Bitmap>().unwrap(), a.clone());
        prop_assert_eq!(Bitmap::from_indices(len, a.ones()).unwrap(), a.clone());
        prop_assert_eq!(a.iter().collect::<Bitmap>(), a.clone());
        prop_assert_eq!(Bitmap::from_bools(&a.iter().collect::<Vec<_>>()), a.clone());
        let mut reversed = a.ones().rev().collect::<Vec<_>>();
        reversed.reverse();
        prop_assert_eq!(reversed, a.to_indices());
    }
}
