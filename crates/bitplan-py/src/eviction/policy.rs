//! `bitplan.lmcache.eviction_policy`'s policy classes, LMCache's face: the
//! native base `_EvictionCore` that `LRUEvictionPolicy`,
//! `IsolatedLRUEvictionPolicy`, `S3FIFOEvictionPolicy`,
//! `ARCEvictionPolicy` and `NoOpEvictionPolicy` subclass in Python.
//!
//! Keys are any hashable Python objects (LMCache's `ObjectKey`); the
//! [`KeyTable`] gives each a dense slot once, and every event reaches the
//! native policy as one batch of slots. A key keeps its slot while the
//! policy remembers it (tracked, or held as ghost history by S3-FIFO and
//! ARC): tier-state's policies keep ghosts by slot, so a slot must keep
//! naming one key while it is remembered. When the policy lets a slot go
//! (a removal, a ghost trimmed), the table lets the key go.
//!
//! One lock per policy object, taken with the GIL released while waiting.
//! The native work on a batch of [`DETACH_SLOTS`] or more runs with the GIL
//! released; the per-key work (the key's `__hash__`, the filter) needs it.
//! A key whose `__hash__` or `__eq__`, or a filter, that calls back into
//! the same policy object would deadlock on its lock.

use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::{MutexExt, PyOnceLock};
use pyo3::types::{PyDict, PyList};
use tier_state::{Eligible, KeyMeta};

use crate::boundary::bits;
use crate::eviction::native::Native;
use crate::key_table::table::KeyTable;

/// Batches of at least this many slots run the native policy with the GIL
/// released: at about 10 ns a slot that is 40 µs, against a tenth of a
/// microsecond to release and retake the GIL.
pub(crate) const DETACH_SLOTS: usize = 4096;

/// `EvictionAction`, the dataclass the answers are made of, registered by
/// the Python module at import.
static ACTION_TYPE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Registers LMCache's `EvictionAction` class (`destination`, `keys`).
#[pyfunction(name = "_register_eviction_action")]
pub(crate) fn register_eviction_action(py: Python<'_>, action: Bound<'_, PyAny>) {
    // A second registration (a reloaded module) keeps the first class.
    let _ = ACTION_TYPE.set(py, action.unbind());
}

/// The state behind the lock.
#[derive(Debug)]
struct Core {
    native: Native,
    table: KeyTable,
    destinations: Vec<Py<PyAny>>,
    default_destination: Py<PyAny>,
    /// Scratch, reused by every call.
    slots: Vec<u32>,
    metas: Vec<KeyMeta>,
    victims: Vec<u32>,
    released: Vec<u32>,
}

/// Key objects let go of, dropped once the lock is released (a finalizer
/// may run Python code).
type Garbage = Vec<Py<PyAny>>;

impl Core {
    /// Lets go of the keys of `slots` (and of the ghosts the policy
    /// dropped on its own) that the policy no longer remembers.
    fn settle(&mut self, candidates: Candidates, garbage: &mut Garbage) {
        let Core { native, table, slots, released, .. } = self;
        released.clear();
        native.policy().drain_released(released);
        let policy = native.policy_ref();
        let batch: &[u32] = match candidates {
            Candidates::Batch => slots,
            Candidates::None => &[],
        };
        for &slot in batch.iter().chain(released.iter()) {
            if !policy.remembers(slot)
                && let Some(key) = table.release(slot)
            {
                garbage.push(key);
            }
        }
    }

    /// The slots of `keys` into `self.slots`: new slots for unknown keys if
    /// `assign`, else unknown keys are skipped.
    fn resolve(&mut self, keys: &Bound<'_, PyAny>, assign: bool, garbage: &mut Garbage) -> PyResult<()> {
        self.slots.clear();
        self.metas.clear();
        let with_meta = assign && self.native.wants_meta();
        let mut failed = None;
        for key in keys.try_iter()? {
            let found =
                key.and_then(|key| if assign { self.table.slot(&key).map(Some) } else { self.table.lookup(&key) });
            match found {
                Ok(Some(slot)) => {
                    self.slots.push(slot);
                    if with_meta {
                        self.metas.push(self.table.meta(slot));
                    }
                }
                Ok(None) => {}
                Err(error) => {
                    failed = Some(error);
                    break;
                }
            }
        }
        if let Some(error) = failed {
            // The policy hears nothing of this batch: new keys go again.
            self.settle(Candidates::Batch, garbage);
            return Err(error);
        }
        Ok(())
    }
}

/// Which slots [`Core::settle`] looks at besides the policy's dropped ghosts.
#[derive(Clone, Copy)]
enum Candidates {
    /// The call's batch (`Core::slots`).
    Batch,
    /// None.
    None,
}

/// The native base of LMCache's policy classes (see the module docs).
#[pyclass(name = "_EvictionCore", module = "bitplan.lmcache.eviction_policy", frozen, subclass)]
#[derive(Debug)]
pub(crate) struct PyEvictionCore {
    core: Mutex<Core>,
}

impl PyEvictionCore {
    fn lock(&self, py: Python<'_>) -> MutexGuard<'_, Core> {
        self.core.lock_py_attached(py).unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `op` on the native policy with the call's slots, with the GIL
    /// released for a large batch.
    fn run(py: Python<'_>, core: &mut Core, op: impl FnOnce(&mut Native, &[u32], &[KeyMeta]) + Send) {
        let Core { native, slots, metas, .. } = core;
        if slots.len() >= DETACH_SLOTS {
            bits::detach(py, || op(native, slots, metas));
        } else {
            op(native, slots, metas);
        }
    }
}

#[pymethods]
impl PyEvictionCore {
    /// `_EvictionCore(policy, default_destination, small_max_size=None,
    /// plain=False)`: `policy` as LMCache's factory names it; `plain` takes
    /// the LRUs' victims key by key, as LMCache 0.5.6's release does.
    #[new]
    #[pyo3(signature = (policy, default_destination, small_max_size = None, plain = false))]
    fn new(
        policy: &str,
        default_destination: Py<PyAny>,
        small_max_size: Option<usize>,
        plain: bool,
    ) -> PyResult<PyEvictionCore> {
        let native = Native::new(policy, small_max_size, plain)?;
        let table = KeyTable::new(native.wants_meta());
        Ok(PyEvictionCore {
            core: Mutex::new(Core {
                native,
                table,
                destinations: Vec::new(),
                default_destination,
                slots: Vec::new(),
                metas: Vec::new(),
                victims: Vec::new(),
                released: Vec::new(),
            }),
        })
    }

    /// LMCache's `register_eviction_destination`: the first one registered
    /// is used; registering one again changes nothing.
    fn register_eviction_destination(&self, py: Python<'_>, destination: Bound<'_, PyAny>) -> PyResult<()> {
        let mut core = self.lock(py);
        for known in &core.destinations {
            let known = known.bind(py);
            if known.is(&destination) || known.eq(&destination)? {
                return Ok(());
            }
        }
        core.destinations.push(destination.unbind());
        Ok(())
    }

    /// LMCache's `on_keys_created`: unknown keys are tracked, known ones
    /// refreshed (each policy's rules).
    fn on_keys_created(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut garbage = Garbage::new();
        {
            let mut core = self.lock(py);
            core.resolve(keys, true, &mut garbage)?;
            if !core.slots.is_empty() {
                Self::run(py, &mut core, |native, slots, metas| native.created(slots, metas));
                core.settle(Candidates::Batch, &mut garbage);
            }
        }
        drop(garbage);
        Ok(())
    }

    /// LMCache 0.5.6's `on_keys_reserved`: keys a write reserved. ARC
    /// tracks them in T1 without counting the write as an access; the
    /// other policies take them as created (the interface's default).
    fn on_keys_reserved(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut garbage = Garbage::new();
        {
            let mut core = self.lock(py);
            core.resolve(keys, true, &mut garbage)?;
            if !core.slots.is_empty() {
                Self::run(py, &mut core, |native, slots, metas| match native {
                    Native::Arc(arc) => arc.on_reserved(slots),
                    other => other.created(slots, metas),
                });
                core.settle(Candidates::Batch, &mut garbage);
            }
        }
        drop(garbage);
        Ok(())
    }

    /// LMCache's `on_keys_touched`: unknown keys are ignored.
    fn on_keys_touched(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut garbage = Garbage::new();
        {
            let mut core = self.lock(py);
            core.resolve(keys, false, &mut garbage)?;
            if !core.slots.is_empty() {
                Self::run(py, &mut core, |native, slots, _| native.policy().on_touched(slots));
                core.settle(Candidates::None, &mut garbage);
            }
        }
        drop(garbage);
        Ok(())
    }

    /// LMCache's `on_keys_removed`: the keys are forgotten (ARC keeps a
    /// victim it chose as ghost history).
    fn on_keys_removed(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut garbage = Garbage::new();
        {
            let mut core = self.lock(py);
            core.resolve(keys, false, &mut garbage)?;
            if !core.slots.is_empty() {
                Self::run(py, &mut core, |native, slots, _| native.policy().on_removed(slots));
                core.settle(Candidates::Batch, &mut garbage);
            }
        }
        drop(garbage);
        Ok(())
    }

    /// LMCache's `get_eviction_actions`: `[]`, or one `EvictionAction` whose
    /// keys are the victims in the policy's order.
    #[pyo3(signature = (expected_ratio, key_eligible_filter = None, cache_salt = None))]
    fn get_eviction_actions<'py>(
        &self,
        py: Python<'py>,
        expected_ratio: f64,
        key_eligible_filter: Option<Bound<'py, PyAny>>,
        cache_salt: Option<&str>,
    ) -> PyResult<Bound<'py, PyList>> {
        let action_type = ACTION_TYPE
            .get(py)
            .ok_or_else(|| PyRuntimeError::new_err("import bitplan.lmcache.eviction_policy first"))?;
        let mut garbage = Garbage::new();
        let answer = {
            let mut core = self.lock(py);
            let core = &mut *core;
            let isolated = core.native.policy_ref().supports_isolation();
            let salt = match (isolated, cache_salt) {
                (true, None) => {
                    return Err(PyValueError::new_err(
                        "IsolatedLRUEvictionPolicy.get_eviction_actions requires cache_salt; this policy is \
                         per-bucket and has no global eviction path.",
                    ));
                }
                (true, Some(name)) => match core.table.salt_id(name) {
                    Some(id) => Some(id),
                    // No key ever had this salt: nothing to evict.
                    None => return Ok(PyList::empty(py)),
                },
                (false, _) => None,
            };
            core.victims.clear();
            let Core { native, table, victims, .. } = &mut *core;
            match &key_eligible_filter {
                None => {
                    if native.policy_ref().num_tracked() >= DETACH_SLOTS {
                        bits::detach(py, || native.victims(expected_ratio, salt, Eligible::All, victims));
                    } else {
                        native.victims(expected_ratio, salt, Eligible::All, victims);
                    }
                }
                Some(filter) => {
                    // The filter's first error ends the scan (every later key
                    // counts as refused) and is raised once the policy is done.
                    let mut error: Option<PyErr> = None;
                    let mut predicate = |slot: u32| -> bool {
                        if error.is_some() {
                            return false;
                        }
                        let Some(key) = table.key(py, slot) else { return false };
                        match filter.call1((key,)).and_then(|answer| answer.is_truthy()) {
                            Ok(eligible) => eligible,
                            Err(e) => {
                                error = Some(e);
                                false
                            }
                        }
                    };
                    native.victims(expected_ratio, salt, Eligible::Predicate(&mut predicate), victims);
                    if let Some(error) = error {
                        core.settle(Candidates::None, &mut garbage);
                        return Err(error);
                    }
                }
            }
            let answer = if core.victims.is_empty() {
                None
            } else {
                let keys = PyList::new(py, core.victims.iter().filter_map(|&slot| core.table.key(py, slot)))?;
                let destination = core.destinations.first().unwrap_or(&core.default_destination).clone_ref(py);
                Some((keys, destination))
            };
            core.settle(Candidates::None, &mut garbage);
            answer
        };
        drop(garbage);
        let Some((keys, destination)) = answer else { return Ok(PyList::empty(py)) };
        let kwargs = PyDict::new(py);
        kwargs.set_item(pyo3::intern!(py, "destination"), destination)?;
        kwargs.set_item(pyo3::intern!(py, "keys"), keys)?;
        let action = action_type.bind(py).call((), Some(&kwargs))?;
        PyList::new(py, [action])
    }

    /// LMCache's `get_num_tracked_keys`: the keys the policy tracks (ARC:
    /// resident only; S3-FIFO: small and main), in one salt if given
    /// (isolated LRU).
    #[pyo3(signature = (cache_salt = None))]
    fn get_num_tracked_keys(&self, py: Python<'_>, cache_salt: Option<&str>) -> usize {
        let core = self.lock(py);
        match (&core.native, cache_salt) {
            (Native::IsolatedLru(policy), Some(name)) => {
                core.table.salt_id(name).map_or(0, |salt| policy.num_tracked_in(salt))
            }
            (native, _) => native.policy_ref().num_tracked(),
        }
    }

    /// LRU's `get_eviction_candidates(count)`: the first `count` keys of the
    /// LRU order, oldest first (no families, no filter).
    fn _eviction_candidates<'py>(&self, py: Python<'py>, count: i64) -> PyResult<Bound<'py, PyList>> {
        let core = self.lock(py);
        let order = match &core.native {
            Native::Lru(policy) | Native::PlainLru(policy) => policy.order(),
            _ => Vec::new(),
        };
        // LMCache's loop appends the first key before it compares the count.
        let take = usize::try_from(count).unwrap_or(0).max(1);
        PyList::new(py, order.iter().take(take).filter_map(|&slot| core.table.key(py, slot)))
    }

    /// The tracked keys oldest first: an LRU's whole order, or one salt's
    /// (the isolated LRU; `[]` for a salt no key has). `capture()` reads it.
    #[pyo3(signature = (cache_salt = None))]
    fn _order<'py>(&self, py: Python<'py>, cache_salt: Option<&str>) -> PyResult<Bound<'py, PyList>> {
        let core = self.lock(py);
        let order = match (&core.native, cache_salt) {
            (Native::Lru(policy) | Native::PlainLru(policy), _) => policy.order(),
            (Native::IsolatedLru(policy), Some(name)) => {
                core.table.salt_id(name).map_or_else(Vec::new, |salt| policy.order(salt))
            }
            _ => Vec::new(),
        };
        PyList::new(py, order.iter().filter_map(|&slot| core.table.key(py, slot)))
    }

    /// Forgets every key (`restore()` starts from this).
    fn _clear(&self, py: Python<'_>) {
        let mut garbage = Garbage::new();
        {
            let mut core = self.lock(py);
            let core = &mut *core;
            core.native.policy().clear();
            core.slots.clear();
            let held: Vec<u32> = core.table.held(py).map(|(slot, _)| slot).collect();
            for slot in held {
                if let Some(key) = core.table.release(slot) {
                    garbage.push(key);
                }
            }
        }
        drop(garbage);
    }

    /// ARC's `get_debug_state()`: `t1`, `t2`, `b1`, `b2` (oldest first),
    /// `capacity`, `target_t1_size`.
    fn _debug_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let core = self.lock(py);
        let out = PyDict::new(py);
        if let Native::Arc(policy) = &core.native {
            let state = policy.state();
            let keys = |slots: &[u32]| PyList::new(py, slots.iter().filter_map(|&slot| core.table.key(py, slot)));
            out.set_item("t1", keys(&state.t1)?)?;
            out.set_item("t2", keys(&state.t2)?)?;
            out.set_item("b1", keys(&state.b1)?)?;
            out.set_item("b2", keys(&state.b2)?)?;
            out.set_item("capacity", state.capacity)?;
            out.set_item("target_t1_size", state.target_t1_size)?;
        }
        Ok(out)
    }

    /// Isolated LRU's `get_tracked_salts()`: the salts with a tracked key.
    fn _tracked_salts(&self, py: Python<'_>) -> Vec<String> {
        let core = self.lock(py);
        match &core.native {
            Native::IsolatedLru(policy) => {
                policy.salts().into_iter().map(|salt| core.table.salt_name(salt).to_owned()).collect()
            }
            _ => Vec::new(),
        }
    }

    /// How many keys hold a slot (tracked, or ghost history): the tests
    /// check that the table lets keys go.
    fn _held_keys(&self, py: Python<'_>) -> usize {
        self.lock(py).table.len()
    }

    /// Heap bytes of the native policy.
    fn _native_memory_bytes(&self, py: Python<'_>) -> usize {
        self.lock(py).native.policy_ref().memory_bytes()
    }
}
