//! Prefetch load-plan policies for an LMCache-style KV-cache controller.
//!
//! When a request's keys are missing from L1, the controller asks every L2
//! adapter which of them it holds (`lookup_and_lock`), then a
//! [`PrefetchPolicy`] decides which adapter loads which key — a
//! [`LoadPlan`] — and which loaded keys stay in L1. This crate is the
//! policy layer of LMCache's `prefetch_policy.py`, on
//! [`bitmap_core`]'s SIMD kernels:
//!
//! - the [`PrefetchPolicy`] trait, object-safe, taking the keys as a cheap
//!   [`Keys`] view (a bare count when no policy needs the key objects);
//! - the built-in policies [`DefaultPolicy`] (`default`: each key from the
//!   lowest-indexed adapter that holds it) and [`RetainPolicy`] (`retain`:
//!   the same plan, every key kept in L1), and [`BalancedPolicy`]
//!   (`balanced`: the same keys, shared out among the adapters that hold
//!   them by [weight](AdapterDescriptor::weight) so the slowest finishes
//!   first);
//! - a thread-safe [`PolicyRegistry`] of policies by name, and the
//!   process-wide [`global_registry`];
//! - [`LoadPlan`], with what a controller does next (prefix trimming,
//!   unlock masks, per-adapter key lists) and [`validate`](LoadPlan::validate);
//!   [`PrefetchDecision`] strings those steps together;
//! - [`ObjectKey`], LMCache's validated key, and [`reference`](mod@reference)
//!   implementations for tests and benchmarks;
//! - prefix hits for hybrid models ([`hybrid`]): LMCache's `fold`/`unfold`
//!   over groups with full-attention, sliding-window and Mamba layers and
//!   tensor-parallel ranks, in flat and grouped layouts.
//!
//! # Planning
//!
//! ```
//! use bitmap_core::Bitmap;
//! use prefetch_policy::{AdapterDescriptor, DefaultPolicy, Keys, LookupResults, PrefetchPolicy};
//!
//! // 1,024 keys; three adapters answered their lookups.
//! let num_keys = 1024;
//! let mut lookup = LookupResults::new();
//! lookup.insert(0, Bitmap::with_prefix(num_keys, 300)); // DRAM: keys 0..300
//! lookup.insert(1, Bitmap::with_prefix(num_keys, 700)); // disk: keys 0..700
//! let mut remote = Bitmap::new(num_keys);
//! remote.set_range(650..);
//! lookup.insert(2, remote); // remote: keys 650..1024
//! let adapters =
//!     [AdapterDescriptor::new(0, "dram"), AdapterDescriptor::new(1, "disk"), AdapterDescriptor::new(2, "remote")];
//!
//! let plan = DefaultPolicy::new().select_load_plan(Keys::count(num_keys), &lookup, &adapters)?;
//! assert_eq!(plan.get(0).map(Bitmap::popcount), Some(300));
//! assert_eq!(plan.get(1).map(Bitmap::popcount), Some(400)); // 300..700
//! assert_eq!(plan.get(2).map(Bitmap::popcount), Some(324)); // 700..1024
//! assert_eq!(plan.prefix_len(), num_keys);
//! plan.validate(&lookup, &adapters)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Reusing buffers
//!
//! [`PrefetchPolicy::select_load_plan_into`] plans into an existing
//! [`LoadPlan`], which keeps its bitmaps between calls: once warmed up (or
//! built with [`LoadPlan::with_capacity`]) it plans without allocating.
//! `tests/no_alloc.rs` proves it with a counting allocator.
//!
//! ```
//! use bitmap_core::Bitmap;
//! use prefetch_policy::{AdapterDescriptor, DefaultPolicy, Keys, LoadPlan, LookupResults, PrefetchPolicy};
//!
//! let policy = DefaultPolicy::new();
//! let adapters = [AdapterDescriptor::new(0, "dram"), AdapterDescriptor::new(1, "disk")];
//! let mut lookup = LookupResults::with_capacity(1024, 2);
//! let mut plan = LoadPlan::with_capacity(1024, 2);
//! for request in 0..3 {
//!     lookup.clear();
//!     lookup.insert_clear(0, 1024).set_range(..100 * request);
//!     lookup.insert_clear(1, 1024).set_range(..);
//!     policy.select_load_plan_into(Keys::count(1024), &lookup, &adapters, &mut plan)?;
//!     assert_eq!(plan.get(1).map(Bitmap::popcount), Some(1024 - 100 * request));
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # After the plan
//!
//! Only the contiguous run of loadable keys from key 0 is worth loading;
//! the keys each adapter locked but will not load are unlocked at once.
//!
//! ```
//! use prefetch_policy::{AdapterDescriptor, DefaultPolicy, Keys, LookupResults, PrefetchPolicy};
//!
//! // key:                              012345
//! let lookup = LookupResults::from([(0, "110011".parse()?), (1, "011001".parse()?)]);
//! let adapters = [AdapterDescriptor::new(0, "dram"), AdapterDescriptor::new(1, "disk")];
//! let mut plan = DefaultPolicy::new().select_load_plan(Keys::count(6), &lookup, &adapters)?;
//! assert_eq!(plan.trim_to_loadable_prefix(), 3); // nobody holds key 3
//! assert_eq!(plan.to_index_lists(), [(0, vec![0, 1]), (1, vec![2])]);
//! let unlock = plan.unlock_masks(&lookup)?;
//! assert_eq!(format!("{unlock:?}"), "{0: 000011, 1: 010001}");
//! let names = ["k0", "k1", "k2", "k3", "k4", "k5"];
//! assert_eq!(plan.gather(&names)?, [(0, vec![&"k0", &"k1"]), (1, vec![&"k2"])]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Prefix hits for hybrid models
//!
//! A prefix is usable only if every layer group can serve it under its own
//! rule; [`fold_unfold_ranked`] gives the longest such prefix and the keys
//! it needs (see [`hybrid`] for the layouts and rules):
//!
//! ```
//! use bitmap_core::Bitmap;
//! use prefetch_policy::{FULL_ATTENTION_WINDOW, fold_unfold_grouped};
//!
//! // One row per (group, rank): full attention, and a Mamba group (window 1).
//! let rows: [Bitmap; 2] = ["111110".parse()?, "001011".parse()?];
//! let (hit, needed) = fold_unfold_grouped(&rows, &[FULL_ATTENTION_WINDOW, 1])?;
//! assert_eq!(hit, 5); // chunk 5 is missing from the full-attention row
//! assert_eq!([needed[0].to_string(), needed[1].to_string()], ["111110", "000010"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Policies by name
//!
//! ```
//! use prefetch_policy::{create_prefetch_policy, registered_prefetch_policies, Keys, PolicyRegistry, RetainPolicy};
//!
//! assert!(registered_prefetch_policies().contains(&"retain".to_owned()));
//! let policy = create_prefetch_policy("retain")?;
//! assert_eq!(policy.select_l1_retentions(Keys::count(3)), [true; 3]);
//!
//! // A registry of one's own, for tests or embedding.
//! let registry = PolicyRegistry::new();
//! registry.register("keep-all", || Box::new(RetainPolicy::new()))?;
//! assert_eq!(registry.names(), ["keep-all"]);
//! assert!(registry.create("default").is_err());
//! # Ok::<(), prefetch_policy::RegistryError>(())
//! ```

#![forbid(unsafe_code)]

mod adapter;
mod adapter_map;
mod balanced;
mod controller;
mod error;
mod first_wins;
mod grid;
pub mod hybrid;
mod keys;
mod lookup;
mod object_key;
mod plan;
mod policy;
pub mod reference;
mod registry;
mod validate;

// The bitmap crate whose `Bitmap` this API takes and returns, so that a user
// names the very version it was built with.
pub use bitmap_core;

pub use adapter::{AdapterDescriptor, AdapterWeight};
pub use adapter_map::{Entries, IntoEntries};
pub use balanced::{BalancedPolicy, MAX_DENSE_PARTICIPANTS, plan_balanced_into};
pub use controller::PrefetchDecision;
pub use error::{GridError, KeyError, KeyField, PlanError, PlanViolation, RegistryError, WeightError};
pub use first_wins::{MAX_INLINE_ADAPTERS, PARALLEL_THRESHOLD_WORDS, Parallelism, plan_first_wins_into};
pub use grid::columns::MAX_COLUMN_ROWS;
pub use grid::map::GridMap;
pub use grid::plan::{FetchingPolicy, GridPlan, GridRequest, UnknownFetchingPolicy, plan_grid, plan_grid_into};
pub use grid::policy::{DefaultGridPolicy, GridPolicy, RetainGridPolicy};
pub use grid::{FlatOrder, Grid};
pub use hybrid::{
    FULL_ATTENTION_WINDOW, FoldWorkspace, HybridError, TrimPolicy, chunk_count, fold, fold_grouped, fold_grouped_into,
    fold_into, fold_unfold, fold_unfold_grouped, fold_unfold_grouped_into, fold_unfold_ranked, fold_unfold_ranked_into,
    merge_bitmaps, select_retained, unfold, unfold_grouped, unfold_grouped_into, unfold_into, unfold_range,
};
pub use keys::Keys;
pub use lookup::LookupResults;
pub use object_key::ObjectKey;
pub use plan::LoadPlan;
pub use policy::{DefaultPolicy, PrefetchPolicy, RetainPolicy};
pub use registry::{
    GridPolicyFactory, GridPolicyRegistry, PolicyFactory, PolicyRegistry, create_grid_policy, create_prefetch_policy,
    global_grid_registry, global_registry, register_grid_policy, register_prefetch_policy, registered_grid_policies,
    registered_prefetch_policies,
};
pub use validate::PlanContract;

/// The workspace README's Rust example, compiled and run as a doctest so it
/// cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

/// This crate's README (what crates.io shows), compiled and run as a
/// doctest for the same reason.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadmeDoctests;

/// docs/ARCHITECTURE.md's example of the hybrid API ("Using the hybrid
/// API"), compiled and run as a doctest for the same reason.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/ARCHITECTURE.md")]
struct ArchitectureDoctests;
