//! The state behind `L1Books`: one tier-state [`Tier`] (LMCache's L1
//! lifecycle, its locks and staging), the Python key of each id, and the
//! memory objects LMCache's memory manager allocated, by slot.
//!
//! A key is filed in the tier as `TierKey(id, 0)`, its id a slot of the
//! [`KeyTable`]. An id goes back to the table when its key leaves the tier,
//! unless a prefetch request still holds it ([`Books::pin`]): the
//! controller resolves a request's keys once and names them by id for the
//! request's life, so an id must not come to name another key meanwhile.
//!
//! Every operation reads its keys from a [`Source`]: the caller's list
//! (LMCache's API), or a request's cells. Each answers per position: the
//! tier's outcome, plus the objects and key lists LMCache's manager hands
//! to its memory manager, its listeners and its event bus.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use tier_state::{Answer, Batch, Flags, Outcome, Tier, TierKey};

use crate::boundary::errors::OrPyErr;
use crate::key_table::table::KeyTable;

/// The key of a Python key the books have never seen: no id reaches it.
pub(crate) const UNKNOWN: TierKey = TierKey::new(u64::MAX, 0);

/// Python objects the books let go of, dropped once the lock is released
/// (a finalizer may run Python code).
pub(crate) type Garbage = Vec<Py<PyAny>>;

/// Where a call's keys come from.
pub(crate) enum Source<'a, 'py> {
    /// The caller's list, resolved by the key table (unknown keys miss).
    List(&'a Bound<'py, PyList>),
    /// A request's keys at these row-major positions, by their pinned ids.
    Cells { flat: &'a Bound<'py, PyList>, ids: &'a [u32], positions: &'a [u32] },
}

impl<'py> Source<'_, 'py> {
    /// The Python key at call position `i`.
    pub(crate) fn key(&self, i: usize) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Source::List(list) => list.get_item(i),
            Source::Cells { flat, positions, .. } => flat.get_item(positions[i] as usize),
        }
    }
}

/// The tag of calls whose writer tag no staging object carries: it stages
/// nothing.
pub(crate) const NO_TAG: u32 = u32::MAX;

/// Writer tags: any hashable Python object, as LMCache's (its prefetch
/// controller makes one string per request), numbered while some staging
/// object carries it, so that the numbers of finished requests go back.
#[derive(Debug)]
pub(crate) struct TagIds {
    by_tag: Py<PyDict>,
    tags: Vec<Option<Py<PyAny>>>,
    /// By id: how many staging objects carry it.
    uses: Vec<u32>,
    free: Vec<u32>,
}

impl TagIds {
    fn new(py: Python<'_>) -> TagIds {
        TagIds { by_tag: PyDict::new(py).unbind(), tags: Vec::new(), uses: Vec::new(), free: Vec::new() }
    }

    /// The id of `tag`: a new one if `intern`, else [`NO_TAG`] for a tag no
    /// staging object carries.
    fn id(&mut self, py: Python<'_>, tag: &Bound<'_, PyAny>, intern: bool) -> PyResult<u32> {
        let by_tag = self.by_tag.bind(py);
        if let Some(id) = by_tag.get_item(tag)? {
            return id.extract();
        }
        if !intern {
            return Ok(NO_TAG);
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.tags.push(None);
                self.uses.push(0);
                u32::try_from(self.tags.len() - 1).ok().filter(|&id| id != NO_TAG).ok_or_else(|| {
                    pyo3::exceptions::PyMemoryError::new_err("more than 2**32 - 1 writer tags at once")
                })?
            }
        };
        by_tag.set_item(tag, id)?;
        self.tags[id as usize] = Some(tag.clone().unbind());
        Ok(id)
    }

    /// How many tags have an id now.
    pub(crate) fn in_use(&self) -> usize {
        self.tags.iter().filter(|tag| tag.is_some()).count()
    }

    fn used(&mut self, id: u32) {
        self.uses[id as usize] += 1;
    }

    /// One staging object of `id` went; the id goes back with the last.
    pub(crate) fn unused(&mut self, py: Python<'_>, id: u32, garbage: &mut Garbage) -> PyResult<()> {
        let uses = &mut self.uses[id as usize];
        *uses = uses.saturating_sub(1);
        self.release_if_unused(py, id, garbage)
    }

    /// Gives `id` back if no staging object carries it.
    fn release_if_unused(&mut self, py: Python<'_>, id: u32, garbage: &mut Garbage) -> PyResult<()> {
        if id == NO_TAG || self.uses.get(id as usize).is_none_or(|&uses| uses > 0) {
            return Ok(());
        }
        if let Some(tag) = self.tags[id as usize].take() {
            self.by_tag.bind(py).del_item(&tag)?;
            garbage.push(tag);
            self.free.push(id);
        }
        Ok(())
    }
}

/// One staging object: its writer's tag, LMCache's answer `(SUCCESS,
/// object)` (kept as the tuple, so that answers reuse it), and whether it
/// is temporary (for `report_status`).
#[derive(Debug)]
pub(crate) struct Stage {
    pub(crate) tag: u32,
    pub(crate) answer: Py<PyAny>,
    pub(crate) temporary: bool,
}

impl Stage {
    /// The memory object.
    pub(crate) fn object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.answer.bind(py).get_item(1)
    }
}

/// The books (see the module docs).
#[derive(Debug)]
pub(crate) struct Books {
    pub(crate) tier: Tier,
    pub(crate) ids: KeyTable,
    pub(crate) tags: TagIds,
    /// LMCache's `L1Error` members, by [`Outcome`].
    pub(crate) codes: Vec<Py<PyAny>>,
    /// By tier slot: the resident object's answer `(SUCCESS, object)`.
    pub(crate) resident: Vec<Option<Py<PyAny>>>,
    /// By tier slot: its staging objects.
    pub(crate) staged: HashMap<u32, Vec<Stage>>,
    /// By tier slot: when its key became resident, and when it got its
    /// first staging object (LMCache's `_objects` and `_staging` are dicts:
    /// `clear` reports keys in their insertion order).
    pub(crate) since: Vec<[u64; 2]>,
    clock: u64,
    /// By id: how many requests hold it.
    pins: Vec<u32>,
    pub(crate) batch: Batch,
    /// The call's keys, by position.
    pub(crate) keys: Vec<TierKey>,
    /// The call's keys' slots before it.
    pub(crate) before: Vec<Option<u32>>,
}

impl Books {
    pub(crate) fn new(py: Python<'_>, tier: Tier, codes: Vec<Py<PyAny>>) -> Books {
        Books {
            tier,
            ids: KeyTable::new(false),
            tags: TagIds::new(py),
            codes,
            resident: Vec::new(),
            staged: HashMap::new(),
            since: Vec::new(),
            clock: 0,
            pins: Vec::new(),
            batch: Batch::default(),
            keys: Vec::new(),
            before: Vec::new(),
        }
    }

    /// The id of writer tag `tag` (see [`TagIds::id`]).
    pub(crate) fn tag_id(&mut self, py: Python<'_>, tag: &Bound<'_, PyAny>, intern: bool) -> PyResult<u32> {
        self.tags.id(py, tag, intern)
    }

    /// Gives a tag's id back if no staging object carries it (after a
    /// `reserve_write` that staged nothing).
    pub(crate) fn release_tag(&mut self, py: Python<'_>, tag: u32, garbage: &mut Garbage) -> PyResult<()> {
        self.tags.release_if_unused(py, tag, garbage)
    }

    pub(crate) fn code<'py>(&self, py: Python<'py>, outcome: Outcome) -> &Bound<'py, PyAny> {
        self.codes[outcome as usize].bind(py)
    }

    /// Fills `self.keys` from `source`, and `self.before` with their slots.
    pub(crate) fn prepare(&mut self, source: &Source<'_, '_>) -> PyResult<()> {
        self.keys.clear();
        match source {
            Source::List(list) => {
                for key in list.iter() {
                    let id = self.ids.lookup(&key)?;
                    self.keys.push(id.map_or(UNKNOWN, |id| TierKey::new(u64::from(id), 0)));
                }
            }
            Source::Cells { ids, positions, .. } => {
                self.keys.extend(positions.iter().map(|&at| TierKey::new(u64::from(ids[at as usize]), 0)));
            }
        }
        let tier = &self.tier;
        self.before.clear();
        self.before.extend(self.keys.iter().map(|&key| tier.slot_of(key)));
        Ok(())
    }

    /// The resident answer `(SUCCESS, object)` of a slot.
    pub(crate) fn resident_answer<'py>(&self, py: Python<'py>, slot: u32) -> Option<Bound<'py, PyAny>> {
        self.resident.get(slot as usize).and_then(Option::as_ref).map(|held| held.bind(py).clone())
    }

    pub(crate) fn set_resident(&mut self, slot: u32, answer: Py<PyAny>) {
        let at = slot as usize;
        if self.resident.len() <= at {
            self.resident.resize_with(at + 1, || None);
        }
        self.resident[at] = Some(answer);
        self.mark(slot, 0);
    }

    /// Records that `slot`'s key entered LMCache's `_objects` (`which` 0)
    /// or `_staging` (1) now.
    fn mark(&mut self, slot: u32, which: usize) {
        let at = slot as usize;
        if self.since.len() <= at {
            self.since.resize(at + 1, [0; 2]);
        }
        self.clock += 1;
        self.since[at][which] = self.clock;
    }

    /// Adds a staging object to `slot`.
    pub(crate) fn add_stage(&mut self, slot: u32, stage: Stage) {
        self.tags.used(stage.tag);
        let stages = self.staged.entry(slot).or_default();
        let first = stages.is_empty();
        stages.push(stage);
        if first {
            self.mark(slot, 1);
        }
    }

    /// When `slot`'s key entered LMCache's `_objects` (`which` 0) or
    /// `_staging` (1).
    pub(crate) fn since(&self, slot: u32, which: usize) -> u64 {
        self.since.get(slot as usize).map_or(0, |since| since[which])
    }

    pub(crate) fn take_resident(&mut self, slot: u32) -> Option<Py<PyAny>> {
        self.resident.get_mut(slot as usize).and_then(Option::take)
    }

    /// `tag`'s staging object of `slot`, taken out.
    pub(crate) fn take_stage(
        &mut self,
        py: Python<'_>,
        slot: u32,
        tag: u32,
        garbage: &mut Garbage,
    ) -> PyResult<Option<Stage>> {
        let Some(stages) = self.staged.get_mut(&slot) else { return Ok(None) };
        let Some(at) = stages.iter().position(|stage| stage.tag == tag) else { return Ok(None) };
        let stage = stages.swap_remove(at);
        if stages.is_empty() {
            self.staged.remove(&slot);
        }
        self.tags.unused(py, tag, garbage)?;
        Ok(Some(stage))
    }

    pub(crate) fn stage(&self, slot: u32, tag: u32) -> Option<&Stage> {
        self.staged.get(&slot)?.iter().find(|stage| stage.tag == tag)
    }

    /// After a call that may have freed `slot` (the tier drops a key's slot
    /// once it has nothing): the staging objects of `key` the tier no
    /// longer has, into `gone`; if the slot itself went, its id goes back
    /// unless pinned. The resident object is the caller's to take first.
    pub(crate) fn settle_stages(
        &mut self,
        py: Python<'_>,
        key: TierKey,
        slot: u32,
        gone: &mut Vec<Py<PyAny>>,
        garbage: &mut Garbage,
    ) -> PyResult<()> {
        let still = self.tier.slot_of(key) == Some(slot);
        if let Some(mut stages) = self.staged.remove(&slot) {
            let mut kept = Vec::with_capacity(stages.len());
            for stage in stages.drain(..) {
                if still && self.tier.stage_state(key, stage.tag).is_some() {
                    kept.push(stage);
                } else {
                    gone.push(stage.object(py)?.unbind());
                    self.tags.unused(py, stage.tag, garbage)?;
                }
            }
            if !kept.is_empty() {
                self.staged.insert(slot, kept);
            }
        }
        if !still && let Some(answer) = self.take_resident(slot) {
            // Not reached: the caller takes a freed resident object.
            gone.push(answer.bind(py).get_item(1)?.unbind());
        }
        Ok(())
    }

    /// The id of `key` goes back to the table if the tier no longer has
    /// the key and no request holds it.
    pub(crate) fn forget_if_gone(&mut self, key: TierKey, garbage: &mut Garbage) {
        if key == UNKNOWN || self.tier.slot_of(key).is_some() {
            return;
        }
        let Ok(id) = u32::try_from(key.hash) else { return };
        if self.pins.get(id as usize).copied().unwrap_or(0) > 0 {
            return;
        }
        if let Some(object) = self.ids.release(id) {
            garbage.push(object);
        }
    }

    /// Resolves `keys` to ids (new ones for unknown keys), each pinned
    /// until [`unpin`](Books::unpin).
    pub(crate) fn pin(&mut self, keys: &Bound<'_, PyList>, garbage: &mut Garbage) -> PyResult<Vec<u32>> {
        let mut ids = Vec::with_capacity(keys.len());
        for key in keys.iter() {
            match self.ids.slot(&key) {
                Ok(id) => {
                    let at = id as usize;
                    if self.pins.len() <= at {
                        self.pins.resize(at + 1, 0);
                    }
                    self.pins[at] += 1;
                    ids.push(id);
                }
                Err(error) => {
                    self.unpin(&ids, garbage);
                    return Err(error);
                }
            }
        }
        Ok(ids)
    }

    /// Gives back a request's pins; ids of keys the tier no longer has go
    /// back to the table.
    pub(crate) fn unpin(&mut self, ids: &[u32], garbage: &mut Garbage) {
        for &id in ids {
            let at = id as usize;
            if let Some(pins) = self.pins.get_mut(at) {
                *pins = pins.saturating_sub(1);
            }
            self.forget_if_gone(TierKey::new(u64::from(id), 0), garbage);
        }
    }

    /// The ids of a call's keys that need a new object from `reserve_write`
    /// for writer `tag`, counted as LMCache counts them: every key that is
    /// neither resident nor staged by `tag`, a key given twice twice.
    pub(crate) fn count_new(&self, tag: u32) -> usize {
        self.keys
            .iter()
            .filter(|&&key| {
                key == UNKNOWN || (!self.tier.is_resident(key) && self.tier.stage_state(key, tag).is_none())
            })
            .count()
    }

    /// Runs the tier's `reserve_write` on the positions `subset` of the
    /// call's keys (the others answered by the caller), with the flags of
    /// those positions.
    pub(crate) fn reserve_write_subset(
        &mut self,
        subset: &[usize],
        temporary: &[bool],
        tag: u32,
        garbage: &mut Garbage,
        source: &Source<'_, '_>,
    ) -> PyResult<Vec<TierKey>> {
        let mut keys = Vec::with_capacity(subset.len());
        let mut flags = Vec::with_capacity(subset.len());
        for &i in subset {
            let key = match self.keys[i] {
                UNKNOWN => {
                    // A key the books never saw gets its id now.
                    let id = match self.ids.slot(&source.key(i)?) {
                        Ok(id) => id,
                        Err(error) => {
                            for &key in &keys {
                                self.forget_if_gone(key, garbage);
                            }
                            return Err(error);
                        }
                    };
                    let key = TierKey::new(u64::from(id), 0);
                    self.keys[i] = key;
                    key
                }
                key => key,
            };
            keys.push(key);
            flags.push(temporary[i]);
        }
        self.tier.reserve_write(&keys[..], Flags::Each(&flags), tag, &mut self.batch).or_py_err()?;
        Ok(keys)
    }

    /// Each key's `(SUCCESS, object)` for a fresh staging object.
    pub(crate) fn success_tuple<'py>(
        &self,
        py: Python<'py>,
        object: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyTuple::new(py, [self.code(py, Outcome::Success).clone(), object.clone()])?.into_any())
    }

    /// `report_status`'s counts.
    pub(crate) fn counts(&mut self) -> (usize, usize, usize, usize, usize) {
        self.tier.sweep_expired();
        let resident = self.tier.num_resident();
        let read_locked = self.tier.read_locked().and_popcount(self.tier.resident());
        let mut temporary = self.tier.temporary().and_popcount(self.tier.resident());
        let mut staging = 0;
        let mut write_locked = 0;
        for (&slot, stages) in &self.staged {
            let Some(key) = self.tier.key_of(slot) else { continue };
            for stage in stages {
                staging += 1;
                if stage.temporary {
                    temporary += 1;
                }
                if self.tier.stage_state(key, stage.tag) == Some(true) {
                    write_locked += 1;
                }
            }
        }
        (resident, read_locked, temporary, staging, write_locked)
    }

    /// The outcome at each position of the last tier call.
    pub(crate) fn outcomes(&self) -> Vec<Outcome> {
        self.batch.outcomes()
    }
}
