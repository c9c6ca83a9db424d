//! The generic operations over many inputs: their union, the first-wins
//! split, the class counts and the split by truth tables.

use core::mem::MaybeUninit;

use super::scans::HarleySeal;
use crate::kernel::classes::{exact_from_common, split_word};
use crate::kernel::vector::Vector;

/// The common length of a destination and a list of sources.
#[inline(always)]
fn common_len(first: usize, rest: impl Iterator<Item = usize>) -> usize {
    rest.fold(first, usize::min)
}

/// `dst = srcs[0] | srcs[1] | ...` in one pass: each destination vector is
/// written once, after OR-ing the sources in registers. No sources clears
/// `dst`.
///
/// # Safety
/// The CPU supports `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn union_many<V: Vector>(dst: &mut [u64], srcs: &[&[u64]]) {
    let n = common_len(dst.len(), srcs.iter().map(|s| s.len()));
    let d = dst.as_mut_ptr();
    let w = V::WORDS;
    let mut i = 0;
    // SAFETY: every slice holds at least `n` words, and indices
    // are checked against `n` by the loop conditions; the caller guarantees
    // V's feature.
    unsafe {
        while i + 2 * w <= n {
            let (mut a0, mut a1) = (V::zero(), V::zero());
            for s in srcs {
                let p = s.as_ptr();
                a0 = a0.or(V::load(p.add(i)));
                a1 = a1.or(V::load(p.add(i + w)));
            }
            a0.store(d.add(i));
            a1.store(d.add(i + w));
            i += 2 * w;
        }
        while i < n {
            let mut acc = 0;
            for s in srcs {
                acc |= *s.as_ptr().add(i);
            }
            *d.add(i) = acc;
            i += 1;
        }
    }
}

/// The first-adapter-wins plan in one pass over the words: for every word,
/// in input order, `outputs[a] = inputs[a] & !claimed; claimed |= inputs[a]`.
///
/// `claimed` lives in registers, each output is written exactly once, and no
/// intermediate bitmap exists. Inputs beyond the number of outputs (or the
/// other way round) are ignored.
///
/// The outputs may be uninitialised: every word of the common length is
/// written (and none read), which is what lets a fresh plan skip zeroing
/// its buffers first.
///
/// Every count takes the same step ([`first_wins_step`]): the inputs in
/// groups of 4 and a last group of 1 to 4, so 1 to 4 inputs (the usual
/// adapters) are one group, and a controller's 5 to 9 tiers two or three.
///
/// # Safety
/// The CPU supports `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn first_wins<V: Vector>(inputs: &[&[u64]], outputs: &mut [&mut [MaybeUninit<u64>]]) {
    let m = inputs.len().min(outputs.len());
    let (inputs, outputs) = (&inputs[..m], &mut outputs[..m]);
    if m == 0 {
        return;
    }
    // A plain loop over the pairs, not `common_len` over a chained
    // iterator, which LLVM vectorised with a prologue longer than the
    // reduction of a handful of lengths (20 instructions a call more, at
    // 1,024 keys × 3 adapters).
    let mut n = usize::MAX;
    for (input, output) in inputs.iter().zip(outputs.iter()) {
        n = n.min(input.len()).min(output.len());
    }
    // SAFETY: every slice holds at least `n` words; the caller guarantees
    // V's feature. (1 to 4 inputs have their own arms, where the count is
    // a constant, so that their copies of the loop have no groups of 4
    // before the last one to go through.)
    unsafe {
        match m {
            1 => first_wins_groups::<V, 1>(inputs, outputs, n),
            2 => first_wins_groups::<V, 2>(inputs, outputs, n),
            3 => first_wins_groups::<V, 3>(inputs, outputs, n),
            4 => first_wins_groups::<V, 4>(inputs, outputs, n),
            _ => match m % 4 {
                1 => first_wins_groups::<V, 1>(inputs, outputs, n),
                2 => first_wins_groups::<V, 2>(inputs, outputs, n),
                3 => first_wins_groups::<V, 3>(inputs, outputs, n),
                _ => first_wins_groups::<V, 4>(inputs, outputs, n),
            },
        }
    }
}

/// What one step of [`first_wins`] takes of each input: two vectors in the
/// main loop, which keep two independent dependency chains on `claimed`
/// (a cache line with AVX2), or one word in the tail. One trait, so that
/// both loops run the same step.
trait Lanes: Copy {
    /// The words one value covers.
    const WORDS: usize;
    /// No bits set.
    ///
    /// # Safety
    /// The CPU supports the lanes' feature.
    unsafe fn zero() -> Self;
    /// The `WORDS` words at `src`.
    ///
    /// # Safety
    /// `WORDS` words at `src` are readable; the CPU supports the feature.
    unsafe fn load(src: *const u64) -> Self;
    /// Writes the value to the `WORDS` words at `dst`.
    ///
    /// # Safety
    /// `WORDS` words at `dst` are writable; the CPU supports the feature.
    unsafe fn store(self, dst: *mut u64);
    /// `self & !other`.
    ///
    /// # Safety
    /// The CPU supports the lanes' feature.
    unsafe fn and_not(self, other: Self) -> Self;
    /// `self | other`.
    ///
    /// # Safety
    /// The CPU supports the lanes' feature.
    unsafe fn or(self, other: Self) -> Self;
}

impl<V: Vector> Lanes for [V; 2] {
    const WORDS: usize = 2 * V::WORDS;

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the caller guarantees V's feature.
        unsafe { [V::zero(); 2] }
    }
    #[inline(always)]
    unsafe fn load(src: *const u64) -> Self {
        // SAFETY: the caller guarantees `2 * V::WORDS` readable words and
        // V's feature.
        unsafe { [V::load(src), V::load(src.add(V::WORDS))] }
    }
    #[inline(always)]
    unsafe fn store(self, dst: *mut u64) {
        // SAFETY: the caller guarantees `2 * V::WORDS` writable words and
        // V's feature.
        unsafe {
            self[0].store(dst);
            self[1].store(dst.add(V::WORDS));
        }
    }
    #[inline(always)]
    unsafe fn and_not(self, other: Self) -> Self {
        // SAFETY: the caller guarantees V's feature.
        unsafe { [self[0].and_not(other[0]), self[1].and_not(other[1])] }
    }
    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        // SAFETY: the caller guarantees V's feature.
        unsafe { [self[0].or(other[0]), self[1].or(other[1])] }
    }
}

impl Lanes for u64 {
    const WORDS: usize = 1;

    #[inline(always)]
    unsafe fn zero() -> Self {
        0
    }
    #[inline(always)]
    unsafe fn load(src: *const u64) -> Self {
        // SAFETY: the caller guarantees a readable word at `src`.
        unsafe { *src }
    }
    #[inline(always)]
    unsafe fn store(self, dst: *mut u64) {
        // SAFETY: the caller guarantees a writable word at `dst`.
        unsafe { dst.write(self) }
    }
    #[inline(always)]
    unsafe fn and_not(self, other: Self) -> Self {
        self & !other
    }
    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        self | other
    }
}

/// [`first_wins`] over `n` words, the inputs in groups of 4 and a last
/// group of `LAST` (1 to 4): `inputs.len() - LAST` is a multiple of 4.
/// The last group's pointers are taken once, since it is the only group
/// of 1 to 4 inputs; the others' are read at each step.
///
/// # Safety
/// Every input and output holds at least `n` words, the two lists have the
/// same length, at least `LAST`; the CPU supports `V`'s feature.
#[inline(always)]
unsafe fn first_wins_groups<V: Vector, const LAST: usize>(
    inputs: &[&[u64]],
    outputs: &mut [&mut [MaybeUninit<u64>]],
    n: usize,
) {
    let whole = inputs.len() - LAST;
    let (groups_in, last_in) = inputs.split_at(whole);
    let (groups_out, last_out) = outputs.split_at_mut(whole);
    let (groups_in, _) = groups_in.as_chunks::<4>();
    let (groups_out, _) = groups_out.as_chunks_mut::<4>();
    let last_src: [*const u64; LAST] = core::array::from_fn(|a| last_in[a].as_ptr());
    let last_dst: [*mut u64; LAST] = core::array::from_fn(|a| last_out[a].as_mut_ptr().cast::<u64>());
    let mut i = 0;
    // SAFETY: every pointer has `n` words behind it and the loop conditions
    // keep each step's words below `n`; the caller guarantees V's feature.
    unsafe {
        while i + <[V; 2]>::WORDS <= n {
            first_wins_step::<[V; 2], LAST>(groups_in, groups_out, &last_src, &last_dst, i);
            i += <[V; 2]>::WORDS;
        }
        while i < n {
            first_wins_step::<u64, LAST>(groups_in, groups_out, &last_src, &last_dst, i);
            i += 1;
        }
    }
}

/// One step of [`first_wins`] at word `i`, over every input: each group of
/// 4 and then the last group in turn, `claimed` carried from one group to
/// the next in registers.
///
/// # Safety
/// Every input and output (of the groups and behind the last group's
/// pointers) holds the `L::WORDS` words at `i`; the CPU supports the
/// lanes' feature.
#[inline(always)]
unsafe fn first_wins_step<L: Lanes, const LAST: usize>(
    groups_in: &[[&[u64]; 4]],
    groups_out: &mut [[&mut [MaybeUninit<u64>]; 4]],
    last_src: &[*const u64; LAST],
    last_dst: &[*mut u64; LAST],
    i: usize,
) {
    // SAFETY: the caller guarantees the words and the feature.
    unsafe {
        let mut claimed = L::zero();
        for (group_in, group_out) in groups_in.iter().zip(groups_out.iter_mut()) {
            let src = group_in.each_ref().map(|input| input.as_ptr());
            let dst = group_out.each_mut().map(|output| output.as_mut_ptr().cast::<u64>());
            claimed = first_wins_group::<L, 4>(&src, &dst, i, claimed);
        }
        first_wins_group::<L, LAST>(last_src, last_dst, i, claimed);
    }
}

/// A group of `G` inputs (1 to 4) at word `i`, every load before the first
/// store; returns `claimed` with the group's bits added. Equal-sized
/// bitmaps tend to share their offset within a 4 KiB page, and a load that
/// follows a store at the same page offset waits on it as if they
/// overlapped (4K aliasing): with one input's stores between the next
/// one's loads, every input after the first paid that. A group of 4 keeps
/// 8 vectors in registers with AVX2 (and `claimed`, 2 more, of 16), where
/// a group of every input would spill. (The portable kernel's `u64x4` is
/// two SSE2 registers on x86-64, so its group of 4 spills a few.)
///
/// # Safety
/// Every pointer has the `L::WORDS` words at `i` behind it; the CPU
/// supports the lanes' feature.
#[inline(always)]
unsafe fn first_wins_group<L: Lanes, const G: usize>(
    src: &[*const u64; G],
    dst: &[*mut u64; G],
    i: usize,
    mut claimed: L,
) -> L {
    // SAFETY: the caller guarantees the words and the feature.
    unsafe {
        let mut x = [L::zero(); G];
        for (x, src) in x.iter_mut().zip(src) {
            *x = L::load(src.add(i));
        }
        for (x, dst) in x.iter().zip(dst) {
            x.and_not(claimed).store(dst.add(i));
            claimed = claimed.or(*x);
        }
        claimed
    }
}

/// Calls `$call` with `$set` bound to each non-empty set of `$p` inputs, as
/// a constant: the set is a const generic argument, so each call unrolls
/// into straight-line code for that set.
macro_rules! for_each_set {
    ($p:ident, $set:ident => $call:expr) => {
        for_each_set!(@ $p, $set => $call; 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    };
    (@ $p:ident, $set:ident => $call:expr; $($s:literal)*) => {
        $(
            if $s < 1 << $p {
                const $set: usize = $s;
                $call;
            }
        )*
    };
}

/// The AND of the inputs in `SET` (non-empty) at word `i`, as a vector.
///
/// # Safety
/// Each input of `SET` holds at least `i + V::WORDS` words; the CPU
/// supports `V`'s feature.
#[inline(always)]
unsafe fn intersection<V: Vector, const P: usize, const SET: usize>(src: &[*const u64; P], i: usize) -> V {
    let first = SET.trailing_zeros() as usize;
    // SAFETY: the caller keeps `i + V::WORDS` within every input of `SET`.
    unsafe {
        let mut acc = V::load(src[first].add(i));
        for (p, input) in src.iter().enumerate().skip(first + 1) {
            if SET >> p & 1 == 1 {
                acc = acc.and(V::load(input.add(i)));
            }
        }
        acc
    }
}

/// The class counts of `P` inputs (see [`super::class_counts`]): `counts[c]`
/// is the number of bit positions whose set of inputs holding them is
/// exactly `c`, over the common length of the inputs.
///
/// One pass over the words, 16 vectors at a time: for each non-empty set
/// `T` of inputs, the AND of `T`'s vectors (re-read from L1 per set, which
/// is cheaper than keeping `2^P − 1` products in registers) goes into
/// `T`'s own [`HarleySeal`] count; the Möbius transform then turns these
/// intersection counts into class counts. That is `2^P − 1` Harley–Seal
/// streams, each as cheap as one `popcount`, over data read from memory
/// once.
///
/// `C` is `2^P`: the counts are sized by it, so that only the `2^P − 1`
/// counts in use are set up. (Setting up 16 of them zeroed 2.5 KiB per
/// call: 4% of a `balanced` plan of 262,144 keys × 3, which calls this once
/// per 256-word super-block.)
///
/// # Safety
/// `inputs.len()` is `P`; the CPU supports `V`'s feature.
#[inline(always)]
unsafe fn class_counts_of<V: Vector, const P: usize, const C: usize>(inputs: &[&[u64]], counts: &mut [u64]) {
    debug_assert_eq!(C, 1 << P);
    let n = common_len(usize::MAX, inputs.iter().map(|s| s.len()));
    let mut src = [core::ptr::null::<u64>(); P];
    for (src, input) in src.iter_mut().zip(inputs) {
        *src = input.as_ptr();
    }
    let w = V::WORDS;
    let mut common = [0u64; 16];
    let mut i = 0;
    // SAFETY: every input holds at least `n` words and indices are checked
    // against `n` by the loop conditions; the caller guarantees V's feature.
    unsafe {
        if n >= 16 * w {
            let mut blocks = [HarleySeal::<V>::new(); C];
            while i + 16 * w <= n {
                for_each_set!(P, SET => blocks[SET].add16(|k| intersection::<V, P, SET>(&src, i + k * w)));
                i += 16 * w;
            }
            for (count, block) in common.iter_mut().zip(&blocks).skip(1).take((1 << P) - 1) {
                *count = block.count();
            }
        }
        while i < n {
            let mut held = [0u64; P];
            for (word, src) in held.iter_mut().zip(&src) {
                *word = *src.add(i);
            }
            for (set, count) in common.iter_mut().enumerate().skip(1).take((1 << P) - 1) {
                let all =
                    held.iter().enumerate().filter(|&(p, _)| set >> p & 1 == 1).fold(u64::MAX, |acc, (_, &x)| acc & x);
                *count += u64::from(all.count_ones());
            }
            i += 1;
        }
    }
    common[0] = 64 * n as u64;
    exact_from_common(&mut common[..1 << P]);
    for (count, &exact) in counts.iter_mut().zip(&common[..1 << P]) {
        *count = exact;
    }
}

/// The class counts of up to [`MAX_CLASS_INPUTS`](crate::kernel::MAX_CLASS_INPUTS) inputs into `counts` (see
/// [`super::class_counts`]); more inputs leave `counts` alone, and no
/// inputs count no positions.
///
/// # Safety
/// The CPU supports `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn class_counts<V: Vector>(inputs: &[&[u64]], counts: &mut [u64]) {
    // SAFETY: each arm passes exactly `P` inputs; the caller guarantees
    // V's feature.
    unsafe {
        match inputs.len() {
            0 => counts.fill(0),
            1 => class_counts_of::<V, 1, 2>(inputs, counts),
            2 => class_counts_of::<V, 2, 4>(inputs, counts),
            3 => class_counts_of::<V, 3, 8>(inputs, counts),
            4 => class_counts_of::<V, 4, 16>(inputs, counts),
            _ => {}
        }
    }
}

/// The entry of a multiplexer tree that the `K` selector vectors choose,
/// bit by bit: `entries[j]` where the `k`-th selector's bit is bit `k` of
/// `j`. (With constant entries the first level's `low ^ high` is
/// loop-invariant, so it costs two operations per node.)
///
/// # Safety
/// The CPU supports `V`'s feature.
#[inline(always)]
unsafe fn multiplex<V: Vector, const K: usize>(selectors: [V; K], entries: &[V; 8]) -> V {
    let mut level = *entries;
    let mut width = 1 << K;
    // SAFETY: the caller guarantees V's feature.
    unsafe {
        for bits in selectors {
            width /= 2;
            for entry in 0..width {
                let (low, high) = (level[2 * entry], level[2 * entry + 1]);
                level[entry] = low.xor(bits.and(low.xor(high)));
            }
        }
    }
    level[0]
}

/// The table-driven split of `P = K + 1` inputs (see
/// [`super::split_by_tables`]) in one pass: each input vector is read
/// once and each output vector written once.
///
/// # Safety
/// `inputs`, `tables` and `outputs` have at least `P` entries; the CPU
/// supports `V`'s feature.
#[inline(always)]
unsafe fn split_by_tables_of<V: Vector, const P: usize, const K: usize>(
    inputs: &[&[u64]],
    tables: &[u8],
    outputs: &mut [&mut [MaybeUninit<u64>]],
) {
    debug_assert_eq!(K + 1, P);
    let n = common_len(usize::MAX, inputs[..P].iter().map(|s| s.len()).chain(outputs[..P].iter().map(|s| s.len())));
    let mut src = [core::ptr::null::<u64>(); P];
    let mut dst = [core::ptr::null_mut::<u64>(); P];
    let mut own_tables = [0u8; P];
    for a in 0..P {
        (src[a], dst[a], own_tables[a]) = (inputs[a].as_ptr(), outputs[a].as_mut_ptr().cast::<u64>(), tables[a]);
    }
    let tables = own_tables;
    let w = V::WORDS;
    let mut i = 0;
    // SAFETY: every input and output holds at least `n` words and indices
    // are checked against `n` by the loop conditions (the head's words are
    // fewer than `w`, of at least `2 * w`); the outputs are distinct `&mut`
    // slices, so no store hits an input or another output; the caller
    // guarantees V's feature.
    //
    // (Plain loops rather than `array::from_fn`: its closures are not
    // compiled with this function's target features, so intrinsics called
    // in them are not inlined.)
    unsafe {
        let mut entries = [[V::zero(); 8]; P];
        for (entries, &table) in entries.iter_mut().zip(&tables) {
            for (entry, vector) in entries.iter_mut().enumerate() {
                if table >> entry & 1 == 1 {
                    *vector = V::splat(u64::MAX);
                }
            }
        }
        // The words before the first output's next vector boundary one at a
        // time, so that the main loop's stores (and its loads, where the
        // slices share that alignment, as the runs of a `SplitWriter` do)
        // do not cross a cache line: a `balanced` plan routes its words in
        // runs that start wherever an owner changed. (Only with a main loop
        // after them.)
        if n >= 2 * w {
            let head = (dst[0] as usize).wrapping_neg() % (w * 8) / 8;
            while i < head {
                split_scalar::<P>(&src, &dst, &tables, i);
                i += 1;
            }
        }
        while i + w <= n {
            let mut held = [V::zero(); P];
            for p in 0..P {
                held[p] = V::load(src[p].add(i));
            }
            for a in 0..P {
                let mut others = [V::zero(); K];
                for (k, other) in others.iter_mut().enumerate() {
                    *other = held[k + usize::from(k >= a)];
                }
                held[a].and(multiplex::<V, K>(others, &entries[a])).store(dst[a].add(i));
            }
            i += w;
        }
        while i < n {
            split_scalar::<P>(&src, &dst, &tables, i);
            i += 1;
        }
    }
}

/// Word `i` of the table-driven split (see [`split_by_tables_of`]), one
/// word at a time.
///
/// # Safety
/// Every input and output holds word `i`; no output overlaps an input.
#[inline(always)]
unsafe fn split_scalar<const P: usize>(src: &[*const u64; P], dst: &[*mut u64; P], tables: &[u8; P], i: usize) {
    let mut held = [0u64; P];
    // SAFETY: the caller guarantees word `i` of every input and output.
    unsafe {
        for (word, src) in held.iter_mut().zip(src) {
            *word = *src.add(i);
        }
        for (a, &table) in tables.iter().enumerate() {
            dst[a].add(i).write(split_word(&held, a, table));
        }
    }
}

/// The table-driven split of up to [`MAX_CLASS_INPUTS`](crate::kernel::MAX_CLASS_INPUTS) inputs (see
/// [`super::split_by_tables`]); more, or mismatched lists, write nothing
/// past the shortest list.
///
/// # Safety
/// The CPU supports `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn split_by_tables<V: Vector>(
    inputs: &[&[u64]],
    tables: &[u8],
    outputs: &mut [&mut [MaybeUninit<u64>]],
) {
    // SAFETY: each arm runs with `P` at most the length of every list; the
    // caller guarantees V's feature.
    unsafe {
        match inputs.len().min(tables.len()).min(outputs.len()) {
            1 => split_by_tables_of::<V, 1, 0>(inputs, tables, outputs),
            2 => split_by_tables_of::<V, 2, 1>(inputs, tables, outputs),
            3 => split_by_tables_of::<V, 3, 2>(inputs, tables, outputs),
            4 => split_by_tables_of::<V, 4, 3>(inputs, tables, outputs),
            _ => {}
        }
    }
}
