//! The Rust crates' errors as the Python exceptions a caller expects:
//! `IndexError` for an index out of range, `MemoryError` for a size that
//! cannot be allocated, `ValueError` for everything else that is wrong
//! with a value. Every message is the Rust error's, which names the values.

use bitmap_core::BitmapError;
use prefetch_policy::{GridError, HybridError, PlanError, PlanViolation};
use pyo3::PyErr;
use pyo3::exceptions::{PyIndexError, PyMemoryError, PyValueError};

/// Converts a crate error into a Python exception (`?` in a `PyResult`
/// function needs this trait; `From` cannot be implemented for `PyErr` here).
pub(crate) trait IntoPyErr {
    /// The Python exception for this error.
    fn into_py_err(self) -> PyErr;
}

impl IntoPyErr for BitmapError {
    fn into_py_err(self) -> PyErr {
        match self {
            BitmapError::IndexOutOfRange { .. } => PyIndexError::new_err(self.to_string()),
            BitmapError::AllocationFailed { .. } => PyMemoryError::new_err(self.to_string()),
            _ => PyValueError::new_err(self.to_string()),
        }
    }
}

macro_rules! value_errors {
    ($($error:ty),*) => {$(
        impl IntoPyErr for $error {
            fn into_py_err(self) -> PyErr {
                PyValueError::new_err(self.to_string())
            }
        }
    )*};
}
value_errors!(HybridError, PlanError, PlanViolation, GridError);

/// `result.map_err(IntoPyErr::into_py_err)`, shorter at the call sites.
pub(crate) trait OrPyErr<T> {
    /// The value, or the error as a Python exception.
    fn or_py_err(self) -> Result<T, PyErr>;
}

impl<T, E: IntoPyErr> OrPyErr<T> for Result<T, E> {
    #[inline]
    fn or_py_err(self) -> Result<T, PyErr> {
        self.map_err(IntoPyErr::into_py_err)
    }
}
