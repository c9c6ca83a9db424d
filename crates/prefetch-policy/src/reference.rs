//! Reference implementations of the first-wins plan and the hybrid fold, **not for
//! production**: oracles for tests and fuzzing, and baselines for the
//! benchmarks.
//!
//! - [`naive_first_wins_plan`] decides key by key, the rule in its most
//!   obvious form: the oracle the engine is tested against.
//! - [`seed_literal_plan`] is the seed's `DefaultPrefetchPolicy` written
//!   literally over [`Bitmap`]: the same sequence of whole-bitmap operations,
//!   each allocating its result. The baseline the engine's speed-up is
//!   measured against.
//!
//! Both report bad input with the same [`PlanError`]s as the engine, except
//! that `seed_literal_plan` accepts repeated adapter indices, as the seed
//! does (the repeat gets nothing: its keys are already claimed).
//!
//! ```
//! use prefetch_policy::reference::{naive_first_wins_plan, seed_literal_plan};
//! use prefetch_policy::{AdapterDescriptor, LookupResults};
//!
//! let lookup = LookupResults::from([(0, "110".parse()?), (1, "011".parse()?)]);
//! let adapters = [AdapterDescriptor::new(0, "a"), AdapterDescriptor::new(1, "b")];
//! let naive = naive_first_wins_plan(3, &lookup, &adapters)?;
//! assert_eq!(naive, seed_literal_plan(3, &lookup, &adapters)?);
//! assert_eq!(naive.to_index_lists(), [(0, vec![0, 1]), (1, vec![2])]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! For the hybrid-model fold ([`fold`](crate::fold) and its forms):
//! [`naive_fold`], [`naive_unfold`], [`naive_fold_grouped`] and
//! [`naive_fold_unfold_ranked`] test each prefix length chunk by chunk
//! straight from the definitions (the oracles), and
//! [`lmcache_fold_unfold_ranked`] is LMCache's per-bit loop (the baseline).
//! They report bad input with the same [`HybridError`](crate::HybridError)s
//! as the engine.

use bitmap_core::Bitmap;

use crate::adapter::{AdapterDescriptor, sorted_index_vec};
use crate::error::PlanError;
use crate::lookup::LookupResults;
use crate::plan::{LoadPlan, check_lookup_lengths};

pub use crate::hybrid::reference::{
    lmcache_fold_unfold_ranked, naive_fold, naive_fold_grouped, naive_fold_unfold_ranked, naive_unfold,
};

/// The first-wins plan computed key by key: for each key, the listed
/// adapters in ascending index order, the first whose lookup holds the key
/// gets it.
///
/// # Errors
///
/// As [`plan_first_wins_into`](crate::plan_first_wins_into): a lookup
/// bitmap of the wrong length, then a repeated adapter index.
pub fn naive_first_wins_plan(
    num_keys: usize,
    lookup: &LookupResults,
    adapters: &[AdapterDescriptor],
) -> Result<LoadPlan, PlanError> {
    check_lookup_lengths(num_keys, lookup)?;
    let order = sorted_index_vec(adapters)?;
    let holders: Vec<(usize, &Bitmap)> =
        order.iter().filter_map(|&adapter| Some((adapter, lookup.get(adapter)?))).collect();
    let mut planned: Vec<(usize, Bitmap)> =
        holders.iter().map(|&(adapter, _)| (adapter, Bitmap::new(num_keys))).collect();
    for key in 0..num_keys {
        if let Some(first) = holders.iter().position(|(_, held)| held.test(key)) {
            planned[first].1.set(key);
        }
    }
    LoadPlan::from_entries(num_keys, planned)
}

/// The seed's algorithm, operation for operation:
///
/// ```text
/// global = Bitmap(len(keys)); for b in lookups: global |= b
/// for ad in sorted(adapters, by index):
///     curr = lookups.get(ad.index) or skip
///     local = global & curr; global &= ~local
///     if local.popcount() == 0: skip
///     plan[ad.index] = local
/// ```
///
/// # Errors
///
/// [`PlanError::LookupLengthMismatch`] for a lookup bitmap of the wrong
/// length (where the seed's bitmap operations would raise).
pub fn seed_literal_plan(
    num_keys: usize,
    lookup: &LookupResults,
    adapters: &[AdapterDescriptor],
) -> Result<LoadPlan, PlanError> {
    check_lookup_lengths(num_keys, lookup)?;
    let mut plan = LoadPlan::new(num_keys);
    let mut global = Bitmap::new(num_keys);
    for (_, bitmap) in lookup {
        global |= bitmap;
    }
    let mut sorted: Vec<&AdapterDescriptor> = adapters.iter().collect();
    sorted.sort_by_key(|adapter| adapter.index);
    for adapter in sorted {
        let Some(current) = lookup.get(adapter.index) else { continue };
        let local = &global & current;
        global &= !&local;
        if local.popcount() == 0 {
            continue;
        }
        plan.insert(adapter.index, local)?;
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_literal_tolerates_repeated_adapters() {
        let lookup = LookupResults::from([(0, "11".parse().unwrap())]);
        let adapters = [AdapterDescriptor::new(0, "a"), AdapterDescriptor::new(0, "b")];
        let plan = seed_literal_plan(2, &lookup, &adapters).unwrap();
        assert_eq!(plan.to_index_lists(), [(0, vec![0, 1])]);
        assert_eq!(naive_first_wins_plan(2, &lookup, &adapters), Err(PlanError::DuplicateAdapterIndex { index: 0 }));
    }

    #[test]
    fn both_reject_wrong_lengths() {
        let lookup = LookupResults::from([(4, "11".parse().unwrap())]);
        let expected = Err(PlanError::LookupLengthMismatch { adapter: 4, expected: 3, actual: 2 });
        assert_eq!(seed_literal_plan(3, &lookup, &[]), expected);
        assert_eq!(naive_first_wins_plan(3, &lookup, &[]), expected);
    }
}
