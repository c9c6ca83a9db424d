//! The AVX-512 kernel: 8 words per `__m512i` register, with `vpopcntq`
//! (AVX512-VPOPCNTDQ) counts, `vpternlogq` three-input logic and `k`-mask
//! loads and stores for the tails.
//!
//! Most operations have their own loop here rather than the generic one,
//! because AVX-512 changes the algorithm, not just the register width:
//!
//! - counts: `vpopcntq` counts each lane in one instruction, so the
//!   Harley–Seal carry-save tree that the AVX2 kernel needs to amortise its
//!   `vpshufb` popcount is pure overhead; four plain accumulators instead.
//! - `first_wins`: inputs are taken in pairs, `out[a + 1] = in[a + 1] &
//!   !(claimed | in[a])` and `claimed |= in[a] | in[a + 1]` are one
//!   `vpternlogq` each, which saves an instruction per pair and halves the
//!   dependency chain through `claimed`.
//! - `split_by_tables`: each node of the multiplexer tree is one
//!   `vpternlogq` bitwise select instead of two or three operations.
//! - `class_counts`: each intersection is one AND of a smaller one (sets in
//!   ascending order), then a `vpopcntq` per set.
//! - tails: the last `n % 8` words are one masked load (`vmovdqu64` with a
//!   `k` mask, lanes past the end neither read nor written) instead of a
//!   scalar loop of up to seven words.
//!
//! The in-place operations (`and_assign` and the others, `not_assign`),
//! their forms into a new buffer (`and_uninit` and the others, which the
//! 512-bit loop did not speed up either: `a & b` of 262,144 bits from
//! Python, 1.08–1.23 µs against 1.02–1.12 µs),
//! `union_many`, the searches and the bit moves take the AVX2 kernel's
//! functions: each
//! was timed against AVX2 on Zen 4 and did not gain, or lost (see the
//! table at the bottom and `docs/PERFORMANCE.md`). An operation added to
//! the table later and not listed there runs the generic loop over the
//! [`Vector`] impl below.
//!
//! # Miri
//!
//! Miri interprets every intrinsic used here except `vpternlogq`, which
//! lowers to an LLVM intrinsic Miri does not implement. Under Miri,
//! [`ternlog`] therefore evaluates the same truth table with AND/OR/NOT
//! (see `ternlog_emulated`), so Miri checks every memory access of this
//! kernel and every truth-table constant, though not the `vpternlogq`
//! instruction itself.

use core::arch::x86_64::*;
use core::marker::PhantomData;
use core::mem::MaybeUninit;

use crate::kernel::classes::exact_from_common;
use crate::kernel::generic::{And, AndNot, BinaryOp, Or, Xor};
use crate::kernel::vector::Vector;

/// Whether this CPU can run the AVX-512 kernel: AVX512F (the 512-bit
/// registers and `k` masks), AVX512BW and AVX512VL (checked because every
/// CPU that has VPOPCNTDQ has them, and the build enables them), and
/// AVX512-VPOPCNTDQ (`vpopcntq`). AVX2 and popcnt are implied by those on
/// every real CPU, but the build enables them too, so they are checked too.
#[inline]
pub(crate) fn is_available() -> bool {
    std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vl")
        && std::is_x86_feature_detected!("avx512vpopcntdq")
        && std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("popcnt")
}

/// Words per register.
const W: usize = 8;

// SAFETY (every method below): each intrinsic requires AVX512F or
// AVX512-VPOPCNTDQ, which the `Vector` contract makes the caller guarantee;
// pointer intrinsics are the unaligned forms and the caller guarantees 8
// valid words.
impl Vector for __m512i {
    const WORDS: usize = W;

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm512_setzero_si512() }
    }
    #[inline(always)]
    unsafe fn splat(word: u64) -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm512_set1_epi64(word as i64) }
    }
    #[inline(always)]
    unsafe fn load(ptr: *const u64) -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm512_loadu_si512(ptr.cast()) }
    }
    #[inline(always)]
    unsafe fn store(self, ptr: *mut u64) {
        // SAFETY: see the impl comment.
        unsafe { _mm512_storeu_si512(ptr.cast(), self) }
    }
    #[inline(always)]
    unsafe fn and(self, other: Self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm512_and_si512(self, other) }
    }
    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm512_or_si512(self, other) }
    }
    #[inline(always)]
    unsafe fn xor(self, other: Self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm512_xor_si512(self, other) }
    }
    #[inline(always)]
    unsafe fn and_not(self, other: Self) -> Self {
        // `vpandnq` computes `!first & second`.
        // SAFETY: see the impl comment.
        unsafe { _mm512_andnot_si512(other, self) }
    }
    #[inline(always)]
    unsafe fn not(self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm512_xor_si512(self, _mm512_set1_epi64(-1)) }
    }
    #[inline(always)]
    unsafe fn is_zero(self) -> bool {
        // SAFETY: see the impl comment.
        unsafe { _mm512_test_epi64_mask(self, self) == 0 }
    }
    #[inline(always)]
    unsafe fn popcount_lanes(self) -> Self {
        // SAFETY: see the impl comment (AVX512-VPOPCNTDQ).
        unsafe { _mm512_popcnt_epi64(self) }
    }
    #[inline(always)]
    unsafe fn add_lanes(self, other: Self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm512_add_epi64(self, other) }
    }
    #[inline(always)]
    unsafe fn sum_lanes(self) -> u64 {
        // SAFETY: see the impl comment.
        unsafe { _mm512_reduce_add_epi64(self) as u64 }
    }
}

// ---------------------------------------------------------------------------
// Three-input logic
// ---------------------------------------------------------------------------

/// `vpternlogq` truth tables: bit `(a << 2) | (b << 1) | c` of the constant
/// is the result for input bits `a`, `b`, `c`.
mod truth_table {
    /// `a & !(b | c)`: an input's bits that neither `b` nor `c` claimed.
    pub(super) const AND_NOT_EITHER: i32 = 0x10;
    /// `a | b | c`.
    pub(super) const OR3: i32 = 0xFE;
    /// `if a { b } else { c }`, bit by bit: one node of a multiplexer.
    pub(super) const SELECT: i32 = 0xCA;
}

/// The bitwise function of three words whose truth table is `imm`, as
/// `vpternlogq` defines it: the OR of the minterms whose bits are set. The
/// reference for the truth-table constants, and what `ternlog_emulated`
/// computes lane by lane under Miri.
#[cfg(test)]
fn ternlog_word(imm: i32, a: u64, b: u64, c: u64) -> u64 {
    let pick = |word: u64, set: bool| if set { word } else { !word };
    (0..8)
        .filter(|index| imm >> index & 1 == 1)
        .map(|index| pick(a, index & 4 != 0) & pick(b, index & 2 != 0) & pick(c, index & 1 != 0))
        .fold(0, |result, term| result | term)
}

/// `vpternlogq` with truth table `IMM` (see [`truth_table`]).
///
/// # Safety
/// The CPU supports AVX512F.
#[inline(always)]
unsafe fn ternlog<const IMM: i32>(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
    #[cfg(not(miri))]
    // SAFETY: the caller guarantees AVX512F.
    return unsafe { _mm512_ternarylogic_epi64::<IMM>(a, b, c) };
    #[cfg(miri)]
    // SAFETY: the caller guarantees AVX512F.
    return unsafe { ternlog_emulated::<IMM>(a, b, c) };
}

/// [`ternlog`] for Miri, which does not implement `vpternlogq`: the OR of
/// the minterms whose bits are set in `IMM`, as `ternlog_word` computes
/// it, with AND, OR and XOR (which Miri does implement).
///
/// # Safety
/// The CPU supports AVX512F.
#[cfg(miri)]
#[inline(always)]
unsafe fn ternlog_emulated<const IMM: i32>(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
    // SAFETY: the caller guarantees AVX512F.
    unsafe {
        let pick = |v: __m512i, set: bool| if set { v } else { v.not() };
        let mut result = __m512i::zero();
        for index in 0..8 {
            if IMM >> index & 1 == 1 {
                let term = pick(a, index & 4 != 0).and(pick(b, index & 2 != 0)).and(pick(c, index & 1 != 0));
                result = result.or(term);
            }
        }
        result
    }
}

// ---------------------------------------------------------------------------
// Masked loads and stores
// ---------------------------------------------------------------------------

/// The `k` mask of the first `n` lanes, `n` at most 8.
#[inline(always)]
fn first_lanes(n: usize) -> __mmask8 {
    debug_assert!(n <= W);
    ((1u16 << n) - 1) as __mmask8
}

/// Loads 8 words from `ptr`, or with `TAIL` only the lanes of `mask`
/// (the others are zero and their memory is not read).
///
/// # Safety
/// The words of the lanes loaded are readable; the CPU supports AVX512F.
#[inline(always)]
unsafe fn load<const TAIL: bool>(ptr: *const u64, mask: __mmask8) -> __m512i {
    // SAFETY: the caller guarantees the lanes read and AVX512F; masked-off
    // lanes are not accessed.
    unsafe { if TAIL { _mm512_maskz_loadu_epi64(mask, ptr.cast()) } else { _mm512_loadu_si512(ptr.cast()) } }
}

/// Stores 8 words to `ptr`, or with `TAIL` only the lanes of `mask` (the
/// memory of the others is not touched).
///
/// # Safety
/// The words of the lanes stored are writable; the CPU supports AVX512F.
#[inline(always)]
unsafe fn store<const TAIL: bool>(ptr: *mut u64, mask: __mmask8, v: __m512i) {
    // SAFETY: the caller guarantees the lanes written and AVX512F; masked-off
    // lanes are not accessed.
    unsafe { if TAIL { _mm512_mask_storeu_epi64(ptr.cast(), mask, v) } else { _mm512_storeu_si512(ptr.cast(), v) } }
}

// ---------------------------------------------------------------------------
// Counts
// ---------------------------------------------------------------------------

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

/// The words before the first 64-byte boundary at or after `ptr`: at most
/// 7, since words are 8-byte aligned.
#[inline(always)]
fn words_to_line(ptr: *const u64) -> usize {
    (ptr as usize).wrapping_neg() % 64 / 8
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
unsafe fn popcount(words: &[u64]) -> u64 {
    // SAFETY: `One` covers `words.len()` words; the caller guarantees the
    // CPU features this function is compiled for.
    unsafe { count(One(words.as_ptr()), words.len()) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
unsafe fn and_popcount(a: &[u64], b: &[u64]) -> u64 {
    // SAFETY: the pair is read over the shorter length; the caller
    // guarantees the CPU features.
    unsafe { count(Two::<And>::new(a, b), a.len().min(b.len())) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
unsafe fn or_popcount(a: &[u64], b: &[u64]) -> u64 {
    // SAFETY: as `and_popcount`.
    unsafe { count(Two::<Or>::new(a, b), a.len().min(b.len())) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
unsafe fn xor_popcount(a: &[u64], b: &[u64]) -> u64 {
    // SAFETY: as `and_popcount`.
    unsafe { count(Two::<Xor>::new(a, b), a.len().min(b.len())) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
unsafe fn and_not_popcount(a: &[u64], b: &[u64]) -> u64 {
    // SAFETY: as `and_popcount`.
    unsafe { count(Two::<AndNot>::new(a, b), a.len().min(b.len())) }
}

// ---------------------------------------------------------------------------
// Many inputs
// ---------------------------------------------------------------------------

/// One vector of the first-wins split at word `i`: the inputs two at a
/// time, so that the second of a pair does not wait for the first to be
/// added to `claimed`. Three instructions per pair instead of four:
/// `out[a] = in[a] & !claimed`, `out[a + 1] = in[a + 1] & !(claimed |
/// in[a])`, `claimed |= in[a] | in[a + 1]`.
///
/// # Safety
/// Every input and output holds the lanes at `i` that `TAIL`/`mask` select;
/// `inputs` and `outputs` are the same length; the CPU supports the
/// kernel's features.
#[inline(always)]
unsafe fn first_wins_step<const TAIL: bool>(
    inputs: &[&[u64]],
    outputs: &mut [&mut [MaybeUninit<u64>]],
    i: usize,
    mask: __mmask8,
) {
    let m = inputs.len();
    // SAFETY: the caller guarantees the lanes, the features, and that `a`
    // and `a + 1` (below `m`) index both lists.
    unsafe {
        let mut claimed = __m512i::zero();
        let mut a = 0;
        while a + 2 <= m {
            let x = load::<TAIL>(inputs.get_unchecked(a).as_ptr().add(i), mask);
            let y = load::<TAIL>(inputs.get_unchecked(a + 1).as_ptr().add(i), mask);
            store::<TAIL>(outputs.get_unchecked_mut(a).as_mut_ptr().cast::<u64>().add(i), mask, x.and_not(claimed));
            let second = ternlog::<{ truth_table::AND_NOT_EITHER }>(y, claimed, x);
            store::<TAIL>(outputs.get_unchecked_mut(a + 1).as_mut_ptr().cast::<u64>().add(i), mask, second);
            claimed = ternlog::<{ truth_table::OR3 }>(claimed, x, y);
            a += 2;
        }
        if a < m {
            let x = load::<TAIL>(inputs.get_unchecked(a).as_ptr().add(i), mask);
            store::<TAIL>(outputs.get_unchecked_mut(a).as_mut_ptr().cast::<u64>().add(i), mask, x.and_not(claimed));
        }
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
unsafe fn first_wins_uninit(inputs: &[&[u64]], outputs: &mut [&mut [MaybeUninit<u64>]]) {
    let m = inputs.len().min(outputs.len());
    let (inputs, outputs) = (&inputs[..m], &mut outputs[..m]);
    let n = inputs.iter().map(|s| s.len()).chain(outputs.iter().map(|s| s.len())).fold(usize::MAX, usize::min);
    if m == 0 {
        return;
    }
    let mut i = 0;
    // SAFETY: every slice holds at least `n` words and each step covers
    // words below `n` (the loop condition, the tail's mask); both lists
    // have `m` entries; the caller guarantees the features.
    unsafe {
        while i + W <= n {
            first_wins_step::<false>(inputs, outputs, i, first_lanes(W));
            i += W;
        }
        if i < n {
            first_wins_step::<true>(inputs, outputs, i, first_lanes(n - i));
        }
    }
}

/// One vector of [`class_counts_of`] at word `i`: adds the set bits of each
/// non-empty set's intersection to `acc[set]`.
///
/// # Safety
/// Every input holds the lanes at `i` that `TAIL`/`mask` select; the CPU
/// supports the kernel's features.
#[inline(always)]
unsafe fn class_counts_step<const P: usize, const C: usize, const TAIL: bool>(
    src: &[*const u64; P],
    acc: &mut [__m512i; C],
    i: usize,
    mask: __mmask8,
) {
    // SAFETY: the caller guarantees the lanes and the features.
    unsafe {
        // `product[set]`: the AND of the inputs in `set`, each one AND of a
        // smaller set's (without its lowest input) and that input.
        let mut product = [__m512i::zero(); C];
        for (p, src) in src.iter().enumerate() {
            product[1 << p] = load::<TAIL>(src.add(i), mask);
        }
        for set in 1..C {
            let low = set & set.wrapping_neg();
            if set != low {
                product[set] = product[set ^ low].and(product[low]);
            }
            acc[set] = acc[set].add_lanes(product[set].popcount_lanes());
        }
    }
}

/// The class counts of `P` inputs, `C = 2^P` (see
/// [`class_counts`](crate::kernel::class_counts)): for each non-empty set
/// of inputs, the AND of their vectors (each one AND of a smaller set's,
/// computed in ascending order) goes through `vpopcntq` into that set's
/// accumulator; the Möbius transform then turns these intersection counts
/// into class counts. The tail is one masked step (zero lanes are in no
/// intersection).
///
/// # Safety
/// `inputs.len()` is `P`; the CPU supports the kernel's features.
#[inline(always)]
unsafe fn class_counts_of<const P: usize, const C: usize>(inputs: &[&[u64]], counts: &mut [u64]) {
    debug_assert_eq!(C, 1 << P);
    let n = inputs.iter().map(|s| s.len()).fold(usize::MAX, usize::min);
    let mut src = [core::ptr::null::<u64>(); P];
    for (src, input) in src.iter_mut().zip(inputs) {
        *src = input.as_ptr();
    }
    let mut common = [0u64; 16];
    let mut i = 0;
    // SAFETY: every input holds at least `n` words and each step reads words
    // below `n` (the loop condition, the tail's mask); the caller guarantees
    // the features.
    unsafe {
        let mut acc = [__m512i::zero(); C];
        while i + W <= n {
            class_counts_step::<P, C, false>(&src, &mut acc, i, first_lanes(W));
            i += W;
        }
        if i < n {
            class_counts_step::<P, C, true>(&src, &mut acc, i, first_lanes(n - i));
        }
        for set in 1..C {
            common[set] = acc[set].sum_lanes();
        }
    }
    common[0] = 64 * n as u64;
    exact_from_common(&mut common[..C]);
    counts[..C].copy_from_slice(&common[..C]);
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
unsafe fn class_counts(inputs: &[&[u64]], counts: &mut [u64]) {
    // Too few counts for the inputs: leave them alone, as the generic loop
    // does (the safe entry point has already rejected this).
    if counts.len() < 1 << inputs.len().min(crate::kernel::MAX_CLASS_INPUTS) {
        return;
    }
    // SAFETY: each arm passes exactly `P` inputs and at least `C` counts;
    // the caller guarantees the CPU features.
    unsafe {
        match inputs.len() {
            0 => counts.fill(0),
            1 => class_counts_of::<1, 2>(inputs, counts),
            2 => class_counts_of::<2, 4>(inputs, counts),
            3 => class_counts_of::<3, 8>(inputs, counts),
            4 => class_counts_of::<4, 16>(inputs, counts),
            _ => {}
        }
    }
}

/// One vector of [`split_by_tables_of`] at word `i`.
///
/// # Safety
/// Every input and output holds the lanes at `i` that `TAIL`/`mask` select,
/// and no output overlaps an input or another output; the CPU supports the
/// kernel's features.
#[inline(always)]
unsafe fn split_step<const P: usize, const K: usize, const TAIL: bool>(
    src: &[*const u64; P],
    dst: &[*mut u64; P],
    entries: &[[__m512i; 8]; P],
    i: usize,
    mask: __mmask8,
) {
    // SAFETY: the caller guarantees the lanes, that the stores hit nothing
    // else, and the features.
    unsafe {
        let mut held = [__m512i::zero(); P];
        for p in 0..P {
            held[p] = load::<TAIL>(src[p].add(i), mask);
        }
        for a in 0..P {
            // The multiplexer: the first other input chooses between
            // neighbouring entries, the next between those pairs, and so on.
            let mut level = entries[a];
            let mut width = 1 << K;
            for k in 0..K {
                let bits = held[k + usize::from(k >= a)];
                width /= 2;
                for entry in 0..width {
                    level[entry] = ternlog::<{ truth_table::SELECT }>(bits, level[2 * entry + 1], level[2 * entry]);
                }
            }
            store::<TAIL>(dst[a].add(i), mask, held[a].and(level[0]));
        }
    }
}

/// The table-driven split of `P = K + 1` inputs (see
/// [`split_by_tables`](crate::kernel::split_by_tables)): output `a` is
/// input `a` AND the entry of its table that the other `K` inputs' bits
/// select, through a multiplexer tree whose every node is one `vpternlogq`
/// select. The tail is one masked step.
///
/// # Safety
/// `inputs`, `tables` and `outputs` have at least `P` entries; the CPU
/// supports the kernel's features.
#[inline(always)]
unsafe fn split_by_tables_of<const P: usize, const K: usize>(
    inputs: &[&[u64]],
    tables: &[u8],
    outputs: &mut [&mut [MaybeUninit<u64>]],
) {
    debug_assert_eq!(K + 1, P);
    let n =
        inputs[..P].iter().map(|s| s.len()).chain(outputs[..P].iter().map(|s| s.len())).fold(usize::MAX, usize::min);
    let mut src = [core::ptr::null::<u64>(); P];
    let mut dst = [core::ptr::null_mut::<u64>(); P];
    for a in 0..P {
        (src[a], dst[a]) = (inputs[a].as_ptr(), outputs[a].as_mut_ptr().cast::<u64>());
    }
    let mut i = 0;
    // SAFETY: every input and output holds at least `n` words and each step
    // covers words below `n` (the loop condition, the tail's mask); the
    // outputs are distinct `&mut` slices, so no store hits an input or
    // another output; the caller guarantees the features.
    unsafe {
        let mut entries = [[__m512i::zero(); 8]; P];
        for (entries, &table) in entries.iter_mut().zip(tables) {
            for (entry, vector) in entries.iter_mut().enumerate() {
                if table >> entry & 1 == 1 {
                    *vector = __m512i::splat(u64::MAX);
                }
            }
        }
        while i + W <= n {
            split_step::<P, K, false>(&src, &dst, &entries, i, first_lanes(W));
            i += W;
        }
        if i < n {
            split_step::<P, K, true>(&src, &dst, &entries, i, first_lanes(n - i));
        }
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
unsafe fn split_by_tables_uninit(inputs: &[&[u64]], tables: &[u8], outputs: &mut [&mut [MaybeUninit<u64>]]) {
    // Inputs of exactly one AVX2 vector: there AVX2's loop does one full
    // 256-bit step and no tail, and timed 6–7% faster than one masked
    // 512-bit step (at 1–3 and 5 words AVX-512's masked step was 1.5–2.5×
    // faster than AVX2's scalar tail).
    if inputs.first().is_some_and(|input| input.len() == 4) {
        // SAFETY: the AVX2 function needs AVX2 and popcnt, which this
        // kernel's `is_available` checked; it takes the same lists.
        return unsafe { (super::avx2::GENERIC_FNS.split_by_tables_uninit)(inputs, tables, outputs) };
    }
    // SAFETY: each arm runs with `P` at most the length of every list; the
    // caller guarantees the CPU features.
    unsafe {
        match inputs.len().min(tables.len()).min(outputs.len()) {
            1 => split_by_tables_of::<1, 0>(inputs, tables, outputs),
            2 => split_by_tables_of::<2, 1>(inputs, tables, outputs),
            3 => split_by_tables_of::<3, 2>(inputs, tables, outputs),
            4 => split_by_tables_of::<4, 3>(inputs, tables, outputs),
            _ => {}
        }
    }
}

// The table. Where the AVX2 kernel's function is measured faster on Zen 4
// (docs/PERFORMANCE.md, "AVX-512"), the entry takes it: the in-place
// operations and `union_many` move one or two logic instructions per word
// loaded and stored, so a 512-bit register saves only instructions, and
// on Zen 4 (each 512-bit operation run as two 256-bit halves) the 512-bit
// loops timed 3–11% slower from L1 to DRAM; the bit moves are the same
// word-level Rust either way, and LLVM's 512-bit vectorisation of
// `and_shifted` and `transpose64` timed slower. The searches' 512-bit loop
// (a compare into a `k` mask per test) gained 6–44% at 8–32 KiB but lost
// up to 26% at 16–32 words and 4% at 128 KiB, varying with the load on
// the shared core, so they take AVX2's too. The AVX2 functions need AVX2
// and popcnt, which `is_available` checks too.
crate::kernel::simd_table::simd_kernel_table!(__m512i, "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt", {
    popcount: popcount,
    and_popcount: and_popcount,
    or_popcount: or_popcount,
    xor_popcount: xor_popcount,
    and_not_popcount: and_not_popcount,
    and_assign: super::avx2::GENERIC_FNS.and_assign,
    or_assign: super::avx2::GENERIC_FNS.or_assign,
    xor_assign: super::avx2::GENERIC_FNS.xor_assign,
    and_not_assign: super::avx2::GENERIC_FNS.and_not_assign,
    not_assign: super::avx2::GENERIC_FNS.not_assign,
    and_uninit: super::avx2::GENERIC_FNS.and_uninit,
    or_uninit: super::avx2::GENERIC_FNS.or_uninit,
    xor_uninit: super::avx2::GENERIC_FNS.xor_uninit,
    and_not_uninit: super::avx2::GENERIC_FNS.and_not_uninit,
    union_many: super::avx2::GENERIC_FNS.union_many,
    first_wins_uninit: first_wins_uninit,
    class_counts: class_counts,
    split_by_tables_uninit: split_by_tables_uninit,
    position_nonzero: super::avx2::GENERIC_FNS.position_nonzero,
    position_not_all_ones: super::avx2::GENERIC_FNS.position_not_all_ones,
    gather_and: super::avx2::GENERIC_FNS.gather_and,
    scatter_or: super::avx2::GENERIC_FNS.scatter_or,
    deposit: super::avx2::GENERIC_FNS.deposit,
    extract: super::avx2::GENERIC_FNS.extract,
    fill_periodic: super::avx2::GENERIC_FNS.fill_periodic,
    and_shifted: super::avx2::GENERIC_FNS.and_shifted,
    transpose64: super::avx2::GENERIC_FNS.transpose64,
    split_rows: split_rows,
    join_rows: join_rows,
});

/// The row split: 64 and 8 rows in registers with VBMI and GFNI where the
/// CPU has them (`gfni.rs`), else (and for other row counts) AVX2's.
///
/// # Safety
/// The CPU has the AVX-512 kernel's features (which include AVX2's).
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
unsafe fn split_rows(src: &[u64], rows: &mut [&mut [u64]]) {
    // SAFETY: `gfni::is_available` checked the features of `split64` and
    // `split8`, which also check nothing else: each takes rows of one
    // length (checked by the dispatch) of the count it is for. The AVX2
    // function needs AVX2 and popcnt, which this kernel's CPU has.
    unsafe {
        match rows.len() {
            64 if super::gfni::is_available() => super::gfni::split64(src, rows),
            8 if super::gfni::is_available() => super::gfni::split8(src, rows),
            _ => (super::avx2::GENERIC_FNS.split_rows)(src, rows),
        }
    }
}

/// The row join, as [`split_rows`].
///
/// # Safety
/// As [`split_rows`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
unsafe fn join_rows(rows: &[&[u64]], dst: &mut [u64]) {
    // SAFETY: as in `split_rows`.
    unsafe {
        match rows.len() {
            64 if super::gfni::is_available() => super::gfni::join64(rows, dst),
            8 if super::gfni::is_available() => super::gfni::join8(rows, dst),
            _ => (super::avx2::GENERIC_FNS.join_rows)(rows, dst),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The truth-table constants against the functions they are named for,
    /// bit by bit (what `vpternlogq` computes, per Intel's definition; runs
    /// on every CPU, since it needs no AVX-512).
    #[test]
    fn truth_tables_compute_what_they_are_named_for() {
        let mut rng = crate::kernel::tests::XorShift(0x3C6E_F372_FE94_F82B);
        for _ in 0..64 {
            let (a, b, c) = (rng.next(), rng.next(), rng.next());
            assert_eq!(ternlog_word(truth_table::AND_NOT_EITHER, a, b, c), a & !(b | c));
            assert_eq!(ternlog_word(truth_table::OR3, a, b, c), a | b | c);
            assert_eq!(ternlog_word(truth_table::SELECT, a, b, c), (a & b) | (!a & c));
        }
    }
}
