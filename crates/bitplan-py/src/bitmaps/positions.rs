//! The positions an LMCache `batched_set` (or `Bitmap(size, positions)`)
//! sets, from any of the forms a controller has them in, in one call: a
//! list or tuple of ints, a `range`, a numpy integer array, or a numpy
//! bool mask.
//!
//! LMCache's semantics: a position at or past the size is ignored, a
//! negative one is a `TypeError` (pybind11's `size_t`), and every position
//! is checked before any is set, so a bad one sets none.

use bitmap_core::Bitmap;
use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyRange, PyTuple};

use crate::boundary::args;

/// Positions checked against a size, ready to set.
pub(crate) enum Positions {
    /// These, each below the size.
    Listed(Vec<usize>),
    /// `start..end` (clamped to the size), every `step`-th.
    Range { start: usize, end: usize, step: usize },
}

impl Positions {
    /// Reads `obj` for a bitmap of `len` bits.
    pub(crate) fn read(obj: &Bound<'_, PyAny>, len: usize) -> PyResult<Positions> {
        if let Ok(list) = obj.cast::<PyList>() {
            return listed(list.iter(), list.len(), len);
        }
        if let Ok(tuple) = obj.cast::<PyTuple>() {
            return listed(tuple.iter(), tuple.len(), len);
        }
        if let Ok(range) = obj.cast::<PyRange>() {
            return from_range(range, len);
        }
        if is_numpy_array(obj)? {
            return from_array(obj, len);
        }
        // Any other iterable: LMCache's pybind caster takes only sequences,
        // but refusing a generator here would help no one.
        let items = obj.try_iter()?.collect::<PyResult<Vec<_>>>()?;
        let count = items.len();
        listed(items.into_iter(), count, len)
    }

    /// Sets the positions in `bits`.
    pub(crate) fn set_in(&self, bits: &mut Bitmap) {
        match *self {
            Positions::Listed(ref positions) => {
                for &i in positions {
                    bits.set(i);
                }
            }
            Positions::Range { start, end, step: 1 } => bits.set_range(start..end),
            Positions::Range { start, end, step } => {
                for i in (start..end).step_by(step) {
                    bits.set(i);
                }
            }
        }
    }
}

fn listed<'py>(items: impl Iterator<Item = Bound<'py, PyAny>>, count: usize, len: usize) -> PyResult<Positions> {
    let mut positions = Vec::with_capacity(count);
    for item in items {
        if let Some(i) = args::lm_index(&item, len)? {
            positions.push(i);
        }
    }
    Ok(Positions::Listed(positions))
}

/// A `range`: its positions without listing them (a negative one is
/// refused, as it would be listed).
fn from_range(range: &Bound<'_, PyRange>, len: usize) -> PyResult<Positions> {
    let (start, step): (i64, i64) = (range.getattr("start")?.extract()?, range.getattr("step")?.extract()?);
    let count = range.len()?;
    if count == 0 {
        return Ok(Positions::Listed(Vec::new()));
    }
    // The first and last positions the range yields.
    let last = start + (count as i64 - 1) * step;
    let (low, high) = if step > 0 { (start, last) } else { (last, start) };
    if low < 0 {
        return Err(PyTypeError::new_err(format!("index must be a non-negative integer (size_t), got {low}")));
    }
    let (low, high, step) = (low as usize, high as usize, step.unsigned_abs() as usize);
    Ok(Positions::Range { start: low, end: high.saturating_add(1).min(len), step })
}

/// Whether `obj` is a numpy array, without importing numpy for a caller
/// that never did (then it cannot be one).
fn is_numpy_array(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = obj.py();
    let loaded = py.import("sys")?.getattr("modules")?.contains("numpy")?;
    Ok(loaded && obj.cast::<PyUntypedArray>().is_ok())
}

fn from_array(obj: &Bound<'_, PyAny>, len: usize) -> PyResult<Positions> {
    let array = obj.cast::<PyUntypedArray>()?;
    if array.ndim() != 1 {
        return Err(PyValueError::new_err(format!(
            "expected a 1-d array of positions, got {} dimensions",
            array.ndim()
        )));
    }
    match array.dtype().kind() {
        b'b' => {
            let mask = obj.cast::<PyArray1<bool>>()?.readonly();
            let mask = mask.as_array();
            Ok(Positions::Listed(mask.iter().take(len).enumerate().filter_map(|(i, &set)| set.then_some(i)).collect()))
        }
        b'u' => {
            let wide = match obj.cast::<PyArray1<u64>>() {
                Ok(array) => array.clone(),
                Err(_) => obj.call_method1("astype", ("uint64",))?.cast_into::<PyArray1<u64>>()?,
            };
            let values = wide.readonly();
            let values = values.as_array();
            Ok(Positions::Listed(values.iter().filter_map(|&i| usize::try_from(i).ok().filter(|&i| i < len)).collect()))
        }
        b'i' => {
            // int64 as it is; narrower ints widened by numpy in one pass.
            let wide = match obj.cast::<PyArray1<i64>>() {
                Ok(array) => array.clone(),
                Err(_) => obj.call_method1("astype", ("int64",))?.cast_into::<PyArray1<i64>>()?,
            };
            let values = wide.readonly();
            let values = values.as_array();
            if let Some(&negative) = values.iter().find(|&&i| i < 0) {
                return Err(PyTypeError::new_err(format!(
                    "index must be a non-negative integer (size_t), got {negative}"
                )));
            }
            Ok(Positions::Listed(values.iter().map(|&i| i as usize).filter(|&i| i < len).collect()))
        }
        kind => Err(PyTypeError::new_err(format!(
            "expected an integer or bool array of positions, got dtype kind {:?}",
            kind as char
        ))),
    }
}
