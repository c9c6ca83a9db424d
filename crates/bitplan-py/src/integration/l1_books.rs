//! `bitplan._native.lmcache.L1Books`: the books of one LMCache 0.5.6
//! `L1Manager` (`bitplan.lmcache.integration.l1_manager.BitplanL1Manager`
//! keeps its memory manager, listeners and event bus, and delegates every
//! per-key step here).
//!
//! Two kinds of calls. LMCache's, over a list of keys, answering LMCache's
//! dict (key → `(L1Error, object)` or `L1Error`) and the lists the manager
//! then needs: the keys its listeners hear about (only when asked: a
//! listener that does nothing builds no list), the memory objects to free,
//! those that entered or left staging (whose sizes LMCache counts). And
//! the prefetch controller's, over the cells of a request whose keys
//! [`L1Books::request`] resolved once ([`PinnedKeys`]): the answer is a
//! grid of the cells that succeeded, and no dict is made.
//!
//! One lock inside, taken with the GIL released while waiting; objects the
//! books let go of are dropped after it is released. The manager holds
//! LMCache's own lock around each call as well, so that listeners hear
//! about calls in the order they happened.

use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyDict, PyList, PyTuple};
use tier_state::{MAX_CAPACITY, Outcome, TierKey};

use crate::boundary::args::key_list;
use crate::integration::answers::{codes_dict, failed_pairs, keys_at, objects, objects_dict, success_grid, successes};
use crate::integration::books::{Books, Garbage, Source, UNKNOWN};
use crate::integration::ops::{self, Finish};
use crate::integration::request::{PinnedKeys, cell_positions, row_cells};
use crate::lmcache::grid::LmGrid;
use crate::tiers::common::{build_tier, checked_l1_errors};

/// The books (see the module docs).
#[pyclass(name = "L1Books", module = "bitplan.lmcache.integration", frozen)]
#[derive(Debug)]
pub(crate) struct PyL1Books {
    books: Mutex<Books>,
}

impl PyL1Books {
    fn lock(&self, py: Python<'_>) -> MutexGuard<'_, Books> {
        self.books.lock_py_attached(py).unwrap_or_else(PoisonError::into_inner)
    }

    /// `work` on the books under their lock, with a bin for the objects
    /// they let go of, emptied once the lock is released: dropping a
    /// Python object can run its `__del__`, which may call these books.
    fn with_books<R>(&self, py: Python<'_>, work: impl FnOnce(&mut Books, &mut Garbage) -> PyResult<R>) -> PyResult<R> {
        let mut garbage = Garbage::new();
        let answer = work(&mut self.lock(py), &mut garbage);
        drop(garbage);
        answer
    }
}

#[pymethods]
impl PyL1Books {
    /// `L1Books(errors, read_ttl_seconds, write_ttl_seconds)`: empty books;
    /// `errors` are LMCache's seven `L1Error` members, SUCCESS first.
    #[new]
    fn new(
        py: Python<'_>,
        errors: &Bound<'_, PyTuple>,
        read_ttl_seconds: f64,
        write_ttl_seconds: f64,
    ) -> PyResult<PyL1Books> {
        let errors = checked_l1_errors(errors)?;
        // The memory manager decides what fits: the tier never refuses for
        // capacity. No policy: LMCache's eviction controller has its own,
        // which hears the events through the manager's listeners.
        let tier = build_tier(MAX_CAPACITY, read_ttl_seconds, write_ttl_seconds, None, None, "noop")?;
        Ok(PyL1Books { books: Mutex::new(Books::new(py, tier, errors)) })
    }

    // -- LMCache's calls ------------------------------------------------

    /// `reserve_read`: `(dict, successful keys or None)`.
    fn reserve_read<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        total: i64,
        want: bool,
    ) -> PyResult<(Bound<'py, PyDict>, Option<Bound<'py, PyList>>)> {
        let keys = key_list(keys)?;
        let source = Source::List(&keys);
        let mut books = self.lock(py);
        let read = ops::read(&mut books, py, &source, Some(total))?;
        let dict = objects_dict(&books, py, &source, &read.outcomes, &read.answers)?;
        let successful = if want { Some(keys_at(py, &source, &successes(&read.outcomes))?) } else { None };
        Ok((dict, successful))
    }

    /// `unsafe_read`: the dict.
    fn unsafe_read<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let keys = key_list(keys)?;
        let source = Source::List(&keys);
        let mut books = self.lock(py);
        let read = ops::read(&mut books, py, &source, None)?;
        objects_dict(&books, py, &source, &read.outcomes, &read.answers)
    }

    /// `finish_read`: `(dict, successful keys or None, freed keys, freed
    /// objects, [(key, error)] of the failed)`.
    #[allow(clippy::type_complexity)]
    fn finish_read<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        total: i64,
        want: bool,
    ) -> PyResult<(
        Bound<'py, PyDict>,
        Option<Bound<'py, PyList>>,
        Bound<'py, PyList>,
        Bound<'py, PyList>,
        Bound<'py, PyList>,
    )> {
        let keys = key_list(keys)?;
        let source = Source::List(&keys);
        self.with_books(py, |books, garbage| {
            let (outcomes, freed) = ops::finish_read(books, py, &source, total, garbage)?;
            let mut staging = freed.staging;
            garbage.append(&mut staging);
            Ok((
                codes_dict(books, py, &source, &outcomes)?,
                if want { Some(keys_at(py, &source, &successes(&outcomes))?) } else { None },
                keys_at(py, &source, &freed.positions)?,
                objects(py, freed.objects)?,
                failed_pairs(books, py, &source, &outcomes)?,
            ))
        })
    }

    /// How many of `keys` need a new object from `reserve_write` for `tag`.
    fn count_new(&self, py: Python<'_>, keys: &Bound<'_, PyAny>, tag: &Bound<'_, PyAny>) -> PyResult<usize> {
        let keys = key_list(keys)?;
        let mut books = self.lock(py);
        let tag = books.tag_id(py, tag, false)?;
        books.prepare(&Source::List(&keys))?;
        Ok(books.count_new(tag))
    }

    /// `reserve_write` after the allocation (`allocated`: the objects, or
    /// None when the memory manager could not give them):
    /// `(dict, reported keys or None, staged objects, unused objects)`.
    #[allow(clippy::type_complexity)]
    fn reserve_write<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        is_temporary: &Bound<'py, PyAny>,
        tag: &Bound<'py, PyAny>,
        allocated: Option<Vec<Bound<'py, PyAny>>>,
        want: bool,
    ) -> PyResult<(Bound<'py, PyDict>, Option<Bound<'py, PyList>>, Bound<'py, PyList>, Bound<'py, PyList>)> {
        let keys = key_list(keys)?;
        let flags: Vec<bool> =
            is_temporary.try_iter()?.map(|flag| flag.and_then(|f| f.is_truthy())).collect::<PyResult<_>>()?;
        if flags.len() != keys.len() {
            return Err(PyValueError::new_err(format!(
                "L1Manager.reserve_write: {} keys but {} is_temporary flags",
                keys.len(),
                flags.len()
            )));
        }
        let source = Source::List(&keys);
        self.with_books(py, |books, garbage| {
            let tag = books.tag_id(py, tag, true)?;
            let done = ops::reserve_write(books, py, &source, &flags, tag, allocated, garbage)?;
            Ok((
                objects_dict(books, py, &source, &done.outcomes, &done.answers)?,
                if want { Some(keys_at(py, &source, &done.reported)?) } else { None },
                objects(py, done.staged)?,
                objects(py, done.unused)?,
            ))
        })
    }

    /// `finish_write`: `(dict, notified keys or None, notified objects,
    /// admitted objects (left staging), discarded objects, expired keys)`.
    #[allow(clippy::type_complexity)]
    fn finish_write<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        tag: &Bound<'py, PyAny>,
        want: bool,
    ) -> PyResult<(
        Bound<'py, PyDict>,
        Option<Bound<'py, PyList>>,
        Bound<'py, PyList>,
        Bound<'py, PyList>,
        Bound<'py, PyList>,
        Bound<'py, PyList>,
    )> {
        let keys = key_list(keys)?;
        let source = Source::List(&keys);
        self.with_books(py, |books, garbage| {
            let tag = books.tag_id(py, tag, false)?;
            let done = ops::finish(books, py, &source, tag, Finish::Write, garbage)?;
            // LMCache notifies the admitted keys that are not temporary.
            let (notified, notified_objects): (Vec<usize>, Vec<Py<PyAny>>) = done
                .admitted
                .iter()
                .zip(&done.admitted_objects)
                .zip(&done.admitted_temporary)
                .filter(|(_, temporary)| !**temporary)
                .map(|((&i, object), _)| (i, object.clone_ref(py)))
                .unzip();
            Ok((
                codes_dict(books, py, &source, &done.outcomes)?,
                if want { Some(keys_at(py, &source, &notified)?) } else { None },
                objects(py, notified_objects)?,
                objects(py, done.admitted_objects)?,
                objects(py, done.discarded)?,
                keys_at(py, &source, &done.expired)?,
            ))
        })
    }

    /// `finish_write_and_reserve_read`: `(dict, admitted keys or None, their
    /// objects, keys resident already, admitted objects (left staging),
    /// discarded objects, expired keys)`.
    #[allow(clippy::type_complexity)]
    fn finish_write_and_reserve_read<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        total: i64,
        tag: &Bound<'py, PyAny>,
        want: bool,
    ) -> PyResult<(
        Bound<'py, PyDict>,
        Option<Bound<'py, PyList>>,
        Bound<'py, PyList>,
        Bound<'py, PyList>,
        Bound<'py, PyList>,
        Bound<'py, PyList>,
        Bound<'py, PyList>,
    )> {
        let keys = key_list(keys)?;
        let source = Source::List(&keys);
        self.with_books(py, |books, garbage| {
            let tag = books.tag_id(py, tag, false)?;
            let done = ops::finish(books, py, &source, tag, Finish::WriteAndRead(total), garbage)?;
            let slots_now: Vec<Option<u32>> = books.keys.iter().map(|&key| books.tier.slot_of(key)).collect();
            let answers: Vec<Option<Bound<'py, PyAny>>> = done
                .outcomes
                .iter()
                .enumerate()
                .map(
                    |(i, o)| {
                        if o.is_success() { slots_now[i].and_then(|s| books.resident_answer(py, s)) } else { None }
                    },
                )
                .collect();
            let admitted_copy: Vec<Py<PyAny>> = done.admitted_objects.iter().map(|o| o.clone_ref(py)).collect();
            Ok((
                objects_dict(books, py, &source, &done.outcomes, &answers)?,
                if want { Some(keys_at(py, &source, &done.admitted)?) } else { None },
                objects(py, admitted_copy)?,
                keys_at(py, &source, &done.resident)?,
                objects(py, done.admitted_objects)?,
                objects(py, done.discarded)?,
                keys_at(py, &source, &done.expired)?,
            ))
        })
    }

    /// `delete`: `(dict, deleted keys, their objects, keys that had only
    /// expired reservations, staging objects reclaimed)`.
    #[allow(clippy::type_complexity)]
    fn delete<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        force: bool,
    ) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyList>, Bound<'py, PyList>, Bound<'py, PyList>, Bound<'py, PyList>)>
    {
        let keys = key_list(keys)?;
        let source = Source::List(&keys);
        self.with_books(py, |books, garbage| {
            let (outcomes, freed) = ops::delete(books, py, &source, force, garbage)?;
            Ok((
                codes_dict(books, py, &source, &outcomes)?,
                keys_at(py, &source, &freed.positions)?,
                objects(py, freed.objects)?,
                keys_at(py, &source, &freed.gone)?,
                objects(py, freed.staging)?,
            ))
        })
    }

    /// `finish_write_and_delete`: `(dict, keys left with nothing, discarded
    /// objects, expired keys)`.
    #[allow(clippy::type_complexity)]
    fn finish_write_and_delete<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        tag: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyList>, Bound<'py, PyList>, Bound<'py, PyList>)> {
        let keys = key_list(keys)?;
        let source = Source::List(&keys);
        self.with_books(py, |books, garbage| {
            let tag = books.tag_id(py, tag, false)?;
            let done = ops::finish(books, py, &source, tag, Finish::Delete, garbage)?;
            Ok((
                codes_dict(books, py, &source, &done.outcomes)?,
                keys_at(py, &source, &done.gone)?,
                objects(py, done.discarded)?,
                keys_at(py, &source, &done.expired)?,
            ))
        })
    }

    /// `clear`: `(resident keys cleared, their objects, keys that had only
    /// staging objects, staging objects freed, read-locked objects kept,
    /// staging objects kept)`.
    #[allow(clippy::type_complexity)]
    fn clear<'py>(
        &self,
        py: Python<'py>,
        force: bool,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>, Bound<'py, PyList>, Bound<'py, PyList>, usize, usize)> {
        let cleared = self.with_books(py, |books, garbage| ops::clear(books, py, force, garbage))?;
        Ok((
            PyList::new(py, cleared.keys)?,
            PyList::new(py, cleared.objects)?,
            PyList::new(py, cleared.gone)?,
            PyList::new(py, cleared.staging)?,
            cleared.locked_remaining,
            cleared.staging_remaining,
        ))
    }

    /// `is_key_evictable`.
    fn is_key_evictable(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        ops::is_key_evictable(&mut self.lock(py), key)
    }

    /// `report_status`'s counts: `resident`, `read_locked`, `temporary`,
    /// `staging`, `write_locked`.
    fn counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (resident, read_locked, temporary, staging, write_locked) = self.lock(py).counts();
        let out = PyDict::new(py);
        out.set_item("resident", resident)?;
        out.set_item("read_locked", read_locked)?;
        out.set_item("temporary", temporary)?;
        out.set_item("staging", staging)?;
        out.set_item("write_locked", write_locked)?;
        Ok(out)
    }

    /// The resident object of `key`, its read-lock count now and whether it
    /// is temporary; None without one.
    fn object_state<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Option<(Bound<'py, PyAny>, u32, bool)>> {
        let mut books = self.lock(py);
        let Some(id) = books.ids.lookup(key)? else { return Ok(None) };
        let key = TierKey::new(u64::from(id), 0);
        if !books.tier.is_resident(key) {
            return Ok(None);
        }
        let Some(slot) = books.tier.slot_of(key) else { return Ok(None) };
        let Some(answer) = books.resident_answer(py, slot) else { return Ok(None) };
        Ok(Some((answer.get_item(1)?, books.tier.read_count(key), books.tier.is_temporary(key))))
    }

    /// Every object held, and the books emptied (`close`).
    fn take_all<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let taken = self.with_books(py, |books, garbage| ops::take_all(books, py, garbage))?;
        PyList::new(py, taken)
    }

    /// Keys held (resident or staged, or pinned by a request).
    fn __len__(&self, py: Python<'_>) -> usize {
        self.lock(py).ids.len()
    }

    /// How many writer tags some staging object carries (the tests check
    /// that a finished request's tag goes back).
    fn _tags_in_use(&self, py: Python<'_>) -> usize {
        self.lock(py).tags.in_use()
    }

    // -- the prefetch controller's calls ----------------------------------

    /// A request's keys (`flat_keys`, row-major over `num_rows` rows),
    /// resolved once and held by these books until [`release`].
    fn request(&self, py: Python<'_>, flat_keys: &Bound<'_, PyList>, num_rows: usize) -> PyResult<PinnedKeys> {
        let len = flat_keys.len();
        if num_rows == 0 || len % num_rows != 0 {
            return Err(PyValueError::new_err(format!("{len} keys are not {num_rows} rows of equal width")));
        }
        let ids = self.with_books(py, |books, garbage| books.pin(flat_keys, garbage))?;
        Ok(PinnedKeys::new(flat_keys.clone().unbind(), ids, (num_rows, len / num_rows)))
    }

    /// Lets a request's keys go (a second call does nothing).
    fn release(&self, py: Python<'_>, request: &PinnedKeys) {
        let Some(ids) = request.take_ids() else { return };
        let mut garbage = Garbage::new();
        self.lock(py).unpin(&ids, &mut garbage);
        drop(garbage);
    }

    /// `reserve_read` of the request's keys (of `cells` only, if given):
    /// `(grid of the keys locked, successful keys or None)`.
    #[pyo3(signature = (request, total, cells, want))]
    fn reserve_read_cells<'py>(
        &self,
        py: Python<'py>,
        request: &PinnedKeys,
        total: i64,
        cells: Option<&Bound<'py, LmGrid>>,
        want: bool,
    ) -> PyResult<(Py<LmGrid>, Option<Bound<'py, PyList>>)> {
        let positions = cell_positions(py, request, cells)?;
        let ids = request.ids()?;
        let flat = request.flat(py);
        let source = Source::Cells { flat: &flat, ids: &ids, positions: &positions };
        let mut books = self.lock(py);
        let read = ops::read(&mut books, py, &source, Some(total))?;
        let grid = success_grid(py, request.shape(), &positions, &read.outcomes)?;
        let successful = if want { Some(keys_at(py, &source, &successes(&read.outcomes))?) } else { None };
        Ok((grid, successful))
    }

    /// `finish_read` of the keys of `cells`: None without one, else
    /// `(successful keys or None, freed keys, freed objects, [(key, error)]
    /// of the failed)`.
    #[allow(clippy::type_complexity)]
    fn finish_read_cells<'py>(
        &self,
        py: Python<'py>,
        request: &PinnedKeys,
        total: i64,
        cells: &Bound<'py, LmGrid>,
        want: bool,
    ) -> PyResult<Option<(Option<Bound<'py, PyList>>, Bound<'py, PyList>, Bound<'py, PyList>, Bound<'py, PyList>)>>
    {
        let positions = cell_positions(py, request, Some(cells))?;
        if positions.is_empty() {
            return Ok(None);
        }
        let ids = request.ids()?;
        let flat = request.flat(py);
        let source = Source::Cells { flat: &flat, ids: &ids, positions: &positions };
        let answer = self.with_books(py, |books, garbage| {
            let (outcomes, freed) = ops::finish_read(books, py, &source, total, garbage)?;
            let mut staging = freed.staging;
            garbage.append(&mut staging);
            Ok((
                if want { Some(keys_at(py, &source, &successes(&outcomes))?) } else { None },
                keys_at(py, &source, &freed.positions)?,
                objects(py, freed.objects)?,
                failed_pairs(books, py, &source, &outcomes)?,
            ))
        })?;
        Ok(Some(answer))
    }

    /// How many keys of each row of `cells` need a new object from
    /// `reserve_write` for `tag` (LMCache's controller reserves row by row:
    /// the rows' keys differ, so one row's reservation does not change
    /// another's count).
    fn count_new_cells(
        &self,
        py: Python<'_>,
        request: &PinnedKeys,
        cells: &Bound<'_, LmGrid>,
        tag: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<usize>> {
        let by_row = row_cells(py, request, cells)?;
        let ids = request.ids()?;
        let flat = request.flat(py);
        let mut books = self.lock(py);
        let tag = books.tag_id(py, tag, false)?;
        let mut counts = Vec::with_capacity(by_row.len());
        for positions in &by_row {
            books.prepare(&Source::Cells { flat: &flat, ids: &ids, positions })?;
            counts.push(books.count_new(tag));
        }
        Ok(counts)
    }

    /// `reserve_write` of each row of `cells` with cells, in row order, as
    /// LMCache's controller makes them (one call a row), temporary where
    /// `temporary` is set, after each row's allocation (`allocated[row]`:
    /// the objects, or None when the memory manager could not give them):
    /// `(grid of the cells reserved, [(row, reported keys)] for the rows
    /// that needed a new object (the keys only when `want`), staged
    /// objects, unused objects, failed count, out-of-memory count,
    /// out-of-memory keys, contended keys)`; the two key lists are empty
    /// unless `want_failures`.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn reserve_write_cells<'py>(
        &self,
        py: Python<'py>,
        request: &PinnedKeys,
        cells: &Bound<'py, LmGrid>,
        temporary: &Bound<'py, LmGrid>,
        tag: &Bound<'py, PyAny>,
        allocated: Vec<Option<Vec<Bound<'py, PyAny>>>>,
        want: bool,
        want_failures: bool,
    ) -> PyResult<(
        Py<LmGrid>,
        Bound<'py, PyList>,
        Bound<'py, PyList>,
        Bound<'py, PyList>,
        usize,
        usize,
        Bound<'py, PyList>,
        Bound<'py, PyList>,
    )> {
        let by_row = row_cells(py, request, cells)?;
        if allocated.len() != by_row.len() {
            return Err(PyValueError::new_err(format!(
                "{} rows of objects for {} rows",
                allocated.len(),
                by_row.len()
            )));
        }
        let temporary_bits = temporary.borrow().with(py, |grid| {
            if grid.shape() == request.shape() {
                Ok(grid.clone())
            } else {
                Err(PyValueError::new_err("temporary cells of another shape"))
            }
        })??;
        let cols = request.shape().1;
        let ids = request.ids()?;
        let flat = request.flat(py);
        self.with_books(py, |books, garbage| {
            let tag = books.tag_id(py, tag, true)?;
            let mut success = Vec::new();
            let mut reported = Vec::new();
            let (mut staged, mut unused) = (Vec::new(), Vec::new());
            let (mut failed, mut num_oom) = (0usize, 0usize);
            let (mut oom, mut contended) = (Vec::new(), Vec::new());
            for (positions, objects) in by_row.iter().zip(allocated) {
                if positions.is_empty() {
                    continue;
                }
                let row = positions[0] as usize / cols;
                let flags: Vec<bool> =
                    positions.iter().map(|&at| temporary_bits.test(row, at as usize % cols)).collect();
                let source = Source::Cells { flat: &flat, ids: &ids, positions };
                // A row that needed nothing new (no objects: `[]`) reports
                // nothing (LMCache returns early); one whose allocation
                // failed (None) still reports its hand-overs.
                let needed = objects.as_ref().is_none_or(|objects| !objects.is_empty());
                let done = ops::reserve_write(books, py, &source, &flags, tag, objects, garbage)?;
                for (i, outcome) in done.outcomes.iter().enumerate() {
                    match outcome {
                        Outcome::Success => success.push(positions[i]),
                        Outcome::OutOfMemory => {
                            failed += 1;
                            num_oom += 1;
                            if want_failures {
                                oom.push(source.key(i)?);
                            }
                        }
                        Outcome::KeyNotWritable => {
                            failed += 1;
                            if want_failures {
                                contended.push(source.key(i)?);
                            }
                        }
                        _ => failed += 1,
                    }
                }
                if needed {
                    let keys = if want { Some(keys_at(py, &source, &done.reported)?) } else { None };
                    reported.push((row, keys));
                }
                staged.extend(done.staged);
                unused.extend(done.unused);
            }
            Ok((
                success_grid(py, request.shape(), &success, &vec![Outcome::Success; success.len()])?,
                PyList::new(py, reported)?,
                objects(py, staged)?,
                objects(py, unused)?,
                failed,
                num_oom,
                PyList::new(py, oom)?,
                PyList::new(py, contended)?,
            ))
        })
    }

    /// `tag`'s staging objects for the keys of `cells`, row-major (what a
    /// load task fills); `KeyError` for a cell without one.
    fn staged_objects<'py>(
        &self,
        py: Python<'py>,
        request: &PinnedKeys,
        cells: &Bound<'py, LmGrid>,
        tag: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let positions = cell_positions(py, request, Some(cells))?;
        let ids = request.ids()?;
        let mut books = self.lock(py);
        let tag = books.tag_id(py, tag, false)?;
        let mut out = Vec::with_capacity(positions.len());
        for &at in &positions {
            let key = TierKey::new(u64::from(ids[at as usize]), 0);
            let stage = books.tier.slot_of(key).and_then(|slot| books.stage(slot, tag));
            match stage {
                Some(stage) if key != UNKNOWN => out.push(stage.object(py)?),
                _ => return Err(PyKeyError::new_err(request.flat(py).get_item(at as usize)?.unbind())),
            }
        }
        PyList::new(py, out)
    }

    /// `finish_write_and_reserve_read` of the keys of `cells`: None without
    /// one, else `(admitted keys or None, their objects, keys resident
    /// already, admitted objects, discarded objects, expired keys)`.
    #[allow(clippy::type_complexity)]
    fn finish_write_and_reserve_read_cells<'py>(
        &self,
        py: Python<'py>,
        request: &PinnedKeys,
        cells: &Bound<'py, LmGrid>,
        total: i64,
        tag: &Bound<'py, PyAny>,
        want: bool,
    ) -> PyResult<
        Option<(
            Option<Bound<'py, PyList>>,
            Bound<'py, PyList>,
            Bound<'py, PyList>,
            Bound<'py, PyList>,
            Bound<'py, PyList>,
            Bound<'py, PyList>,
        )>,
    > {
        let positions = cell_positions(py, request, Some(cells))?;
        if positions.is_empty() {
            return Ok(None);
        }
        let ids = request.ids()?;
        let flat = request.flat(py);
        let source = Source::Cells { flat: &flat, ids: &ids, positions: &positions };
        let answer = self.with_books(py, |books, garbage| {
            let tag = books.tag_id(py, tag, false)?;
            let done = ops::finish(books, py, &source, tag, Finish::WriteAndRead(total), garbage)?;
            let admitted_copy: Vec<Py<PyAny>> = done.admitted_objects.iter().map(|o| o.clone_ref(py)).collect();
            Ok((
                if want { Some(keys_at(py, &source, &done.admitted)?) } else { None },
                objects(py, admitted_copy)?,
                keys_at(py, &source, &done.resident)?,
                objects(py, done.admitted_objects)?,
                objects(py, done.discarded)?,
                keys_at(py, &source, &done.expired)?,
            ))
        })?;
        Ok(Some(answer))
    }

    /// `finish_write_and_delete` of the keys of `cells`: None without one,
    /// else `(keys left with nothing, discarded objects, expired keys)`.
    #[allow(clippy::type_complexity)]
    fn finish_write_and_delete_cells<'py>(
        &self,
        py: Python<'py>,
        request: &PinnedKeys,
        cells: &Bound<'py, LmGrid>,
        tag: &Bound<'py, PyAny>,
    ) -> PyResult<Option<(Bound<'py, PyList>, Bound<'py, PyList>, Bound<'py, PyList>)>> {
        let positions = cell_positions(py, request, Some(cells))?;
        if positions.is_empty() {
            return Ok(None);
        }
        let ids = request.ids()?;
        let flat = request.flat(py);
        let source = Source::Cells { flat: &flat, ids: &ids, positions: &positions };
        let answer = self.with_books(py, |books, garbage| {
            let tag = books.tag_id(py, tag, false)?;
            let done = ops::finish(books, py, &source, tag, Finish::Delete, garbage)?;
            Ok((keys_at(py, &source, &done.gone)?, objects(py, done.discarded)?, keys_at(py, &source, &done.expired)?))
        })?;
        Ok(Some(answer))
    }
}
