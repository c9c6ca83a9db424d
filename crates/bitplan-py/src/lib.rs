//! `bitplan._native`: the compiled core of the `bitplan` Python package.
//!
//! A thin binding over the Rust crates (bitmap-core, prefetch-policy): no
//! algorithm lives here, only the conversion of Python arguments and
//! results, the mapping of errors to the right Python exceptions, and the
//! release of the GIL around work large enough to matter. The Python
//! package (`python/bitplan/`) re-exports it as the Pythonic API and, in
//! `bitplan.lmcache`, as a drop-in for LMCache's native module, its bitmap
//! operations and its prefetch policies.
//!
//! The only `unsafe` code is the buffer protocol of `Bitmap` (PyO3's
//! `__getbuffer__`/`__releasebuffer__` are `unsafe fn`s by contract).

mod bitmaps;
mod boundary;
mod eviction;
mod integration;
mod key_table;
mod lmcache;
mod plans;
mod replay;
mod tiers;

use pyo3::prelude::*;

/// The kernel bitmap-core dispatches to on this CPU.
#[pyfunction]
fn active_kernel() -> &'static str {
    bitmap_core::kernel::Kernel::active().name()
}

/// Every kernel this CPU can run.
#[pyfunction]
fn available_kernels() -> Vec<&'static str> {
    bitmap_core::kernel::Kernel::available().into_iter().map(|kernel| kernel.name()).collect()
}

/// `prefetch-plan features`'s report, in its words: the CPU features that
/// matter to the kernels, the kernels this CPU runs and the active one, as
/// text or one line of JSON; and the error when `BITMAP_CORE_KERNEL` names
/// a kernel that cannot run here (the report then says `active: none`).
/// For `python -m bitplan` (`bitplan/__main__.py`).
#[pyfunction(name = "_features_report")]
#[pyo3(signature = (json = false))]
fn features_report(json: bool) -> PyResult<(String, Option<String>)> {
    let (report, error) = prefetch_plan::features::FeatureReport::detect();
    let mut out = Vec::new();
    if json { report.write_json(&mut out) } else { report.write_text(&mut out) }
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
    Ok((String::from_utf8_lossy(&out).into_owned(), error.map(|e| e.to_string())))
}

/// `prefetch-plan bench`'s table (or one line of JSON): each kernel this CPU
/// runs against a plain copy of the same bytes, at 1 Ki and 32 Mi bits,
/// `measure_ms` per row, with the GIL released. For `python -m bitplan
/// --bench`.
#[pyfunction(name = "_bench_report")]
#[pyo3(signature = (measure_ms = 100, json = false))]
fn bench_report(py: Python<'_>, measure_ms: u64, json: bool) -> PyResult<String> {
    use prefetch_plan::bench_cmd::{self, BenchOptions};
    let options = BenchOptions::default().with_measure(std::time::Duration::from_millis(measure_ms.clamp(1, 60_000)));
    let report = boundary::bits::detach(py, || bench_cmd::run(&options))
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    let mut out = Vec::new();
    if json { report.write_json(&mut out) } else { report.write_table(&mut out) }
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// How this module was built: rustc's version (recorded by build.rs), the
/// target triple and the cargo profile.
#[pyfunction(name = "_build_info")]
fn build_info() -> [(&'static str, &'static str); 3] {
    [
        ("rustc", env!("BITPLAN_RUSTC_VERSION")),
        ("target", env!("BITPLAN_BUILD_TARGET")),
        ("profile", env!("BITPLAN_BUILD_PROFILE")),
    ]
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("FULL_ATTENTION_WINDOW", prefetch_policy::FULL_ATTENTION_WINDOW)?;
    m.add_function(wrap_pyfunction!(active_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(available_kernels, m)?)?;
    m.add_function(wrap_pyfunction!(features_report, m)?)?;
    m.add_function(wrap_pyfunction!(bench_report, m)?)?;
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    m.add_function(wrap_pyfunction!(boundary::bits::detached_calls, m)?)?;

    m.add_class::<bitmaps::flavor::PyBitmap>()?;

    m.add_class::<plans::policy::PyAdapterDescriptor>()?;
    m.add_class::<plans::policy::PyLoadPlan>()?;
    m.add_class::<plans::policy::PyPrefetchPolicy>()?;
    m.add_class::<plans::policy::PyDefaultPolicy>()?;
    m.add_class::<plans::policy::PyRetainPolicy>()?;
    m.add_class::<plans::policy::PyBalancedPolicy>()?;

    plans::hybrid::pythonic::register(m)?;
    m.add_function(wrap_pyfunction!(plans::hybrid::unfold_range, m)?)?;
    m.add_function(wrap_pyfunction!(plans::hybrid::highest_set_bit, m)?)?;
    m.add_function(wrap_pyfunction!(plans::hybrid::merge_bitmaps, m)?)?;
    m.add_function(wrap_pyfunction!(plans::hybrid::retained_prefix, m)?)?;

    m.add_class::<plans::grid::PyGrid>()?;
    m.add_class::<plans::grid::PyGridPlan>()?;
    m.add_class::<plans::grid::PyGridPolicy>()?;
    m.add_class::<plans::grid::PyDefaultGridPolicy>()?;
    m.add_class::<plans::grid::PyRetainGridPolicy>()?;
    m.add_function(wrap_pyfunction!(plans::grid::plan_load, m)?)?;
    m.add_function(wrap_pyfunction!(replay::replay, m)?)?;

    // LMCache's classes and signatures, behind `bitplan.lmcache`.
    let lm = PyModule::new(m.py(), "lmcache")?;
    lm.add_class::<bitmaps::flavor::LmBitmap>()?;
    lm.add_class::<lmcache::grid::LmGrid>()?;
    lm.add_class::<lmcache::map::LmMapState>()?;
    plans::hybrid::lmcache::register(&lm)?;
    lm.add_function(wrap_pyfunction!(plans::hybrid::lmcache_merge_bitmaps, &lm)?)?;
    lm.add_function(wrap_pyfunction!(plans::policy::select_first_wins, &lm)?)?;
    lm.add_function(wrap_pyfunction!(plans::lmcache::plan_load_state, &lm)?)?;
    // A tier's bookkeeping (issue #28), behind `bitplan.lmcache.tiers`.
    lm.add_function(wrap_pyfunction!(tiers::common::register_l1_errors, &lm)?)?;
    lm.add_class::<tiers::common::PyManualClock>()?;
    lm.add_class::<tiers::request_keys::PyRequestKeys>()?;
    lm.add_class::<tiers::chunk::PyChunkTier>()?;
    lm.add_class::<tiers::books::PyL1Bookkeeper>()?;
    lm.add_class::<integration::l1_books::PyL1Books>()?;
    lm.add_class::<integration::request::PinnedKeys>()?;
    // LMCache's eviction policies (issue #29), behind
    // `bitplan.lmcache.eviction_policy`.
    lm.add_function(wrap_pyfunction!(eviction::policy::register_eviction_action, &lm)?)?;
    lm.add_class::<eviction::policy::PyEvictionCore>()?;
    lm.add_class::<eviction::slots::PySlotEvictionPolicy>()?;
    m.add_submodule(&lm)?;
    Ok(())
}
