//! `prefetch-plan`: compute prefetch load plans from the command line, so
//! the engine can be used and checked without writing Rust.
//!
//! ```text
//! prefetch-plan plan [--policy NAME] [--trim prefix] [FILE]   cases in (NDJSON), answers out
//! prefetch-plan hit [FILE]                                    hybrid-model prefix hits, one per line
//! prefetch-plan features [--json]                             CPU features, kernels, the active one
//! prefetch-plan bench [--small BITS] [--large BITS] [--adapters N] [--json]
//! prefetch-plan replay TRACE --l1 CAP [--l2 CAP]... [--policy NAME] [--json]   a trace through tiers
//! ```
//!
//! `plan` reads cases — one JSON object per line, or one object over
//! several lines — and writes one answer line per case, in input order:
//!
//! ```text
//! $ echo '{"num_keys": 5, "adapters": [0, 1, 2], "lookup": {"0": [0, 3], "1": [1, 2, 3], "2": "00111"}}' \
//!     | prefetch-plan plan
//! {"plan": {"0": [0, 3], "1": [1, 2], "2": [4]}, "retain": [false, false, false, false, false], "prefix_len": 5}
//! ```
//!
//! See [`case`] for the input, [`answer`] for the output, and [`plan_cmd`]
//! for what happens at a bad case (the run stops there, exit status 2,
//! with the line and field on standard error). A case with a `windows`
//! field is a grid plan request ([`grid_case`]), answered per tier and row
//! with the hit length.
//!
//! `hit` reads [`hit_case`]s — a flat chunk-major bitmap or grouped rows,
//! with one window per group or row — and answers the prefix every group
//! can serve and the keys to keep ([`hit_cmd`]).
//!
//! `replay` ([`replay_cmd`]) replays a request trace (Mooncake's NDJSON or
//! `{"keys": [...]}` lines) through L1 and L2 adapters and reports hit
//! ratios, evictions and the planner's cost; see `docs/REPLAY.md`.
//!
//! # As a library
//!
//! The binary is a thin layer over this crate, which a fuzz target or a
//! test can drive directly: [`case::parse_case`] turns untrusted JSON into
//! a checked [`case::Case`] (or a [`case::CaseError`] — never a panic), and
//! an [`answer::Planner`] plans it.
//!
//! ```
//! use prefetch_plan::answer::{Planner, Trim};
//! use prefetch_plan::case::parse_case;
//!
//! let case = parse_case(r#"{"num_keys": 3, "adapters": [0, 1], "lookup": {"0": [0, 1], "1": "011"}}"#)?;
//! let mut planner = Planner::new("default", Trim::None)?;
//! let answer = planner.answer(&case)?;
//! assert_eq!(answer.plan().to_index_lists(), [(0, vec![0, 1]), (1, vec![2])]);
//! assert_eq!(answer.prefix_len(), 3);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

// The crates whose types this API takes and returns, so that a user names
// the very versions it was built with.
pub use bitmap_core;
pub use kv_replay;
pub use prefetch_policy;

pub mod answer;
pub mod bench_cmd;
pub mod case;
pub mod chart;
pub mod error;
pub mod features;
pub mod grid_case;
pub mod hit_case;
pub mod hit_cmd;
mod json;
pub mod plan_cmd;
pub mod reader;
pub mod replay_cmd;
pub mod replay_eviction;
