//! [`SplitWriter`]: several bitmaps of one length written front to back,
//! each word once, never zeroed first.

use crate::bitmap::{Bitmap, words_for};
use crate::kernel;

/// Writes `N` bitmaps of one length front to back, each word once, into
/// their buffers' spare capacity: nothing is zeroed first, and buffers the
/// outputs already have are reused.
///
/// It is how a split whose routing changes along the keys is written (the
/// `balanced` prefetch policy hands each class of keys to one adapter after
/// another): the long runs of words with fixed routing by one
/// [`kernel::split_by_tables`] pass each
/// ([`split_by_tables`](SplitWriter::split_by_tables)), the words where it
/// changes one at a time ([`push`](SplitWriter::push)). Into freshly
/// allocated outputs that saves the clearing a [`Bitmap::new`] would do:
/// profiled in a `balanced` plan of 262,144 keys × 3, the clearing took 12%
/// of the time and the split itself 23%.
///
/// The outputs are whole bitmaps of the given length once the writer is
/// [`finish`](SplitWriter::finish)ed or dropped: words not written are
/// zero, and bits at or past the length are cleared. Meanwhile each is
/// the valid bitmap of the words written so far (so a forgotten writer
/// leaves that prefix).
///
/// ```
/// use bitmap_core::{Bitmap, SplitWriter};
///
/// // key:                       01234567
/// let a: Bitmap = "11110000".parse()?;
/// let b: Bitmap = "01111100".parse()?;
/// let (mut to_a, mut to_b) = (Bitmap::empty(), Bitmap::empty());
/// let mut writer = SplitWriter::new(8, [&mut to_a, &mut to_b]);
/// // `a` keeps all its keys (both entries of its table); `b` only those
/// // `a` lacks (entry 0).
/// writer.split_by_tables(&[a.as_words(), b.as_words()], &[0b11, 0b01], 1);
/// writer.finish();
/// assert_eq!((to_a.to_string(), to_b.to_string()), ("11110000".into(), "00001100".into()));
/// # Ok::<(), bitmap_core::BitmapError>(())
/// ```
pub struct SplitWriter<'o, const N: usize> {
    /// The bitmaps being written: each is the words written so far (its
    /// length is those words' bits, or `len` once all are written).
    outputs: [&'o mut Bitmap; N],
    /// The outputs' length in bits when done.
    len: usize,
    /// Words written to each buffer so far.
    written: usize,
}

impl<'o, const N: usize> SplitWriter<'o, N> {
    /// A writer of `outputs`, each to become `len` bits long; their words
    /// are discarded (their buffers kept, to be written into).
    pub fn new(len: usize, outputs: [&'o mut Bitmap; N]) -> SplitWriter<'o, N> {
        let mut outputs = outputs;
        for output in outputs.iter_mut() {
            output.len = 0;
            output.words.clear();
            output.words.reserve(words_for(len));
        }
        SplitWriter { outputs, len, written: 0 }
    }

    /// The outputs' length in bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the outputs have no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The words each output has when done.
    pub fn num_words(&self) -> usize {
        words_for(self.len)
    }

    /// The words written to each output so far: the next one written is
    /// word `written_words()`.
    pub fn written_words(&self) -> usize {
        self.written
    }

    /// Writes the next `words` words of each output: the
    /// [table-driven split](kernel::split_by_tables) of the same words of
    /// `inputs` (whole bitmaps' words, [`num_words`](SplitWriter::num_words)
    /// each), in one pass.
    ///
    /// # Panics
    ///
    /// If an input does not have `num_words()` words, if fewer than `words`
    /// words are left to write, or on the arguments
    /// [`kernel::split_by_tables`] rejects (more than
    /// [`MAX_CLASS_INPUTS`](kernel::MAX_CLASS_INPUTS) inputs, a table with
    /// bits past its entries). Nothing is written then.
    #[track_caller]
    pub fn split_by_tables(&mut self, inputs: &[&[u64]; N], tables: &[u8; N], words: usize) {
        let num_words = self.num_words();
        if let Some(input) = inputs.iter().position(|input| input.len() != num_words) {
            panic!("bitmap-core: SplitWriter input {input} has {} words, not {num_words}", inputs[input].len());
        }
        let end = self.end_of(words);
        let runs: [&[u64]; N] = core::array::from_fn(|p| &inputs[p][self.written..end]);
        kernel::split_by_tables_append(&runs, tables, self.outputs.each_mut().map(|output| &mut output.words));
        self.set_written(end);
    }

    /// Writes the next word of each output: `words[a]` to output `a`.
    ///
    /// # Panics
    ///
    /// If every word is written already.
    #[track_caller]
    pub fn push(&mut self, words: [u64; N]) {
        let end = self.end_of(1);
        for (output, word) in self.outputs.iter_mut().zip(words) {
            output.words.push(word);
        }
        self.set_written(end);
    }

    /// Hands the outputs back, every word written.
    ///
    /// # Panics
    ///
    /// If some words were not written (the outputs are whole bitmaps all the
    /// same, those words zero).
    #[track_caller]
    pub fn finish(self) {
        let (written, num_words) = (self.written, self.num_words());
        drop(self);
        assert_eq!(written, num_words, "bitmap-core: SplitWriter finished after {written} of {num_words} words");
    }

    /// Records that `written` words of each output are written: each is a
    /// bitmap of that many words' bits, or of `len` bits, its tail cleared,
    /// once all are.
    fn set_written(&mut self, written: usize) {
        self.written = written;
        let bits = if written == self.num_words() { self.len } else { written * 64 };
        for output in self.outputs.iter_mut() {
            output.len = bits;
            output.clear_tail();
        }
    }

    /// The word after the next `words`; panics if that is past the end.
    #[track_caller]
    fn end_of(&self, words: usize) -> usize {
        let num_words = self.num_words();
        match self.written.checked_add(words) {
            Some(end) if end <= num_words => end,
            _ => panic!(
                "bitmap-core: SplitWriter has {} of {num_words} words left, not {words}",
                num_words - self.written
            ),
        }
    }
}

impl<const N: usize> Drop for SplitWriter<'_, N> {
    fn drop(&mut self) {
        if self.written < self.num_words() {
            let num_words = self.num_words();
            for output in self.outputs.iter_mut() {
                output.words.resize_zeroed(num_words);
            }
            self.set_written(num_words);
        }
    }
}

impl<const N: usize> core::fmt::Debug for SplitWriter<'_, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SplitWriter")
            .field("outputs", &N)
            .field("len", &self.len)
            .field("written_words", &self.written)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitmap::tail_mask;
    use crate::kernel::tests::XorShift;

    /// Reused outputs full of ones, and fresh ones, written by runs and
    /// pushes, against the split of the same words in place.
    #[test]
    fn runs_and_pushes_write_the_split() {
        for len in [0, 1, 63, 64, 65, 200, 64 * 40 + 5] {
            let words = words_for(len);
            let inputs: Vec<Bitmap> = (0..3)
                .map(|p| {
                    let mut words = XorShift(0x9E37_79B9_7F4A_7C15 + p).words(words, 4);
                    if let (Some(mask), Some(last)) = (tail_mask(len), words.last_mut()) {
                        *last &= mask;
                    }
                    Bitmap::from_words(len, words).unwrap()
                })
                .collect();
            let views: [&[u64]; 3] = core::array::from_fn(|p| inputs[p].as_words());
            let tables = [0b1001, 0b0110, 0b1111];
            let mut expected = vec![vec![0u64; words]; 3];
            {
                let mut slices: Vec<&mut [u64]> = expected.iter_mut().map(Vec::as_mut_slice).collect();
                kernel::Kernel::scalar().split_by_tables(&views, &tables, &mut slices);
            }
            for fresh in [false, true] {
                let mut outputs: [Bitmap; 3] = core::array::from_fn(|_| {
                    if fresh { Bitmap::empty() } else { Bitmap::from_words(64 * 7, vec![u64::MAX; 7]).unwrap() }
                });
                let mut writer = SplitWriter::new(len, outputs.each_mut());
                // A run, a pushed word, then the rest as one run.
                let first = words / 3;
                writer.split_by_tables(&views, &tables, first);
                if first < words {
                    writer.push(core::array::from_fn(|a| expected[a][first]));
                }
                writer.split_by_tables(&views, &tables, words - writer.written_words());
                writer.finish();
                for (output, expected) in outputs.iter().zip(&expected) {
                    assert_eq!(output.len(), len);
                    assert_eq!(output.as_words(), expected.as_slice(), "len {len}, fresh {fresh}");
                }
            }
        }
    }

    #[test]
    fn unwritten_words_are_zero_and_tails_clear() {
        let (mut a, mut b) = (Bitmap::from_words(128, vec![u64::MAX; 2]).unwrap(), Bitmap::empty());
        let mut writer = SplitWriter::new(100, [&mut a, &mut b]);
        writer.push([u64::MAX, 1]);
        drop(writer);
        assert_eq!(a.as_words(), [u64::MAX, 0]);
        assert_eq!(b.as_words(), [1, 0]);
        let mut writer = SplitWriter::new(70, [&mut a, &mut b]);
        writer.push([u64::MAX, 0]);
        writer.push([u64::MAX, u64::MAX]);
        writer.finish();
        assert_eq!((a.len(), a.popcount()), (70, 70));
        assert_eq!((b.len(), b.popcount()), (70, 6));
    }

    #[test]
    fn a_forgotten_writer_leaves_the_words_written() {
        let mut a = Bitmap::from_words(192, vec![5; 3]).unwrap();
        let mut writer = SplitWriter::new(150, [&mut a]);
        writer.push([7]);
        core::mem::forget(writer);
        assert_eq!((a.len(), a.as_words()), (64, &[7][..]));
    }

    #[test]
    #[should_panic(expected = "SplitWriter finished after 1 of 2 words")]
    fn finishing_early_panics() {
        crate::test_support::cheap_panic_hook_under_miri();
        let mut a = Bitmap::empty();
        let mut writer = SplitWriter::new(128, [&mut a]);
        writer.push([1]);
        writer.finish();
    }

    #[test]
    #[should_panic(expected = "SplitWriter has 0 of 1 words left, not 1")]
    fn writing_past_the_end_panics() {
        crate::test_support::cheap_panic_hook_under_miri();
        let mut a = Bitmap::empty();
        let mut writer = SplitWriter::new(64, [&mut a]);
        writer.push([1]);
        writer.push([2]);
    }

    #[test]
    #[should_panic(expected = "SplitWriter input 1 has 1 words, not 2")]
    fn inputs_are_whole_bitmaps() {
        crate::test_support::cheap_panic_hook_under_miri();
        let (mut a, mut b) = (Bitmap::empty(), Bitmap::empty());
        let mut writer = SplitWriter::new(128, [&mut a, &mut b]);
        writer.split_by_tables(&[&[0, 0], &[0]], &[0b11, 0b11], 1);
    }
}
