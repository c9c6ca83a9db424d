//! The bit moves between a flat, interleaved bitmap and its rows: split and
//! join (a transposition), and deposit and extract (PDEP and PEXT over
//! rows), on the dispatched [`kernel`]s.
//!
//! An LMCache-style controller keeps a request's keys in two forms: flat,
//! chunk-major (bit `j·n + k` is chunk `j` of row `k`, the order its
//! storage adapters answer in), and as `n` rows of one bit per chunk (one
//! per object group and rank, the form its plans are made in). These are
//! the moves between them, word by word or in vector registers: a 64-row
//! layout (8 groups × 8 ranks) is transposed 64×64 bits at a time, and on
//! CPUs with AVX-512 VBMI and GFNI (detected at run time) 64 and 8 rows go
//! through byte permutes and GFNI's 8×8 bit transposes
//! ([`kernel::split_rows`], [`kernel::join_rows`]); other row counts are
//! gathered and scattered with `pext`/`pdep` (BMI2, where the CPU runs it
//! fast) or their bit-trick equivalents. Deposit and extract take runs of
//! empty and whole mask words as fills and shifted copies, other words one
//! `pdep`/`pext` each. Bits past an input's end read as 0.
//!
//! ```
//! use bitmap_core::Bitmap;
//! use bitmap_core::layout::{join_rows, split_rows};
//!
//! // 3 chunks × 2 rows, chunk-major: bit 2j + k.
//! let flat: Bitmap = "110110".parse()?;
//! let rows = split_rows(&flat, 2, 3);
//! assert_eq!([rows[0].to_string(), rows[1].to_string()], ["101", "110"]);
//! assert_eq!(join_rows(&rows)?, flat);
//!
//! // Deposit 3 bits into the set positions of a mask, and extract them back.
//! let mask: Bitmap = "011010".parse()?;
//! let bits: Bitmap = "101".parse()?;
//! let deposited = bits.deposit(&mask)?;
//! assert_eq!(deposited.to_string(), "010010");
//! assert_eq!(deposited.extract(&mask)?, bits);
//! # Ok::<(), bitmap_core::BitmapError>(())
//! ```

use core::borrow::Borrow;

use crate::bitmap::Bitmap;
use crate::error::BitmapError;
use crate::kernel;

/// The most rows [`split_rows_into`] and [`join_rows_into`] hand to the
/// kernels' `split_rows` and `join_rows` at once (their slices gathered in
/// a stack array); more rows go one strided gather or scatter at a time.
const MAX_KERNEL_ROWS: usize = 64;

/// Splits `flat` into its `num_rows` interleaved rows: row `k` gets bit
/// `j` = `flat` bit `j·num_rows + k`, for `j < row_len`. Each row is made
/// `row_len` bits long, its buffer reused: no allocation once the rows have
/// held that many bits.
///
/// ```
/// use bitmap_core::Bitmap;
/// use bitmap_core::layout::split_rows_into;
///
/// let flat: Bitmap = "100111".parse()?; // 2 chunks × 3 rows
/// let mut rows = vec![Bitmap::new(0); 3];
/// split_rows_into(&flat, 3, 2, &mut rows)?;
/// assert_eq!(rows.iter().map(ToString::to_string).collect::<Vec<_>>(), ["11", "01", "01"]);
/// # Ok::<(), bitmap_core::BitmapError>(())
/// ```
///
/// # Errors
///
/// [`BitmapError::RowCountMismatch`] if `rows.len() != num_rows`.
pub fn split_rows_into(flat: &Bitmap, num_rows: usize, row_len: usize, rows: &mut [Bitmap]) -> Result<(), BitmapError> {
    if rows.len() != num_rows {
        return Err(BitmapError::RowCountMismatch { expected: num_rows, actual: rows.len() });
    }
    // The split writes every word of every row.
    for row in rows.iter_mut() {
        row.reset_for_overwrite(row_len);
    }
    split_words(flat.as_words(), num_rows, rows.iter_mut().map(|row| &mut *row.words));
    for row in rows.iter_mut() {
        row.clear_tail();
    }
    Ok(())
}

/// [`split_rows_into`] into new rows.
///
/// ```
/// use bitmap_core::Bitmap;
/// use bitmap_core::layout::split_rows;
///
/// let rows = split_rows(&Bitmap::with_prefix(8, 5), 4, 2);
/// assert_eq!(rows.iter().map(Bitmap::popcount).collect::<Vec<_>>(), [2, 1, 1, 1]);
/// ```
pub fn split_rows(flat: &Bitmap, num_rows: usize, row_len: usize) -> Vec<Bitmap> {
    let mut rows = vec![Bitmap::new(0); num_rows];
    // The row count is right by construction.
    let _ = split_rows_into(flat, num_rows, row_len, &mut rows);
    rows
}

/// Checks that `rows` share one length and returns it (0 for no rows).
fn common_len<B: Borrow<Bitmap>>(rows: &[B]) -> Result<usize, BitmapError> {
    let expected = rows.first().map_or(0, |r| r.borrow().len());
    match rows.iter().map(|r| r.borrow().len()).enumerate().find(|&(_, len)| len != expected) {
        Some((row, len)) => Err(BitmapError::RaggedRows { row, len, expected }),
        None => Ok(expected),
    }
}

/// Joins rows into the flat interleaved form, the inverse of
/// [`split_rows_into`]: `flat` bit `j·rows.len() + k` = `rows[k]` bit `j`.
/// `flat` is made `rows.len() × row length` bits long, its buffer reused.
///
/// ```
/// use bitmap_core::Bitmap;
/// use bitmap_core::layout::join_rows_into;
///
/// let rows: [Bitmap; 2] = ["110".parse()?, "011".parse()?];
/// let mut flat = Bitmap::new(0);
/// join_rows_into(&rows, &mut flat)?;
/// assert_eq!(flat.to_string(), "101101");
/// # Ok::<(), bitmap_core::BitmapError>(())
/// ```
///
/// # Errors
///
/// [`BitmapError::RaggedRows`] if the rows differ in length;
/// [`BitmapError::LengthMismatch`] if the joined length does not fit in a
/// `usize`.
pub fn join_rows_into<B: Borrow<Bitmap>>(rows: &[B], flat: &mut Bitmap) -> Result<(), BitmapError> {
    let row_len = common_len(rows)?;
    let n = rows.len();
    let len = n.checked_mul(row_len).ok_or(BitmapError::LengthMismatch { left: n, right: row_len })?;
    // The join writes every word.
    flat.reset_for_overwrite(len);
    join_words(rows.iter().map(|row| row.borrow().as_words()), n, &mut flat.words);
    flat.clear_tail();
    Ok(())
}

/// [`join_rows_into`] into a new bitmap.
///
/// ```
/// use bitmap_core::Bitmap;
/// use bitmap_core::layout::join_rows;
///
/// assert_eq!(join_rows(&[Bitmap::with_prefix(2, 2), Bitmap::new(2)])?.to_string(), "1010");
/// # Ok::<(), bitmap_core::BitmapError>(())
/// ```
///
/// # Errors
///
/// As [`join_rows_into`].
pub fn join_rows<B: Borrow<Bitmap>>(rows: &[B]) -> Result<Bitmap, BitmapError> {
    let mut flat = Bitmap::new(0);
    join_rows_into(rows, &mut flat)?;
    Ok(flat)
}

/// Splits `flat` into `num_rows` rows of `row_len` bits held in one word
/// buffer, as [`split_rows_into`] does into separate bitmaps: row `k` is
/// `out[k * stride..(k + 1) * stride]` with `stride = row_len.div_ceil(64)`,
/// and its bits past `row_len` are cleared. This is the layout of a grid
/// kept in one allocation (prefetch-policy's `Grid`): one buffer instead of
/// one per row.
///
/// ```
/// use bitmap_core::Bitmap;
/// use bitmap_core::layout::{join_rows_strided, split_rows_strided};
///
/// let flat: Bitmap = "100111".parse()?; // 2 chunks × 3 rows
/// let mut words = [0u64; 3];
/// split_rows_strided(&flat, 3, 2, &mut words)?;
/// assert_eq!(words, [0b11, 0b10, 0b10]);
/// let mut back = Bitmap::new(0);
/// join_rows_strided(&words, 3, 2, &mut back)?;
/// assert_eq!(back, flat);
/// # Ok::<(), bitmap_core::BitmapError>(())
/// ```
///
/// # Errors
///
/// [`BitmapError::LengthMismatch`] if `out` does not have
/// `num_rows * stride` words (`left` is `out.len()`).
pub fn split_rows_strided(flat: &Bitmap, num_rows: usize, row_len: usize, out: &mut [u64]) -> Result<(), BitmapError> {
    let stride = row_len.div_ceil(64);
    check_strided(out.len(), num_rows, stride)?;
    if stride == 0 {
        return Ok(());
    }
    split_words(flat.as_words(), num_rows, out.chunks_exact_mut(stride));
    if !row_len.is_multiple_of(64) {
        let mask = (1u64 << (row_len % 64)) - 1;
        for row in out.chunks_exact_mut(stride) {
            row[stride - 1] &= mask;
        }
    }
    Ok(())
}

/// Joins `num_rows` rows of `row_len` bits held in one word buffer (row `k`
/// at `words[k * stride..]`, `stride = row_len.div_ceil(64)`, bits past
/// `row_len` clear) into the flat interleaved form, as [`join_rows_into`]
/// does for separate bitmaps. `flat` is made `num_rows × row_len` bits long,
/// its buffer reused.
///
/// # Errors
///
/// [`BitmapError::LengthMismatch`] if `words` does not have
/// `num_rows * stride` words, or the joined length does not fit in a `usize`.
pub fn join_rows_strided(words: &[u64], num_rows: usize, row_len: usize, flat: &mut Bitmap) -> Result<(), BitmapError> {
    let stride = row_len.div_ceil(64);
    check_strided(words.len(), num_rows, stride)?;
    let len = num_rows.checked_mul(row_len).ok_or(BitmapError::LengthMismatch { left: num_rows, right: row_len })?;
    flat.reset_for_overwrite(len);
    if stride > 0 {
        join_words(words.chunks_exact(stride), num_rows, &mut flat.words);
    }
    flat.clear_tail();
    Ok(())
}

fn check_strided(words: usize, num_rows: usize, stride: usize) -> Result<(), BitmapError> {
    match num_rows.checked_mul(stride) {
        Some(expected) if expected == words => Ok(()),
        expected => Err(BitmapError::LengthMismatch { left: words, right: expected.unwrap_or(usize::MAX) }),
    }
}

/// The split behind [`split_rows_into`] and [`split_rows_strided`]: up to
/// [`MAX_KERNEL_ROWS`] rows go to the kernel's transposition at once (their
/// slices gathered in a stack array), more one strided gather each. Every
/// word of every row is written.
fn split_words<'r>(src: &[u64], num_rows: usize, rows: impl Iterator<Item = &'r mut [u64]>) {
    if num_rows <= MAX_KERNEL_ROWS {
        let mut words: [&mut [u64]; MAX_KERNEL_ROWS] = core::array::from_fn(|_| <&mut [u64]>::default());
        for (slot, row) in words.iter_mut().zip(rows) {
            *slot = row;
        }
        kernel::split_rows(src, &mut words[..num_rows]);
    } else {
        for (k, row) in rows.enumerate() {
            kernel::gather_and(src, num_rows, k, 1, row);
        }
    }
}

/// The join behind [`join_rows_into`] and [`join_rows_strided`], into
/// `dst` (every word written).
fn join_words<'r>(rows: impl Iterator<Item = &'r [u64]>, num_rows: usize, dst: &mut [u64]) {
    if num_rows <= MAX_KERNEL_ROWS {
        let mut words: [&[u64]; MAX_KERNEL_ROWS] = [&[]; MAX_KERNEL_ROWS];
        for (slot, row) in words.iter_mut().zip(rows) {
            *slot = row;
        }
        kernel::join_rows(&words[..num_rows], dst);
    } else {
        dst.fill(0);
        for (k, row) in rows.enumerate() {
            kernel::scatter_or(row, num_rows, k, dst);
        }
    }
}

/// PDEP over rows taken in row-major order: the `i`-th set position of the
/// masks (row 0's first, then row 1's, …) gets `src` bit `i`; every other
/// bit is 0. `out_rows[k]` is made `masks[k].len()` bits long, its buffer
/// reused. Returns the number of `src` bits used (the masks' total
/// popcount); `src`'s further bits are ignored.
///
/// ```
/// use bitmap_core::Bitmap;
/// use bitmap_core::layout::deposit_rows_into;
///
/// // A load's result over the planned cells, back into the plan's grid.
/// let planned: [Bitmap; 2] = ["0110".parse()?, "1001".parse()?];
/// let loaded: Bitmap = "1101".parse()?;
/// let mut rows = vec![Bitmap::new(0); 2];
/// assert_eq!(deposit_rows_into(&loaded, &planned, &mut rows)?, 4);
/// assert_eq!([rows[0].to_string(), rows[1].to_string()], ["0110", "0001"]);
/// # Ok::<(), bitmap_core::BitmapError>(())
/// ```
///
/// # Errors
///
/// [`BitmapError::RowCountMismatch`] if `out_rows.len() != masks.len()`,
/// [`BitmapError::SourceTooShort`] if `src` has fewer bits than the masks
/// have set positions.
pub fn deposit_rows_into<B: Borrow<Bitmap>>(
    src: &Bitmap,
    masks: &[B],
    out_rows: &mut [Bitmap],
) -> Result<usize, BitmapError> {
    if out_rows.len() != masks.len() {
        return Err(BitmapError::RowCountMismatch { expected: masks.len(), actual: out_rows.len() });
    }
    // A source as long as the masks together always suffices; only a
    // shorter one needs their popcount (a pass over every mask word).
    let positions = masks.iter().try_fold(0usize, |sum, m| sum.checked_add(m.borrow().len()));
    if positions.is_none_or(|positions| src.len() < positions) {
        let needed: usize = masks.iter().map(|m| m.borrow().popcount()).sum();
        if src.len() < needed {
            return Err(BitmapError::SourceTooShort { needed, len: src.len() });
        }
    }
    let mut taken = 0;
    for (mask, out) in masks.iter().zip(out_rows.iter_mut()) {
        let mask = mask.borrow();
        // `deposit` writes every word.
        out.reset_for_overwrite(mask.len());
        taken += kernel::deposit(src.as_words(), taken, mask.as_words(), &mut out.words);
    }
    Ok(taken)
}

/// PEXT over rows: `out` (made the masks' total popcount long, its buffer
/// reused) gets, as bit `i`, the bit of `rows` at the `i`-th set position of
/// `masks` in row-major order. The inverse of [`deposit_rows_into`] on the
/// masked bits.
///
/// ```
/// use bitmap_core::Bitmap;
/// use bitmap_core::layout::extract_rows_into;
///
/// let rows: [Bitmap; 2] = ["1110".parse()?, "0101".parse()?];
/// let masks: [Bitmap; 2] = ["0110".parse()?, "1001".parse()?];
/// let mut flat = Bitmap::new(0);
/// extract_rows_into(&rows, &masks, &mut flat)?;
/// assert_eq!(flat.to_string(), "1101");
/// # Ok::<(), bitmap_core::BitmapError>(())
/// ```
///
/// # Errors
///
/// [`BitmapError::RowCountMismatch`] if `rows` and `masks` differ in count,
/// [`BitmapError::LengthMismatch`] if a row and its mask differ in length.
pub fn extract_rows_into<B: Borrow<Bitmap>>(rows: &[B], masks: &[B], out: &mut Bitmap) -> Result<(), BitmapError> {
    if rows.len() != masks.len() {
        return Err(BitmapError::RowCountMismatch { expected: masks.len(), actual: rows.len() });
    }
    for (row, mask) in rows.iter().zip(masks) {
        let (row, mask) = (row.borrow(), mask.borrow());
        if row.len() != mask.len() {
            return Err(BitmapError::LengthMismatch { left: row.len(), right: mask.len() });
        }
    }
    let total: usize = masks.iter().map(|m| m.borrow().popcount()).sum();
    // The extracts write every word from bit 0 up, in order, and the tail
    // is cleared after.
    out.reset_for_overwrite(total);
    let mut written = 0;
    for (row, mask) in rows.iter().zip(masks) {
        written += kernel::extract(row.borrow().as_words(), mask.borrow().as_words(), &mut out.words, written);
    }
    out.clear_tail();
    Ok(())
}

/// # Deposit and extract
impl Bitmap {
    /// PDEP: a bitmap of `mask.len()` bits whose `i`-th set position of
    /// `mask` holds bit `i` of `self`, all else 0.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    ///
    /// let bits: Bitmap = "01".parse()?;
    /// assert_eq!(bits.deposit(&"10100".parse()?)?.to_string(), "00100");
    /// # Ok::<(), bitmap_core::BitmapError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`BitmapError::SourceTooShort`] if `self` has fewer bits than `mask`
    /// has set.
    pub fn deposit(&self, mask: &Bitmap) -> Result<Bitmap, BitmapError> {
        let mut out = [Bitmap::new(0)];
        deposit_rows_into(self, &[mask], &mut out)?;
        let [out] = out;
        Ok(out)
    }

    /// PEXT: the bits of `self` at the set positions of `mask`, in order,
    /// as a bitmap of `mask.popcount()` bits.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    ///
    /// let bits: Bitmap = "11010".parse()?;
    /// assert_eq!(bits.extract(&"01110".parse()?)?.to_string(), "101");
    /// # Ok::<(), bitmap_core::BitmapError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`BitmapError::LengthMismatch`] if `mask` is not as long as `self`.
    pub fn extract(&self, mask: &Bitmap) -> Result<Bitmap, BitmapError> {
        let mut out = Bitmap::new(0);
        extract_rows_into(&[self], &[mask], &mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The strided forms agree with the row-bitmap forms, over row counts
    /// of the kernel's transposition and of the strided gather (> 64), and
    /// lengths with and without a partial last word.
    #[test]
    fn strided_split_and_join_agree_with_the_row_bitmaps() {
        // Under Miri each path of `split_words`/`join_words` (3 rows: the
        // kernel's row split and join; 65: a gather or scatter per row)
        // with a partial last word, and a whole last word once, rather than
        // their product. The product's fourth case, 65 rows of 64 bits
        // (bitmaps of 4,160 bits built and compared bit by bit), made the
        // test take 192 s of the 239 s that the portable job's tests outside
        // `kernel::` took under Miri.
        let cases: Vec<(usize, usize)> = if cfg!(miri) {
            vec![(3, 5), (65, 5), (3, 64)]
        } else {
            let (counts, lens) = ([1, 2, 3, 8, 63, 64, 65, 70], [0, 1, 5, 63, 64, 65, 130]);
            counts.iter().flat_map(|&rows| lens.iter().map(move |&len| (rows, len))).collect()
        };
        for (rows, len) in cases {
            let flat: Bitmap = (0..rows * len).map(|i| (i * 7 + i / 5) % 3 == 0).collect();
            let stride = len.div_ceil(64);
            let mut words = vec![!0u64; rows * stride];
            split_rows_strided(&flat, rows, len, &mut words).unwrap();
            let expected = split_rows(&flat, rows, len);
            for (k, row) in expected.iter().enumerate() {
                assert_eq!(&words[k * stride..(k + 1) * stride], row.as_words(), "{rows} x {len}, row {k}");
            }
            let mut joined = Bitmap::new(3);
            join_rows_strided(&words, rows, len, &mut joined).unwrap();
            assert_eq!(joined, flat, "{rows} x {len}");
            assert!(split_rows_strided(&flat, rows, len, &mut vec![0; rows * stride + 1]).is_err());
            assert!(join_rows_strided(&words, rows + 1, len, &mut joined).is_err() || stride == 0);
        }
    }
}
