//! `bitplan.lmcache.tiers.L1Bookkeeper`: LMCache's `L1Manager`
//! bookkeeping with its method names, arguments and results, over one
//! tier-state `Tier`.
//!
//! Keys are any hashable Python objects. Each is mapped to a dense id once
//! per call (a lookup in [`KeyTable`]; a new key gets an id at
//! `reserve_write`, and gives it back when it leaves the tier), and the tier
//! works on `TierKey(id, 0)`. Answers are dicts, as LMCache's: key →
//! `(L1Error, object or None)` for the calls that hand out objects, key →
//! `L1Error` for the others. The object is the one the caller attached to
//! the staging object at `reserve_write(..., objects=...)` (a buffer, a
//! handle), or the slot number when none was.
//!
//! What sets its floor, per key: the key's `__hash__` and `__eq__` (twice:
//! the id lookup and the answer dict; a `str` caches its hash, a `tuple`
//! hashes its items again), the answer dict's insertion and, for the
//! object-handing calls, a 2-tuple. The tier's own work is ~20 ns a key.
//! The id lookup costs no Python call for the very key object the books
//! hold (the one first given to `reserve_write`, which a store path passes
//! again to `finish_write`), and a key that leaves costs none either: the
//! table keeps each key's hash, where a `dict` would call `__hash__` again
//! to delete it.
//!
//! One lock inside; it is taken with the GIL released while waiting
//! (`lock_py_attached`), and objects the books let go of are dropped after
//! it is released, so a finalizer cannot deadlock on it. A key whose
//! `__hash__` or `__eq__` calls back into the same bookkeeper would.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyDict, PyList, PyTuple};
use tier_state::{Answer, Batch, Flags, Outcome, Tier, TierKey};

use crate::boundary::args::key_list;
use crate::boundary::errors::OrPyErr;
use crate::key_table::table::KeyTable;
use crate::tiers::chunk::capacity_arg;
use crate::tiers::common::{Failures, PyManualClock, Tags, build_tier, l1_errors};

/// The key of a Python key the books have never seen: no id reaches it.
const UNKNOWN: TierKey = TierKey::new(u64::MAX, 0);

/// The books: the tier, the id of each Python key, and the objects
/// attached to resident and staging objects.
#[derive(Debug)]
struct Books {
    tier: Tier,
    /// Python key → its id (a slot of the table, reused once free).
    ids: KeyTable,
    tags: Tags,
    /// By slot: the resident object's answer, the tuple `(SUCCESS,
    /// attachment)` (set exactly when the slot's key is resident). Kept as
    /// the tuple, so that every answer that hands it out reuses it.
    resident: Vec<Option<Py<PyAny>>>,
    /// By slot: each staging object's (tag, answer tuple).
    staged: HashMap<u32, Vec<(u32, Py<PyAny>)>>,
    answer: Batch,
    keys: Vec<TierKey>,
    before: Vec<Option<u32>>,
}

/// Python objects the books let go of, dropped once the lock is released.
type Garbage = Vec<Py<PyAny>>;

impl Books {
    /// The ids of `keys`, in order; [`UNKNOWN`] for a key never seen.
    fn resolve(&mut self, keys: &Bound<'_, PyList>) -> PyResult<()> {
        self.keys.clear();
        for key in keys.iter() {
            let id = self.ids.lookup(&key)?;
            self.keys.push(id.map_or(UNKNOWN, |id| TierKey::new(u64::from(id), 0)));
        }
        Ok(())
    }

    /// The ids of `keys`, in order, a new one for a key never seen. If a
    /// key's `__hash__` or `__eq__` raises, the ids given so far go back
    /// (nothing changed) and the error is returned.
    fn resolve_or_assign(&mut self, keys: &Bound<'_, PyList>, garbage: &mut Garbage) -> PyResult<()> {
        self.keys.clear();
        for key in keys.iter() {
            match self.ids.slot(&key) {
                Ok(id) => self.keys.push(TierKey::new(u64::from(id), 0)),
                Err(error) => {
                    // A key with an id but no slot in the tier is one this
                    // call gave it (the books forget a key the tier lets go).
                    for i in 0..self.keys.len() {
                        let key = self.keys[i];
                        if self.tier.slot_of(key).is_none() {
                            self.forget(key, garbage);
                        }
                    }
                    self.keys.clear();
                    return Err(error);
                }
            }
        }
        Ok(())
    }

    /// Each key's slot before a call that may free it.
    fn remember_slots(&mut self) {
        self.before.clear();
        let tier = &self.tier;
        self.before.extend(self.keys.iter().map(|&key| tier.slot_of(key)));
    }

    /// Settles the books for key `i` after a call that may have removed
    /// its resident object, its staging objects or its slot.
    fn settle(&mut self, i: usize, garbage: &mut Garbage) {
        let key = self.keys[i];
        let Some(slot) = self.before.get(i).copied().flatten() else { return };
        let still = self.tier.slot_of(key) == Some(slot);
        if !(still && self.tier.is_resident(key))
            && let Some(object) = self.resident.get_mut(slot as usize).and_then(Option::take)
        {
            garbage.push(object);
        }
        if let Some(stages) = self.staged.get_mut(&slot) {
            let tier = &self.tier;
            let mut kept = Vec::with_capacity(stages.len());
            for (tag, object) in stages.drain(..) {
                if still && tier.stage_state(key, tag).is_some() {
                    kept.push((tag, object));
                } else {
                    garbage.push(object);
                }
            }
            if kept.is_empty() {
                self.staged.remove(&slot);
            } else {
                *stages = kept;
            }
        }
        if !still {
            self.forget(key, garbage);
        }
    }

    /// The key left the tier: its id goes back (once, for a key the batch
    /// names twice), and the books let go of the key object.
    fn forget(&mut self, tier_key: TierKey, garbage: &mut Garbage) {
        if let Ok(id) = u32::try_from(tier_key.hash)
            && let Some(key) = self.ids.release(id)
        {
            garbage.push(key);
        }
    }

    /// The resident object's answer `(SUCCESS, attachment)`.
    fn resident_held<'py>(
        &self,
        py: Python<'py>,
        slot: u32,
        success: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self.resident.get(slot as usize) {
            Some(Some(held)) => Ok(held.bind(py).clone()),
            // Not reached: a resident key always has its tuple.
            _ => Ok(PyTuple::new(py, [success.clone(), slot.into_pyobject(py)?.into_any()])?.into_any()),
        }
    }

    fn set_resident(&mut self, slot: u32, object: Py<PyAny>, garbage: &mut Garbage) {
        let at = slot as usize;
        if self.resident.len() <= at {
            self.resident.resize_with(at + 1, || None);
        }
        if let Some(old) = self.resident[at].replace(object) {
            garbage.push(old);
        }
    }

    fn take_stage(&mut self, slot: u32, tag: u32) -> Option<Py<PyAny>> {
        let stages = self.staged.get_mut(&slot)?;
        let at = stages.iter().position(|&(t, _)| t == tag)?;
        let (_, object) = stages.swap_remove(at);
        if stages.is_empty() {
            self.staged.remove(&slot);
        }
        Some(object)
    }
}

/// LMCache's `L1Manager` bookkeeping (see the module docs).
#[pyclass(name = "L1Bookkeeper", module = "bitplan.lmcache.tiers", frozen)]
#[derive(Debug)]
pub(crate) struct PyL1Bookkeeper {
    books: Mutex<Books>,
}

impl PyL1Bookkeeper {
    fn lock(&self, py: Python<'_>) -> MutexGuard<'_, Books> {
        self.books.lock_py_attached(py).unwrap_or_else(PoisonError::into_inner)
    }

    /// A call whose answer is key → `L1Error`, after `settle` for the keys
    /// that may have changed; `op` runs the tier.
    fn codes_call<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        op: impl FnOnce(&mut Tier, &[TierKey], &mut Batch) -> Result<(), tier_state::TierError>,
        after: impl Fn(&mut Books, usize, u32, &mut Garbage),
        may_remove: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let keys = key_list(keys)?;
        let codes = l1_errors(py)?;
        let mut garbage = Garbage::new();
        let out = PyDict::new(py);
        {
            let mut books = self.lock(py);
            let books = &mut *books;
            books.resolve(&keys)?;
            books.remember_slots();
            let counts = (books.tier.num_keys(), books.tier.num_objects());
            op(&mut books.tier, &books.keys, &mut books.answer).or_py_err()?;
            let outcomes = books.answer.outcomes();
            // Nothing left the tier when the counts stand (the common
            // case of a finish_read): then no key needs settling.
            let changed = (books.tier.num_keys(), books.tier.num_objects()) != counts;
            for (i, outcome) in outcomes.iter().enumerate() {
                if outcome.is_success()
                    && let Some(slot) = books.before[i]
                {
                    after(books, i, slot, &mut garbage);
                }
                if may_remove && changed {
                    books.settle(i, &mut garbage);
                }
            }
            for (key, outcome) in keys.iter().zip(outcomes) {
                out.set_item(key, codes[outcome as usize].bind(py))?;
            }
        }
        drop(garbage);
        Ok(out)
    }
}

#[pymethods]
impl PyL1Bookkeeper {
    /// `L1Bookkeeper(capacity, *, read_ttl_seconds=300, write_ttl_seconds=600,
    /// clock=None)`: books for `capacity` objects (resident and staged).
    #[new]
    #[pyo3(signature = (capacity, *, read_ttl_seconds = 300.0, write_ttl_seconds = 600.0, clock = None))]
    fn new(
        capacity: &Bound<'_, PyAny>,
        read_ttl_seconds: f64,
        write_ttl_seconds: f64,
        clock: Option<PyRef<'_, PyManualClock>>,
    ) -> PyResult<PyL1Bookkeeper> {
        let capacity = capacity_arg(capacity)?;
        // LRU, LMCache's stock policy: the books recycle a key's id once the
        // tier lets the key go, which a policy keeping ghost history by slot
        // (ARC) would not allow.
        let tier = build_tier(capacity, read_ttl_seconds, write_ttl_seconds, None, clock.as_deref(), "LRU")?;
        Ok(PyL1Bookkeeper {
            books: Mutex::new(Books {
                tier,
                ids: KeyTable::new(false),
                tags: Tags::default(),
                resident: Vec::new(),
                staged: HashMap::new(),
                answer: Batch::default(),
                keys: Vec::new(),
                before: Vec::new(),
            }),
        })
    }

    /// LMCache's `reserve_read`: key → `(L1Error, object)`.
    #[pyo3(signature = (keys, read_locks = 1))]
    fn reserve_read<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        read_locks: i64,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.object_call(py, keys, |tier, k, a| tier.reserve_read(k, read_locks, a))
    }

    /// LMCache's `unsafe_read`: key → `(L1Error, object)`, no lock taken.
    fn unsafe_read<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        self.object_call(py, keys, |tier, k, a| tier.unsafe_read(k, a))
    }

    /// LMCache's `finish_read`: key → `L1Error`; a temporary key whose last
    /// read lock goes is deleted.
    #[pyo3(signature = (keys, read_locks = 1))]
    fn finish_read<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        read_locks: i64,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.codes_call(py, keys, |tier, k, a| tier.finish_read(k, read_locks, a), |_, _, _, _| {}, true)
    }

    /// LMCache's `reserve_write`: key → `(L1Error, object)`. `objects`, if
    /// given, one per key: what later calls hand back for it.
    #[pyo3(signature = (keys, is_temporary, layout_desc = None, tag = None, objects = None))]
    fn reserve_write<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        is_temporary: &Bound<'py, PyAny>,
        layout_desc: Option<&Bound<'py, PyAny>>,
        tag: Option<&Bound<'py, PyAny>>,
        objects: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let _ = layout_desc; // the memory is the caller's: no layout here
        let keys = key_list(keys)?;
        let flags: Vec<bool> =
            is_temporary.try_iter()?.map(|flag| flag.and_then(|f| f.is_truthy())).collect::<PyResult<_>>()?;
        if flags.len() != keys.len() {
            return Err(PyValueError::new_err(format!(
                "reserve_write: {} keys but {} is_temporary flags",
                keys.len(),
                flags.len()
            )));
        }
        let objects = match objects {
            Some(objects) => {
                let objects = key_list(objects)?;
                if objects.len() != keys.len() {
                    return Err(PyValueError::new_err(format!(
                        "reserve_write: {} keys but {} objects",
                        keys.len(),
                        objects.len()
                    )));
                }
                Some(objects)
            }
            None => None,
        };
        let codes = l1_errors(py)?;
        let success = codes[Outcome::Success as usize].bind(py);
        let mut failures = Failures::new(codes);
        let out = PyDict::new(py);
        let mut garbage = Garbage::new();
        {
            let mut books = self.lock(py);
            let books = &mut *books;
            let tag = match tag {
                Some(tag) => books.tags.id(tag)?,
                None => books.tags.id(pyo3::types::PyString::new(py, "").as_any())?,
            };
            books.resolve_or_assign(&keys, &mut garbage)?;
            let result = books.tier.reserve_write(&books.keys[..], Flags::Each(&flags), tag, &mut books.answer);
            let outcomes = books.answer.outcomes();
            let slots = books.answer.slots().to_vec();
            let mut failed_call = None;
            if let Err(error) = result {
                // Nothing changed in the tier: give the new ids back.
                failed_call = Some(error);
            }
            for (i, key) in keys.iter().enumerate() {
                let tier_key = books.keys[i];
                if failed_call.is_some() || !outcomes[i].is_success() {
                    if books.tier.slot_of(tier_key).is_none() {
                        books.forget(tier_key, &mut garbage);
                    }
                    if failed_call.is_none() {
                        out.set_item(&key, failures.get(py, outcomes[i])?)?;
                    }
                    continue;
                }
                let slot = slots[i];
                let stages = books.staged.entry(slot).or_default();
                let held = match stages.iter().find(|&&(t, _)| t == tag) {
                    // An expired reservation handed over: its object goes with it.
                    Some((_, held)) => held.bind(py).clone(),
                    None => {
                        let object = match &objects {
                            Some(objects) => objects.get_item(i)?,
                            None => slot.into_pyobject(py)?.into_any(),
                        };
                        let held = PyTuple::new(py, [success.clone(), object])?.into_any();
                        stages.push((tag, held.clone().unbind()));
                        held
                    }
                };
                out.set_item(&key, held)?;
            }
            if let Some(error) = failed_call {
                // The guard goes before the key objects let go (drop order).
                return Err(crate::boundary::errors::IntoPyErr::into_py_err(error));
            }
        }
        drop(garbage);
        Ok(out)
    }

    /// LMCache's `finish_write`: key → `L1Error`.
    #[pyo3(signature = (keys, tag = None))]
    fn finish_write<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        tag: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let tag = self.tag(py, tag)?;
        self.codes_call(py, keys, |tier, k, a| tier.finish_write(k, tag, a), admit(tag), false)
    }

    /// LMCache's `finish_prefetch`: key → `L1Error`.
    #[pyo3(signature = (keys, tag = None))]
    fn finish_prefetch<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        tag: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let tag = self.tag(py, tag)?;
        self.codes_call(py, keys, |tier, k, a| tier.finish_prefetch(k, tag, a), admit(tag), false)
    }

    /// LMCache's `finish_write_and_reserve_read`: key → `(L1Error, object)`,
    /// the object now resident and read-locked.
    #[pyo3(signature = (keys, read_locks = 1, tag = None))]
    fn finish_write_and_reserve_read<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        read_locks: i64,
        tag: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let tag = self.tag(py, tag)?;
        let keys = key_list(keys)?;
        let codes = l1_errors(py)?;
        let mut garbage = Garbage::new();
        let out = PyDict::new(py);
        {
            let mut books = self.lock(py);
            let books = &mut *books;
            books.resolve(&keys)?;
            books.remember_slots();
            books
                .tier
                .finish_write_and_reserve_read(&books.keys[..], read_locks, tag, &mut books.answer)
                .or_py_err()?;
            let mut failures = Failures::new(codes);
            let outcomes = books.answer.outcomes();
            for (i, key) in keys.iter().enumerate() {
                match (outcomes[i], books.before[i]) {
                    (Outcome::Success, Some(slot)) => {
                        admit(tag)(books, i, slot, &mut garbage);
                        out.set_item(&key, books.resident_held(py, slot, codes[0].bind(py))?)?;
                    }
                    (outcome, _) => out.set_item(&key, failures.get(py, outcome)?)?,
                }
            }
        }
        drop(garbage);
        Ok(out)
    }

    /// LMCache's `delete`: key → `L1Error`.
    #[pyo3(signature = (keys, force = false))]
    fn delete<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>, force: bool) -> PyResult<Bound<'py, PyDict>> {
        self.codes_call(py, keys, |tier, k, a| tier.delete(k, force, a), |_, _, _, _| {}, true)
    }

    /// LMCache's `finish_write_and_delete`: key → `L1Error`.
    #[pyo3(signature = (keys, tag = None))]
    fn finish_write_and_delete<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        tag: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let tag = self.tag(py, tag)?;
        self.codes_call(py, keys, |tier, k, a| tier.finish_write_and_delete(k, tag, a), |_, _, _, _| {}, true)
    }

    /// LMCache's `touch_keys`: the eviction policy's recency; returns None.
    fn touch_keys(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let keys = key_list(keys)?;
        let mut books = self.lock(py);
        let books = &mut *books;
        books.resolve(&keys)?;
        books.tier.touch(&books.keys[..], &mut books.answer).or_py_err()
    }

    /// LMCache's `clear`: every unlocked resident object and expired
    /// reservation; everything with `force`.
    #[pyo3(signature = (force = false))]
    fn clear(&self, py: Python<'_>, force: bool) -> PyResult<()> {
        let mut garbage = Garbage::new();
        {
            let mut books = self.lock(py);
            let books = &mut *books;
            // Every key the books know, with its slot before the clear.
            books.keys.clear();
            books.keys.extend(books.ids.held(py).map(|(id, _)| TierKey::new(u64::from(id), 0)));
            books.remember_slots();
            books.tier.clear(force);
            for i in 0..books.keys.len() {
                books.settle(i, &mut garbage);
            }
        }
        drop(garbage);
        Ok(())
    }

    /// LMCache's `is_key_evictable`: resident and not read-locked, or
    /// staged under an expired reservation.
    fn is_key_evictable(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let mut books = self.lock(py);
        let Some(id) = books.ids.lookup(key)? else { return Ok(false) };
        let tier_key = TierKey::new(u64::from(id), 0);
        if books.tier.is_resident(tier_key) && !books.tier.is_read_locked(tier_key) {
            return Ok(true);
        }
        let Some(slot) = books.tier.slot_of(tier_key) else { return Ok(false) };
        Ok(books
            .staged
            .get(&slot)
            .is_some_and(|stages| stages.iter().any(|&(tag, _)| books.tier.stage_state(tier_key, tag) == Some(false))))
    }

    /// What the books hold of `key`, as the tests' model reports it:
    /// `{"resident", "read_locks" (0 unless held), "temporary" (None unless
    /// resident), "staged": {tag: write lock held}}`.
    fn state_of<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let mut books = self.lock(py);
        let out = PyDict::new(py);
        let staged = PyDict::new(py);
        let tier_key = books.ids.lookup(key)?.map_or(UNKNOWN, |id| TierKey::new(u64::from(id), 0));
        let resident = books.tier.is_resident(tier_key);
        out.set_item("resident", resident)?;
        out.set_item("read_locks", books.tier.read_count(tier_key))?;
        out.set_item("temporary", if resident { Some(books.tier.is_temporary(tier_key)) } else { None })?;
        if let Some(slot) = books.tier.slot_of(tier_key)
            && let Some(stages) = books.staged.get(&slot)
        {
            for &(tag, _) in stages {
                if let Some(live) = books.tier.stage_state(tier_key, tag) {
                    staged.set_item(books.tags.name(py, tag)?, live)?;
                }
            }
        }
        out.set_item("staged", staged)?;
        Ok(out)
    }

    /// Objects held, resident and staged (what the capacity counts).
    fn used(&self, py: Python<'_>) -> usize {
        self.lock(py).tier.num_objects()
    }

    /// Keys held (resident or staged).
    fn __len__(&self, py: Python<'_>) -> usize {
        self.lock(py).tier.num_keys()
    }

    /// The capacity, in objects.
    #[getter]
    fn capacity(&self, py: Python<'_>) -> usize {
        self.lock(py).tier.config().capacity
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let books = self.lock(py);
        format!("L1Bookkeeper({} of {} objects)", books.tier.num_objects(), books.tier.config().capacity)
    }
}

/// After a successful finish that takes `tag`'s staging object: it becomes
/// the resident one, or is dropped when the key was resident already.
fn admit(tag: u32) -> impl Fn(&mut Books, usize, u32, &mut Garbage) {
    move |books, _i, slot, garbage| {
        let Some(object) = books.take_stage(slot, tag) else { return };
        let was_resident = books.resident.get(slot as usize).is_some_and(Option::is_some);
        if was_resident {
            garbage.push(object);
        } else {
            books.set_resident(slot, object, garbage);
        }
    }
}

impl PyL1Bookkeeper {
    fn tag(&self, py: Python<'_>, tag: Option<&Bound<'_, PyAny>>) -> PyResult<u32> {
        let mut books = self.lock(py);
        match tag {
            Some(tag) => books.tags.id(tag),
            None => books.tags.id(pyo3::types::PyString::new(py, "").as_any()),
        }
    }

    /// A call whose answer is key → `(L1Error, object)`, changing no
    /// attachment (the reads).
    fn object_call<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        op: impl FnOnce(&mut Tier, &[TierKey], &mut Batch) -> Result<(), tier_state::TierError>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let keys = key_list(keys)?;
        let codes = l1_errors(py)?;
        let success = codes[0].bind(py);
        let mut failures = Failures::new(codes);
        let out = PyDict::new(py);
        let mut books = self.lock(py);
        let books = &mut *books;
        books.resolve(&keys)?;
        op(&mut books.tier, &books.keys, &mut books.answer).or_py_err()?;
        let slots = books.answer.slots();
        let mut failed = books.answer.failed().iter().peekable();
        for (i, key) in keys.iter().enumerate() {
            match failed.peek() {
                Some(&&(at, outcome)) if at as usize == i => {
                    failed.next();
                    out.set_item(&key, failures.get(py, outcome)?)?;
                }
                _ => out.set_item(&key, books.resident_held(py, slots[i], success)?)?,
            }
        }
        Ok(out)
    }
}
