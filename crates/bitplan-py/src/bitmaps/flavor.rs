//! The two Python bitmap classes over one Rust [`Bitmap`]: the Pythonic
//! `bitplan.Bitmap` and LMCache's `bitplan.lmcache.native.Bitmap`, and the
//! store of an LMCache `Bitmap2D` whose rows LMCache bitmaps can view.
//!
//! The classes are declared here, below the modules that give them their
//! methods (`bitmap.rs`, `lmcache.rs`, `src/lmcache/grid.rs`), so that
//! every one of those can take operands of every class without importing
//! the others.
//!
//! Functions that take bitmaps (policies, fold, the grid plan) accept
//! either and answer in the class they were given, so an LMCache caller
//! gets LMCache bitmaps back and never sees the other class.

use core::ops::Deref;

use bitmap_core::Bitmap;
use prefetch_policy::Grid;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::boundary::bits::type_name;

/// A fixed-length bitmap (see `bitmap.rs` and `_native.pyi`).
#[pyclass(name = "Bitmap", module = "bitplan")]
#[derive(Clone, Debug)]
pub(crate) struct PyBitmap {
    pub(crate) bits: Bitmap,
}

impl From<Bitmap> for PyBitmap {
    fn from(bits: Bitmap) -> PyBitmap {
        PyBitmap { bits }
    }
}

/// LMCache's `Bitmap` (see `lmcache.rs`): bits of its own, or a view of
/// one row of a native `Bitmap2D`, whose writes reach the grid (LMCache's
/// controller fills grids with `grid[row].set(col)`).
#[pyclass(name = "Bitmap", module = "bitplan.lmcache.native")]
#[derive(Debug)]
pub(crate) struct LmBitmap {
    pub(crate) bits: LmBits,
    /// LMCache's stray bits: the bits past the size in the last byte of
    /// LMCache's byte array (bit `i` is position `size + i`). Only `|` and
    /// `&` of two sizes leave any (LMCache's loop runs over whole bytes of
    /// the shorter size, and only `~` masks them); only `highest_set_bit`
    /// and `copy` see them. Always 0 for a row view.
    pub(crate) tail: u8,
}

/// What an LMCache bitmap's bits are.
#[derive(Debug)]
pub(crate) enum LmBits {
    /// Its own.
    Owned(Bitmap),
    /// Row `row` of a grid's store.
    Row {
        /// The cells, shared with the grid that handed the view out (until
        /// the grid's next in-place operation, which copies them first).
        store: Py<GridStore>,
        /// The row.
        row: usize,
    },
}

impl From<Bitmap> for LmBitmap {
    fn from(bits: Bitmap) -> LmBitmap {
        LmBitmap { bits: LmBits::Owned(bits), tail: 0 }
    }
}

impl LmBitmap {
    /// A view of row `row` of `store` (which must have it).
    pub(crate) fn row_view(store: Py<GridStore>, row: usize) -> LmBitmap {
        LmBitmap { bits: LmBits::Row { store, row }, tail: 0 }
    }

    /// A copy of the bits (for a row view, of its row as it is now).
    pub(crate) fn to_bitmap(&self, py: Python<'_>) -> PyResult<Bitmap> {
        match &self.bits {
            LmBits::Owned(bits) => Ok(bits.clone()),
            LmBits::Row { store, row } => Ok(row_of(&store.bind(py).try_borrow()?.grid, *row)),
        }
    }
}

/// A copy of row `row` of `grid`, which has it.
pub(crate) fn row_of(grid: &Grid, row: usize) -> Bitmap {
    grid.row(row).expect("a row view's row exists: a store's shape never changes")
}

/// The cells of a native LMCache `Bitmap2D` once it has handed out row
/// views (`grid[i]`, iteration, `to_list()`): the grid and its views share
/// it. Not a Python-visible class.
#[pyclass(name = "_GridStore", module = "bitplan.lmcache.prefetch_policy")]
#[derive(Debug)]
pub(crate) struct GridStore {
    pub(crate) grid: Grid,
}

/// Which class a result is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// `bitplan.Bitmap`.
    Bitplan,
    /// `bitplan.lmcache.native.Bitmap`.
    Lmcache,
}

impl Flavor {
    /// `bits` as a new Python object of this flavor.
    pub(crate) fn wrap(self, py: Python<'_>, bits: Bitmap) -> PyResult<Py<PyAny>> {
        Ok(match self {
            Flavor::Bitplan => Py::new(py, PyBitmap::from(bits))?.into_any(),
            Flavor::Lmcache => Py::new(py, LmBitmap::from(bits))?.into_any(),
        })
    }

    /// A new list of new bitmaps of this flavor.
    pub(crate) fn wrap_list<'py>(
        self,
        py: Python<'py>,
        bitmaps: impl IntoIterator<Item = Bitmap>,
    ) -> PyResult<Bound<'py, PyList>> {
        let objects = bitmaps.into_iter().map(|bits| self.wrap(py, bits)).collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, objects)
    }
}

/// A borrowed bitmap of either class.
pub(crate) enum AnyBitmap<'py> {
    /// A `bitplan.Bitmap`.
    Bitplan(PyRef<'py, PyBitmap>),
    /// An LMCache `Bitmap` with bits of its own.
    Lmcache(PyRef<'py, LmBitmap>),
    /// A copy of the row an LMCache row view shows.
    Row(Bitmap),
}

impl<'py> AnyBitmap<'py> {
    /// Borrows `obj` if it is a bitmap of either class. A bitmap that another
    /// thread is changing right now is a `RuntimeError` (PyO3's borrow
    /// check), never a data race.
    pub(crate) fn borrow(obj: &Bound<'py, PyAny>) -> PyResult<AnyBitmap<'py>> {
        AnyBitmap::operand(obj)?
            .ok_or_else(|| PyTypeError::new_err(format!("expected a Bitmap, got {}", type_name(obj))))
    }

    /// An operator's operand: `None` if `obj` is not a bitmap (the operator
    /// answers `NotImplemented`), the borrow's error if it is one that
    /// another thread is changing.
    pub(crate) fn operand(obj: &Bound<'py, PyAny>) -> PyResult<Option<AnyBitmap<'py>>> {
        // One type check per class, not a check and then a cast: this is on
        // every operator's path.
        if let Ok(bitmap) = obj.cast::<PyBitmap>() {
            return Ok(Some(AnyBitmap::Bitplan(bitmap.try_borrow()?)));
        }
        if let Ok(bitmap) = obj.cast::<LmBitmap>() {
            let bitmap = bitmap.try_borrow()?;
            return Ok(Some(match &bitmap.bits {
                LmBits::Owned(_) => AnyBitmap::Lmcache(bitmap),
                LmBits::Row { .. } => AnyBitmap::Row(bitmap.to_bitmap(obj.py())?),
            }));
        }
        Ok(None)
    }

    /// Borrows every item of an iterable of bitmaps.
    pub(crate) fn borrow_all(objs: &Bound<'py, PyAny>) -> PyResult<Vec<AnyBitmap<'py>>> {
        objs.try_iter()?.map(|obj| AnyBitmap::borrow(&obj?)).collect()
    }

    /// The class this bitmap is of.
    pub(crate) fn flavor(&self) -> Flavor {
        match self {
            AnyBitmap::Bitplan(_) => Flavor::Bitplan,
            AnyBitmap::Lmcache(_) | AnyBitmap::Row(_) => Flavor::Lmcache,
        }
    }
}

impl Deref for AnyBitmap<'_> {
    type Target = Bitmap;

    #[inline]
    fn deref(&self) -> &Bitmap {
        match self {
            AnyBitmap::Bitplan(bitmap) => &bitmap.bits,
            AnyBitmap::Lmcache(bitmap) => match &bitmap.bits {
                LmBits::Owned(bits) => bits,
                LmBits::Row { .. } => unreachable!("`operand` copies a row view's bits into `AnyBitmap::Row`"),
            },
            AnyBitmap::Row(bits) => bits,
        }
    }
}

/// The flavor of the first bitmap, or `default` if there is none.
pub(crate) fn flavor_of(bitmaps: &[AnyBitmap<'_>], default: Flavor) -> Flavor {
    bitmaps.first().map_or(default, AnyBitmap::flavor)
}

/// Borrowed views of the bitmaps, for the Rust APIs that take `&[&Bitmap]`.
pub(crate) fn as_refs<'a>(bitmaps: &'a [AnyBitmap<'_>]) -> Vec<&'a Bitmap> {
    bitmaps.iter().map(|bitmap| &**bitmap).collect()
}
