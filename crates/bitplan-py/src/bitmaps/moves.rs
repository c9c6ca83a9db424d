//! The moves between a flat bitmap and a grid that both grid classes
//! (`bitplan.Grid`, LMCache's `Bitmap2D`) expose as `from_flat` and
//! `to_flat`, with one set of argument checks.

use std::str::FromStr;

use bitmap_core::Bitmap;
use prefetch_policy::{FlatOrder, Grid};
use pyo3::prelude::*;

use crate::bitmaps::flavor::AnyBitmap;
use crate::boundary::args;
use crate::boundary::bits::detach_if_large;
use crate::boundary::errors::OrPyErr;

/// A flat order from its Python name (`"chunk"` or `"row"`).
pub(crate) fn flat_order(name: &str) -> PyResult<FlatOrder> {
    FlatOrder::from_str(name).or_py_err()
}

/// `from_flat` of both grid classes: `flat` (a bitmap of either class)
/// split into `num_rows` rows in the named order, the GIL released for a
/// large one.
pub(crate) fn grid_from_flat(
    py: Python<'_>,
    flat: &Bound<'_, PyAny>,
    num_rows: &Bound<'_, PyAny>,
    order: &str,
) -> PyResult<Grid> {
    let (flat, rows, order) = (AnyBitmap::borrow(flat)?, args::count(num_rows, "num_rows")?, flat_order(order)?);
    let bits: &Bitmap = &flat;
    detach_if_large(py, bits.num_words(), || Grid::from_flat(bits, rows, order)).or_py_err()
}

/// `to_flat` of both grid classes.
pub(crate) fn flat_from_grid(py: Python<'_>, grid: &Grid, order: &str) -> PyResult<Bitmap> {
    let order = flat_order(order)?;
    Ok(detach_if_large(py, grid.as_words().len(), || grid.to_flat(order)))
}
