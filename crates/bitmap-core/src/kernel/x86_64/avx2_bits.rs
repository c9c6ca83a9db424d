//! AVX2 below the AVX2 kernel's table: the CPU check, and the 8-bit rank
//! reduction the bit moves use where the CPU has AVX2
//! (`kernel/bits_best.rs`, whichever kernel is active). The AVX2 kernel's
//! table points at those bit moves, so they cannot use `avx2.rs` without
//! an import circle; `avx2.rs` re-exports the check.

use core::arch::x86_64::*;

/// Whether this CPU can run the AVX2 kernel. The tail loops use `popcnt`,
/// which every AVX2 CPU has, but it is checked rather than assumed.
#[inline]
pub(crate) fn is_available() -> bool {
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt")
}

/// The rank reduction of 8 adjacent bits, 32 bytes at a time: `dst` bit
/// `i` = the AND of the bits of `src` byte `i`, for the first
/// `min(dst.len(), src.len() / 8)` words of `dst`, whose count it returns
/// (the caller finishes the rest). Three shift-ANDs fold each byte into its
/// top bit, and `vpmovmskb` collects the 32 top bits of a register.
///
/// # Safety
/// The CPU has AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn and_bytes(src: &[u64], dst: &mut [u64]) -> usize {
    let done = dst.len().min(src.len() / 8);
    for (w, out) in dst[..done].iter_mut().enumerate() {
        let halves = [0, 1].map(|h| {
            // SAFETY: `w < done <= src.len() / 8`, so the 4 words at
            // `8w + 4h` (h <= 1) are within `src`; the caller guarantees AVX2.
            unsafe {
                let x = _mm256_loadu_si256(src.as_ptr().add(8 * w + 4 * h).cast());
                let x = _mm256_and_si256(x, _mm256_slli_epi64(x, 1));
                let x = _mm256_and_si256(x, _mm256_slli_epi64(x, 2));
                let x = _mm256_and_si256(x, _mm256_slli_epi64(x, 4));
                u64::from(_mm256_movemask_epi8(x) as u32)
            }
        });
        *out = halves[0] | halves[1] << 32;
    }
    done
}
