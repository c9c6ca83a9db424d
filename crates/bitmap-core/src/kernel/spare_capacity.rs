//! Kernels writing straight into a buffer's spare capacity: each new word
//! is written once by a kernel that never reads it, then the length is set,
//! so a fresh bitmap's words are never zeroed first.

use core::mem::MaybeUninit;

use super::dispatch::{
    and_not_uninit, and_uninit, count, first_wins_uninit, or_uninit, popcount, split_by_tables_uninit, xor_uninit,
};
use crate::storage::Words;

/// Appends to each output the table-driven split of `inputs` (see
/// [`split_by_tables_uninit`]): `inputs[0].len()` new words each, written
/// once into spare capacity, never zeroed first.
///
/// Panics, appending nothing, on the arguments `split_by_tables_uninit`
/// rejects.
pub(crate) fn split_by_tables_append<const N: usize>(inputs: &[&[u64]; N], tables: &[u8; N], outputs: [&mut Words; N]) {
    let n = inputs.first().map_or(0, |input| input.len());
    let mut outputs = outputs;
    {
        let mut spares: [&mut [MaybeUninit<u64>]; N] = core::array::from_fn(|_| <&mut [MaybeUninit<u64>]>::default());
        for (spare, output) in spares.iter_mut().zip(outputs.iter_mut()) {
            *spare = output.spare_after(n);
        }
        // Checks the lengths and tables; panics otherwise, before any
        // length is set below.
        split_by_tables_uninit(inputs, tables, &mut spares);
    }
    for output in outputs.iter_mut() {
        let written = output.buf.len() + n;
        // SAFETY: `split_by_tables_uninit` returned, so it wrote every word
        // of each spare, and each was exactly the `n` words of spare
        // capacity right after this buffer's `len()` (from `spare_after`,
        // with nothing changing the buffer since).
        unsafe { output.buf.set_len(written) };
    }
}

/// Replaces the words of each output with the first-wins split of `inputs`
/// (one output per input, all inputs of one length), writing each new word
/// once: the buffers are never zeroed first, which is most of what a fresh
/// plan's allocation would otherwise cost.
///
/// Panics, leaving the outputs empty, unless there are as many outputs as
/// inputs and the inputs share one length.
pub(crate) fn first_wins_overwrite<const N: usize>(inputs: &[&[u64]], mut outputs: [Option<&mut Words>; N]) {
    let (m, n) = (inputs.len(), inputs.first().map_or(0, |input| input.len()));
    {
        let mut spares: [&mut [MaybeUninit<u64>]; N] = core::array::from_fn(|_| <&mut [MaybeUninit<u64>]>::default());
        for (spare, output) in spares.iter_mut().zip(outputs.iter_mut()) {
            if let Some(output) = output {
                *spare = output.spare_for_overwrite(n);
            }
        }
        // Checks that the first `m` spares are `n` words each (a missing
        // output has an empty one); panics otherwise, before any length is
        // set below.
        first_wins_uninit(inputs, &mut spares[..m]);
    }
    for output in outputs.iter_mut().take(m).flatten() {
        let written = output.buf.len() + n;
        // SAFETY: `first_wins_uninit` returned, so it wrote every word of
        // each of the first `m` spares, and each was exactly the `n` words of
        // spare capacity right after this buffer's `len()` (from
        // `spare_for_overwrite`, with nothing changing the buffer since).
        unsafe { output.buf.set_len(written) };
    }
}

/// The word-wise binary operations that [`combine_overwrite`] can write
/// into a fresh buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Combine {
    /// `a & b`: [`and_uninit`].
    And,
    /// `a | b`: [`or_uninit`].
    Or,
    /// `a ^ b`: [`xor_uninit`].
    Xor,
    /// `a & !b`: [`and_not_uninit`].
    AndNot,
}

/// Replaces the words of `out` with `a OP b`, each written once into spare
/// capacity: a new bitmap's result costs one pass over the operands, where
/// a copy of `a` and an in-place operation would cost two (measured in
/// `docs/perf/2026-12-02-operators.md`).
///
/// Panics, leaving `out` empty, unless `a` and `b` have one length.
pub(crate) fn combine_overwrite(op: Combine, a: &[u64], b: &[u64], out: &mut Words) {
    let n = a.len();
    {
        let spare = out.spare_for_overwrite(n);
        // Each checks that `b` and `spare` are `n` words; panics otherwise,
        // before the length is set below.
        match op {
            Combine::And => and_uninit(a, b, spare),
            Combine::Or => or_uninit(a, b, spare),
            Combine::Xor => xor_uninit(a, b, spare),
            Combine::AndNot => and_not_uninit(a, b, spare),
        }
    }
    let written = out.buf.len() + n;
    // SAFETY: the operation returned, so it wrote every word of the spare,
    // which was exactly the `n` words of spare capacity right after the
    // buffer's `len()` (from `spare_for_overwrite`, with nothing changing the
    // buffer since).
    unsafe { out.buf.set_len(written) };
}

/// Appends to `out` the indices of the set bits of `words`, ascending (bit
/// `j` of word `i` is index `64·i + j`), each written once into spare
/// capacity reserved for exactly that many: no capacity check per index,
/// which `Vec::extend` over [`Ones`](crate::Ones) pays (it cannot know the
/// count), and which made up most of listing 131,072 indices.
pub(crate) fn append_ones(words: &[u64], out: &mut Vec<usize>) {
    let total = count(popcount(words));
    out.reserve(total);
    let start = out.len();
    let spare = &mut out.spare_capacity_mut()[..total];
    let mut written = 0;
    for (i, &word) in words.iter().enumerate() {
        let (mut rest, base) = (word, i * 64);
        while rest != 0 {
            // Bounds-checked: `written` stays below `total`, the popcount,
            // so the check never fails and the branch predicts.
            spare[written].write(base + rest.trailing_zeros() as usize);
            written += 1;
            rest &= rest - 1;
        }
    }
    // SAFETY: the loop wrote `spare[..written]`, the `written` words of
    // spare capacity right after `out`'s `start` initialised ones (the
    // indexing would have panicked before writing past `spare`).
    unsafe { out.set_len(start + written) };
}
