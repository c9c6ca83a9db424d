//! The flat prefetch policies (the seed's `select_load_plan` API) and the
//! `LoadPlan` with the controller's helpers.
//!
//! `PrefetchPolicy` is a base class a Python subclass may override; the
//! built-in subclasses plan in Rust, with the GIL released for large
//! requests. A plan's bitmaps are of the class of the lookup bitmaps.

use std::cell::RefCell;

use bitmap_core::Bitmap;
use prefetch_policy::{
    AdapterDescriptor, BalancedPolicy, DefaultPolicy, Keys, LoadPlan, LookupResults, PlanContract, PrefetchPolicy,
    RetainPolicy,
};
use pyo3::exceptions::{PyKeyError, PyNotImplementedError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::bitmaps::flavor::{AnyBitmap, Flavor};
use crate::boundary::args;
use crate::boundary::bits::detach_if_large;
use crate::boundary::errors::OrPyErr;

/// `bitplan.AdapterDescriptor`: an adapter's index, name and load weight.
#[pyclass(frozen, name = "AdapterDescriptor", module = "bitplan")]
#[derive(Clone, Debug)]
pub(crate) struct PyAdapterDescriptor {
    inner: AdapterDescriptor,
}

#[pymethods]
impl PyAdapterDescriptor {
    #[new]
    #[pyo3(signature = (index, name = String::new(), weight = 1.0))]
    fn new(index: &Bound<'_, PyAny>, name: String, weight: f64) -> PyResult<PyAdapterDescriptor> {
        let index = args::count(index, "an adapter index")?;
        let inner = AdapterDescriptor::new(index, name)
            .with_weight(weight)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PyAdapterDescriptor { inner })
    }

    #[getter]
    fn index(&self) -> usize {
        self.inner.index
    }

    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }

    #[getter]
    fn weight(&self) -> f64 {
        self.inner.weight.get()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyAdapterDescriptor>().is_ok_and(|other| other.get().inner == self.inner)
    }

    fn __hash__(&self) -> u64 {
        // Index and weight identify an adapter for planning; the name is a label.
        (self.inner.index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ self.inner.weight.get().to_bits()
    }

    fn __repr__(&self) -> String {
        format!(
            "AdapterDescriptor(index={}, name={:?}, weight={})",
            self.inner.index, self.inner.name, self.inner.weight
        )
    }
}

/// Reads adapters from any objects with `.index` (and, if `weights`,
/// `.weight`, 1 where absent), as the seed takes LMCache's descriptors.
fn adapters_from(objs: &Bound<'_, PyAny>, weights: bool, out: &mut Vec<AdapterDescriptor>) -> PyResult<()> {
    out.clear();
    for obj in objs.try_iter()? {
        let obj = obj?;
        if let Ok(descriptor) = obj.cast::<PyAdapterDescriptor>() {
            out.push(descriptor.get().inner.clone());
            continue;
        }
        let index = args::count(&obj.getattr(pyo3::intern!(obj.py(), "index"))?, "an adapter index")?;
        let mut adapter = AdapterDescriptor::new(index, String::new());
        // An adapter without `.weight` weighs 1, as `AdapterDescriptor` does.
        if weights && let Ok(weight) = obj.getattr(pyo3::intern!(obj.py(), "weight")) {
            adapter = adapter.with_weight(weight.extract()?).map_err(|e| PyValueError::new_err(e.to_string()))?;
        }
        out.push(adapter);
    }
    Ok(())
}

/// Borrows `index -> bitmap` entries from a dict (or any mapping).
fn lookup_entries<'py>(lookup: &Bound<'py, PyAny>) -> PyResult<Vec<(usize, AnyBitmap<'py>)>> {
    let mut entries = Vec::new();
    if let Ok(dict) = lookup.cast::<PyDict>() {
        for (index, bitmap) in dict.iter() {
            entries.push((args::count(&index, "an adapter index")?, AnyBitmap::borrow(&bitmap)?));
        }
    } else {
        let items = lookup.call_method0(pyo3::intern!(lookup.py(), "items")).map_err(|_| {
            PyTypeError::new_err(format!(
                "expected a mapping of adapter index to Bitmap, got {}",
                crate::boundary::bits::type_name(lookup)
            ))
        })?;
        for item in items.try_iter()? {
            let (index, bitmap): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item?.extract()?;
            entries.push((args::count(&index, "an adapter index")?, AnyBitmap::borrow(&bitmap)?));
        }
    }
    Ok(entries)
}

thread_local! {
    /// The lookups of a plan call, copied into buffers kept per thread, so
    /// that a warm thread reuses them instead of allocating.
    static LOOKUP: RefCell<LookupResults> = RefCell::new(LookupResults::new());
}

/// The lookup entries as a `LookupResults` (copied: it owns its bitmaps).
fn fill_lookup(lookup: &mut LookupResults, entries: &[(usize, &Bitmap)]) {
    lookup.clear();
    for &(index, bits) in entries {
        lookup.insert_clear(index, bits.len()).copy_from(bits);
    }
}

/// Borrowed views of the entries, for `fill_lookup`.
fn entry_refs<'a>(entries: &'a [(usize, AnyBitmap<'_>)]) -> Vec<(usize, &'a Bitmap)> {
    entries.iter().map(|(index, bitmap)| (*index, &**bitmap)).collect()
}

/// The entries as a `LookupResults` of their own, for the `LoadPlan`
/// helpers that take one (rarer than planning, so not the per-thread one).
fn owned_lookup(entries: &[(usize, AnyBitmap<'_>)]) -> LookupResults {
    let mut lookup = LookupResults::new();
    fill_lookup(&mut lookup, &entry_refs(entries));
    lookup
}

/// `bitplan.PrefetchPolicy`: the base class of the flat policies.
#[pyclass(subclass, name = "PrefetchPolicy", module = "bitplan")]
pub(crate) struct PyPrefetchPolicy {
    /// The Rust policy of a built-in subclass; `None` for the base class,
    /// whose `select_load_plan` a Python subclass must override.
    engine: Option<Box<dyn PrefetchPolicy>>,
}

impl PyPrefetchPolicy {
    fn with(engine: impl PrefetchPolicy + 'static) -> PyPrefetchPolicy {
        PyPrefetchPolicy { engine: Some(Box::new(engine)) }
    }

    fn engine(&self) -> PyResult<&dyn PrefetchPolicy> {
        self.engine.as_deref().ok_or_else(|| {
            PyNotImplementedError::new_err("PrefetchPolicy.select_load_plan must be overridden by a subclass")
        })
    }
}

/// Plans with a Rust policy: the lookups are borrowed under the GIL, then
/// copied and planned without it if they are large.
pub(crate) fn plan_with<'py>(
    engine: &dyn PrefetchPolicy,
    keys: &Bound<'py, PyAny>,
    lookup_results: &Bound<'py, PyAny>,
    adapters: &Bound<'py, PyAny>,
) -> PyResult<(LoadPlan, Flavor)> {
    let py = keys.py();
    let num_keys = args::key_count(keys)?;
    let entries = lookup_entries(lookup_results)?;
    let flavor = entries.first().map_or(Flavor::Bitplan, |(_, bitmap)| bitmap.flavor());
    let refs = entry_refs(&entries);
    let words = refs.iter().map(|(_, bits)| bits.num_words()).sum();
    // Read before LOOKUP is borrowed: `.index` may run Python code, which
    // may plan on this thread too.
    let mut descriptors = Vec::new();
    adapters_from(adapters, engine.name() == BalancedPolicy::NAME, &mut descriptors)?;
    let plan = detach_if_large(py, words, || {
        LOOKUP.with(|lookup| {
            let lookup = &mut *lookup.borrow_mut();
            fill_lookup(lookup, &refs);
            engine.select_load_plan(Keys::count(num_keys), lookup, &descriptors)
        })
    });
    Ok((plan.or_py_err()?, flavor))
}

/// A plan's entries as `dict[int, Bitmap]` of `flavor`'s class.
pub(crate) fn plan_dict(py: Python<'_>, plan: LoadPlan, flavor: Flavor) -> PyResult<Py<PyDict>> {
    let dict = PyDict::new(py);
    for (index, bits) in plan {
        dict.set_item(index, flavor.wrap(py, bits)?)?;
    }
    Ok(dict.unbind())
}

#[pymethods]
impl PyPrefetchPolicy {
    // Subclasses may take arguments of their own in `__init__`.
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> PyPrefetchPolicy {
        PyPrefetchPolicy { engine: None }
    }

    /// The registered name of a built-in policy, else the class name.
    #[getter]
    fn name(slf: &Bound<'_, Self>) -> PyResult<String> {
        if let Some(engine) = slf.try_borrow()?.engine.as_deref() {
            return Ok(engine.name().to_owned());
        }
        Ok(slf.get_type().name()?.to_string())
    }

    /// Adapter index -> the keys it loads.
    fn select_load_plan(
        &self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        lookup_results: &Bound<'_, PyAny>,
        adapters: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyDict>> {
        let (plan, flavor) = plan_with(self.engine()?, keys, lookup_results, adapters)?;
        plan_dict(py, plan, flavor)
    }

    /// One flag per key: `True` keeps it in L1.
    fn select_l1_retentions<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let num_keys = args::key_count(keys)?;
        let retentions = match &self.engine {
            Some(engine) => engine.select_l1_retentions(Keys::count(num_keys)),
            None => vec![false; num_keys],
        };
        PyList::new(py, retentions)
    }

    /// `select_load_plan` as a `LoadPlan`: calls the (possibly overridden)
    /// `select_load_plan` and checks its answer's lengths.
    fn load_plan(
        slf: &Bound<'_, Self>,
        keys: &Bound<'_, PyAny>,
        lookup_results: &Bound<'_, PyAny>,
        adapters: &Bound<'_, PyAny>,
    ) -> PyResult<PyLoadPlan> {
        let num_keys = args::key_count(keys)?;
        let entries =
            slf.call_method1(pyo3::intern!(slf.py(), "select_load_plan"), (keys, lookup_results, adapters))?;
        PyLoadPlan::from_mapping(num_keys, &entries)
    }
}

/// Declares a built-in policy class: `$name` in Python, `$engine` in Rust.
macro_rules! builtin_policy {
    ($(#[$doc:meta])* $class:ident($name:literal) extends $base:ty => $init:expr) => {
        $(#[$doc])*
        #[pyclass(extends = $base, subclass, name = $name, module = "bitplan")]
        pub(crate) struct $class;

        #[pymethods]
        impl $class {
            #[new]
            #[pyo3(signature = (*_args, **_kwargs))]
            fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> PyClassInitializer<$class> {
                $init
            }
        }
    };
}

builtin_policy! {
    /// `default`: the lowest-indexed adapter holding a key loads it.
    PyDefaultPolicy("DefaultPrefetchPolicy") extends PyPrefetchPolicy =>
        PyClassInitializer::from(PyPrefetchPolicy::with(DefaultPolicy::new())).add_subclass(PyDefaultPolicy)
}

builtin_policy! {
    /// `retain`: as `default`, and every key stays in L1.
    PyRetainPolicy("RetainPrefetchPolicy") extends PyDefaultPolicy =>
        PyClassInitializer::from(PyPrefetchPolicy::with(RetainPolicy::new()))
            .add_subclass(PyDefaultPolicy)
            .add_subclass(PyRetainPolicy)
}

builtin_policy! {
    /// `balanced`: replicated keys shared out by adapter weight.
    PyBalancedPolicy("BalancedPrefetchPolicy") extends PyPrefetchPolicy =>
        PyClassInitializer::from(PyPrefetchPolicy::with(BalancedPolicy::new())).add_subclass(PyBalancedPolicy)
}

/// `bitplan.LoadPlan`: adapter index -> the keys it loads, disjoint.
#[pyclass(name = "LoadPlan", module = "bitplan")]
pub(crate) struct PyLoadPlan {
    plan: LoadPlan,
    /// The class of the bitmaps handed out.
    flavor: Flavor,
}

impl PyLoadPlan {
    fn from_mapping(num_keys: usize, entries: &Bound<'_, PyAny>) -> PyResult<PyLoadPlan> {
        let entries = lookup_entries(entries)?;
        let flavor = entries.first().map_or(Flavor::Bitplan, |(_, bitmap)| bitmap.flavor());
        let plan = LoadPlan::from_entries(num_keys, entries.iter().map(|(index, bits)| (*index, Bitmap::clone(bits))))
            .or_py_err()?;
        Ok(PyLoadPlan { plan, flavor })
    }

    fn wrap(&self, py: Python<'_>, bits: &Bitmap) -> PyResult<Py<PyAny>> {
        self.flavor.wrap(py, bits.clone())
    }
}

#[pymethods]
impl PyLoadPlan {
    #[new]
    #[pyo3(signature = (num_keys, entries = None))]
    fn new(num_keys: &Bound<'_, PyAny>, entries: Option<&Bound<'_, PyAny>>) -> PyResult<PyLoadPlan> {
        let num_keys = args::count(num_keys, "num_keys")?;
        match entries {
            Some(entries) => PyLoadPlan::from_mapping(num_keys, entries),
            None => Ok(PyLoadPlan { plan: LoadPlan::new(num_keys), flavor: Flavor::Bitplan }),
        }
    }

    #[getter]
    fn num_keys(&self) -> usize {
        self.plan.num_keys()
    }

    fn __len__(&self) -> usize {
        self.plan.len()
    }

    fn __contains__(&self, adapter: usize) -> bool {
        self.plan.contains_adapter(adapter)
    }

    fn __getitem__(&self, py: Python<'_>, adapter: usize) -> PyResult<Py<PyAny>> {
        match self.plan.get(adapter) {
            Some(bits) => self.wrap(py, bits),
            None => Err(PyKeyError::new_err(adapter)),
        }
    }

    fn adapters(&self) -> Vec<usize> {
        self.plan.adapters().collect()
    }

    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        plan_dict(py, self.plan.clone(), self.flavor)
    }

    fn planned_count(&self) -> usize {
        self.plan.planned_count()
    }

    fn merged(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::boundary::memory::ensure_bits(self.plan.num_keys())?;
        self.flavor.wrap(py, self.plan.merged())
    }

    fn prefix_len(&self) -> usize {
        self.plan.prefix_len()
    }

    fn trim_to_prefix(&mut self, n: &Bound<'_, PyAny>) -> PyResult<()> {
        self.plan.trim_to_prefix(args::count(n, "n")?);
        Ok(())
    }

    fn trim_to_loadable_prefix(&mut self) -> usize {
        self.plan.trim_to_loadable_prefix()
    }

    /// Per lookup entry, the keys it holds (and locked) that the plan does not load.
    fn unlock_masks(&self, py: Python<'_>, lookup_results: &Bound<'_, PyAny>) -> PyResult<Py<PyDict>> {
        let lookup = owned_lookup(&lookup_entries(lookup_results)?);
        let masks = self.plan.unlock_masks(&lookup).or_py_err()?;
        let dict = PyDict::new(py);
        for (index, bits) in masks {
            dict.set_item(index, self.flavor.wrap(py, bits)?)?;
        }
        Ok(dict.unbind())
    }

    /// Adapter index -> the items (one per key) that adapter loads.
    fn gather(&self, py: Python<'_>, items: &Bound<'_, PyAny>) -> PyResult<Py<PyDict>> {
        let items: Vec<Bound<'_, PyAny>> = items.try_iter()?.collect::<PyResult<_>>()?;
        let gathered = self.plan.gather(&items).or_py_err()?;
        let dict = PyDict::new(py);
        for (index, loads) in gathered {
            dict.set_item(index, PyList::new(py, loads)?)?;
        }
        Ok(dict.unbind())
    }

    /// `ValueError` unless each key is planned at most once and only from
    /// an adapter whose lookup holds it.
    fn validate(&self, lookup_results: &Bound<'_, PyAny>) -> PyResult<()> {
        let entries = lookup_entries(lookup_results)?;
        let lookup = owned_lookup(&entries);
        let adapters: Vec<AdapterDescriptor> =
            entries.iter().map(|(index, _)| AdapterDescriptor::new(*index, String::new())).collect();
        self.plan.validate_with(&lookup, &adapters, PlanContract::Sound).or_py_err()
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.plan)
    }
}

/// The seed's `DefaultPrefetchPolicy.select_load_plan` as a function, for
/// `bitplan.lmcache.prefetch_policy`, whose policy classes are plain
/// Python classes (LMCache's ABC) that call it.
#[pyfunction]
pub(crate) fn select_first_wins(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    lookup_results: &Bound<'_, PyAny>,
    adapters: &Bound<'_, PyAny>,
) -> PyResult<Py<PyDict>> {
    let (plan, flavor) = plan_with(&DefaultPolicy::new(), keys, lookup_results, adapters)?;
    plan_dict(py, plan, flavor)
}
