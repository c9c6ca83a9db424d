//! `bitplan.lmcache.native.Bitmap`: LMCache's bitmap class, with LMCache's
//! semantics where they differ from the Pythonic class (see
//! `python/bitplan/lmcache/__init__.py` for the list):
//! out-of-range `set`/`clear`/`test` and `batched_set` indices are ignored,
//! a negative index is a `TypeError` (pybind11's `size_t`), `set_range`
//! clamps, `&` and `|` of two sizes have the shorter one, equality is
//! identity and there are no in-place operators (`a |= b` rebinds `a`).

use bitmap_core::Bitmap;
use pyo3::prelude::*;
use pyo3::types::{PyList, PySet};

use crate::args;
use crate::bitmap::{bit_string, gather_items, highest_set_bit, indices, indices_list};
use crate::errors::OrPyErr;
use crate::flavor::{AnyBitmap, detach_if_large};

/// LMCache's `Bitmap` (see the module docs).
#[pyclass(name = "Bitmap", module = "bitplan.lmcache.native")]
#[derive(Clone, Debug)]
pub(crate) struct LmBitmap {
    pub(crate) bits: Bitmap,
}

impl From<Bitmap> for LmBitmap {
    fn from(bits: Bitmap) -> LmBitmap {
        LmBitmap { bits }
    }
}

/// `a OP b` over the first `min(len(a), len(b))` bits of each, as
/// LMCache's byte loop computes it, but with every bit past that size
/// clear (LMCache's loop can leave stray bits there).
/// `op` is the in-place operation, `new` the same into a new bitmap, which
/// takes one pass where a copy and `op` take two (the common case: equal
/// sizes).
fn truncating(
    py: Python<'_>,
    a: &Bitmap,
    b: &Bitmap,
    op: fn(&mut Bitmap, &Bitmap) -> Result<(), bitmap_core::BitmapError>,
    new: fn(&Bitmap, &Bitmap) -> Result<Bitmap, bitmap_core::BitmapError>,
) -> PyResult<Bitmap> {
    let len = a.len().min(b.len());
    detach_if_large(py, len.div_ceil(64), || {
        if a.len() == b.len() {
            return new(a, b);
        }
        let mut out = a.clone();
        out.truncate(len);
        if b.len() == len {
            op(&mut out, b)?;
        } else {
            let mut b = b.clone();
            b.truncate(len);
            op(&mut out, &b)?;
        }
        Ok::<Bitmap, bitmap_core::BitmapError>(out)
    })
    .or_py_err()
}

#[pymethods]
impl LmBitmap {
    #[new]
    #[pyo3(signature = (size, prefix_bits = None))]
    fn new(size: &Bound<'_, PyAny>, prefix_bits: Option<&Bound<'_, PyAny>>) -> PyResult<LmBitmap> {
        let len = args::size_t(size, "size")?;
        let prefix = prefix_bits.map(|p| args::size_t(p, "prefix_bits")).transpose()?.unwrap_or(0);
        let mut bits = Bitmap::try_new(len).or_py_err()?;
        bits.set_range(..prefix.min(len));
        Ok(LmBitmap { bits })
    }

    fn set(&mut self, index: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Some(i) = args::lm_index(index, self.bits.len())? {
            self.bits.set(i);
        }
        Ok(())
    }

    fn clear(&mut self, index: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Some(i) = args::lm_index(index, self.bits.len())? {
            self.bits.clear(i);
        }
        Ok(())
    }

    fn test(&self, index: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(args::lm_index(index, self.bits.len())?.is_some_and(|i| self.bits.test(i)))
    }

    /// Sets each index below the size and ignores the others. Every index
    /// is converted first, so a bad one (negative, not an int) sets none.
    fn batched_set(&mut self, indices: &Bound<'_, PyAny>) -> PyResult<()> {
        let len = self.bits.len();
        let checked =
            indices.try_iter()?.map(|i| args::lm_index(&i?, len)).collect::<PyResult<Vec<Option<usize>>>>()?;
        for i in checked.into_iter().flatten() {
            self.bits.set(i);
        }
        Ok(())
    }

    /// Sets `[start, min(end, size))`; nothing if that is empty.
    fn set_range(&mut self, start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<()> {
        let (start, end) = (args::size_t(start, "start")?, args::size_t(end, "end")?);
        let end = end.min(self.bits.len());
        if start < end {
            self.bits.set_range(start..end);
        }
        Ok(())
    }

    fn popcount(&self, py: Python<'_>) -> usize {
        detach_if_large(py, self.bits.num_words(), || self.bits.popcount())
    }

    fn count_leading_zeros(&self) -> usize {
        self.bits.count_leading_zeros()
    }

    fn count_leading_ones(&self) -> usize {
        self.bits.count_leading_ones()
    }

    fn highest_set_bit(&self) -> i64 {
        highest_set_bit(&self.bits)
    }

    // `slf`, not `&self`: see `PyBitmap::binary`.
    fn __and__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let Some(other) = AnyBitmap::operand(other)? else {
            return Ok(py.NotImplemented());
        };
        let bits =
            truncating(py, &slf.try_borrow()?.bits, &other, Bitmap::try_intersect_with, Bitmap::try_intersection)?;
        Ok(Py::new(py, LmBitmap { bits })?.into_any())
    }

    // `slf`, not `&self`: see `PyBitmap::binary`.
    fn __or__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let Some(other) = AnyBitmap::operand(other)? else {
            return Ok(py.NotImplemented());
        };
        let bits = truncating(py, &slf.try_borrow()?.bits, &other, Bitmap::try_union_with, Bitmap::try_union)?;
        Ok(Py::new(py, LmBitmap { bits })?.into_any())
    }

    fn __invert__(&self, py: Python<'_>) -> LmBitmap {
        LmBitmap { bits: detach_if_large(py, self.bits.num_words(), || !&self.bits) }
    }

    fn get_indices_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        indices_list(py, &self.bits)
    }

    fn get_indices_set<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PySet>> {
        PySet::new(py, indices(&self.bits)?)
    }

    /// `[items[i] for i in set bits if i < len(items)]`.
    fn gather<'py>(&self, py: Python<'py>, items: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        gather_items(py, &self.bits, items)
    }

    fn size(&self) -> usize {
        self.bits.len()
    }

    fn __len__(&self) -> usize {
        self.bits.len()
    }

    fn copy(&self) -> LmBitmap {
        self.clone()
    }

    fn __copy__(&self) -> LmBitmap {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> LmBitmap {
        self.clone()
    }

    fn __repr__(&self) -> PyResult<String> {
        bit_string(&self.bits)
    }

    fn __str__(&self) -> PyResult<String> {
        bit_string(&self.bits)
    }
}
