//! The [`PrefetchPolicy`] trait and the built-in policies, [`DefaultPolicy`]
//! (`default`) and [`RetainPolicy`] (`retain`).

use core::fmt;

use crate::adapter::AdapterDescriptor;
use crate::error::PlanError;
use crate::first_wins::{Parallelism, plan_first_wins_into};
use crate::keys::Keys;
use crate::lookup::LookupResults;
use crate::plan::LoadPlan;
use crate::validate::PlanContract;

/// The two decisions a prefetch controller delegates: which adapter loads
/// which key, and which loaded keys stay in L1.
///
/// The controller calls [`select_load_plan`](PrefetchPolicy::select_load_plan)
/// (or its buffer-reusing form) once all L2 adapters have answered their
/// lookups, and [`select_l1_retentions`](PrefetchPolicy::select_l1_retentions)
/// just before reserving L1 space for the keys it will load.
///
/// The trait is object-safe and requires `Send + Sync`: the
/// [registry](crate::PolicyRegistry) hands policies out as
/// `Box<dyn PrefetchPolicy>` by name, and a controller shares one across
/// threads.
///
/// # Implementing
///
/// Implement [`name`](PrefetchPolicy::name) and
/// [`select_load_plan_into`](PrefetchPolicy::select_load_plan_into); write
/// the plan with [`LoadPlan::reset`], [`LoadPlan::insert_clear`] and
/// [`LoadPlan::remove_empty`] to stay allocation-free. Override
/// [`select_l1_retentions_into`](PrefetchPolicy::select_l1_retentions_into)
/// to retain keys, and [`contract`](PrefetchPolicy::contract) to promise
/// more than a [`Sound`](PlanContract::Sound) plan.
///
/// ```
/// use prefetch_policy::{
///     AdapterDescriptor, Keys, LoadPlan, LookupResults, PlanContract, PlanError, PrefetchPolicy,
/// };
///
/// /// Loads only from adapter 0: sound, but not complete.
/// #[derive(Debug)]
/// struct OnlyFirst;
///
/// impl PrefetchPolicy for OnlyFirst {
///     fn name(&self) -> &str {
///         "only-first"
///     }
///
///     fn select_load_plan_into(
///         &self,
///         keys: Keys<'_>,
///         lookup: &LookupResults,
///         adapters: &[AdapterDescriptor],
///         plan: &mut LoadPlan,
///     ) -> Result<(), PlanError> {
///         plan.reset(keys.len());
///         if let (Some(held), true) = (lookup.get(0), adapters.iter().any(|a| a.index == 0)) {
///             plan.insert(0, held.clone())?;
///         }
///         plan.remove_empty();
///         Ok(())
///     }
/// }
///
/// let lookup = LookupResults::from([(0, "10".parse()?), (1, "01".parse()?)]);
/// let adapters = [AdapterDescriptor::new(0, "a"), AdapterDescriptor::new(1, "b")];
/// let policy: Box<dyn PrefetchPolicy> = Box::new(OnlyFirst);
/// let plan = policy.select_load_plan(Keys::count(2), &lookup, &adapters)?;
/// assert_eq!(plan.validate_with(&lookup, &adapters, policy.contract()), Ok(()));
/// assert_eq!(policy.select_l1_retentions(Keys::count(2)), [false, false]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait PrefetchPolicy: fmt::Debug + Send + Sync {
    /// The policy's name, as registered (`"default"`, `"retain"`).
    fn name(&self) -> &str;

    /// Decides which adapter loads which key.
    ///
    /// `lookup` maps adapter index to the bitmap of keys that adapter holds
    /// (bit `i` is `keys[i]`); `adapters` are the adapters available. The
    /// plan's bitmaps do not overlap and stay within the lookups: see
    /// [`contract`](PrefetchPolicy::contract) for what else a policy
    /// promises.
    ///
    /// The provided implementation plans into a new [`LoadPlan`] with
    /// [`select_load_plan_into`](PrefetchPolicy::select_load_plan_into).
    ///
    /// # Errors
    ///
    /// A [`PlanError`] if the inputs disagree: a lookup bitmap whose length
    /// is not `keys.len()`, two adapters with the same index.
    fn select_load_plan(
        &self,
        keys: Keys<'_>,
        lookup: &LookupResults,
        adapters: &[AdapterDescriptor],
    ) -> Result<LoadPlan, PlanError> {
        let mut plan = LoadPlan::new(keys.len());
        self.select_load_plan_into(keys, lookup, adapters, &mut plan)?;
        Ok(plan)
    }

    /// [`select_load_plan`](PrefetchPolicy::select_load_plan) into `plan`,
    /// replacing its contents and reusing its buffers, so a controller can
    /// keep one plan per worker and plan every request without allocating.
    ///
    /// # Errors
    ///
    /// As [`select_load_plan`](PrefetchPolicy::select_load_plan); `plan` is
    /// then unspecified but valid to reuse.
    fn select_load_plan_into(
        &self,
        keys: Keys<'_>,
        lookup: &LookupResults,
        adapters: &[AdapterDescriptor],
        plan: &mut LoadPlan,
    ) -> Result<(), PlanError>;

    /// For each key about to be written into L1, whether to keep it there
    /// (`true`, permanent) or let it go once read (`false`, temporary).
    ///
    /// The provided implementation calls
    /// [`select_l1_retentions_into`](PrefetchPolicy::select_l1_retentions_into):
    /// override that one.
    fn select_l1_retentions(&self, keys: Keys<'_>) -> Vec<bool> {
        let mut retentions = Vec::with_capacity(keys.len());
        self.select_l1_retentions_into(keys, &mut retentions);
        retentions
    }

    /// Replaces the contents of `out` with one retention decision per key.
    ///
    /// The provided implementation marks every key temporary (`false`), as
    /// the seed's base policy does.
    fn select_l1_retentions_into(&self, keys: Keys<'_>, out: &mut Vec<bool>) {
        out.clear();
        out.resize(keys.len(), false);
    }

    /// What this policy's plans satisfy, for
    /// [`LoadPlan::validate_with`]. The provided implementation promises the
    /// seed's interface contract, [`PlanContract::Sound`].
    fn contract(&self) -> PlanContract {
        PlanContract::Sound
    }

    /// Lets the policy split large plans across threads or not. A hint:
    /// policies without a parallel path ignore it, as the provided
    /// implementation does.
    fn set_parallelism(&mut self, parallelism: Parallelism) {
        let _ = parallelism;
    }
}

/// The `default` policy: each key is loaded from the lowest-indexed listed
/// adapter whose lookup holds it; every key is temporary in L1.
///
/// Plans in one pass over the words with the SIMD first-wins kernel, on
/// rayon's pool for very large batches (see [`Parallelism`] and
/// [`plan_first_wins_into`]).
///
/// ```
/// use prefetch_policy::{AdapterDescriptor, DefaultPolicy, Keys, LookupResults, PlanContract, PrefetchPolicy};
///
/// let lookup = LookupResults::from([(0, "011".parse()?), (1, "110".parse()?)]);
/// let adapters = [AdapterDescriptor::new(0, "dram"), AdapterDescriptor::new(1, "disk")];
/// let policy = DefaultPolicy::new();
/// let plan = policy.select_load_plan(Keys::count(3), &lookup, &adapters)?;
/// assert_eq!(plan.to_index_lists(), [(0, vec![1, 2]), (1, vec![0])]);
/// assert_eq!(policy.contract(), PlanContract::FirstWins);
/// assert_eq!(policy.select_l1_retentions(Keys::count(3)), [false; 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DefaultPolicy {
    parallelism: Parallelism,
}

impl DefaultPolicy {
    /// The name it is registered under.
    pub const NAME: &'static str = "default";

    /// The policy with [`Parallelism::Auto`].
    pub const fn new() -> DefaultPolicy {
        DefaultPolicy { parallelism: Parallelism::Auto }
    }

    /// This policy with the given parallelism.
    #[must_use]
    pub const fn with_parallelism(self, parallelism: Parallelism) -> DefaultPolicy {
        DefaultPolicy { parallelism }
    }

    /// Its parallelism.
    pub const fn parallelism(&self) -> Parallelism {
        self.parallelism
    }
}

impl PrefetchPolicy for DefaultPolicy {
    fn name(&self) -> &str {
        DefaultPolicy::NAME
    }

    fn select_load_plan_into(
        &self,
        keys: Keys<'_>,
        lookup: &LookupResults,
        adapters: &[AdapterDescriptor],
        plan: &mut LoadPlan,
    ) -> Result<(), PlanError> {
        plan_first_wins_into(keys.len(), lookup, adapters, self.parallelism, plan)
    }

    fn contract(&self) -> PlanContract {
        PlanContract::FirstWins
    }

    fn set_parallelism(&mut self, parallelism: Parallelism) {
        self.parallelism = parallelism;
    }
}

/// The `retain` policy: the plan of [`DefaultPolicy`], and every loaded key
/// stays in L1 (for data likely to be read again, such as shared system
/// prompts).
///
/// ```
/// use prefetch_policy::{Keys, PrefetchPolicy, RetainPolicy};
/// assert_eq!(RetainPolicy::new().select_l1_retentions(Keys::count(2)), [true, true]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RetainPolicy {
    plan: DefaultPolicy,
}

impl RetainPolicy {
    /// The name it is registered under.
    pub const NAME: &'static str = "retain";

    /// The policy with [`Parallelism::Auto`].
    pub const fn new() -> RetainPolicy {
        RetainPolicy { plan: DefaultPolicy::new() }
    }

    /// This policy with the given parallelism.
    #[must_use]
    pub const fn with_parallelism(self, parallelism: Parallelism) -> RetainPolicy {
        RetainPolicy { plan: self.plan.with_parallelism(parallelism) }
    }

    /// Its parallelism.
    pub const fn parallelism(&self) -> Parallelism {
        self.plan.parallelism()
    }
}

impl PrefetchPolicy for RetainPolicy {
    fn name(&self) -> &str {
        RetainPolicy::NAME
    }

    fn select_load_plan_into(
        &self,
        keys: Keys<'_>,
        lookup: &LookupResults,
        adapters: &[AdapterDescriptor],
        plan: &mut LoadPlan,
    ) -> Result<(), PlanError> {
        self.plan.select_load_plan_into(keys, lookup, adapters, plan)
    }

    fn select_l1_retentions_into(&self, keys: Keys<'_>, out: &mut Vec<bool>) {
        out.clear();
        out.resize(keys.len(), true);
    }

    fn contract(&self) -> PlanContract {
        self.plan.contract()
    }

    fn set_parallelism(&mut self, parallelism: Parallelism) {
        self.plan.set_parallelism(parallelism);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_are_send_sync_trait_objects() {
        fn assert_send_sync<T: Send + Sync + ?Sized>() {}
        assert_send_sync::<dyn PrefetchPolicy>();
        let policies: [Box<dyn PrefetchPolicy>; 2] = [Box::new(DefaultPolicy::new()), Box::new(RetainPolicy::new())];
        assert_eq!(policies.iter().map(|p| p.name()).collect::<Vec<_>>(), ["default", "retain"]);
    }

    #[test]
    fn set_parallelism_reaches_the_engine_setting() {
        let mut policy: Box<dyn PrefetchPolicy> = Box::new(RetainPolicy::new());
        policy.set_parallelism(Parallelism::Parallel);
        assert_eq!(format!("{policy:?}"), "RetainPolicy { plan: DefaultPolicy { parallelism: Parallel } }");
        let mut default = DefaultPolicy::new();
        default.set_parallelism(Parallelism::Sequential);
        assert_eq!(default.parallelism(), Parallelism::Sequential);
        assert_eq!(
            RetainPolicy::new().with_parallelism(Parallelism::Sequential).parallelism(),
            Parallelism::Sequential
        );
    }

    #[test]
    fn retentions_into_replaces_previous_contents() {
        let mut out = vec![true; 7];
        DefaultPolicy::new().select_l1_retentions_into(Keys::count(3), &mut out);
        assert_eq!(out, [false; 3]);
        RetainPolicy::new().select_l1_retentions_into(Keys::count(0), &mut out);
        assert!(out.is_empty());
    }
}
