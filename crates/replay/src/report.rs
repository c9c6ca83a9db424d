//! [`Report`]: what a replay found, serializable as the JSON that
//! `prefetch-plan replay --json` prints and `bitplan.replay` returns.

use serde::Serialize;

use crate::policy_tier::PolicyCounts;
use crate::replay_tier::ReplayTier;
use crate::tier::Tier;

/// Hit ratios three ways.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct HitRatios {
    /// Σh / Σn: hit blocks over all blocks.
    pub block: f64,
    /// Σ min(h·block_tokens, input_length) / Σ input_length.
    pub token: f64,
    /// The mean over requests of h/n.
    pub request_mean: f64,
}

/// One tier's counts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TierReport {
    /// Capacity in blocks; `None` (JSON `null`): unbounded.
    pub capacity_blocks: Option<usize>,
    /// Hit blocks it served: for L1, keys before the hit found in L1; for
    /// an adapter, its loads before the hit.
    pub hit_blocks: u64,
    /// The same in bytes, with `--kv-bytes-per-token`.
    pub hit_bytes: Option<u64>,
    /// Keys it evicted (to make room, or by checks).
    pub evictions: u64,
    /// Keys it holds at the end.
    pub entries: usize,
    /// The most keys it held at once.
    pub peak_entries: usize,
    /// The heap bytes its index takes at the end, its eviction policy's
    /// included (an estimate, see [`Tier::memory_bytes`] and
    /// [`PolicyTier::memory_bytes`](crate::PolicyTier::memory_bytes)).
    pub index_bytes: usize,
    /// For an adapter with a bandwidth: its hit bytes over it, in seconds.
    pub load_seconds: Option<f64>,
    /// Under LMCache's trigger: its watermark (`null`: strict capacity).
    pub watermark: Option<f64>,
    /// Under LMCache's trigger: its eviction ratio.
    pub evict_ratio: Option<f64>,
    /// The checks that fired (usage at or above the watermark).
    pub checks_fired: u64,
    /// The keys those checks evicted.
    pub evicted_by_checks: u64,
    /// The keys not admitted because the tier was full.
    pub dropped_full: u64,
}

impl TierReport {
    pub(crate) fn new(
        tier: &ReplayTier,
        hit_blocks: u64,
        block_bytes: Option<u64>,
        bandwidth: Option<f64>,
    ) -> TierReport {
        let mut report = TierReport::with_counts(tier.capacity(), tier.counts(), hit_blocks, block_bytes, bandwidth);
        report.entries = tier.len();
        report.index_bytes = tier.memory_bytes();
        if let Some(trigger) = tier.trigger() {
            report.watermark = Some(trigger.watermark);
            report.evict_ratio = Some(trigger.ratio);
        }
        report
    }

    /// A strict tier's report (the hybrid replay's tiers).
    pub(crate) fn of_strict(tier: &Tier, hit_blocks: u64) -> TierReport {
        let counts = PolicyCounts { evictions: tier.evictions(), peak: tier.peak_len(), ..PolicyCounts::default() };
        let mut report = TierReport::with_counts(tier.capacity(), counts, hit_blocks, None, None);
        report.entries = tier.len();
        report.index_bytes = tier.memory_bytes();
        report
    }

    fn with_counts(
        capacity_blocks: Option<usize>,
        counts: PolicyCounts,
        hit_blocks: u64,
        block_bytes: Option<u64>,
        bandwidth: Option<f64>,
    ) -> TierReport {
        let hit_bytes = block_bytes.map(|bytes| bytes * hit_blocks);
        TierReport {
            capacity_blocks,
            hit_blocks,
            hit_bytes,
            evictions: counts.evictions,
            entries: 0,
            peak_entries: counts.peak,
            index_bytes: 0,
            load_seconds: hit_bytes.zip(bandwidth).map(|(bytes, rate)| bytes as f64 / rate),
            watermark: None,
            evict_ratio: None,
            checks_fired: counts.checks_fired,
            evicted_by_checks: counts.evicted_by_checks,
            dropped_full: counts.dropped_full,
        }
    }
}

/// Nanosecond percentiles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Percentiles {
    /// The median.
    pub p50: u64,
    /// The 99th percentile.
    pub p99: u64,
    /// The largest.
    pub max: u64,
}

impl Percentiles {
    /// The percentiles of `samples` (nearest rank), zeros when empty.
    ///
    /// ```
    /// use kv_replay::Percentiles;
    /// let p = Percentiles::of(&(1..=100).collect::<Vec<_>>());
    /// assert_eq!((p.p50, p.p99, p.max), (50, 99, 100));
    /// ```
    pub fn of(samples: &[u64]) -> Percentiles {
        if samples.is_empty() {
            return Percentiles::default();
        }
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        let rank = |p: usize| sorted[(sorted.len() * p).div_ceil(100).max(1) - 1];
        Percentiles { p50: rank(50), p99: rank(99), max: sorted[sorted.len() - 1] }
    }
}

/// What a replay found.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Report {
    /// The prefetch policy.
    pub policy: String,
    /// The eviction policy (`lru`, `fifo`, `lfu`, `s3fifo`, `arc`, `noop`).
    pub eviction: &'static str,
    /// The interval of LMCache's eviction checks, in trace milliseconds,
    /// when a tier has a trigger (`null`: every tier at strict capacity).
    pub evict_interval_ms: Option<u64>,
    /// Tokens a block.
    pub block_tokens: u64,
    /// Bytes a token, if given.
    pub kv_bytes_per_token: Option<u64>,
    /// Requests replayed.
    pub requests: u64,
    /// Block references (Σn).
    pub blocks: u64,
    /// Input tokens (Σ input_length).
    pub tokens: u64,
    /// Σh.
    pub hit_blocks: u64,
    /// Σ min(h·block_tokens, input_length).
    pub hit_tokens: u64,
    /// Σ(n − h): blocks computed.
    pub computed_blocks: u64,
    /// The three hit ratios.
    pub hit_ratio: HitRatios,
    /// L1.
    pub l1: TierReport,
    /// The adapters, in order.
    pub l2: Vec<TierReport>,
    /// The planner's time per request, from the lookup bitmaps to the plan
    /// and its prefix (one `Instant::now` pair included, some 20-40 ns).
    pub planner_ns: Percentiles,
    /// The replay's wall time, parsing excluded.
    pub replay_seconds: f64,
    /// Requests over the replay's time.
    pub requests_per_second: f64,
    /// Block references over the replay's time.
    pub block_refs_per_second: f64,
}
