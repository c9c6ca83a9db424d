//! The AVX2 kernel: the generic loops over `__m256i` (4 words per register),
//! with Muła's `vpshufb` nibble-lookup popcount under Harley–Seal.
//!
//! Built with `core::arch` rather than `wide`: `wide` picks its backend at
//! compile time, so inside a `#[target_feature(enable = "avx2")]` function of
//! a default (SSE2) build it would still emit SSE2.

use core::arch::x86_64::*;

use crate::kernel::vector::Vector;

/// Whether this CPU can run the AVX2 kernel (see `avx2_bits.rs`).
pub(crate) use super::avx2_bits::is_available;

// SAFETY (every method below): each intrinsic requires AVX or AVX2, which the
// `Vector` contract makes the caller guarantee; pointer intrinsics are the
// unaligned forms and the caller guarantees 4 valid words.
impl Vector for __m256i {
    const WORDS: usize = 4;

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm256_setzero_si256() }
    }
    #[inline(always)]
    unsafe fn splat(word: u64) -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm256_set1_epi64x(word as i64) }
    }
    #[inline(always)]
    unsafe fn load(ptr: *const u64) -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm256_loadu_si256(ptr.cast()) }
    }
    #[inline(always)]
    unsafe fn store(self, ptr: *mut u64) {
        // SAFETY: see the impl comment.
        unsafe { _mm256_storeu_si256(ptr.cast(), self) }
    }
    #[inline(always)]
    unsafe fn and(self, other: Self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm256_and_si256(self, other) }
    }
    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm256_or_si256(self, other) }
    }
    #[inline(always)]
    unsafe fn xor(self, other: Self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm256_xor_si256(self, other) }
    }
    #[inline(always)]
    unsafe fn and_not(self, other: Self) -> Self {
        // `vpandn` computes `!first & second`.
        // SAFETY: see the impl comment.
        unsafe { _mm256_andnot_si256(other, self) }
    }
    #[inline(always)]
    unsafe fn not(self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm256_xor_si256(self, _mm256_set1_epi64x(-1)) }
    }
    #[inline(always)]
    unsafe fn is_zero(self) -> bool {
        // SAFETY: see the impl comment.
        unsafe { _mm256_testz_si256(self, self) == 1 }
    }
    #[inline(always)]
    unsafe fn popcount_lanes(self) -> Self {
        // Muła: look up the popcount of each nibble with `vpshufb`, add the
        // two nibble counts per byte, then `vpsadbw` against zero sums the
        // 8 byte counts of each 64-bit lane.
        // SAFETY: see the impl comment.
        unsafe {
            #[rustfmt::skip]
            let lookup = _mm256_setr_epi8(
                0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
            );
            let low_mask = _mm256_set1_epi8(0x0f);
            let lo = _mm256_and_si256(self, low_mask);
            let hi = _mm256_and_si256(_mm256_srli_epi16(self, 4), low_mask);
            let bytes = _mm256_add_epi8(_mm256_shuffle_epi8(lookup, lo), _mm256_shuffle_epi8(lookup, hi));
            _mm256_sad_epu8(bytes, _mm256_setzero_si256())
        }
    }
    #[inline(always)]
    unsafe fn add_lanes(self, other: Self) -> Self {
        // SAFETY: see the impl comment.
        unsafe { _mm256_add_epi64(self, other) }
    }
    #[inline(always)]
    unsafe fn sum_lanes(self) -> u64 {
        // SAFETY: see the impl comment.
        unsafe {
            let halves = _mm_add_epi64(_mm256_castsi256_si128(self), _mm256_extracti128_si256(self, 1));
            let high = _mm_unpackhi_epi64(halves, halves);
            _mm_cvtsi128_si64(_mm_add_epi64(halves, high)) as u64
        }
    }
}

crate::kernel::simd_table::simd_kernel_table!(__m256i, "avx2,popcnt");
