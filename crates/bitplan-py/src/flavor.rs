//! The two Python bitmap classes over one Rust [`Bitmap`]: the Pythonic
//! `bitplan.Bitmap` and LMCache's `bitplan.lmcache.native.Bitmap`.
//!
//! Functions that take bitmaps (policies, fold, the grid plan) accept
//! either and answer in the class they were given, so an LMCache caller
//! gets LMCache bitmaps back and never sees the other class.

use core::ops::Deref;

use bitmap_core::Bitmap;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::bitmap::PyBitmap;
use crate::lmcache::LmBitmap;

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
    /// An LMCache `Bitmap`.
    Lmcache(PyRef<'py, LmBitmap>),
}

impl<'py> AnyBitmap<'py> {
    /// Borrows `obj` if it is a bitmap of either class. A bitmap that another
    /// thread is changing right now is a `RuntimeError` (PyO3's borrow
    /// check), never a data race.
    pub(crate) fn borrow(obj: &Bound<'py, PyAny>) -> PyResult<AnyBitmap<'py>> {
        if let Ok(bitmap) = obj.cast::<PyBitmap>() {
            return Ok(AnyBitmap::Bitplan(bitmap.try_borrow()?));
        }
        if let Ok(bitmap) = obj.cast::<LmBitmap>() {
            return Ok(AnyBitmap::Lmcache(bitmap.try_borrow()?));
        }
        Err(PyTypeError::new_err(format!("expected a Bitmap, got {}", type_name(obj))))
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
            return Ok(Some(AnyBitmap::Lmcache(bitmap.try_borrow()?)));
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
            AnyBitmap::Lmcache(_) => Flavor::Lmcache,
        }
    }
}

impl Deref for AnyBitmap<'_> {
    type Target = Bitmap;

    #[inline]
    fn deref(&self) -> &Bitmap {
        match self {
            AnyBitmap::Bitplan(bitmap) => &bitmap.bits,
            AnyBitmap::Lmcache(bitmap) => &bitmap.bits,
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
    if words >= DETACH_WORDS { py.detach(work) } else { work() }
}
