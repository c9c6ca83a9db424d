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

mod args;
mod bitmap;
mod bits;
mod errors;
mod flavor;
mod grid;
mod hybrid;
mod lmcache;
mod lmcache_grid;
mod lmcache_map;
mod lmcache_plan;
mod memory;
mod moves;
mod policy;
mod positions;
mod replay;

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

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("FULL_ATTENTION_WINDOW", prefetch_policy::FULL_ATTENTION_WINDOW)?;
    m.add_function(wrap_pyfunction!(active_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(available_kernels, m)?)?;

    m.add_class::<flavor::PyBitmap>()?;

    m.add_class::<policy::PyAdapterDescriptor>()?;
    m.add_class::<policy::PyLoadPlan>()?;
    m.add_class::<policy::PyPrefetchPolicy>()?;
    m.add_class::<policy::PyDefaultPolicy>()?;
    m.add_class::<policy::PyRetainPolicy>()?;
    m.add_class::<policy::PyBalancedPolicy>()?;

    hybrid::pythonic::register(m)?;
    m.add_function(wrap_pyfunction!(hybrid::unfold_range, m)?)?;
    m.add_function(wrap_pyfunction!(hybrid::highest_set_bit, m)?)?;
    m.add_function(wrap_pyfunction!(hybrid::merge_bitmaps, m)?)?;
    m.add_function(wrap_pyfunction!(hybrid::retained_prefix, m)?)?;

    m.add_class::<grid::PyGrid>()?;
    m.add_class::<grid::PyGridPlan>()?;
    m.add_class::<grid::PyGridPolicy>()?;
    m.add_class::<grid::PyDefaultGridPolicy>()?;
    m.add_class::<grid::PyRetainGridPolicy>()?;
    m.add_function(wrap_pyfunction!(grid::plan_load, m)?)?;
    m.add_function(wrap_pyfunction!(replay::replay, m)?)?;

    // LMCache's classes and signatures, behind `bitplan.lmcache`.
    let lm = PyModule::new(m.py(), "lmcache")?;
    lm.add_class::<flavor::LmBitmap>()?;
    lm.add_class::<lmcache_grid::LmGrid>()?;
    lm.add_class::<lmcache_map::LmMapState>()?;
    hybrid::lmcache::register(&lm)?;
    lm.add_function(wrap_pyfunction!(hybrid::lmcache_merge_bitmaps, &lm)?)?;
    lm.add_function(wrap_pyfunction!(policy::select_first_wins, &lm)?)?;
    lm.add_function(wrap_pyfunction!(lmcache_plan::plan_load_state, &lm)?)?;
    m.add_submodule(&lm)?;
    Ok(())
}
