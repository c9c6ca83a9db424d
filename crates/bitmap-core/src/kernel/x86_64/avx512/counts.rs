//! The AVX-512 counts: `vpopcntq` counts each lane in one instruction, so
//! four plain accumulators (no Harley–Seal tree), the loop aligned to a
//! cache line, the tail one masked load.

use core::arch::x86_64::*;
use core::marker::PhantomData;

use super::lanes::{W, first_lanes, load, words_to_line};
use crate::kernel::generic::{And, AndNot, BinaryOp, Or, Xor};
use crate::kernel::vector::Vector;

/// What a count reads: one slice, or a binary operation over two.
trait Operand: Copy {
    /// Words `i .. i + 8`, or with `TAIL` only the lanes of `mask`; lanes
    /// not loaded count as zero bits.
    ///
    /// # Safety
    /// The words loaded are within the slices; the CPU supports AVX512F.
    unsafe fn vector<const TAIL: bool>(self, i: usize, mask: __mmask8) -> __m512i;
    /// The address of word 0 of the (first) slice, which the loop aligns to.
    fn first(self) -> *const u64;
}

/// The words of one slice.
#[derive(Clone, Copy)]
struct One(*const u64);

impl Operand for One {
    #[inline(always)]
    unsafe fn vector<const TAIL: bool>(self, i: usize, mask: __mmask8) -> __m512i {
        // SAFETY: the caller keeps the lanes loaded within the slice.
        unsafe { load::<TAIL>(self.0.add(i), mask) }
    }
    #[inline(always)]
    fn first(self) -> *const u64 {
        self.0
    }
}

/// `O` over two slices. Lanes not loaded are zero in both, and every
/// [`BinaryOp`] maps two zeros to zero, so they still count as zero bits.
#[derive(Clone, Copy)]
struct Two<O>(*const u64, *const u64, PhantomData<O>);

impl<O: BinaryOp> Two<O> {
    #[inline(always)]
    fn new(a: &[u64], b: &[u64]) -> Self {
        Two(a.as_ptr(), b.as_ptr(), PhantomData)
    }
}

impl<O: BinaryOp> Operand for Two<O> {
    #[inline(always)]
    unsafe fn vector<const TAIL: bool>(self, i: usize, mask: __mmask8) -> __m512i {
        // SAFETY: the caller keeps the lanes loaded within both slices and
        // guarantees AVX512F.
        unsafe { O::vector(load::<TAIL>(self.0.add(i), mask), load::<TAIL>(self.1.add(i), mask)) }
    }
    #[inline(always)]
    fn first(self) -> *const u64 {
        self.0
    }
}

/// The set bits of the first `n` words of `src`: the words before the
/// first slice's first cache-line boundary as one masked vector, then a
/// `vpopcntq` per vector into four accumulators (four independent `vpaddq`
/// chains), the tail as one masked vector.
///
/// The head makes the main loop's loads of the first slice (and of the
/// second, where it has the same alignment, as bitmaps do: `Words` aligns
/// them to a line) line-aligned. Zen 4 splits a 512-bit load into two
/// 256-bit halves, and one that crosses a line costs about twice as much:
/// at 16 bytes past a line, where `malloc` puts a `Vec`, every vector has
/// a crossing half, and `and_popcount` of 8 KiB took 120 ns unaligned
/// against 84 ns aligned.
///
/// # Safety
/// `src` is valid for `n` words; the CPU supports the kernel's features.
#[inline(always)]
unsafe fn count<S: Operand>(src: S, n: usize) -> u64 {
    let full = first_lanes(W);
    // SAFETY: every vector read is within the first `n` words (checked by
    // the head's `min`, the loop conditions, the tail by its mask); the
    // caller guarantees the features.
    unsafe {
        let mut acc = [__m512i::zero(); 4];
        // Only when the main loop runs: a shorter input is one or two
        // masked vectors either way.
        let mut i = if n >= 4 * W { words_to_line(src.first()) } else { 0 };
        if i > 0 {
            acc[2] = src.vector::<true>(0, first_lanes(i)).popcount_lanes();
        }
        while i + 4 * W <= n {
            for (k, acc) in acc.iter_mut().enumerate() {
                *acc = acc.add_lanes(src.vector::<false>(i + k * W, full).popcount_lanes());
            }
            i += 4 * W;
        }
        while i + W <= n {
            acc[0] = acc[0].add_lanes(src.vector::<false>(i, full).popcount_lanes());
            i += W;
        }
        if i < n {
            acc[1] = acc[1].add_lanes(src.vector::<true>(i, first_lanes(n - i)).popcount_lanes());
        }
        acc[0].add_lanes(acc[1]).add_lanes(acc[2].add_lanes(acc[3])).sum_lanes()
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
pub(super) unsafe fn popcount(words: &[u64]) -> u64 {
    // SAFETY: `One` covers `words.len()` words; the caller guarantees the
    // CPU features this function is compiled for.
    unsafe { count(One(words.as_ptr()), words.len()) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
pub(super) unsafe fn and_popcount(a: &[u64], b: &[u64]) -> u64 {
    // SAFETY: the pair is read over the shorter length; the caller
    // guarantees the CPU features.
    unsafe { count(Two::<And>::new(a, b), a.len().min(b.len())) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
pub(super) unsafe fn or_popcount(a: &[u64], b: &[u64]) -> u64 {
    // SAFETY: as `and_popcount`.
    unsafe { count(Two::<Or>::new(a, b), a.len().min(b.len())) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
pub(super) unsafe fn xor_popcount(a: &[u64], b: &[u64]) -> u64 {
    // SAFETY: as `and_popcount`.
    unsafe { count(Two::<Xor>::new(a, b), a.len().min(b.len())) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
pub(super) unsafe fn and_not_popcount(a: &[u64], b: &[u64]) -> u64 {
    // SAFETY: as `and_popcount`.
    unsafe { count(Two::<AndNot>::new(a, b), a.len().min(b.len())) }
}

// ---------------------------------------------------------------------------
