//! Replays KV-cache request streams through a tiered cache, planning every
//! request with a [`prefetch_policy`] policy, to answer two questions: how
//! big must L1 be (and is an L2 tier worth it) for this traffic, and what
//! does the planner cost per request at real request sizes.
//!
//! - [`Trace`] reads Mooncake's NDJSON (`hash_ids`, `input_length`) or
//!   plain `{"keys": [...]}` lines, with errors naming the line and field;
//! - [`Capacity`] and [`TierSpec`] read `20000`, `1e7tok`, `64GiB`, `inf`,
//!   with an adapter's `weight=` and `bw=`;
//! - [`Tier`] is one cache level with [`Eviction`] LRU, FIFO or LFU, a
//!   16-byte node per key held and a 4-byte slot per distinct key;
//! - [`PolicyTier`] evicts with LMCache's policies (the `tier-state`
//!   crate's LRU, S3-FIFO, ARC, noop), at strict capacity or under
//!   LMCache's timed [`Trigger`] (a watermark and a ratio, checked every
//!   second of the trace's time);
//! - [`Planner`] does the per-request lookup → plan → hit without
//!   allocating, and [`Replayer`] the whole model, whose rules
//!   `docs/REPLAY.md` states;
//! - [`sweep`] replays one trace at several capacities on rayon's pool;
//! - [`hybrid`] replays it under a cell model (groups × ranks a chunk);
//! - [`synthetic`] makes Mooncake-shaped traces for tests and benchmarks.
//!
//! ```
//! use kv_replay::{ReplayConfig, Replayer, Trace, TraceOptions};
//!
//! // Two conversations sharing a system prompt (ids 0, 1), the second
//! // asked twice.
//! let text = r#"{"hash_ids": [0, 1, 2], "input_length": 1500}
//! {"hash_ids": [0, 1, 3, 4], "input_length": 2048}
//! {"hash_ids": [0, 1, 3, 4, 5], "input_length": 2100}
//! "#;
//! let trace = Trace::parse(text.as_bytes(), &TraceOptions::default())?;
//! // L1 of 2 blocks, smaller than any request; one unbounded adapter.
//! let report = Replayer::new(&ReplayConfig::new(Some(2), &[None]))?.replay(&trace)?;
//! // Request 2 hits 0 (adapter) and 1 (L1); request 3 hits 0, 1 (adapter)
//! // and 3, 4 (L1, the last two keys request 2 touched).
//! assert_eq!((report.hit_blocks, report.l1.hit_blocks, report.l2[0].hit_blocks), (6, 3, 3));
//! assert_eq!(report.l1.evictions, 1 + 4 + 5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

mod error;
mod fast_line;
pub mod hybrid;
mod list_policy;
mod planner;
mod policy_tier;
mod replay_tier;
mod replayer;
mod report;
mod spec;
pub mod sweep;
pub mod synthetic;
mod tier;
mod trace;
mod trigger;

// The crates whose types this API names, for users to name them too.
pub use bitmap_core;
pub use prefetch_policy;
pub use tier_state;

pub use error::{ReplayError, SpecError, TraceError, TraceErrorKind};
pub use list_policy::ListPolicy;
pub use planner::Planner;
pub use policy_tier::{PolicyCounts, PolicyTier, new_policy};
pub use replay_tier::{HoldsKeys, ReplayTier};
pub use replayer::{AdapterConfig, ReplayConfig, Replayer};
pub use report::{HitRatios, Percentiles, Report, TierReport};
pub use spec::{Capacity, TierSpec};
pub use tier::{Eviction, Tier};
pub use trace::{Request, Trace, TraceOptions};
pub use trigger::{DEFAULT_EVICT_INTERVAL_MS, Trigger};

/// This crate's README (what crates.io shows), compiled and run as a
/// doctest so that its example cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadmeDoctests;
