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
    union_many,
    first_wins_uninit,
    position_nonzero,
    position_not_all_ones,
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

#[inline]
pub(crate) fn position_nonzero(words: &[u64]) -> Option<usize> {
    words.iter().position(|&w| w != 0)
}

#[inline]
pub(crate) fn position_not_all_ones(words: &[u64]) -> Option<usize> {
    words.iter().position(|&w| w != u64::MAX)
}
