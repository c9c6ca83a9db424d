//! Text: `Display` and `FromStr` as a string of `0`s and `1`s, bit 0 first
//! (LMCache's repr), and a `Debug` that stays short for any length.

use core::fmt;
use core::str::FromStr;

use crate::bitmap::{Bitmap, WORD_BITS, words_for};
use crate::error::BitmapError;
use crate::storage::Words;

/// `Debug` shows at most this many bits.
const DEBUG_BITS: usize = 64;

impl Bitmap {
    /// Writes bits `0..end` as `0`s and `1`s, a word at a time.
    fn write_bits(&self, f: &mut fmt::Formatter<'_>, end: usize) -> fmt::Result {
        let mut buffer = [0u8; WORD_BITS];
        for (index, &word) in self.words[..words_for(end)].iter().enumerate() {
            let bits = (end - index * WORD_BITS).min(WORD_BITS);
            for (bit, byte) in buffer[..bits].iter_mut().enumerate() {
                *byte = if word & (1 << bit) != 0 { b'1' } else { b'0' };
            }
            // Only ASCII digits were written, so this never fails.
            f.write_str(core::str::from_utf8(&buffer[..bits]).map_err(|_| fmt::Error)?)?;
        }
        Ok(())
    }
}

impl fmt::Display for Bitmap {
    /// One `0` or `1` per bit, bit 0 first, as LMCache prints its bitmaps;
    /// [`FromStr`] reads it back.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let bits = Bitmap::from_indices(5, [0, 3]).unwrap();
    /// assert_eq!(bits.to_string(), "10010");
    /// assert_eq!("10010".parse::<Bitmap>().unwrap(), bits);
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_bits(f, self.len)
    }
}

impl fmt::Debug for Bitmap {
    /// The length, the number of set bits and the first 64 bits (`…` marks
    /// the rest), so that a 4-million-bit bitmap still prints on one line.
    ///
    /// ```
    /// use bitmap_core::Bitmap;
    /// let bits = Bitmap::from_indices(1000, [1, 2, 900]).unwrap();
    /// assert_eq!(
    ///     format!("{bits:?}"),
    ///     "Bitmap { len: 1000, ones: 3, bits: \"0110000000000000000000000000000000000000000000000000000000000000…\" }",
    /// );
    /// assert_eq!(format!("{:?}", Bitmap::from_bools(&[true])), "Bitmap { len: 1, ones: 1, bits: \"1\" }");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// The quoted bit string, cut at `DEBUG_BITS`.
        struct Bits<'a>(&'a Bitmap);

        impl fmt::Debug for Bits<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let Bits(bitmap) = *self;
                f.write_str("\"")?;
                bitmap.write_bits(f, bitmap.len.min(DEBUG_BITS))?;
                if bitmap.len > DEBUG_BITS {
                    f.write_str("…")?;
                }
                f.write_str("\"")
            }
        }

        f.debug_struct("Bitmap")
            .field("len", &self.len)
            .field("ones", &self.popcount())
            .field("bits", &Bits(self))
            .finish()
    }
}

impl FromStr for Bitmap {
    type Err = BitmapError;

    /// Reads a string of `0`s and `1`s, bit 0 first; its length in
    /// characters is the bitmap's length. Nothing else is accepted, not even
    /// whitespace.
    ///
    /// # Errors
    ///
    /// [`BitmapError::InvalidChar`] for the first other character, with its
    /// position.
    ///
    /// ```
    /// use bitmap_core::{Bitmap, BitmapError};
    /// assert_eq!("0110".parse::<Bitmap>().unwrap().to_indices(), [1, 2]);
    /// assert_eq!("".parse::<Bitmap>().unwrap().len(), 0);
    /// assert_eq!("01x1".parse::<Bitmap>(), Err(BitmapError::InvalidChar { position: 2, found: 'x' }));
    /// ```
    fn from_str(text: &str) -> Result<Bitmap, BitmapError> {
        let bytes = text.as_bytes();
        let mut words = Words::with_capacity(words_for(bytes.len()));
        for (index, chunk) in bytes.chunks(WORD_BITS).enumerate() {
            let mut word = 0;
            for (bit, &byte) in chunk.iter().enumerate() {
                match byte {
                    b'0' => {}
                    b'1' => word |= 1 << bit,
                    _ => return Err(invalid_char(text, index * WORD_BITS + bit)),
                }
            }
            words.push(word);
        }
        Ok(Bitmap { len: bytes.len(), words })
    }
}

/// The error for the invalid byte at `offset`. Every byte before it is an
/// ASCII digit, so `offset` is a char boundary and also the character's
/// position.
#[cold]
fn invalid_char(text: &str, offset: usize) -> BitmapError {
    let found = text[offset..].chars().next().expect("an invalid byte starts a character");
    BitmapError::InvalidChar { position: offset, found }
}
