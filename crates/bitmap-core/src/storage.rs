//! The bitmap's word storage: a growable list of `u64` words whose first
//! word starts a 64-byte cache line.
//!
//! # Why not `Vec<u64>`
//!
//! A `Vec<u64>` is 8- or 16-byte aligned, so a 32-byte AVX2 load of it
//! straddles two cache lines every other time, and a two-operand kernel
//! (`a &= b`, the plan's `out = lookup & !claimed`) pays for split loads
//! and stores on both operands. Measured on this project's AVX2 machine
//! (`or_assign` on 8 KiB bitmaps that sit in L1): 79 ns with both operands
//! line-aligned, 125 ns with both at 16 bytes past a line; the first-wins
//! plan kernel over 3 × 4,096 words: 1.84 µs aligned, 2.07 µs not. Storing
//! whole lines makes every bitmap aligned, whoever allocated it, and costs
//! at most 56 bytes of padding per bitmap.
//!
//! The words are kept in `Line`s, a `#[repr(C, align(64))]` array of eight
//! words, so the alignment comes from the type system and the word view is
//! a plain `bytemuck` cast: no `unsafe` here. Only the first
//! `len` words of the lines are the bitmap's; the rest of the last line is
//! padding whose contents nobody reads (it is always initialised, as every
//! `Line` is, but not necessarily zero).

use core::hash::{Hash, Hasher};
use core::ops::{Deref, DerefMut};

use bytemuck::{Pod, Zeroable};

/// Words per cache line.
pub(crate) const LINE_WORDS: usize = 8;

/// One 64-byte cache line of words.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
pub(crate) struct Line([u64; LINE_WORDS]);

const _: () = assert!(size_of::<Line>() == 64 && align_of::<Line>() == 64);

/// The number of lines that hold `words` words.
#[inline]
const fn lines_for(words: usize) -> usize {
    words.div_ceil(LINE_WORDS)
}

/// A growable list of `u64` words, starting on a cache line.
///
/// Dereferences to the words in use (`&[u64]` / `&mut [u64]`); equality and
/// hashing are those of that slice, so they agree with a `Vec<u64>` of the
/// same words.
///
/// **Invariant:** `lines.len() == len.div_ceil(LINE_WORDS)`.
pub(crate) struct Words {
    lines: Vec<Line>,
    /// Words in use.
    len: usize,
}

impl Words {
    /// `len` zero words.
    pub(crate) fn zeroed(len: usize) -> Words {
        // Not `alloc_zeroed`: for an alignment above 16 bytes the system
        // allocator zeroes with a memset anyway, which this is.
        Words { lines: vec![Line::zeroed(); lines_for(len)], len }
    }

    /// No words, with room for `capacity` of them.
    pub(crate) fn with_capacity(capacity: usize) -> Words {
        Words { lines: Vec::with_capacity(lines_for(capacity)), len: 0 }
    }

    /// A copy of `words`.
    pub(crate) fn from_slice(words: &[u64]) -> Words {
        let mut storage = Words::with_capacity(words.len());
        storage.extend_from_slice(words);
        storage
    }

    /// How many words fit without reallocating.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.lines.capacity() * LINE_WORDS
    }

    /// The words in use.
    #[inline]
    pub(crate) fn as_slice(&self) -> &[u64] {
        &bytemuck::cast_slice::<Line, u64>(&self.lines)[..self.len]
    }

    /// The words in use, mutably.
    #[inline]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u64] {
        &mut bytemuck::cast_slice_mut::<Line, u64>(&mut self.lines)[..self.len]
    }

    /// Makes room for `additional` more words.
    pub(crate) fn reserve(&mut self, additional: usize) {
        let needed = lines_for(self.len.saturating_add(additional));
        self.lines.reserve(needed.saturating_sub(self.lines.len()));
    }

    /// Appends one word.
    #[inline]
    pub(crate) fn push(&mut self, word: u64) {
        let offset = self.len % LINE_WORDS;
        if offset == 0 {
            self.lines.push(Line::zeroed());
        }
        let last = self.lines.len() - 1;
        self.lines[last].0[offset] = word;
        self.len += 1;
    }

    /// Appends a copy of `words`.
    pub(crate) fn extend_from_slice(&mut self, mut words: &[u64]) {
        // The padding of the last line first, then whole lines, then a
        // partial one: every word is written once.
        let offset = self.len % LINE_WORDS;
        if offset != 0 {
            let taken = (LINE_WORDS - offset).min(words.len());
            let last = self.lines.len() - 1;
            self.lines[last].0[offset..offset + taken].copy_from_slice(&words[..taken]);
            self.len += taken;
            words = &words[taken..];
        }
        let (whole, rest) = words.as_chunks::<LINE_WORDS>();
        self.lines.extend(whole.iter().map(|&line| Line(line)));
        if !rest.is_empty() {
            let mut line = Line::zeroed();
            line.0[..rest.len()].copy_from_slice(rest);
            self.lines.push(line);
        }
        self.len += words.len();
    }

    /// Removes every word (keeps the buffer).
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.lines.clear();
        self.len = 0;
    }

    /// Makes the length `len`; words gained are zero.
    pub(crate) fn resize_zeroed(&mut self, len: usize) {
        let old = self.len;
        // Lines added by `resize` are zero already; only the padding of the
        // old last line that the new length takes in may hold old words.
        let reused_end = (lines_for(old) * LINE_WORDS).min(len.max(old));
        self.lines.resize(lines_for(len), Line::zeroed());
        self.len = len;
        self.as_mut_slice()[old.min(len)..reused_end.min(len)].fill(0);
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
        // Exactly the lines in use, not the source's spare capacity.
        Words { lines: self.lines.clone(), len: self.len }
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
            assert_eq!(words.lines.len(), lines_for(words.len), "step {step}");
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
