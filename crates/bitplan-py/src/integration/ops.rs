//! The L1 calls on [`Books`], each over a [`Source`] of keys: the tier's
//! call, then what LMCache's `L1Manager` does around it with the memory
//! objects (which one each key hands out, which leave staging, which are
//! freed) and which keys its listeners hear about. Each answers by
//! position; `l1_books.rs` turns that into LMCache's dicts or into grids.

use pyo3::prelude::*;
use tier_state::{Answer, Outcome, TierKey};

use crate::boundary::errors::OrPyErr;
use crate::integration::books::{Books, Garbage, Source, Stage, UNKNOWN};

/// A read's answer: each position's outcome, and a success's `(SUCCESS,
/// object)`.
pub(crate) struct Read<'py> {
    pub(crate) outcomes: Vec<Outcome>,
    pub(crate) answers: Vec<Option<Bound<'py, PyAny>>>,
}

/// `reserve_read` (`lock`) or `unsafe_read`.
pub(crate) fn read<'py>(
    books: &mut Books,
    py: Python<'py>,
    source: &Source<'_, 'py>,
    lock: Option<i64>,
) -> PyResult<Read<'py>> {
    books.prepare(source)?;
    match lock {
        Some(total) => books.tier.reserve_read(&books.keys[..], total, &mut books.batch),
        None => books.tier.unsafe_read(&books.keys[..], &mut books.batch),
    }
    .or_py_err()?;
    let outcomes = books.outcomes();
    let slots = books.batch.slots();
    let answers = outcomes
        .iter()
        .enumerate()
        .map(|(i, outcome)| if outcome.is_success() { books.resident_answer(py, slots[i]) } else { None })
        .collect();
    Ok(Read { outcomes, answers })
}

/// What a call freed or took out of staging.
#[derive(Default)]
pub(crate) struct Freed {
    /// Positions of the keys whose resident object went (a temporary
    /// object's last reader, a delete).
    pub(crate) positions: Vec<usize>,
    /// Their objects, for the memory manager.
    pub(crate) objects: Vec<Py<PyAny>>,
    /// Staging objects that went (reclaimed or discarded): freed.
    pub(crate) staging: Vec<Py<PyAny>>,
    /// Positions of keys with nothing left after a call that only had
    /// staging objects (LMCache's "staging gone").
    pub(crate) gone: Vec<usize>,
}

/// `finish_read`: outcomes, and the temporary objects whose last read lock
/// went.
pub(crate) fn finish_read(
    books: &mut Books,
    py: Python<'_>,
    source: &Source<'_, '_>,
    total: i64,
    garbage: &mut Garbage,
) -> PyResult<(Vec<Outcome>, Freed)> {
    books.prepare(source)?;
    books.tier.finish_read(&books.keys[..], total, &mut books.batch).or_py_err()?;
    let outcomes = books.outcomes();
    let mut freed = Freed::default();
    for (i, outcome) in outcomes.iter().enumerate() {
        let (key, Some(slot)) = (books.keys[i], books.before[i]) else { continue };
        if outcome.is_success() && !(books.tier.slot_of(key) == Some(slot) && books.tier.is_resident(key)) {
            if let Some(answer) = books.take_resident(slot) {
                freed.positions.push(i);
                freed.objects.push(answer.bind(py).get_item(1)?.unbind());
            }
            books.settle_stages(py, key, slot, &mut freed.staging, garbage)?;
            books.forget_if_gone(key, garbage);
        }
    }
    Ok((outcomes, freed))
}

/// `reserve_write`'s answer.
pub(crate) struct Reserved<'py> {
    pub(crate) outcomes: Vec<Outcome>,
    /// A success's `(SUCCESS, object)`.
    pub(crate) answers: Vec<Option<Bound<'py, PyAny>>>,
    /// The successful positions in LMCache's report order: hand-overs,
    /// then new objects.
    pub(crate) reported: Vec<usize>,
    /// New objects now staged.
    pub(crate) staged: Vec<Py<PyAny>>,
    /// Allocated objects no key took.
    pub(crate) unused: Vec<Py<PyAny>>,
}

/// `reserve_write` after the memory manager allocated `allocated` (None:
/// it could not give [`Books::count_new`] objects): LMCache's two loops.
/// A key resident, or staged by `tag` under a held write lock, is not
/// writable; a key staged by `tag` under an expired one is handed over;
/// every other key takes the next allocated object, or is out of memory.
pub(crate) fn reserve_write<'py>(
    books: &mut Books,
    py: Python<'py>,
    source: &Source<'_, 'py>,
    temporary: &[bool],
    tag: u32,
    allocated: Option<Vec<Bound<'py, PyAny>>>,
    garbage: &mut Garbage,
) -> PyResult<Reserved<'py>> {
    books.prepare(source)?;
    let n = books.keys.len();
    let mut outcomes = vec![Outcome::Success; n];
    // The keys to reserve, in call order: handovers and fresh ones alike.
    let mut subset = Vec::new();
    for (i, &key) in books.keys.iter().enumerate() {
        let state = if key == UNKNOWN { None } else { books.tier.stage_state(key, tag) };
        if key != UNKNOWN && books.tier.is_resident(key) {
            outcomes[i] = Outcome::KeyNotWritable;
        } else {
            match state {
                Some(true) => outcomes[i] = Outcome::KeyNotWritable,
                Some(false) => subset.push(i),
                None if allocated.is_some() => subset.push(i),
                None => outcomes[i] = Outcome::OutOfMemory,
            }
        }
    }
    let keys = books.reserve_write_subset(&subset, temporary, tag, garbage, source)?;
    let tier_outcomes = books.outcomes();
    let slots = books.batch.slots().to_vec();
    let mut answers: Vec<Option<Bound<'py, PyAny>>> = vec![None; n];
    let mut objects = allocated.unwrap_or_default().into_iter();
    let mut staged = Vec::new();
    let mut reported_new = Vec::new();
    let mut reported = Vec::new();
    for (at, &i) in subset.iter().enumerate() {
        outcomes[i] = tier_outcomes[at];
        if !tier_outcomes[at].is_success() {
            // A key given twice: the tier refused its second copy.
            books.forget_if_gone(keys[at], garbage);
            continue;
        }
        let slot = slots[at];
        let handed_over = books.stage(slot, tag).map(|stage| stage.answer.bind(py).clone());
        match handed_over {
            Some(answer) => {
                if let Some(stages) = books.staged.get_mut(&slot)
                    && let Some(stage) = stages.iter_mut().find(|stage| stage.tag == tag)
                {
                    stage.temporary = temporary[i];
                }
                answers[i] = Some(answer);
                reported.push(i);
            }
            None => {
                let Some(object) = objects.next() else {
                    // Not reached: count_new counted every fresh key.
                    return Err(pyo3::exceptions::PyRuntimeError::new_err("reserve_write: fewer objects than keys"));
                };
                let answer = books.success_tuple(py, &object)?;
                books.add_stage(slot, Stage { tag, answer: answer.clone().unbind(), temporary: temporary[i] });
                staged.push(object.unbind());
                answers[i] = Some(answer);
                reported_new.push(i);
            }
        }
    }
    reported.extend(reported_new);
    let unused = objects.map(Bound::unbind).collect();
    books.release_tag(py, tag, garbage)?;
    Ok(Reserved { outcomes, answers, reported, staged, unused })
}

/// What a finish that takes staging objects did.
#[derive(Default)]
pub(crate) struct Finished {
    pub(crate) outcomes: Vec<Outcome>,
    /// Positions admitted (their staging object is now resident).
    pub(crate) admitted: Vec<usize>,
    /// The admitted objects, which left staging.
    pub(crate) admitted_objects: Vec<Py<PyAny>>,
    /// Whether each admitted one is temporary.
    pub(crate) admitted_temporary: Vec<bool>,
    /// Positions whose key was resident already: their staging object was
    /// discarded (`finish_write_and_reserve_read` read-locks the resident).
    pub(crate) resident: Vec<usize>,
    /// Staging objects that went: freed.
    pub(crate) discarded: Vec<Py<PyAny>>,
    /// Positions whose reservation had expired (`KEY_IN_WRONG_STATE`).
    pub(crate) expired: Vec<usize>,
    /// Positions of keys left with nothing (`finish_write_and_delete`).
    pub(crate) gone: Vec<usize>,
}

/// Which finish.
#[derive(Clone, Copy)]
pub(crate) enum Finish {
    Write,
    WriteAndRead(i64),
    Delete,
}

/// `finish_write`, `finish_write_and_reserve_read` or
/// `finish_write_and_delete` for writer `tag`.
pub(crate) fn finish(
    books: &mut Books,
    py: Python<'_>,
    source: &Source<'_, '_>,
    tag: u32,
    how: Finish,
    garbage: &mut Garbage,
) -> PyResult<Finished> {
    books.prepare(source)?;
    let was_resident: Vec<bool> = books.keys.iter().map(|&key| books.tier.is_resident(key)).collect();
    let tier = &mut books.tier;
    match how {
        Finish::Write => tier.finish_write(&books.keys[..], tag, &mut books.batch),
        Finish::WriteAndRead(total) => {
            tier.finish_write_and_reserve_read(&books.keys[..], total, tag, &mut books.batch)
        }
        Finish::Delete => tier.finish_write_and_delete(&books.keys[..], tag, &mut books.batch),
    }
    .or_py_err()?;
    let mut done = Finished { outcomes: books.outcomes(), ..Finished::default() };
    for (i, &was_resident) in was_resident.iter().enumerate() {
        let key = books.keys[i];
        match done.outcomes[i] {
            Outcome::Success => {}
            Outcome::KeyInWrongState => {
                done.expired.push(i);
                continue;
            }
            _ => continue,
        }
        let Some(slot) = books.before[i] else { continue };
        let Some(stage) = books.take_stage(py, slot, tag, garbage)? else { continue };
        let object = stage.object(py)?.unbind();
        let admit = !matches!(how, Finish::Delete) && !was_resident && books.tier.is_resident(key);
        if admit {
            books.set_resident(slot, stage.answer);
            done.admitted.push(i);
            done.admitted_objects.push(object);
            done.admitted_temporary.push(books.tier.is_temporary(key));
        } else {
            done.discarded.push(object);
            if matches!(how, Finish::Delete) {
                if books.tier.slot_of(key).is_none() {
                    done.gone.push(i);
                }
            } else {
                done.resident.push(i);
            }
        }
        books.forget_if_gone(key, garbage);
    }
    Ok(done)
}

/// `delete`: outcomes; the resident objects deleted; the staging objects
/// reclaimed; the keys that had only expired reservations.
pub(crate) fn delete(
    books: &mut Books,
    py: Python<'_>,
    source: &Source<'_, '_>,
    force: bool,
    garbage: &mut Garbage,
) -> PyResult<(Vec<Outcome>, Freed)> {
    books.prepare(source)?;
    let was_resident: Vec<bool> = books.keys.iter().map(|&key| books.tier.is_resident(key)).collect();
    books.tier.delete(&books.keys[..], force, &mut books.batch).or_py_err()?;
    let outcomes = books.outcomes();
    let mut freed = Freed::default();
    for (i, &was_resident) in was_resident.iter().enumerate() {
        let (key, Some(slot)) = (books.keys[i], books.before[i]) else { continue };
        if outcomes[i].is_success() {
            if was_resident {
                if let Some(answer) = books.take_resident(slot) {
                    freed.positions.push(i);
                    freed.objects.push(answer.bind(py).get_item(1)?.unbind());
                }
            } else {
                freed.gone.push(i);
            }
        }
        books.settle_stages(py, key, slot, &mut freed.staging, garbage)?;
        books.forget_if_gone(key, garbage);
    }
    Ok((outcomes, freed))
}

/// `clear`: every held key's state before, the tier's clear, then what
/// went: (resident keys cleared and their objects, keys left with nothing
/// that had only staging objects, staging objects freed, read-locked
/// objects kept, staging objects kept).
pub(crate) struct Cleared {
    pub(crate) keys: Vec<Py<PyAny>>,
    pub(crate) objects: Vec<Py<PyAny>>,
    pub(crate) gone: Vec<Py<PyAny>>,
    pub(crate) staging: Vec<Py<PyAny>>,
    pub(crate) locked_remaining: usize,
    pub(crate) staging_remaining: usize,
}

pub(crate) fn clear(books: &mut Books, py: Python<'_>, force: bool, garbage: &mut Garbage) -> PyResult<Cleared> {
    let held: Vec<(TierKey, Py<PyAny>)> =
        books.ids.held(py).map(|(id, key)| (TierKey::new(u64::from(id), 0), key.clone().unbind())).collect();
    let before: Vec<(Option<u32>, bool)> =
        held.iter().map(|&(key, _)| (books.tier.slot_of(key), books.tier.is_resident(key))).collect();
    let report = books.tier.clear(force);
    // (when it entered LMCache's dict, key, object)
    let mut cleared: Vec<(u64, Py<PyAny>, Option<Py<PyAny>>)> = Vec::new();
    let mut gone: Vec<(u64, Py<PyAny>)> = Vec::new();
    let mut staging = Vec::new();
    for ((key, object), (slot, was_resident)) in held.into_iter().zip(before) {
        let Some(slot) = slot else { continue };
        let still_resident = books.tier.slot_of(key) == Some(slot) && books.tier.is_resident(key);
        if was_resident && !still_resident {
            let freed = match books.take_resident(slot) {
                Some(answer) => Some(answer.bind(py).get_item(1)?.unbind()),
                None => None,
            };
            cleared.push((books.since(slot, 0), object.clone_ref(py), freed));
        }
        let staged_before = books.staged.get(&slot).map_or(0, Vec::len);
        books.settle_stages(py, key, slot, &mut staging, garbage)?;
        if !was_resident && staged_before > 0 && books.tier.slot_of(key).is_none() {
            gone.push((books.since(slot, 1), object));
        }
        books.forget_if_gone(key, garbage);
    }
    // In the order LMCache's dicts hold the keys.
    cleared.sort_unstable_by_key(|entry| entry.0);
    gone.sort_unstable_by_key(|entry| entry.0);
    let (keys, objects): (Vec<_>, Vec<_>) = cleared.into_iter().map(|(_, key, object)| (key, object)).unzip();
    Ok(Cleared {
        keys,
        objects: objects.into_iter().flatten().collect(),
        gone: gone.into_iter().map(|(_, key)| key).collect(),
        staging,
        locked_remaining: report.locked_remaining,
        staging_remaining: report.staging_remaining,
    })
}

/// Every object the books hold, resident and staged, and the books
/// emptied (`close`).
pub(crate) fn take_all(books: &mut Books, py: Python<'_>, garbage: &mut Garbage) -> PyResult<Vec<Py<PyAny>>> {
    let mut objects = Vec::new();
    for answer in books.resident.drain(..).flatten() {
        objects.push(answer.bind(py).get_item(1)?.unbind());
    }
    let staged: Vec<Stage> = books.staged.drain().flat_map(|(_, stages)| stages).collect();
    for stage in staged {
        objects.push(stage.object(py)?.unbind());
        books.tags.unused(py, stage.tag, garbage)?;
    }
    books.tier.clear(true);
    let ids: Vec<u32> = books.ids.held(py).map(|(id, _)| id).collect();
    for id in ids {
        books.forget_if_gone(TierKey::new(u64::from(id), 0), garbage);
    }
    Ok(objects)
}

/// LMCache's `is_key_evictable`: resident and not read-locked, or staged
/// under an expired reservation.
pub(crate) fn is_key_evictable(books: &mut Books, key: &Bound<'_, PyAny>) -> PyResult<bool> {
    let Some(id) = books.ids.lookup(key)? else { return Ok(false) };
    let key = TierKey::new(u64::from(id), 0);
    if books.tier.is_resident(key) && !books.tier.is_read_locked(key) {
        return Ok(true);
    }
    let Some(slot) = books.tier.slot_of(key) else { return Ok(false) };
    Ok(books
        .staged
        .get(&slot)
        .is_some_and(|stages| stages.iter().any(|stage| books.tier.stage_state(key, stage.tag) == Some(false))))
}
