//! The bit moves of `bitmap_core::layout` (split a flat chunk-major bitmap
//! into rows and join rows back, deposit a flat bitmap into a grid mask's
//! set positions and extract them) against scalar references written here,
//! bit by bit from their definitions; run by the `prefix_hit` target.
//!
//! Row counts up to 69 with 64 drawn often (the 64 × 64 transpose path),
//! row lengths up to 640 bits biased to word boundaries, a flat bitmap of any
//! length near `rows × row_len` (bits past its end read as 0), outputs
//! fresh or dirty from another shape; and the errors: a row count other than
//! the outputs', a ragged row, a source shorter than the masks' popcount, a
//! row and its mask of different lengths.

use arbitrary::Arbitrary;
use bitmap_core::layout::{
    deposit_rows_into, extract_rows_into, join_rows, join_rows_into, split_rows, split_rows_into,
};
use bitmap_core::{Bitmap, BitmapError};

use crate::fill::{Fill, Length};

/// The most bits per row.
pub const MAX_ROW_LEN: usize = 640;

/// One input of the bit-move checks.
#[derive(Arbitrary, Debug)]
pub struct MovesInput {
    /// 64 if its top bit is set, else modulo 70.
    num_rows: u8,
    row_len: Length,
    flat: Fill,
    /// The flat bitmap has `rows × row_len` bits plus this, minus 8.
    flat_len_delta: u8,
    masks: Fill,
    src: Fill,
    /// The deposit's source is one bit short of the masks' popcount.
    src_short: bool,
    /// One output row too many for split and deposit, one row too few for
    /// extract.
    wrong_count: bool,
    /// Row (modulo the count) made one bit longer for join and extract.
    ragged: Option<u8>,
    /// Outputs start dirty, of another length.
    dirty: bool,
}

fn bits_of(bitmap: &Bitmap) -> Vec<bool> {
    (0..bitmap.len()).map(|i| bitmap.test(i)).collect()
}

#[track_caller]
fn assert_bits(actual: &Bitmap, expected: &[bool], what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: length");
    if let Some(at) = (0..expected.len()).find(|&i| actual.test(i) != expected[i]) {
        panic!("{what}: bit {at} of {} is {}, expected {}", expected.len(), actual.test(at), expected[at]);
    }
}

fn outputs(count: usize, dirty: bool) -> Vec<Bitmap> {
    (0..count).map(|k| if dirty { Bitmap::with_prefix(k * 37 + 3, usize::MAX) } else { Bitmap::new(0) }).collect()
}

/// Runs the checks.
///
/// # Panics
///
/// On any difference from the references.
pub fn check(input: &MovesInput) {
    let num_rows = if input.num_rows & 0x80 != 0 { 64 } else { usize::from(input.num_rows % 70) };
    let row_len = input.row_len.bits(MAX_ROW_LEN);
    let flat_len = (num_rows * row_len + usize::from(input.flat_len_delta)).saturating_sub(8);
    let flat_bits = input.flat.bits(flat_len, None);
    let flat = Bitmap::from_bools(&flat_bits);
    let bit = |i: usize| flat_bits.get(i).copied().unwrap_or(false);

    // Split: row k bit j is flat bit j·n + k.
    let expected_rows: Vec<Vec<bool>> =
        (0..num_rows).map(|k| (0..row_len).map(|j| bit(j * num_rows + k)).collect()).collect();
    let mut rows = outputs(num_rows, input.dirty);
    split_rows_into(&flat, num_rows, row_len, &mut rows).expect("as many rows as asked");
    for (k, (row, expected)) in rows.iter().zip(&expected_rows).enumerate() {
        assert_bits(row, expected, &format!("split_rows_into: row {k} of {num_rows}"));
    }
    assert_eq!(split_rows(&flat, num_rows, row_len), rows, "split_rows against split_rows_into");
    let mut extra = outputs(num_rows + 1, input.dirty);
    assert_eq!(
        split_rows_into(&flat, num_rows, row_len, &mut extra),
        Err(BitmapError::RowCountMismatch { expected: num_rows, actual: num_rows + 1 }),
        "split_rows_into with one row too many"
    );

    // Join: the inverse, over rows of one length (flat bit j·n + k).
    let expected_flat: Vec<bool> = (0..num_rows * row_len).map(|i| expected_rows[i % num_rows][i / num_rows]).collect();
    let mut joined = if input.dirty { Bitmap::with_prefix(11, 11) } else { Bitmap::new(0) };
    join_rows_into(&rows, &mut joined).expect("rows of one length");
    assert_bits(&joined, &expected_flat, "join_rows_into");
    assert_eq!(join_rows(&rows).expect("rows of one length"), joined, "join_rows against join_rows_into");
    if let (Some(at), true) = (input.ragged, rows.len() > 1) {
        let at = usize::from(at) % rows.len();
        let mut ragged = rows.clone();
        ragged[at].push(true);
        // Row 0 sets the length: a longer row 0 makes row 1 the ragged one.
        let expected = if at == 0 {
            BitmapError::RaggedRows { row: 1, len: row_len, expected: row_len + 1 }
        } else {
            BitmapError::RaggedRows { row: at, len: row_len + 1, expected: row_len }
        };
        assert_eq!(join_rows(&ragged), Err(expected), "join_rows of ragged rows");
    }

    // Deposit and extract over a grid of masks (row-major order).
    let mask_cells = input.masks.bits(num_rows * row_len, None);
    let masks: Vec<Bitmap> = mask_cells.chunks(row_len.max(1)).take(num_rows).map(Bitmap::from_bools).collect();
    let masks: Vec<Bitmap> = if row_len == 0 { vec![Bitmap::new(0); num_rows] } else { masks };
    let needed: usize = mask_cells.iter().filter(|&&set| set).count();
    let src_len = if input.src_short { needed.saturating_sub(1) } else { needed + 5 };
    let src_bits = input.src.bits(src_len, None);
    let src = Bitmap::from_bools(&src_bits);
    let mut deposited = outputs(num_rows, input.dirty);
    let result = deposit_rows_into(&src, &masks, &mut deposited);
    if input.src_short && needed > 0 {
        assert_eq!(
            result,
            Err(BitmapError::SourceTooShort { needed, len: src_len }),
            "deposit_rows_into, short source"
        );
    } else {
        assert_eq!(result, Ok(needed), "deposit_rows_into: bits consumed");
        let mut taken = 0;
        for (k, (mask, out)) in masks.iter().zip(&deposited).enumerate() {
            let expected: Vec<bool> = bits_of(mask)
                .into_iter()
                .map(|set| {
                    if set {
                        taken += 1;
                        src_bits[taken - 1]
                    } else {
                        false
                    }
                })
                .collect();
            assert_bits(out, &expected, &format!("deposit_rows_into: row {k}"));
        }
        if num_rows == 1 {
            assert_eq!(src.deposit(&masks[0]).expect("long enough"), deposited[0], "Bitmap::deposit");
        }
    }
    if input.wrong_count {
        let mut extra = outputs(num_rows + 1, false);
        assert_eq!(
            deposit_rows_into(&src, &masks, &mut extra),
            Err(BitmapError::RowCountMismatch { expected: num_rows, actual: num_rows + 1 }),
            "deposit_rows_into with one output too many"
        );
    }

    // Extract the flat split's rows at the masks' set positions.
    let mut extracted = if input.dirty { Bitmap::with_prefix(77, 70) } else { Bitmap::new(0) };
    extract_rows_into(&rows, &masks, &mut extracted).expect("rows and masks of one length");
    let expected: Vec<bool> = expected_rows
        .iter()
        .zip(&masks)
        .flat_map(|(row, mask)| row.iter().zip(bits_of(mask)).filter(|&(_, set)| set).map(|(&bit, _)| bit))
        .collect();
    assert_bits(&extracted, &expected, "extract_rows_into");
    if num_rows == 1 {
        assert_eq!(rows[0].extract(&masks[0]).expect("one length"), extracted, "Bitmap::extract");
    }
    // Deposit then extract at the same masks gives the source's prefix back.
    if !input.src_short || needed == 0 {
        let mut back = Bitmap::new(0);
        extract_rows_into(&deposited, &masks, &mut back).expect("same lengths");
        assert_bits(&back, &src_bits[..needed], "extract of a deposit");
    }
    if input.wrong_count && !rows.is_empty() {
        assert_eq!(
            extract_rows_into(&rows[1..], &masks, &mut extracted),
            Err(BitmapError::RowCountMismatch { expected: num_rows, actual: num_rows - 1 }),
            "extract_rows_into with one row too few"
        );
    }
    if let (Some(at), false) = (input.ragged, rows.is_empty()) {
        let at = usize::from(at) % rows.len();
        let mut longer = rows.clone();
        longer[at].push(false);
        assert_eq!(
            extract_rows_into(&longer, &masks, &mut extracted),
            Err(BitmapError::LengthMismatch { left: row_len + 1, right: row_len }),
            "extract_rows_into with a row longer than its mask"
        );
    }
}
