//! What both faces of `bitplan.lmcache.tiers` share: tier-state's errors as
//! Python exceptions, LMCache's `L1Error` members that the answers hold,
//! writer tags, the `ManualClock` tests move by hand, and how a tier is
//! built from Python arguments.

use std::collections::HashMap;

use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyInt, PyString, PyTuple};
use tier_state::{Clock, ManualClock, Outcome, SystemClock, Tier, TierConfig, TierError, create_policy};

use crate::boundary::errors::IntoPyErr;

impl IntoPyErr for TierError {
    fn into_py_err(self) -> PyErr {
        match self {
            TierError::ImpossibleCapacity { .. } => PyMemoryError::new_err(self.to_string()),
            _ => PyValueError::new_err(self.to_string()),
        }
    }
}

/// `bitplan.lmcache.tiers.L1Error`'s members in code order, registered by
/// the Python module at import (an `IntEnum` is a Python class; the answers
/// hold its members, not new ints).
static L1_ERRORS: PyOnceLock<Vec<Py<PyAny>>> = PyOnceLock::new();

/// Registers `L1Error`'s seven members, in LMCache's order (SUCCESS first).
#[pyfunction(name = "_register_l1_errors")]
pub(crate) fn register_l1_errors(py: Python<'_>, members: &Bound<'_, PyTuple>) -> PyResult<()> {
    let members = checked_l1_errors(members)?;
    // A second registration (a reloaded module) keeps the first members.
    let _ = L1_ERRORS.set(py, members);
    Ok(())
}

/// An `L1Error` enum's seven members, checked to be LMCache's, in its
/// order (SUCCESS first).
pub(crate) fn checked_l1_errors(members: &Bound<'_, PyTuple>) -> PyResult<Vec<Py<PyAny>>> {
    if members.len() != Outcome::ALL.len() {
        return Err(PyValueError::new_err(format!(
            "{} L1Error members, expected {}",
            members.len(),
            Outcome::ALL.len()
        )));
    }
    for (member, outcome) in members.iter().zip(Outcome::ALL) {
        let name: String = member.getattr("name")?.extract()?;
        if name != outcome.name() {
            return Err(PyValueError::new_err(format!("L1Error member {name}, expected {}", outcome.name())));
        }
    }
    Ok(members.iter().map(Bound::unbind).collect())
}

/// The `L1Error` members, indexed by [`Outcome`] (as `u8`).
pub(crate) fn l1_errors(py: Python<'_>) -> PyResult<&[Py<PyAny>]> {
    L1_ERRORS
        .get(py)
        .map(Vec::as_slice)
        .ok_or_else(|| PyRuntimeError::new_err("import bitplan.lmcache.tiers first: it registers L1Error"))
}

/// The answers `(code, None)` of failed keys, one tuple per code and call
/// (a miss-heavy `reserve_read` makes no tuple per key).
pub(crate) struct Failures<'py> {
    codes: &'py [Py<PyAny>],
    made: [Option<Bound<'py, PyAny>>; 7],
}

impl<'py> Failures<'py> {
    pub(crate) fn new(codes: &'py [Py<PyAny>]) -> Failures<'py> {
        Failures { codes, made: Default::default() }
    }

    pub(crate) fn get(&mut self, py: Python<'py>, outcome: Outcome) -> PyResult<Bound<'py, PyAny>> {
        let at = outcome as usize;
        if let Some(made) = &self.made[at] {
            return Ok(made.clone());
        }
        let made = PyTuple::new(py, [self.codes[at].bind(py).clone(), py.None().into_bound(py)])?.into_any();
        self.made[at] = Some(made.clone());
        Ok(made)
    }
}

/// A writer's tag: LMCache's `tag: str`, or an int the caller numbers its
/// writers with. Strings are numbered in the order a tier first sees them,
/// and the numbers are kept for the tier's life: a caller that makes a new
/// tag string per request should pass ints instead.
#[derive(Debug, Default)]
pub(crate) struct Tags {
    by_name: HashMap<String, u32>,
    /// The strings, by id - FIRST_NAMED_TAG.
    names: Vec<String>,
}

/// Int tags are below this; interned strings are numbered from it.
const FIRST_NAMED_TAG: u32 = 1 << 31;

impl Tags {
    pub(crate) fn id(&mut self, tag: &Bound<'_, PyAny>) -> PyResult<u32> {
        if let Ok(name) = tag.cast::<PyString>() {
            let name = name.to_str()?;
            if let Some(&id) = self.by_name.get(name) {
                return Ok(id);
            }
            let id = FIRST_NAMED_TAG
                .checked_add(u32::try_from(self.by_name.len()).unwrap_or(u32::MAX))
                .ok_or_else(|| PyValueError::new_err("too many tag strings"))?;
            self.by_name.insert(name.to_owned(), id);
            self.names.push(name.to_owned());
            return Ok(id);
        }
        if tag.is_instance_of::<PyInt>() {
            return match tag.extract::<u32>() {
                Ok(id) if id < FIRST_NAMED_TAG => Ok(id),
                _ => Err(PyValueError::new_err(format!("an int tag is in 0..{FIRST_NAMED_TAG}, got {tag}"))),
            };
        }
        Err(PyTypeError::new_err(format!("a tag is a str or an int, not {}", crate::boundary::bits::type_name(tag))))
    }

    /// The tag as the caller gave it: its string, or its int.
    pub(crate) fn name<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyAny>> {
        match id.checked_sub(FIRST_NAMED_TAG).and_then(|at| self.names.get(at as usize)) {
            Some(name) => Ok(PyString::new(py, name).into_any()),
            None => Ok(id.into_pyobject(py)?.into_any()),
        }
    }
}

/// `bitplan.lmcache.tiers.ManualClock`: a monotonic millisecond clock that
/// moves only when told, for tests that decide when locks expire. A tier
/// built with it reads it; the test keeps the same object and moves it.
#[pyclass(name = "ManualClock", module = "bitplan.lmcache.tiers", frozen)]
#[derive(Debug)]
pub(crate) struct PyManualClock {
    pub(crate) clock: ManualClock,
}

#[pymethods]
impl PyManualClock {
    #[new]
    #[pyo3(signature = (now_ms = 0))]
    fn new(now_ms: u64) -> PyManualClock {
        PyManualClock { clock: ManualClock::new(now_ms) }
    }

    /// The time, in ms.
    fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Moves the clock `ms` forward.
    fn advance(&self, ms: u64) {
        self.clock.advance(ms);
    }

    /// Sets the clock to `now_ms`.
    fn set(&self, now_ms: u64) {
        self.clock.set(now_ms);
    }

    fn __repr__(&self) -> String {
        format!("ManualClock({})", self.clock.now_ms())
    }
}

/// A lock lifetime in seconds (LMCache's `*_ttl_seconds`) as ms.
fn ttl_ms(seconds: f64, name: &str) -> PyResult<u64> {
    if seconds.is_finite() && seconds >= 0.0 && seconds * 1000.0 < u64::MAX as f64 {
        Ok((seconds * 1000.0) as u64)
    } else {
        Err(PyValueError::new_err(format!("{name} must be a finite number of seconds >= 0, got {seconds}")))
    }
}

/// A tier from the constructors' arguments: LMCache's lifetimes in
/// seconds, an optional row bound, the clock (the system's by default) and
/// the eviction policy LMCache's factory names (`ValueError` listing the
/// known names for another). `MemoryError` for an impossible capacity,
/// before anything is allocated (tier-state checks it first).
pub(crate) fn build_tier(
    capacity: usize,
    read_ttl_seconds: f64,
    write_ttl_seconds: f64,
    rows: Option<u32>,
    clock: Option<&PyManualClock>,
    eviction_policy: &str,
) -> PyResult<Tier> {
    let policy = create_policy(eviction_policy).map_err(|err| PyValueError::new_err(err.to_string()))?;
    let mut config = TierConfig::new(capacity)
        .with_ttls_ms(ttl_ms(read_ttl_seconds, "read_ttl_seconds")?, ttl_ms(write_ttl_seconds, "write_ttl_seconds")?);
    if let Some(rows) = rows {
        config = config.with_rows(rows);
    }
    let clock: Box<dyn Clock> = match clock {
        Some(manual) => Box::new(manual.clock.clone()),
        None => Box::new(SystemClock::new()),
    };
    Tier::with_parts(config, clock, policy).map_err(IntoPyErr::into_py_err)
}
