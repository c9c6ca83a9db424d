//! `bitmap_core::layout` against bit-by-bit definitions: split and join
//! (through the 64-row transpose and the strided gather and scatter),
//! deposit and extract, their errors, and the round trips.

use bitmap_core::layout::{
    deposit_rows_into, extract_rows_into, join_rows, join_rows_into, split_rows, split_rows_into,
};
use bitmap_core::{Bitmap, BitmapError};
use proptest::prelude::*;

fn bits(len: usize, density: f64, seed: u64) -> Bitmap {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            ((state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64) < density
        })
        .collect()
}

fn row_count() -> impl Strategy<Value = usize> {
    prop_oneof![1..=10usize, Just(16), Just(63), Just(64), Just(65), Just(100)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]

    #[test]
    fn split_and_join_match_the_definition(
        num_rows in row_count(),
        row_len in 0..300usize,
        extra in -70..70isize,
        density in 0.0..=1.0f64,
        seed in any::<u64>(),
    ) {
        let flat_len = (num_rows * row_len).saturating_add_signed(extra);
        let flat = bits(flat_len, density, seed);
        let rows = split_rows(&flat, num_rows, row_len);
        prop_assert_eq!(rows.len(), num_rows);
        for (k, row) in rows.iter().enumerate() {
            let expected: Bitmap = (0..row_len).map(|j| flat.get(j * num_rows + k).unwrap_or(false)).collect();
            prop_assert_eq!(row, &expected, "row {}", k);
        }
        let joined = join_rows(&rows).unwrap();
        let expected: Bitmap = (0..num_rows * row_len).map(|i| flat.get(i).unwrap_or(false)).collect();
        prop_assert_eq!(&joined, &expected);
        // Into reused buffers of other shapes.
        let mut reused = vec![Bitmap::with_prefix(700, 650); num_rows];
        split_rows_into(&flat, num_rows, row_len, &mut reused).unwrap();
        prop_assert_eq!(&reused, &rows);
        let mut flat_again = Bitmap::with_prefix(9000, 9000);
        join_rows_into(&reused, &mut flat_again).unwrap();
        prop_assert_eq!(flat_again, joined);
    }

    #[test]
    fn deposit_and_extract_match_the_definition(
        lens in prop::collection::vec(0..300usize, 0..6),
        density in 0.0..=1.0f64,
        seed in any::<u64>(),
        spare in 0..100usize,
    ) {
        let masks: Vec<Bitmap> = lens.iter().enumerate().map(|(k, &len)| bits(len, density, seed ^ k as u64)).collect();
        let rows: Vec<Bitmap> = lens.iter().enumerate().map(|(k, &len)| bits(len, 0.5, !seed ^ k as u64)).collect();
        let total: usize = masks.iter().map(Bitmap::popcount).sum();
        let src = bits(total + spare, 0.5, seed.rotate_left(7));
        let mut out = vec![Bitmap::with_prefix(64, 3); masks.len()];
        prop_assert_eq!(deposit_rows_into(&src, &masks, &mut out).unwrap(), total);
        let mut i = 0;
        for (mask, row) in masks.iter().zip(&out) {
            prop_assert_eq!(row.len(), mask.len());
            for p in 0..mask.len() {
                let expected = mask.test(p) && { i += 1; src.test(i - 1) };
                prop_assert_eq!(row.test(p), expected);
            }
        }
        let mut flat = Bitmap::with_prefix(500, 500);
        extract_rows_into(&rows, &masks, &mut flat).unwrap();
        let expected: Bitmap = rows.iter().zip(&masks).flat_map(|(r, m)| m.ones().map(|p| r.test(p)).collect::<Vec<_>>()).collect();
        prop_assert_eq!(&flat, &expected);
        // Round trip: extracting what was deposited gives the source's prefix back.
        extract_rows_into(&out, &masks, &mut flat).unwrap();
        let prefix: Bitmap = (0..total).map(|i| src.test(i)).collect();
        prop_assert_eq!(flat, prefix);
    }
}

#[test]
fn single_bitmap_deposit_and_extract() {
    let mask: Bitmap = "1011001".parse().unwrap();
    let src: Bitmap = "0110".parse().unwrap();
    let deposited = src.deposit(&mask).unwrap();
    assert_eq!(deposited.to_string(), "0011000");
    assert_eq!(deposited.extract(&mask).unwrap(), src);
    assert_eq!(Bitmap::new(3).deposit(&mask), Err(BitmapError::SourceTooShort { needed: 4, len: 3 }));
    assert_eq!(src.extract(&mask), Err(BitmapError::LengthMismatch { left: 4, right: 7 }));
}

#[test]
fn errors() {
    let flat = Bitmap::with_prefix(12, 12);
    let mut rows = vec![Bitmap::new(0); 2];
    assert_eq!(split_rows_into(&flat, 3, 4, &mut rows), Err(BitmapError::RowCountMismatch { expected: 3, actual: 2 }));
    let ragged = [Bitmap::new(4), Bitmap::new(4), Bitmap::new(5)];
    assert_eq!(join_rows(&ragged), Err(BitmapError::RaggedRows { row: 2, len: 5, expected: 4 }));
    assert_eq!(join_rows::<Bitmap>(&[]), Ok(Bitmap::new(0)));
    let masks = [Bitmap::new(4), Bitmap::new(4)];
    assert_eq!(
        deposit_rows_into(&flat, &masks, &mut rows[..1]),
        Err(BitmapError::RowCountMismatch { expected: 2, actual: 1 })
    );
    let mut out = Bitmap::new(0);
    assert_eq!(
        extract_rows_into(&ragged[..2], &[Bitmap::new(4), Bitmap::new(3)], &mut out),
        Err(BitmapError::LengthMismatch { left: 4, right: 3 })
    );
    assert_eq!(
        extract_rows_into(&ragged, &masks[..], &mut out),
        Err(BitmapError::RowCountMismatch { expected: 2, actual: 3 })
    );
    assert_eq!(
        BitmapError::RaggedRows { row: 1, len: 3, expected: 4 }.to_string(),
        "ragged rows: row 1 has 3 bits, but row 0 has 4"
    );
}
