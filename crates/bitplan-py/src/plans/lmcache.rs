//! LMCache's grid `plan_load` over its own containers, in one call: the
//! key groups' windows, the locked `MapState`s and the descriptors read
//! natively, the plan made into a per-thread reused `GridPlan`, and the
//! planned cells returned as two new `MapState`s.
//!
//! `bitplan.lmcache.prefetch_policy`'s `plan_load` calls this; what it
//! replaced built a window list and a dict of grids per tier in Python and
//! copied the plan back out grid by grid, which took as long as the plan
//! itself at a request's size (64 rows × 24 chunks).

use std::cell::RefCell;
use std::str::FromStr;

use prefetch_policy::{FetchingPolicy, Grid, GridMap, GridPlan, GridRequest, plan_grid_into};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::boundary::bits::detach_if_large;
use crate::boundary::errors::OrPyErr;
use crate::lmcache::grid::LmGrid;
use crate::lmcache::map::LmMapState;
use crate::plans::grid::grid_from;

thread_local! {
    /// The plan and the tiers' maps, reused request after request: the
    /// controller plans on one background thread.
    static WORKSPACE: RefCell<(GridPlan, GridMap, GridMap)> = RefCell::new(Default::default());
}

/// The windows of the key groups: each one's `sliding_window_size`.
fn windows_of(key_groups: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let name = pyo3::intern!(key_groups.py(), "sliding_window_size");
    match key_groups.cast::<PyList>() {
        Ok(list) => list.iter().map(|group| group.getattr(name)?.extract()).collect(),
        Err(_) => key_groups.try_iter()?.map(|group| group?.getattr(name)?.extract()).collect(),
    }
}

/// Fills `map` with the grids of `locked` (a `MapState`, or any map with
/// `items()`) whose index
/// `descs` holds, each checked against `shape`.
fn fill_tier(
    py: Python<'_>,
    tier: &str,
    locked: &Bound<'_, PyAny>,
    descs: &Bound<'_, PyAny>,
    shape: (usize, usize),
    map: &mut GridMap,
) -> PyResult<()> {
    map.clear();
    let check = |grid_shape: (usize, usize)| {
        if grid_shape == shape {
            Ok(())
        } else {
            Err(PyValueError::new_err(format!("the {tier} grids have shape {grid_shape:?}, the key groups {shape:?}")))
        }
    };
    let Ok(native) = locked.cast::<LmMapState>() else {
        // Any other map of index -> grid (LMCache's own `MapState`, a dict
        // of `Bitmap2D`s or of row lists): through `items()`.
        for item in locked.call_method0(pyo3::intern!(py, "items"))?.try_iter()? {
            let (index, grid): (i64, Bound<'_, PyAny>) = item?.extract()?;
            let grid = grid_from(&grid)?;
            check(grid.shape())?;
            if let Ok(at) = usize::try_from(index)
                && descs.contains(index)?
            {
                map.insert(at, grid).or_py_err()?;
            }
        }
        return Ok(());
    };
    for (index, grid) in native.try_borrow()?.entries() {
        let grid = grid.bind(py).try_borrow()?;
        check(grid.with(py, Grid::shape)?)?;
        let Ok(at) = usize::try_from(*index) else { continue };
        if descs.contains(*index)? {
            grid.with(py, |grid| map.insert_copy(at, grid).map(drop))?.or_py_err()?;
        }
    }
    Ok(())
}

/// `(l1_planned, l2_planned, hit)`: the default grid plan of the locked
/// maps' cells (only of the indices the descriptor dicts hold), as new
/// `MapState`s. Raises on bad input; the Python wrapper turns that into
/// LMCache's empty plan and an error log.
#[pyfunction]
pub(crate) fn plan_load_state<'py>(
    py: Python<'py>,
    key_groups: &Bound<'py, PyAny>,
    l1_locked: &Bound<'py, PyAny>,
    l2_locked: &Bound<'py, PyAny>,
    l1_descs: &Bound<'py, PyAny>,
    l2_descs: &Bound<'py, PyAny>,
    fetching: &str,
) -> PyResult<Bound<'py, PyTuple>> {
    let fetching = FetchingPolicy::from_str(fetching).map_err(|error| PyValueError::new_err(error.to_string()))?;
    let windows = windows_of(key_groups)?;
    let Some(first) = key_groups.try_iter()?.next() else {
        return Err(PyValueError::new_err("no key groups"));
    };
    let shape = (windows.len(), first?.getattr(pyo3::intern!(py, "keys"))?.len()?);
    WORKSPACE.with_borrow_mut(|(plan, l1, l2)| {
        fill_tier(py, "L1", l1_locked, l1_descs, shape, l1)?;
        fill_tier(py, "L2", l2_locked, l2_descs, shape, l2)?;
        let cells = shape.0.saturating_mul(shape.1) * (l1.len() + l2.len());
        let request = GridRequest::new(&windows, shape.1, l1, l2, fetching);
        detach_if_large(py, cells.div_ceil(64), || plan_grid_into(&request, plan)).or_py_err()?;
        let planned = |map: &GridMap| {
            LmMapState::from_grids(py, map.iter().map(|(index, grid)| (index as i64, LmGrid::from(grid.clone()))))
        };
        (planned(plan.l1())?, planned(plan.l2())?, plan.hit()).into_pyobject(py)
    })
}
