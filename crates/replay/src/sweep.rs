//! Sweeps: one trace replayed at several configurations, in parallel on
//! rayon's pool (each replay is sequential: a request depends on the tiers
//! every earlier one left).

use rayon::prelude::*;

use crate::error::ReplayError;
use crate::replayer::{ReplayConfig, Replayer};
use crate::report::Report;
use crate::trace::Trace;

/// Replays `trace` once per configuration, in parallel, and returns the
/// reports in the configurations' order.
///
/// Each replay reserves its tiers for the trace's distinct keys (counted
/// once here), so none grows a table while it runs.
///
/// ```
/// use kv_replay::{ReplayConfig, Trace, sweep};
///
/// let mut trace = Trace::new(512);
/// for _ in 0..3 {
///     trace.push(&[1, 2, 3, 4], 2048);
/// }
/// let configs: Vec<_> = [Some(2), Some(4)].into_iter().map(|l1| ReplayConfig::new(l1, &[])).collect();
/// let reports = sweep::replay_all(&trace, &configs)?;
/// assert_eq!(reports.iter().map(|r| r.hit_blocks).collect::<Vec<_>>(), [0, 8]);
/// # Ok::<(), kv_replay::ReplayError>(())
/// ```
///
/// # Errors
///
/// The first configuration's error, in order.
pub fn replay_all(trace: &Trace, configs: &[ReplayConfig]) -> Result<Vec<Report>, ReplayError> {
    replay_all_with_progress(trace, configs, |_| {})
}

/// [`replay_all`], calling `progress(requests)` from the replaying threads
/// as requests are done (see [`Replayer::replay_with_progress`]): the sum
/// of the calls reaches `trace.len() * configs.len()`.
///
/// # Errors
///
/// As [`replay_all`].
pub fn replay_all_with_progress(
    trace: &Trace,
    configs: &[ReplayConfig],
    progress: impl Fn(usize) + Sync,
) -> Result<Vec<Report>, ReplayError> {
    let distinct = trace.distinct_keys();
    let max_keys = trace.max_keys();
    configs
        .par_iter()
        .map(|config| Replayer::with_reserve(config, distinct, max_keys)?.replay_with_progress(trace, &progress))
        .collect()
}

/// The configurations of a sweep: every combination of an L1 capacity and
/// one capacity per adapter (L1 varying slowest), the rest from `base`.
///
/// ```
/// use kv_replay::{ReplayConfig, sweep};
///
/// let base = ReplayConfig::new(None, &[None]);
/// let configs = sweep::combinations(&base, &[Some(1), Some(2)], &[vec![Some(10), None]]);
/// let shapes: Vec<_> = configs.iter().map(|c| (c.l1, c.adapters[0].capacity)).collect();
/// assert_eq!(shapes, [(Some(1), Some(10)), (Some(1), None), (Some(2), Some(10)), (Some(2), None)]);
/// ```
pub fn combinations(base: &ReplayConfig, l1: &[Option<usize>], adapters: &[Vec<Option<usize>>]) -> Vec<ReplayConfig> {
    let mut configs = Vec::new();
    for &l1 in l1 {
        let mut config = base.clone();
        config.l1 = l1;
        let mut partial = vec![config];
        for (j, capacities) in adapters.iter().enumerate() {
            partial = partial
                .into_iter()
                .flat_map(|config| {
                    capacities.iter().map(move |&capacity| {
                        let mut config = config.clone();
                        config.adapters[j].capacity = capacity;
                        config
                    })
                })
                .collect();
        }
        configs.extend(partial);
    }
    configs
}
