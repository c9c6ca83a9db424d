//! The word-slice helpers of the bit-move loops: reading bits past a
//! slice's end as 0 ([`word`], [`bits_from`], [`low_bits`]), writing runs of
//! bits front to back ([`BitWriter`]), and the positions of a periodic set
//! within successive words ([`Periodic`]).

/// The mask of the low `n` bits, `n <= 64`.
#[inline(always)]
pub(crate) const fn low_bits(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1 << n) - 1 }
}

/// Word `i` of `words`, 0 past the end.
#[inline(always)]
pub(super) fn word(words: &[u64], i: usize) -> u64 {
    words.get(i).copied().unwrap_or(0)
}

/// The 64 bits of `words` from bit `start` (bits past the end read 0).
#[inline(always)]
pub(crate) fn bits_from(words: &[u64], start: usize) -> u64 {
    let (i, offset) = (start / 64, start % 64);
    let low = word(words, i) >> offset;
    if offset == 0 { low } else { low | word(words, i + 1) << (64 - offset) }
}

/// Writes runs of bits into a word slice front to back: words it passes
/// are overwritten whole, except that the bits below the starting bit of
/// the first word are kept. Anything past the slice's end is dropped.
pub(super) struct BitWriter<'d> {
    dst: &'d mut [u64],
    word: usize,
    bit: u32,
    acc: u64,
}

impl<'d> BitWriter<'d> {
    #[inline(always)]
    pub(super) fn new(dst: &'d mut [u64], start: usize) -> Self {
        let (word, bit) = (start / 64, (start % 64) as u32);
        let acc = dst.get(word).map_or(0, |&w| w & low_bits(bit));
        BitWriter { dst, word, bit, acc }
    }

    /// Appends the low `n <= 64` bits of `value` (its other bits clear).
    #[inline(always)]
    pub(super) fn push(&mut self, value: u64, n: u32) {
        if n == 0 {
            return;
        }
        self.acc |= value << self.bit;
        let end = self.bit + n;
        if end >= 64 {
            if let Some(w) = self.dst.get_mut(self.word) {
                *w = self.acc;
            }
            self.word += 1;
            self.acc = if self.bit == 0 { 0 } else { value >> (64 - self.bit) };
            self.bit = end - 64;
        } else {
            self.bit = end;
        }
    }

    /// Whether every further bit would be dropped.
    #[inline(always)]
    pub(super) fn is_full(&self) -> bool {
        self.word >= self.dst.len()
    }

    /// Stores the partly filled last word (its bits past the run cleared).
    #[inline(always)]
    pub(super) fn finish(self) {
        if self.bit > 0
            && let Some(w) = self.dst.get_mut(self.word)
        {
            *w = self.acc;
        }
    }
}

/// The positions of a periodic set (`phase`, `phase + period`, …) within
/// successive words: yields, for each word, the mask of its positions.
#[derive(Clone, Copy)]
pub(super) struct Periodic {
    period: usize,
    /// Positions `0, period, 2·period, …` below 64 (for `period < 64`).
    pattern: u64,
    /// The first position at or after the current word's start, relative to
    /// that start (may be 64 or more when a word holds none).
    next: usize,
}

impl Periodic {
    #[inline(always)]
    pub(super) fn new(period: usize, phase: usize) -> Self {
        let mut pattern = 0u64;
        if period < 64 {
            let mut p = 0;
            while p < 64 {
                pattern |= 1 << p;
                p += period;
            }
        }
        Periodic { period, pattern, next: phase }
    }

    /// The mask of the current word, then moves to the next word.
    #[inline(always)]
    pub(super) fn advance(&mut self) -> u64 {
        if self.next >= 64 {
            self.next -= 64;
            return 0;
        }
        if self.period >= 64 {
            let mask = 1 << self.next;
            self.next = self.next + self.period - 64;
            return mask;
        }
        let mask = self.pattern << self.next;
        let count = mask.count_ones() as usize;
        self.next = self.next + count * self.period - 64;
        mask
    }

    /// Skips whole words that hold no position, returning how many.
    #[inline(always)]
    pub(super) fn skip_empty(&mut self) -> usize {
        let skipped = self.next / 64;
        self.next %= 64;
        skipped
    }
}
