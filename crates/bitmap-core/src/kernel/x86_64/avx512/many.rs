//! The AVX-512 operations over many inputs: the first-wins split, the
//! class counts and the split by truth tables, each in `vpternlogq`
//! three-input logic where it saves instructions, with `k`-masked tails.

use core::arch::x86_64::*;
use core::mem::MaybeUninit;

use super::lanes::{W, first_lanes, load, store, ternlog, truth_table, words_to_line};
use crate::kernel::classes::exact_from_common;
use crate::kernel::vector::Vector;

/// A group of `G` inputs (1 to 4) of the first-wins split at word `i`,
/// every load before the first store; returns `claimed` with the group's
/// bits added. Equal-sized bitmaps tend to share their offset within a
/// 4 KiB page, and a load that follows a store at the same page offset
/// waits on it as if they overlapped (4K aliasing): with the stores of one
/// input between the loads of the next, every step after the first pair
/// paid that. Loading first, the reused plan at 262,144 keys × 3 went from
/// 1.04–1.32× to 1.02–1.13× the time of copying its inputs in the
/// interleaved example, and plan calls alone took 5% less
/// (docs/PERFORMANCE.md).
///
/// The inputs two at a time, so that the second of a pair does not wait
/// for the first to be added to `claimed`. Three instructions per pair
/// instead of four: `out[a] = in[a] & !claimed`, `out[a + 1] = in[a + 1] &
/// !(claimed | in[a])`, `claimed |= in[a] | in[a + 1]`.
///
/// # Safety
/// Every pointer has the lanes at `i` that `TAIL`/`mask` select behind it;
/// the CPU supports the kernel's features.
#[inline(always)]
unsafe fn first_wins_group<const G: usize, const TAIL: bool>(
    src: &[*const u64; G],
    dst: &[*mut u64; G],
    i: usize,
    mask: __mmask8,
    mut claimed: __m512i,
) -> __m512i {
    // SAFETY: the caller guarantees the lanes and the features.
    unsafe {
        let mut v = [__m512i::zero(); G];
        for (v, src) in v.iter_mut().zip(src) {
            *v = load::<TAIL>(src.add(i), mask);
        }
        let mut a = 0;
        while a + 2 <= G {
            let (x, y) = (v[a], v[a + 1]);
            store::<TAIL>(dst[a].add(i), mask, x.and_not(claimed));
            store::<TAIL>(dst[a + 1].add(i), mask, ternlog::<{ truth_table::AND_NOT_EITHER }>(y, claimed, x));
            claimed = ternlog::<{ truth_table::OR3 }>(claimed, x, y);
            a += 2;
        }
        if a < G {
            store::<TAIL>(dst[a].add(i), mask, v[a].and_not(claimed));
            claimed = claimed.or(v[a]);
        }
        claimed
    }
}

/// One vector of the first-wins split at word `i`, over every input: each
/// group of 4 and then the last group in turn, `claimed` carried from one
/// group to the next in a register.
///
/// # Safety
/// Every input and output (of the groups and behind the last group's
/// pointers) holds the lanes at `i` that `TAIL`/`mask` select; the CPU
/// supports the kernel's features.
#[inline(always)]
unsafe fn first_wins_step<const LAST: usize, const TAIL: bool>(
    groups_in: &[[&[u64]; 4]],
    groups_out: &mut [[&mut [MaybeUninit<u64>]; 4]],
    last_src: &[*const u64; LAST],
    last_dst: &[*mut u64; LAST],
    i: usize,
    mask: __mmask8,
) {
    // SAFETY: the caller guarantees the lanes and the features.
    unsafe {
        let mut claimed = __m512i::zero();
        for (group_in, group_out) in groups_in.iter().zip(groups_out.iter_mut()) {
            let src = group_in.each_ref().map(|input| input.as_ptr());
            let dst = group_out.each_mut().map(|output| output.as_mut_ptr().cast::<u64>());
            claimed = first_wins_group::<4, TAIL>(&src, &dst, i, mask, claimed);
        }
        first_wins_group::<LAST, TAIL>(last_src, last_dst, i, mask, claimed);
    }
}

/// The first-wins split over `n` words, the inputs in groups of 4 and a
/// last group of `LAST` (1 to 4): `inputs.len() - LAST` is a multiple of
/// 4. The last group's pointers are taken once, since it is the only group
/// of 1 to 4 inputs; the others' are read at each step.
///
/// # Safety
/// Every input and output holds at least `n` words, the two lists have the
/// same length, at least `LAST`; the CPU supports the kernel's features.
#[inline(always)]
unsafe fn first_wins_groups<const LAST: usize>(inputs: &[&[u64]], outputs: &mut [&mut [MaybeUninit<u64>]], n: usize) {
    let whole = inputs.len() - LAST;
    let (groups_in, last_in) = inputs.split_at(whole);
    let (groups_out, last_out) = outputs.split_at_mut(whole);
    let (groups_in, _) = groups_in.as_chunks::<4>();
    let (groups_out, _) = groups_out.as_chunks_mut::<4>();
    let last_src: [*const u64; LAST] = core::array::from_fn(|a| last_in[a].as_ptr());
    let last_dst: [*mut u64; LAST] = core::array::from_fn(|a| last_out[a].as_mut_ptr().cast::<u64>());
    let mut i = 0;
    // SAFETY: every slice and pointer has `n` words behind it and each step
    // covers words below `n` (the loop condition, the tail's mask); the
    // caller guarantees the features.
    unsafe {
        while i + W <= n {
            first_wins_step::<LAST, false>(groups_in, groups_out, &last_src, &last_dst, i, first_lanes(W));
            i += W;
        }
        if i < n {
            first_wins_step::<LAST, true>(groups_in, groups_out, &last_src, &last_dst, i, first_lanes(n - i));
        }
    }
}

/// The first-wins split (see [`first_wins`](crate::kernel::first_wins)):
/// every count takes the same step, the inputs in groups of 4 and a last
/// group of 1 to 4, so 1 to 4 inputs (the usual adapters) are one group,
/// and a controller's 5 to 9 tiers two or three.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
pub(super) unsafe fn first_wins_uninit(inputs: &[&[u64]], outputs: &mut [&mut [MaybeUninit<u64>]]) {
    let m = inputs.len().min(outputs.len());
    let (inputs, outputs) = (&inputs[..m], &mut outputs[..m]);
    let n = inputs.iter().map(|s| s.len()).chain(outputs.iter().map(|s| s.len())).fold(usize::MAX, usize::min);
    // SAFETY: every slice holds at least `n` words and both lists have `m`
    // entries, at least the arm's last group; the caller guarantees the
    // features. (1 to 4 inputs have their own arms, where the count is a
    // constant, so that their copies of the loop have no groups of 4
    // before the last one to go through.)
    unsafe {
        match m {
            0 => {}
            1 => first_wins_groups::<1>(inputs, outputs, n),
            2 => first_wins_groups::<2>(inputs, outputs, n),
            3 => first_wins_groups::<3>(inputs, outputs, n),
            4 => first_wins_groups::<4>(inputs, outputs, n),
            _ => first_wins_more(inputs, outputs, n),
        }
    }
}

/// [`first_wins_uninit`] for more than 4 inputs, in a function of its own:
/// inlined, its loops needed callee-saved registers, which every call
/// saved and restored, with 1 to 4 inputs too.
///
/// # Safety
/// Every input and output holds at least `n` words, the two lists have the
/// same length, more than 4; the CPU supports the kernel's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")]
#[inline(never)]
unsafe fn first_wins_more(inputs: &[&[u64]], outputs: &mut [&mut [MaybeUninit<u64>]], n: usize) {
    // SAFETY: as the caller's; the last group's size is the count's
    // remainder after whole groups of 4, and there are at least 5 inputs.
    unsafe {
        match inputs.len() % 4 {
            1 => first_wins_groups::<1>(inputs, outputs, n),
            2 => first_wins_groups::<2>(inputs, outputs, n),
            3 => first_wins_groups::<3>(inputs, outputs, n),
            _ => first_wins_groups::<4>(inputs, outputs, n),
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
