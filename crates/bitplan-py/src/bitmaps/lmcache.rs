//! `bitplan.lmcache.native.Bitmap`: LMCache's bitmap class, with LMCache's
//! semantics where they differ from the Pythonic class (see
//! `python/bitplan/lmcache/__init__.py` for the list):
//! out-of-range `set`/`clear`/`test` and `batched_set` indices are ignored,
//! a negative index is a `TypeError` (pybind11's `size_t`), `set_range`
//! clamps, `&` and `|` of two sizes have the shorter one, equality is
//! identity and there are no in-place operators (`a |= b` rebinds `a`).
//!
//! An LMCache bitmap is either bits of its own or a view of one row of a
//! native `Bitmap2D` (`grid[i]`): the view's writes reach the grid, as
//! LMCache's controller expects when it fills a grid with
//! `grid[row].set(col)`. The hot single-bit methods work on the grid's
//! words directly; the others on a copy of the row (written back for
//! `batched_set` and `set_range`).

use bitmap_core::Bitmap;
use pyo3::prelude::*;
use pyo3::types::{PyList, PySet};

use crate::bitmaps::flavor::{AnyBitmap, LmBitmap, LmBits, row_of};
use crate::bitmaps::positions::Positions;
use crate::boundary::args;
use crate::boundary::bits::{bit_string, detach_if_large, gather_items, highest_set_bit, indices, indices_list};
use crate::boundary::errors::OrPyErr;

/// `a OP b` over the first `min(len(a), len(b))` bits of each, as
/// LMCache's byte loop computes it; the bits its loop leaves past that
/// size, in the last byte, are [`tail_of`]'s.
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

/// Bit `at` of `bits` as LMCache's byte array holds it: a bit within the
/// size, or one of the stray `tail` bits past it in its last byte.
fn byte_bit(bits: &Bitmap, tail: u8, at: usize) -> bool {
    if at < bits.len() {
        bits.test(at)
    } else {
        let past = at - bits.len();
        past < 8 && tail >> past & 1 == 1
    }
}

/// The stray bits LMCache's byte loop leaves past `len` (the shorter size)
/// in the result's last byte: `a`'s and `b`'s bits there, combined by
/// `op`.
fn tail_of(a: (&Bitmap, u8), b: (&Bitmap, u8), len: usize, op: fn(bool, bool) -> bool) -> u8 {
    let mut tail = 0u8;
    for i in 0..(len.div_ceil(8) * 8 - len) {
        if op(byte_bit(a.0, a.1, len + i), byte_bit(b.0, b.1, len + i)) {
            tail |= 1 << i;
        }
    }
    tail
}

impl LmBitmap {
    /// `f` of the bits: its own, or a copy of the row it views.
    fn read<R>(&self, py: Python<'_>, f: impl FnOnce(&Bitmap) -> R) -> PyResult<R> {
        match &self.bits {
            LmBits::Owned(bits) => Ok(f(bits)),
            LmBits::Row { store, row } => Ok(f(&row_of(&store.bind(py).try_borrow()?.grid, *row))),
        }
    }

    /// `f` on the bits: its own, or the row it views (changed on a copy,
    /// written back).
    fn write(&mut self, py: Python<'_>, f: impl FnOnce(&mut Bitmap)) -> PyResult<()> {
        match &mut self.bits {
            LmBits::Owned(bits) => f(bits),
            LmBits::Row { store, row } => {
                let mut store = store.bind(py).try_borrow_mut()?;
                let mut bits = row_of(&store.grid, *row);
                f(&mut bits);
                store.grid.copy_row_from(*row, &bits).expect("the row keeps its length");
            }
        }
        Ok(())
    }

    fn len(&self, py: Python<'_>) -> PyResult<usize> {
        match &self.bits {
            LmBits::Owned(bits) => Ok(bits.len()),
            LmBits::Row { store, .. } => Ok(store.bind(py).try_borrow()?.grid.num_cols()),
        }
    }

    /// A binary operator: `None` (`NotImplemented`) for an `other` that is
    /// not a bitmap.
    fn binary(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        op: fn(&mut Bitmap, &Bitmap) -> Result<(), bitmap_core::BitmapError>,
        new: fn(&Bitmap, &Bitmap) -> Result<Bitmap, bitmap_core::BitmapError>,
        bit: fn(bool, bool) -> bool,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let other_tail = match other.cast::<LmBitmap>() {
            Ok(lm) => lm.try_borrow()?.tail,
            Err(_) => 0,
        };
        let Some(other) = AnyBitmap::operand(other)? else {
            return Ok(py.NotImplemented());
        };
        // `slf`, not `&self`: see `PyBitmap::binary`.
        let my_tail = slf.try_borrow()?.tail;
        let mine = AnyBitmap::borrow(slf.as_any())?;
        let bits = truncating(py, &mine, &other, op, new)?;
        let len = bits.len();
        let tail = if mine.len() == other.len() && my_tail == 0 && other_tail == 0 {
            0
        } else {
            tail_of((&mine, my_tail), (&other, other_tail), len, bit)
        };
        Ok(Py::new(py, LmBitmap { bits: LmBits::Owned(bits), tail })?.into_any())
    }
}

#[pymethods]
impl LmBitmap {
    /// `Bitmap(size)`, `Bitmap(size, prefix_bits)` (LMCache's: bits
    /// `[0, min(prefix_bits, size))` set), or `Bitmap(size, positions)`
    /// with the positions `batched_set` takes (a list, tuple, range, numpy
    /// integer array or numpy bool mask), in one call.
    #[new]
    #[pyo3(signature = (size, prefix_bits = None))]
    fn new(size: &Bound<'_, PyAny>, prefix_bits: Option<&Bound<'_, PyAny>>) -> PyResult<LmBitmap> {
        let len = args::size_t(size, "size")?;
        let mut bits = Bitmap::try_new(len).or_py_err()?;
        match prefix_bits {
            None => {}
            Some(p) if p.is_instance_of::<pyo3::types::PyInt>() => {
                let prefix = args::size_t(p, "prefix_bits")?;
                bits.set_range(..prefix.min(len));
            }
            Some(positions) => Positions::read(positions, len)?.set_in(&mut bits),
        }
        Ok(LmBitmap::from(bits))
    }

    fn set(&mut self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<()> {
        match &mut self.bits {
            LmBits::Owned(bits) => {
                if let Some(i) = args::lm_index(index, bits.len())? {
                    bits.set(i);
                }
            }
            LmBits::Row { store, row } => {
                let mut store = store.bind(py).try_borrow_mut()?;
                if let Some(col) = args::lm_index(index, store.grid.num_cols())? {
                    store.grid.set(*row, col);
                }
            }
        }
        Ok(())
    }

    fn clear(&mut self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<()> {
        match &mut self.bits {
            LmBits::Owned(bits) => {
                if let Some(i) = args::lm_index(index, bits.len())? {
                    bits.clear(i);
                }
            }
            LmBits::Row { store, row } => {
                let mut store = store.bind(py).try_borrow_mut()?;
                if let Some(col) = args::lm_index(index, store.grid.num_cols())? {
                    store.grid.clear(*row, col);
                }
            }
        }
        Ok(())
    }

    fn test(&self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<bool> {
        match &self.bits {
            LmBits::Owned(bits) => Ok(args::lm_index(index, bits.len())?.is_some_and(|i| bits.test(i))),
            LmBits::Row { store, row } => {
                let store = store.bind(py).try_borrow()?;
                Ok(args::lm_index(index, store.grid.num_cols())?.is_some_and(|col| store.grid.test(*row, col)))
            }
        }
    }

    /// Sets each position below the size and ignores the others: a list,
    /// tuple, range, numpy integer array or numpy bool mask, in one call.
    /// Every position is checked first, so a bad one (negative, not an
    /// int) sets none.
    fn batched_set(&mut self, py: Python<'_>, indices: &Bound<'_, PyAny>) -> PyResult<()> {
        let positions = Positions::read(indices, self.len(py)?)?;
        self.write(py, |bits| positions.set_in(bits))
    }

    /// Sets `[start, min(end, size))`; nothing if that is empty.
    fn set_range(&mut self, py: Python<'_>, start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<()> {
        let (start, end) = (args::size_t(start, "start")?, args::size_t(end, "end")?);
        let end = end.min(self.len(py)?);
        if start < end {
            self.write(py, |bits| bits.set_range(start..end))?;
        }
        Ok(())
    }

    fn popcount(&self, py: Python<'_>) -> PyResult<usize> {
        match &self.bits {
            LmBits::Owned(bits) => Ok(detach_if_large(py, bits.num_words(), || bits.popcount())),
            LmBits::Row { store, row } => Ok(store.bind(py).try_borrow()?.grid.row_popcount(*row)),
        }
    }

    fn count_leading_zeros(&self, py: Python<'_>) -> PyResult<usize> {
        self.read(py, Bitmap::count_leading_zeros)
    }

    fn count_leading_ones(&self, py: Python<'_>) -> PyResult<usize> {
        match &self.bits {
            LmBits::Owned(bits) => Ok(bits.count_leading_ones()),
            LmBits::Row { store, row } => Ok(store.bind(py).try_borrow()?.grid.row_leading_ones(*row)),
        }
    }

    /// The highest set bit, or -1; LMCache's scan of its bytes from the
    /// end finds a stray bit past the size first.
    fn highest_set_bit(&self, py: Python<'_>) -> PyResult<i64> {
        if self.tail != 0 {
            let len = self.len(py)? as i64;
            return Ok(len + 7 - i64::from(self.tail.leading_zeros()));
        }
        self.read(py, highest_set_bit)
    }

    fn __and__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        LmBitmap::binary(slf, other, Bitmap::try_intersect_with, Bitmap::try_intersection, |a, b| a & b)
    }

    fn __or__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        LmBitmap::binary(slf, other, Bitmap::try_union_with, Bitmap::try_union, |a, b| a | b)
    }

    fn __invert__(&self, py: Python<'_>) -> PyResult<LmBitmap> {
        let bits = self.read(py, |bits| detach_if_large(py, bits.num_words(), || !bits))?;
        Ok(LmBitmap::from(bits))
    }

    fn get_indices_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.read(py, |bits| indices_list(py, bits))?
    }

    fn get_indices_set<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PySet>> {
        PySet::new(py, self.read(py, indices)??)
    }

    /// `[items[i] for i in set bits if i < len(items)]`.
    fn gather<'py>(&self, py: Python<'py>, items: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        self.read(py, |bits| gather_items(py, bits, items))?
    }

    fn size(&self, py: Python<'_>) -> PyResult<usize> {
        self.len(py)
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.len(py)
    }

    /// A bitmap of its own with these bits (also of a row view: LMCache's
    /// `copy` shares nothing).
    fn copy(&self, py: Python<'_>) -> PyResult<LmBitmap> {
        Ok(LmBitmap { bits: LmBits::Owned(self.to_bitmap(py)?), tail: self.tail })
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<LmBitmap> {
        self.copy(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<LmBitmap> {
        self.copy(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.read(py, bit_string)?
    }

    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        self.read(py, bit_string)?
    }
}
