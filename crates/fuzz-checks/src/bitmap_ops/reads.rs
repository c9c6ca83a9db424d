//! The read-only checks of a `bitmap_ops` step: counts and searches,
//! iterators from both ends, conversions and round trips (text, bytes,
//! words, serde, `Debug`), each against the `Vec<bool>` model.

use bitmap_core::{Bitmap, BitmapError};

use super::{State, bytes_of};
use crate::fill::{text_of, words_of};

impl State {
    pub(super) fn aggregates(&self) {
        let step = self.step;
        let ones = self.model.iter().filter(|&&b| b).count();
        let first_set = self.model.iter().position(|&b| b);
        let leading_ones = self.model.iter().position(|&b| !b).unwrap_or(self.len());
        assert_eq!(self.bitmap.popcount(), ones, "step {step}: popcount");
        assert_eq!(self.bitmap.count_range(..), ones, "step {step}: count_range(..)");
        assert_eq!(self.bitmap.first_set(), first_set, "step {step}: first_set");
        assert_eq!(self.bitmap.last_set(), self.model.iter().rposition(|&b| b), "step {step}: last_set");
        assert_eq!(self.bitmap.count_leading_zeros(), first_set.unwrap_or(self.len()), "step {step}: leading zeros");
        assert_eq!(self.bitmap.count_leading_ones(), leading_ones, "step {step}: leading ones");
        assert_eq!(self.bitmap.any(), ones > 0, "step {step}: any");
        assert_eq!(self.bitmap.none(), ones == 0, "step {step}: none");
        assert_eq!(self.bitmap.all(), ones == self.len(), "step {step}: all");
        self.check_kernels_unary(&words_of(&self.model));
    }

    /// `ones()` taken from both ends as `picks` says (`true`: from the back),
    /// then the rest; with `size_hint` bounds checked at every step.
    pub(super) fn ones(&self, picks: &[bool]) {
        let step = self.step;
        let expected: Vec<usize> = (0..self.len()).filter(|&i| self.model[i]).collect();
        assert_eq!(self.bitmap.to_indices(), expected, "step {step}: to_indices");
        assert_eq!((&self.bitmap).into_iter().collect::<Vec<_>>(), expected, "step {step}: &Bitmap iteration");
        assert!(self.bitmap.ones().rev().eq(expected.iter().rev().copied()), "step {step}: ones().rev()");
        assert_eq!(self.bitmap.ones().count(), expected.len(), "step {step}: ones().count()");
        let mut iter = self.bitmap.ones();
        let (mut front, mut back) = (0, expected.len());
        for (pick, &from_back) in picks.iter().enumerate() {
            let (lower, upper) = iter.size_hint();
            let left = back - front;
            assert!(lower <= left && upper.is_none_or(|u| u >= left), "step {step}: ones size_hint at pick {pick}");
            if from_back {
                let want = (front < back).then(|| {
                    back -= 1;
                    expected[back]
                });
                assert_eq!(iter.next_back(), want, "step {step}: ones next_back at pick {pick}");
            } else {
                let want = (front < back).then(|| {
                    front += 1;
                    expected[front - 1]
                });
                assert_eq!(iter.next(), want, "step {step}: ones next at pick {pick}");
            }
        }
        assert_eq!(iter.clone().count(), back - front, "step {step}: count of the rest of ones");
        assert_eq!(iter.by_ref().collect::<Vec<_>>(), expected[front..back], "step {step}: rest of ones");
        assert_eq!((iter.next(), iter.next_back()), (None, None), "step {step}: ones is fused");
    }

    /// `iter()` taken from both ends as `picks` says, `len()` exact throughout.
    pub(super) fn bits(&self, picks: &[bool]) {
        let step = self.step;
        assert!(self.bitmap.iter().eq(self.model.iter().copied()), "step {step}: iter()");
        assert!(self.bitmap.iter().rev().eq(self.model.iter().rev().copied()), "step {step}: iter().rev()");
        let mut iter = self.bitmap.iter();
        let (mut front, mut back) = (0, self.len());
        for (pick, &from_back) in picks.iter().enumerate() {
            assert_eq!(iter.len(), back - front, "step {step}: iter len at pick {pick}");
            assert_eq!(iter.size_hint(), (back - front, Some(back - front)), "step {step}: iter size_hint");
            if from_back {
                let want = (front < back).then(|| {
                    back -= 1;
                    self.model[back]
                });
                assert_eq!(iter.next_back(), want, "step {step}: iter next_back at pick {pick}");
            } else {
                let want = (front < back).then(|| {
                    front += 1;
                    self.model[front - 1]
                });
                assert_eq!(iter.next(), want, "step {step}: iter next at pick {pick}");
            }
        }
        assert_eq!(iter.by_ref().collect::<Vec<_>>(), self.model[front..back], "step {step}: rest of iter");
        assert_eq!((iter.next(), iter.next_back()), (None, None), "step {step}: iter is fused");
    }

    pub(super) fn gather(&self) {
        let step = self.step;
        let len = self.len();
        let items: Vec<usize> = (0..=len).collect();
        let expected: Vec<usize> = (0..len).filter(|&i| self.model[i]).collect();
        assert!(self.bitmap.gather(&items[..len]).copied().eq(expected.iter().copied()), "step {step}: gather");
        assert!(
            self.bitmap.gather(&items[..len]).rev().copied().eq(expected.iter().rev().copied()),
            "step {step}: gather().rev()"
        );
        let too_long = self.bitmap.try_gather(&items).map(|_| ()).unwrap_err();
        assert_eq!(too_long, BitmapError::LengthMismatch { left: len, right: len + 1 }, "step {step}: try_gather");
        if len > 0 {
            let too_short = self.bitmap.try_gather(&items[..len - 1]).map(|_| ()).unwrap_err();
            assert_eq!(too_short, BitmapError::LengthMismatch { left: len, right: len - 1 }, "step {step}");
        }
    }

    pub(super) fn round_trips(&self) {
        let step = self.step;
        let len = self.len();
        let bitmap = &self.bitmap;
        let bytes = bytes_of(&self.model);
        assert_eq!(bitmap.as_bytes(), bytes, "step {step}: as_bytes");
        assert_eq!(Bitmap::from_bytes(len, &bytes).as_ref(), Ok(bitmap), "step {step}: from_bytes(as_bytes)");
        let words = words_of(&self.model);
        assert_eq!(Bitmap::from_words(len, words.clone()).as_ref(), Ok(bitmap), "step {step}: from_words");
        assert_eq!(Bitmap::from_word_slice(len, &words).as_ref(), Ok(bitmap), "step {step}: from_word_slice");
        assert_eq!(bitmap.clone().into_words(), words, "step {step}: into_words");
        let text = text_of(&self.model);
        assert_eq!(bitmap.to_string(), text, "step {step}: Display");
        assert_eq!(text.parse::<Bitmap>().as_ref(), Ok(bitmap), "step {step}: FromStr");
        let json = format!(r#"{{"len":{len},"bits":"{text}"}}"#);
        assert_eq!(serde_json::to_string(bitmap).expect("serializes"), json, "step {step}: serde");
        assert_eq!(&serde_json::from_str::<Bitmap>(&json).expect("deserializes"), bitmap, "step {step}: serde");
        let ones = self.model.iter().filter(|&&b| b).count();
        let shown = &text[..len.min(64)];
        let more = if len > 64 { "…" } else { "" };
        let debug = format!("Bitmap {{ len: {len}, ones: {ones}, bits: \"{shown}{more}\" }}");
        assert_eq!(format!("{bitmap:?}"), debug, "step {step}: Debug");
    }
}
