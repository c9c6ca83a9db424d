//! `bitplan.lmcache.tiers.ChunkTier`: the positional fast path over one
//! tier-state `Tier`. Keys come as a `RequestKeys` (chunk hashes x row ids),
//! a call may name the cells it is about with a `Bitmap2D` of the request's
//! shape, and every answer is a `Bitmap2D` success mask in the controller's
//! layout: one call, no per-key Python object. `failures=True` adds the
//! `(row, col, L1Error)` of each key that failed.
//!
//! One lock inside, so one object can be shared between threads; batches of
//! more than a few dozen keys run with the GIL released (the lock is taken
//! and let go inside the released section, and never held while waiting
//! for the GIL, so the two cannot deadlock).

use std::sync::{Mutex, MutexGuard, PoisonError};

use numpy::PyArray1;
use prefetch_policy::Grid;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList};
use tier_state::{Answer, Flags, GridBatch, Keys, Outcome, Tier, TierError};

use crate::boundary::bits::{detach, detach_if_large, type_name};
use crate::boundary::errors::{IntoPyErr, OrPyErr};
use crate::lmcache::grid::LmGrid;
use crate::tiers::common::{PyManualClock, Tags, build_tier, l1_errors};
use crate::tiers::request_keys::PyRequestKeys;

/// A key costs about what 64 words of a bitmap kernel do (a probe of the
/// key table, ~20 ns): with `detach_if_large`'s threshold, batches of 64
/// keys and more release the GIL.
const WORDS_PER_KEY: usize = 64;

/// One tier call, its arguments resolved.
#[derive(Debug)]
enum Op {
    ReserveRead(i64),
    UnsafeRead,
    FinishRead(i64),
    ReserveWrite(Temporary, u32),
    FinishWrite(u32),
    FinishPrefetch(u32),
    FinishWriteAndReserveRead(i64, u32),
    FinishWriteAndDelete(u32),
    Delete(bool),
    Touch,
}

/// `reserve_write`'s temporary flags: one for all, or a grid of the
/// request's shape.
#[derive(Debug)]
enum Temporary {
    All(bool),
    Cells(Grid),
}

fn apply<K: Keys + ?Sized>(
    tier: &mut Tier,
    op: &Op,
    flags: Flags<'_>,
    keys: &K,
    out: &mut K::Answer,
) -> Result<(), TierError> {
    match *op {
        Op::ReserveRead(n) => tier.reserve_read(keys, n, out),
        Op::UnsafeRead => tier.unsafe_read(keys, out),
        Op::FinishRead(n) => tier.finish_read(keys, n, out),
        Op::ReserveWrite(_, tag) => tier.reserve_write(keys, flags, tag, out),
        Op::FinishWrite(tag) => tier.finish_write(keys, tag, out),
        Op::FinishPrefetch(tag) => tier.finish_prefetch(keys, tag, out),
        Op::FinishWriteAndReserveRead(n, tag) => tier.finish_write_and_reserve_read(keys, n, tag, out),
        Op::FinishWriteAndDelete(tag) => tier.finish_write_and_delete(keys, tag, out),
        Op::Delete(force) => tier.delete(keys, force, out),
        Op::Touch => tier.touch(keys, out),
    }
}

/// The tier and the buffers its calls reuse.
#[derive(Debug)]
struct Inner {
    tier: Tier,
    /// For calls that hand back their failures.
    grid_answer: GridBatch,
    /// For the others: the success mask only (listing a lookup's misses
    /// would cost more than its words).
    mask_answer: GridBatch,
    cells: Vec<(u32, u32)>,
}

/// What a call hands back to Python: the success mask, and the failures
/// as (row, col, outcome) when asked for.
struct Reply {
    ok: Grid,
    failed: Vec<(u32, u32, Outcome)>,
}

impl Inner {
    /// Runs `op` over every key of the request, or over the cells set in
    /// `cells` (checked to have the request's shape by the caller).
    fn run(
        &mut self,
        keys: &PyRequestKeys,
        cells: Option<&Grid>,
        op: &Op,
        want_failed: bool,
    ) -> Result<Reply, TierError> {
        let all = keys.grid();
        let request = match cells {
            Some(cells) => all.with_cells(cells)?,
            None => all,
        };
        let flags = match op {
            Op::ReserveWrite(Temporary::Cells(grid), _) => Flags::Cells(grid),
            Op::ReserveWrite(Temporary::All(flag), _) => Flags::All(*flag),
            _ => Flags::All(false),
        };
        if !want_failed {
            apply(&mut self.tier, op, flags, &request, &mut self.mask_answer)?;
            return Ok(Reply { ok: self.mask_answer.ok().clone(), failed: Vec::new() });
        }
        apply(&mut self.tier, op, flags, &request, &mut self.grid_answer)?;
        let failed = self.grid_answer.failed();
        let failed = match cells {
            _ if failed.is_empty() => Vec::new(),
            // Positions are row-major cells…
            None => {
                let cols = keys.dims().1.max(1) as u32;
                failed.iter().map(|&(at, outcome)| (at / cols, at % cols, outcome)).collect()
            }
            // …or, narrowed to some cells, the i-th set cell.
            Some(cells) => {
                self.cells.clear();
                self.cells.extend(cells.cells().map(|(r, c)| (r as u32, c as u32)));
                failed
                    .iter()
                    .map(|&(at, outcome)| {
                        let (r, c) = self.cells[at as usize];
                        (r, c, outcome)
                    })
                    .collect()
            }
        };
        Ok(Reply { ok: self.grid_answer.ok().clone(), failed })
    }
}

/// Keys as numpy arrays: chunk hashes and row ids.
type KeyArrays<'py> = (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u32>>);

/// The positional fast path over one tier (see the module docs).
#[pyclass(name = "ChunkTier", module = "bitplan.lmcache.tiers", frozen)]
#[derive(Debug)]
pub(crate) struct PyChunkTier {
    inner: Mutex<Inner>,
    tags: Mutex<Tags>,
    /// Rows must be below this (`None`: any row).
    rows: Option<u32>,
}

impl PyChunkTier {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn tag(&self, tag: &Bound<'_, PyAny>) -> PyResult<u32> {
        self.tags.lock().unwrap_or_else(PoisonError::into_inner).id(tag)
    }

    /// Checks the arguments, runs `op` with the GIL released when the batch
    /// is large, and answers with the mask (and the failures if asked).
    fn call<'py>(
        &self,
        py: Python<'py>,
        what: &str,
        keys: &PyRequestKeys,
        cells: Option<&Bound<'py, PyAny>>,
        op: Op,
        failures: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let shape = keys.dims();
        if let Some(bound) = self.rows
            && let Some((r, &row)) = keys.rows.iter().enumerate().find(|&(_, &row)| row >= bound)
        {
            return Err(PyValueError::new_err(format!(
                "{what}: row id {row} (row {r} of the request) is out of range: the tier has {bound} rows"
            )));
        }
        let cells = match cells {
            Some(cells) => Some(grid_arg(py, what, "cells", cells, shape)?),
            None => None,
        };
        if let Op::ReserveWrite(Temporary::Cells(grid), _) = &op
            && grid.shape() != shape
        {
            return Err(shape_error(what, "is_temporary", shape, grid.shape()));
        }
        let work = cells.as_ref().map_or(shape.0 * shape.1, Grid::popcount);
        let reply = detach_if_large(py, work.saturating_mul(WORDS_PER_KEY), || {
            self.lock().run(keys, cells.as_ref(), &op, failures)
        })
        .or_py_err()?;
        let mask = Bound::new(py, LmGrid::from(reply.ok))?.into_any();
        if !failures {
            return Ok(mask);
        }
        let codes = l1_errors(py)?;
        let failed = PyList::empty(py);
        for (r, c, outcome) in reply.failed {
            failed.append((r, c, codes[outcome as usize].bind(py)))?;
        }
        Ok((mask, failed).into_pyobject(py)?.into_any())
    }
}

fn shape_error(what: &str, name: &str, want: (usize, usize), got: (usize, usize)) -> PyErr {
    PyValueError::new_err(format!("{what}: the keys are {} x {} but {name} is {} x {}", want.0, want.1, got.0, got.1))
}

/// A `Bitmap2D` argument of the request's shape, copied (so the work can
/// run without the GIL).
fn grid_arg(py: Python<'_>, what: &str, name: &str, obj: &Bound<'_, PyAny>, shape: (usize, usize)) -> PyResult<Grid> {
    let grid = obj
        .cast::<LmGrid>()
        .map_err(|_| PyTypeError::new_err(format!("{what}: {name} must be a Bitmap2D, not {}", type_name(obj))))?;
    let grid = grid.borrow().with(py, Grid::clone)?;
    if grid.shape() != shape {
        return Err(shape_error(what, name, shape, grid.shape()));
    }
    Ok(grid)
}

/// A capacity argument: a `MemoryError` for one no tier can have (also
/// past 2**64), a `ValueError` for a negative one.
pub(crate) fn capacity_arg(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    if !obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!("capacity must be an int, not {}", type_name(obj))));
    }
    if obj.lt(0)? {
        return Err(PyValueError::new_err(format!("capacity must be >= 0, got {obj}")));
    }
    obj.extract::<usize>().map_err(|_| {
        TierError::ImpossibleCapacity { capacity: usize::MAX, max: tier_state::MAX_CAPACITY, reason: "past 2**64" }
            .into_py_err()
    })
}

#[pymethods]
impl PyChunkTier {
    /// `ChunkTier(capacity, *, read_ttl_seconds=300, write_ttl_seconds=600,
    /// rows=None, clock=None, eviction_policy="LRU")`: a tier of `capacity`
    /// objects (resident and staged), LMCache's lock lifetimes, row ids
    /// below `rows` if given, on `clock` (a `ManualClock`) or the system's
    /// monotonic clock, evicting with the policy LMCache's factory names.
    #[new]
    #[pyo3(signature = (
        capacity, *, read_ttl_seconds = 300.0, write_ttl_seconds = 600.0, rows = None, clock = None,
        eviction_policy = "LRU",
    ))]
    fn new(
        capacity: &Bound<'_, PyAny>,
        read_ttl_seconds: f64,
        write_ttl_seconds: f64,
        rows: Option<u32>,
        clock: Option<PyRef<'_, PyManualClock>>,
        eviction_policy: &str,
    ) -> PyResult<PyChunkTier> {
        let capacity = capacity_arg(capacity)?;
        let tier = build_tier(capacity, read_ttl_seconds, write_ttl_seconds, rows, clock.as_deref(), eviction_policy)?;
        Ok(PyChunkTier {
            inner: Mutex::new(Inner {
                tier,
                grid_answer: GridBatch::default(),
                mask_answer: GridBatch::mask_only(),
                cells: Vec::new(),
            }),
            tags: Mutex::new(Tags::default()),
            rows,
        })
    }

    /// Read locks (`read_locks` clamped to 1..128) on the resident keys;
    /// the mask of those that were.
    #[pyo3(signature = (keys, read_locks = 1, *, cells = None, failures = false))]
    fn reserve_read<'py>(
        &self,
        py: Python<'py>,
        keys: PyRef<'py, PyRequestKeys>,
        read_locks: i64,
        cells: Option<&Bound<'py, PyAny>>,
        failures: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.call(py, "reserve_read", &keys, cells, Op::ReserveRead(read_locks), failures)
    }

    /// The keys that are read-locked now (no lock taken).
    #[pyo3(signature = (keys, *, cells = None, failures = false))]
    fn unsafe_read<'py>(
        &self,
        py: Python<'py>,
        keys: PyRef<'py, PyRequestKeys>,
        cells: Option<&Bound<'py, PyAny>>,
        failures: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.call(py, "unsafe_read", &keys, cells, Op::UnsafeRead, failures)
    }

    /// Releases `read_locks` read locks; a temporary key whose last lock
    /// goes is deleted.
    #[pyo3(signature = (keys, read_locks = 1, *, cells = None, failures = false))]
    fn finish_read<'py>(
        &self,
        py: Python<'py>,
        keys: PyRef<'py, PyRequestKeys>,
        read_locks: i64,
        cells: Option<&Bound<'py, PyAny>>,
        failures: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.call(py, "finish_read", &keys, cells, Op::FinishRead(read_locks), failures)
    }

    /// Stages the keys for writer `tag`; `is_temporary` is one bool for all
    /// or a `Bitmap2D` of the request's shape.
    #[pyo3(signature = (keys, is_temporary, tag = None, *, cells = None, failures = false))]
    fn reserve_write<'py>(
        &self,
        py: Python<'py>,
        keys: PyRef<'py, PyRequestKeys>,
        is_temporary: &Bound<'py, PyAny>,
        tag: Option<&Bound<'py, PyAny>>,
        cells: Option<&Bound<'py, PyAny>>,
        failures: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let temporary = if let Ok(flag) = is_temporary.cast::<PyBool>() {
            Temporary::All(flag.is_true())
        } else if is_temporary.cast::<LmGrid>().is_ok() {
            Temporary::Cells(is_temporary.cast::<LmGrid>()?.borrow().with(py, Grid::clone)?)
        } else {
            return Err(PyTypeError::new_err(format!(
                "reserve_write: is_temporary must be a bool or a Bitmap2D, not {}",
                type_name(is_temporary)
            )));
        };
        let tag = self.tag_or_default(py, tag)?;
        self.call(py, "reserve_write", &keys, cells, Op::ReserveWrite(temporary, tag), failures)
    }

    /// Admits `tag`'s staging objects as resident (unlocked).
    #[pyo3(signature = (keys, tag = None, *, cells = None, failures = false))]
    fn finish_write<'py>(
        &self,
        py: Python<'py>,
        keys: PyRef<'py, PyRequestKeys>,
        tag: Option<&Bound<'py, PyAny>>,
        cells: Option<&Bound<'py, PyAny>>,
        failures: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tag = self.tag_or_default(py, tag)?;
        self.call(py, "finish_write", &keys, cells, Op::FinishWrite(tag), failures)
    }

    /// `finish_write` for loaded prefetches.
    #[pyo3(signature = (keys, tag = None, *, cells = None, failures = false))]
    fn finish_prefetch<'py>(
        &self,
        py: Python<'py>,
        keys: PyRef<'py, PyRequestKeys>,
        tag: Option<&Bound<'py, PyAny>>,
        cells: Option<&Bound<'py, PyAny>>,
        failures: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tag = self.tag_or_default(py, tag)?;
        self.call(py, "finish_prefetch", &keys, cells, Op::FinishPrefetch(tag), failures)
    }

    /// Admits `tag`'s staging objects and read-locks them in one step.
    #[pyo3(signature = (keys, read_locks = 1, tag = None, *, cells = None, failures = false))]
    fn finish_write_and_reserve_read<'py>(
        &self,
        py: Python<'py>,
        keys: PyRef<'py, PyRequestKeys>,
        read_locks: i64,
        tag: Option<&Bound<'py, PyAny>>,
        cells: Option<&Bound<'py, PyAny>>,
        failures: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tag = self.tag_or_default(py, tag)?;
        self.call(
            py,
            "finish_write_and_reserve_read",
            &keys,
            cells,
            Op::FinishWriteAndReserveRead(read_locks, tag),
            failures,
        )
    }

    /// Discards `tag`'s staging objects.
    #[pyo3(signature = (keys, tag = None, *, cells = None, failures = false))]
    fn finish_write_and_delete<'py>(
        &self,
        py: Python<'py>,
        keys: PyRef<'py, PyRequestKeys>,
        tag: Option<&Bound<'py, PyAny>>,
        cells: Option<&Bound<'py, PyAny>>,
        failures: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tag = self.tag_or_default(py, tag)?;
        self.call(py, "finish_write_and_delete", &keys, cells, Op::FinishWriteAndDelete(tag), failures)
    }

    /// Deletes the keys (read-locked or live-staged ones only with `force`).
    #[pyo3(signature = (keys, force = false, *, cells = None, failures = false))]
    fn delete<'py>(
        &self,
        py: Python<'py>,
        keys: PyRef<'py, PyRequestKeys>,
        force: bool,
        cells: Option<&Bound<'py, PyAny>>,
        failures: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.call(py, "delete", &keys, cells, Op::Delete(force), failures)
    }

    /// Marks the keys used (LMCache's `touch_keys`): the eviction policy's
    /// recency. The mask: the keys the tier has.
    #[pyo3(signature = (keys, *, cells = None))]
    fn touch<'py>(
        &self,
        py: Python<'py>,
        keys: PyRef<'py, PyRequestKeys>,
        cells: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.call(py, "touch", &keys, cells, Op::Touch, false)
    }

    /// LMCache's `clear`: every unlocked resident object and expired
    /// reservation (all of them with `force`).
    #[pyo3(signature = (force = false))]
    fn clear(&self, py: Python<'_>, force: bool) {
        py.detach(|| {
            self.lock().tier.clear(force);
        });
    }

    /// One step of LMCache's L1 eviction controller: the policy's victims
    /// at `ratio` (LMCache's rounding) among the evictable keys (resident
    /// and not read-locked, or staged under an expired lock), deleted.
    /// Returns the deleted keys as `(hashes, rows)`, numpy `uint64` and
    /// `uint32` arrays in the policy's order. `ValueError` for a ratio
    /// outside [0, 1].
    fn evict<'py>(&self, py: Python<'py>, ratio: f64) -> PyResult<KeyArrays<'py>> {
        if !(0.0..=1.0).contains(&ratio) {
            return Err(PyValueError::new_err(format!("ratio must be in [0, 1], got {ratio}")));
        }
        let mut evicted = Vec::new();
        detach(py, || self.lock().tier.evict(ratio, &mut evicted));
        let hashes: Vec<u64> = evicted.iter().map(|key| key.hash).collect();
        let rows: Vec<u32> = evicted.iter().map(|key| key.row).collect();
        Ok((PyArray1::from_vec(py, hashes), PyArray1::from_vec(py, rows)))
    }

    /// The eviction policy's name, as LMCache's factory spells it.
    #[getter]
    fn eviction_policy(&self) -> &'static str {
        self.lock().tier.policy().name()
    }

    /// Objects held, resident and staged (what the capacity counts).
    fn num_objects(&self) -> usize {
        self.lock().tier.num_objects()
    }

    /// Resident objects.
    fn num_resident(&self) -> usize {
        self.lock().tier.num_resident()
    }

    /// Staging objects, all tags.
    fn num_staging(&self) -> usize {
        self.lock().tier.num_staging()
    }

    /// Keys held (resident or staged).
    fn __len__(&self) -> usize {
        self.lock().tier.num_keys()
    }

    /// Heap bytes of the key table and the state.
    fn memory_bytes(&self) -> usize {
        self.lock().tier.memory_bytes()
    }

    /// The capacity, in objects.
    #[getter]
    fn capacity(&self) -> usize {
        self.lock().tier.config().capacity
    }

    fn __repr__(&self) -> String {
        let inner = self.lock();
        format!("ChunkTier({} of {} objects)", inner.tier.num_objects(), inner.tier.config().capacity)
    }
}

impl PyChunkTier {
    /// LMCache's default tag is `""`.
    fn tag_or_default(&self, py: Python<'_>, tag: Option<&Bound<'_, PyAny>>) -> PyResult<u32> {
        match tag {
            Some(tag) => self.tag(tag),
            None => self.tag(pyo3::types::PyString::new(py, "").as_any()),
        }
    }
}
