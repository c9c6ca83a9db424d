//! What LMCache's `PrefetchController` does between the lookups and the
//! loads, as one reusable value: [`PrefetchDecision`].
//!
//! After every adapter has answered `lookup_and_lock`, the controller
//!
//! 1. asks the policy for a load plan;
//! 2. trims it to the contiguous prefix of loadable keys (a key after a gap
//!    is useless to the model, so it is not transferred);
//! 3. asks the policy which of those keys to retain in L1;
//! 4. unlocks, on every adapter that answered, the keys it locked but will
//!    not load (`lookup & !plan`);
//! 5. hands each adapter in the plan its keys.
//!
//! [`PrefetchDecision::decide`] does 1–4; [`PrefetchDecision::loads`] is 5.
//! All the buffers live in the `PrefetchDecision`, so a controller that
//! keeps one per worker decides every request without allocating.

use crate::adapter::AdapterDescriptor;
use crate::error::PlanError;
use crate::keys::Keys;
use crate::lookup::LookupResults;
use crate::object_key::ObjectKey;
use crate::plan::LoadPlan;
use crate::policy::PrefetchPolicy;

/// The outcome of planning one prefetch request: the plan trimmed to its
/// loadable prefix, the keys to unlock, and the L1 retentions of the keys
/// to load.
///
/// ```
/// use prefetch_policy::{AdapterDescriptor, Keys, LookupResults, PrefetchDecision, RetainPolicy};
///
/// // key:                              01234
/// let lookup = LookupResults::from([(0, "11010".parse()?), (1, "01100".parse()?)]);
/// let adapters = [AdapterDescriptor::new(0, "dram"), AdapterDescriptor::new(1, "disk")];
///
/// let mut decision = PrefetchDecision::new();
/// decision.decide(&RetainPolicy::new(), Keys::count(5), &lookup, &adapters)?;
/// assert_eq!(decision.prefix_len(), 4); // nobody holds key 4
/// assert_eq!(decision.plan().to_index_lists(), [(0, vec![0, 1, 3]), (1, vec![2])]);
/// assert_eq!(format!("{:?}", decision.unlock_masks()), "{0: 00000, 1: 01000}");
/// assert_eq!(decision.retentions(), [true; 4]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct PrefetchDecision {
    plan: LoadPlan,
    unlock: LookupResults,
    retentions: Vec<bool>,
    prefix_len: usize,
}

impl PrefetchDecision {
    /// An empty decision; its buffers grow on first use and are reused.
    pub fn new() -> PrefetchDecision {
        PrefetchDecision::default()
    }

    /// An empty decision with buffers for `num_keys` keys and `adapters`
    /// adapters, so deciding requests up to that size never allocates.
    pub fn with_capacity(num_keys: usize, adapters: usize) -> PrefetchDecision {
        PrefetchDecision {
            plan: LoadPlan::with_capacity(num_keys, adapters),
            unlock: LookupResults::with_capacity(num_keys, adapters),
            retentions: Vec::with_capacity(num_keys),
            prefix_len: 0,
        }
    }

    /// Plans the request with `policy`, trims the plan to its loadable
    /// prefix, computes the unlock masks and the retentions of the prefix's
    /// keys, replacing the previous decision.
    ///
    /// # Errors
    ///
    /// The policy's [`PlanError`] (bad lookups or adapters); the decision is
    /// then unspecified but valid to reuse.
    pub fn decide<P: PrefetchPolicy + ?Sized>(
        &mut self,
        policy: &P,
        keys: Keys<'_>,
        lookup: &LookupResults,
        adapters: &[AdapterDescriptor],
    ) -> Result<(), PlanError> {
        policy.select_load_plan_into(keys, lookup, adapters, &mut self.plan)?;
        self.prefix_len = self.plan.trim_to_loadable_prefix();
        self.plan.unlock_masks_into(lookup, &mut self.unlock)?;
        policy.select_l1_retentions_into(keys.prefix(self.prefix_len), &mut self.retentions);
        Ok(())
    }

    /// Shortens the decision to keys `0..n` (when `n` is below the current
    /// prefix), as the controller does when L1 could not reserve room for
    /// every key: trims the plan, recomputes the unlock masks against the
    /// same `lookup`, and truncates the retentions.
    ///
    /// # Errors
    ///
    /// [`PlanError::LookupLengthMismatch`] if `lookup` is not the one the
    /// plan was made from (its bitmaps have another length).
    pub fn trim_to_prefix(&mut self, n: usize, lookup: &LookupResults) -> Result<(), PlanError> {
        if n < self.prefix_len {
            self.plan.trim_to_prefix(n);
            self.prefix_len = n;
            self.retentions.truncate(n);
        }
        self.plan.unlock_masks_into(lookup, &mut self.unlock)
    }

    /// The load plan, trimmed to the loadable prefix.
    pub fn plan(&self) -> &LoadPlan {
        &self.plan
    }

    /// The number of keys from key 0 that will be loaded: the prefix hit
    /// count LMCache reports.
    pub fn prefix_len(&self) -> usize {
        self.prefix_len
    }

    /// For every adapter that answered the lookup, the keys to unlock now:
    /// locked by the lookup, not in the plan. Masks may be empty.
    pub fn unlock_masks(&self) -> &LookupResults {
        &self.unlock
    }

    /// Whether to retain each of the first [`prefix_len`](Self::prefix_len)
    /// keys in L1 (`true`) or write it as temporary (`false`).
    pub fn retentions(&self) -> &[bool] {
        &self.retentions
    }

    /// For each adapter in the plan, its keys to load, in key order.
    ///
    /// # Errors
    ///
    /// [`PlanError::KeyCountMismatch`] if `keys` is not the request's key
    /// list (another length).
    pub fn loads<'k>(&self, keys: &'k [ObjectKey]) -> Result<Vec<(usize, Vec<&'k ObjectKey>)>, PlanError> {
        self.plan.gather(keys)
    }

    /// The plan, consuming the decision.
    pub fn into_plan(self) -> LoadPlan {
        self.plan
    }
}

#[cfg(test)]
mod tests {
    use bitmap_core::Bitmap;

    use super::*;
    use crate::policy::{DefaultPolicy, RetainPolicy};

    fn bits(s: &str) -> Bitmap {
        s.parse().unwrap()
    }

    fn keys(n: usize) -> Vec<ObjectKey> {
        (0..n).map(|i| ObjectKey::new(vec![i as u8], "m", 0).unwrap()).collect()
    }

    #[test]
    fn follows_the_lmcache_controller() {
        // key:                              0123456
        let lookup = LookupResults::from([(0, bits("1100110")), (1, bits("0110001")), (9, bits("1111111"))]);
        let adapters = [AdapterDescriptor::new(1, "disk"), AdapterDescriptor::new(0, "dram")];
        let objects = keys(7);
        let mut decision = PrefetchDecision::new();
        decision.decide(&DefaultPolicy::new(), Keys::from(&objects), &lookup, &adapters).unwrap();
        // Key 3 is held by nobody listed: the prefix stops there.
        assert_eq!(decision.prefix_len(), 3);
        assert_eq!(decision.plan().to_index_lists(), [(0, vec![0, 1]), (1, vec![2])]);
        assert_eq!(decision.retentions(), [false; 3]);
        // Adapter 9 (not listed) unlocks everything it locked.
        assert_eq!(
            decision.unlock_masks(),
            &LookupResults::from([(0, bits("0000110")), (1, bits("0100001")), (9, bits("1111111"))])
        );
        let loads = decision.loads(&objects).unwrap();
        assert_eq!(loads, [(0, vec![&objects[0], &objects[1]]), (1, vec![&objects[2]])]);
        assert_eq!(decision.loads(&objects[..2]), Err(PlanError::KeyCountMismatch { expected: 7, actual: 2 }));

        // L1 could reserve only two keys.
        decision.trim_to_prefix(2, &lookup).unwrap();
        assert_eq!(decision.prefix_len(), 2);
        assert_eq!(decision.plan().to_index_lists(), [(0, vec![0, 1])]);
        assert_eq!(decision.unlock_masks().get(1), Some(&bits("0110001")));
        assert_eq!(decision.retentions().len(), 2);
        // Growing is not trimming.
        decision.trim_to_prefix(5, &lookup).unwrap();
        assert_eq!(decision.prefix_len(), 2);
        assert_eq!(decision.clone().into_plan().len(), 1);
    }

    #[test]
    fn retain_marks_the_prefix_permanent_and_errors_propagate() {
        let lookup = LookupResults::from([(0, bits("1110"))]);
        let adapters = [AdapterDescriptor::new(0, "dram")];
        let mut decision = PrefetchDecision::with_capacity(4, 1);
        let policy: &dyn PrefetchPolicy = &RetainPolicy::new();
        decision.decide(policy, Keys::count(4), &lookup, &adapters).unwrap();
        assert_eq!(decision.retentions(), [true; 3]);
        assert_eq!(
            decision.decide(policy, Keys::count(5), &lookup, &adapters),
            Err(PlanError::LookupLengthMismatch { adapter: 0, expected: 5, actual: 4 })
        );
        let other = LookupResults::from([(0, bits("1"))]);
        assert!(decision.trim_to_prefix(0, &other).is_err());
    }
}
