//! How `L1Books` answers: LMCache's dicts (key → `L1Error`, or key →
//! `(L1Error, object)` with one `(code, None)` tuple per code and call),
//! the key lists its listeners get, and the grids of the cells that
//! succeeded in a request's call.

use prefetch_policy::Grid;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use tier_state::Outcome;

use crate::integration::books::{Books, Source};
use crate::lmcache::grid::LmGrid;
use crate::tiers::common::Failures;

/// The Python keys at `positions` of `source`, as a list.
pub(crate) fn keys_at<'py>(
    py: Python<'py>,
    source: &Source<'_, 'py>,
    positions: &[usize],
) -> PyResult<Bound<'py, PyList>> {
    let keys = positions.iter().map(|&i| source.key(i)).collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, keys)
}

/// The successful positions of `outcomes`.
pub(crate) fn successes(outcomes: &[Outcome]) -> Vec<usize> {
    outcomes.iter().enumerate().filter(|(_, o)| o.is_success()).map(|(i, _)| i).collect()
}

pub(crate) fn objects<'py>(py: Python<'py>, objects: Vec<Py<PyAny>>) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, objects)
}

/// A grid of `(rows, cols)` with the cells of the successful positions of
/// a request call set (`positions` row-major).
pub(crate) fn success_grid(
    py: Python<'_>,
    shape: (usize, usize),
    positions: &[u32],
    outcomes: &[Outcome],
) -> PyResult<Py<LmGrid>> {
    let mut grid = Grid::zeros(shape.0, shape.1);
    for (i, outcome) in outcomes.iter().enumerate() {
        if outcome.is_success() {
            let at = positions[i] as usize;
            grid.set(at / shape.1, at % shape.1);
        }
    }
    Py::new(py, LmGrid::from(grid))
}

/// The dict of a codes call.
pub(crate) fn codes_dict<'py>(
    books: &Books,
    py: Python<'py>,
    source: &Source<'_, 'py>,
    outcomes: &[Outcome],
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (i, &outcome) in outcomes.iter().enumerate() {
        out.set_item(source.key(i)?, books.code(py, outcome))?;
    }
    Ok(out)
}

/// The dict of an objects call.
pub(crate) fn objects_dict<'py>(
    books: &Books,
    py: Python<'py>,
    source: &Source<'_, 'py>,
    outcomes: &[Outcome],
    answers: &[Option<Bound<'py, PyAny>>],
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let mut failures = Failures::new(&books.codes);
    for (i, &outcome) in outcomes.iter().enumerate() {
        let value = match &answers[i] {
            Some(answer) if outcome.is_success() => answer.clone(),
            _ => failures.get(py, outcome)?,
        };
        out.set_item(source.key(i)?, value)?;
    }
    Ok(out)
}

/// `(key, L1Error)` of each failed position (the manager logs them).
pub(crate) fn failed_pairs<'py>(
    books: &Books,
    py: Python<'py>,
    source: &Source<'_, 'py>,
    outcomes: &[Outcome],
) -> PyResult<Bound<'py, PyList>> {
    let pairs = outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| !o.is_success())
        .map(|(i, &o)| PyTuple::new(py, [source.key(i)?, books.code(py, o).clone()]))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, pairs)
}
