//! The small vector abstraction that the generic loops in [`super::generic`]
//! are written against, once, for every SIMD kernel.
//!
//! This follows memchr's design: each instruction set implements [`Vector`]
//! for its register type, and a `#[target_feature]` wrapper per operation
//! instantiates the generic loop, so the intrinsics inline into code compiled
//! for that feature.

/// A SIMD register holding [`Vector::WORDS`] `u64` lanes.
///
/// # Safety
///
/// Every method is `unsafe` because an implementation may use intrinsics that
/// require a CPU feature: callers must only use a `Vector` type inside code
/// that has verified that feature (in this crate, inside a `#[target_feature]`
/// function reached through a [`Kernel`](super::Kernel) whose constructor
/// checked it). The pointer methods additionally require the usual validity
/// of `WORDS` consecutive `u64` values; alignment is never required.
pub(crate) trait Vector: Copy {
    /// The number of `u64` lanes in one register.
    const WORDS: usize;

    /// All lanes zero.
    unsafe fn zero() -> Self;
    /// Every lane `word`.
    unsafe fn splat(word: u64) -> Self;
    /// Loads `WORDS` words from `ptr` (no alignment needed).
    unsafe fn load(ptr: *const u64) -> Self;
    /// Stores `WORDS` words to `ptr` (no alignment needed).
    unsafe fn store(self, ptr: *mut u64);
    /// `self & other`.
    unsafe fn and(self, other: Self) -> Self;
    /// `self | other`.
    unsafe fn or(self, other: Self) -> Self;
    /// `self ^ other`.
    unsafe fn xor(self, other: Self) -> Self;
    /// `self & !other`.
    unsafe fn and_not(self, other: Self) -> Self;
    /// `!self`.
    unsafe fn not(self) -> Self;
    /// Whether every lane is zero.
    unsafe fn is_zero(self) -> bool;
    /// Replaces every `u64` lane with the number of bits set in it.
    unsafe fn popcount_lanes(self) -> Self;
    /// Lane-wise wrapping `u64` addition.
    unsafe fn add_lanes(self, other: Self) -> Self;
    /// The wrapping sum of all `u64` lanes.
    unsafe fn sum_lanes(self) -> u64;
}
