//! `bitplan.lmcache.prefetch_policy.Bitmap2D`: LMCache's grid of rows (one
//! per object group and rank, one column per chunk) as one native object
//! over prefetch-policy's contiguous [`Grid`], so that each operator is one
//! call and one kernel pass, not a Python loop over rows.
//!
//! LMCache's semantics, as its `storage_controllers/utils.py` defines them:
//! `Bitmap2D(rows)` (a `ValueError` if the widths differ), `zeros`,
//! `zeros_like`, `ones_like`, `size()` (`(0, 0)` without rows), `popcount`,
//! `to_list`, `copy`, `len`, iteration, indexing, `+` (OR), `-` (and-not),
//! `&` and their in-place forms (a `ValueError` on a shape mismatch), and
//! no `|`, `~` or `==`.
//!
//! # Rows and aliasing
//!
//! `grid[i]`, iteration and `to_list()` hand out LMCache `Bitmap`s that view
//! the grid's rows, the same object for a row each time: their writes reach
//! the grid (LMCache's controller fills grids with `grid[row].set(col)`). LMCache's in-place operators rebind the
//! grid to new row objects, so a row taken before `g += h` keeps the old
//! bits; here too: the first view moves the cells into a shared store, and
//! an in-place operator on a grid whose store a view still holds copies the
//! cells first (with no view alive, it takes them back and works in
//! place). `Bitmap2D(rows)` makes its rows views of the new grid (see
//! `grid_of_rows`), so `Bitmap2D(rows)[0] is rows[0]` as in LMCache. What
//! still differs from LMCache's list of rows is documented in
//! `bitplan/lmcache/__init__.py`: a row that cannot become a view (of
//! another grid, given twice, a `bitplan.Bitmap`) is copied.
//!
//! The fast path (one call where LMCache's controller loops per bit or per
//! row): `from_flat`, `to_flat`, `gather_rows`, `to_index_lists`, `deposit`
//! and `extract`.

use bitmap_core::Bitmap;
use prefetch_policy::{Grid, GridError};
use pyo3::exceptions::{PyIndexError, PyMemoryError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PySet, PySlice, PyTuple};

use crate::bitmaps::flavor::{AnyBitmap, GridStore, LmBitmap, LmBits, as_refs};
use crate::bitmaps::moves::{flat_from_grid, grid_from_flat};
use crate::boundary::args;
use crate::boundary::bits::{detach_if_large, type_name};
use crate::boundary::errors::OrPyErr;
use crate::boundary::memory;

/// LMCache's `Bitmap2D` (see the module docs).
#[pyclass(name = "Bitmap2D", module = "bitplan.lmcache.prefetch_policy")]
#[derive(Debug)]
pub(crate) struct LmGrid {
    cells: Cells,
    /// The row objects handed out, by row: `grid[i]` returns the same one
    /// each time, as LMCache's list of rows does (and a controller's
    /// `ret[row].set(col)` per cell then costs a list index, not a new
    /// object). They reference the store, not the grid, so there is no
    /// cycle to collect.
    rows: Vec<Option<Py<LmBitmap>>>,
}

/// Where a grid's cells are.
#[derive(Debug)]
enum Cells {
    /// Its own: no row view was handed out since its last in-place
    /// operation.
    Owned(Grid),
    /// In a store that row views may share.
    Shared(Py<GridStore>),
}

impl From<Grid> for LmGrid {
    fn from(grid: Grid) -> LmGrid {
        LmGrid { cells: Cells::Owned(grid), rows: Vec::new() }
    }
}

/// Grids of at least this many words release the GIL for their work
/// (262,144 cells, as the flat bitmaps).
fn words_of(grid: &Grid) -> usize {
    grid.as_words().len()
}

/// A dimension of LMCache's `Bitmap2D.zeros`: a `ValueError` if negative
/// (LMCache's check), a `MemoryError` if too large for any machine.
fn dimension(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    match obj.extract::<i64>() {
        Ok(n) => Ok(n),
        Err(error) if error.is_instance_of::<PyOverflowError>(obj.py()) && obj.is_instance_of::<PyInt>() => {
            if obj.lt(0)? {
                Ok(-1)
            } else {
                Err(PyMemoryError::new_err(format!("cannot allocate a grid dimension of {}", args::repr(obj))))
            }
        }
        Err(error) => Err(error),
    }
}

/// `ValueError` unless `a` and `b` have one shape, in LMCache's words.
fn check_same_size(a: &Grid, b: &Grid) -> PyResult<()> {
    if a.shape() == b.shape() {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!("Bitmap2D sizes do not match: {:?} vs {:?}", a.shape(), b.shape())))
    }
}

/// prefetch-policy's in-place grid operations.
type GridOp = fn(&mut Grid, &Grid);
/// The same into a new grid (one pass; shapes checked by the caller).
type NewGridOp = fn(&Grid, &Grid) -> Grid;

impl LmGrid {
    /// `f` of the cells.
    pub(crate) fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&Grid) -> R) -> PyResult<R> {
        match &self.cells {
            Cells::Owned(grid) => Ok(f(grid)),
            Cells::Shared(store) => Ok(f(&store.bind(py).try_borrow()?.grid)),
        }
    }

    /// The cells, to change in place: views handed out before keep the
    /// cells as they were (see the module docs).
    fn own(&mut self, py: Python<'_>) -> PyResult<&mut Grid> {
        if let Cells::Shared(store) = &self.cells {
            // The grid lets go of its row objects, as LMCache's rebinds its
            // rows to new ones: those no one else holds are freed here, and
            // those still held keep the store and its cells as they are.
            self.rows.clear();
            // Our reference is the only one: no view is alive, so the cells
            // can be taken back rather than copied. (`get_refcnt` is
            // deprecated for `ffi::Py_REFCNT`, which is `unsafe`; the safe
            // form reads the same count, and the GIL we hold keeps it
            // exact: no other thread can take a view meanwhile.)
            #[allow(deprecated)]
            let unique = store.get_refcnt(py) == 1;
            let grid = if unique {
                core::mem::take(&mut store.bind(py).try_borrow_mut()?.grid)
            } else {
                store.bind(py).try_borrow()?.grid.clone()
            };
            self.cells = Cells::Owned(grid);
        }
        match &mut self.cells {
            Cells::Owned(grid) => Ok(grid),
            Cells::Shared(_) => unreachable!("made owned above"),
        }
    }

    /// The store that row views share, made on the first view.
    fn store(&mut self, py: Python<'_>) -> PyResult<Py<GridStore>> {
        if let Cells::Owned(grid) = &mut self.cells {
            let grid = core::mem::take(grid);
            self.cells = Cells::Shared(Py::new(py, GridStore { grid })?);
        }
        match &self.cells {
            Cells::Shared(store) => Ok(store.clone_ref(py)),
            Cells::Owned(_) => unreachable!("made shared above"),
        }
    }

    /// The row object of row `row` (which the grid has): the one handed
    /// out before, or a new view of it.
    fn row_object(&mut self, py: Python<'_>, row: usize) -> PyResult<Py<LmBitmap>> {
        if let Some(Some(view)) = self.rows.get(row) {
            return Ok(view.clone_ref(py));
        }
        let store = self.store(py)?;
        let rows = store.bind(py).try_borrow()?.grid.num_rows();
        if self.rows.len() < rows {
            self.rows.resize_with(rows, || None);
        }
        let view = Py::new(py, LmBitmap::row_view(store, row))?;
        self.rows[row] = Some(view.clone_ref(py));
        Ok(view)
    }

    /// The row objects, in order.
    fn views<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = self.with(py, Grid::num_rows)?;
        let views = (0..rows).map(|row| self.row_object(py, row)).collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, views)
    }

    /// `slf OP other` as a new grid; `NotImplemented` if `other` is not a
    /// `Bitmap2D`.
    fn binary(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>, op: NewGridOp) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let Ok(other) = other.cast::<LmGrid>() else {
            return Ok(py.NotImplemented());
        };
        // `a + a` borrows `a` twice, both shared: no conflict.
        let (mine, theirs) = (slf.try_borrow()?, other.try_borrow()?);
        let out = mine.with(py, |a| {
            theirs.with(py, |b| {
                check_same_size(a, b)?;
                Ok::<Grid, PyErr>(detach_if_large(py, words_of(a), || op(a, b)))
            })
        })???;
        Ok(Py::new(py, LmGrid::from(out))?.into_any())
    }

    /// `slf OP= other`.
    fn in_place(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>, symbol: &str, op: GridOp) -> PyResult<()> {
        let py = slf.py();
        let other = other.cast::<LmGrid>().map_err(|_| {
            PyTypeError::new_err(format!(
                "unsupported operand type(s) for {symbol}=: 'Bitmap2D' and '{}'",
                type_name(other)
            ))
        })?;
        if other.is(slf) {
            // `g += g`: the right side is a copy of the cells before.
            let theirs = slf.try_borrow()?.with(py, Grid::clone)?;
            let mut mine = slf.try_borrow_mut()?;
            let grid = mine.own(py)?;
            detach_if_large(py, words_of(grid), || op(grid, &theirs));
            return Ok(());
        }
        let theirs = other.try_borrow()?;
        let mut mine = slf.try_borrow_mut()?;
        // The shapes first: `own` may copy cells shared with a row view,
        // wasted when the operation then fails.
        theirs.with(py, |theirs| mine.with(py, |grid| check_same_size(grid, theirs)))???;
        let grid = mine.own(py)?;
        theirs.with(py, |theirs| detach_if_large(py, words_of(grid), || op(grid, theirs)))
    }

    /// A new grid of `rows` × `cols`, `ones` or clear.
    fn filled(rows: usize, cols: usize, ones: bool) -> PyResult<LmGrid> {
        memory::ensure_cells(rows, cols)?;
        let mut grid = Grid::zeros(rows, cols);
        if ones {
            grid.set_all();
        }
        Ok(LmGrid::from(grid))
    }
}

/// `Bitmap2D(rows)`, which LMCache's grid makes of the row objects
/// themselves (its own test pins that a row written after construction is
/// written in the grid): the rows' bits copied into one buffer, and every
/// LMCache `Bitmap` among them with bits of its own turned into a view of
/// its row of the new grid, so that its later writes reach the grid as
/// LMCache's do. Rows that are all the views of one grid's store, in
/// order, share that store, as LMCache's two grids would share their row
/// objects. (Other rows keep what they are: a `bitplan.Bitmap`, or a view
/// of another grid, whose writes reach only that one.)
fn grid_of_rows(rows: &Bound<'_, PyAny>) -> PyResult<LmGrid> {
    let py = rows.py();
    let items = match rows.cast::<LmGrid>() {
        // LMCache's `Bitmap2D(grid)` takes `list(grid)`: the same rows.
        Ok(grid) => grid.try_borrow_mut()?.views(py)?.iter().collect(),
        Err(_) => rows.try_iter()?.collect::<PyResult<Vec<_>>>()?,
    };
    if let Some(store) = views_of_one_store(py, &items)? {
        let rows =
            items.iter().map(|item| Ok(Some(item.cast::<LmBitmap>()?.clone().unbind()))).collect::<PyResult<_>>()?;
        return Ok(LmGrid { cells: Cells::Shared(store), rows });
    }
    let bits = items.iter().map(AnyBitmap::borrow).collect::<PyResult<Vec<_>>>()?;
    let grid = match Grid::from_row_slice(&as_refs(&bits)) {
        Ok(grid) => grid,
        Err(GridError::RaggedRows { .. }) => {
            // LMCache's message names the set of widths.
            let widths = PySet::new(py, bits.iter().map(|row| row.len()))?;
            return Err(PyValueError::new_err(format!("Rows have inconsistent number of columns: {}", widths.repr()?)));
        }
        Err(error) => return Err(error).or_py_err(),
    };
    drop(bits);
    let mut out = LmGrid::from(grid);
    let mut store = None;
    for (row, item) in items.iter().enumerate() {
        let Ok(bitmap) = item.cast::<LmBitmap>() else { continue };
        let mut bits = bitmap.try_borrow_mut()?;
        if matches!(bits.bits, LmBits::Owned(_)) {
            let store = match &store {
                Some(store) => store,
                None => store.insert(out.store(py)?),
            };
            bits.bits = LmBits::Row { store: store.clone_ref(py), row };
            // `grid[row] is rows[row]`, as in LMCache (a row given twice
            // stays the view of its first place; the second is a copy).
            if out.rows.len() < items.len() {
                out.rows.resize_with(items.len(), || None);
            }
            out.rows[row] = Some(bitmap.clone().unbind());
        }
    }
    Ok(out)
}

/// The store that `items` view, if they are exactly its rows in order.
fn views_of_one_store(py: Python<'_>, items: &[Bound<'_, PyAny>]) -> PyResult<Option<Py<GridStore>>> {
    let mut shared: Option<Py<GridStore>> = None;
    for (at, item) in items.iter().enumerate() {
        let Ok(bitmap) = item.cast::<LmBitmap>() else { return Ok(None) };
        let bitmap = bitmap.try_borrow()?;
        let LmBits::Row { store, row } = &bitmap.bits else { return Ok(None) };
        match &shared {
            Some(first) if !first.is(store) => return Ok(None),
            _ => {}
        }
        if *row != at {
            return Ok(None);
        }
        shared.get_or_insert_with(|| store.clone_ref(py));
    }
    match shared {
        Some(store) if store.bind(py).try_borrow()?.grid.num_rows() == items.len() => Ok(Some(store)),
        _ => Ok(None),
    }
}

#[pymethods]
impl LmGrid {
    /// A grid of these rows (LMCache `Bitmap`s of one width, or any
    /// bitmaps): see `grid_of_rows` for how the row objects alias it.
    #[new]
    #[pyo3(signature = (rows = None))]
    fn new(rows: Option<&Bound<'_, PyAny>>) -> PyResult<LmGrid> {
        match rows {
            None => Ok(LmGrid::from(Grid::empty())),
            Some(rows) => grid_of_rows(rows),
        }
    }

    /// `num_rows` rows of `num_cols` clear bits (`ValueError` if either is
    /// negative, `MemoryError` before allocating if they cannot be had).
    #[staticmethod]
    fn zeros(num_rows: &Bound<'_, PyAny>, num_cols: &Bound<'_, PyAny>) -> PyResult<LmGrid> {
        let (rows, cols) = (dimension(num_rows)?, dimension(num_cols)?);
        if rows < 0 || cols < 0 {
            return Err(PyValueError::new_err(format!("Negative shape: ({rows}, {cols})")));
        }
        // Both are non-negative `i64`s, which fit in a `usize` here.
        LmGrid::filled(rows as usize, cols as usize, false)
    }

    fn zeros_like(&self, py: Python<'_>) -> PyResult<LmGrid> {
        let (rows, cols) = self.with(py, Grid::shape)?;
        LmGrid::filled(rows, cols, false)
    }

    fn ones_like(&self, py: Python<'_>) -> PyResult<LmGrid> {
        let (rows, cols) = self.with(py, Grid::shape)?;
        LmGrid::filled(rows, cols, true)
    }

    /// `(rows, columns)`; `(0, 0)` without rows.
    fn size(&self, py: Python<'_>) -> PyResult<(usize, usize)> {
        self.with(py, Grid::shape)
    }

    fn popcount(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |grid| detach_if_large(py, words_of(grid), || grid.popcount()))
    }

    /// A grid with these bits that shares nothing.
    fn copy(&self, py: Python<'_>) -> PyResult<LmGrid> {
        Ok(LmGrid::from(self.with(py, |grid| detach_if_large(py, words_of(grid), || grid.clone()))?))
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<LmGrid> {
        self.copy(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<LmGrid> {
        self.copy(py)
    }

    /// A new list of the rows, as LMCache `Bitmap`s that view them.
    // `&mut self`: the first view moves the cells into the shared store.
    #[allow(clippy::wrong_self_convention)]
    fn to_list<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.views(py)
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, Grid::num_rows)
    }

    fn __iter__<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.views(py)?.into_any().try_iter()?.into_any())
    }

    /// Row `index` (negative from the end, as a list's) as a view, or a
    /// list of views for a slice.
    fn __getitem__<'py>(&mut self, py: Python<'py>, index: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        // The controller's `grid[row].set(col)` per cell: a row object
        // handed out before, by a non-negative index, without a look at
        // the cells.
        if let Ok(i) = index.extract::<usize>()
            && let Some(Some(view)) = self.rows.get(i)
        {
            return Ok(view.bind(py).clone().into_any());
        }
        if index.is_instance_of::<PySlice>() {
            return self.views(py)?.as_any().get_item(index);
        }
        let rows = self.with(py, Grid::num_rows)?;
        let row = match index.extract::<isize>() {
            Ok(i) if i < 0 => rows.checked_sub(i.unsigned_abs()),
            Ok(i) => Some(i.unsigned_abs()).filter(|&i| i < rows),
            Err(error) if error.is_instance_of::<PyOverflowError>(py) => None,
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "Bitmap2D indices must be integers or slices, not {}",
                    type_name(index)
                )));
            }
        }
        .ok_or_else(|| PyIndexError::new_err("list index out of range"))?;
        Ok(self.row_object(py, row)?.into_bound(py).into_any())
    }

    fn __add__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        LmGrid::binary(slf, other, |a, b| a | b)
    }

    fn __sub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        LmGrid::binary(slf, other, |a, b| a - b)
    }

    fn __and__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        LmGrid::binary(slf, other, |a, b| a & b)
    }

    fn __iadd__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        LmGrid::in_place(slf, other, "+", Grid::union_with)
    }

    fn __isub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        LmGrid::in_place(slf, other, "-", Grid::difference_with)
    }

    fn __iand__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        LmGrid::in_place(slf, other, "&", Grid::intersect_with)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |grid| {
            let rows: Vec<String> = grid.to_rows().iter().map(|row| format!("'{row}'")).collect();
            format!("Bitmap2D([{}])", rows.join(", "))
        })
    }

    // -- The fast path -------------------------------------------------------

    /// Splits a flat bitmap into `num_rows` rows in one call: chunk-major
    /// (`order="chunk"`: bit `j * num_rows + r` is row `r`, column `j`) or
    /// row-major (`order="row"`: bit `r * num_cols + j`, the order LMCache's
    /// controller concatenates its key groups in:
    /// `_scatter_bitmaps_full_global(flat, R, C)` is
    /// `Bitmap2D.from_flat(flat, R, order="row")`).
    #[staticmethod]
    #[pyo3(signature = (flat, num_rows, order = "chunk"))]
    fn from_flat(
        py: Python<'_>,
        flat: &Bound<'_, PyAny>,
        num_rows: &Bound<'_, PyAny>,
        order: &str,
    ) -> PyResult<LmGrid> {
        Ok(LmGrid::from(grid_from_flat(py, flat, num_rows, order)?))
    }

    /// The inverse of `from_flat`: one LMCache `Bitmap` of rows × columns
    /// bits.
    #[pyo3(signature = (order = "chunk"))]
    fn to_flat(&self, py: Python<'_>, order: &str) -> PyResult<LmBitmap> {
        Ok(LmBitmap::from(self.with(py, |grid| flat_from_grid(py, grid, order))??))
    }

    /// The keys of the set cells in one flat list, row by row:
    /// `keys_by_row[r][c]` for each set `(r, c)`. LMCache's controller's
    /// `_gather_keys(key_groups, grid)` is
    /// `grid.gather_rows([group.keys for group in key_groups])`, with its
    /// `ValueError`s for a row count or a row length that differs.
    fn gather_rows<'py>(&self, py: Python<'py>, keys_by_row: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let key_rows = match keys_by_row.cast::<PyList>() {
            Ok(list) => list.clone(),
            Err(_) => PyList::new(py, keys_by_row.try_iter()?.collect::<PyResult<Vec<_>>>()?)?,
        };
        self.with(py, |grid| gather_flat(py, grid, &key_rows))?
    }

    /// Each row's set columns, ascending.
    fn to_index_lists(&self, py: Python<'_>) -> PyResult<Vec<Vec<usize>>> {
        self.with(py, Grid::to_index_lists)
    }

    /// PDEP over the rows: the `i`-th set cell of this grid, row by row,
    /// takes bit `i` of `flat`. LMCache's controller's
    /// `_scatter_bitmaps(planned, loaded)` is `planned.deposit(loaded)`,
    /// with its `ValueError` unless `len(flat)` is this grid's popcount.
    fn deposit(&self, py: Python<'_>, flat: &Bound<'_, PyAny>) -> PyResult<LmGrid> {
        let flat = AnyBitmap::borrow(flat)?;
        let src: &Bitmap = &flat;
        let grid = self.with(py, |grid| {
            let set = grid.popcount();
            if src.len() != set {
                return Err(PyValueError::new_err(format!(
                    "Length of local_bitmap ({}) does not match the total number of 1s in global_indices ({set})",
                    src.len()
                )));
            }
            detach_if_large(py, words_of(grid), || grid.deposit(src)).or_py_err()
        })??;
        Ok(LmGrid::from(grid))
    }

    /// PEXT over the rows: the cells of `values` at this grid's set cells,
    /// row by row, as one LMCache `Bitmap`; the inverse of `deposit`.
    fn extract(&self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<LmBitmap> {
        let values = values.cast::<LmGrid>()?.try_borrow()?;
        let out = self.with(py, |mask| {
            values.with(py, |values| detach_if_large(py, words_of(mask), || mask.extract(values)).or_py_err())
        })???;
        Ok(LmBitmap::from(out))
    }
}

/// The flat gather of [`LmGrid::gather_rows`]: each row's items read from
/// its list (or sequence) at the set columns only.
pub(crate) fn gather_flat<'py>(
    py: Python<'py>,
    grid: &Grid,
    key_rows: &Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyList>> {
    if key_rows.len() != grid.num_rows() {
        return Err(PyValueError::new_err(format!(
            "Length of bitmaps {} does not match length of key_groups {}",
            grid.num_rows(),
            key_rows.len()
        )));
    }
    let mut out = Vec::with_capacity(grid.popcount());
    for (row, keys) in key_rows.iter().enumerate() {
        let len = keys.len()?;
        if len != grid.num_cols() {
            return Err(PyValueError::new_err(format!(
                "Bitmap length {} does not match number of keys in group {len}",
                grid.num_cols()
            )));
        }
        match keys.cast::<PyList>() {
            Ok(list) => {
                for col in grid.row_ones(row) {
                    out.push(list.get_item(col)?);
                }
            }
            Err(_) => match keys.cast::<PyTuple>() {
                Ok(tuple) => {
                    for col in grid.row_ones(row) {
                        out.push(tuple.get_item(col)?);
                    }
                }
                Err(_) => {
                    for col in grid.row_ones(row) {
                        out.push(keys.get_item(col)?);
                    }
                }
            },
        }
    }
    PyList::new(py, out)
}
