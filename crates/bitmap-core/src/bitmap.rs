//! The [`Bitmap`] type: construction, size, single bits, ranges and
//! aggregates. Bitwise operations are in `ops.rs`, iteration in `iter.rs`,
//! text in `fmt.rs`, raw words and bytes in `serialization.rs`.

use core::ops::{Bound, RangeBounds};

use crate::error::{BitmapError, index_out_of_range};
use crate::kernel::{self, count};
use crate::storage::Words;

/// Bits per storage word.
pub(crate) const WORD_BITS: usize = u64::BITS as usize;

/// A dense bitmap of fixed length, stored as `u64` words.
///
/// Bit `i` lives in word `i / 64` at bit position `i % 64`, so the words read
/// as little-endian bytes give LMCache's layout: bit `i` in byte `i / 8` at
/// position `i % 8` (see [`as_bytes`](Bitmap::as_bytes)).
///
/// **Invariant:** every bit at or past [`len`](Bitmap::len) is clear, after
/// every operation. That is what lets counts, comparisons and hashing work
/// on whole words; operations that could set such bits (`!`,
/// [`set_all`](Bitmap::set_all), writes through
/// [`words_mut`](Bitmap::words_mut)) clear them again, and raw input
/// ([`from_words`](Bitmap::from_words), [`from_bytes`](Bitmap::from_bytes))
/// that has them is rejected.
///
/// The length is fixed at construction; only [`push`](Bitmap::push),
/// [`Extend`] and [`reset`](Bitmap::reset) change it. Operations on two
/// bitmaps require equal lengths: the operators and named methods panic on a
/// mismatch (a caller bug, as with `copy_from_slice`), the `try_` forms
/// return [`BitmapError::LengthMismatch`].
///
/// Bulk word work (counts, bitwise operations, unions, searches) runs on the
/// crate's dispatched SIMD [`kernel`]s.
///
/// ```
/// use bitmap_core::Bitmap;
///
/// let mut hits = Bitmap::new(10);
/// hits.set(1);
/// hits.set_range(4..7);
/// assert_eq!(hits.to_string(), "0100111000");
/// assert_eq!(hits.popcount(), 4);
/// assert_eq!(hits.to_indices(), [1, 4, 5, 6]);
/// ```
#[derive(PartialEq, Eq, Hash)]
pub struct Bitmap {
    /// Length in bits.
    pub(crate) len: usize,
    /// Exactly `len.div_ceil(64)` words, starting on a cache line (see
    /// `storage.rs` for why); bits at or past `len` are clear. Equality and
    /// hashing of the derived impls rely on both facts.
    pub(crate) words: Words,
}

/// The number of words a bitmap of `len` bits uses.
#[inline]
pub(crate) const fn words_for(len: usize) -> usize {
    len.div_ceil(WORD_BITS)
}

/// The mask of the bits of the last word that are below `len`, or `None` if
/// `len` is a multiple of 64 (the last word, if any, is all in use).
#[inline]
pub(crate) const fn tail_mask(len: usize) -> Option<u64> {
    match len % WORD_BITS {
        0 => None,
        used => Some((1 << used) - 1),
    }
}

/// The word range `first..=last` covered by the non-empty bit range
/// `start..end`, with the masks of the bits to touch in the first and in the
/// last word (the same word if `first == last`: AND the two masks).
#[inline]
fn edges(start: usize, end: usize) -> (usize, u64, usize, u64) {
    debug_assert!(start < end);
    let first = start / WORD_BITS;
    let last = (end - 1) / WORD_BITS;
    let first_mask = u64::MAX << (start % WORD_BITS);
    let last_mask = u64::MAX >> (WORD_BITS - 1 - (end - 1) % WORD_BITS);
    (first, first_mask, last, last_mask)
}

/// # Construction
impl Bitmap {
    /// A bitmap of `len` bits, all clear.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let bits = Bitmap::new(100);
    /// assert_eq!(bits.len(), 100);
    /// assert!(bits.none());
    /// ```
    pub fn new(len: usize) -> Bitmap {
        Bitmap { len, words: Words::zeroed(words_for(len)) }
    }

    /// [`Bitmap::new`] that reports an allocation failure instead of
    /// aborting the process: for lengths that come from untrusted input,
    /// such as a Python caller's `Bitmap(10**15)`.
    ///
    /// ```
    /// use bitmap_core::{Bitmap, BitmapError};
    /// assert_eq!(Bitmap::try_new(100)?, Bitmap::new(100));
    /// assert_eq!(Bitmap::try_new(usize::MAX), Err(BitmapError::AllocationFailed { len: usize::MAX }));
    /// # Ok::<(), BitmapError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`BitmapError::AllocationFailed`] if the words cannot be allocated.
    pub fn try_new(len: usize) -> Result<Bitmap, BitmapError> {
        let words = Words::try_zeroed(words_for(len)).ok_or(BitmapError::AllocationFailed { len })?;
        Ok(Bitmap { len, words })
    }

    /// The empty bitmap (length 0), in a `const` context such as a
    /// `static`; no allocation.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// static NOTHING: Bitmap = Bitmap::empty();
    /// assert!(NOTHING.is_empty());
    /// assert_eq!(NOTHING, Bitmap::default());
    /// ```
    pub const fn empty() -> Bitmap {
        Bitmap { len: 0, words: Words::new() }
    }

    /// A bitmap of `len` bits whose first `n` bits are set; `n` is clamped to
    /// `len`.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// assert_eq!(Bitmap::with_prefix(5, 3).to_string(), "11100");
    /// assert_eq!(Bitmap::with_prefix(5, 100).popcount(), 5);
    /// ```
    pub fn with_prefix(len: usize, n: usize) -> Bitmap {
        let mut bitmap = Bitmap::new(len);
        bitmap.set_range(..n);
        bitmap
    }

    /// A bitmap of `len` bits with the given bits set (in any order, repeats
    /// allowed).
    ///
    /// # Errors
    ///
    /// [`BitmapError::IndexOutOfRange`] for the first index `>= len`.
    ///
    /// ```
    /// use bitmap_core::{Bitmap, BitmapError};
    /// let bits = Bitmap::from_indices(6, [4, 1, 4]).unwrap();
    /// assert_eq!(bits.to_string(), "010010");
    /// assert_eq!(Bitmap::from_indices(6, [6]), Err(BitmapError::IndexOutOfRange { index: 6, len: 6 }));
    /// ```
    pub fn from_indices(len: usize, indices: impl IntoIterator<Item = usize>) -> Result<Bitmap, BitmapError> {
        let mut bitmap = Bitmap::new(len);
        bitmap.set_indices(indices)?;
        Ok(bitmap)
    }

    /// A bitmap with one bit per `bool`, bit `i` set iff `bools[i]`.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let bits = Bitmap::from_bools(&[true, false, true]);
    /// assert_eq!(bits.to_string(), "101");
    /// ```
    pub fn from_bools(bools: &[bool]) -> Bitmap {
        let words = bools
            .chunks(WORD_BITS)
            .map(|chunk| chunk.iter().enumerate().fold(0, |word, (bit, &set)| word | (u64::from(set) << bit)))
            .collect();
        Bitmap { len: bools.len(), words }
    }

    /// An empty bitmap (length 0) with room for `bits` bits, so that
    /// [`reset`](Bitmap::reset), [`copy_from`](Bitmap::copy_from) and
    /// [`push`](Bitmap::push) up to that length do not allocate.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let mut bits = Bitmap::with_capacity_bits(1000);
    /// assert!(bits.is_empty());
    /// assert!(bits.capacity_bits() >= 1000);
    /// bits.reset(1000); // no allocation
    /// assert_eq!(bits.len(), 1000);
    /// ```
    pub fn with_capacity_bits(bits: usize) -> Bitmap {
        Bitmap { len: 0, words: Words::with_capacity(words_for(bits)) }
    }

    /// Appends one bit, growing the length by one.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let mut bits = Bitmap::new(0);
    /// bits.push(true);
    /// bits.push(false);
    /// bits.extend([true, true]);
    /// assert_eq!(bits.to_string(), "1011");
    /// ```
    pub fn push(&mut self, bit: bool) {
        let offset = self.len % WORD_BITS;
        if offset == 0 {
            self.words.push(0);
        }
        self.words[self.len / WORD_BITS] |= u64::from(bit) << offset;
        self.len += 1;
    }

    /// Makes this a bitmap of `len` bits, all clear, reusing the buffer.
    ///
    /// Never allocates if `len.div_ceil(64) <= capacity` (in words), that is
    /// if `len <= self.capacity_bits()`; a loop that builds one bitmap per
    /// request can keep one buffer for all of them.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let mut bits = Bitmap::with_prefix(200, 150);
    /// bits.reset(70);
    /// assert_eq!(bits.len(), 70);
    /// assert!(bits.none());
    /// ```
    pub fn reset(&mut self, len: usize) {
        self.words.clear();
        self.words.resize_zeroed(words_for(len));
        self.len = len;
    }

    /// Makes the bitmap `len` bits long for a caller that then overwrites
    /// every word (and clears the tail): the words already there are kept
    /// as they are when the word count stays the same, sparing
    /// [`reset`](Bitmap::reset)'s zeroing pass, and zeroed otherwise.
    #[inline]
    pub(crate) fn reset_for_overwrite(&mut self, len: usize) {
        if self.words.len() == words_for(len) {
            self.len = len;
        } else {
            self.reset(len);
        }
    }

    /// Shortens the bitmap to its first `len` bits, like `Vec::truncate`:
    /// no effect if `len >= self.len()`. The words keep their buffer.
    ///
    /// LMCache's `a & b` of two sizes has the shorter size; this is how
    /// its compatibility layer gets there.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let mut bits = Bitmap::with_prefix(100, 80);
    /// bits.truncate(70);
    /// assert_eq!((bits.len(), bits.popcount()), (70, 70));
    /// bits.truncate(200);
    /// assert_eq!(bits.len(), 70);
    /// ```
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        self.words.truncate(words_for(len));
        self.len = len;
        self.clear_tail();
    }

    /// Makes the bitmap `len` bits long, like `Vec::resize` with `false`:
    /// the first bits are kept, new ones are clear. Growing by a block of
    /// bits costs a word write per 64 bits, where [`push`](Bitmap::push)
    /// costs one per bit (a table that hands out slots in blocks grows its
    /// bitmaps this way).
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let mut bits = Bitmap::with_prefix(10, 10);
    /// bits.resize(100);
    /// assert_eq!((bits.len(), bits.popcount()), (100, 10));
    /// bits.resize(4);
    /// assert_eq!((bits.len(), bits.popcount()), (4, 4));
    /// ```
    pub fn resize(&mut self, len: usize) {
        if len <= self.len {
            self.truncate(len);
        } else {
            // The bits past the length are clear (the type's invariant), so
            // the old last word's new bits are clear already.
            self.words.resize_zeroed(words_for(len));
            self.len = len;
        }
    }

    /// Makes this a copy of `other` (length and bits), reusing the buffer:
    /// never allocates if `other.len() <= self.capacity_bits()`.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let source = Bitmap::from_indices(100, [3, 99]).unwrap();
    /// let mut copy = Bitmap::with_capacity_bits(128);
    /// copy.copy_from(&source);
    /// assert_eq!(copy, source);
    /// ```
    pub fn copy_from(&mut self, other: &Bitmap) {
        self.words.clear();
        self.words.extend_from_slice(&other.words);
        self.len = other.len;
    }
}

impl Default for Bitmap {
    /// The empty bitmap (length 0).
    fn default() -> Bitmap {
        Bitmap::empty()
    }
}

impl Clone for Bitmap {
    fn clone(&self) -> Bitmap {
        Bitmap { len: self.len, words: self.words.clone() }
    }

    /// Reuses `self`'s buffer, as [`Bitmap::copy_from`].
    fn clone_from(&mut self, source: &Bitmap) {
        self.copy_from(source);
    }
}

impl FromIterator<bool> for Bitmap {
    /// A bitmap with one bit per item, in order.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let bits: Bitmap = (0..10).map(|i| i % 3 == 0).collect();
    /// assert_eq!(bits.to_string(), "1001001001");
    /// ```
    fn from_iter<I: IntoIterator<Item = bool>>(iter: I) -> Bitmap {
        let mut bitmap = Bitmap::new(0);
        bitmap.extend(iter);
        bitmap
    }
}

impl Extend<bool> for Bitmap {
    /// Appends the bits, in order (see [`Bitmap::push`]).
    fn extend<I: IntoIterator<Item = bool>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        let additional = words_for(self.len.saturating_add(iter.size_hint().0)) - self.words.len();
        self.words.reserve(additional);
        for bit in iter {
            self.push(bit);
        }
    }
}

impl<'a> Extend<&'a bool> for Bitmap {
    /// Appends the bits, in order (see [`Bitmap::push`]).
    fn extend<I: IntoIterator<Item = &'a bool>>(&mut self, iter: I) {
        self.extend(iter.into_iter().copied());
    }
}

/// # Size
impl Bitmap {
    /// The length in bits.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let bits = Bitmap::new(65);
    /// assert_eq!(bits.len(), 65);
    /// assert_eq!(bits.num_words(), 2);
    /// assert!(!bits.is_empty());
    /// assert!(Bitmap::default().is_empty());
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the length is 0 (not whether no bit is set: that is
    /// [`none`](Bitmap::none)).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of `u64` words of storage in use: `len().div_ceil(64)`.
    #[inline]
    pub fn num_words(&self) -> usize {
        self.words.len()
    }

    /// How many bits the buffer holds without reallocating (a multiple of
    /// 64, at least [`len`](Bitmap::len)).
    #[inline]
    pub fn capacity_bits(&self) -> usize {
        self.words.capacity().saturating_mul(WORD_BITS)
    }
}

/// # Single bits
///
/// The panicking forms panic like slice indexing, with the index and the
/// length in the message; `get`, `try_set` and `try_clear` don't panic.
impl Bitmap {
    #[inline]
    #[track_caller]
    fn check_index(&self, index: usize) {
        if index >= self.len {
            index_out_of_range(index, self.len);
        }
    }

    /// Sets bit `index`.
    ///
    /// # Panics
    ///
    /// If `index >= len()`.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let mut bits = Bitmap::new(4);
    /// bits.set(1);
    /// bits.assign(2, true);
    /// bits.toggle(3);
    /// bits.toggle(2);
    /// bits.clear(1);
    /// assert_eq!(bits.to_string(), "0001");
    /// assert!(bits.test(3));
    /// assert_eq!(bits.get(3), Some(true));
    /// assert_eq!(bits.get(4), None);
    /// ```
    #[inline]
    #[track_caller]
    pub fn set(&mut self, index: usize) {
        self.check_index(index);
        self.words[index / WORD_BITS] |= 1 << (index % WORD_BITS);
    }

    /// Clears bit `index`.
    ///
    /// # Panics
    ///
    /// If `index >= len()`.
    #[inline]
    #[track_caller]
    pub fn clear(&mut self, index: usize) {
        self.check_index(index);
        self.words[index / WORD_BITS] &= !(1 << (index % WORD_BITS));
    }

    /// Whether bit `index` is set.
    ///
    /// # Panics
    ///
    /// If `index >= len()`; [`get`](Bitmap::get) returns `None` instead.
    #[inline]
    #[track_caller]
    pub fn test(&self, index: usize) -> bool {
        self.check_index(index);
        self.words[index / WORD_BITS] & (1 << (index % WORD_BITS)) != 0
    }

    /// Flips bit `index`.
    ///
    /// # Panics
    ///
    /// If `index >= len()`.
    #[inline]
    #[track_caller]
    pub fn toggle(&mut self, index: usize) {
        self.check_index(index);
        self.words[index / WORD_BITS] ^= 1 << (index % WORD_BITS);
    }

    /// Sets bit `index` to `value`.
    ///
    /// # Panics
    ///
    /// If `index >= len()`.
    #[inline]
    #[track_caller]
    pub fn assign(&mut self, index: usize, value: bool) {
        if value { self.set(index) } else { self.clear(index) }
    }

    /// Whether bit `index` is set, or `None` if `index >= len()`.
    #[inline]
    pub fn get(&self, index: usize) -> Option<bool> {
        (index < self.len).then(|| self.words[index / WORD_BITS] & (1 << (index % WORD_BITS)) != 0)
    }

    /// Sets bit `index`.
    ///
    /// # Errors
    ///
    /// [`BitmapError::IndexOutOfRange`] if `index >= len()`; the bitmap is
    /// unchanged.
    ///
    /// ```
    /// use bitmap_core::{Bitmap, BitmapError};
    /// let mut bits = Bitmap::new(3);
    /// assert_eq!(bits.try_set(2), Ok(()));
    /// assert_eq!(bits.try_clear(3), Err(BitmapError::IndexOutOfRange { index: 3, len: 3 }));
    /// assert_eq!(bits.to_string(), "001");
    /// ```
    #[inline]
    pub fn try_set(&mut self, index: usize) -> Result<(), BitmapError> {
        if index >= self.len {
            return Err(BitmapError::IndexOutOfRange { index, len: self.len });
        }
        self.words[index / WORD_BITS] |= 1 << (index % WORD_BITS);
        Ok(())
    }

    /// Clears bit `index`.
    ///
    /// # Errors
    ///
    /// [`BitmapError::IndexOutOfRange`] if `index >= len()`; the bitmap is
    /// unchanged.
    #[inline]
    pub fn try_clear(&mut self, index: usize) -> Result<(), BitmapError> {
        if index >= self.len {
            return Err(BitmapError::IndexOutOfRange { index, len: self.len });
        }
        self.words[index / WORD_BITS] &= !(1 << (index % WORD_BITS));
        Ok(())
    }

    /// Sets every bit whose index the iterator yields, in order.
    ///
    /// # Errors
    ///
    /// [`BitmapError::IndexOutOfRange`] for the first index `>= len()`. The
    /// indices yielded before it **stay set**, and the iterator is not
    /// consumed past it: on error the bitmap holds its previous bits plus
    /// every valid index that came before the bad one.
    ///
    /// ```
    /// use bitmap_core::{Bitmap, BitmapError};
    /// let mut bits = Bitmap::new(8);
    /// assert_eq!(bits.set_indices([1, 9, 2]), Err(BitmapError::IndexOutOfRange { index: 9, len: 8 }));
    /// assert_eq!(bits.to_indices(), [1]); // 1 was set before 9 failed; 2 was never reached
    /// ```
    pub fn set_indices(&mut self, indices: impl IntoIterator<Item = usize>) -> Result<(), BitmapError> {
        indices.into_iter().try_for_each(|index| self.try_set(index))
    }
}

/// # Ranges
///
/// Ranges are half-open and are **clamped** to the length, as LMCache's
/// bitmap does: on a bitmap of 10 bits, `5..100` means `5..10`, `100..200`
/// is empty, and any range whose start is not below its end is empty. They
/// work a whole word at a time between two masked edge words.
impl Bitmap {
    /// The clamped, non-empty `start..end` of `range`, or `None` if it is
    /// empty after clamping.
    #[inline]
    fn clamp(&self, range: impl RangeBounds<usize>) -> Option<(usize, usize)> {
        let start = match range.start_bound() {
            Bound::Included(&start) => start,
            Bound::Excluded(&start) => start.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&end) => end.saturating_add(1),
            Bound::Excluded(&end) => end,
            Bound::Unbounded => self.len,
        };
        let end = end.min(self.len);
        (start < end).then_some((start, end))
    }

    /// Sets every bit in `range` (clamped to the length).
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let mut bits = Bitmap::new(10);
    /// bits.set_range(5..100); // clamped: 5..10
    /// bits.set_range(1..=2);
    /// bits.set_range(100..200); // nothing
    /// assert_eq!(bits.to_string(), "0110011111");
    /// bits.clear_range(6..);
    /// assert_eq!(bits.to_string(), "0110010000");
    /// assert_eq!(bits.count_range(..6), 3);
    /// ```
    pub fn set_range(&mut self, range: impl RangeBounds<usize>) {
        let Some((start, end)) = self.clamp(range) else { return };
        let (first, first_mask, last, last_mask) = edges(start, end);
        if first == last {
            self.words[first] |= first_mask & last_mask;
        } else {
            self.words[first] |= first_mask;
            self.words[first + 1..last].fill(u64::MAX);
            self.words[last] |= last_mask;
        }
    }

    /// Clears every bit in `range` (clamped to the length).
    pub fn clear_range(&mut self, range: impl RangeBounds<usize>) {
        let Some((start, end)) = self.clamp(range) else { return };
        let (first, first_mask, last, last_mask) = edges(start, end);
        if first == last {
            self.words[first] &= !(first_mask & last_mask);
        } else {
            self.words[first] &= !first_mask;
            self.words[first + 1..last].fill(0);
            self.words[last] &= !last_mask;
        }
    }

    /// The number of set bits in `range` (clamped to the length).
    pub fn count_range(&self, range: impl RangeBounds<usize>) -> usize {
        let Some((start, end)) = self.clamp(range) else { return 0 };
        let (first, first_mask, last, last_mask) = edges(start, end);
        if first == last {
            return (self.words[first] & first_mask & last_mask).count_ones() as usize;
        }
        let edges = (self.words[first] & first_mask).count_ones() + (self.words[last] & last_mask).count_ones();
        edges as usize + count(kernel::popcount(&self.words[first + 1..last]))
    }

    /// Sets every bit.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let mut bits = Bitmap::new(70);
    /// bits.set_all();
    /// assert!(bits.all());
    /// assert_eq!(bits.popcount(), 70);
    /// bits.clear_all();
    /// assert!(bits.none());
    /// ```
    pub fn set_all(&mut self) {
        self.words.fill(u64::MAX);
        self.clear_tail();
    }

    /// Clears every bit.
    pub fn clear_all(&mut self) {
        self.words.fill(0);
    }

    /// Restores the invariant: clears the bits of the last word at or past
    /// `len`.
    #[inline]
    pub(crate) fn clear_tail(&mut self) {
        if let (Some(mask), Some(last)) = (tail_mask(self.len), self.words.last_mut()) {
            *last &= mask;
        }
    }
}

/// # Aggregates
///
/// Counts and searches over the whole bitmap, on the SIMD kernels.
impl Bitmap {
    /// The number of set bits.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let bits: Bitmap = "0011010".parse().unwrap();
    /// assert_eq!(bits.popcount(), 3);
    /// assert_eq!(bits.count_leading_zeros(), 2);
    /// assert_eq!(bits.count_leading_ones(), 0);
    /// assert_eq!(bits.first_set(), Some(2));
    /// assert_eq!(bits.last_set(), Some(5));
    /// assert!(bits.any() && !bits.all() && !bits.none());
    /// ```
    #[inline]
    pub fn popcount(&self) -> usize {
        count(kernel::popcount(&self.words))
    }

    /// The number of clear bits before the first set bit, counted from bit 0:
    /// `len()` if no bit is set.
    #[inline]
    pub fn count_leading_zeros(&self) -> usize {
        self.first_set().unwrap_or(self.len)
    }

    /// The number of set bits before the first clear bit, counted from bit 0
    /// (the length of the set prefix): `len()` if every bit is set.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let mut hits = Bitmap::new(4_000_000);
    /// hits.set_range(..3_999_000);
    /// hits.set(3_999_500);
    /// assert_eq!(hits.count_leading_ones(), 3_999_000);
    /// ```
    #[inline]
    pub fn count_leading_ones(&self) -> usize {
        match kernel::position_not_all_ones(&self.words) {
            // The tail bits are clear, so a partial last word is never all
            // ones and its run of ones stops at `len` at the latest.
            Some(word) => word * WORD_BITS + self.words[word].trailing_ones() as usize,
            None => self.len,
        }
    }

    /// The index of the first set bit, if any.
    #[inline]
    pub fn first_set(&self) -> Option<usize> {
        let word = kernel::position_nonzero(&self.words)?;
        Some(word * WORD_BITS + self.words[word].trailing_zeros() as usize)
    }

    /// The index of the last set bit, if any.
    #[inline]
    pub fn last_set(&self) -> Option<usize> {
        let word = self.words.iter().rposition(|&w| w != 0)?;
        Some(word * WORD_BITS + (WORD_BITS - 1 - self.words[word].leading_zeros() as usize))
    }

    /// Whether any bit is set.
    #[inline]
    pub fn any(&self) -> bool {
        // The first word decides most non-empty bitmaps without the
        // dispatched search's call (a plan asks this of every entry).
        self.words.first().is_some_and(|&word| word != 0) || kernel::position_nonzero(&self.words).is_some()
    }

    /// Whether every bit is set; `true` for an empty bitmap.
    #[inline]
    pub fn all(&self) -> bool {
        self.count_leading_ones() == self.len
    }

    /// Whether no bit is set; `true` for an empty bitmap.
    #[inline]
    pub fn none(&self) -> bool {
        !self.any()
    }
}
