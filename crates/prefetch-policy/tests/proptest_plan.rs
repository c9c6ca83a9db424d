//! Property tests: on random lookups, the engine's plan is the per-key
//! reference plan, passes `validate`, and is the same sequential or
//! parallel; the controller helpers agree with per-key definitions.

use bitmap_core::Bitmap;
use prefetch_policy::reference::{naive_first_wins_plan, seed_literal_plan};
use prefetch_policy::{
    AdapterDescriptor, DefaultPolicy, Keys, LoadPlan, LookupResults, Parallelism, PlanContract, PlanError,
    PrefetchDecision, PrefetchPolicy, RetainPolicy, plan_first_wins_into,
};
use proptest::prelude::*;
use proptest::sample::subsequence;

/// One random planning input.
#[derive(Clone, Debug)]
struct Case {
    num_keys: usize,
    /// The adapter list, in the order given to the policy (0 to 9 entries).
    listed: Vec<usize>,
    /// `(adapter, density, seed)` of each lookup entry; some listed adapters
    /// have none, some entries are for adapters not listed.
    lookups: Vec<(usize, f64, u64)>,
}

impl Case {
    fn lookup(&self) -> LookupResults {
        self.lookups
            .iter()
            .map(|&(adapter, density, seed)| (adapter, random_bitmap(self.num_keys, density, seed)))
            .collect()
    }

    fn adapters(&self) -> Vec<AdapterDescriptor> {
        self.listed.iter().map(|&index| AdapterDescriptor::new(index, format!("a{index}"))).collect()
    }
}

/// A bitmap whose bits are set with probability `density` (xorshift64*).
fn random_bitmap(len: usize, density: f64, seed: u64) -> Bitmap {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let unit = (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
            unit < density
        })
        .collect()
}

fn density() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(1.0), Just(0.002), Just(0.998), 0.0..=1.0f64]
}

/// Which of the two lists an adapter index appears in.
#[derive(Clone, Copy, Debug)]
enum Role {
    ListedWithLookup,
    ListedOnly,
    LookupOnly,
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![3 => Just(Role::ListedWithLookup), 1 => Just(Role::ListedOnly), 1 => Just(Role::LookupOnly)]
}

prop_compose! {
    fn case()(
        num_keys in prop_oneof![0..=200usize, 0..=5000usize],
        indices in subsequence((0..20usize).collect::<Vec<_>>(), 0..=12).prop_shuffle(),
    )(
        roles in proptest::collection::vec((role(), density(), any::<u64>()), indices.len()),
        num_keys in Just(num_keys),
        indices in Just(indices),
    ) -> Case {
        let mut listed = Vec::new();
        let mut lookups = Vec::new();
        for (&index, &(role, density, seed)) in indices.iter().zip(&roles) {
            let listed_here = !matches!(role, Role::LookupOnly) && listed.len() < 9;
            if listed_here {
                listed.push(index);
            }
            if !matches!(role, Role::ListedOnly) || !listed_here {
                lookups.push((index, density, seed));
            }
        }
        Case { num_keys, listed, lookups }
    }
}

/// The first-wins owner of each key, by definition.
fn owner_of(case: &Case, lookup: &LookupResults, key: usize) -> Option<usize> {
    let mut listed = case.listed.clone();
    listed.sort_unstable();
    listed.into_iter().find(|&adapter| lookup.get(adapter).is_some_and(|held| held.test(key)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn plan_equals_the_per_key_reference(case in case()) {
        let lookup = case.lookup();
        let adapters = case.adapters();
        let reference = naive_first_wins_plan(case.num_keys, &lookup, &adapters).unwrap();

        // The reference against the rule itself.
        for key in 0..case.num_keys {
            let planned: Vec<usize> = reference.iter().filter(|(_, b)| b.test(key)).map(|(a, _)| a).collect();
            prop_assert_eq!(planned, owner_of(&case, &lookup, key).into_iter().collect::<Vec<_>>());
        }

        let mut sequential = LoadPlan::new(0);
        plan_first_wins_into(case.num_keys, &lookup, &adapters, Parallelism::Sequential, &mut sequential).unwrap();
        prop_assert_eq!(&sequential, &reference);
        prop_assert_eq!(sequential.validate(&lookup, &adapters), Ok(()));
        prop_assert_eq!(seed_literal_plan(case.num_keys, &lookup, &adapters).unwrap(), reference.clone());

        let mut parallel = LoadPlan::new(0);
        plan_first_wins_into(case.num_keys, &lookup, &adapters, Parallelism::Parallel, &mut parallel).unwrap();
        prop_assert_eq!(&parallel, &sequential);

        let policies: [&dyn PrefetchPolicy; 2] = [&DefaultPolicy::new(), &RetainPolicy::new()];
        for policy in policies {
            prop_assert_eq!(policy.select_load_plan(Keys::count(case.num_keys), &lookup, &adapters).unwrap(), reference.clone());
        }
    }

    #[test]
    fn reused_plans_forget_their_past(first in case(), second in case()) {
        let mut plan = LoadPlan::new(0);
        for case in [&first, &second, &first] {
            let (lookup, adapters) = (case.lookup(), case.adapters());
            DefaultPolicy::new().select_load_plan_into(Keys::count(case.num_keys), &lookup, &adapters, &mut plan).unwrap();
            prop_assert_eq!(&plan, &naive_first_wins_plan(case.num_keys, &lookup, &adapters).unwrap());
        }
    }

    #[test]
    fn controller_helpers_match_their_definitions(case in case(), cut in any::<prop::sample::Index>()) {
        let lookup = case.lookup();
        let adapters = case.adapters();
        let n = case.num_keys;
        let plan = DefaultPolicy::new().select_load_plan(Keys::count(n), &lookup, &adapters).unwrap();

        let planned = |key: usize| plan.iter().any(|(_, b)| b.test(key));
        let prefix = (0..n).find(|&key| !planned(key)).unwrap_or(n);
        prop_assert_eq!(plan.prefix_len(), prefix);
        prop_assert_eq!(plan.planned_count(), (0..n).filter(|&key| planned(key)).count());
        prop_assert_eq!(plan.merged(), (0..n).map(planned).collect::<Bitmap>());

        // Unlock masks: locked by the lookup and not planned on that adapter.
        let masks = plan.unlock_masks(&lookup).unwrap();
        prop_assert_eq!(masks.indices().collect::<Vec<_>>(), lookup.indices().collect::<Vec<_>>());
        for (adapter, held) in &lookup {
            let expected: Bitmap =
                (0..n).map(|key| held.test(key) && !plan.get(adapter).is_some_and(|b| b.test(key))).collect();
            prop_assert_eq!(masks.get(adapter), Some(&expected));
        }

        // Trimming to any prefix.
        let k = if n == 0 { 0 } else { cut.index(n + 1) };
        let mut trimmed = plan.clone();
        trimmed.trim_to_prefix(k);
        let expected = LoadPlan::from_entries(
            n,
            plan.iter().map(|(adapter, b)| (adapter, (0..n).map(|key| key < k && b.test(key)).collect())),
        ).unwrap();
        prop_assert_eq!(&trimmed, &expected);
        prop_assert_eq!(trimmed.validate_with(&lookup, &adapters, PlanContract::Sound), Ok(()));

        // The whole decision.
        let mut decision = PrefetchDecision::new();
        decision.decide(&RetainPolicy::new(), Keys::count(n), &lookup, &adapters).unwrap();
        prop_assert_eq!(decision.prefix_len(), prefix);
        let mut loadable = plan.clone();
        loadable.trim_to_prefix(prefix);
        prop_assert_eq!(decision.plan(), &loadable);
        prop_assert_eq!(decision.unlock_masks(), &loadable.unlock_masks(&lookup).unwrap());
        prop_assert_eq!(decision.retentions(), &vec![true; prefix][..]);

        // Gathering: each adapter's keys, in order.
        let items: Vec<usize> = (0..n).collect();
        for (adapter, keys) in plan.gather(&items).unwrap() {
            let expected: Vec<usize> = plan.get(adapter).unwrap().ones().collect();
            prop_assert_eq!(keys.into_iter().copied().collect::<Vec<_>>(), expected);
        }
    }

    #[test]
    fn a_wrong_length_is_always_reported(case in case(), wrong in 0..5000usize, pick in any::<prop::sample::Index>()) {
        prop_assume!(!case.lookups.is_empty() && wrong != case.num_keys);
        let mut lookup = case.lookup();
        let adapter = lookup.indices().nth(pick.index(lookup.len())).unwrap();
        lookup.insert(adapter, Bitmap::new(wrong));
        let first_bad = lookup.iter().find(|(_, b)| b.len() != case.num_keys).map(|(a, b)| (a, b.len())).unwrap();
        let expected = PlanError::LookupLengthMismatch { adapter: first_bad.0, expected: case.num_keys, actual: first_bad.1 };
        let result = DefaultPolicy::new().select_load_plan(Keys::count(case.num_keys), &lookup, &case.adapters());
        prop_assert_eq!(result, Err(expected));
    }

    #[test]
    fn a_repeated_index_is_always_reported(case in case(), pick in any::<prop::sample::Index>()) {
        prop_assume!(!case.listed.is_empty());
        let mut adapters = case.adapters();
        let repeated = adapters[pick.index(adapters.len())].clone();
        adapters.insert(pick.index(adapters.len() + 1), repeated.clone());
        let lookup = case.lookup();
        let result = DefaultPolicy::new().select_load_plan(Keys::count(case.num_keys), &lookup, &adapters);
        prop_assert_eq!(result, Err(PlanError::DuplicateAdapterIndex { index: repeated.index }));
    }
}
