//! `bitplan.replay`: a request trace through L1 and L2 adapters, over the
//! same Rust implementation as `prefetch-plan replay` (the `kv-replay`
//! crate). The trace is parsed and replayed with the GIL released.

use std::path::PathBuf;

use kv_replay::hybrid::{CellModel, replay_hybrid};
use kv_replay::{
    AdapterConfig, Capacity, DEFAULT_EVICT_INTERVAL_MS, Eviction, ReplayConfig, Replayer, SpecError, TierSpec, Trace,
    TraceOptions, Trigger,
};
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

fn trace_source(trace: &Bound<'_, PyAny>, block_tokens: u64, timestamps: Option<Vec<u64>>) -> PyResult<TraceSource> {
    if let Ok(path) = trace.extract::<PathBuf>() {
        if timestamps.is_some() {
            return Err(PyValueError::new_err("timestamps are for a list of requests: a file has its own"));
        }
        return Ok(TraceSource::Path(path));
    }
    let mut requests = Trace::new(block_tokens);
    for (index, keys) in trace.try_iter()?.enumerate() {
        let keys: Vec<u64> = keys?.extract().map_err(|error| {
            PyTypeError::new_err(format!("request {index}: a request is a sequence of non-negative int keys: {error}"))
        })?;
        let tokens = keys.len() as u64 * block_tokens;
        match &timestamps {
            Some(timestamps) => {
                let Some(&timestamp_ms) = timestamps.get(index) else {
                    return Err(PyValueError::new_err(format!(
                        "{} timestamps for more requests: give one per request",
                        timestamps.len()
                    )));
                };
                requests.push_timed(&keys, tokens, timestamp_ms);
            }
            None => requests.push(&keys, tokens),
        }
    }
    if let Some(timestamps) = &timestamps
        && timestamps.len() != requests.len()
    {
        let message = format!("{} timestamps for {} requests: give one per request", timestamps.len(), requests.len());
        return Err(PyValueError::new_err(message));
    }
    Ok(TraceSource::Requests(requests))
}

/// A watermark or ratio from Python: in [0, 1], else a `ValueError` naming
/// the argument.
fn unit_fraction(name: &str, value: f64) -> PyResult<f64> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        // `{:?}` writes 2.0 as Python does, not 2.
        Err(PyValueError::new_err(format!("{name}: {value:?} is outside [0, 1]")))
    }
}

/// One value for every adapter, or one each (`l2_watermark`,
/// `l2_evict_ratio`): a float, or a sequence of them.
fn per_adapter(name: &str, value: &Bound<'_, PyAny>, adapters: usize) -> PyResult<Vec<f64>> {
    let values = match value.extract::<f64>() {
        Ok(value) => vec![value; adapters],
        Err(_) => {
            let values: Vec<f64> = value
                .extract()
                .map_err(|_| PyTypeError::new_err(format!("{name}: a float, or one float per adapter")))?;
            if values.len() != adapters {
                let message =
                    format!("{name}: {} values for {adapters} adapters: give one for all, or one each", values.len());
                return Err(PyValueError::new_err(message));
            }
            values
        }
    };
    values.into_iter().map(|value| unit_fraction(name, value)).collect()
}

/// LMCache's trigger of the keyword arguments: L1's and each adapter's,
/// checked as the command line checks its flags.
fn triggers(
    l1_watermark: Option<f64>,
    evict_ratio: Option<f64>,
    l2_watermark: Option<&Bound<'_, PyAny>>,
    l2_evict_ratio: Option<&Bound<'_, PyAny>>,
    adapters: usize,
) -> PyResult<(Option<Trigger>, Vec<Option<Trigger>>)> {
    let default_ratio = Trigger::LMCACHE_DEFAULT.ratio;
    let l1 = match (l1_watermark, evict_ratio) {
        (None, Some(_)) => {
            return Err(PyValueError::new_err("evict_ratio needs l1_watermark (without it L1 keeps strict capacity)"));
        }
        (None, None) => None,
        (Some(watermark), ratio) => Some(Trigger {
            watermark: unit_fraction("l1_watermark", watermark)?,
            ratio: unit_fraction("evict_ratio", ratio.unwrap_or(default_ratio))?,
        }),
    };
    let l2 = match (l2_watermark, l2_evict_ratio) {
        (None, Some(_)) => {
            let message = "l2_evict_ratio needs l2_watermark (without it the adapters keep strict capacity)";
            return Err(PyValueError::new_err(message));
        }
        (None, None) => vec![None; adapters],
        (Some(watermarks), ratios) => {
            let watermarks = per_adapter("l2_watermark", watermarks, adapters)?;
            let ratios = match ratios {
                Some(ratios) => per_adapter("l2_evict_ratio", ratios, adapters)?,
                None => vec![default_ratio; adapters],
            };
            watermarks.into_iter().zip(ratios).map(|(watermark, ratio)| Some(Trigger { watermark, ratio })).collect()
        }
    };
    Ok((l1, l2))
}

/// Replays a trace and returns the report as a dict (the JSON of
/// `prefetch-plan replay --json`; docs/REPLAY.md has the model). With
/// `windows` (one per layer group), a hybrid replay of `len(windows) ×
/// ranks` cells a chunk, capacities in cells as on the command line. With
/// `l1_watermark` (and `l2_watermark`), LMCache's timed eviction trigger,
/// on the trace's timestamps (`timestamps`, one per request, for a list).
#[pyfunction]
#[pyo3(signature = (trace, l1, l2 = Vec::new(), *, policy = "default", eviction = "lru", block_tokens = 512, kv_bytes_per_token = None, windows = None, ranks = 1, l1_watermark = None, evict_ratio = None, l2_watermark = None, l2_evict_ratio = None, evict_interval_ms = DEFAULT_EVICT_INTERVAL_MS, timestamps = None))]
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
    l1_watermark: Option<f64>,
    evict_ratio: Option<f64>,
    l2_watermark: Option<Bound<'py, PyAny>>,
    l2_evict_ratio: Option<Bound<'py, PyAny>>,
    evict_interval_ms: u64,
    timestamps: Option<Vec<u64>>,
) -> PyResult<Bound<'py, PyAny>> {
    if block_tokens == 0 {
        return Err(PyValueError::new_err("block_tokens must be at least 1"));
    }
    let eviction = Eviction::from_name(eviction).ok_or_else(|| {
        PyValueError::new_err(format!("eviction {eviction:?}: expected one of {}", Eviction::names()))
    })?;
    let (l1_trigger, l2_triggers) =
        triggers(l1_watermark, evict_ratio, l2_watermark.as_ref(), l2_evict_ratio.as_ref(), l2.len())?;
    if evict_interval_ms == 0 {
        return Err(PyValueError::new_err("evict_interval_ms must be at least 1"));
    }
    if windows.is_some()
        && (!eviction.is_list_order() || l1_trigger.is_some() || l2_triggers.iter().any(Option::is_some))
    {
        let message = format!("the hybrid replay keeps lru, fifo or lfu at strict capacity, not {}", eviction.name());
        return Err(PyValueError::new_err(message));
    }
    let l1 = blocks(&tier_spec(l1)?, block_tokens, kv_bytes_per_token)?;
    let adapters = l2
        .iter()
        .zip(l2_triggers)
        .map(|(spec, trigger)| {
            let spec = tier_spec(spec)?;
            Ok(AdapterConfig {
                capacity: blocks(&spec, block_tokens, kv_bytes_per_token)?,
                weight: spec.weight.unwrap_or(1.0),
                bandwidth: spec.bandwidth,
                trigger,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let mut config = ReplayConfig::new(l1, &[]);
    config.adapters = adapters;
    config.policy = policy.to_owned();
    config.eviction = eviction;
    config.kv_bytes_per_token = kv_bytes_per_token;
    config.l1_trigger = l1_trigger;
    config.evict_interval_ms = evict_interval_ms;
    let cells = windows.map(|windows| CellModel { windows, ranks });
    let source = trace_source(trace, block_tokens, timestamps)?;
    let report = crate::boundary::bits::detach(py, move || -> Result<String, String> {
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
