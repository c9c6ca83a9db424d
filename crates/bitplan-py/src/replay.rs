//! `bitplan.replay`: a request trace through L1 and L2 adapters, over the
//! same Rust implementation as `prefetch-plan replay` (the `kv-replay`
//! crate). The trace is parsed and replayed with the GIL released.

use std::path::PathBuf;

use kv_replay::hybrid::{CellModel, replay_hybrid};
use kv_replay::{AdapterConfig, Capacity, Eviction, ReplayConfig, Replayer, SpecError, TierSpec, Trace, TraceOptions};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyInt;

/// A capacity or tier spec from Python: `int` blocks, `None` (unbounded),
/// or a string as on the command line (`"1e7tok"`, `"64GiB"`,
/// `"inf:weight=2:bw=12GB/s"`).
fn tier_spec(value: &Bound<'_, PyAny>) -> PyResult<TierSpec> {
    if value.is_none() {
        return Ok(TierSpec::new(Capacity::Infinite));
    }
    if let Ok(blocks) = value.extract::<u64>() {
        return Ok(TierSpec::new(Capacity::Blocks(blocks)));
    }
    // Any other int (past `u64`, or negative): read as its digits are on
    // the command line, so it gets the same `ValueError` ("… is more than
    // a tier can hold: at most … blocks").
    let text = if value.is_instance_of::<PyInt>() { Ok(value.str()?.to_string()) } else { value.extract::<String>() };
    let Ok(text) = text else {
        let message =
            format!("a capacity is an int (blocks), None or a str such as '1e7tok', not {}", value.get_type());
        return Err(PyTypeError::new_err(message));
    };
    let spec: TierSpec = text.parse().map_err(|error: SpecError| PyValueError::new_err(error.to_string()))?;
    if spec.capacities.len() != 1 {
        return Err(PyValueError::new_err(format!("{text:?}: one capacity per tier (loop over replay() to sweep)")));
    }
    Ok(spec)
}

/// Blocks for one tier's only capacity.
fn blocks(spec: &TierSpec, block_tokens: u64, kv_bytes_per_token: Option<u64>) -> PyResult<Option<usize>> {
    spec.capacities[0]
        .blocks(block_tokens, kv_bytes_per_token)
        .map_err(|error| PyValueError::new_err(error.to_string()))
}

/// The trace: a path to NDJSON (parsed later, without the GIL), or an
/// iterable of key lists (read now).
enum TraceSource {
    Path(PathBuf),
    Requests(Trace),
}

fn trace_source(trace: &Bound<'_, PyAny>, block_tokens: u64) -> PyResult<TraceSource> {
    if let Ok(path) = trace.extract::<PathBuf>() {
        return Ok(TraceSource::Path(path));
    }
    let mut requests = Trace::new(block_tokens);
    for (index, keys) in trace.try_iter()?.enumerate() {
        let keys: Vec<u64> = keys?.extract().map_err(|error| {
            PyTypeError::new_err(format!("request {index}: a request is a sequence of non-negative int keys: {error}"))
        })?;
        requests.push(&keys, keys.len() as u64 * block_tokens);
    }
    Ok(TraceSource::Requests(requests))
}

/// Replays a trace and returns the report as a dict (the JSON of
/// `prefetch-plan replay --json`; docs/REPLAY.md has the model). With
/// `windows` (one per layer group), a hybrid replay of `len(windows) ×
/// ranks` cells a chunk, capacities in cells as on the command line.
#[pyfunction]
#[pyo3(signature = (trace, l1, l2 = Vec::new(), *, policy = "default", eviction = "lru", block_tokens = 512, kv_bytes_per_token = None, windows = None, ranks = 1))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn replay<'py>(
    py: Python<'py>,
    trace: &Bound<'py, PyAny>,
    l1: &Bound<'py, PyAny>,
    l2: Vec<Bound<'py, PyAny>>,
    policy: &str,
    eviction: &str,
    block_tokens: u64,
    kv_bytes_per_token: Option<u64>,
    windows: Option<Vec<i64>>,
    ranks: usize,
) -> PyResult<Bound<'py, PyAny>> {
    if block_tokens == 0 {
        return Err(PyValueError::new_err("block_tokens must be at least 1"));
    }
    let eviction = Eviction::from_name(eviction)
        .ok_or_else(|| PyValueError::new_err(format!("eviction {eviction:?}: expected 'lru', 'fifo' or 'lfu'")))?;
    let l1 = blocks(&tier_spec(l1)?, block_tokens, kv_bytes_per_token)?;
    let adapters = l2
        .iter()
        .map(|spec| {
            let spec = tier_spec(spec)?;
            Ok(AdapterConfig {
                capacity: blocks(&spec, block_tokens, kv_bytes_per_token)?,
                weight: spec.weight.unwrap_or(1.0),
                bandwidth: spec.bandwidth,
                trigger: None,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let mut config = ReplayConfig::new(l1, &[]);
    config.adapters = adapters;
    config.policy = policy.to_owned();
    config.eviction = eviction;
    config.kv_bytes_per_token = kv_bytes_per_token;
    let cells = windows.map(|windows| CellModel { windows, ranks });
    let source = trace_source(trace, block_tokens)?;
    let report = crate::bits::detach(py, move || -> Result<String, String> {
        let trace = match source {
            TraceSource::Requests(trace) => trace,
            TraceSource::Path(path) => {
                let file =
                    std::fs::File::open(&path).map_err(|error| format!("cannot open {}: {error}", path.display()))?;
                let options = TraceOptions::default().with_block_tokens(block_tokens);
                Trace::parse(std::io::BufReader::new(file), &options).map_err(|error| error.to_string())?
            }
        };
        if let Some(model) = cells {
            let report = replay_hybrid(&trace, &model.in_cells(&config), &model).map_err(|error| error.to_string())?;
            return serde_json::to_string(&report).map_err(|error| error.to_string());
        }
        let mut replayer = Replayer::with_reserve(&config, trace.distinct_keys(), trace.max_keys())
            .map_err(|error| error.to_string())?;
        let report = replayer.replay(&trace).map_err(|error| error.to_string())?;
        serde_json::to_string(&report).map_err(|error| error.to_string())
    });
    let report = report.map_err(PyValueError::new_err)?;
    py.import("json")?.call_method1("loads", (report,))
}
