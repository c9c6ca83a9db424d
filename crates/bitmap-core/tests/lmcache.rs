//! The cases of LMCache's own bitmap tests, which this bitmap must pass the
//! same way: byte layout, clamped ranges, leading counts and the prefix
//! constructor.

use bitmap_core::Bitmap;

#[test]
fn new_bitmaps_are_clear_and_every_bit_sets_and_tests() {
    for size in [1, 7, 8, 9, 10, 15, 16, 17, 24, 25] {
        let mut bitmap = Bitmap::new(size);
        assert_eq!(bitmap.len(), size);
        assert_eq!(bitmap.popcount(), 0, "size {size}");
        assert_eq!(bitmap.as_bytes().len(), size.div_ceil(8), "size {size}");
        assert!(bitmap.as_bytes().iter().all(|&byte| byte == 0));
        for i in 0..size {
            assert!(!bitmap.test(i), "size {size}, bit {i}");
        }

        for i in 0..size {
            bitmap.set(i);
            assert!(bitmap.test(i), "size {size}, bit {i}");
            assert_eq!(bitmap.popcount(), i + 1);
            // Bit i lives in byte i / 8 at position i % 8.
            let byte = bitmap.as_bytes()[i / 8];
            assert_eq!(byte >> (i % 8) & 1, 1, "size {size}, bit {i}");
        }
        assert_eq!(bitmap.popcount(), size);

        // One bit at a time: exactly one byte, exactly one bit in it.
        for i in 0..size {
            let single = Bitmap::from_indices(size, [i]).unwrap();
            let mut expected = vec![0u8; size.div_ceil(8)];
            expected[i / 8] = 1 << (i % 8);
            assert_eq!(single.as_bytes(), expected, "size {size}, bit {i}");
        }
    }
}

#[test]
fn set_range_is_half_open_and_clamped() {
    let cases: [(usize, usize, usize, &[usize]); 10] = [
        (16, 3, 3, &[]),
        (16, 0, 0, &[]),
        (16, 2, 5, &[2, 3, 4]),
        (16, 0, 8, &[0, 1, 2, 3, 4, 5, 6, 7]),
        (16, 0, 16, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]),
        (24, 3, 20, &[3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]),
        (24, 8, 16, &[8, 9, 10, 11, 12, 13, 14, 15]),
        (10, 5, 100, &[5, 6, 7, 8, 9]),
        (10, 9, 10, &[9]),
        (10, 100, 200, &[]),
    ];
    for (len, start, end, expected) in cases {
        let mut bitmap = Bitmap::new(len);
        bitmap.set_range(start..end);
        assert_eq!(bitmap.to_indices(), expected, "({len}, {start}, {end})");
        assert_eq!(bitmap.popcount(), expected.len());
        assert_eq!(bitmap.as_bytes().len(), len.div_ceil(8));
    }
}

#[test]
fn leading_counts() {
    let mut bitmap = Bitmap::new(9);
    bitmap.set(8);
    assert_eq!(bitmap.count_leading_zeros(), 8);
    assert_eq!(bitmap.count_leading_ones(), 0);

    let mut bitmap = Bitmap::new(9);
    bitmap.set_range(0..3);
    assert_eq!(bitmap.count_leading_ones(), 3);
    assert_eq!(bitmap.count_leading_zeros(), 0);

    let bitmap = Bitmap::new(9);
    assert_eq!(bitmap.count_leading_zeros(), 9);
    assert_eq!(bitmap.count_leading_ones(), 0);
}

#[test]
fn prefix_constructor() {
    assert_eq!(Bitmap::with_prefix(5, 100).popcount(), 5);
    assert_eq!(Bitmap::with_prefix(5, 100).to_string(), "11111");
    assert_eq!(Bitmap::with_prefix(0, 0).popcount(), 0);
    assert_eq!(Bitmap::with_prefix(0, 0).len(), 0);
    assert_eq!(Bitmap::with_prefix(10, 3).to_string(), "1110000000");
}

#[test]
fn repr_is_bit_zero_first() {
    let mut bitmap = Bitmap::new(10);
    bitmap.set(0);
    bitmap.set(9);
    assert_eq!(bitmap.to_string(), "1000000001");
    assert_eq!(bitmap.as_bytes(), [0b0000_0001, 0b0000_0010]);
}
