//! The bit moves with the fastest [`BitMoves`] of this CPU, chosen at run
//! time: BMI2's `pext`/`pdep` where they are fast (`x86_64/bmi2.rs`), AVX2
//! for the 8-bit rank reduction and the runs of deposit and extract, else
//! the [`Soft`] bit tricks. Every SIMD kernel's table points at these
//! (`simd_table.rs`).
//!
//! Above both the generic loops (`bits/`) and the BMI2 forms, which use the
//! loops: the loops know nothing of the CPU.

use super::bits::{self, Soft};
#[cfg(doc)]
use super::bits::{BitMoves, deposit, extract, gather_and, scatter_or};

/// The row split with the fastest [`BitMoves`] of this CPU.
#[inline(always)]
pub(crate) fn split_rows_best(src: &[u64], rows: &mut [&mut [u64]]) {
    bits::split_rows_with(src, rows, gather_and_best);
}

/// The row join with the fastest [`BitMoves`] of this CPU.
#[inline(always)]
pub(crate) fn join_rows_best(rows: &[&[u64]], dst: &mut [u64]) {
    bits::join_rows_with(rows, dst, scatter_or_best);
}

/// [`gather_and`] with the fastest [`BitMoves`] of this CPU, and the
/// 8-bit rank reduction (8 ranks, or 8 groups of a chunk) in AVX2
/// registers where the CPU has them.
#[inline]
pub(crate) fn gather_and_best(src: &[u64], stride: usize, offset: usize, width: usize, dst: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    let (src, offset, dst) =
        if stride == 8 && width == 8 && offset.is_multiple_of(64) && super::x86_64::avx2_bits::is_available() {
            let src = &src[(offset / 64).min(src.len())..];
            // SAFETY: `is_available` checked that the CPU has AVX2.
            let done = unsafe { super::x86_64::avx2_bits::and_bytes(src, dst) };
            (&src[done * 8..], 0, &mut dst[done..])
        } else {
            (src, offset, dst)
        };
    #[cfg(target_arch = "x86_64")]
    if super::x86_64::bmi2::is_fast() {
        // SAFETY: `is_fast` checked that the CPU has BMI2 and popcnt.
        return unsafe { super::x86_64::bmi2::gather_and(src, stride, offset, width, dst) };
    }
    bits::gather_and(Soft, src, stride, offset, width, dst)
}

/// [`scatter_or`] with the fastest [`BitMoves`] of this CPU.
#[inline]
pub(crate) fn scatter_or_best(src: &[u64], stride: usize, offset: usize, dst: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if super::x86_64::bmi2::is_fast() {
        // SAFETY: `is_fast` checked that the CPU has BMI2 and popcnt.
        return unsafe { super::x86_64::bmi2::scatter_or(src, stride, offset, dst) };
    }
    bits::scatter_or(Soft, src, stride, offset, dst)
}

/// [`deposit`] with the fastest [`BitMoves`] of this CPU (and AVX2 for
/// its runs of whole words where the CPU has it).
#[inline]
pub(crate) fn deposit_best(src: &[u64], src_start: usize, mask: &[u64], dst: &mut [u64]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if super::x86_64::bmi2::is_fast() {
        if super::x86_64::avx2_bits::is_available() {
            // SAFETY: `is_fast` checked BMI2 and popcnt, `is_available` AVX2.
            return unsafe { super::x86_64::bmi2::deposit_avx2(src, src_start, mask, dst) };
        }
        // SAFETY: `is_fast` checked that the CPU has BMI2 and popcnt.
        return unsafe { super::x86_64::bmi2::deposit(src, src_start, mask, dst) };
    }
    bits::deposit(Soft, src, src_start, mask, dst)
}

/// [`extract`] with the fastest [`BitMoves`] of this CPU (and AVX2 for
/// its runs of whole words where the CPU has it).
#[inline]
pub(crate) fn extract_best(src: &[u64], mask: &[u64], dst: &mut [u64], dst_start: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    if super::x86_64::bmi2::is_fast() {
        if super::x86_64::avx2_bits::is_available() {
            // SAFETY: `is_fast` checked BMI2 and popcnt, `is_available` AVX2.
            return unsafe { super::x86_64::bmi2::extract_avx2(src, mask, dst, dst_start) };
        }
        // SAFETY: `is_fast` checked that the CPU has BMI2 and popcnt.
        return unsafe { super::x86_64::bmi2::extract(src, mask, dst, dst_start) };
    }
    bits::extract(Soft, src, mask, dst, dst_start)
}
