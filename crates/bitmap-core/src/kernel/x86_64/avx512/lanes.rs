//! The AVX-512 kernel's lanes: the [`Vector`] impl over `__m512i`,
//! `vpternlogq` three-input logic (emulated under Miri) and the `k`-mask
//! loads and stores of the tails, which the counts and the many-input
//! operations share.

use core::arch::x86_64::*;

use crate::kernel::vector::Vector;

/// Words per register.
pub(super) const W: usize = 8;

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
pub(super) mod truth_table {
    /// `a & !(b | c)`: an input's bits that neither `b` nor `c` claimed.
    pub(crate) const AND_NOT_EITHER: i32 = 0x10;
    /// `a | b | c`.
    pub(crate) const OR3: i32 = 0xFE;
    /// `if a { b } else { c }`, bit by bit: one node of a multiplexer.
    pub(crate) const SELECT: i32 = 0xCA;
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
pub(super) unsafe fn ternlog<const IMM: i32>(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
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

/// The words before the first 64-byte boundary at or after `ptr`: at most
/// 7, since words are 8-byte aligned.
#[inline(always)]
pub(super) fn words_to_line(ptr: *const u64) -> usize {
    (ptr as usize).wrapping_neg() % 64 / 8
}

/// The `k` mask of the first `n` lanes, `n` at most 8.
#[inline(always)]
pub(super) fn first_lanes(n: usize) -> __mmask8 {
    debug_assert!(n <= W);
    ((1u16 << n) - 1) as __mmask8
}

/// Loads 8 words from `ptr`, or with `TAIL` only the lanes of `mask`
/// (the others are zero and their memory is not read).
///
/// # Safety
/// The words of the lanes loaded are readable; the CPU supports AVX512F.
#[inline(always)]
pub(super) unsafe fn load<const TAIL: bool>(ptr: *const u64, mask: __mmask8) -> __m512i {
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
pub(super) unsafe fn store<const TAIL: bool>(ptr: *mut u64, mask: __mmask8, v: __m512i) {
    // SAFETY: the caller guarantees the lanes written and AVX512F; masked-off
    // lanes are not accessed.
    unsafe { if TAIL { _mm512_mask_storeu_epi64(ptr.cast(), mask, v) } else { _mm512_storeu_si512(ptr.cast(), v) } }
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
