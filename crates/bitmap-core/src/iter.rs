//! Iteration: over set-bit indices ([`Ones`]), over every bit ([`Iter`]) and
//! over the items that set bits select ([`Gather`]).

use core::fmt;
use core::iter::FusedIterator;

use crate::bitmap::{Bitmap, WORD_BITS};
use crate::error::{BitmapError, length_mismatch};
use crate::kernel::{self, count};

/// # Iteration
impl Bitmap {
    /// The indices of the set bits, ascending (or descending with
    /// [`rev`](Iterator::rev)).
    ///
    /// Works a word at a time and skips zero words in bulk, so it is fast on
    /// sparse and on dense bitmaps alike.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let bits = Bitmap::from_indices(200, [3, 64, 199]).unwrap();
    /// assert_eq!(bits.ones().collect::<Vec<_>>(), [3, 64, 199]);
    /// assert_eq!(bits.ones().rev().collect::<Vec<_>>(), [199, 64, 3]);
    /// assert_eq!(bits.to_indices(), [3, 64, 199]);
    /// // `&Bitmap` iterates over the same indices.
    /// let mut total = 0;
    /// for index in &bits {
    ///     total += index;
    /// }
    /// assert_eq!(total, 266);
    /// // Every bit, as bools:
    /// assert_eq!(bits.iter().filter(|&bit| bit).count(), 3);
    /// ```
    #[inline]
    pub fn ones(&self) -> Ones<'_> {
        Ones::new(&self.words)
    }

    /// Every bit as a `bool`, from bit 0.
    ///
    /// (`for i in &bitmap` iterates over the indices of the set bits, as
    /// [`ones`](Bitmap::ones) does, not over this.)
    #[inline]
    pub fn iter(&self) -> Iter<'_> {
        Iter { words: &self.words, front: 0, back: self.len }
    }

    /// The indices of the set bits, ascending, in a `Vec` of exactly the
    /// right capacity.
    pub fn to_indices(&self) -> Vec<usize> {
        let mut indices = Vec::new();
        self.append_indices(&mut indices);
        indices
    }

    /// Appends the indices of the set bits to `out`, ascending: what
    /// `out.extend(self.ones())` does, faster (room for all of them is
    /// reserved once, and each is written without a capacity check; the
    /// Python binding's `indices_array` of 131,072 indices went from 171 µs
    /// to 112 µs with it).
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let mut indices = vec![7];
    /// Bitmap::from_indices(130, [0, 64, 129])?.append_indices(&mut indices);
    /// assert_eq!(indices, [7, 0, 64, 129]);
    /// # Ok::<(), bitmap_core::BitmapError>(())
    /// ```
    pub fn append_indices(&self, out: &mut Vec<usize>) {
        kernel::append_ones(&self.words, out);
    }

    /// The items whose bits are set: `&items[i]` for each set bit `i`,
    /// ascending. With a bitmap over a list of keys, this yields the keys it
    /// selects.
    ///
    /// # Panics
    ///
    /// If `items.len() != self.len()`; [`try_gather`](Bitmap::try_gather)
    /// returns an error instead.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let keys = ["a", "b", "c", "d"];
    /// let hits: Bitmap = "0110".parse().unwrap();
    /// assert_eq!(hits.gather(&keys).collect::<Vec<_>>(), [&"b", &"c"]);
    /// assert!(hits.try_gather(&keys[..3]).is_err());
    /// ```
    #[inline]
    #[track_caller]
    pub fn gather<'a, T>(&self, items: &'a [T]) -> Gather<'_, 'a, T> {
        if items.len() != self.len {
            length_mismatch(self.len, items.len());
        }
        Gather { ones: self.ones(), items }
    }

    /// As [`gather`](Bitmap::gather).
    ///
    /// # Errors
    ///
    /// [`BitmapError::LengthMismatch`] (`left` the bitmap's length, `right`
    /// the items') if `items.len() != self.len()`.
    #[inline]
    pub fn try_gather<'a, T>(&self, items: &'a [T]) -> Result<Gather<'_, 'a, T>, BitmapError> {
        if items.len() != self.len {
            return Err(BitmapError::LengthMismatch { left: self.len, right: items.len() });
        }
        Ok(Gather { ones: self.ones(), items })
    }
}

impl<'b> IntoIterator for &'b Bitmap {
    type Item = usize;
    type IntoIter = Ones<'b>;

    /// The indices of the set bits, as [`Bitmap::ones`].
    #[inline]
    fn into_iter(self) -> Ones<'b> {
        self.ones()
    }
}

/// The indices of a bitmap's set bits, ascending; from
/// [`Bitmap::ones`].
///
/// Double-ended: [`rev`](Iterator::rev) gives them descending, and the two
/// ends can be mixed. Its `size_hint` is a cheap bound rather than exact:
/// an exact count would cost a pass over the whole bitmap up front, even
/// for a caller that only wants the first few indices. [`count`] is exact
/// and runs on the popcount kernel.
///
/// [`count`]: Iterator::count
#[derive(Clone)]
#[must_use = "iterators are lazy and do nothing unless consumed"]
pub struct Ones<'b> {
    /// The not-yet-yielded bits of the front word.
    front: u64,
    /// The bit index of the front word's bit 0.
    front_base: usize,
    /// The not-yet-yielded bits of the back word.
    back: u64,
    /// The bit index of the back word's bit 0.
    back_base: usize,
    /// The words strictly between the front and the back word.
    middle: &'b [u64],
}

impl<'b> Ones<'b> {
    /// The set-bit indices of bare words (bit `i` is bit `i % 64` of word
    /// `i / 64`), for a caller that keeps bits in a buffer of its own, as
    /// prefetch-policy's `Grid` keeps its rows in one.
    ///
    /// ```
    /// use bitmap_core::Ones;
    /// assert_eq!(Ones::over_words(&[0b101, 1]).collect::<Vec<_>>(), [0, 2, 64]);
    /// ```
    #[inline]
    pub fn over_words(words: &'b [u64]) -> Ones<'b> {
        Ones::new(words)
    }

    fn new(words: &'b [u64]) -> Ones<'b> {
        match words {
            [] => Ones { front: 0, front_base: 0, back: 0, back_base: 0, middle: &[] },
            [only] => Ones { front: *only, front_base: 0, back: 0, back_base: 0, middle: &[] },
            [first, middle @ .., last] => {
                Ones { front: *first, front_base: 0, back: *last, back_base: (words.len() - 1) * WORD_BITS, middle }
            }
        }
    }

    /// Loads the next non-zero word into `front`; false if none is left.
    #[inline]
    fn refill_front(&mut self) -> bool {
        // Check the next word before asking the kernel: on dense bitmaps it
        // is almost always non-zero, and the call would cost more than it
        // saves. On sparse ones the kernel skips a run of zero words fast.
        let skip = match self.middle.first() {
            Some(&word) if word != 0 => Some(0),
            Some(_) => kernel::position_nonzero(self.middle),
            None => None,
        };
        match skip {
            Some(skip) => {
                self.front = self.middle[skip];
                self.front_base += (skip + 1) * WORD_BITS;
                self.middle = &self.middle[skip + 1..];
                true
            }
            None => {
                // The middle is all zero: only the back word is left.
                self.middle = &[];
                self.front = core::mem::take(&mut self.back);
                self.front_base = self.back_base;
                self.front != 0
            }
        }
    }

    /// Loads the previous non-zero word into `back`; false if none is left.
    #[inline]
    fn refill_back(&mut self) -> bool {
        match self.middle.iter().rposition(|&word| word != 0) {
            Some(position) => {
                let skipped = self.middle.len() - position;
                self.back = self.middle[position];
                self.back_base -= skipped * WORD_BITS;
                self.middle = &self.middle[..position];
                true
            }
            None => {
                self.middle = &[];
                self.back = core::mem::take(&mut self.front);
                self.back_base = self.front_base;
                self.back != 0
            }
        }
    }
}

impl Iterator for Ones<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.front == 0 {
            if !self.refill_front() {
                return None;
            }
        }
        let bit = self.front.trailing_zeros() as usize;
        // Clear the lowest set bit.
        self.front &= self.front - 1;
        Some(self.front_base + bit)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let known = (self.front.count_ones() + self.back.count_ones()) as usize;
        (known, Some(known + self.middle.len() * WORD_BITS))
    }

    #[inline]
    fn count(self) -> usize {
        (self.front.count_ones() + self.back.count_ones()) as usize + count(kernel::popcount(self.middle))
    }

    #[inline]
    fn last(mut self) -> Option<usize> {
        self.next_back()
    }

    #[inline]
    fn min(mut self) -> Option<usize> {
        self.next()
    }

    #[inline]
    fn max(mut self) -> Option<usize> {
        self.next_back()
    }
}

impl DoubleEndedIterator for Ones<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<usize> {
        while self.back == 0 {
            if !self.refill_back() {
                return None;
            }
        }
        let bit = WORD_BITS - 1 - self.back.leading_zeros() as usize;
        self.back ^= 1 << bit;
        Some(self.back_base + bit)
    }
}

impl FusedIterator for Ones<'_> {}

// Not derived: the derive would print every remaining word, megabytes for a
// large bitmap.
impl fmt::Debug for Ones<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ones")
            .field("front", &format_args!("{:#018x} at bit {}", self.front, self.front_base))
            .field("back", &format_args!("{:#018x} at bit {}", self.back, self.back_base))
            .field("middle_words", &self.middle.len())
            .finish()
    }
}

/// Every bit of a bitmap as a `bool`, from bit 0; from [`Bitmap::iter`].
#[derive(Clone)]
#[must_use = "iterators are lazy and do nothing unless consumed"]
pub struct Iter<'b> {
    words: &'b [u64],
    /// The next bit to yield from the front.
    front: usize,
    /// One past the next bit to yield from the back.
    back: usize,
}

impl Iter<'_> {
    #[inline]
    fn bit(&self, index: usize) -> bool {
        self.words[index / WORD_BITS] & (1 << (index % WORD_BITS)) != 0
    }
}

impl Iterator for Iter<'_> {
    type Item = bool;

    #[inline]
    fn next(&mut self) -> Option<bool> {
        if self.front == self.back {
            return None;
        }
        let bit = self.bit(self.front);
        self.front += 1;
        Some(bit)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let remaining = self.back - self.front;
        (remaining, Some(remaining))
    }

    #[inline]
    fn nth(&mut self, n: usize) -> Option<bool> {
        self.front = self.front.saturating_add(n).min(self.back);
        self.next()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<bool> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        Some(self.bit(self.back))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl FusedIterator for Iter<'_> {}

// Not derived: the words could be megabytes.
impl fmt::Debug for Iter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Iter").field("remaining", &(self.front..self.back)).finish()
    }
}

/// The items a bitmap's set bits select, `&items[i]` for each set bit `i`,
/// ascending; from [`Bitmap::gather`].
///
/// `'b` borrows the bitmap and `'a` the items: the yielded references live
/// as long as the items, not as the bitmap.
#[must_use = "iterators are lazy and do nothing unless consumed"]
pub struct Gather<'b, 'a, T> {
    ones: Ones<'b>,
    items: &'a [T],
}

// Not derived: the derive would require `T: Clone`.
impl<T> Clone for Gather<'_, '_, T> {
    fn clone(&self) -> Self {
        Gather { ones: self.ones.clone(), items: self.items }
    }
}

impl<'a, T> Iterator for Gather<'_, 'a, T> {
    type Item = &'a T;

    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        self.ones.next().map(|index| &self.items[index])
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.ones.size_hint()
    }

    #[inline]
    fn count(self) -> usize {
        self.ones.count()
    }
}

impl<'a, T> DoubleEndedIterator for Gather<'_, 'a, T> {
    #[inline]
    fn next_back(&mut self) -> Option<&'a T> {
        self.ones.next_back().map(|index| &self.items[index])
    }
}

impl<T> FusedIterator for Gather<'_, '_, T> {}

// Not derived: the derive would require `T: Debug` and print every item.
impl<T> fmt::Debug for Gather<'_, '_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gather").field("ones", &self.ones).field("items", &self.items.len()).finish()
    }
}
