//! The scalar kernel: plain Rust over `u64` words, the reference every other
//! kernel is tested against.
//!
//! It is deliberately the obvious code. The compiler may still vectorise it
//! for the baseline target (SSE2 on x86-64); that is fine, it only has to be
//! correct, and it is what small inputs run on (see `SMALL_WORDS`).
//!
//! Every function is safe and works over the common length of its slices.

use core::mem::MaybeUninit;

use super::KernelFns;
use super::bits::{self, Soft};
use super::classes::{MAX_CLASS_INPUTS, split_word};

/// The scalar kernel's function table.
pub(crate) static FNS: KernelFns = KernelFns {
    popcount,
    and_popcount,
    or_popcount,
    xor_popcount,
    and_not_popcount,
    and_assign,
    or_assign,
    xor_assign,
    and_not_assign,
    not_assign,
    and_uninit,
    or_uninit,
    xor_uninit,
    and_not_uninit,
    union_many,
    first_wins_uninit,
    class_counts,
    split_by_tables_uninit,
    position_nonzero,
    position_not_all_ones,
    gather_and,
    scatter_or,
    deposit,
    extract,
    fill_periodic,
    and_shifted,
    transpose64,
    split_rows,
    join_rows,
};

#[inline]
pub(crate) fn popcount(words: &[u64]) -> u64 {
    words.iter().map(|w| u64::from(w.count_ones())).sum()
}

#[inline]
fn fused_count(a: &[u64], b: &[u64], op: impl Fn(u64, u64) -> u64) -> u64 {
    a.iter().zip(b).map(|(&x, &y)| u64::from(op(x, y).count_ones())).sum()
}

#[inline]
pub(crate) fn and_popcount(a: &[u64], b: &[u64]) -> u64 {
    fused_count(a, b, |x, y| x & y)
}

#[inline]
pub(crate) fn or_popcount(a: &[u64], b: &[u64]) -> u64 {
    fused_count(a, b, |x, y| x | y)
}

#[inline]
pub(crate) fn xor_popcount(a: &[u64], b: &[u64]) -> u64 {
    fused_count(a, b, |x, y| x ^ y)
}

#[inline]
pub(crate) fn and_not_popcount(a: &[u64], b: &[u64]) -> u64 {
    fused_count(a, b, |x, y| x & !y)
}

#[inline]
fn assign(dst: &mut [u64], src: &[u64], op: impl Fn(u64, u64) -> u64) {
    dst.iter_mut().zip(src).for_each(|(d, &s)| *d = op(*d, s));
}

#[inline]
pub(crate) fn and_assign(dst: &mut [u64], src: &[u64]) {
    assign(dst, src, |d, s| d & s);
}

#[inline]
pub(crate) fn or_assign(dst: &mut [u64], src: &[u64]) {
    assign(dst, src, |d, s| d | s);
}

#[inline]
pub(crate) fn xor_assign(dst: &mut [u64], src: &[u64]) {
    assign(dst, src, |d, s| d ^ s);
}

#[inline]
pub(crate) fn and_not_assign(dst: &mut [u64], src: &[u64]) {
    assign(dst, src, |d, s| d & !s);
}

#[inline]
pub(crate) fn not_assign(dst: &mut [u64]) {
    dst.iter_mut().for_each(|d| *d = !*d);
}

#[inline]
fn combine(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>], op: impl Fn(u64, u64) -> u64) {
    out.iter_mut().zip(a.iter().zip(b)).for_each(|(o, (&x, &y))| {
        o.write(op(x, y));
    });
}

#[inline]
pub(crate) fn and_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]) {
    combine(a, b, out, |x, y| x & y);
}

#[inline]
pub(crate) fn or_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]) {
    combine(a, b, out, |x, y| x | y);
}

#[inline]
pub(crate) fn xor_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]) {
    combine(a, b, out, |x, y| x ^ y);
}

#[inline]
pub(crate) fn and_not_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]) {
    combine(a, b, out, |x, y| x & !y);
}

#[inline]
pub(crate) fn union_many(dst: &mut [u64], srcs: &[&[u64]]) {
    let n = srcs.iter().map(|s| s.len()).fold(dst.len(), usize::min);
    for (i, d) in dst[..n].iter_mut().enumerate() {
        *d = srcs.iter().fold(0, |acc, s| acc | s[i]);
    }
}

#[inline]
pub(crate) fn first_wins_uninit(inputs: &[&[u64]], outputs: &mut [&mut [MaybeUninit<u64>]]) {
    let m = inputs.len().min(outputs.len());
    let n =
        inputs[..m].iter().map(|s| s.len()).chain(outputs[..m].iter().map(|s| s.len())).fold(usize::MAX, usize::min);
    if m == 0 {
        return;
    }
    for i in 0..n {
        let mut claimed = 0;
        for (input, output) in inputs.iter().zip(outputs.iter_mut()) {
            output[i].write(input[i] & !claimed);
            claimed |= input[i];
        }
    }
}

/// Word by word, class by class: each word's positions of every class (the
/// inputs' bits and complements ANDed), counted. Independent of the SIMD
/// kernels' intersection counts and Möbius transform.
#[inline]
pub(crate) fn class_counts(inputs: &[&[u64]], counts: &mut [u64]) {
    let p = inputs.len();
    if p > MAX_CLASS_INPUTS {
        return;
    }
    let n = inputs.iter().map(|s| s.len()).min().unwrap_or(0);
    counts.fill(0);
    for i in 0..n {
        for (class, count) in counts.iter_mut().enumerate().take(1 << p) {
            let mask = inputs.iter().enumerate().fold(u64::MAX, |mask, (input, words)| {
                mask & if class >> input & 1 == 1 { words[i] } else { !words[i] }
            });
            *count += u64::from(mask.count_ones());
        }
    }
}

#[inline]
pub(crate) fn split_by_tables_uninit(inputs: &[&[u64]], tables: &[u8], outputs: &mut [&mut [MaybeUninit<u64>]]) {
    let m = inputs.len().min(tables.len()).min(outputs.len());
    if m == 0 || m > MAX_CLASS_INPUTS {
        return;
    }
    let n = inputs[..m].iter().map(|s| s.len()).chain(outputs[..m].iter().map(|s| s.len())).min().unwrap_or(0);
    let mut held = [0u64; MAX_CLASS_INPUTS];
    for i in 0..n {
        for (word, input) in held.iter_mut().zip(&inputs[..m]) {
            *word = input[i];
        }
        for (a, output) in outputs[..m].iter_mut().enumerate() {
            output[i].write(split_word(&held[..m], a, tables[a]));
        }
    }
}

#[inline]
pub(crate) fn position_nonzero(words: &[u64]) -> Option<usize> {
    words.iter().position(|&w| w != 0)
}

#[inline]
pub(crate) fn position_not_all_ones(words: &[u64]) -> Option<usize> {
    words.iter().position(|&w| w != u64::MAX)
}

// The bit moves: the word-level loops of `bits/` with the bit-trick
// compress and expand (no SIMD, no BMI2). `tests.rs` checks every kernel,
// this one included, against bit-by-bit references.

#[inline]
pub(crate) fn gather_and(src: &[u64], stride: usize, offset: usize, width: usize, dst: &mut [u64]) {
    bits::gather_and(Soft, src, stride, offset, width, dst);
}

#[inline]
pub(crate) fn scatter_or(src: &[u64], stride: usize, offset: usize, dst: &mut [u64]) {
    bits::scatter_or(Soft, src, stride, offset, dst);
}

#[inline]
pub(crate) fn deposit(src: &[u64], src_start: usize, mask: &[u64], dst: &mut [u64]) -> usize {
    bits::deposit(Soft, src, src_start, mask, dst)
}

#[inline]
pub(crate) fn extract(src: &[u64], mask: &[u64], dst: &mut [u64], dst_start: usize) -> usize {
    bits::extract(Soft, src, mask, dst, dst_start)
}

#[inline]
pub(crate) fn fill_periodic(dst: &mut [u64], start: usize, end: usize, pattern: &[u64], period: usize) {
    bits::fill_periodic(dst, start, end, pattern, period);
}

#[inline]
pub(crate) fn and_shifted(words: &mut [u64], shift: usize) {
    bits::and_shifted(words, shift);
}

#[inline]
pub(crate) fn transpose64(words: &mut [u64]) {
    bits::transpose64(words);
}

#[inline]
pub(crate) fn split_rows(src: &[u64], rows: &mut [&mut [u64]]) {
    bits::split_rows(Soft, src, rows);
}

#[inline]
pub(crate) fn join_rows(rows: &[&[u64]], dst: &mut [u64]) {
    bits::join_rows(Soft, rows, dst);
}
