//! The NEON kernel: the generic loops over `uint64x2_t` (2 words per
//! register), with `cnt` byte popcounts widened by pairwise adds.

use core::arch::aarch64::*;

use crate::kernel::vector::Vector;

/// Whether this CPU can run the NEON kernel. NEON is part of the aarch64
/// baseline, but the check keeps the same contract as every other kernel.
#[inline]
pub(crate) fn is_available() -> bool {
    std::arch::is_aarch64_feature_detected!("neon")
}

// SAFETY (every method below): each intrinsic requires NEON, which the
// `Vector` contract makes the caller guarantee; the caller also guarantees 2
// valid words behind every pointer (NEON loads need no alignment).
impl Vector for uint64x2_t {
    const WORDS: usize = 2;

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: see the impl comment.
        unsafe { vdupq_n_u64(0) }
    }
    #[inline(always)]
    unsafe fn splat(word: u64) -> Self {
        // SAFETY: see the impl comment.
        unsafe { vdupq_n_u64(word) }
    }
    #[inline(always)]
    unsafe fn load(ptr: *const u64) -> Self {
        // SAFETY: see the impl comment.
        unsafe { vld1q_u64(ptr) }
    }
    #[inline(always)]
    unsafe fn store(self, ptr: *mut u64) {
        // SAFETY: see the impl comment.
        unsafe { vst1q_u64(ptr, self) }
    }
    #[inline(always)]
    unsafe fn and(self, other: Self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { vandq_u64(self, other) }
    }
    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { vorrq_u64(self, other) }
    }
    #[inline(always)]
    unsafe fn xor(self, other: Self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { veorq_u64(self, other) }
    }
    #[inline(always)]
    unsafe fn and_not(self, other: Self) -> Self {
        // `bic` computes `first & !second`.
        // SAFETY: see the impl comment.
        unsafe { vbicq_u64(self, other) }
    }
    #[inline(always)]
    unsafe fn not(self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { vreinterpretq_u64_u8(vmvnq_u8(vreinterpretq_u8_u64(self))) }
    }
    #[inline(always)]
    unsafe fn is_zero(self) -> bool {
        // SAFETY: see the impl comment.
        unsafe { vmaxvq_u32(vreinterpretq_u32_u64(self)) == 0 }
    }
    #[inline(always)]
    unsafe fn popcount_lanes(self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { vpaddlq_u32(vpaddlq_u16(vpaddlq_u8(vcntq_u8(vreinterpretq_u8_u64(self))))) }
    }
    #[inline(always)]
    unsafe fn add_lanes(self, other: Self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { vaddq_u64(self, other) }
    }
    #[inline(always)]
    unsafe fn sum_lanes(self) -> u64 {
        // SAFETY: see the impl comment.
        unsafe { vaddvq_u64(self) }
    }
}

crate::kernel::simd_table::simd_kernel_table!(uint64x2_t, "neon");
