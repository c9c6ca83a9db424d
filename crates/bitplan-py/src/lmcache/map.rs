//! `bitplan.lmcache.prefetch_policy.MapState`: LMCache's map of tier index
//! (an L1 manager's or an L2 adapter's) to the `Bitmap2D` of the cells it
//! holds for a request, natively, with LMCache's rules
//! (`storage_controllers/utils.py`):
//!
//! - the layout `(rows, cols)` is fixed by the first store and kept for
//!   good, even after `del` of the last index;
//! - `ms[i] = grid` raises `ValueError` for a grid without rows or of
//!   another layout (also when it overwrites `i`), and stores the grid
//!   object itself, not a copy;
//! - `ms[i]` and `del ms[i]` raise `KeyError` for a missing index; `items()`
//!   is in insertion order;
//! - `merge()` is the union of every grid over zeros of the layout, and
//!   `Bitmap2D([])` only if no layout was ever set;
//! - `+` unions per index and copies the grids of indices on one side
//!   only; `-` keeps the left side's indices, copying those the right
//!   lacks; `+=` stores new grids through `ms[i] = …`, and `-=` changes
//!   only the indices both have; all four raise `ValueError` when both
//!   layouts are set and differ.
//!
//! The fast path, one call for each per-index loop LMCache's controller
//! runs on every request: `gather_keys` (`_gather_keys` of every entry),
//! `intersect_each` and `subtract_each` (every entry `& grid` / `- grid`),
//! and `popcount`.

use prefetch_policy::Grid;
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::boundary::bits::{detach_if_large, type_name};
use crate::lmcache::grid::{LmGrid, gather_flat};

/// LMCache's `MapState` (see the module docs).
#[pyclass(name = "MapState", module = "bitplan.lmcache.prefetch_policy")]
#[derive(Debug, Default)]
pub(crate) struct LmMapState {
    /// Index -> grid, in insertion order (a request has a few tiers: a
    /// linear search beats hashing).
    entries: Vec<(i64, Py<LmGrid>)>,
    /// `(rows, cols)` of every grid, from the first store on.
    layout: Option<(usize, usize)>,
}

/// `f` of a stored grid's cells.
fn with_grid<R>(py: Python<'_>, grid: &Py<LmGrid>, f: impl FnOnce(&Grid) -> R) -> PyResult<R> {
    grid.bind(py).try_borrow()?.with(py, f)
}

/// `work()` over `grid`'s cells, with the GIL released when they are many
/// enough (see [`detach_if_large`]): every operation of a map is one such
/// call per entry, as the grids' own operators are.
fn over_cells<R: Send>(py: Python<'_>, grid: &Grid, work: impl FnOnce() -> R + Send) -> R {
    detach_if_large(py, grid.as_words().len(), work)
}

/// A copy of `grid`'s cells.
fn copied(py: Python<'_>, grid: &Grid) -> Grid {
    over_cells(py, grid, || grid.clone())
}

/// A new Python grid of these cells.
fn new_grid(py: Python<'_>, grid: Grid) -> PyResult<Py<LmGrid>> {
    Py::new(py, LmGrid::from(grid))
}

impl LmMapState {
    /// The entries, in insertion order.
    pub(crate) fn entries(&self) -> &[(i64, Py<LmGrid>)] {
        &self.entries
    }

    /// A map of these grids, stored in order (each checked against the
    /// layout, as `ms[i] = grid` checks it).
    pub(crate) fn from_grids(py: Python<'_>, grids: impl Iterator<Item = (i64, LmGrid)>) -> PyResult<LmMapState> {
        let mut map = LmMapState::default();
        for (index, grid) in grids {
            map.store(py, index, Py::new(py, grid)?)?;
        }
        Ok(map)
    }

    fn find(&self, index: i64) -> Option<usize> {
        self.entries.iter().position(|&(at, _)| at == index)
    }

    fn get(&self, py: Python<'_>, index: i64) -> Option<Py<LmGrid>> {
        self.find(index).map(|at| self.entries[at].1.clone_ref(py))
    }

    /// LMCache's `_ensure_layout`: the layout a stored grid must have, set
    /// by the first.
    fn ensure_layout(&mut self, shape: (usize, usize)) -> PyResult<()> {
        let (rows, cols) = shape;
        if rows == 0 {
            return Err(PyValueError::new_err("Bitmaps cannot be empty"));
        }
        match self.layout {
            None => self.layout = Some(shape),
            Some((r, c)) if (r, c) != shape => {
                return Err(PyValueError::new_err(format!(
                    "Shape ({rows} rows, {cols} cols) does not match expected ({r} rows, {c} cols)"
                )));
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// `ms[index] = grid`.
    fn store(&mut self, py: Python<'_>, index: i64, grid: Py<LmGrid>) -> PyResult<()> {
        let shape = with_grid(py, &grid, Grid::shape)?;
        self.ensure_layout(shape)?;
        match self.find(index) {
            Some(at) => self.entries[at].1 = grid,
            None => self.entries.push((index, grid)),
        }
        Ok(())
    }

    /// LMCache's `_ensure_compatible`.
    fn ensure_compatible(&self, other: &LmMapState) -> PyResult<()> {
        match (self.layout, other.layout) {
            (Some((r, c)), Some((or, oc))) if (r, c) != (or, oc) => Err(PyValueError::new_err(format!(
                "Layout ({or} rows, {oc} cols) does not match expected ({r} rows, {c} cols)"
            ))),
            _ => Ok(()),
        }
    }

    /// A new map of `f(index, grid)` for every entry, in order (`None`
    /// leaves the index out).
    fn map_entries(
        &self,
        py: Python<'_>,
        mut f: impl FnMut(i64, &Grid) -> PyResult<Option<Grid>>,
    ) -> PyResult<LmMapState> {
        let mut out = LmMapState::default();
        for (index, grid) in &self.entries {
            if let Some(result) = with_grid(py, grid, |grid| f(*index, grid))?? {
                out.store(py, *index, new_grid(py, result)?)?;
            }
        }
        Ok(out)
    }

    /// `self + other` or `self - other`, as LMCache computes them.
    fn combined(&self, py: Python<'_>, other: &LmMapState, op: MapOp) -> PyResult<LmMapState> {
        self.ensure_compatible(other)?;
        let mut out = self.map_entries(py, |index, mine| {
            let Some(theirs) = other.get(py, index) else { return Ok(Some(copied(py, mine))) };
            with_grid(py, &theirs, |theirs| op.apply(py, mine, theirs))?.map(Some)
        })?;
        if op == MapOp::Union {
            for (index, theirs) in &other.entries {
                if self.find(*index).is_none() {
                    let copy = with_grid(py, theirs, |theirs| copied(py, theirs))?;
                    out.store(py, *index, new_grid(py, copy)?)?;
                }
            }
        }
        Ok(out)
    }

    /// `self += other` or `self -= other`: each changed index gets a new
    /// grid, stored as `ms[i] = …` stores.
    fn combine_in_place(&mut self, py: Python<'_>, other: &LmMapState, op: MapOp) -> PyResult<()> {
        self.ensure_compatible(other)?;
        for (index, theirs) in &other.entries {
            let updated = match self.get(py, *index) {
                Some(mine) => {
                    with_grid(py, &mine, |mine| with_grid(py, theirs, |theirs| op.apply(py, mine, theirs)))???
                }
                None if op == MapOp::Union => with_grid(py, theirs, |theirs| copied(py, theirs))?,
                None => continue,
            };
            self.store(py, *index, new_grid(py, updated)?)?;
        }
        Ok(())
    }

    /// Every entry `OP grid`, as a new map (`ValueError` on a layout
    /// mismatch).
    fn each(
        &self,
        py: Python<'_>,
        grid: &Bound<'_, PyAny>,
        op: fn(&mut Grid, &Grid) -> Result<(), prefetch_policy::GridError>,
    ) -> PyResult<LmMapState> {
        let other = grid.cast::<LmGrid>().map_err(|_| expected_grid(grid))?;
        let other = other.try_borrow()?.with(py, |other| copied(py, other))?;
        self.map_entries(py, |_, mine| {
            let out = over_cells(py, mine, || {
                let mut out = mine.clone();
                op(&mut out, &other).map(|()| out)
            });
            Ok(Some(out.map_err(|error| PyValueError::new_err(error.to_string()))?))
        })
    }
}

/// The two operators between maps: LMCache's `+` keeps the indices only
/// the right side has, `-` does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MapOp {
    Union,
    Difference,
}

impl MapOp {
    fn symbol(self) -> &'static str {
        match self {
            MapOp::Union => "+",
            MapOp::Difference => "-",
        }
    }

    /// `mine OP theirs` as a new grid (`ValueError` on a shape mismatch).
    fn apply(self, py: Python<'_>, mine: &Grid, theirs: &Grid) -> PyResult<Grid> {
        over_cells(py, mine, || {
            let mut grid = mine.clone();
            match self {
                MapOp::Union => grid.try_union_with(theirs),
                MapOp::Difference => grid.try_difference_with(theirs),
            }
            .map(|()| grid)
        })
        .map_err(|error| PyValueError::new_err(error.to_string()))
    }
}

fn expected_grid(obj: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!("expected a Bitmap2D, got {}", type_name(obj)))
}

/// An index as LMCache's maps key them: an int.
fn key(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    obj.extract::<i64>().map_err(|_| PyKeyError::new_err(obj.clone().unbind()))
}

#[pymethods]
impl LmMapState {
    /// An empty map, or one holding `grids` (index -> `Bitmap2D`).
    #[new]
    #[pyo3(signature = (grids = None))]
    fn new(py: Python<'_>, grids: Option<&Bound<'_, PyAny>>) -> PyResult<LmMapState> {
        let mut map = LmMapState::default();
        if let Some(grids) = grids {
            let items = match grids.cast::<PyDict>() {
                Ok(dict) => dict.items().into_any(),
                Err(_) => grids.call_method0(pyo3::intern!(py, "items"))?,
            };
            for item in items.try_iter()? {
                let (index, grid): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
                map.__setitem__(py, &index, &grid)?;
            }
        }
        Ok(map)
    }

    fn __setitem__(&mut self, py: Python<'_>, index: &Bound<'_, PyAny>, grid: &Bound<'_, PyAny>) -> PyResult<()> {
        let index = index
            .extract::<i64>()
            .map_err(|_| PyTypeError::new_err(format!("a MapState index must be an int, got {}", type_name(index))))?;
        let grid = grid.cast::<LmGrid>().map_err(|_| expected_grid(grid))?;
        self.store(py, index, grid.clone().unbind())
    }

    fn __getitem__(&self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<Py<LmGrid>> {
        self.get(py, key(index)?).ok_or_else(|| PyKeyError::new_err(index.clone().unbind()))
    }

    /// `ms.get(index, default)`, as a dict's.
    #[pyo3(name = "get", signature = (index, default = None))]
    fn get_or<'py>(
        &self,
        py: Python<'py>,
        index: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        match index.extract::<i64>().ok().and_then(|index| self.get(py, index)) {
            Some(grid) => Ok(Some(grid.into_bound(py).into_any())),
            None => Ok(default),
        }
    }

    fn __delitem__(&mut self, index: &Bound<'_, PyAny>) -> PyResult<()> {
        let at = self.find(key(index)?).ok_or_else(|| PyKeyError::new_err(index.clone().unbind()))?;
        // The layout stays, as LMCache's does.
        self.entries.remove(at);
        Ok(())
    }

    fn __contains__(&self, index: &Bound<'_, PyAny>) -> bool {
        index.extract::<i64>().is_ok_and(|index| self.find(index).is_some())
    }

    fn __len__(&self) -> usize {
        self.entries.len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.keys(py)?.into_any().try_iter()?.into_any())
    }

    /// The indices, in insertion order.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.entries.iter().map(|(index, _)| *index))
    }

    /// The grids (the stored objects), in insertion order.
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.entries.iter().map(|(_, grid)| grid.clone_ref(py)))
    }

    /// `(index, grid)` pairs in insertion order; the grids are the stored
    /// objects, not copies.
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let pairs = self
            .entries
            .iter()
            .map(|(index, grid)| (*index, grid.clone_ref(py)).into_pyobject(py))
            .collect::<PyResult<Vec<Bound<'py, PyTuple>>>>()?;
        PyList::new(py, pairs)
    }

    /// The union of every grid over zeros of the layout; `Bitmap2D([])` if
    /// no layout was ever set.
    fn merge(&self, py: Python<'_>) -> PyResult<LmGrid> {
        let Some((rows, cols)) = self.layout else { return Ok(LmGrid::from(Grid::empty())) };
        // The first two in one pass into a new grid, the rest in place.
        let mut merged = match &self.entries[..] {
            [] => Grid::zeros(rows, cols),
            [(_, only)] => with_grid(py, only, |only| copied(py, only))?,
            [(_, first), (_, second), ..] => {
                with_grid(py, first, |a| with_grid(py, second, |b| over_cells(py, a, || a | b)))??
            }
        };
        for (_, grid) in self.entries.iter().skip(2) {
            with_grid(py, grid, |grid| over_cells(py, grid, || merged.union_with(grid)))?;
        }
        Ok(LmGrid::from(merged))
    }

    /// A map of copies of every grid (its layout that of its first entry,
    /// as LMCache's `copy` stores them anew).
    fn copy(&self, py: Python<'_>) -> PyResult<LmMapState> {
        self.map_entries(py, |_, grid| Ok(Some(copied(py, grid))))
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<LmMapState> {
        self.copy(py)
    }

    fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<LmMapState>() else { return Ok(py.NotImplemented()) };
        let out = self.combined(py, &*other.try_borrow()?, MapOp::Union)?;
        Ok(Py::new(py, out)?.into_any())
    }

    fn __sub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<LmMapState>() else { return Ok(py.NotImplemented()) };
        let out = self.combined(py, &*other.try_borrow()?, MapOp::Difference)?;
        Ok(Py::new(py, out)?.into_any())
    }

    fn __iadd__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        LmMapState::in_place(slf, other, MapOp::Union)
    }

    fn __isub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        LmMapState::in_place(slf, other, MapOp::Difference)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let entries = self
            .entries
            .iter()
            .map(|(index, grid)| Ok(format!("{index}: {}", grid.bind(py).repr()?)))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(format!("MapState({{{}}})", entries.join(", ")))
    }

    // -- The fast path -------------------------------------------------------

    /// `{i: ms[i].gather_rows(keys_by_row) for i in ms}` in one call: the
    /// keys of every entry's set cells (LMCache's controller's
    /// `_gather_keys` over each locked or dropped map).
    fn gather_keys<'py>(&self, py: Python<'py>, keys_by_row: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let key_rows = match keys_by_row.cast::<PyList>() {
            Ok(list) => list.clone(),
            Err(_) => PyList::new(py, keys_by_row.try_iter()?.collect::<PyResult<Vec<_>>>()?)?,
        };
        let out = PyDict::new(py);
        for (index, grid) in &self.entries {
            out.set_item(*index, with_grid(py, grid, |grid| gather_flat(py, grid, &key_rows))??)?;
        }
        Ok(out)
    }

    /// Every entry `& grid`, as a new map (the controller's
    /// `locked & hit_cells` per index).
    fn intersect_each(&self, py: Python<'_>, grid: &Bound<'_, PyAny>) -> PyResult<LmMapState> {
        self.each(py, grid, Grid::try_intersect_with)
    }

    /// Every entry `- grid`, as a new map (the controller's
    /// `locked - hit_cells` per index).
    fn subtract_each(&self, py: Python<'_>, grid: &Bound<'_, PyAny>) -> PyResult<LmMapState> {
        self.each(py, grid, Grid::try_difference_with)
    }

    /// The set cells of every entry together.
    fn popcount(&self, py: Python<'_>) -> PyResult<usize> {
        self.entries.iter().map(|(_, grid)| with_grid(py, grid, |grid| over_cells(py, grid, || grid.popcount()))).sum()
    }
}

impl LmMapState {
    fn in_place(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>, op: MapOp) -> PyResult<()> {
        let py = slf.py();
        let other = other.cast::<LmMapState>().map_err(|_| {
            PyTypeError::new_err(format!(
                "unsupported operand type(s) for {}=: 'MapState' and '{}'",
                op.symbol(),
                type_name(other)
            ))
        })?;
        if other.is(slf) {
            let snapshot = slf.try_borrow()?.copy(py)?;
            return slf.try_borrow_mut()?.combine_in_place(py, &snapshot, op);
        }
        let theirs = other.try_borrow()?;
        slf.try_borrow_mut()?.combine_in_place(py, &theirs, op)
    }
}
