//! `bitplan.lmcache.tiers.RequestKeys`: one controller request's keys for
//! the positional fast path, built once per request: its chunk hashes (a
//! numpy `uint64` array, one per column) times its row ids (one per
//! (object group, KV rank) row). Cell (`r`, `c`) of the controller's
//! `Bitmap2D` is the key (`hashes[c]`, `rows[r]`).

use std::sync::Arc;

use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use tier_state::GridKeys;

use crate::boundary::bits::type_name;
use crate::boundary::memory;

/// A request's keys (see the module docs). Immutable; cheap to share
/// between tiers and threads.
#[pyclass(name = "RequestKeys", module = "bitplan.lmcache.tiers", frozen)]
#[derive(Debug, Clone)]
pub(crate) struct PyRequestKeys {
    pub(crate) hashes: Arc<[u64]>,
    pub(crate) rows: Arc<[u32]>,
}

impl PyRequestKeys {
    pub(crate) fn grid(&self) -> GridKeys<'_> {
        GridKeys::new(&self.hashes, &self.rows)
    }

    /// (rows, cols).
    pub(crate) fn dims(&self) -> (usize, usize) {
        (self.rows.len(), self.hashes.len())
    }
}

/// Whether `obj` is a numpy array (numpy is imported by then if it is one).
fn numpy_array<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> Option<&'a Bound<'py, PyUntypedArray>> {
    obj.cast::<PyUntypedArray>().ok()
}

/// The chunk hashes: a 1-d numpy `uint64` array (no other dtype: a signed
/// or narrower array is a caller's mistake that would silently change
/// keys), or a list or tuple of ints in 0..2**64.
fn read_hashes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    if let Some(array) = numpy_array(obj) {
        if array.ndim() != 1 {
            return Err(PyValueError::new_err(format!(
                "hashes: expected a 1-d array, got {} dimensions",
                array.ndim()
            )));
        }
        let dtype = array.dtype();
        if !(dtype.kind() == b'u' && dtype.itemsize() == 8) {
            return Err(PyTypeError::new_err(format!(
                "hashes: expected a numpy uint64 array, got dtype {}",
                dtype.str()?
            )));
        }
        let values = obj.cast::<PyArray1<u64>>()?.readonly();
        return Ok(values.as_array().iter().copied().collect());
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut out = memory::vec_with_capacity(obj.len()?, "hashes")?;
        for item in obj.try_iter()? {
            let item = item?;
            out.push(item.extract::<u64>().map_err(|_| {
                PyValueError::new_err(format!(
                    "hashes: {} is not an int in 0..2**64",
                    crate::boundary::args::repr(&item)
                ))
            })?);
        }
        return Ok(out);
    }
    Err(PyTypeError::new_err(format!(
        "hashes: expected a numpy uint64 array or a list of ints, got {}",
        type_name(obj)
    )))
}

/// The row ids: a 1-d numpy integer array or a sequence of ints, each in
/// 0..2**32 (a tier may bound them further: `ChunkTier(rows=...)`).
fn read_rows(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    if let Some(array) = numpy_array(obj) {
        if array.ndim() != 1 {
            return Err(PyValueError::new_err(format!("rows: expected a 1-d array, got {} dimensions", array.ndim())));
        }
        let kind = array.dtype().kind();
        if kind != b'u' && kind != b'i' {
            return Err(PyTypeError::new_err(format!(
                "rows: expected an integer array, got dtype {}",
                array.dtype().str()?
            )));
        }
        let wide = obj.call_method1("astype", ("int64",))?.cast_into::<PyArray1<i64>>()?;
        let values = wide.readonly();
        return values
            .as_array()
            .iter()
            .map(|&row| {
                u32::try_from(row).map_err(|_| PyValueError::new_err(format!("rows: {row} is not in 0..2**32")))
            })
            .collect();
    }
    let mut out = Vec::new();
    for item in obj.try_iter()? {
        let item = item?;
        out.push(item.extract::<u32>().map_err(|_| {
            PyValueError::new_err(format!("rows: {} is not an int in 0..2**32", crate::boundary::args::repr(&item)))
        })?);
    }
    Ok(out)
}

#[pymethods]
impl PyRequestKeys {
    /// `RequestKeys(hashes, rows)`: `hashes` a numpy `uint64` array (or a
    /// list of ints), `rows` the row ids (a numpy integer array, a range or
    /// a list of ints).
    #[new]
    fn new(hashes: &Bound<'_, PyAny>, rows: &Bound<'_, PyAny>) -> PyResult<PyRequestKeys> {
        let hashes = read_hashes(hashes)?;
        let rows = read_rows(rows)?;
        if hashes.len().checked_mul(rows.len()).is_none_or(|n| n > u32::MAX as usize) {
            return Err(PyValueError::new_err(format!(
                "{} hashes x {} rows is more keys than one request can hold (2**32 - 1)",
                hashes.len(),
                rows.len()
            )));
        }
        Ok(PyRequestKeys { hashes: hashes.into(), rows: rows.into() })
    }

    /// `(rows, chunks)`: the shape of the request's `Bitmap2D`s.
    fn shape(&self) -> (usize, usize) {
        self.dims()
    }

    /// The number of keys, rows x chunks.
    fn __len__(&self) -> usize {
        self.hashes.len() * self.rows.len()
    }

    /// The chunk hashes, as a new numpy `uint64` array.
    #[getter]
    fn hashes<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, &self.hashes)
    }

    /// The row ids, as a new numpy `uint32` array.
    #[getter]
    fn rows<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        PyArray1::from_slice(py, &self.rows)
    }

    /// The key of cell (`row`, `col`): `(hash, row id)`.
    fn key(&self, row: usize, col: usize) -> PyResult<(u64, u32)> {
        match (self.rows.get(row), self.hashes.get(col)) {
            (Some(&row_id), Some(&hash)) => Ok((hash, row_id)),
            _ => Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "cell ({row}, {col}) is outside {} x {}",
                self.rows.len(),
                self.hashes.len()
            ))),
        }
    }

    fn __repr__(&self) -> String {
        format!("RequestKeys({} rows x {} chunks)", self.rows.len(), self.hashes.len())
    }
}
