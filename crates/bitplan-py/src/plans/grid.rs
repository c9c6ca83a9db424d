//! `bitplan.Grid` (LMCache's `Bitmap2D`: rows of equal width, one per
//! object group and rank), the grid plan (LMCache's newer `plan_load`) and
//! the grid policies, over `prefetch_policy`'s `Grid`, `GridMap` and
//! `plan_grid`, and `bitmap_core::layout`'s bit moves between the flat,
//! chunk-major form and the rows.

use std::str::FromStr;

use bitmap_core::Bitmap;
use prefetch_policy::{
    DefaultGridPolicy, FetchingPolicy, Grid, GridMap, GridPlan, GridPolicy, GridRequest, Keys, RetainGridPolicy,
};
use pyo3::exceptions::{PyNotImplementedError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::bitmaps::flavor::{AnyBitmap, Flavor, PyBitmap, as_refs};
use crate::bitmaps::moves::{flat_from_grid, grid_from_flat};
use crate::boundary::args;
use crate::boundary::bits::{detach_if_large, type_name};
use crate::boundary::errors::OrPyErr;
use crate::boundary::memory;
use crate::lmcache::grid::LmGrid;
use crate::plans::hybrid::Counts;

/// `bitplan.Grid`.
#[pyclass(name = "Grid", module = "bitplan")]
#[derive(Clone, Debug)]
pub(crate) struct PyGrid {
    pub(crate) grid: Grid,
}

impl From<Grid> for PyGrid {
    fn from(grid: Grid) -> PyGrid {
        PyGrid { grid }
    }
}

/// A grid from a `Grid`, an LMCache `Bitmap2D` or any iterable of bitmaps
/// (its rows).
pub(crate) fn grid_from(obj: &Bound<'_, PyAny>) -> PyResult<Grid> {
    if let Ok(grid) = obj.cast::<PyGrid>() {
        return Ok(grid.try_borrow()?.grid.clone());
    }
    if let Ok(grid) = obj.cast::<LmGrid>() {
        return grid.try_borrow()?.with(obj.py(), Grid::clone);
    }
    let rows = AnyBitmap::borrow_all(obj)?;
    Grid::from_row_slice(&as_refs(&rows)).or_py_err()
}

fn row_index(obj: &Bound<'_, PyAny>, rows: usize) -> PyResult<usize> {
    args::position(obj, rows, args::Of::Rows)
}

impl PyGrid {
    fn cell(&self, row: &Bound<'_, PyAny>, col: &Bound<'_, PyAny>) -> PyResult<(usize, usize)> {
        Ok((row_index(row, self.grid.num_rows())?, args::index(col, self.grid.num_cols())?))
    }

    /// `slf OP other` as a new grid; `None` (`NotImplemented`) if `other`
    /// is not a grid. The receiver is borrowed here: see `PyBitmap::binary`.
    fn binary(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        op: fn(&mut Grid, &Grid) -> Result<(), prefetch_policy::GridError>,
    ) -> PyResult<Option<PyGrid>> {
        let Ok(other) = other.cast::<PyGrid>() else {
            return Ok(None);
        };
        // `a | a` borrows `a` twice, both shared: no conflict.
        let mut out = slf.try_borrow()?.grid.clone();
        op(&mut out, &other.try_borrow()?.grid).or_py_err()?;
        Ok(Some(PyGrid { grid: out }))
    }

    fn in_place(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        symbol: &str,
        op: fn(&mut Grid, &Grid) -> Result<(), prefetch_policy::GridError>,
    ) -> PyResult<()> {
        let other = other.cast::<PyGrid>().map_err(|_| {
            PyTypeError::new_err(format!(
                "unsupported operand type(s) for {symbol}=: 'Grid' and '{}'",
                type_name(other)
            ))
        })?;
        let theirs = if other.is(slf) { slf.try_borrow()?.grid.clone() } else { other.try_borrow()?.grid.clone() };
        op(&mut slf.try_borrow_mut()?.grid, &theirs).or_py_err()
    }
}

fn wrap_grid(py: Python<'_>, grid: Option<PyGrid>) -> PyResult<Py<PyAny>> {
    match grid {
        Some(grid) => Ok(Py::new(py, grid)?.into_any()),
        None => Ok(py.NotImplemented()),
    }
}

#[pymethods]
impl PyGrid {
    #[classattr]
    const __hash__: Option<Py<PyAny>> = None;

    #[new]
    fn new(rows: &Bound<'_, PyAny>) -> PyResult<PyGrid> {
        Ok(PyGrid { grid: grid_from(rows)? })
    }

    #[staticmethod]
    fn zeros(num_rows: &Bound<'_, PyAny>, num_cols: &Bound<'_, PyAny>) -> PyResult<PyGrid> {
        let (rows, cols) = (args::count(num_rows, "num_rows")?, args::count(num_cols, "num_cols")?);
        memory::ensure_cells(rows, cols)?;
        Ok(PyGrid { grid: Grid::zeros(rows, cols) })
    }

    /// Splits a flat bitmap into `num_rows` rows: chunk-major (`order =
    /// "chunk"`: bit `j * num_rows + k` is chunk `j` of row `k`) or
    /// row-major (`"row"`: bit `k * num_cols + j`).
    #[staticmethod]
    #[pyo3(signature = (flat, num_rows, order = "chunk"))]
    fn from_flat(
        py: Python<'_>,
        flat: &Bound<'_, PyAny>,
        num_rows: &Bound<'_, PyAny>,
        order: &str,
    ) -> PyResult<PyGrid> {
        Ok(PyGrid { grid: grid_from_flat(py, flat, num_rows, order)? })
    }

    /// The inverse of `from_flat`.
    #[pyo3(signature = (order = "chunk"))]
    fn to_flat(&self, py: Python<'_>, order: &str) -> PyResult<PyBitmapResult> {
        Ok(PyBitmapResult(flat_from_grid(py, &self.grid, order)?))
    }

    #[getter]
    fn shape(&self) -> (usize, usize) {
        self.grid.shape()
    }

    #[getter]
    fn num_rows(&self) -> usize {
        self.grid.num_rows()
    }

    #[getter]
    fn num_cols(&self) -> usize {
        self.grid.num_cols()
    }

    fn __len__(&self) -> usize {
        self.grid.num_rows()
    }

    /// A copy of a row.
    fn __getitem__(&self, row: &Bound<'_, PyAny>) -> PyResult<PyBitmapResult> {
        let row = row_index(row, self.grid.num_rows())?;
        Ok(PyBitmapResult(self.grid.row(row).expect("the index is in range")))
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.rows(py)?.into_any().try_iter()?.into_any())
    }

    /// Copies of the rows.
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        Flavor::Bitplan.wrap_list(py, self.grid.to_rows())
    }

    fn test(&self, row: &Bound<'_, PyAny>, col: &Bound<'_, PyAny>) -> PyResult<bool> {
        let (r, c) = self.cell(row, col)?;
        Ok(self.grid.test(r, c))
    }

    fn set(&mut self, row: &Bound<'_, PyAny>, col: &Bound<'_, PyAny>) -> PyResult<()> {
        let (r, c) = self.cell(row, col)?;
        self.grid.set(r, c);
        Ok(())
    }

    fn clear(&mut self, row: &Bound<'_, PyAny>, col: &Bound<'_, PyAny>) -> PyResult<()> {
        let (r, c) = self.cell(row, col)?;
        self.grid.clear(r, c);
        Ok(())
    }

    fn popcount(&self) -> usize {
        self.grid.popcount()
    }

    fn any(&self) -> bool {
        self.grid.any()
    }

    fn to_index_lists(&self) -> Vec<Vec<usize>> {
        self.grid.to_index_lists()
    }

    /// For each row, the keys of its set cells: `keys[r][c]` for each set `(r, c)`.
    fn gather_rows<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let keys: Vec<Vec<Bound<'py, PyAny>>> =
            keys.try_iter()?.map(|row| row?.try_iter()?.collect::<PyResult<Vec<_>>>()).collect::<PyResult<_>>()?;
        let gathered = self.grid.gather_rows(&keys).or_py_err()?;
        let rows = gathered.into_iter().map(|row| PyList::new(py, row)).collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, rows)
    }

    /// `self` as a mask: its set cells, row by row, take `bits`' bits in
    /// order (a PDEP over rows).
    fn deposit(&self, py: Python<'_>, bits: &Bound<'_, PyAny>) -> PyResult<PyGrid> {
        let bits = AnyBitmap::borrow(bits)?;
        let src: &Bitmap = &bits;
        let grid = detach_if_large(py, self.grid.num_cells().div_ceil(64), || self.grid.deposit(src));
        Ok(PyGrid { grid: grid.or_py_err()? })
    }

    /// The cells of `values` at `self`'s set cells, row by row, as one flat
    /// bitmap (a PEXT over rows).
    fn extract(&self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<PyBitmapResult> {
        let values = values.cast::<PyGrid>()?.try_borrow()?;
        let (mask, values) = (&self.grid, &values.grid);
        let out = detach_if_large(py, mask.num_cells().div_ceil(64), || mask.extract(values));
        Ok(PyBitmapResult(out.or_py_err()?))
    }

    fn __or__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        wrap_grid(slf.py(), PyGrid::binary(slf, other, Grid::try_union_with)?)
    }

    fn __and__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        wrap_grid(slf.py(), PyGrid::binary(slf, other, Grid::try_intersect_with)?)
    }

    fn __sub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        wrap_grid(slf.py(), PyGrid::binary(slf, other, Grid::try_difference_with)?)
    }

    fn __ior__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        PyGrid::in_place(slf, other, "|", Grid::try_union_with)
    }

    fn __iand__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        PyGrid::in_place(slf, other, "&", Grid::try_intersect_with)
    }

    fn __isub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        PyGrid::in_place(slf, other, "-", Grid::try_difference_with)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyGrid>().is_ok_and(|other| other.try_borrow().is_ok_and(|other| other.grid == self.grid))
    }

    fn copy(&self) -> PyGrid {
        self.clone()
    }

    fn __copy__(&self) -> PyGrid {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyGrid {
        self.clone()
    }

    /// Pickles as `Grid(rows)`.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let rows = slf.try_borrow()?.rows(py)?;
        (slf.get_type(), (rows,)).into_pyobject(py)
    }

    fn __repr__(&self) -> String {
        let rows: Vec<String> = self.grid.to_rows().iter().map(|row| format!("'{row}'")).collect();
        format!("Grid([{}])", rows.join(", "))
    }
}

/// A `bitplan.Bitmap` result (a newtype, so a method can return one
/// without naming the Python class).
pub(crate) struct PyBitmapResult(Bitmap);

impl<'py> IntoPyObject<'py> for PyBitmapResult {
    type Target = PyBitmap;
    type Output = Bound<'py, PyBitmap>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Self::Output> {
        Bound::new(py, PyBitmap::from(self.0))
    }
}

/// `bitplan.GridPlan`: which cells each L1 manager and each L2 adapter loads.
#[pyclass(frozen, name = "GridPlan", module = "bitplan")]
pub(crate) struct PyGridPlan {
    plan: GridPlan,
}

fn grid_dict<'a>(py: Python<'_>, entries: impl Iterator<Item = (usize, &'a Grid)>) -> PyResult<Py<PyDict>> {
    let dict = PyDict::new(py);
    for (index, grid) in entries {
        dict.set_item(index, PyGrid { grid: grid.clone() })?;
    }
    Ok(dict.unbind())
}

#[pymethods]
impl PyGridPlan {
    /// L1 manager index -> the cells it loads.
    #[getter]
    fn l1(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        grid_dict(py, self.plan.l1().iter())
    }

    /// L2 adapter index -> the cells it loads.
    #[getter]
    fn l2(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        grid_dict(py, self.plan.l2().iter())
    }

    #[getter]
    fn hit(&self) -> usize {
        self.plan.hit()
    }

    fn planned_count(&self) -> usize {
        self.plan.planned_count()
    }

    fn merged(&self) -> PyGrid {
        PyGrid { grid: self.plan.merged() }
    }

    fn __repr__(&self) -> String {
        format!("GridPlan(hit={}, l1={:?}, l2={:?})", self.plan.hit(), self.plan.l1(), self.plan.l2())
    }
}

/// One tier's locked grids: index -> `Grid` (or a list of rows).
fn grid_map(tier: &Bound<'_, PyAny>) -> PyResult<GridMap> {
    let mut entries = Vec::new();
    let items = match tier.cast::<PyDict>() {
        Ok(dict) => dict.items().into_any(),
        Err(_) => tier.call_method0(pyo3::intern!(tier.py(), "items"))?,
    };
    for item in items.try_iter()? {
        let (index, grid): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        entries.push((args::count(&index, "a tier index")?, grid_from(&grid)?));
    }
    GridMap::from_entries(entries).or_py_err()
}

/// Runs a grid plan: the Python arguments converted, planned with the GIL
/// released for large grids.
fn run_plan(
    py: Python<'_>,
    policy: &dyn GridPolicy,
    windows: &Bound<'_, PyAny>,
    num_chunks: &Bound<'_, PyAny>,
    l1: &Bound<'_, PyAny>,
    l2: &Bound<'_, PyAny>,
    fetching: &str,
) -> PyResult<GridPlan> {
    let windows = args::windows(windows)?;
    let num_chunks = Counts(Flavor::Bitplan).chunks(num_chunks)?;
    let fetching = FetchingPolicy::from_str(fetching).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let (l1, l2) = (grid_map(l1)?, grid_map(l2)?);
    // The plan's union and needed cells are grids of the request's shape.
    memory::ensure_cells(windows.len(), num_chunks)?;
    let cells = windows.len().saturating_mul(num_chunks) * (l1.len() + l2.len());
    detach_if_large(py, cells.div_ceil(64), || {
        policy.plan_load(&GridRequest::new(&windows, num_chunks, &l1, &l2, fetching))
    })
    .or_py_err()
}

/// LMCache's grid `plan_load` with the `default` policy.
#[pyfunction]
#[pyo3(signature = (windows, num_chunks, l1, l2, fetching = "prefix"))]
pub(crate) fn plan_load(
    py: Python<'_>,
    windows: &Bound<'_, PyAny>,
    num_chunks: &Bound<'_, PyAny>,
    l1: &Bound<'_, PyAny>,
    l2: &Bound<'_, PyAny>,
    fetching: &str,
) -> PyResult<PyGridPlan> {
    Ok(PyGridPlan { plan: run_plan(py, &DefaultGridPolicy::new(), windows, num_chunks, l1, l2, fetching)? })
}

/// `bitplan.GridPolicy`: the base class of the grid policies.
#[pyclass(subclass, name = "GridPolicy", module = "bitplan")]
pub(crate) struct PyGridPolicy {
    engine: Option<Box<dyn GridPolicy>>,
}

#[pymethods]
impl PyGridPolicy {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> PyGridPolicy {
        PyGridPolicy { engine: None }
    }

    #[getter]
    fn name(slf: &Bound<'_, Self>) -> PyResult<String> {
        if let Some(engine) = slf.try_borrow()?.engine.as_deref() {
            return Ok(engine.name().to_owned());
        }
        Ok(slf.get_type().name()?.to_string())
    }

    #[pyo3(signature = (windows, num_chunks, l1, l2, fetching = "prefix"))]
    fn plan_load(
        &self,
        py: Python<'_>,
        windows: &Bound<'_, PyAny>,
        num_chunks: &Bound<'_, PyAny>,
        l1: &Bound<'_, PyAny>,
        l2: &Bound<'_, PyAny>,
        fetching: &str,
    ) -> PyResult<PyGridPlan> {
        let engine = self
            .engine
            .as_deref()
            .ok_or_else(|| PyNotImplementedError::new_err("GridPolicy.plan_load must be overridden by a subclass"))?;
        Ok(PyGridPlan { plan: run_plan(py, engine, windows, num_chunks, l1, l2, fetching)? })
    }

    fn plan_l1_retention<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let num_keys = args::key_count(keys)?;
        let retentions = match &self.engine {
            Some(engine) => engine.select_l1_retentions(Keys::count(num_keys)),
            None => vec![false; num_keys],
        };
        PyList::new(py, retentions)
    }
}

/// `bitplan.DefaultGridPolicy`.
#[pyclass(extends = PyGridPolicy, subclass, name = "DefaultGridPolicy", module = "bitplan")]
pub(crate) struct PyDefaultGridPolicy;

#[pymethods]
impl PyDefaultGridPolicy {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> PyClassInitializer<PyDefaultGridPolicy> {
        PyClassInitializer::from(PyGridPolicy { engine: Some(Box::new(DefaultGridPolicy::new())) })
            .add_subclass(PyDefaultGridPolicy)
    }
}

/// `bitplan.RetainGridPolicy`.
#[pyclass(extends = PyDefaultGridPolicy, subclass, name = "RetainGridPolicy", module = "bitplan")]
pub(crate) struct PyRetainGridPolicy;

#[pymethods]
impl PyRetainGridPolicy {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> PyClassInitializer<PyRetainGridPolicy> {
        PyClassInitializer::from(PyGridPolicy { engine: Some(Box::new(RetainGridPolicy::new())) })
            .add_subclass(PyDefaultGridPolicy)
            .add_subclass(PyRetainGridPolicy)
    }
}
