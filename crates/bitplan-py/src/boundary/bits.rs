//! Helpers below both bitmap classes (and the grids): the conversions of a
//! Rust [`Bitmap`] to Python values that `bitplan.Bitmap` and LMCache's
//! `Bitmap` share, and when to release the GIL. They know no Python class
//! of this crate, so every class module can use them.

use std::sync::atomic::{AtomicU64, Ordering};

use bitmap_core::Bitmap;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::boundary::memory;

/// LMCache's `highest_set_bit`: the largest set index, `-1` if none.
pub(crate) fn highest_set_bit(bits: &Bitmap) -> i64 {
    // A bit index fits in i64: a bitmap has at most isize::MAX bytes.
    bits.last_set().map_or(-1, |i| i as i64)
}

/// `ValueError` naming both lengths unless they agree.
pub(crate) fn check_same_len(a: &Bitmap, b: &Bitmap) -> PyResult<()> {
    if a.len() == b.len() {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!("length mismatch: left is {}, right is {}", a.len(), b.len())))
    }
}

/// The set indices as a new list of ints.
pub(crate) fn indices_list<'py>(py: Python<'py>, bits: &Bitmap) -> PyResult<Bound<'py, PyList>> {
    let count = bits.popcount();
    // `PyList::new` panics if CPython cannot allocate the list.
    memory::ensure_bits(count.saturating_mul(64))
        .map_err(|_| pyo3::exceptions::PyMemoryError::new_err(format!("cannot allocate a list of {count} indices")))?;
    PyList::new(py, CountedOnes { ones: bits.ones(), left: count })
}

/// A bitmap's set indices with their number known, so that `PyList::new`
/// allocates the list at its size and fills it straight from the words:
/// no vector of indices in between, which cost a pass and, at 131,072
/// indices, a megabyte of fresh pages per call.
struct CountedOnes<'b> {
    ones: bitmap_core::Ones<'b>,
    /// `popcount` minus the indices yielded so far.
    left: usize,
}

impl Iterator for CountedOnes<'_> {
    /// `i64`, not `usize`: CPython 3.11 makes an `int` from a `long long`
    /// through its one-digit fast path, but from an `unsigned long long`
    /// through its general one (an index fits: a bitmap has at most
    /// `isize::MAX` bytes).
    type Item = i64;

    #[inline]
    fn next(&mut self) -> Option<i64> {
        let index = self.ones.next()?;
        self.left -= 1;
        Some(index as i64)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for CountedOnes<'_> {}

/// The set indices, or `MemoryError` if there is no room for them.
pub(crate) fn indices(bits: &Bitmap) -> PyResult<Vec<usize>> {
    let mut out = memory::vec_with_capacity(bits.popcount(), "indices")?;
    bits.append_indices(&mut out);
    Ok(out)
}

/// Bitmaps longer than this many bits get an abbreviated `repr`
/// ([`short_repr`]): numpy's threshold for summarising an array.
const REPR_THRESHOLD: usize = 1000;

/// Bits shown at each end of an abbreviated `repr`.
const REPR_EDGE_BITS: usize = 32;

/// `bitplan.Bitmap`'s `repr`: the [`bit_string`] up to [`REPR_THRESHOLD`]
/// bits; past it, as numpy abbreviates a long array, the length, the
/// popcount and the first and last [`REPR_EDGE_BITS`] bits:
/// `Bitmap(len=262144, popcount=3, bits=0100…0000...0000…0001)`. (A
/// `repr` of 262,144 characters filled a terminal.)
pub(crate) fn short_repr(bits: &Bitmap) -> PyResult<String> {
    let len = bits.len();
    if len <= REPR_THRESHOLD {
        return bit_string(bits);
    }
    let edge =
        |range: core::ops::Range<usize>| -> String { range.map(|i| if bits.test(i) { '1' } else { '0' }).collect() };
    Ok(format!(
        "Bitmap(len={len}, popcount={}, bits={}...{})",
        bits.popcount(),
        edge(0..REPR_EDGE_BITS),
        edge(len - REPR_EDGE_BITS..len)
    ))
}

/// LMCache's `repr`: one `'0'`/`'1'` per bit, or `MemoryError` if the
/// string does not fit.
pub(crate) fn bit_string(bits: &Bitmap) -> PyResult<String> {
    use core::fmt::Write;
    let mut out = String::new();
    out.try_reserve_exact(bits.len()).map_err(|_| {
        pyo3::exceptions::PyMemoryError::new_err(format!("cannot allocate a string of {} characters", bits.len()))
    })?;
    write!(out, "{bits}").expect("writing into a String with room for it does not fail");
    Ok(out)
}

/// `[items[i] for i in bits if i < len(items)]`.
pub(crate) fn gather_items<'py>(
    py: Python<'py>,
    bits: &Bitmap,
    items: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let count = items.len()?;
    let out = PyList::empty(py);
    for i in bits.ones().take_while(|&i| i < count) {
        out.append(items.get_item(i)?)?;
    }
    Ok(out)
}

/// `type(obj).__name__`, for messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map_or_else(|_| "?".to_owned(), |name| name.to_string())
}

/// Bitmaps of at least this many words are worth releasing the GIL for:
/// 4,096 words (262,144 bits) take about a microsecond for the cheapest
/// operation, against a tenth of that to release and retake the GIL.
pub(crate) const DETACH_WORDS: usize = 4096;

/// Runs `work` with the GIL released if `words` is large enough for
/// another Python thread to get real work done meanwhile.
#[inline]
pub(crate) fn detach_if_large<T: Send>(py: Python<'_>, words: usize, work: impl FnOnce() -> T + Send) -> T {
    if words >= DETACH_WORDS { detach(py, work) } else { work() }
}

/// How many times work has entered a GIL-released section ([`detach`]),
/// since the module was loaded. The tests read it through
/// `_native._detached_calls()` to tell whether a call released the GIL:
/// asking another thread whether it ran during the call measured the
/// scheduler instead, and failed on loaded machines (issue #27).
static DETACHED_CALLS: AtomicU64 = AtomicU64::new(0);

/// Runs `work` with the GIL released, counted in [`DETACHED_CALLS`]. Every
/// release of the GIL in this crate goes through here. The count is one
/// relaxed increment, made inside the released section (so that it proves
/// the release, not just the intent), against the microsecond the work
/// takes.
pub(crate) fn detach<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send) -> T {
    py.detach(|| {
        DETACHED_CALLS.fetch_add(1, Ordering::Relaxed);
        work()
    })
}

/// `_native._detached_calls()`: the number of GIL-released sections
/// entered so far ([`DETACHED_CALLS`]). Private: for the tests.
#[pyfunction(name = "_detached_calls")]
pub(crate) fn detached_calls() -> u64 {
    DETACHED_CALLS.load(Ordering::Relaxed)
}
