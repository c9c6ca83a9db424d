//! BMI2's `pext`/`pdep` as the [`BitMoves`] of the bit-move loops in
//! [`bits`], used by every x86-64 kernel where they
//! are fast.
//!
//! AMD's Zen 1 and Zen 2 (family 17h) implement `pext` and `pdep` in
//! microcode, tens of cycles per instruction and slower than the bit-trick
//! [`Soft`](crate::kernel::bits::Soft) form, so there they are not used;
//! everywhere else with BMI2 (Intel since Haswell, AMD from Zen 3, family
//! 19h) they take one cycle.

use core::arch::x86_64::{__cpuid, _pdep_u64, _pext_u64};
use std::sync::OnceLock;

use crate::kernel::bits::{self, BitMoves};

/// Proof that the CPU has BMI2: only [`is_fast`]'s callers build one,
/// inside functions compiled for the feature.
#[derive(Clone, Copy)]
struct Bmi2(());

impl BitMoves for Bmi2 {
    type Compressor = u64;

    #[inline(always)]
    fn compressor(self, mask: u64) -> u64 {
        mask
    }
    #[inline(always)]
    fn compress_with(self, mask: u64, x: u64) -> u64 {
        self.compress(x, mask)
    }
    #[inline(always)]
    fn compress(self, x: u64, mask: u64) -> u64 {
        // SAFETY: a `Bmi2` is only built where the CPU is known to have BMI2:
        // inside the `#[target_feature(enable = "bmi2,popcnt")]` functions below
        // (reached after `is_fast`) and by the tests' `moves` after detection.
        unsafe { _pext_u64(x, mask) }
    }
    #[inline(always)]
    fn expand(self, x: u64, mask: u64) -> u64 {
        // SAFETY: as `compress`.
        unsafe { _pdep_u64(x, mask) }
    }
}

/// Whether this CPU has BMI2 and runs `pext`/`pdep` in hardware (not AMD
/// family 17h's microcode), and has `popcnt` (every BMI2 CPU does): the
/// functions below are compiled for both, as the loops count each mask
/// word's bits beside its `pext`/`pdep`, and without `popcnt` that count
/// is a dozen shifts and masks. Checked once per process.
pub(crate) fn is_fast() -> bool {
    static FAST: OnceLock<bool> = OnceLock::new();
    *FAST.get_or_init(|| {
        std::is_x86_feature_detected!("bmi2") && std::is_x86_feature_detected!("popcnt") && !microcoded_pext()
    })
}

/// AMD family 17h (Zen, Zen+, Zen 2): `pext`/`pdep` are microcoded.
/// Under Miri, which cannot run `cpuid`, never: there the compile-time
/// features are the "CPU".
fn microcoded_pext() -> bool {
    if cfg!(miri) {
        return false;
    }
    let vendor = __cpuid(0);
    let amd = (vendor.ebx, vendor.edx, vendor.ecx) == (0x6874_7541, 0x6974_6E65, 0x444D_4163); // "AuthenticAMD"
    if !amd {
        return false;
    }
    let signature = __cpuid(1).eax;
    let base = (signature >> 8) & 0xF;
    let family = if base == 0xF { base + ((signature >> 20) & 0xFF) } else { base };
    family == 0x17
}

/// [`bits::gather_and`] with `pext`.
///
/// # Safety
/// The CPU has BMI2 and popcnt.
#[target_feature(enable = "bmi2,popcnt")]
pub(crate) unsafe fn gather_and(src: &[u64], stride: usize, offset: usize, width: usize, dst: &mut [u64]) {
    bits::gather_and(Bmi2(()), src, stride, offset, width, dst);
}

/// [`bits::scatter_or`] with `pdep`.
///
/// # Safety
/// The CPU has BMI2 and popcnt.
#[target_feature(enable = "bmi2,popcnt")]
pub(crate) unsafe fn scatter_or(src: &[u64], stride: usize, offset: usize, dst: &mut [u64]) {
    bits::scatter_or(Bmi2(()), src, stride, offset, dst);
}

/// [`bits::deposit`] with `pdep`.
///
/// # Safety
/// The CPU has BMI2 and popcnt.
#[target_feature(enable = "bmi2,popcnt")]
pub(crate) unsafe fn deposit(src: &[u64], src_start: usize, mask: &[u64], dst: &mut [u64]) -> usize {
    bits::deposit(Bmi2(()), src, src_start, mask, dst)
}

/// [`bits::extract`] with `pext`.
///
/// # Safety
/// The CPU has BMI2 and popcnt.
#[target_feature(enable = "bmi2,popcnt")]
pub(crate) unsafe fn extract(src: &[u64], mask: &[u64], dst: &mut [u64], dst_start: usize) -> usize {
    bits::extract(Bmi2(()), src, mask, dst, dst_start)
}

/// [`deposit`] compiled for AVX2 too: the shifted copies of whole mask
/// words and the run scans vectorise 256 bits wide.
///
/// # Safety
/// The CPU has BMI2, popcnt and AVX2.
#[target_feature(enable = "bmi2,popcnt,avx2")]
pub(crate) unsafe fn deposit_avx2(src: &[u64], src_start: usize, mask: &[u64], dst: &mut [u64]) -> usize {
    bits::deposit(Bmi2(()), src, src_start, mask, dst)
}

/// [`extract`] compiled for AVX2 too, as [`deposit_avx2`].
///
/// # Safety
/// The CPU has BMI2, popcnt and AVX2.
#[target_feature(enable = "bmi2,popcnt,avx2")]
pub(crate) unsafe fn extract_avx2(src: &[u64], mask: &[u64], dst: &mut [u64], dst_start: usize) -> usize {
    bits::extract(Bmi2(()), src, mask, dst, dst_start)
}

#[cfg(test)]
pub(crate) fn moves() -> Option<impl BitMoves> {
    std::is_x86_feature_detected!("bmi2").then_some(Bmi2(()))
}
