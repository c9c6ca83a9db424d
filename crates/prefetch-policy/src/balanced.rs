//! The `balanced` policy: the keys `default` plans, shared out among the
//! adapters that hold them so that the slowest adapter finishes as early
//! as possible.
//!
//! # Why
//!
//! A common set-up stores every key on every L2 adapter (LMCache's default
//! store policy writes each key to all of them). First-adapter-wins then
//! loads everything from adapter 0 while the others sit idle, and a
//! prefetch takes as long as one adapter needs for all of it.
//!
//! # What it plans
//!
//! Exactly the keys `default` plans (the same merged bitmap, so the same
//! `prefix_len`), each on one adapter that holds it, minimising the
//! largest *weighted load* `max_a(keys planned on a / weight_a)` — the
//! time the slowest adapter needs if weights are bandwidths. Keys only one
//! adapter holds go to it; keys several hold are shared out. See
//! [`BalancedPolicy`] for the guarantee and [`plan_balanced_into`] for the
//! algorithm and its cost.

mod dense;
mod general;
mod owners;
mod search;
mod solve;

use crate::adapter::{AdapterDescriptor, sorted_indices};
use crate::error::PlanError;
use crate::first_wins::{MAX_INLINE_ADAPTERS, gather_participants};
use crate::keys::Keys;
use crate::lookup::LookupResults;
use crate::plan::{LoadPlan, check_lookup_lengths};
use crate::policy::PrefetchPolicy;
use crate::validate::PlanContract;

pub use dense::MAX_DENSE_PARTICIPANTS;

/// The `balanced` policy: the keys [`DefaultPolicy`](crate::DefaultPolicy)
/// plans, shared out among the adapters that hold them in proportion to
/// their [weights](crate::AdapterDescriptor::weight), so that the largest
/// weighted load `max_a(keys_a / weight_a)` is as small as it can be. Every
/// key is temporary in L1, as with `default`.
///
/// # What is promised
///
/// - **Coverage**: the plan loads exactly the keys `default` loads (every
///   key some listed adapter's lookup holds), each from one adapter that
///   holds it: [`PlanContract::Complete`], checked by
///   [`LoadPlan::validate_with`].
/// - **Optimality**: no plan with that coverage has a smaller largest
///   weighted load. The search compares key counts with multiples of the
///   weights in `f64`, so with weights such as 0.1 it may be off where
///   such a product is within a rounding error of an integer: the largest
///   weighted load is at most the optimum × (1 + 10⁻¹²). That is within
///   one key's weight of the optimum for any plan of fewer than 10¹² keys
///   (one key on the most loaded adapter `a` adds `1 / weight_a`, a
///   relative `1 / keys_a`). With integer weights it is the optimum.
/// - **Determinism**: the same lookups, adapters and weights give the same
///   plan. Ties go to lower adapter indices: each class of keys (keys held
///   by the same set of adapters) fills its adapters in index order up to
///   a common bound that rises only as far as it must, and within a class
///   the keys go in index order, so an adapter loads runs of its classes'
///   keys. (3 replicas of 262,144 keys get 87,382, 87,381 and 87,381.)
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::{AdapterDescriptor, BalancedPolicy, Keys, LookupResults, PlanContract, PrefetchPolicy};
///
/// // Three replicas of 3,000 keys; adapter 0 is twice as fast.
/// let lookup: LookupResults = (0..3).map(|a| (a, Bitmap::with_prefix(3000, 3000))).collect();
/// let adapters = [
///     AdapterDescriptor::new(0, "nvme").with_weight(2.0)?,
///     AdapterDescriptor::new(1, "ssd"),
///     AdapterDescriptor::new(2, "ssd"),
/// ];
/// let policy = BalancedPolicy::new();
/// let plan = policy.select_load_plan(Keys::count(3000), &lookup, &adapters)?;
/// let loads: Vec<usize> = plan.iter().map(|(_, keys)| keys.popcount()).collect();
/// assert_eq!(loads, [1500, 750, 750]);
/// assert_eq!(plan.prefix_len(), 3000);
/// plan.validate_with(&lookup, &adapters, policy.contract())?;
/// assert_eq!(policy.contract(), PlanContract::Complete);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BalancedPolicy;

impl BalancedPolicy {
    /// The name it is registered under.
    pub const NAME: &'static str = "balanced";

    /// The policy.
    pub const fn new() -> BalancedPolicy {
        BalancedPolicy
    }
}

impl PrefetchPolicy for BalancedPolicy {
    fn name(&self) -> &str {
        BalancedPolicy::NAME
    }

    fn select_load_plan_into(
        &self,
        keys: Keys<'_>,
        lookup: &LookupResults,
        adapters: &[AdapterDescriptor],
        plan: &mut LoadPlan,
    ) -> Result<(), PlanError> {
        plan_balanced_into(keys.len(), lookup, adapters, plan)
    }

    fn contract(&self) -> PlanContract {
        PlanContract::Complete
    }
}

/// Plans `num_keys` keys balanced into `plan` (the engine of
/// [`BalancedPolicy`]).
///
/// # Algorithm
///
/// The *participants* are the listed adapters with a lookup entry. A key's
/// *class* is the set of participants that hold it.
///
/// 1. **Count** the keys of each class. Up to [`MAX_DENSE_PARTICIPANTS`]
///    participants, every class has a slot, and the counts are kept per
///    *super-block* (at most 16 runs of words). Up to 4 participants,
///    [`kernel::class_counts`](bitmap_core::kernel::class_counts) counts
///    every class of a super-block in one pass; above, fused kernel calls
///    count, for every set `T` of participants, the keys all of `T` hold
///    (`popcount`, `and_popcount`, and for three or more an
///    `and_popcount` against the product of the rest built in a small
///    stack buffer), turned into exact class counts by a Möbius transform.
/// 2. **Solve** the small problem over the classes: the least bound `T`
///    such that each participant `a` taking at most `⌊T·weight_a⌋` keys can
///    carry every class (a flow from classes to the participants holding
///    them), raised from `keys / Σ weights` by exact steps whenever a class
///    does not fit. The flow gives each class's quota on each participant.
/// 3. **Assign**, word by word in index order: each class hands its keys to
///    its participants in index order, each up to its quota. Owners change
///    at most once per (class, participant), and the super-block counts say
///    where: elsewhere a whole super-block is routed with fixed owners in
///    one branch-free pass, each output word written once (up to 4
///    participants by
///    [`kernel::split_by_tables`](bitmap_core::kernel::split_by_tables)).
///
/// # Cost
///
/// With `P` participants and `W` words per bitmap: counting reads each
/// lookup once, and costs about `2^P − 1` popcounts of `W` words (7 for 3
/// adapters: one Harley–Seal count per set of participants); the solve
/// works on `2^P` classes, independent of `W`; assigning is one pass like
/// the `default` plan's, `O(P·2^(P−1))` word operations per word (a
/// multiplexer per output, up to 4 participants; class by class above).
/// At 262,144 keys × 3 adapters that is about 4× the `default` plan on an
/// AVX2 machine (see `docs/PERFORMANCE.md`): the counting alone takes
/// about 1.8× the `default` plan's time (seven Harley–Seal streams, bound
/// by vector operations), and the routing about as long as the `default`
/// plan's split, whose memory traffic it shares.
///
/// Above [`MAX_DENSE_PARTICIPANTS`] participants, a slower engine handles
/// any number: it finds each key's class by its holder set in an ordered
/// map (only classes present, at most one per key), solves the same way
/// and plans the same plan, at about `P` operations and a map lookup per
/// key per pass, and allocates.
///
/// # Allocation
///
/// None into a plan with enough spare bitmaps (see
/// [`LoadPlan::with_capacity`]) with up to [`MAX_DENSE_PARTICIPANTS`]
/// participants and at most 16 listed adapters: all scratch space is on
/// the stack (up to about 40 KiB, with 8 participants).
///
/// # Errors
///
/// As [`plan_first_wins_into`](crate::plan_first_wins_into):
/// [`PlanError::LookupLengthMismatch`] for a lookup bitmap without
/// `num_keys` bits, else [`PlanError::DuplicateAdapterIndex`]. On error
/// `plan` is left empty, covering `num_keys` keys.
///
/// ```
/// use prefetch_policy::{plan_balanced_into, AdapterDescriptor, LoadPlan, LookupResults};
///
/// // key:                          0123
/// let lookup = LookupResults::from([(0, "1111".parse()?), (1, "0110".parse()?)]);
/// let adapters = [AdapterDescriptor::new(0, "a"), AdapterDescriptor::new(1, "b")];
/// let mut plan = LoadPlan::new(4);
/// plan_balanced_into(4, &lookup, &adapters, &mut plan)?;
/// assert_eq!(plan.to_index_lists(), [(0, vec![0, 3]), (1, vec![1, 2])]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn plan_balanced_into(
    num_keys: usize,
    lookup: &LookupResults,
    adapters: &[AdapterDescriptor],
    plan: &mut LoadPlan,
) -> Result<(), PlanError> {
    plan.reset(num_keys);
    check_lookup_lengths(num_keys, lookup)?;
    if adapters.len() <= MAX_INLINE_ADAPTERS {
        let mut listed = [0; MAX_INLINE_ADAPTERS];
        let mut inputs: [&[u64]; MAX_INLINE_ADAPTERS] = [&[]; MAX_INLINE_ADAPTERS];
        let mut weights = [0.0; MAX_INLINE_ADAPTERS];
        let count = adapters.len();
        plan_participants(lookup, adapters, &mut listed[..count], &mut inputs[..count], &mut weights[..count], plan)
    } else {
        let count = adapters.len();
        let (mut listed, mut inputs, mut weights) = (vec![0; count], vec![&[][..]; count], vec![0.0; count]);
        plan_participants(lookup, adapters, &mut listed, &mut inputs, &mut weights, plan)
    }
}

/// The engine after the length check, with scratch space for one index,
/// input and weight per listed adapter.
fn plan_participants<'l>(
    lookup: &'l LookupResults,
    adapters: &[AdapterDescriptor],
    listed: &mut [usize],
    inputs: &mut [&'l [u64]],
    weights: &mut [f64],
    plan: &mut LoadPlan,
) -> Result<(), PlanError> {
    sorted_indices(adapters, listed)?;
    // The listed adapters with a lookup entry, in index order, with their
    // lookup words and weights.
    let participants = gather_participants(lookup, listed, inputs);
    for (weight, &adapter) in weights.iter_mut().zip(&listed[..participants]) {
        *weight = weight_of(adapters, adapter);
    }
    let (indices, inputs, weights) = (&listed[..participants], &inputs[..participants], &weights[..participants]);
    let num_keys = plan.num_keys();
    match participants {
        0 => {}
        1 => dense::plan::<1, 2, 0, 8>(num_keys, indices, inputs, weights, plan),
        2 => dense::plan::<2, 4, 0, 8>(num_keys, indices, inputs, weights, plan),
        3 => dense::plan::<3, 8, 0, 8>(num_keys, indices, inputs, weights, plan),
        4 => dense::plan::<4, 16, 0, 8>(num_keys, indices, inputs, weights, plan),
        5 => dense::plan::<5, 32, 3, 8>(num_keys, indices, inputs, weights, plan),
        6 => dense::plan::<6, 64, 4, 8>(num_keys, indices, inputs, weights, plan),
        7 => dense::plan::<7, 128, 5, 8>(num_keys, indices, inputs, weights, plan),
        8 => dense::plan::<8, 256, 6, 8>(num_keys, indices, inputs, weights, plan),
        _ => general::plan(num_keys, indices, inputs, weights, plan),
    }
    plan.remove_empty();
    Ok(())
}

/// The weight of the listed adapter `index` (listed once: checked).
fn weight_of(adapters: &[AdapterDescriptor], index: usize) -> f64 {
    adapters.iter().find(|adapter| adapter.index == index).map_or(1.0, |adapter| adapter.weight.get())
}

#[cfg(test)]
mod tests {
    use bitmap_core::Bitmap;

    use super::*;

    /// A deterministic pseudo-random bitmap (xorshift) with about
    /// `density`/8 of its bits set.
    fn noise(len: usize, seed: u64, density: u32) -> Bitmap {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 20) % 8 < u64::from(density)
            })
            .collect()
    }

    /// The same plan from both engines, for every participant count the
    /// dense one takes, several sizes, densities and weights.
    #[test]
    fn dense_and_general_engines_plan_the_same() {
        for participants in 1..=MAX_DENSE_PARTICIPANTS {
            for (num_keys, density) in [(0, 4), (1, 8), (70, 5), (1000, 8), (5000, 6), (20_000, 3)] {
                for weighted in [false, true] {
                    let seed = (participants * 7919 + num_keys) as u64;
                    let lookups: Vec<Bitmap> = (0..participants)
                        .map(|p| noise(num_keys, seed + p as u64, if p == 0 { 8 } else { density }))
                        .collect();
                    let indices: Vec<usize> = (0..participants).map(|p| 2 * p + 1).collect();
                    let inputs: Vec<&[u64]> = lookups.iter().map(Bitmap::as_words).collect();
                    let weights: Vec<f64> =
                        (0..participants).map(|p| if weighted { 0.5 + (p % 3) as f64 * 0.7 } else { 1.0 }).collect();
                    let lookup: LookupResults = indices.iter().copied().zip(lookups.iter().cloned()).collect();
                    let adapters: Vec<AdapterDescriptor> = indices
                        .iter()
                        .zip(&weights)
                        .map(|(&i, &w)| AdapterDescriptor::new(i, "").with_weight(w).unwrap())
                        .collect();
                    let mut dense = LoadPlan::new(0);
                    plan_balanced_into(num_keys, &lookup, &adapters, &mut dense).unwrap();
                    let mut general = LoadPlan::new(num_keys);
                    general::plan(num_keys, &indices, &inputs, &weights, &mut general);
                    general.remove_empty();
                    assert_eq!(dense, general, "{participants} participants, {num_keys} keys, weighted {weighted}");
                    assert_eq!(dense.validate_with(&lookup, &adapters, PlanContract::Complete), Ok(()));
                }
            }
        }
    }
}
