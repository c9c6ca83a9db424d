//! The AVX-512 operations over many inputs: the first-wins split, the
//! class counts and the split by truth tables, each in `vpternlogq`
//! three-input logic where it saves instructions, with `k`-masked tails.

use core::arch::x86_64::*;
use core::mem::MaybeUninit;

use super::lanes::{W, first_lanes, load, store, ternlog, truth_table, words_to_line};
use crate::kernel::classes::exact_from_common;
use crate::kernel::vector::Vector;

/// One vector of the first-wins split at word `i`, for more than 4 inputs
/// (see [`first_wins_step_fixed`] for fewer): the inputs two at a time, so
/// that the second of a pair does not wait for the first to be
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

/// [`first_wins_step`] for exactly `M` inputs (the usual 1 to 4 adapters),
/// every load before the first store. Equal-sized bitmaps tend to share
/// their offset within a 4 KiB page, and a load that follows a store at
/// the same page offset waits on it as if they overlapped (4K aliasing):
/// with the stores of one input between the loads of the next, every step
/// after the first pair paid that. Loading first, the reused plan at
/// 262,144 keys × 3 went from 1.04–1.32× to 1.02–1.13× the time of
/// copying its inputs in the interleaved example, and plan calls alone
/// took 5% less (docs/PERFORMANCE.md).
///
/// # Safety
/// As [`first_wins_step`], with `M` pointers in each array.
#[inline(always)]
unsafe fn first_wins_step_fixed<const M: usize, const TAIL: bool>(
    inputs: &[*const u64; M],
    outputs: &[*mut u64; M],
    i: usize,
    mask: __mmask8,
) {
    // SAFETY: the caller guarantees the lanes and the features.
    unsafe {
        let mut v = [__m512i::zero(); M];
        for (v, input) in v.iter_mut().zip(inputs) {
            *v = load::<TAIL>(input.add(i), mask);
        }
        let mut claimed = __m512i::zero();
        let mut a = 0;
        while a + 2 <= M {
            let (x, y) = (v[a], v[a + 1]);
            store::<TAIL>(outputs[a].add(i), mask, x.and_not(claimed));
            store::<TAIL>(outputs[a + 1].add(i), mask, ternlog::<{ truth_table::AND_NOT_EITHER }>(y, claimed, x));
            claimed = ternlog::<{ truth_table::OR3 }>(claimed, x, y);
            a += 2;
        }
        if a < M {
            store::<TAIL>(outputs[a].add(i), mask, v[a].and_not(claimed));
        }
    }
}

/// The first-wins split of exactly `M` inputs over `n` words.
///
/// # Safety
/// Every input and output holds `n` words; the CPU supports the kernel's
/// features.
#[inline(always)]
unsafe fn first_wins_fixed<const M: usize>(inputs: &[&[u64]], outputs: &mut [&mut [MaybeUninit<u64>]], n: usize) {
    let ins: [*const u64; M] = core::array::from_fn(|a| inputs[a].as_ptr());
    let outs: [*mut u64; M] = core::array::from_fn(|a| outputs[a].as_mut_ptr().cast::<u64>());
    let mut i = 0;
    // SAFETY: as `first_wins_uninit`'s loop.
    unsafe {
        while i + W <= n {
            first_wins_step_fixed::<M, false>(&ins, &outs, i, first_lanes(W));
            i += W;
        }
        if i < n {
            first_wins_step_fixed::<M, true>(&ins, &outs, i, first_lanes(n - i));
        }
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
pub(super) unsafe fn first_wins_uninit(inputs: &[&[u64]], outputs: &mut [&mut [MaybeUninit<u64>]]) {
    let m = inputs.len().min(outputs.len());
    let (inputs, outputs) = (&inputs[..m], &mut outputs[..m]);
    let n = inputs.iter().map(|s| s.len()).chain(outputs.iter().map(|s| s.len())).fold(usize::MAX, usize::min);
    if m == 0 {
        return;
    }
    // SAFETY: every slice holds at least `n` words; the caller guarantees
    // the features.
    unsafe {
        match m {
            1 => return first_wins_fixed::<1>(inputs, outputs, n),
            2 => return first_wins_fixed::<2>(inputs, outputs, n),
            3 => return first_wins_fixed::<3>(inputs, outputs, n),
            4 => return first_wins_fixed::<4>(inputs, outputs, n),
            _ => {}
        }
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
pub(super) unsafe fn class_counts(inputs: &[&[u64]], counts: &mut [u64]) {
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
/// select. The words before the first output's next cache line are one
/// masked step, so that the main loop's stores (and its loads, where the
/// slices share that alignment, as the runs of a [`SplitWriter`] do) do
/// not cross a line: Zen 4 splits a 512-bit access into two 256-bit
/// halves, and one that crosses a line costs about twice as much. A
/// `balanced` plan routes its words in runs that start wherever an owner
/// changed, mostly not on a line; unaligned, the rest of its split took
/// most of a `default` plan's time more. The tail is one masked step.
///
/// [`SplitWriter`]: crate::SplitWriter
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
    // covers words below `n` (the head's mask covers at most 7 words of more
    // than 8, the loop condition, the tail's mask); the outputs are distinct
    // `&mut` slices, so no store hits an input or another output; the
    // caller guarantees the features.
    unsafe {
        let mut entries = [[__m512i::zero(); 8]; P];
        for (entries, &table) in entries.iter_mut().zip(tables) {
            for (entry, vector) in entries.iter_mut().enumerate() {
                if table >> entry & 1 == 1 {
                    *vector = __m512i::splat(u64::MAX);
                }
            }
        }
        // Only with a main loop after it: a shorter run is one or two
        // masked steps either way.
        if n > W {
            i = words_to_line(dst[0]);
            if i > 0 {
                split_step::<P, K, true>(&src, &dst, &entries, 0, first_lanes(i));
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
pub(super) unsafe fn split_by_tables_uninit(inputs: &[&[u64]], tables: &[u8], outputs: &mut [&mut [MaybeUninit<u64>]]) {
    // Inputs of exactly one AVX2 vector: there AVX2's loop does one full
    // 256-bit step and no tail, and timed 6–7% faster than one masked
    // 512-bit step (at 1–3 and 5 words AVX-512's masked step was 1.5–2.5×
    // faster than AVX2's scalar tail).
    if inputs.first().is_some_and(|input| input.len() == 4) {
        // SAFETY: the AVX2 function needs AVX2 and popcnt, which this
        // kernel's `is_available` checked; it takes the same lists.
        return unsafe { (crate::kernel::x86_64::avx2::GENERIC_FNS.split_by_tables_uninit)(inputs, tables, outputs) };
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
