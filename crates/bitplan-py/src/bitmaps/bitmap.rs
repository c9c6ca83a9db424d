//! `bitplan.Bitmap`: the Pythonic bitmap class.
//!
//! Indices behave like a list's (negative from the end, `IndexError` out of
//! range), binary operators need equal lengths (`ValueError` naming both),
//! the in-place operators change the left operand, and equal bitmaps
//! compare equal. Work on large bitmaps runs with the GIL released.

use std::ffi::{CStr, c_int};

use bitmap_core::{Bitmap, BitmapError};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use crate::bitmaps::flavor::{AnyBitmap, PyBitmap};
use crate::boundary::args;
use crate::boundary::bits::{
    bit_string, check_same_len, detach_if_large, gather_items, highest_set_bit, indices_list, short_repr, type_name,
};
use crate::boundary::errors::OrPyErr;
use crate::boundary::memory;

/// bitmap-core's checked in-place binary operations.
type TryOp = fn(&mut Bitmap, &Bitmap) -> Result<(), BitmapError>;
/// bitmap-core's checked binary operations into a new bitmap.
type TryNew = fn(&Bitmap, &Bitmap) -> Result<Bitmap, BitmapError>;
/// bitmap-core's checked fused counts.
type TryCount = fn(&Bitmap, &Bitmap) -> Result<usize, BitmapError>;

impl PyBitmap {
    /// `self OP other` as a new bitmap, written in one pass.
    /// `NotImplemented` for an `other` that is not a bitmap, so that
    /// Python tries the reflected operation.
    ///
    /// The receiver is borrowed here, not by PyO3: PyO3 answers a failed
    /// borrow of an operator's `&self` with `NotImplemented`, which Python
    /// would turn into a misleading `TypeError` instead of the
    /// `RuntimeError` of a bitmap that another thread is changing.
    fn binary(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>, op: TryNew) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let Some(other) = AnyBitmap::operand(other)? else {
            return Ok(py.NotImplemented());
        };
        let this = slf.try_borrow()?;
        let (bits, other): (&Bitmap, &Bitmap) = (&this.bits, &other);
        let out = detach_if_large(py, bits.num_words(), || op(bits, other));
        Ok(Py::new(py, PyBitmap::from(out.or_py_err()?))?.into_any())
    }

    /// `self OP= other`. `a OP= a` cannot borrow `a` twice (once to
    /// change), so it is `same`, what the operation does with itself.
    fn in_place(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        symbol: &str,
        op: TryOp,
        same: fn(&mut Bitmap),
    ) -> PyResult<()> {
        if other.is(slf) {
            same(&mut slf.try_borrow_mut()?.bits);
            return Ok(());
        }
        let Some(other) = AnyBitmap::operand(other)? else {
            return Err(PyTypeError::new_err(format!(
                "unsupported operand type(s) for {symbol}=: 'Bitmap' and '{}'",
                type_name(other)
            )));
        };
        let mut this = slf.try_borrow_mut()?;
        let (bits, other): (&mut Bitmap, &Bitmap) = (&mut this.bits, &other);
        detach_if_large(slf.py(), bits.num_words(), || op(bits, other)).or_py_err()
    }

    /// `popcount(self OP other)` without building the result.
    fn fused(&self, py: Python<'_>, other: &Bound<'_, PyAny>, count: TryCount) -> PyResult<usize> {
        let other = AnyBitmap::borrow(other)?;
        let other: &Bitmap = &other;
        detach_if_large(py, self.bits.num_words(), || count(&self.bits, other)).or_py_err()
    }
}

#[pymethods]
impl PyBitmap {
    // Equal bitmaps are equal, so a mutable bitmap must not be hashable.
    #[classattr]
    const __hash__: Option<Py<PyAny>> = None;

    fn __and__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        PyBitmap::binary(slf, other, Bitmap::try_intersection)
    }

    fn __or__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        PyBitmap::binary(slf, other, Bitmap::try_union)
    }

    fn __xor__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        PyBitmap::binary(slf, other, Bitmap::try_symmetric_difference)
    }

    /// And-not: the bits of `self` that are not in `other`.
    fn __sub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        PyBitmap::binary(slf, other, Bitmap::try_difference)
    }

    fn __iand__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        PyBitmap::in_place(slf, other, "&", Bitmap::try_intersect_with, |_| {})
    }

    fn __ior__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        PyBitmap::in_place(slf, other, "|", Bitmap::try_union_with, |_| {})
    }

    fn __ixor__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        PyBitmap::in_place(slf, other, "^", Bitmap::try_symmetric_difference_with, Bitmap::clear_all)
    }

    fn __isub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        PyBitmap::in_place(slf, other, "-", Bitmap::try_difference_with, Bitmap::clear_all)
    }

    fn and_popcount(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<usize> {
        self.fused(py, other, Bitmap::try_and_popcount)
    }

    fn or_popcount(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<usize> {
        self.fused(py, other, Bitmap::try_or_popcount)
    }

    fn xor_popcount(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<usize> {
        self.fused(py, other, Bitmap::try_xor_popcount)
    }

    fn and_not_popcount(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<usize> {
        self.fused(py, other, Bitmap::try_and_not_popcount)
    }

    #[new]
    #[pyo3(signature = (size, prefix = None))]
    fn new(size: &Bound<'_, PyAny>, prefix: Option<&Bound<'_, PyAny>>) -> PyResult<PyBitmap> {
        let len = args::count(size, "size")?;
        let prefix = prefix.map(|p| args::count(p, "prefix")).transpose()?.unwrap_or(0);
        if prefix > len {
            return Err(PyValueError::new_err(format!("prefix {prefix} is longer than the bitmap's {len} bits")));
        }
        let mut bits = Bitmap::try_new(len).or_py_err()?;
        bits.set_range(..prefix);
        Ok(PyBitmap { bits })
    }

    #[staticmethod]
    fn from_indices(size: &Bound<'_, PyAny>, indices: &Bound<'_, PyAny>) -> PyResult<PyBitmap> {
        let len = args::count(size, "size")?;
        let mut bits = Bitmap::try_new(len).or_py_err()?;
        for index in indices.try_iter()? {
            bits.set(args::index(&index?, len)?);
        }
        Ok(PyBitmap { bits })
    }

    #[staticmethod]
    fn from_bytes(py: Python<'_>, size: &Bound<'_, PyAny>, data: &Bound<'_, PyAny>) -> PyResult<PyBitmap> {
        let len = args::count(size, "size")?;
        let bytes = PyBuffer::<u8>::get(data)?.to_vec(py)?;
        Ok(PyBitmap { bits: Bitmap::from_bytes(len, &bytes).or_py_err()? })
    }

    #[staticmethod]
    fn from_bitstring(bits: &str) -> PyResult<PyBitmap> {
        Ok(PyBitmap { bits: bits.parse().or_py_err()? })
    }

    #[staticmethod]
    fn from_bools(bools: &Bound<'_, PyAny>) -> PyResult<PyBitmap> {
        let bits = bools.try_iter()?.map(|b| b?.is_truthy()).collect::<PyResult<Bitmap>>()?;
        Ok(PyBitmap { bits })
    }

    fn __len__(&self) -> usize {
        self.bits.len()
    }

    fn set(&mut self, index: &Bound<'_, PyAny>) -> PyResult<()> {
        let i = args::index(index, self.bits.len())?;
        self.bits.set(i);
        Ok(())
    }

    fn clear(&mut self, index: &Bound<'_, PyAny>) -> PyResult<()> {
        let i = args::index(index, self.bits.len())?;
        self.bits.clear(i);
        Ok(())
    }

    fn test(&self, index: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.bits.test(args::index(index, self.bits.len())?))
    }

    fn __getitem__(&self, index: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.test(index)
    }

    fn __setitem__(&mut self, index: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let i = args::index(index, self.bits.len())?;
        self.bits.assign(i, value.is_truthy()?);
        Ok(())
    }

    fn set_range(&mut self, start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<()> {
        let (start, end) = args::range(start, end, self.bits.len())?;
        self.bits.set_range(start..end);
        Ok(())
    }

    fn clear_range(&mut self, start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<()> {
        let (start, end) = args::range(start, end, self.bits.len())?;
        self.bits.clear_range(start..end);
        Ok(())
    }

    fn count_range(&self, start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<usize> {
        let (start, end) = args::range(start, end, self.bits.len())?;
        Ok(self.bits.count_range(start..end))
    }

    /// All or nothing: every index is checked before any bit is set.
    fn batched_set(&mut self, indices: &Bound<'_, PyAny>) -> PyResult<()> {
        let len = self.bits.len();
        let checked = indices.try_iter()?.map(|i| args::index(&i?, len)).collect::<PyResult<Vec<usize>>>()?;
        for i in checked {
            self.bits.set(i);
        }
        Ok(())
    }

    fn set_all(&mut self) {
        self.bits.set_all();
    }

    fn clear_all(&mut self) {
        self.bits.clear_all();
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

    fn first_set(&self) -> Option<usize> {
        self.bits.first_set()
    }

    fn last_set(&self) -> Option<usize> {
        self.bits.last_set()
    }

    fn any(&self) -> bool {
        self.bits.any()
    }

    fn all(&self) -> bool {
        self.bits.all()
    }

    fn is_subset(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let other = AnyBitmap::borrow(other)?;
        check_same_len(&self.bits, &other)?;
        Ok(self.bits.is_subset(&other))
    }

    fn is_disjoint(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let other = AnyBitmap::borrow(other)?;
        check_same_len(&self.bits, &other)?;
        Ok(self.bits.is_disjoint(&other))
    }

    /// The set indices, ascending: an iterator over a snapshot, so changing
    /// the bitmap while iterating is safe and does not affect the loop.
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.get_indices_list(py)?.into_any().try_iter()?.into_any())
    }

    fn get_indices_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        indices_list(py, &self.bits)
    }

    fn indices_array<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, numpy::PyArray1<i64>>> {
        let mut indices: Vec<usize> = memory::vec_with_capacity(self.bits.popcount(), "indices")?;
        detach_if_large(py, self.bits.num_words(), || self.bits.append_indices(&mut indices));
        // A key index fits in i64 (a bitmap has at most isize::MAX bytes),
        // so on 64-bit targets the buffer is reinterpreted, not copied.
        let indices: Vec<i64> = bytemuck::allocation::try_cast_vec(indices)
            .unwrap_or_else(|(_, indices)| indices.into_iter().map(|i| i as i64).collect());
        Ok(numpy::PyArray1::from_vec(py, indices))
    }

    /// `[items[i] for i in self]`; `items` must have one item per bit.
    fn gather<'py>(&self, py: Python<'py>, items: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let count = items.len()?;
        if count != self.bits.len() {
            return Err(PyValueError::new_err(format!(
                "gather needs one item per bit: the bitmap has {} bits, the sequence {count} items",
                self.bits.len()
            )));
        }
        gather_items(py, &self.bits, items)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.bits.as_bytes())
    }

    fn __invert__(&self, py: Python<'_>) -> PyBitmap {
        let bits = detach_if_large(py, self.bits.num_words(), || !&self.bits);
        PyBitmap { bits }
    }

    /// Bitmaps of either class with the same bits are equal. (Borrowed
    /// here, as in `binary`, so that a bitmap busy in another thread is a
    /// `RuntimeError`, not a silent `False`.)
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let this = slf.try_borrow()?;
        match AnyBitmap::borrow(other) {
            Ok(other) => Ok(this.bits == *other),
            Err(error) if error.is_instance_of::<PyTypeError>(slf.py()) => Ok(false),
            Err(error) => Err(error),
        }
    }

    fn __ne__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        PyBitmap::__eq__(slf, other).map(|equal| !equal)
    }

    fn copy(&self) -> PyBitmap {
        self.clone()
    }

    fn __copy__(&self) -> PyBitmap {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyBitmap {
        self.clone()
    }

    /// Pickles as `(Bitmap, (len,), bytes)`: the class, then the bits in
    /// LMCache's byte layout, which `__setstate__` checks and copies in.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let this = slf.try_borrow()?;
        let state = PyBytes::new(py, this.bits.as_bytes());
        (slf.get_type(), (this.bits.len(),), state).into_pyobject(py)
    }

    /// Copies the pickled bits into this bitmap's own words, which keep
    /// their place (a buffer view of them stays valid).
    fn __setstate__(&mut self, py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<()> {
        let bytes = PyBuffer::<u8>::get(state)?.to_vec(py)?;
        let bits = Bitmap::from_bytes(self.bits.len(), &bytes).or_py_err()?;
        self.bits.copy_from(&bits);
        Ok(())
    }

    fn __repr__(&self) -> PyResult<String> {
        short_repr(&self.bits)
    }

    fn __str__(&self) -> PyResult<String> {
        bit_string(&self.bits)
    }

    /// A read-only view of the words: `memoryview(bm)`,
    /// `numpy.frombuffer(bm, dtype=numpy.uint64)`. No copy.
    ///
    /// # Safety
    ///
    /// Called by the interpreter with a valid `view` to fill (PyO3's
    /// contract for `__getbuffer__`).
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("a null Py_buffer"));
        }
        if flags & ffi::PyBUF_WRITABLE == ffi::PyBUF_WRITABLE {
            return Err(PyBufferError::new_err("a Bitmap's buffer is read-only"));
        }
        let this = slf.try_borrow()?;
        let words = this.bits.as_words();
        // The format and the shape live as long as the exporter: a static
        // string, and the `Py_buffer`'s own `len` field standing in for the
        // one-element shape would not do (ndim 1 needs a pointer to a
        // Py_ssize_t), so the shape is `internal`, freed by
        // `__releasebuffer__`.
        let shape = Box::into_raw(Box::new(words.len() as ffi::Py_ssize_t));
        // SAFETY: `view` is non-null and the interpreter hands it to us to
        // fill; every field is written before it is read. `buf` points at
        // the words of a bitmap whose storage never moves or shrinks while
        // the object lives (no method resizes a Bitmap, and `__setstate__`
        // copies into the existing words), and `obj` holds a strong
        // reference to that object until the view is released.
        unsafe {
            (*view).obj = slf.clone().into_any().into_ptr();
            (*view).buf = words.as_ptr().cast_mut().cast();
            (*view).len = core::mem::size_of_val(words) as ffi::Py_ssize_t;
            (*view).readonly = 1;
            (*view).itemsize = core::mem::size_of::<u64>() as ffi::Py_ssize_t;
            (*view).format = if flags & ffi::PyBUF_FORMAT == ffi::PyBUF_FORMAT {
                WORD_FORMAT.as_ptr().cast_mut()
            } else {
                core::ptr::null_mut()
            };
            (*view).ndim = 1;
            (*view).shape = if flags & ffi::PyBUF_ND == ffi::PyBUF_ND { shape } else { core::ptr::null_mut() };
            (*view).strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES {
                &raw mut (*view).itemsize
            } else {
                core::ptr::null_mut()
            };
            (*view).suboffsets = core::ptr::null_mut();
            (*view).internal = shape.cast();
        }
        Ok(())
    }

    /// # Safety
    ///
    /// Called by the interpreter with a view that `__getbuffer__` filled.
    unsafe fn __releasebuffer__(&self, view: *mut ffi::Py_buffer) {
        // SAFETY: `view` was filled by `__getbuffer__`, whose `internal` is
        // the shape it leaked from a `Box` and nothing else freed.
        unsafe {
            let shape = (*view).internal.cast::<ffi::Py_ssize_t>();
            if !shape.is_null() {
                drop(Box::from_raw(shape));
                (*view).internal = core::ptr::null_mut();
            }
        }
    }
}

/// The buffer format of a word: a native-endian unsigned 64-bit integer.
static WORD_FORMAT: &CStr = c"Q";
