//! `bitplan.lmcache.eviction_policy.SlotEvictionPolicy`: the positional fast
//! path. The caller names its keys by dense slot ids (a tier's slots, a
//! chunk table's rows) and passes them as numpy `uint32` arrays; eligibility
//! is a `Bitmap` over slots (the tier's "evictable" expression); victims come
//! back as a numpy `uint32` array. No Python object is made or hashed per
//! key.
//!
//! The slot-identity contract is tier-state's: S3-FIFO and ARC keep ghost
//! history by slot, so a slot must keep naming one key while the policy
//! [`remembers`](PySlotEvictionPolicy::remembers) it; `drain_released()`
//! lists the ghosts ARC dropped on its own, whose slots are free again.

use std::sync::{Mutex, MutexGuard, PoisonError};

use numpy::{IntoPyArray, PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use tier_state::{Eligible, KeyMeta};

use crate::bitmaps::flavor::AnyBitmap;
use crate::boundary::bits::{self, type_name};
use crate::eviction::native::Native;
use crate::eviction::policy::DETACH_SLOTS;

#[derive(Debug)]
struct SlotState {
    native: Native,
    name: String,
    slots: Vec<u32>,
    metas: Vec<KeyMeta>,
}

/// A native eviction policy over caller-chosen slots (see the module docs).
#[pyclass(name = "SlotEvictionPolicy", module = "bitplan.lmcache.eviction_policy", frozen)]
#[derive(Debug)]
pub(crate) struct PySlotEvictionPolicy {
    state: Mutex<SlotState>,
}

/// A 1-d numpy integer array or a sequence of ints, each a slot in
/// 0..2**32 - 1, copied into `out` (so that the policy can run with the GIL
/// released while no other thread can change what it reads).
fn read_slots(obj: &Bound<'_, PyAny>, what: &str, out: &mut Vec<u32>) -> PyResult<()> {
    out.clear();
    if let Ok(array) = obj.cast::<PyUntypedArray>() {
        if array.ndim() != 1 {
            return Err(PyValueError::new_err(format!(
                "{what}: expected a 1-d array, got {} dimensions",
                array.ndim()
            )));
        }
        let dtype = array.dtype();
        if dtype.kind() == b'u' && dtype.itemsize() == 4 {
            let values = obj.cast::<PyArray1<u32>>()?.readonly();
            match values.as_slice() {
                Ok(slice) => out.extend_from_slice(slice),
                Err(_) => out.extend(values.as_array().iter().copied()),
            }
        } else if dtype.kind() == b'u' || dtype.kind() == b'i' {
            let wide = obj.call_method1("astype", ("int64",))?.cast_into::<PyArray1<i64>>()?;
            for &value in wide.readonly().as_array() {
                out.push(slot_value(value, what)?);
            }
        } else {
            return Err(PyTypeError::new_err(format!("{what}: expected an integer array, got dtype {}", dtype.str()?)));
        }
    } else {
        for item in obj.try_iter()? {
            let value: i64 = item?.extract()?;
            out.push(slot_value(value, what)?);
        }
    }
    if out.len() > u32::MAX as usize {
        return Err(PyValueError::new_err(format!("{what}: more than 2**32 - 1 slots")));
    }
    Ok(())
}

fn slot_value(value: i64, what: &str) -> PyResult<u32> {
    u32::try_from(value)
        .ok()
        .filter(|&slot| slot != u32::MAX)
        .ok_or_else(|| PyValueError::new_err(format!("{what}: {value} is not a slot in 0..2**32 - 1")))
}

/// The `meta` argument: a 2-d integer array of shape (n, 5), columns
/// family, namespace, kv_rank, object group, salt.
fn read_metas(obj: &Bound<'_, PyAny>, n: usize, out: &mut Vec<KeyMeta>) -> PyResult<()> {
    out.clear();
    let array = obj
        .cast::<PyUntypedArray>()
        .map_err(|_| PyTypeError::new_err(format!("meta: expected a numpy array, got {}", type_name(obj))))?;
    if array.shape() != [n, 5] {
        return Err(PyValueError::new_err(format!(
            "meta: expected shape ({n}, 5) (family, namespace, kv_rank, group, salt per slot), got {:?}",
            array.shape()
        )));
    }
    let wide = obj.call_method1("astype", ("int64",))?.call_method0("ravel")?.cast_into::<PyArray1<i64>>()?;
    let values = wide.readonly();
    let values = values.as_array();
    let field = |value: i64| {
        u32::try_from(value).map_err(|_| PyValueError::new_err(format!("meta: {value} is not in 0..2**32")))
    };
    for row in 0..n {
        let at = row * 5;
        out.push(KeyMeta {
            family: field(values[at])?,
            namespace: field(values[at + 1])?,
            kv_rank: field(values[at + 2])?,
            group: field(values[at + 3])?,
            salt: field(values[at + 4])?,
        });
    }
    Ok(())
}

/// A `u32` array for numpy.
fn slots_array<'py>(py: Python<'py>, slots: Vec<u32>) -> Bound<'py, PyArray1<u32>> {
    slots.into_pyarray(py)
}

impl PySlotEvictionPolicy {
    fn lock(&self, py: Python<'_>) -> MutexGuard<'_, SlotState> {
        self.state.lock_py_attached(py).unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `op` on the slots in `slots`, with the GIL released for a
    /// large batch.
    fn event(
        &self,
        py: Python<'_>,
        slots: &Bound<'_, PyAny>,
        meta: Option<&Bound<'_, PyAny>>,
        op: impl FnOnce(&mut Native, &[u32], &[KeyMeta]) + Send,
    ) -> PyResult<()> {
        let mut state = self.lock(py);
        let SlotState { native, slots: batch, metas, .. } = &mut *state;
        read_slots(slots, "slots", batch)?;
        match meta {
            Some(meta) => read_metas(meta, batch.len(), metas)?,
            None => metas.clear(),
        }
        if batch.len() >= DETACH_SLOTS {
            bits::detach(py, || op(native, batch, metas));
        } else {
            op(native, batch, metas);
        }
        Ok(())
    }
}

#[pymethods]
impl PySlotEvictionPolicy {
    /// `SlotEvictionPolicy(policy="LRU", *, small_max_size=None)`: `policy`
    /// as LMCache's factory names it.
    #[new]
    #[pyo3(signature = (policy = "LRU", *, small_max_size = None))]
    fn new(policy: &str, small_max_size: Option<usize>) -> PyResult<PySlotEvictionPolicy> {
        Ok(PySlotEvictionPolicy {
            state: Mutex::new(SlotState {
                native: Native::new(policy, small_max_size, false)?,
                name: policy.to_owned(),
                slots: Vec::new(),
                metas: Vec::new(),
            }),
        })
    }

    /// The policy's factory name.
    #[getter]
    fn name(&self, py: Python<'_>) -> String {
        self.lock(py).name.clone()
    }

    /// Whether victims are chosen per salt (`IsolatedLRU`).
    #[getter]
    fn support_isolation(&self, py: Python<'_>) -> bool {
        self.lock(py).native.policy_ref().supports_isolation()
    }

    /// Slots were created (`on_keys_created`). `meta`, for the
    /// chunk-coherent LRUs: a (n, 5) integer array, per slot its family,
    /// namespace, kv_rank, object group and salt ids; without it each slot
    /// is a family of its own in salt 0.
    #[pyo3(signature = (slots, *, meta = None))]
    fn on_created(&self, py: Python<'_>, slots: &Bound<'_, PyAny>, meta: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.event(py, slots, meta, |native, slots, metas| native.created(slots, metas))
    }

    /// Slots were accessed (`on_keys_touched`); untracked slots are ignored.
    fn on_touched(&self, py: Python<'_>, slots: &Bound<'_, PyAny>) -> PyResult<()> {
        self.event(py, slots, None, |native, slots, _| native.policy().on_touched(slots))
    }

    /// Slots were deleted (`on_keys_removed`).
    fn on_removed(&self, py: Python<'_>, slots: &Bound<'_, PyAny>) -> PyResult<()> {
        self.event(py, slots, None, |native, slots, _| native.policy().on_removed(slots))
    }

    /// The victims for `ratio` (LMCache's rounding), in the policy's order,
    /// as a numpy `uint32` array. `eligible`: `None` (every slot), a
    /// `Bitmap` over slots (slots past its end are not eligible), or a
    /// callable `slot -> bool`. `cache_salt`: the salt id (`IsolatedLRU`
    /// only, which requires it).
    #[pyo3(signature = (ratio, eligible = None, cache_salt = None))]
    fn victims<'py>(
        &self,
        py: Python<'py>,
        ratio: f64,
        eligible: Option<Bound<'py, PyAny>>,
        cache_salt: Option<u32>,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let mut state = self.lock(py);
        let native = &mut state.native;
        if native.policy_ref().supports_isolation() && cache_salt.is_none() {
            return Err(PyValueError::new_err("IsolatedLRU needs a cache_salt: it has no global eviction path"));
        }
        let mut out = Vec::new();
        let large = native.policy_ref().num_tracked() >= DETACH_SLOTS;
        match &eligible {
            None if large => bits::detach(py, || native.victims(ratio, cache_salt, Eligible::All, &mut out)),
            None => native.victims(ratio, cache_salt, Eligible::All, &mut out),
            Some(obj) => {
                if let Some(bitmap) = AnyBitmap::operand(obj)? {
                    // The borrow keeps other threads from changing the bitmap meanwhile.
                    let bits: &bitmap_core::Bitmap = &bitmap;
                    if large {
                        bits::detach(py, || native.victims(ratio, cache_salt, Eligible::Bits(bits), &mut out));
                    } else {
                        native.victims(ratio, cache_salt, Eligible::Bits(bits), &mut out);
                    }
                } else if obj.is_callable() {
                    let mut error: Option<PyErr> = None;
                    let mut predicate = |slot: u32| -> bool {
                        if error.is_some() {
                            return false;
                        }
                        match obj.call1((slot,)).and_then(|answer| answer.is_truthy()) {
                            Ok(eligible) => eligible,
                            Err(e) => {
                                error = Some(e);
                                false
                            }
                        }
                    };
                    native.victims(ratio, cache_salt, Eligible::Predicate(&mut predicate), &mut out);
                    if let Some(error) = error {
                        return Err(error);
                    }
                } else {
                    return Err(PyTypeError::new_err(format!(
                        "eligible: expected None, a Bitmap over slots or a callable, got {}",
                        type_name(obj)
                    )));
                }
            }
        }
        drop(state);
        Ok(slots_array(py, out))
    }

    /// Whether the policy tracks `slot` or holds it as ghost history: while
    /// it does, the slot must keep naming the same key.
    fn remembers(&self, py: Python<'_>, slot: u32) -> bool {
        self.lock(py).native.policy_ref().remembers(slot)
    }

    /// Whether the policy tracks `slot`.
    fn is_tracked(&self, py: Python<'_>, slot: u32) -> bool {
        self.lock(py).native.policy_ref().is_tracked(slot)
    }

    /// The ghost slots the policy dropped on its own (ARC's trims) since the
    /// last call: free for new keys.
    fn drain_released<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        let mut out = Vec::new();
        self.lock(py).native.policy().drain_released(&mut out);
        slots_array(py, out)
    }

    /// How many slots the policy tracks (in salt `cache_salt`, for
    /// `IsolatedLRU`).
    #[pyo3(signature = (cache_salt = None))]
    fn num_tracked(&self, py: Python<'_>, cache_salt: Option<u32>) -> usize {
        let state = self.lock(py);
        match (&state.native, cache_salt) {
            (Native::IsolatedLru(policy), Some(salt)) => policy.num_tracked_in(salt),
            (native, _) => native.policy_ref().num_tracked(),
        }
    }

    /// Heap bytes the policy holds.
    fn memory_bytes(&self, py: Python<'_>) -> usize {
        self.lock(py).native.policy_ref().memory_bytes()
    }
}
