//! Python arguments to Rust values, with the messages and exception types
//! a Python caller expects: every message names the value it refuses.

use pyo3::exceptions::{PyIndexError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyInt;

/// A bit count from Python for the Pythonic API: `ValueError` if negative,
/// `OverflowError` if it does not fit in 64 bits, `TypeError` if it is not
/// an integer. `what` names the argument in the message.
pub(crate) fn count(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    match obj.extract::<i64>() {
        Ok(n) => usize::try_from(n).map_err(|_| PyValueError::new_err(format!("{what} must not be negative, got {n}"))),
        Err(error) => Err(widen_overflow(obj, error, what)),
    }
}

/// A bit count for the LMCache layer, where LMCache's pybind11 signature
/// takes a `size_t`: a negative value is a `TypeError` there, as pybind11
/// refuses the conversion.
pub(crate) fn size_t(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    match obj.extract::<i64>() {
        Ok(n) => usize::try_from(n)
            .map_err(|_| PyTypeError::new_err(format!("{what} must be a non-negative integer (size_t), got {n}"))),
        Err(error) => Err(widen_overflow(obj, error, what)),
    }
}

/// A signed count from Python (a chunk count, a hit length) whose negative
/// values the callee judges itself.
pub(crate) fn signed(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    obj.extract::<i64>().map_err(|error| widen_overflow(obj, error, what))
}

/// PyO3's overflow message does not say which value overflowed; this one
/// does. Other errors (a `str` where an `int` belongs) pass unchanged.
fn widen_overflow(obj: &Bound<'_, PyAny>, error: PyErr, what: &str) -> PyErr {
    if error.is_instance_of::<PyOverflowError>(obj.py()) {
        PyOverflowError::new_err(format!("{what} {} does not fit in a signed 64-bit integer", repr(obj)))
    } else {
        error
    }
}

/// A bit index of the Pythonic API: negative values count from the end, as
/// a list's do; out of range (also past 2**63) is an `IndexError`.
#[inline]
pub(crate) fn index(obj: &Bound<'_, PyAny>, len: usize) -> PyResult<usize> {
    position(obj, len, Of::Bits)
}

/// What an index counts, for its error message.
#[derive(Clone, Copy)]
pub(crate) enum Of {
    /// The bits of a bitmap.
    Bits,
    /// The rows of a grid.
    Rows,
}

/// An index into `len` things, list-like (see [`index`]).
#[inline]
pub(crate) fn position(obj: &Bound<'_, PyAny>, len: usize, of: Of) -> PyResult<usize> {
    let out_of_range = |i: &dyn core::fmt::Display| match of {
        Of::Bits => PyIndexError::new_err(format!("index {i} is out of range for a bitmap of {len} bits")),
        Of::Rows => PyIndexError::new_err(format!("row {i} is out of range for a grid of {len} rows")),
    };
    match obj.extract::<isize>() {
        Ok(i) => {
            let p = if i < 0 { len.checked_sub(i.unsigned_abs()) } else { Some(i.unsigned_abs()) };
            p.filter(|&p| p < len).ok_or_else(|| out_of_range(&i))
        }
        Err(error) if error.is_instance_of::<PyOverflowError>(obj.py()) => Err(out_of_range(&repr(obj))),
        Err(error) => Err(error),
    }
}

/// An index of the LMCache layer: `None` for one past the end (LMCache's
/// methods ignore those), `TypeError` for a negative one (`size_t`).
#[inline]
pub(crate) fn lm_index(obj: &Bound<'_, PyAny>, len: usize) -> PyResult<Option<usize>> {
    match obj.extract::<i64>() {
        Ok(i) if i < 0 => Err(PyTypeError::new_err(format!("index must be a non-negative integer (size_t), got {i}"))),
        Ok(i) => Ok(usize::try_from(i).ok().filter(|&i| i < len)),
        // Past 2**63 but an int: out of range, so ignored like any other.
        Err(error) if error.is_instance_of::<PyOverflowError>(obj.py()) && obj.is_instance_of::<PyInt>() => {
            if obj.lt(0)? {
                Err(PyTypeError::new_err(format!("index must be a non-negative integer (size_t), got {}", repr(obj))))
            } else {
                Ok(None)
            }
        }
        Err(error) => Err(error),
    }
}

/// A `[start, end)` range of the Pythonic API: `0 <= start <= end <= len`,
/// else `IndexError`.
pub(crate) fn range(start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>, len: usize) -> PyResult<(usize, usize)> {
    let bound = |obj: &Bound<'_, PyAny>| match obj.extract::<i64>() {
        Ok(n) => Ok(usize::try_from(n).ok()),
        // Past 2**63: out of range, as any other end past the length.
        Err(error) if error.is_instance_of::<PyOverflowError>(obj.py()) => Ok(None),
        Err(error) => Err(error),
    };
    match (bound(start)?, bound(end)?) {
        (Some(s), Some(e)) if s <= e && e <= len => Ok((s, e)),
        _ => Err(PyIndexError::new_err(format!(
            "range [{}, {}) is not within a bitmap of {len} bits (0 <= start <= end <= {len})",
            repr(start),
            repr(end)
        ))),
    }
}

/// The number of keys: an `int`, or the `len()` of the key list (the
/// seed's `keys: list[ObjectKey]`, of which a plan needs only the length).
pub(crate) fn key_count(keys: &Bound<'_, PyAny>) -> PyResult<usize> {
    if keys.is_instance_of::<PyInt>() { count(keys, "the number of keys") } else { keys.len() }
}

/// A keys argument as a list: LMCache passes lists, and any iterable is
/// taken (collected once, so that a generator is read only once).
pub(crate) fn key_list<'py>(keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, pyo3::types::PyList>> {
    match keys.cast::<pyo3::types::PyList>() {
        Ok(list) => Ok(list.clone()),
        Err(_) => Ok(pyo3::types::PyList::new(keys.py(), keys.try_iter()?.collect::<PyResult<Vec<_>>>()?)?),
    }
}

/// A window list: any iterable of ints (not a `str`).
pub(crate) fn windows(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    if obj.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err("windows must be a sequence of ints, not a str"));
    }
    // A list (what callers pass: one window per row, 64 of them for 8
    // groups × 8 ranks) by index, without the iterator protocol's call and
    // error check per item.
    if let Ok(list) = obj.cast::<pyo3::types::PyList>() {
        return list.iter().map(|w| signed(&w, "window")).collect();
    }
    obj.try_iter()?.map(|w| signed(&w?, "window")).collect()
}

/// `repr(obj)`, or a placeholder if even that fails.
pub(crate) fn repr(obj: &Bound<'_, PyAny>) -> String {
    obj.repr().map_or_else(|_| "<unprintable>".to_owned(), |r| r.to_string())
}
