//! The AVX-512 kernel: 8 words per `__m512i` register, with `vpopcntq`
//! (AVX512-VPOPCNTDQ) counts, `vpternlogq` three-input logic and `k`-mask
//! loads and stores for the tails.
//!
//! Most operations have their own loop here rather than the generic one,
//! because AVX-512 changes the algorithm, not just the register width
//! (`counts.rs` has the counts, `many.rs` the operations over many inputs,
//! `lanes.rs` what they share: the `Vector` impl, `vpternlogq` and the
//! masked loads and stores):
//!
//! - counts: `vpopcntq` counts each lane in one instruction, so the
//!   Harley–Seal carry-save tree that the AVX2 kernel needs to amortise its
//!   `vpshufb` popcount is pure overhead; four plain accumulators instead.
//! - `first_wins`: inputs are taken in pairs, `out[a + 1] = in[a + 1] &
//!   !(claimed | in[a])` and `claimed |= in[a] | in[a + 1]` are one
//!   `vpternlogq` each, which saves an instruction per pair and halves the
//!   dependency chain through `claimed`; the inputs go in groups of up to
//!   4 (one group for the usual adapter counts), every vector of a group
//!   loaded before its first store, against 4K aliasing between
//!   equal-sized bitmaps.
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
//! `Vector` impl in `lanes.rs`.
//!
//! # Miri
//!
//! Miri interprets every intrinsic used here except `vpternlogq`, which
//! lowers to an LLVM intrinsic Miri does not implement. Under Miri,
//! `lanes::ternlog` therefore evaluates the same truth table with AND/OR/NOT
//! (see `ternlog_emulated`), so Miri checks every memory access of this
//! kernel and every truth-table constant, though not the `vpternlogq`
//! instruction itself.

mod counts;
mod lanes;
mod many;

use core::arch::x86_64::__m512i;

use counts::{and_not_popcount, and_popcount, or_popcount, popcount, xor_popcount};
use many::{class_counts, first_wins_uninit, split_by_tables_uninit};

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

// The table. Where the AVX2 kernel's function is measured faster on Zen 4
// (docs/perf/2026-12-01-avx512.md), the entry takes it: the in-place
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
