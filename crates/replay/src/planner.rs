//! [`Planner`]: steps (a)–(c) of the replay's model for one request — the
//! lookup bitmaps, the policy's plan, the hit — in buffers it keeps from
//! one request to the next.

use bitmap_core::Bitmap;
use prefetch_policy::{AdapterDescriptor, Keys, LoadPlan, LookupResults, PlanError, PrefetchPolicy};

use crate::replay_tier::HoldsKeys;

/// The per-request planning of a replay, allocation-free once its buffers
/// have seen the longest request (see `tests/no_alloc.rs`).
///
/// After [`plan`](Planner::plan):
/// - [`in_l1`](Planner::in_l1) has bit `i` set if key `i` is in L1;
/// - [`plan_of`](Planner::plan_of) gives the keys each adapter loads, among
///   those not in L1 (trimming to the hit is left to the counting: see
///   [`served`](Planner::served));
///
/// ```
/// use kv_replay::{Eviction, Planner, Tier};
/// use prefetch_policy::{AdapterDescriptor, DefaultPolicy};
///
/// let mut l1 = Tier::new(Some(10), Eviction::Lru);
/// let mut l2 = Tier::new(None, Eviction::Lru);
/// l1.touch(0);
/// for key in [1, 3] {
///     l2.touch(key);
/// }
/// let adapters = [AdapterDescriptor::new(0, "dram")];
/// let mut planner = Planner::new();
/// // Key 2 is nowhere: the hit stops there, and 3's load is past it.
/// let hit = planner.plan(&[0, 1, 2, 3], &l1, &[l2], &DefaultPolicy::new(), &adapters)?;
/// assert_eq!((hit, planner.served(0, hit)), (2, 1));
/// # Ok::<(), prefetch_policy::PlanError>(())
/// ```
#[derive(Debug, Default)]
pub struct Planner {
    in_l1: Bitmap,
    lookup: LookupResults,
    plan: LoadPlan,
    covered: Bitmap,
}

impl Planner {
    /// A planner with empty buffers: the first requests size them.
    pub fn new() -> Planner {
        Planner::default()
    }

    /// A planner whose buffers fit requests of up to `max_keys` keys over
    /// `adapters` adapters, so that it never allocates.
    pub fn with_capacity(max_keys: usize, adapters: usize) -> Planner {
        Planner {
            in_l1: Bitmap::with_capacity_bits(max_keys),
            lookup: LookupResults::with_capacity(max_keys, adapters),
            plan: LoadPlan::with_capacity(max_keys, adapters),
            covered: Bitmap::with_capacity_bits(max_keys),
        }
    }

    /// Plans one request and returns its hit `h`, the longest prefix of
    /// keys that are in L1 or planned: [`lookup`](Planner::lookup), then
    /// [`decide`](Planner::decide).
    ///
    /// `adapters[j]` describes `l2[j]` and must have index `j`.
    ///
    /// # Errors
    ///
    /// The policy's [`PlanError`]; the planner is then valid to reuse.
    pub fn plan<L: HoldsKeys, A: HoldsKeys>(
        &mut self,
        keys: &[u32],
        l1: &L,
        l2: &[A],
        policy: &dyn PrefetchPolicy,
        adapters: &[AdapterDescriptor],
    ) -> Result<usize, PlanError> {
        self.lookup(keys, l1, l2);
        self.decide(policy, adapters)
    }

    /// (a) Looks up each key in L1, and each key not in L1 in each adapter,
    /// into the lookup bitmaps (what LMCache's `lookup_and_lock` answers).
    pub fn lookup<L: HoldsKeys, A: HoldsKeys>(&mut self, keys: &[u32], l1: &L, l2: &[A]) {
        let n = keys.len();
        self.in_l1.reset(n);
        l1.mark_held(keys, None, &mut self.in_l1);
        self.lookup.clear();
        for (j, tier) in l2.iter().enumerate() {
            let held = self.lookup.insert_clear(j, n);
            tier.mark_held(keys, Some(&self.in_l1), held);
        }
    }

    /// (b) Asks `policy` to plan over the lookup bitmaps (so only keys not
    /// in L1 are planned), then (c) returns the hit: the leading ones of
    /// (in L1) | (planned). This is the planner's own time the replay
    /// reports: from the lookup bitmaps to the prefix.
    ///
    /// # Errors
    ///
    /// The policy's [`PlanError`].
    pub fn decide(&mut self, policy: &dyn PrefetchPolicy, adapters: &[AdapterDescriptor]) -> Result<usize, PlanError> {
        let n = self.in_l1.len();
        policy.select_load_plan_into(Keys::count(n), &self.lookup, adapters, &mut self.plan)?;
        self.covered.copy_from(&self.in_l1);
        for (_, loads) in self.plan.iter() {
            self.covered.union_with(loads);
        }
        Ok(self.covered.count_leading_ones())
    }

    /// The last request's keys found in L1.
    pub fn in_l1(&self) -> &Bitmap {
        &self.in_l1
    }

    /// The keys adapter `j` loads in the last plan, untrimmed; `None` if it
    /// loads nothing.
    pub fn plan_of(&self, j: usize) -> Option<&Bitmap> {
        self.plan.get(j)
    }

    /// How many of the keys before `hit` adapter `j` serves: its loads
    /// after the controller's trim to the hit.
    pub fn served(&self, j: usize, hit: usize) -> usize {
        self.plan.get(j).map_or(0, |loads| loads.count_range(..hit))
    }
}
