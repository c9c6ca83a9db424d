//! Every error and every panic message: each names the numbers involved.

use bitmap_core::{Bitmap, BitmapError, SizeUnit};

#[test]
fn error_messages_name_the_numbers() {
    let cases = [
        (BitmapError::LengthMismatch { left: 10, right: 12 }, "length mismatch: left is 10, right is 12"),
        (BitmapError::IndexOutOfRange { index: 7, len: 5 }, "index 7 is out of range for a bitmap of 5 bits"),
        (
            BitmapError::WrongSize { expected: 2, actual: 3, unit: SizeUnit::Words },
            "wrong size: expected 2 words, got 3",
        ),
        (
            BitmapError::WrongSize { expected: 9, actual: 1, unit: SizeUnit::Bytes },
            "wrong size: expected 9 bytes, got 1",
        ),
        (BitmapError::WrongSize { expected: 4, actual: 5, unit: SizeUnit::Bits }, "wrong size: expected 4 bits, got 5"),
        (BitmapError::BitPastEnd { index: 70, len: 65 }, "bit 70 is set but the bitmap has only 65 bits"),
        (
            BitmapError::InvalidChar { position: 3, found: 'x' },
            "invalid character 'x' at position 3: expected '0' or '1'",
        ),
    ];
    for (error, message) in cases {
        assert_eq!(error.to_string(), message);
    }
}

#[test]
fn errors_are_std_errors_that_cross_threads() {
    fn assert_error<E: std::error::Error + Send + Sync + 'static>(_: &E) {}
    assert_error(&BitmapError::LengthMismatch { left: 1, right: 2 });
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(BitmapError::IndexOutOfRange { index: 1, len: 0 });
    assert_eq!(boxed.to_string(), "index 1 is out of range for a bitmap of 0 bits");
}

#[test]
fn each_fallible_operation_returns_its_error() {
    let mut bits = Bitmap::new(10);
    let other = Bitmap::new(12);
    let mismatch = Err(BitmapError::LengthMismatch { left: 10, right: 12 });
    let out_of_range = BitmapError::IndexOutOfRange { index: 10, len: 10 };

    assert_eq!(Bitmap::from_indices(10, [3, 10]), Err(out_of_range.clone()));
    assert_eq!(bits.try_set(10), Err(out_of_range.clone()));
    assert_eq!(bits.try_clear(10), Err(out_of_range.clone()));
    assert_eq!(bits.set_indices([10]), Err(out_of_range));

    assert_eq!(bits.try_intersect_with(&other), mismatch);
    assert_eq!(bits.try_union_with(&other), mismatch);
    assert_eq!(bits.try_symmetric_difference_with(&other), mismatch);
    assert_eq!(bits.try_difference_with(&other), mismatch);
    let new_mismatch = Err(BitmapError::LengthMismatch { left: 10, right: 12 });
    assert_eq!(bits.try_intersection(&other), new_mismatch);
    assert_eq!(bits.try_union(&other), new_mismatch);
    assert_eq!(bits.try_symmetric_difference(&other), new_mismatch);
    assert_eq!(bits.try_difference(&other), new_mismatch);
    let count_mismatch = Err(BitmapError::LengthMismatch { left: 10, right: 12 });
    assert_eq!(bits.try_and_popcount(&other), count_mismatch);
    assert_eq!(bits.try_or_popcount(&other), count_mismatch);
    assert_eq!(bits.try_xor_popcount(&other), count_mismatch);
    assert_eq!(bits.try_and_not_popcount(&other), count_mismatch);
    assert_eq!(Bitmap::union_of(10, &[&bits, &other]), Err(BitmapError::LengthMismatch { left: 10, right: 12 }));
    assert_eq!(bits.union_many_into(&[&other]), mismatch);
    assert_eq!(bits.try_gather(&[0u8; 9]).err(), Some(BitmapError::LengthMismatch { left: 10, right: 9 }));

    assert_eq!(
        Bitmap::from_words(10, vec![]),
        Err(BitmapError::WrongSize { expected: 1, actual: 0, unit: SizeUnit::Words })
    );
    assert_eq!(
        Bitmap::from_bytes(10, &[0; 3]),
        Err(BitmapError::WrongSize { expected: 2, actual: 3, unit: SizeUnit::Bytes })
    );
    assert_eq!(Bitmap::from_words(10, vec![1 << 12]), Err(BitmapError::BitPastEnd { index: 12, len: 10 }));
    assert_eq!(Bitmap::from_bytes(10, &[0, 1 << 5]), Err(BitmapError::BitPastEnd { index: 13, len: 10 }));
    assert_eq!("0101 ".parse::<Bitmap>(), Err(BitmapError::InvalidChar { position: 4, found: ' ' }));
    assert_eq!("01€1".parse::<Bitmap>(), Err(BitmapError::InvalidChar { position: 2, found: '€' }));

    // None of the failures changed the bitmap.
    assert_eq!(bits, Bitmap::new(10));
}

/// `#[should_panic]` tests for the index panics.
macro_rules! index_panics {
    ($($name:ident: $bits:ident => $call:expr;)*) => {
        $(
            #[test]
            #[should_panic(expected = "index 10 is out of range for a bitmap of 10 bits")]
            fn $name() {
                #[allow(unused_mut)]
                let mut $bits = Bitmap::new(10);
                $call;
            }
        )*
    };
}

index_panics! {
    set_panics_out_of_range: bits => bits.set(10);
    clear_panics_out_of_range: bits => bits.clear(10);
    test_panics_out_of_range: bits => bits.test(10);
    toggle_panics_out_of_range: bits => bits.toggle(10);
    assign_true_panics_out_of_range: bits => bits.assign(10, true);
    assign_false_panics_out_of_range: bits => bits.assign(10, false);
}

#[test]
#[should_panic(expected = "index 18446744073709551615 is out of range for a bitmap of 0 bits")]
fn set_panics_on_the_largest_index() {
    Bitmap::new(0).set(usize::MAX);
}

/// `#[should_panic]` tests for length mismatches: `a` has 10 bits, `b` 12.
macro_rules! mismatch_panics {
    ($($name:ident: $a:ident, $b:ident => $call:expr;)*) => {
        $(
            #[test]
            #[should_panic(expected = "length mismatch: left is 10, right is 12")]
            fn $name() {
                #[allow(unused_mut)]
                let mut $a = Bitmap::new(10);
                let $b = Bitmap::new(12);
                let _ = $call;
            }
        )*
    };
}

mismatch_panics! {
    and_ref_ref: a, b => &a & &b;
    and_owned_ref: a, b => a & &b;
    and_ref_owned: a, b => &a & b;
    and_owned_owned: a, b => a & b;
    and_assign_ref: a, b => a &= &b;
    and_assign_owned: a, b => a &= b;
    intersect_with: a, b => a.intersect_with(&b);

    or_ref_ref: a, b => &a | &b;
    or_owned_ref: a, b => a | &b;
    or_ref_owned: a, b => &a | b;
    or_owned_owned: a, b => a | b;
    or_assign_ref: a, b => a |= &b;
    or_assign_owned: a, b => a |= b;
    union_with: a, b => a.union_with(&b);

    xor_ref_ref: a, b => &a ^ &b;
    xor_owned_ref: a, b => a ^ &b;
    xor_ref_owned: a, b => &a ^ b;
    xor_owned_owned: a, b => a ^ b;
    xor_assign_ref: a, b => a ^= &b;
    xor_assign_owned: a, b => a ^= b;
    symmetric_difference_with: a, b => a.symmetric_difference_with(&b);

    sub_ref_ref: a, b => &a - &b;
    sub_owned_ref: a, b => a - &b;
    sub_ref_owned: a, b => &a - b;
    sub_owned_owned: a, b => a - b;
    sub_assign_ref: a, b => a -= &b;
    sub_assign_owned: a, b => a -= b;
    difference_with: a, b => a.difference_with(&b);

    and_popcount: a, b => a.and_popcount(&b);
    or_popcount: a, b => a.or_popcount(&b);
    xor_popcount: a, b => a.xor_popcount(&b);
    and_not_popcount: a, b => a.and_not_popcount(&b);
    is_subset: a, b => a.is_subset(&b);
    is_disjoint: a, b => a.is_disjoint(&b);
}

#[test]
#[should_panic(expected = "length mismatch: left is 10, right is 11")]
fn gather_panics_on_the_wrong_number_of_items() {
    let _ = Bitmap::new(10).gather(&[0u32; 11]);
}
