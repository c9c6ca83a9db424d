//! [`Replayer`]: the model of `docs/REPLAY.md`, one request at a time, and
//! [`ReplayConfig`], what it replays with.

use std::time::Instant;

use prefetch_policy::{AdapterDescriptor, PrefetchPolicy, create_prefetch_policy};

use crate::error::ReplayError;
use crate::planner::Planner;
use crate::replay_tier::ReplayTier;
use crate::report::{HitRatios, Percentiles, Report, TierReport};
use crate::tier::Eviction;
use crate::trace::{Request, Trace};
use crate::trigger::{CheckClock, DEFAULT_EVICT_INTERVAL_MS, Trigger};

/// One L2 adapter of a replay.
#[derive(Clone, Debug, PartialEq)]
pub struct AdapterConfig {
    /// Its capacity in blocks; `None`: unbounded.
    pub capacity: Option<usize>,
    /// Its weight for `balanced` (finite, > 0).
    pub weight: f64,
    /// Its load bandwidth in bytes per second, if known.
    pub bandwidth: Option<f64>,
    /// LMCache's eviction trigger for it (`--l2-watermark`,
    /// `--l2-evict-ratio`); `None`: strict capacity.
    pub trigger: Option<Trigger>,
}

impl AdapterConfig {
    /// An adapter of `capacity` blocks, weight 1, no bandwidth, strict
    /// capacity.
    pub fn new(capacity: Option<usize>) -> AdapterConfig {
        AdapterConfig { capacity, weight: 1.0, bandwidth: None, trigger: None }
    }
}

/// What a replay runs with: the tiers' capacities in blocks, the policy,
/// the eviction order and the block's size in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayConfig {
    /// L1's capacity in blocks; `None`: unbounded.
    pub l1: Option<usize>,
    /// The L2 adapters, in order (adapter `j` has index `j`).
    pub adapters: Vec<AdapterConfig>,
    /// A registered prefetch policy's name (`default`, `balanced`,
    /// `retain`, …).
    pub policy: String,
    /// How every tier evicts (each with its own policy).
    pub eviction: Eviction,
    /// Bytes of KV cache a token, for the byte counts; `None`: none.
    pub kv_bytes_per_token: Option<u64>,
    /// LMCache's eviction trigger for L1 (`--l1-watermark`,
    /// `--evict-ratio`); `None`: strict capacity.
    pub l1_trigger: Option<Trigger>,
    /// The interval of the triggers' checks in trace milliseconds
    /// (`--evict-interval-ms`; LMCache's is 1,000).
    pub evict_interval_ms: u64,
}

impl ReplayConfig {
    /// L1 of `l1` blocks, adapters of the given capacities, `default`, LRU.
    pub fn new(l1: Option<usize>, adapters: &[Option<usize>]) -> ReplayConfig {
        ReplayConfig {
            l1,
            adapters: adapters.iter().copied().map(AdapterConfig::new).collect(),
            policy: "default".to_owned(),
            eviction: Eviction::Lru,
            kv_bytes_per_token: None,
            l1_trigger: None,
            evict_interval_ms: DEFAULT_EVICT_INTERVAL_MS,
        }
    }

    /// Whether any tier evicts under a trigger.
    pub fn has_trigger(&self) -> bool {
        self.l1_trigger.is_some() || self.adapters.iter().any(|adapter| adapter.trigger.is_some())
    }

    /// Checks the triggers' values and the interval.
    ///
    /// # Errors
    ///
    /// [`ReplayError::OutOfRange`] for a watermark or ratio outside
    /// [0, 1], [`ReplayError::ZeroInterval`] for an interval of 0 with a
    /// trigger.
    pub fn validate(&self) -> Result<(), ReplayError> {
        let triggers =
            self.l1_trigger.iter().chain(self.adapters.iter().filter_map(|adapter| adapter.trigger.as_ref()));
        for trigger in triggers {
            trigger.validate()?;
        }
        if self.has_trigger() && self.evict_interval_ms == 0 {
            return Err(ReplayError::ZeroInterval);
        }
        Ok(())
    }
}

/// Sums over the requests replayed so far.
#[derive(Clone, Debug, Default)]
struct Totals {
    requests: u64,
    blocks: u64,
    tokens: u64,
    hit_blocks: u64,
    hit_tokens: u64,
    /// Σ h/n over requests with n > 0 (a request of no keys counts as a
    /// ratio of 0: it hit nothing).
    ratio_sum: f64,
    l1_hits: u64,
    served: Vec<u64>,
}

/// Replays requests through L1 and the adapters.
///
/// ```
/// use kv_replay::{ReplayConfig, Replayer, Trace};
///
/// let mut trace = Trace::new(512);
/// trace.push(&[1, 2, 3], 1536);
/// trace.push(&[1, 2, 4], 1536);
/// let mut replayer = Replayer::new(&ReplayConfig::new(Some(100), &[None]))?;
/// let report = replayer.replay(&trace)?;
/// assert_eq!((report.blocks, report.hit_blocks), (6, 2)); // keys 1, 2 from L1 the second time
/// assert_eq!(report.hit_ratio.block, 2.0 / 6.0);
/// # Ok::<(), kv_replay::ReplayError>(())
/// ```
#[derive(Debug)]
pub struct Replayer {
    config: ReplayConfig,
    policy: Box<dyn PrefetchPolicy>,
    descriptors: Vec<AdapterDescriptor>,
    l1: ReplayTier,
    l2: Vec<ReplayTier>,
    /// The triggers' checks, when a tier has one.
    clock: Option<CheckClock>,
    planner: Planner,
    totals: Totals,
    planner_ns: Vec<u64>,
    elapsed_ns: u64,
    /// The block size of the requests replayed (the trace's).
    block_tokens: u64,
}

impl Replayer {
    /// A replayer with empty tiers.
    ///
    /// # Errors
    ///
    /// [`ReplayError::Policy`] for an unregistered policy,
    /// [`ReplayError::TooManyAdapters`] past 64 adapters, and the errors of
    /// [`ReplayConfig::validate`].
    pub fn new(config: &ReplayConfig) -> Result<Replayer, ReplayError> {
        Replayer::with_reserve(config, 0, 0)
    }

    /// [`new`](Replayer::new), with tiers reserved for `distinct_keys` keys
    /// and the planner for requests of `max_keys` keys: a replay of a known
    /// trace then allocates nothing per request.
    ///
    /// # Errors
    ///
    /// As [`new`](Replayer::new).
    pub fn with_reserve(config: &ReplayConfig, distinct_keys: usize, max_keys: usize) -> Result<Replayer, ReplayError> {
        if config.adapters.len() > 64 {
            return Err(ReplayError::TooManyAdapters(config.adapters.len()));
        }
        config.validate()?;
        let policy = create_prefetch_policy(&config.policy)?;
        let descriptors = config
            .adapters
            .iter()
            .enumerate()
            .map(|(j, adapter)| {
                AdapterDescriptor::new(j, format!("l2-{j}")).with_weight(adapter.weight).map_err(|error| {
                    ReplayError::Spec(crate::error::SpecError::BadWeight { found: error.weight.to_string() })
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let tier = |capacity, trigger| ReplayTier::new(capacity, config.eviction, trigger, distinct_keys);
        Ok(Replayer {
            policy,
            descriptors,
            l1: tier(config.l1, config.l1_trigger),
            l2: config.adapters.iter().map(|adapter| tier(adapter.capacity, adapter.trigger)).collect(),
            clock: config.has_trigger().then(|| CheckClock::new(config.evict_interval_ms)),
            planner: Planner::with_capacity(max_keys, config.adapters.len()),
            totals: Totals { served: vec![0; config.adapters.len()], ..Totals::default() },
            planner_ns: Vec::new(),
            elapsed_ns: 0,
            block_tokens: 512,
            config: config.clone(),
        })
    }

    /// Replays every request of `trace`, then reports.
    ///
    /// # Errors
    ///
    /// [`ReplayError::Plan`] if the policy refuses a request.
    pub fn replay(&mut self, trace: &Trace) -> Result<Report, ReplayError> {
        self.replay_with_progress(trace, |_| {})
    }

    /// [`replay`](Replayer::replay), calling `progress(requests)` with the
    /// number of requests replayed since the last call, every 4,096
    /// requests and at the end (for a progress bar).
    ///
    /// # Errors
    ///
    /// As [`replay`](Replayer::replay).
    pub fn replay_with_progress(&mut self, trace: &Trace, progress: impl FnMut(usize)) -> Result<Report, ReplayError> {
        self.planner_ns.reserve(trace.len());
        self.block_tokens = trace.block_tokens();
        let start = Instant::now();
        trace.try_for_each_with_progress(progress, |index, request| {
            self.step_timed(request).map_err(|error| ReplayError::Plan { request: index, error })
        })?;
        self.elapsed_ns += start.elapsed().as_nanos() as u64;
        Ok(self.report())
    }

    /// Replays one request, (a)–(e), and returns its hit in blocks.
    ///
    /// # Errors
    ///
    /// The policy's [`PlanError`](prefetch_policy::PlanError).
    pub fn step(&mut self, request: Request<'_>, block_tokens: u64) -> Result<usize, prefetch_policy::PlanError> {
        self.block_tokens = block_tokens;
        self.run_checks(request.timestamp_ms);
        let hit = self.planner.plan(request.keys, &self.l1, &self.l2, self.policy.as_ref(), &self.descriptors)?;
        self.apply(request, hit);
        Ok(hit)
    }

    fn step_timed(&mut self, request: Request<'_>) -> Result<(), prefetch_policy::PlanError> {
        self.run_checks(request.timestamp_ms);
        self.planner.lookup(request.keys, &self.l1, &self.l2);
        // The planner's own time: from the lookup bitmaps to the prefix.
        let start = Instant::now();
        let hit = self.planner.decide(self.policy.as_ref(), &self.descriptors)?;
        self.planner_ns.push(start.elapsed().as_nanos() as u64);
        self.apply(request, hit);
        Ok(())
    }

    /// The counts and the touches, (c)–(e), after the plan.
    fn apply(&mut self, request: Request<'_>, hit: usize) {
        let keys = request.keys;
        let n = keys.len();
        let totals = &mut self.totals;
        totals.requests += 1;
        totals.blocks += n as u64;
        totals.tokens += request.tokens;
        totals.hit_blocks += hit as u64;
        totals.hit_tokens += (hit as u64 * self.block_tokens).min(request.tokens);
        if n > 0 {
            totals.ratio_sum += hit as f64 / n as f64;
        }
        let mut served_total = 0;
        for (j, served) in totals.served.iter_mut().enumerate() {
            let count = self.planner.served(j, hit);
            *served += count as u64;
            served_total += count;
        }
        totals.l1_hits += (hit - served_total) as u64;

        // (d) L1: at strict capacity it touches every key in order; under
        // a trigger it hears its hits touched and the rest written, each
        // in one batch.
        match &mut self.l1 {
            ReplayTier::Policy(tier) if tier.trigger().is_some() => {
                let in_l1 = self.planner.in_l1();
                let marked = || keys.iter().enumerate().map(|(i, &key)| (in_l1.test(i), key));
                tier.touch_batch(marked().take(hit).filter(|&(held, _)| held).map(|(_, key)| key));
                tier.write_batch(marked().filter(|&(held, _)| !held).map(|(_, key)| key), false);
            }
            tier => tier.touch_each(keys.iter().copied()),
        }
        // (e) Each adapter touches what it served and what was computed
        // (under a trigger: the served keys touched, the computed written).
        for (j, tier) in self.l2.iter_mut().enumerate() {
            let served = self.planner.plan_of(j).into_iter().flat_map(|loads| loads.ones().take_while(|&i| i < hit));
            match tier {
                ReplayTier::Policy(tier) if tier.trigger().is_some() => {
                    tier.touch_batch(served.map(|i| keys[i]));
                    tier.write_batch(keys[hit..].iter().copied(), true);
                }
                tier => {
                    tier.touch_each(served.map(|i| keys[i]));
                    tier.touch_each(keys[hit..].iter().copied());
                }
            }
        }
    }

    /// Runs the triggers' checks due before a request at `now_ms`, L1's
    /// then the adapters', on the same clock.
    fn run_checks(&mut self, now_ms: u64) {
        let Some(clock) = self.clock.as_mut() else { return };
        while clock.due(now_ms) {
            let mut fired = self.l1.check();
            for tier in &mut self.l2 {
                fired |= tier.check();
            }
            clock.advance(now_ms, fired);
        }
    }

    /// L1.
    pub fn l1(&self) -> &ReplayTier {
        &self.l1
    }

    /// The adapters' tiers.
    pub fn l2(&self) -> &[ReplayTier] {
        &self.l2
    }

    /// The report of what was replayed so far.
    pub fn report(&self) -> Report {
        let block_tokens = self.block_tokens;
        let totals = &self.totals;
        let block_bytes = self.config.kv_bytes_per_token.map(|per_token| per_token * block_tokens);
        let ratio = |part: u64, whole: u64| if whole == 0 { 0.0 } else { part as f64 / whole as f64 };
        let seconds = self.elapsed_ns as f64 / 1e9;
        let l1 = TierReport::new(&self.l1, totals.l1_hits, block_bytes, None);
        let l2 = self
            .l2
            .iter()
            .zip(&self.config.adapters)
            .zip(&totals.served)
            .map(|((tier, adapter), &served)| TierReport::new(tier, served, block_bytes, adapter.bandwidth))
            .collect();
        Report {
            policy: self.config.policy.clone(),
            eviction: self.config.eviction.name(),
            evict_interval_ms: self.config.has_trigger().then_some(self.config.evict_interval_ms),
            block_tokens,
            kv_bytes_per_token: self.config.kv_bytes_per_token,
            requests: totals.requests,
            blocks: totals.blocks,
            tokens: totals.tokens,
            hit_blocks: totals.hit_blocks,
            hit_tokens: totals.hit_tokens,
            computed_blocks: totals.blocks - totals.hit_blocks,
            hit_ratio: HitRatios {
                block: ratio(totals.hit_blocks, totals.blocks),
                token: ratio(totals.hit_tokens, totals.tokens),
                request_mean: if totals.requests == 0 { 0.0 } else { totals.ratio_sum / totals.requests as f64 },
            },
            l1,
            l2,
            planner_ns: Percentiles::of(&self.planner_ns),
            replay_seconds: seconds,
            requests_per_second: if seconds > 0.0 { totals.requests as f64 / seconds } else { 0.0 },
            block_refs_per_second: if seconds > 0.0 { totals.blocks as f64 / seconds } else { 0.0 },
        }
    }
}
