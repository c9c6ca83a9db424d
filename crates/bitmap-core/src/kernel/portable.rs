//! The portable kernel: the generic loops over `wide::u64x4`.
//!
//! `wide` chooses its implementation when the crate is compiled (SSE2 on a
//! default x86-64 build, NEON on aarch64, plain arrays elsewhere), so this
//! kernel runs on every CPU and needs no run-time check. It is what a CPU
//! without AVX2 or NEON gets, and the fallback that keeps every target
//! vectorised where `wide` can.

use wide::u64x4;

use super::vector::Vector;

impl Vector for u64x4 {
    const WORDS: usize = 4;

    #[inline(always)]
    unsafe fn zero() -> Self {
        u64x4::ZERO
    }
    #[inline(always)]
    unsafe fn splat(word: u64) -> Self {
        u64x4::splat(word)
    }
    #[inline(always)]
    unsafe fn load(ptr: *const u64) -> Self {
        // SAFETY: the caller guarantees 4 readable words at `ptr`;
        // `read_unaligned` needs no alignment.
        u64x4::new(unsafe { ptr.cast::<[u64; 4]>().read_unaligned() })
    }
    #[inline(always)]
    unsafe fn store(self, ptr: *mut u64) {
        // SAFETY: the caller guarantees 4 writable words at `ptr`;
        // `write_unaligned` needs no alignment.
        unsafe { ptr.cast::<[u64; 4]>().write_unaligned(self.to_array()) }
    }
    #[inline(always)]
    unsafe fn and(self, other: Self) -> Self {
        self & other
    }
    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        self | other
    }
    #[inline(always)]
    unsafe fn xor(self, other: Self) -> Self {
        self ^ other
    }
    #[inline(always)]
    unsafe fn and_not(self, other: Self) -> Self {
        self & !other
    }
    #[inline(always)]
    unsafe fn not(self) -> Self {
        !self
    }
    #[inline(always)]
    unsafe fn is_zero(self) -> bool {
        self.to_array() == [0; 4]
    }
    #[inline(always)]
    unsafe fn popcount_lanes(self) -> Self {
        // SWAR popcount per lane (no multiply: wide's u64x4 multiply is
        // emulated on SSE2, shifts and adds are native).
        let m1 = u64x4::splat(0x5555_5555_5555_5555);
        let m2 = u64x4::splat(0x3333_3333_3333_3333);
        let m4 = u64x4::splat(0x0f0f_0f0f_0f0f_0f0f);
        let x = self - ((self >> 1) & m1);
        let x = (x & m2) + ((x >> 2) & m2);
        let x = (x + (x >> 4)) & m4;
        let x = x + (x >> 8);
        let x = x + (x >> 16);
        let x = x + (x >> 32);
        x & u64x4::splat(0x7f)
    }
    #[inline(always)]
    unsafe fn add_lanes(self, other: Self) -> Self {
        self + other
    }
    #[inline(always)]
    unsafe fn sum_lanes(self) -> u64 {
        self.to_array().iter().fold(0u64, |acc, &x| acc.wrapping_add(x))
    }
}

super::simd_table::simd_kernel_table!(u64x4);
