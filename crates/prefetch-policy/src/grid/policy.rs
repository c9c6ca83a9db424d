//! The [`GridPolicy`] trait and its built-in policies, [`DefaultGridPolicy`]
//! (`default`) and [`RetainGridPolicy`] (`retain`): LMCache's newer
//! prefetch policy interface (`plan_load`, `plan_l1_retention`).

use core::fmt;

use crate::grid::plan::{GridPlan, GridRequest, plan_grid_into};
use crate::hybrid::HybridError;
use crate::keys::Keys;

/// The two decisions a grid-based prefetch controller delegates: which L1
/// manager or L2 adapter loads which cell ([`plan_load_into`]), and which
/// keys loaded from L2 stay in L1 ([`select_l1_retentions_into`]).
///
/// Object-safe and `Send + Sync`, for the
/// [grid registry](crate::GridPolicyRegistry), as
/// [`PrefetchPolicy`](crate::PrefetchPolicy) is for the flat plan.
///
/// [`plan_load_into`]: GridPolicy::plan_load_into
/// [`select_l1_retentions_into`]: GridPolicy::select_l1_retentions_into
///
/// ```
/// use prefetch_policy::{FetchingPolicy, Grid, GridMap, GridRequest, Keys, create_grid_policy};
///
/// let l1 = GridMap::from_entries([(0, Grid::from_fn(1, 4, |_, c| c != 2))])?;
/// let l2 = GridMap::from_entries([(0, Grid::from_fn(1, 4, |_, _| true))])?;
/// let policy = create_grid_policy("retain")?;
/// let plan = policy.plan_load(&GridRequest::new(&[-1], 4, &l1, &l2, FetchingPolicy::Prefix))?;
/// assert_eq!((plan.hit(), plan.l2().to_index_lists()), (4, vec![(0, vec![vec![2]])]));
/// assert_eq!(policy.select_l1_retentions(Keys::count(1)), [true]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait GridPolicy: fmt::Debug + Send + Sync {
    /// The policy's name, as registered (`"default"`, `"retain"`).
    fn name(&self) -> &str;

    /// Plans `request` into `plan`, replacing its contents and reusing its
    /// buffers.
    ///
    /// # Errors
    ///
    /// A [`HybridError`] if the request is inconsistent (see
    /// [`plan_grid_into`]); `plan` is then empty.
    fn plan_load_into(&self, request: &GridRequest<'_>, plan: &mut GridPlan) -> Result<(), HybridError>;

    /// [`plan_load_into`](GridPolicy::plan_load_into) into a new plan.
    ///
    /// # Errors
    ///
    /// As [`plan_load_into`](GridPolicy::plan_load_into).
    fn plan_load(&self, request: &GridRequest<'_>) -> Result<GridPlan, HybridError> {
        let mut plan = GridPlan::new();
        self.plan_load_into(request, &mut plan)?;
        Ok(plan)
    }

    /// For each key about to be written into L1 from L2, whether to keep it
    /// there. The provided implementation calls
    /// [`select_l1_retentions_into`](GridPolicy::select_l1_retentions_into).
    fn select_l1_retentions(&self, keys: Keys<'_>) -> Vec<bool> {
        let mut retentions = Vec::with_capacity(keys.len());
        self.select_l1_retentions_into(keys, &mut retentions);
        retentions
    }

    /// Replaces `out` with one decision per key. The provided
    /// implementation marks every key temporary (`false`).
    fn select_l1_retentions_into(&self, keys: Keys<'_>, out: &mut Vec<bool>) {
        out.clear();
        out.resize(keys.len(), false);
    }
}

/// The `default` grid policy: the greedy tier-ordered plan of
/// [`plan_grid_into`]; every key temporary in L1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DefaultGridPolicy;

impl DefaultGridPolicy {
    /// The name it is registered under.
    pub const NAME: &'static str = "default";

    /// The policy.
    pub const fn new() -> DefaultGridPolicy {
        DefaultGridPolicy
    }
}

impl GridPolicy for DefaultGridPolicy {
    fn name(&self) -> &str {
        DefaultGridPolicy::NAME
    }

    fn plan_load_into(&self, request: &GridRequest<'_>, plan: &mut GridPlan) -> Result<(), HybridError> {
        plan_grid_into(request, plan)
    }
}

/// The `retain` grid policy: the plan of [`DefaultGridPolicy`], and every
/// key loaded from L2 stays in L1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RetainGridPolicy;

impl RetainGridPolicy {
    /// The name it is registered under.
    pub const NAME: &'static str = "retain";

    /// The policy.
    pub const fn new() -> RetainGridPolicy {
        RetainGridPolicy
    }
}

impl GridPolicy for RetainGridPolicy {
    fn name(&self) -> &str {
        RetainGridPolicy::NAME
    }

    fn plan_load_into(&self, request: &GridRequest<'_>, plan: &mut GridPlan) -> Result<(), HybridError> {
        plan_grid_into(request, plan)
    }

    fn select_l1_retentions_into(&self, keys: Keys<'_>, out: &mut Vec<bool>) {
        out.clear();
        out.resize(keys.len(), true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_retentions() {
        let policies: [Box<dyn GridPolicy>; 2] =
            [Box::new(DefaultGridPolicy::new()), Box::new(RetainGridPolicy::new())];
        assert_eq!(policies.iter().map(|p| p.name()).collect::<Vec<_>>(), ["default", "retain"]);
        assert_eq!(policies[0].select_l1_retentions(Keys::count(2)), [false, false]);
        assert_eq!(policies[1].select_l1_retentions(Keys::count(3)), [true; 3]);
        let mut out = vec![false; 9];
        policies[1].select_l1_retentions_into(Keys::count(0), &mut out);
        assert!(out.is_empty());
    }
}
