//! The bitmap's word storage: a growable list of `u64` words whose first
//! word starts a 64-byte cache line.
//!
//! # Why not a plain `Vec<u64>`
//!
//! A `Vec<u64>` is 8- or 16-byte aligned, so a 32-byte AVX2 load of it
//! straddles two cache lines every other time, and a two-operand kernel
//! (`a &= b`, the plan's `out = lookup & !claimed`) pays for split loads
//! and stores on both operands. Measured on this project's AVX2 machine
//! (`or_assign` on 8 KiB bitmaps that sit in L1): 79 ns with both operands
//! line-aligned, 125 ns with both at 16 bytes past a line; the first-wins
//! plan kernel over 3 × 4,096 words: 1.84 µs aligned, 2.07 µs not.
//!
//! # Why not a `Vec` of 64-byte-aligned lines
//!
//! That was the first version: a `#[repr(align(64))]` line type gives the
//! alignment through the type system. But an allocation aligned above 16
//! bytes goes through glibc's `memalign`, which splits and frees chunks
//! around the aligned one: allocating a 1,024-key plan (three 128-byte
//! bitmaps) went from 143 ns to 240 ns, and the seed's algorithm over our
//! bitmaps, which allocates a dozen small ones, from 220 ns to 555 ns.
//!
//! So the words live in an ordinary `Vec<u64>` with up to seven words of
//! slack in front: `buf[start..]` are the words, and `start` is chosen so
//! that they begin on a line. It costs at most 56 bytes per bitmap, a copy
//! of the words when the buffer grows (as a `Vec` copies anyway), and no
//! `unsafe`.

use core::hash::{Hash, Hasher};
use core::mem::MaybeUninit;
use core::ops::{Deref, DerefMut};

/// The alignment the words start at: one cache line.
const LINE_BYTES: usize = 64;

/// Words of slack a buffer needs so that a line boundary falls inside it:
/// the allocator aligns a `u64` buffer to at least 8 bytes.
const SLACK_WORDS: usize = LINE_BYTES / size_of::<u64>() - 1;

/// Buffers up to this many words are allocated and then cleared, larger ones
/// zeroed by the allocator.
///
/// glibc serves `calloc` neither from its per-thread cache nor without a
/// `memset` for a recycled chunk: for a few hundred bytes, allocating and
/// then clearing is about twice as fast (measured: 3 × 128 bytes, 97 ns
/// against 56 ns). Past 128 KiB (glibc's default `mmap` threshold), `calloc`
/// returns fresh pages that are zero already, which no clearing can beat.
const ZERO_BY_FILL_MAX_WORDS: usize = (128 << 10) / size_of::<u64>();

/// How many words past `buffer` (the start of an allocation with room for
/// [`SLACK_WORDS`] words before the words proper) the first line boundary is.
fn line_start(buffer: *const u64) -> usize {
    // `align_offset` may give up (`usize::MAX`); the words are then merely
    // unaligned, which is slower but correct.
    let offset = buffer.align_offset(LINE_BYTES);
    if offset <= SLACK_WORDS { offset } else { 0 }
}

/// A growable list of `u64` words that starts on a cache line.
///
/// Dereferences to the words (`&[u64]` / `&mut [u64]`); equality and hashing
/// are those of that slice, so they agree with a `Vec<u64>` of the same
/// words.
///
/// **Invariant:** the words are `buf[start..]`, and `buf.as_ptr() + start`
/// is 64-byte aligned whenever `buf` has allocated (an empty, unallocated
/// `Words` has `start == 0`).
pub(crate) struct Words {
    /// Written directly only by `kernel::first_wins_overwrite` and
    /// `kernel::split_by_tables_append`, which set the length after a
    /// kernel has written every new word.
    pub(crate) buf: Vec<u64>,
    start: usize,
}

impl Words {
    /// No words, no allocation.
    pub(crate) const fn new() -> Words {
        Words { buf: Vec::new(), start: 0 }
    }

    /// Takes `buf` (empty, with its capacity) and puts the words' start on
    /// the first line boundary inside it.
    fn aligned_in(mut buf: Vec<u64>) -> Words {
        debug_assert!(buf.is_empty());
        let start = if buf.capacity() > SLACK_WORDS { line_start(buf.as_ptr()) } else { 0 };
        buf.resize(start, 0);
        Words { buf, start }
    }

    /// `len` zero words.
    pub(crate) fn zeroed(len: usize) -> Words {
        if len <= ZERO_BY_FILL_MAX_WORDS {
            let mut words = Words::with_capacity(len);
            words.buf.resize(words.start + len, 0);
            return words;
        }
        // One zeroed allocation: fresh pages from `mmap`, which need no
        // clearing; then the slack is cut off both ends.
        let mut buf = vec![0; len + SLACK_WORDS];
        let start = line_start(buf.as_ptr());
        buf.truncate(start + len);
        Words { buf, start }
    }

    /// `len` zero words, or `None` if the allocation fails (instead of
    /// aborting the process, as `zeroed` would).
    ///
    /// Unlike `zeroed`, large buffers are cleared by a write rather than
    /// by `calloc`: std has no fallible zeroed allocation without `unsafe`,
    /// which stays in `kernel/`. Callers that take sizes from untrusted
    /// input (the Python binding's constructor) pay that for not aborting.
    pub(crate) fn try_zeroed(len: usize) -> Option<Words> {
        if len == 0 {
            return Some(Words::new());
        }
        let mut buf = Vec::new();
        buf.try_reserve_exact(len.checked_add(SLACK_WORDS)?).ok()?;
        let start = line_start(buf.as_ptr());
        buf.resize(start + len, 0);
        Some(Words { buf, start })
    }

    /// No words, with room for `capacity` of them.
    pub(crate) fn with_capacity(capacity: usize) -> Words {
        if capacity == 0 {
            return Words::new();
        }
        Words::aligned_in(Vec::with_capacity(capacity + SLACK_WORDS))
    }

    /// A copy of `words`.
    pub(crate) fn from_slice(words: &[u64]) -> Words {
        let mut storage = Words::with_capacity(words.len());
        storage.buf.extend_from_slice(words);
        storage
    }

    /// How many words fit without reallocating.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.buf.capacity() - self.start
    }

    /// The words.
    #[inline]
    pub(crate) fn as_slice(&self) -> &[u64] {
        &self.buf[self.start..]
    }

    /// The words, mutably.
    #[inline]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u64] {
        &mut self.buf[self.start..]
    }

    /// Makes room for `additional` more words.
    ///
    /// The check is inline and the growth out of line: a reused buffer
    /// (every plan after the first) only pays the comparison, which at a
    /// request's size was a sixth of a plan's bookkeeping as a call.
    #[inline]
    pub(crate) fn reserve(&mut self, additional: usize) {
        if self.buf.capacity() - self.buf.len() < additional {
            self.grow(additional);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, additional: usize) {
        // A `Vec` would reallocate wherever the allocator likes; moving to
        // a new buffer keeps the words on a line. Doubling keeps pushes
        // amortised O(1).
        let len = self.len();
        let capacity = len.saturating_add(additional).max(2 * self.capacity());
        let mut grown = Words::aligned_in(Vec::with_capacity(capacity.saturating_add(SLACK_WORDS)));
        grown.buf.extend_from_slice(self.as_slice());
        *self = grown;
    }

    /// Appends one word.
    #[inline]
    pub(crate) fn push(&mut self, word: u64) {
        self.reserve(1);
        self.buf.push(word);
    }

    /// Appends a copy of `words`.
    pub(crate) fn extend_from_slice(&mut self, words: &[u64]) {
        self.reserve(words.len());
        self.buf.extend_from_slice(words);
    }

    /// Removes every word (keeps the buffer).
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.buf.truncate(self.start);
    }

    /// Keeps the first `len` words (no effect past the current length); the
    /// buffer stays where it is.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.buf.truncate(self.start + len);
    }

    /// Makes the length `len`; words gained are zero.
    #[inline]
    pub(crate) fn resize_zeroed(&mut self, len: usize) {
        // The same length, a reused buffer's usual case, returns before
        // `Vec::resize`'s call.
        if self.len() != len {
            self.reserve(len.saturating_sub(self.len()));
            self.buf.resize(self.start + len, 0);
        }
    }

    /// Removes every word and returns room for `len` new ones, right after
    /// the (now empty) words: the spare capacity a kernel writes into before
    /// `kernel::first_wins_overwrite` sets the length. Nothing is zeroed.
    #[inline]
    pub(crate) fn spare_for_overwrite(&mut self, len: usize) -> &mut [MaybeUninit<u64>] {
        self.clear();
        self.spare_after(len)
    }

    /// Room for `len` new words right after the words (which stay), for a
    /// kernel to write before `kernel::split_by_tables_append` sets the
    /// length. Nothing is zeroed.
    #[inline]
    pub(crate) fn spare_after(&mut self, len: usize) -> &mut [MaybeUninit<u64>] {
        self.reserve(len);
        &mut self.buf.spare_capacity_mut()[..len]
    }

    /// The words as a `Vec<u64>` (a copy).
    pub(crate) fn to_vec(&self) -> Vec<u64> {
        self.as_slice().to_vec()
    }
}

impl Deref for Words {
    type Target = [u64];

    #[inline]
    fn deref(&self) -> &[u64] {
        self.as_slice()
    }
}

impl DerefMut for Words {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u64] {
        self.as_mut_slice()
    }
}

impl Clone for Words {
    fn clone(&self) -> Words {
        // `Vec::clone` would not keep the words on a line.
        Words::from_slice(self)
    }

    fn clone_from(&mut self, source: &Words) {
        self.clear();
        self.extend_from_slice(source);
    }
}

impl PartialEq for Words {
    #[inline]
    fn eq(&self, other: &Words) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Words {}

impl Hash for Words {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl FromIterator<u64> for Words {
    fn from_iter<I: IntoIterator<Item = u64>>(iter: I) -> Words {
        let iter = iter.into_iter();
        let mut words = Words::with_capacity(iter.size_hint().0);
        for word in iter {
            words.push(word);
        }
        words
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_line_aligned(words: &Words) -> bool {
        words.as_slice().as_ptr().align_offset(64) == 0
    }

    #[test]
    fn every_buffer_starts_on_a_line() {
        for len in [1, 7, 8, 9, 100, 1000] {
            assert!(is_line_aligned(&Words::zeroed(len)), "{len}");
            assert!(is_line_aligned(&Words::from_slice(&vec![1; len])), "{len}");
            let collected: Words = (0..len as u64).collect();
            assert!(is_line_aligned(&collected), "{len}");
            assert!(is_line_aligned(&collected.clone()), "{len}");
        }
    }

    #[test]
    fn zeroed_on_both_sides_of_the_fill_threshold() {
        for len in [0, 1, 9, ZERO_BY_FILL_MAX_WORDS, ZERO_BY_FILL_MAX_WORDS + 1] {
            // Recycled memory first, so a missed clear would show.
            drop(Words::from_slice(&vec![u64::MAX; len]));
            let words = Words::zeroed(len);
            assert_eq!(words.len(), len);
            assert!(words.iter().all(|&w| w == 0), "{len}");
            assert!(len == 0 || is_line_aligned(&words), "{len}");
        }
    }

    #[test]
    fn behaves_like_a_vec() {
        let mut words = Words::with_capacity(3);
        let mut model: Vec<u64> = Vec::new();
        for step in 0..40u64 {
            match step % 5 {
                0 | 1 => {
                    words.push(step);
                    model.push(step);
                }
                2 => {
                    words.extend_from_slice(&[step; 9]);
                    model.extend_from_slice(&[step; 9]);
                }
                3 => {
                    let len = (step as usize * 7) % 23;
                    words.resize_zeroed(len);
                    model.resize(len, 0);
                }
                _ => {
                    // Shrinking then growing exposes padding: it must read as
                    // zero through `resize_zeroed`.
                    words.as_mut_slice().fill(u64::MAX);
                    model.fill(u64::MAX);
                    let len = model.len() / 2;
                    words.resize_zeroed(len);
                    model.truncate(len);
                    words.resize_zeroed(len + 10);
                    model.resize(len + 10, 0);
                }
            }
            assert_eq!(words.as_slice(), model.as_slice(), "step {step}");
            assert_eq!(words.as_slice().as_ptr().align_offset(64), 0, "step {step}");
            assert!(words.capacity() >= words.len());
        }
        assert_eq!(words.to_vec(), model);
        words.clear();
        assert!(words.is_empty());
    }

    #[test]
    fn equality_and_hash_follow_the_words() {
        use std::collections::hash_map::DefaultHasher;
        let hash = |value: &dyn Fn(&mut DefaultHasher)| {
            let mut hasher = DefaultHasher::new();
            value(&mut hasher);
            hasher.finish()
        };
        let mut a = Words::from_slice(&[1, 2, 3]);
        let b: Words = [1, 2, 3].into_iter().collect();
        assert!(a == b);
        assert_eq!(hash(&|h| a.hash(h)), hash(&|h| vec![1u64, 2, 3].hash(h)));
        a.push(4);
        a.resize_zeroed(3);
        assert!(a == b, "padding past the length is not compared");
        let mut c = Words::zeroed(0);
        c.clone_from(&a);
        assert!(c == a);
    }
}
