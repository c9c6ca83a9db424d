//! The seed's behaviour on LMCache's own test cases (keys numbered from 0),
//! for both built-in policies, every way of calling them, and the
//! references; plus every error the policies report.

use bitmap_core::Bitmap;
use prefetch_policy::reference::{naive_first_wins_plan, seed_literal_plan};
use prefetch_policy::{
    AdapterDescriptor, DefaultPolicy, Keys, LoadPlan, LookupResults, ObjectKey, Parallelism, PlanContract, PlanError,
    PolicyRegistry, PrefetchPolicy, RetainPolicy,
};

type IndexLists = Vec<(usize, Vec<usize>)>;

fn lookup(num_keys: usize, entries: &[(usize, &[usize])]) -> LookupResults {
    entries
        .iter()
        .map(|&(adapter, keys)| (adapter, Bitmap::from_indices(num_keys, keys.iter().copied()).unwrap()))
        .collect()
}

fn adapters(indices: &[usize]) -> Vec<AdapterDescriptor> {
    indices.iter().map(|&index| AdapterDescriptor::new(index, format!("adapter-{index}"))).collect()
}

fn object_keys(n: usize) -> Vec<ObjectKey> {
    (0..n).map(|i| ObjectKey::new(i.to_le_bytes(), "model", 0).unwrap()).collect()
}

/// Every policy configuration that must give the first-wins plan.
fn policies() -> Vec<Box<dyn PrefetchPolicy>> {
    let registry = PolicyRegistry::with_builtin();
    let mut policies: Vec<Box<dyn PrefetchPolicy>> =
        vec![registry.create("default").unwrap(), registry.create("retain").unwrap()];
    for parallelism in [Parallelism::Auto, Parallelism::Sequential, Parallelism::Parallel] {
        policies.push(Box::new(DefaultPolicy::new().with_parallelism(parallelism)));
        policies.push(Box::new(RetainPolicy::new().with_parallelism(parallelism)));
    }
    policies
}

/// Plans the case every way and checks that all agree, validate, and match
/// `expected`.
fn assert_plan(num_keys: usize, entries: &[(usize, &[usize])], listed: &[usize], expected: IndexLists) {
    let lookup = lookup(num_keys, entries);
    let adapters = adapters(listed);
    let objects = object_keys(num_keys);
    let context = format!("{num_keys} keys, lookups {entries:?}, adapters {listed:?}");

    let reference = naive_first_wins_plan(num_keys, &lookup, &adapters).unwrap();
    assert_eq!(reference.to_index_lists(), expected, "naive reference: {context}");
    assert_eq!(seed_literal_plan(num_keys, &lookup, &adapters).unwrap(), reference, "seed literal: {context}");

    // A plan that held something else before, to catch stale state.
    let mut reused = LoadPlan::from_entries(7, [(3, Bitmap::with_prefix(7, 7))]).unwrap();
    for policy in policies() {
        for keys in [Keys::count(num_keys), Keys::from(&objects)] {
            let plan = policy.select_load_plan(keys, &lookup, &adapters).unwrap();
            assert_eq!(plan, reference, "{policy:?} {keys:?}: {context}");
            assert_eq!(plan.num_keys(), num_keys);
            assert_eq!(plan.validate(&lookup, &adapters), Ok(()), "{context}");
            assert_eq!(plan.validate_with(&lookup, &adapters, policy.contract()), Ok(()));
            policy.select_load_plan_into(keys, &lookup, &adapters, &mut reused).unwrap();
            assert_eq!(reused, reference, "{policy:?} into a reused plan: {context}");
        }
    }
}

#[test]
fn single_adapter_holding_every_key() {
    assert_plan(3, &[(0, &[0, 1, 2])], &[0], vec![(0, vec![0, 1, 2])]);
}

#[test]
fn single_adapter_with_gaps() {
    assert_plan(4, &[(0, &[0, 2])], &[0], vec![(0, vec![0, 2])]);
}

#[test]
fn overlap_goes_to_the_lower_index() {
    assert_plan(3, &[(0, &[0, 1]), (1, &[1, 2])], &[0, 1], vec![(0, vec![0, 1]), (1, vec![2])]);
}

#[test]
fn disjoint_lookups_are_unchanged() {
    assert_plan(4, &[(0, &[0, 1]), (1, &[2, 3])], &[0, 1], vec![(0, vec![0, 1]), (1, vec![2, 3])]);
}

#[test]
fn empty_lookups_give_an_empty_plan() {
    assert_plan(3, &[(0, &[]), (1, &[])], &[0, 1], vec![]);
}

#[test]
fn no_adapters_and_no_lookups() {
    assert_plan(3, &[], &[], vec![]);
    assert_plan(0, &[], &[], vec![]);
}

#[test]
fn zero_keys() {
    assert_plan(0, &[(0, &[])], &[0], vec![]);
}

#[test]
fn adapter_list_order_does_not_matter() {
    assert_plan(1, &[(0, &[0]), (1, &[0])], &[1, 0], vec![(0, vec![0])]);
}

#[test]
fn three_adapters_with_overlaps() {
    assert_plan(
        5,
        &[(0, &[0, 3]), (1, &[1, 2, 3]), (2, &[2, 3, 4])],
        &[0, 1, 2],
        vec![(0, vec![0, 3]), (1, vec![1, 2]), (2, vec![4])],
    );
}

#[test]
fn only_one_adapter_answered() {
    assert_plan(2, &[(1, &[0, 1])], &[0, 1], vec![(1, vec![0, 1])]);
}

#[test]
fn every_adapter_holds_every_key() {
    assert_plan(3, &[(0, &[0, 1, 2]), (1, &[0, 1, 2]), (2, &[0, 1, 2])], &[0, 1, 2], vec![(0, vec![0, 1, 2])]);
}

#[test]
fn lookups_of_unlisted_adapters_get_nothing() {
    // Adapter 0 is not listed, so adapter 1 gets key 0 even though 0 holds it.
    assert_plan(3, &[(0, &[0, 1]), (1, &[0]), (5, &[2])], &[1, 2], vec![(1, vec![0])]);
}

#[test]
fn sparse_adapter_indices_across_word_boundaries() {
    let high: Vec<usize> = (60..200).collect();
    let low: Vec<usize> = (0..130).collect();
    assert_plan(200, &[(7, &high), (40, &low)], &[40, 7], vec![(7, high.clone()), (40, (0..60).collect())]);
}

#[test]
fn retentions() {
    for n in [0, 1, 5, 10, 100] {
        let objects = object_keys(n);
        for keys in [Keys::count(n), Keys::from(&objects)] {
            assert_eq!(DefaultPolicy::new().select_l1_retentions(keys), vec![false; n], "default, {n} keys");
            assert_eq!(RetainPolicy::new().select_l1_retentions(keys), vec![true; n], "retain, {n} keys");
            let registry = PolicyRegistry::with_builtin();
            assert_eq!(registry.create("default").unwrap().select_l1_retentions(keys), vec![false; n]);
            assert_eq!(registry.create("retain").unwrap().select_l1_retentions(keys), vec![true; n]);
        }
    }
}

#[test]
fn contracts_of_the_builtin_policies() {
    for policy in policies() {
        assert_eq!(policy.contract(), PlanContract::FirstWins, "{policy:?}");
    }
}

#[test]
fn lookup_length_mismatch_names_the_adapter_and_both_lengths() {
    let adapters = adapters(&[0, 1]);
    // Too short, too long, for a listed adapter and for an unlisted one.
    let cases = [
        (lookup(4, &[(0, &[0])]).into_iter().chain([(1, Bitmap::new(3))]).collect(), 1, 3),
        (lookup(4, &[(1, &[0])]).into_iter().chain([(0, Bitmap::new(65))]).collect(), 0, 65),
        (lookup(4, &[(0, &[0])]).into_iter().chain([(9, Bitmap::new(0))]).collect(), 9, 0),
    ];
    for (lookup, adapter, actual) in cases {
        let lookup: LookupResults = lookup;
        let expected = PlanError::LookupLengthMismatch { adapter, expected: 4, actual };
        for policy in policies() {
            let mut plan = LoadPlan::new(0);
            assert_eq!(policy.select_load_plan(Keys::count(4), &lookup, &adapters), Err(expected.clone()));
            assert_eq!(
                policy.select_load_plan_into(Keys::count(4), &lookup, &adapters, &mut plan),
                Err(expected.clone())
            );
        }
        assert_eq!(naive_first_wins_plan(4, &lookup, &adapters), Err(expected.clone()));
        assert_eq!(seed_literal_plan(4, &lookup, &adapters), Err(expected.clone()));
        let message = expected.to_string();
        assert!(message.contains(&format!("adapter {adapter}")) && message.contains(&format!("{actual} bits")));
    }
}

#[test]
fn key_objects_count_like_a_count() {
    // 3 key objects but 4-bit lookups: the objects' count is the number of keys.
    let lookup = lookup(4, &[(0, &[0])]);
    let objects = object_keys(3);
    let error = DefaultPolicy::new().select_load_plan(Keys::from(&objects), &lookup, &adapters(&[0]));
    assert_eq!(error, Err(PlanError::LookupLengthMismatch { adapter: 0, expected: 3, actual: 4 }));
}

#[test]
fn duplicate_adapter_indices_are_an_error() {
    let lookup = lookup(2, &[(0, &[0]), (1, &[1])]);
    for listed in [&[0, 0][..], &[1, 0, 1], &[3, 2, 3, 2]] {
        let smallest = *listed.iter().filter(|&&i| listed.iter().filter(|&&j| j == i).count() > 1).min().unwrap();
        for policy in policies() {
            let result = policy.select_load_plan(Keys::count(2), &lookup, &adapters(listed));
            assert_eq!(result, Err(PlanError::DuplicateAdapterIndex { index: smallest }), "{listed:?}");
        }
    }
}

#[test]
fn errors_are_reported_before_any_planning() {
    // Both errors at once: the length is checked first.
    let lookup: LookupResults = [(0, Bitmap::new(1))].into_iter().collect();
    let result = DefaultPolicy::new().select_load_plan(Keys::count(2), &lookup, &adapters(&[0, 0]));
    assert_eq!(result, Err(PlanError::LookupLengthMismatch { adapter: 0, expected: 2, actual: 1 }));
}
