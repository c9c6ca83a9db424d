//! The generic word-for-word operations into one output: in place, into
//! a new buffer, and the complement.

use core::mem::MaybeUninit;

use super::sources::BinaryOp;
use crate::kernel::vector::Vector;

/// `dst[i] = O(dst[i], src[i])` over the common length.
///
/// # Safety
/// The CPU supports `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn assign<V: Vector, O: BinaryOp>(dst: &mut [u64], src: &[u64]) {
    let n = dst.len().min(src.len());
    let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
    let w = V::WORDS;
    let mut i = 0;
    // SAFETY: indices are checked against `n`, the shorter
    // length, by the loop conditions; the caller guarantees V's feature.
    unsafe {
        while i + 4 * w <= n {
            let a = [0, 1, 2, 3].map(|k| V::load(d.add(i + k * w)));
            let b = [0, 1, 2, 3].map(|k| V::load(s.add(i + k * w)));
            for k in 0..4 {
                O::vector(a[k], b[k]).store(d.add(i + k * w));
            }
            i += 4 * w;
        }
        while i + w <= n {
            O::vector(V::load(d.add(i)), V::load(s.add(i))).store(d.add(i));
            i += w;
        }
        while i < n {
            *d.add(i) = O::word(*d.add(i), *s.add(i));
            i += 1;
        }
    }
}

/// `out[i] = O(a[i], b[i])` over the common length of the three, each word
/// of `out` written once and never read, so `out` may be uninitialised.
///
/// # Safety
/// The CPU supports `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn combine<V: Vector, O: BinaryOp>(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]) {
    let n = a.len().min(b.len()).min(out.len());
    let (x, y, d) = (a.as_ptr(), b.as_ptr(), out.as_mut_ptr().cast::<u64>());
    let w = V::WORDS;
    let mut i = 0;
    // SAFETY: indices are checked against `n`, the shortest length, by the
    // loop conditions; `MaybeUninit<u64>` has `u64`'s layout, and `store`
    // and `write` only write; the caller guarantees V's feature.
    unsafe {
        while i + 4 * w <= n {
            let p = [0, 1, 2, 3].map(|k| V::load(x.add(i + k * w)));
            let q = [0, 1, 2, 3].map(|k| V::load(y.add(i + k * w)));
            for k in 0..4 {
                O::vector(p[k], q[k]).store(d.add(i + k * w));
            }
            i += 4 * w;
        }
        while i + w <= n {
            O::vector(V::load(x.add(i)), V::load(y.add(i))).store(d.add(i));
            i += w;
        }
        while i < n {
            d.add(i).write(O::word(*x.add(i), *y.add(i)));
            i += 1;
        }
    }
}

/// `dst[i] = !dst[i]`.
///
/// # Safety
/// The CPU supports `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn not<V: Vector>(dst: &mut [u64]) {
    let n = dst.len();
    let d = dst.as_mut_ptr();
    let w = V::WORDS;
    let mut i = 0;
    // SAFETY: indices are checked against `n` by the loop
    // conditions; the caller guarantees V's feature.
    unsafe {
        while i + 4 * w <= n {
            let a = [0, 1, 2, 3].map(|k| V::load(d.add(i + k * w)));
            for (k, v) in a.into_iter().enumerate() {
                v.not().store(d.add(i + k * w));
            }
            i += 4 * w;
        }
        while i + w <= n {
            V::load(d.add(i)).not().store(d.add(i));
            i += w;
        }
        while i < n {
            *d.add(i) = !*d.add(i);
            i += 1;
        }
    }
}
