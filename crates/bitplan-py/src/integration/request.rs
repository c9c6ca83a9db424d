//! [`PinnedKeys`]: a prefetch request's keys as the L1 books resolved them
//! once, by id, for the request's life; and the cells of a grid as
//! positions in the request's row-major key list.

use std::sync::{Arc, Mutex, PoisonError};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::lmcache::grid::LmGrid;

/// A request's keys, resolved by one `L1Books` (`L1Books.request`): the
/// keys row-major, their ids (held by the books until `L1Books.release`)
/// and the grid's shape.
#[pyclass(name = "PinnedKeys", module = "bitplan.lmcache.integration", frozen)]
#[derive(Debug)]
pub(crate) struct PinnedKeys {
    flat: Py<PyList>,
    /// None once released.
    ids: Mutex<Option<Arc<[u32]>>>,
    shape: (usize, usize),
}

impl PinnedKeys {
    pub(crate) fn new(flat: Py<PyList>, ids: Vec<u32>, shape: (usize, usize)) -> PinnedKeys {
        PinnedKeys { flat, ids: Mutex::new(Some(ids.into())), shape }
    }

    pub(crate) fn shape(&self) -> (usize, usize) {
        self.shape
    }

    pub(crate) fn flat<'py>(&self, py: Python<'py>) -> Bound<'py, PyList> {
        self.flat.bind(py).clone()
    }

    /// The ids, shared: a call holds them while the books' lock is taken,
    /// and every phase of a request asks for them, so they are not copied.
    pub(crate) fn ids(&self) -> PyResult<Arc<[u32]>> {
        self.ids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(|| PyRuntimeError::new_err("the request's keys were released"))
    }

    /// The ids, taken out (None if released already).
    pub(crate) fn take_ids(&self) -> Option<Arc<[u32]>> {
        self.ids.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

#[pymethods]
impl PinnedKeys {
    /// `(rows, cols)`.
    #[getter(shape)]
    fn py_shape(&self) -> (usize, usize) {
        self.shape
    }

    /// Whether the books still hold the keys.
    #[getter]
    fn held(&self) -> bool {
        self.ids.lock().unwrap_or_else(PoisonError::into_inner).is_some()
    }

    fn __len__(&self) -> usize {
        self.shape.0 * self.shape.1
    }
}

/// The row-major positions of `cells` (every cell without), checked
/// against the request's shape.
pub(crate) fn cell_positions(
    py: Python<'_>,
    request: &PinnedKeys,
    cells: Option<&Bound<'_, LmGrid>>,
) -> PyResult<Vec<u32>> {
    let (rows, cols) = request.shape;
    let Some(cells) = cells else {
        return Ok((0..(rows * cols) as u32).collect());
    };
    let grid = cells.borrow();
    grid.with(py, |grid| {
        if grid.shape() != (rows, cols) {
            return Err(PyValueError::new_err(format!(
                "cells of shape {:?} for a request of shape {:?}",
                grid.shape(),
                (rows, cols)
            )));
        }
        Ok(grid.cells().map(|(row, col)| (row * cols + col) as u32).collect())
    })?
}

/// The row-major positions of `cells`, row by row (one list per row of
/// the request, empty for a row without cells).
pub(crate) fn row_cells(py: Python<'_>, request: &PinnedKeys, cells: &Bound<'_, LmGrid>) -> PyResult<Vec<Vec<u32>>> {
    let (rows, cols) = request.shape;
    let mut by_row = vec![Vec::new(); rows];
    for at in cell_positions(py, request, Some(cells))? {
        by_row[at as usize / cols].push(at);
    }
    Ok(by_row)
}
