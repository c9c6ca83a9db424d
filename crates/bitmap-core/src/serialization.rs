//! Raw words and bytes: checked construction from them, zero-copy views of
//! them, a guard for writing words in place, and (with the `serde` feature)
//! serde support.
//!
//! The byte view relies on the target being little-endian, which `lib.rs`
//! enforces at compile time: word `w`'s bytes in memory are then bytes
//! `8w..8w+8` of LMCache's layout (bit `i` in byte `i / 8`, position `i % 8`).

use core::ops::{Deref, DerefMut};

use crate::bitmap::{Bitmap, WORD_BITS, tail_mask, words_for};
use crate::error::{BitmapError, SizeUnit};
use crate::storage::Words;

/// # Words and bytes
impl Bitmap {
    /// A bitmap of `len` bits from its words (bit `i` in word `i / 64` at
    /// position `i % 64`).
    ///
    /// The words are copied into the bitmap's own storage, which starts on a
    /// cache line so that the SIMD kernels never split a load across two;
    /// [`from_word_slice`](Bitmap::from_word_slice) does the same from a
    /// borrowed slice.
    ///
    /// # Errors
    ///
    /// [`BitmapError::WrongSize`] unless there are exactly
    /// `len.div_ceil(64)` words; [`BitmapError::BitPastEnd`] if a bit at or
    /// past `len` is set. Such input is rejected, never truncated.
    ///
    /// ```
    /// use bitmap_core::{Bitmap, BitmapError};
    /// let bits = Bitmap::from_words(66, vec![0b101, 0b10]).unwrap();
    /// assert_eq!(bits.to_indices(), [0, 2, 65]);
    /// assert_eq!(bits.as_words(), [0b101, 0b10]);
    /// assert_eq!(bits.into_words(), [0b101, 0b10]);
    ///
    /// assert!(matches!(Bitmap::from_words(66, vec![1]), Err(BitmapError::WrongSize { .. })));
    /// assert_eq!(Bitmap::from_words(65, vec![0, 0b10]), Err(BitmapError::BitPastEnd { index: 65, len: 65 }));
    /// ```
    pub fn from_words(len: usize, words: Vec<u64>) -> Result<Bitmap, BitmapError> {
        Bitmap::from_word_slice(len, &words)
    }

    /// A bitmap of `len` bits from a copy of `words`; see
    /// [`from_words`](Bitmap::from_words).
    ///
    /// # Errors
    ///
    /// As [`from_words`](Bitmap::from_words).
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let words = [u64::MAX, 0b1];
    /// let bits = Bitmap::from_word_slice(65, &words).unwrap();
    /// assert_eq!(bits.popcount(), 65);
    /// assert!(Bitmap::from_word_slice(64, &words).is_err());
    /// ```
    pub fn from_word_slice(len: usize, words: &[u64]) -> Result<Bitmap, BitmapError> {
        let expected = words_for(len);
        if words.len() != expected {
            return Err(BitmapError::WrongSize { expected, actual: words.len(), unit: SizeUnit::Words });
        }
        if let (Some(mask), Some(&last)) = (tail_mask(len), words.last()) {
            let past_end = last & !mask;
            if past_end != 0 {
                let index = (expected - 1) * WORD_BITS + past_end.trailing_zeros() as usize;
                return Err(BitmapError::BitPastEnd { index, len });
            }
        }
        Ok(Bitmap { len, words: Words::from_slice(words) })
    }

    /// A bitmap of `len` bits from LMCache's byte layout: bit `i` in byte
    /// `i / 8` at position `i % 8` (least significant first).
    ///
    /// # Errors
    ///
    /// [`BitmapError::WrongSize`] unless there are exactly `len.div_ceil(8)`
    /// bytes; [`BitmapError::BitPastEnd`] if a bit at or past `len` is set.
    ///
    /// ```
    /// use bitmap_core::{Bitmap, BitmapError};
    /// let bits = Bitmap::from_bytes(10, &[0b0000_0101, 0b10]).unwrap();
    /// assert_eq!(bits.to_indices(), [0, 2, 9]);
    /// assert_eq!(bits.as_bytes(), [0b0000_0101, 0b10]);
    ///
    /// assert!(matches!(Bitmap::from_bytes(10, &[0]), Err(BitmapError::WrongSize { .. })));
    /// assert_eq!(Bitmap::from_bytes(10, &[0, 0b100]), Err(BitmapError::BitPastEnd { index: 10, len: 10 }));
    /// ```
    pub fn from_bytes(len: usize, bytes: &[u8]) -> Result<Bitmap, BitmapError> {
        let expected = len.div_ceil(8);
        if bytes.len() != expected {
            return Err(BitmapError::WrongSize { expected, actual: bytes.len(), unit: SizeUnit::Bytes });
        }
        if let (Some(&last), used @ 1..) = (bytes.last(), len % 8) {
            let past_end = last & !((1u8 << used) - 1);
            if past_end != 0 {
                let index = (expected - 1) * 8 + past_end.trailing_zeros() as usize;
                return Err(BitmapError::BitPastEnd { index, len });
            }
        }
        let mut bitmap = Bitmap::new(len);
        bytemuck::cast_slice_mut::<u64, u8>(&mut bitmap.words)[..expected].copy_from_slice(bytes);
        Ok(bitmap)
    }

    /// The words, `len().div_ceil(64)` of them; bits past the length are
    /// clear. The first word starts on a 64-byte boundary (a cache line),
    /// whichever constructor or operation made the bitmap, so SIMD loads of
    /// it never straddle two lines.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let bits = Bitmap::with_prefix(200, 130);
    /// assert_eq!(bits.as_words(), [u64::MAX, u64::MAX, 0b11, 0]);
    /// assert_eq!(bits.as_words().as_ptr().align_offset(64), 0);
    /// ```
    #[inline]
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }

    /// The bits in LMCache's byte layout (bit `i` in byte `i / 8` at position
    /// `i % 8`), `len().div_ceil(8)` bytes, without copying: a view of the
    /// words' memory.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let bits = Bitmap::from_indices(12, [0, 9, 11]).unwrap();
    /// assert_eq!(bits.as_bytes(), [0b0000_0001, 0b0000_1010]);
    /// ```
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<u64, u8>(&self.words)[..self.len.div_ceil(8)]
    }

    /// The words as a `Vec<u64>` (a copy of [`as_words`](Bitmap::as_words):
    /// the bitmap's own storage is cache-line aligned, a `Vec<u64>` is not).
    #[inline]
    pub fn into_words(self) -> Vec<u64> {
        self.words.to_vec()
    }

    /// Mutable access to the words, through a guard that clears the bits
    /// past the length when it is dropped, so the bitmap's invariant holds
    /// whatever was written. Kernels can write into it directly, or into
    /// disjoint sub-slices of it (`chunks_mut`, `split_at_mut`) from several
    /// threads.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let mut bits = Bitmap::new(70);
    /// {
    ///     let mut words = bits.words_mut();
    ///     words.fill(u64::MAX); // also sets bits 70..128
    /// } // the guard clears them here
    /// assert_eq!(bits.popcount(), 70);
    /// assert_eq!(bits.as_words()[1], (1 << 6) - 1);
    /// ```
    #[inline]
    pub fn words_mut(&mut self) -> WordsMut<'_> {
        WordsMut { bitmap: self }
    }

    /// Mutable access to the words without a guard, for a bitmap whose
    /// length is a whole number of words: it has no bits past its length,
    /// so no write can break the invariant. `None` for any other length.
    /// (A caller that keeps its own layout in a bitmap's cache-line-aligned
    /// words, as prefetch-policy's `Grid` keeps its rows, borrows them for
    /// as long as it needs; the guard of [`words_mut`](Bitmap::words_mut)
    /// would end with the statement.)
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let mut bits = Bitmap::new(128);
    /// bits.whole_words_mut().unwrap()[1] = 1;
    /// assert_eq!(bits.ones().collect::<Vec<_>>(), [64]);
    /// assert!(Bitmap::new(70).whole_words_mut().is_none());
    /// ```
    #[inline]
    pub fn whole_words_mut(&mut self) -> Option<&mut [u64]> {
        if self.len.is_multiple_of(64) { Some(&mut self.words) } else { None }
    }
}

/// Mutable access to a bitmap's words; from [`Bitmap::words_mut`].
///
/// Dereferences to `&mut [u64]` (the length cannot change). On drop it clears
/// every bit at or past the bitmap's length, restoring the invariant.
///
/// Leaking the guard (`mem::forget`) skips that step and can leave bits past
/// the length set. That is a logic error, not undefined behaviour: counts,
/// comparisons and iteration may then report those bits, but memory safety
/// is unaffected.
#[derive(Debug)]
pub struct WordsMut<'b> {
    bitmap: &'b mut Bitmap,
}

impl Deref for WordsMut<'_> {
    type Target = [u64];

    #[inline]
    fn deref(&self) -> &[u64] {
        &self.bitmap.words
    }
}

impl DerefMut for WordsMut<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u64] {
        &mut self.bitmap.words
    }
}

impl Drop for WordsMut<'_> {
    #[inline]
    fn drop(&mut self) {
        self.bitmap.clear_tail();
    }
}

// With the `serde` feature: see "Serde" in the crate docs for the format.
#[cfg(feature = "serde")]
mod serde_impl {
    use std::borrow::Cow;

    use serde::de::Error as _;
    use serde::ser::SerializeStruct;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::bitmap::Bitmap;
    use crate::error::{BitmapError, SizeUnit};

    /// Serializes the bit string straight from `Display`, without building a
    /// `String` first where the format allows.
    struct BitString<'a>(&'a Bitmap);

    impl Serialize for BitString<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_str(self.0)
        }
    }

    impl Serialize for Bitmap {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut state = serializer.serialize_struct("Bitmap", 2)?;
            state.serialize_field("len", &self.len)?;
            state.serialize_field("bits", &BitString(self))?;
            state.end()
        }
    }

    #[derive(Deserialize)]
    #[serde(rename = "Bitmap", deny_unknown_fields)]
    struct Repr<'a> {
        len: usize,
        #[serde(borrow)]
        bits: Cow<'a, str>,
    }

    impl<'de> Deserialize<'de> for Bitmap {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Bitmap, D::Error> {
            let repr = Repr::deserialize(deserializer)?;
            let bitmap: Bitmap = repr.bits.parse().map_err(D::Error::custom)?;
            // A valid bit string is ASCII: its length in bytes is its number
            // of bits.
            if bitmap.len != repr.len {
                let error = BitmapError::WrongSize { expected: repr.len, actual: bitmap.len, unit: SizeUnit::Bits };
                return Err(D::Error::custom(error));
            }
            Ok(bitmap)
        }
    }
}
