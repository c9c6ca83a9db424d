//! [`Planner`]: steps (a)–(c) of the replay's model for one request — the
//! lookup bitmaps, the policy's plan, the hit — in buffers it keeps from
//! one request to the next.

use bitmap_core::Bitmap;
use prefetch_policy::{AdapterDescriptor, Keys, LoadPlan, LookupResults, PlanError, PrefetchPolicy};

use crate::tier::Tier;

/// The per-request planning of a replay, allocation-free once its buffers
/// have seen the longest request (see `tests/no_alloc.rs`).
///
/// After [`plan`](Planner::plan):
/// - [`in_l1`](Planner::in_l1) has bit `i` set if key `i` is in L1;
/// - [`plan_of`](Planner::plan_of) gives the keys each adapter loads, among
///   those not in L1 (trimming to the hit is left to the counting: see
///   [`served`](Planner::served));
/// - the hints let the touches that follow skip a second hash lookup.
///
/// ```
/// use kv_replay::{Eviction, Planner, Tier};
/// use prefetch_policy::{AdapterDescriptor, DefaultPolicy};
///
/// let mut l1 = Tier::new(Some(10), Eviction::Lru);
/// let mut l2 = Tier::new(None, Eviction::Lru);
/// l1.touch(10);
/// for key in [11, 13] {
///     l2.touch(key);
/// }
/// let adapters = [AdapterDescriptor::new(0, "dram")];
/// let mut planner = Planner::new();
/// // Key 12 is nowhere: the hit stops there, and 13's load is past it.
/// let hit = planner.plan(&[10, 11, 12, 13], &l1, &[l2], &DefaultPolicy::new(), &adapters)?;
/// assert_eq!((hit, planner.served(0, hit)), (2, 1));
/// # Ok::<(), prefetch_policy::PlanError>(())
/// ```
#[derive(Debug, Default)]
pub struct Planner {
    in_l1: Bitmap,
    lookup: LookupResults,
    plan: LoadPlan,
    covered: Bitmap,
    l1_hints: Vec<Option<u32>>,
    /// One row of hints per adapter.
    l2_hints: Vec<Vec<Option<u32>>>,
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
            l1_hints: Vec::with_capacity(max_keys),
            l2_hints: (0..adapters).map(|_| Vec::with_capacity(max_keys)).collect(),
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
    pub fn plan(
        &mut self,
        keys: &[u64],
        l1: &Tier,
        l2: &[Tier],
        policy: &dyn PrefetchPolicy,
        adapters: &[AdapterDescriptor],
    ) -> Result<usize, PlanError> {
        self.lookup(keys, l1, l2);
        self.decide(policy, adapters)
    }

    /// (a) Looks up each key in L1, and each key not in L1 in each adapter,
    /// into the lookup bitmaps (what LMCache's `lookup_and_lock` answers).
    pub fn lookup(&mut self, keys: &[u64], l1: &Tier, l2: &[Tier]) {
        let n = keys.len();
        self.in_l1.reset(n);
        self.l1_hints.clear();
        for (i, &key) in keys.iter().enumerate() {
            let hint = l1.find(key);
            if hint.is_some() {
                self.in_l1.set(i);
            }
            self.l1_hints.push(hint);
        }

        self.lookup.clear();
        if self.l2_hints.len() < l2.len() {
            self.l2_hints.resize_with(l2.len(), Vec::new);
        }
        for (j, (tier, hints)) in l2.iter().zip(&mut self.l2_hints).enumerate() {
            let held = self.lookup.insert_clear(j, n);
            hints.clear();
            for (i, &key) in keys.iter().enumerate() {
                let hint = if self.l1_hints[i].is_some() { None } else { tier.find(key) };
                if hint.is_some() {
                    held.set(i);
                }
                hints.push(hint);
            }
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

    /// The L1 slot hint of key `i` of the last request.
    pub(crate) fn l1_hint(&self, i: usize) -> Option<u32> {
        self.l1_hints[i]
    }

    /// The slot hint of key `i` in adapter `j` (`None` if not looked up or
    /// not held).
    pub(crate) fn l2_hint(&self, j: usize, i: usize) -> Option<u32> {
        self.l2_hints[j][i]
    }
}
