//! Prefix hits for hybrid models (fold, unfold and their forms) over
//! `prefetch_policy`'s hybrid API, for both modules: `bitplan` (counts are
//! checked as values: a negative one is a `ValueError`) and
//! `bitplan.lmcache.native` (counts are `size_t`, as in LMCache's pybind11
//! signatures: a negative one is a `TypeError`).
//!
//! A function that takes a bitmap answers in that bitmap's class; `unfold`
//! and `unfold_grouped`, which take none, in their module's.

use std::borrow::Cow;
use std::cell::RefCell;

use bitmap_core::Bitmap;
use prefetch_policy::{FoldWorkspace, Grid, chunk_count};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::bitmaps::flavor::{AnyBitmap, Flavor, as_refs, flavor_of};
use crate::boundary::args;
use crate::boundary::bits::detach_if_large;
use crate::boundary::errors::OrPyErr;
use crate::boundary::memory;
use crate::lmcache::grid::LmGrid;

thread_local! {
    /// The fold's temporaries, kept per thread so that a call allocates only
    /// its result (per thread, not behind a lock: calls run with the GIL
    /// released).
    static WORKSPACE: RefCell<FoldWorkspace> = RefCell::new(FoldWorkspace::new());
}

fn with_workspace<T>(work: impl FnOnce(&mut FoldWorkspace) -> T) -> T {
    WORKSPACE.with(|ws| work(&mut ws.borrow_mut()))
}

/// Converts counts under the calling module's rules (see the module docs).
#[derive(Clone, Copy)]
pub(crate) struct Counts(pub(crate) Flavor);

impl Counts {
    pub(crate) fn chunks(self, obj: &Bound<'_, PyAny>) -> PyResult<usize> {
        match self.0 {
            Flavor::Bitplan => chunk_count(args::signed(obj, "num_chunks")?).or_py_err(),
            Flavor::Lmcache => args::size_t(obj, "num_chunks"),
        }
    }

    fn ranks(self, obj: &Bound<'_, PyAny>) -> PyResult<usize> {
        match self.0 {
            Flavor::Bitplan => {
                let ranks = args::signed(obj, "num_ranks")?;
                usize::try_from(ranks)
                    .map_err(|_| PyValueError::new_err(format!("the number of ranks must be at least 1 (got {ranks})")))
            }
            Flavor::Lmcache => args::size_t(obj, "num_ranks"),
        }
    }

    /// A hit length: a negative one is no hit in `bitplan` (as
    /// `unfold_range` has it), a `TypeError` in LMCache's `size_t`.
    fn hit(self, obj: &Bound<'_, PyAny>) -> PyResult<usize> {
        match self.0 {
            Flavor::Bitplan => Ok(usize::try_from(args::signed(obj, "hit_length")?).unwrap_or(0)),
            Flavor::Lmcache => args::size_t(obj, "hit_length"),
        }
    }
}

/// The flat layout's key count, `None` if it overflows.
fn flat_keys(num_chunks: usize, num_groups: usize, num_ranks: usize) -> Option<usize> {
    num_chunks.checked_mul(num_groups)?.checked_mul(num_ranks)
}

/// The ranked forms' arguments, converted.
struct Ranked<'py> {
    found: AnyBitmap<'py>,
    num_chunks: usize,
    num_ranks: usize,
    windows: Vec<i64>,
}

impl<'py> Ranked<'py> {
    fn new(
        counts: Counts,
        found: &Bound<'py, PyAny>,
        num_chunks: &Bound<'py, PyAny>,
        num_ranks: &Bound<'py, PyAny>,
        windows: &Bound<'py, PyAny>,
    ) -> PyResult<Ranked<'py>> {
        let ranked = Ranked {
            num_chunks: counts.chunks(num_chunks)?,
            num_ranks: counts.ranks(num_ranks)?,
            windows: args::windows(windows)?,
            found: AnyBitmap::borrow(found)?,
        };
        // The fold's result and temporaries have a bit per chunk, the
        // unfolded mask one per key (an overflowing count is the Rust
        // side's `SizeOverflow`).
        memory::ensure_bits(ranked.num_chunks)?;
        if let Some(keys) = flat_keys(ranked.num_chunks, ranked.windows.len(), ranked.num_ranks) {
            memory::ensure_bits(keys)?;
        }
        Ok(ranked)
    }

    fn fold(&self, py: Python<'py>) -> PyResult<Py<PyAny>> {
        let (found, windows): (&Bitmap, &[i64]) = (&self.found, &self.windows);
        let (num_chunks, num_ranks) = (self.num_chunks, self.num_ranks);
        let folded = detach_if_large(py, found.num_words(), || {
            let mut out = Bitmap::new(0);
            with_workspace(|ws| prefetch_policy::fold_into(found, num_chunks, num_ranks, windows, ws, &mut out))
                .map(|()| out)
        });
        self.found.flavor().wrap(py, folded.or_py_err()?)
    }

    fn fold_unfold(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let (found, windows): (&Bitmap, &[i64]) = (&self.found, &self.windows);
        let (num_chunks, num_ranks) = (self.num_chunks, self.num_ranks);
        let result = detach_if_large(py, found.num_words(), || {
            let mut mask = Bitmap::new(0);
            with_workspace(|ws| {
                prefetch_policy::fold_unfold_ranked_into(found, num_chunks, num_ranks, windows, ws, &mut mask)
            })
            .map(|hit| (hit, mask))
        });
        let (hit, mask) = result.or_py_err()?;
        (hit, self.found.flavor().wrap(py, mask)?).into_pyobject(py)
    }
}

fn unfold_in(
    module: Flavor,
    py: Python<'_>,
    hit_length: &Bound<'_, PyAny>,
    num_chunks: &Bound<'_, PyAny>,
    num_ranks: &Bound<'_, PyAny>,
    windows: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let counts = Counts(module);
    let (hit, num_chunks, num_ranks) = (counts.hit(hit_length)?, counts.chunks(num_chunks)?, counts.ranks(num_ranks)?);
    let windows = args::windows(windows)?;
    if let Some(keys) = flat_keys(num_chunks, windows.len(), num_ranks) {
        memory::ensure_bits(keys)?;
    }
    let mask = prefetch_policy::unfold(hit, num_chunks, num_ranks, &windows).or_py_err()?;
    module.wrap(py, mask)
}

fn fold_grouped_in(py: Python<'_>, rows: &Bound<'_, PyAny>, windows: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let windows = args::windows(windows)?;
    if let Ok(grid) = rows.cast::<LmGrid>() {
        // The rows in place, in the grid's buffer.
        let folded = grid.try_borrow()?.with(py, |grid| {
            detach_if_large(py, grid.as_words().len(), || {
                let mut out = Bitmap::new(0);
                with_workspace(|ws| grid.fold_grouped_into(&windows, ws, &mut out)).map(|()| out)
            })
        })?;
        return Flavor::Lmcache.wrap(py, folded.or_py_err()?);
    }
    let rows = AnyBitmap::borrow_all(rows)?;
    let refs = as_refs(&rows);
    let words = refs.iter().map(|row| row.num_words()).sum();
    let folded = detach_if_large(py, words, || {
        let mut out = Bitmap::new(0);
        with_workspace(|ws| prefetch_policy::fold_grouped_into(&refs, &windows, ws, &mut out)).map(|()| out)
    });
    flavor_of(&rows, Flavor::Bitplan).wrap(py, folded.or_py_err()?)
}

fn unfold_grouped_in<'py>(
    module: Flavor,
    py: Python<'py>,
    hit_length: &Bound<'py, PyAny>,
    num_chunks: &Bound<'py, PyAny>,
    windows: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let counts = Counts(module);
    let (hit, num_chunks) = (counts.hit(hit_length)?, counts.chunks(num_chunks)?);
    let windows = args::windows(windows)?;
    memory::ensure_cells(windows.len(), num_chunks)?;
    let rows = prefetch_policy::unfold_grouped(hit, num_chunks, &windows).or_py_err()?;
    module.wrap_list(py, rows)
}

fn fold_unfold_grouped_in<'py>(
    py: Python<'py>,
    rows: &Bound<'py, PyAny>,
    windows: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let windows = args::windows(windows)?;
    if let Ok(grid) = rows.cast::<LmGrid>() {
        // A `Bitmap2D` in, a `Bitmap2D` of the retained cells out: the rows
        // read in place, the retained ones written into one grid.
        let result = grid.try_borrow()?.with(py, |grid| {
            detach_if_large(py, grid.as_words().len(), || {
                let mut retain = Grid::empty();
                with_workspace(|ws| grid.fold_unfold_grouped_into(&windows, ws, &mut retain)).map(|hit| (hit, retain))
            })
        })?;
        let (hit, retain) = result.or_py_err()?;
        return (hit, LmGrid::from(retain)).into_pyobject(py);
    }
    let rows = AnyBitmap::borrow_all(rows)?;
    let refs = as_refs(&rows);
    let words = refs.iter().map(|row| row.num_words()).sum();
    let result = detach_if_large(py, words, || {
        let mut out = Vec::new();
        with_workspace(|ws| prefetch_policy::fold_unfold_grouped_into(&refs, &windows, ws, &mut out))
            .map(|hit| (hit, out))
    });
    let (hit, out) = result.or_py_err()?;
    (hit, flavor_of(&rows, Flavor::Bitplan).wrap_list(py, out)?).into_pyobject(py)
}

/// Generates one module's set of fold/unfold functions: `$module` decides
/// how counts convert and, for the unfolds, the class of the result.
macro_rules! hybrid_functions {
    ($vis:vis mod $name:ident: $module:expr) => {
        $vis mod $name {
            use pyo3::prelude::*;
            use pyo3::types::{PyList, PyTuple};

            use super::{Counts, Ranked};
            use crate::bitmaps::flavor::Flavor;

            const MODULE: Flavor = $module;

            /// Bit `j` set iff every group can serve a prefix of `j + 1` chunks.
            #[pyfunction]
            pub(crate) fn fold(
                py: Python<'_>,
                found: &Bound<'_, PyAny>,
                num_chunks: &Bound<'_, PyAny>,
                num_ranks: &Bound<'_, PyAny>,
                group_windows: &Bound<'_, PyAny>,
            ) -> PyResult<Py<PyAny>> {
                Ranked::new(Counts(MODULE), found, num_chunks, num_ranks, group_windows)?.fold(py)
            }

            /// For each group, every rank bit of the chunks it needs for a hit of `hit_length`.
            #[pyfunction]
            pub(crate) fn unfold(
                py: Python<'_>,
                hit_length: &Bound<'_, PyAny>,
                num_chunks: &Bound<'_, PyAny>,
                num_ranks: &Bound<'_, PyAny>,
                group_windows: &Bound<'_, PyAny>,
            ) -> PyResult<Py<PyAny>> {
                super::unfold_in(MODULE, py, hit_length, num_chunks, num_ranks, group_windows)
            }

            /// `fold` over rows, each under its own window.
            #[pyfunction]
            pub(crate) fn fold_grouped(
                py: Python<'_>,
                rows: &Bound<'_, PyAny>,
                windows: &Bound<'_, PyAny>,
            ) -> PyResult<Py<PyAny>> {
                super::fold_grouped_in(py, rows, windows)
            }

            /// `unfold` as one row per window.
            #[pyfunction]
            pub(crate) fn unfold_grouped<'py>(
                py: Python<'py>,
                hit_length: &Bound<'py, PyAny>,
                num_chunks: &Bound<'py, PyAny>,
                windows: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyList>> {
                super::unfold_grouped_in(MODULE, py, hit_length, num_chunks, windows)
            }

            /// `(hit, mask)`: the hit is the highest set bit of `fold` plus one.
            #[pyfunction]
            pub(crate) fn fold_unfold_ranked<'py>(
                py: Python<'py>,
                found: &Bound<'py, PyAny>,
                num_chunks: &Bound<'py, PyAny>,
                num_ranks: &Bound<'py, PyAny>,
                group_windows: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyTuple>> {
                Ranked::new(Counts(MODULE), found, num_chunks, num_ranks, group_windows)?.fold_unfold(py)
            }

            /// `fold_unfold_ranked` with one rank.
            #[pyfunction]
            pub(crate) fn fold_unfold<'py>(
                py: Python<'py>,
                found: &Bound<'py, PyAny>,
                num_chunks: &Bound<'py, PyAny>,
                group_windows: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyTuple>> {
                let one = 1_i32.into_pyobject(py)?.into_any();
                Ranked::new(Counts(MODULE), found, num_chunks, &one, group_windows)?.fold_unfold(py)
            }

            /// `(hit, rows)` over rows paired with windows.
            #[pyfunction]
            pub(crate) fn fold_unfold_grouped<'py>(
                py: Python<'py>,
                rows: &Bound<'py, PyAny>,
                windows: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyTuple>> {
                super::fold_unfold_grouped_in(py, rows, windows)
            }

            /// Adds this module's functions to `m`.
            pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
                m.add_function(wrap_pyfunction!(fold, m)?)?;
                m.add_function(wrap_pyfunction!(unfold, m)?)?;
                m.add_function(wrap_pyfunction!(fold_grouped, m)?)?;
                m.add_function(wrap_pyfunction!(unfold_grouped, m)?)?;
                m.add_function(wrap_pyfunction!(fold_unfold_ranked, m)?)?;
                m.add_function(wrap_pyfunction!(fold_unfold, m)?)?;
                m.add_function(wrap_pyfunction!(fold_unfold_grouped, m)?)?;
                Ok(())
            }
        }
    };
}

hybrid_functions!(pub(crate) mod pythonic: Flavor::Bitplan);
hybrid_functions!(pub(crate) mod lmcache: Flavor::Lmcache);

/// `(lo, hi)`: the chunks a group of window `window` needs for a prefix of
/// `prefix_len` (`(0, 0)` if `prefix_len <= 0`).
#[pyfunction]
pub(crate) fn unfold_range(prefix_len: &Bound<'_, PyAny>, window: &Bound<'_, PyAny>) -> PyResult<(usize, usize)> {
    Ok(prefetch_policy::unfold_range(args::signed(prefix_len, "prefix_len")?, args::signed(window, "window")?))
}

/// `bitmap.highest_set_bit()`: the largest set index, `-1` if none.
#[pyfunction]
pub(crate) fn highest_set_bit(bitmap: &Bound<'_, PyAny>) -> PyResult<i64> {
    Ok(crate::boundary::bits::highest_set_bit(&*AnyBitmap::borrow(bitmap)?))
}

/// The union of bitmaps of `num_keys` bits each (`ValueError` otherwise).
#[pyfunction]
pub(crate) fn merge_bitmaps(
    py: Python<'_>,
    bitmaps: &Bound<'_, PyAny>,
    num_keys: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let num_keys = args::count(num_keys, "num_keys")?;
    memory::ensure_bits(num_keys)?;
    let bitmaps = AnyBitmap::borrow_all(bitmaps)?;
    if let Some(bad) = bitmaps.iter().find(|b| b.len() != num_keys) {
        return Err(PyValueError::new_err(format!(
            "merge_bitmaps: a bitmap has {} bits, but num_keys is {num_keys}",
            bad.len()
        )));
    }
    let merged = prefetch_policy::merge_bitmaps(&as_refs(&bitmaps), num_keys);
    flavor_of(&bitmaps, Flavor::Bitplan).wrap(py, merged)
}

/// LMCache's `merge_bitmaps`: `Bitmap(num_keys)` ORed with each input in
/// turn, where `|` keeps the shorter size, so the result has the size of
/// the shortest of them.
#[pyfunction]
#[pyo3(name = "merge_bitmaps")]
pub(crate) fn lmcache_merge_bitmaps(
    py: Python<'_>,
    bitmaps: &Bound<'_, PyAny>,
    num_keys: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let num_keys = args::size_t(num_keys, "num_keys")?;
    let bitmaps = AnyBitmap::borrow_all(bitmaps)?;
    let len = bitmaps.iter().map(|b| b.len()).fold(num_keys, usize::min);
    memory::ensure_bits(len)?;
    // Only the inputs longer than the result are copied (and cut).
    let truncated: Vec<Cow<'_, Bitmap>> = bitmaps
        .iter()
        .map(|b| {
            if b.len() == len {
                return Cow::Borrowed(&**b);
            }
            let mut b = Bitmap::clone(b);
            b.truncate(len);
            Cow::Owned(b)
        })
        .collect();
    Flavor::Lmcache.wrap(py, prefetch_policy::merge_bitmaps(&truncated, len))
}

/// `Bitmap(num_keys, found.count_leading_ones())`, in `found`'s class:
/// `select_retained` under `TrimPolicy.PREFIX`.
#[pyfunction]
pub(crate) fn retained_prefix(
    py: Python<'_>,
    found: &Bound<'_, PyAny>,
    num_keys: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let found = AnyBitmap::borrow(found)?;
    let num_keys = match found.flavor() {
        Flavor::Bitplan => args::count(num_keys, "num_keys")?,
        Flavor::Lmcache => args::size_t(num_keys, "num_keys")?,
    };
    memory::ensure_bits(num_keys)?;
    let retained = prefetch_policy::select_retained(&found, num_keys, prefetch_policy::TrimPolicy::Prefix);
    found.flavor().wrap(py, retained)
}
