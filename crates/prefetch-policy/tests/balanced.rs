//! The `balanced` policy: optimal against a brute force on small cases and
//! against closed forms on large ones, the same coverage as `default`, and
//! deterministic; weights are validated.

use bitmap_core::Bitmap;
use prefetch_policy::{
    AdapterDescriptor, AdapterWeight, BalancedPolicy, DefaultPolicy, Keys, LoadPlan, LookupResults,
    MAX_DENSE_PARTICIPANTS, PlanContract, PlanError, PrefetchPolicy, WeightError, create_prefetch_policy,
    registered_prefetch_policies,
};
use proptest::prelude::*;

/// The relative slack the documentation allows the largest weighted load
/// above the optimum (floating-point rounding of `T·weight`).
const RELATIVE_SLACK: f64 = 1e-12;

fn plan(lookup: &LookupResults, adapters: &[AdapterDescriptor], num_keys: usize) -> LoadPlan {
    BalancedPolicy::new().select_load_plan(Keys::count(num_keys), lookup, adapters).expect("valid input")
}

fn weighted(index: usize, weight: f64) -> AdapterDescriptor {
    AdapterDescriptor::new(index, format!("adapter-{index}")).with_weight(weight).expect("valid weight")
}

/// Keys per adapter, in `adapters` order.
fn loads(plan: &LoadPlan, adapters: &[AdapterDescriptor]) -> Vec<usize> {
    adapters.iter().map(|adapter| plan.get(adapter.index).map_or(0, Bitmap::popcount)).collect()
}

/// `max_a(loads[a] / weight_a)`.
fn largest_weighted_load(loads: &[usize], adapters: &[AdapterDescriptor]) -> f64 {
    loads.iter().zip(adapters).map(|(&load, adapter)| load as f64 / adapter.weight.get()).fold(0.0, f64::max)
}

/// Everything `balanced` promises besides optimality: a complete plan
/// (validated), the coverage of `default`, and the same plan again,
/// allocating or into a plan full of other buffers.
fn check_invariants(lookup: &LookupResults, adapters: &[AdapterDescriptor], num_keys: usize) -> LoadPlan {
    let policy = BalancedPolicy::new();
    let balanced = plan(lookup, adapters, num_keys);
    assert_eq!(balanced.validate_with(lookup, adapters, policy.contract()), Ok(()));
    let default = DefaultPolicy::new().select_load_plan(Keys::count(num_keys), lookup, adapters).unwrap();
    assert_eq!(balanced.merged(), default.merged(), "coverage differs from default");
    assert_eq!(balanced.prefix_len(), default.prefix_len());
    assert_eq!(plan(lookup, adapters, num_keys), balanced, "not deterministic");
    let mut reused =
        LoadPlan::from_entries(num_keys + 3, [(0, Bitmap::with_prefix(num_keys + 3, usize::MAX))]).unwrap();
    policy.select_load_plan_into(Keys::count(num_keys), lookup, adapters, &mut reused).unwrap();
    assert_eq!(reused, balanced, "planning into a reused plan differs");
    balanced
}

/// The least largest weighted load over every plan with the coverage of
/// `default`: enumerates how many keys of each class (set of holders)
/// each holder gets, which is all the objective depends on.
fn brute_force_optimum(lookup: &LookupResults, adapters: &[AdapterDescriptor], num_keys: usize) -> f64 {
    let holders: Vec<&Bitmap> = adapters.iter().map(|adapter| lookup.get(adapter.index).unwrap()).collect();
    let mut classes = vec![0usize; 1 << adapters.len()];
    for key in 0..num_keys {
        let class = (0..holders.len()).filter(|&a| holders[a].test(key)).fold(0, |class, a| class | 1 << a);
        classes[class] += 1;
    }
    let classes: Vec<(usize, usize)> =
        classes.iter().enumerate().skip(1).filter(|&(_, &count)| count > 0).map(|(c, &n)| (c, n)).collect();
    let mut best = f64::INFINITY;
    let mut loads = vec![0usize; adapters.len()];
    enumerate(&classes, adapters, &mut loads, &mut best);
    best
}

/// Every split of the first class's keys among its holders, recursively.
fn enumerate(classes: &[(usize, usize)], adapters: &[AdapterDescriptor], loads: &mut [usize], best: &mut f64) {
    let Some((&(class, count), rest)) = classes.split_first() else {
        *best = best.min(largest_weighted_load(loads, adapters));
        return;
    };
    let members: Vec<usize> = (0..adapters.len()).filter(|&a| class >> a & 1 == 1).collect();
    split(count, &members, rest, adapters, loads, best);
}

fn split(
    count: usize,
    members: &[usize],
    rest: &[(usize, usize)],
    adapters: &[AdapterDescriptor],
    loads: &mut [usize],
    best: &mut f64,
) {
    let (&first, others) = members.split_first().expect("a class has a holder");
    if others.is_empty() {
        loads[first] += count;
        if largest_weighted_load(loads, adapters) < *best {
            enumerate(rest, adapters, loads, best);
        }
        loads[first] -= count;
        return;
    }
    for here in 0..=count {
        loads[first] += here;
        if largest_weighted_load(loads, adapters) < *best {
            split(count - here, others, rest, adapters, loads, best);
        }
        loads[first] -= here;
    }
}

/// A lookup from bit strings, adapter `i` at index `i`.
fn lookup_of(bits: &[&str]) -> LookupResults {
    bits.iter().enumerate().map(|(adapter, s)| (adapter, s.parse().unwrap())).collect()
}

#[test]
fn registered_beside_default_and_retain() {
    let names = registered_prefetch_policies();
    for name in ["balanced", "default", "retain"] {
        assert!(names.iter().any(|n| n == name), "{name} missing from {names:?}");
    }
    let policy = create_prefetch_policy("balanced").unwrap();
    assert_eq!(policy.name(), BalancedPolicy::NAME);
    assert_eq!(policy.contract(), PlanContract::Complete);
    // L1 retention as `default`: every key temporary.
    assert_eq!(policy.select_l1_retentions(Keys::count(4)), [false; 4]);
}

#[test]
fn replicated_equal_adapters_share_evenly() {
    let lookup: LookupResults = (0..3).map(|a| (a, Bitmap::with_prefix(3000, 3000))).collect();
    let adapters: Vec<_> = (0..3).map(|a| AdapterDescriptor::new(a, "ssd")).collect();
    let balanced = check_invariants(&lookup, &adapters, 3000);
    assert_eq!(loads(&balanced, &adapters), [1000, 1000, 1000]);
    // One class: its keys go in index order, a run per adapter.
    assert_eq!(balanced.get(0), Some(&Bitmap::with_prefix(3000, 1000)));
    let mut second = Bitmap::new(3000);
    second.set_range(1000..2000);
    assert_eq!(balanced.get(1), Some(&second));
}

#[test]
fn replicated_weights_2_1_1() {
    let lookup: LookupResults = (0..3).map(|a| (a, Bitmap::with_prefix(3000, 3000))).collect();
    let adapters = [weighted(0, 2.0), weighted(1, 1.0), weighted(2, 1.0)];
    let balanced = check_invariants(&lookup, &adapters, 3000);
    assert_eq!(loads(&balanced, &adapters), [1500, 750, 750]);
}

#[test]
fn replicated_large_batches() {
    // 262,144 keys: not a multiple of 3, the odd key to the lowest index.
    let n = 262_144;
    let lookup: LookupResults = (0..3).map(|a| (a, Bitmap::with_prefix(n, n))).collect();
    let equal: Vec<_> = (0..3).map(|a| AdapterDescriptor::new(a, "ssd")).collect();
    assert_eq!(loads(&check_invariants(&lookup, &equal, n), &equal), [87_382, 87_381, 87_381]);
    let weights = [weighted(0, 2.0), weighted(1, 1.0), weighted(2, 1.0)];
    assert_eq!(loads(&check_invariants(&lookup, &weights, n), &weights), [131_072, 65_536, 65_536]);
    // Listed out of order, with an unlisted lookup and a listed adapter
    // without one: only the three replicas share.
    let mut lookup = lookup;
    lookup.insert(9, Bitmap::with_prefix(n, n));
    let adapters = [weighted(2, 1.0), weighted(5, 1.0), weighted(0, 1.0), weighted(1, 1.0)];
    assert_eq!(loads(&check_invariants(&lookup, &adapters, n), &adapters), [87_381, 0, 87_382, 87_381]);
}

#[test]
fn forced_keys_stay_and_shared_keys_fill_around_them() {
    // Adapter 0 alone holds keys 0..6; all three hold 6..12. The largest
    // load is 6 whatever the shared keys do: they go to the lowest index
    // with room.
    let lookup = lookup_of(&["111111111111", "000000111111", "000000111111"]);
    let adapters: Vec<_> = (0..3).map(|a| AdapterDescriptor::new(a, "")).collect();
    let balanced = check_invariants(&lookup, &adapters, 12);
    assert_eq!(loads(&balanced, &adapters), [6, 6, 0]);
    assert_eq!(balanced.get(0).unwrap().to_indices(), [0, 1, 2, 3, 4, 5]);
    // Adapters 0 and 1 hold 0..8 alone (4 each); all three hold 8..14:
    // 14 keys over 3 adapters, at most 5 each.
    let lookup = lookup_of(&["11110000111111", "00001111111111", "00000000111111"]);
    let balanced = check_invariants(&lookup, &adapters, 14);
    assert_eq!(loads(&balanced, &adapters), [5, 5, 4]);
    // Adapter 0 holds 10 keys alone: the 3 shared ones go elsewhere, lowest
    // index first (the largest load is 10 whatever they do).
    let lookup = lookup_of(&["1111111111111", "0000000000111", "0000000000111"]);
    let balanced = check_invariants(&lookup, &adapters, 13);
    assert_eq!(loads(&balanced, &adapters), [10, 3, 0]);
}

#[test]
fn coverage_gaps_and_prefix_match_default() {
    // key:                 0123456789
    let lookup = lookup_of(&["1100110000", "0110000001", "0100100000"]);
    let adapters: Vec<_> = (0..3).map(|a| AdapterDescriptor::new(a, "")).collect();
    let balanced = check_invariants(&lookup, &adapters, 10);
    assert_eq!(balanced.prefix_len(), 3);
    assert_eq!(balanced.planned_count(), 6);
    assert_eq!(loads(&balanced, &adapters), [2, 2, 2]);
}

#[test]
fn degenerate_inputs() {
    let adapters = [AdapterDescriptor::new(0, "a"), AdapterDescriptor::new(1, "b")];
    // No keys, no lookups, nothing held.
    assert!(check_invariants(&LookupResults::new(), &adapters, 0).is_empty());
    assert!(check_invariants(&LookupResults::new(), &adapters, 100).is_empty());
    let empty = LookupResults::from([(0, Bitmap::new(100)), (1, Bitmap::new(100))]);
    assert!(check_invariants(&empty, &adapters, 100).is_empty());
    assert!(check_invariants(&empty, &[], 100).is_empty());
    // One participant: its whole lookup.
    let one = LookupResults::from([(1, "0110".parse().unwrap())]);
    assert_eq!(check_invariants(&one, &adapters, 4).to_index_lists(), [(1, vec![1, 2])]);
}

#[test]
fn bad_input_is_refused_like_default() {
    let adapters = [AdapterDescriptor::new(0, "a"), AdapterDescriptor::new(1, "b")];
    let short = LookupResults::from([(0, Bitmap::new(3)), (1, Bitmap::new(4))]);
    let mut plan = LoadPlan::from_entries(4, [(0, "1000".parse().unwrap())]).unwrap();
    let error = BalancedPolicy::new().select_load_plan_into(Keys::count(4), &short, &adapters, &mut plan);
    assert_eq!(error, Err(PlanError::LookupLengthMismatch { adapter: 0, expected: 4, actual: 3 }));
    assert!(plan.is_empty());
    let lookup = LookupResults::from([(0, Bitmap::new(4))]);
    let twice = [AdapterDescriptor::new(0, "a"), AdapterDescriptor::new(0, "b")];
    let error = BalancedPolicy::new().select_load_plan(Keys::count(4), &lookup, &twice);
    assert_eq!(error, Err(PlanError::DuplicateAdapterIndex { index: 0 }));
}

#[test]
fn invalid_weights_are_errors_naming_the_adapter() {
    for invalid in [0.0, -0.0, -1.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let error = AdapterDescriptor::new(3, "hdd").with_weight(invalid).unwrap_err();
        assert_eq!((error.adapter, error.name.as_str()), (3, "hdd"));
        assert!(error.weight.to_bits() == invalid.to_bits(), "{invalid}");
        assert!(error.to_string().starts_with(r#"adapter 3 ("hdd"): weight "#), "{error}");
        assert_eq!(AdapterWeight::new(invalid), None);
    }
    let error: WeightError = AdapterDescriptor::new(1, "ssd").with_weight(-2.0).unwrap_err();
    assert_eq!(error.to_string(), r#"adapter 1 ("ssd"): weight -2 is not a finite number greater than 0"#);
    for valid in [f64::MIN_POSITIVE, 1e-300, 0.25, 1.0, 1e300, f64::MAX] {
        assert_eq!(AdapterDescriptor::new(0, "x").with_weight(valid).unwrap().weight.get(), valid);
    }
    assert_eq!(AdapterDescriptor::new(0, "x").weight, AdapterWeight::ONE);
}

#[test]
fn extreme_weights_still_plan_completely() {
    let lookup: LookupResults = (0..3).map(|a| (a, Bitmap::with_prefix(500, 500))).collect();
    for weights in [[1e-300, 1.0, 1.0], [f64::MAX, 1.0, f64::MIN_POSITIVE], [1e300, 1e300, 1e-300]] {
        let adapters: Vec<_> = weights.iter().enumerate().map(|(a, &w)| weighted(a, w)).collect();
        let balanced = check_invariants(&lookup, &adapters, 500);
        let optimum = brute_force_optimum(&lookup, &adapters, 500);
        let ours = largest_weighted_load(&loads(&balanced, &adapters), &adapters);
        assert!(ours <= optimum * (1.0 + RELATIVE_SLACK), "{weights:?}: {ours} > {optimum}");
    }
}

/// With equal weights the optimum has a closed form for any number of
/// adapters: the largest, over sets `U` of adapters, of the keys only `U`
/// holds divided by `|U|`, rounded up. Checks the key-by-key engine (more
/// than 8 participants) and the word-parallel one against it.
#[test]
fn equal_weights_meet_the_cut_bound_with_many_adapters() {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for participants in [3, 8, 9, 12] {
        for num_keys in [1, 64, 700, 3000] {
            // Skewed densities: some adapters hold most keys, some few.
            let lookup: LookupResults = (0..participants)
                .map(|a| {
                    let bits: Bitmap = (0..num_keys).map(|_| next() % 8 < [7, 1, 3, 5][a % 4]).collect();
                    (a, bits)
                })
                .collect();
            let adapters: Vec<_> = (0..participants).map(|a| AdapterDescriptor::new(a, "")).collect();
            let balanced = check_invariants(&lookup, &adapters, num_keys);
            let largest = loads(&balanced, &adapters).into_iter().max().unwrap();

            let mut only_within = vec![0usize; 1 << participants];
            for key in 0..num_keys {
                let class = (0..participants).filter(|&a| lookup.get(a).unwrap().test(key)).fold(0, |c, a| c | 1 << a);
                only_within[class] += 1;
            }
            only_within[0] = 0;
            for bit in 0..participants {
                for set in 0..1usize << participants {
                    if set >> bit & 1 == 1 {
                        only_within[set] += only_within[set ^ 1 << bit];
                    }
                }
            }
            let bound = (1..1usize << participants)
                .map(|set| only_within[set].div_ceil(set.count_ones() as usize))
                .max()
                .unwrap();
            assert_eq!(largest, bound, "{participants} adapters, {num_keys} keys");
        }
    }
    const { assert!(MAX_DENSE_PARTICIPANTS < 9, "the 9 and 12 adapter cases must reach the key-by-key engine") };
}

/// One small random case: up to 4 listed adapters (some without a lookup,
/// some lookups unlisted), up to 12 keys, weights from a small set.
#[derive(Clone, Debug)]
struct Small {
    num_keys: usize,
    adapters: Vec<AdapterDescriptor>,
    lookup: LookupResults,
}

prop_compose! {
    fn small()(
        num_keys in 0..=12usize,
        slots in proptest::collection::vec((any::<bool>(), any::<u16>(), 0..6usize), 1..=5),
    ) -> Small {
        const WEIGHTS: [f64; 6] = [1.0, 2.0, 0.5, 3.0, 0.1, 1.7];
        let mut adapters = Vec::new();
        let mut lookup = LookupResults::new();
        for (index, &(listed, bits, weight)) in slots.iter().enumerate() {
            // The fifth slot is never listed: an unlisted lookup.
            if listed || index == 4 {
                lookup.insert(index, (0..num_keys).map(|key| bits >> key & 1 == 1).collect());
            }
            if index < 4 {
                adapters.push(weighted(index, WEIGHTS[weight]));
            }
        }
        adapters.reverse();
        Small { num_keys, adapters, lookup }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    /// Optimal within the documented slack, against every split of every
    /// class, for the participants (listed adapters with a lookup).
    #[test]
    fn optimal_against_brute_force(case in small()) {
        let balanced = check_invariants(&case.lookup, &case.adapters, case.num_keys);
        let participants: Vec<AdapterDescriptor> =
            case.adapters.iter().filter(|a| case.lookup.contains(a.index)).cloned().collect();
        let optimum = brute_force_optimum(&case.lookup, &participants, case.num_keys);
        let ours = largest_weighted_load(&loads(&balanced, &participants), &participants);
        if participants.is_empty() || case.num_keys == 0 {
            prop_assert!(balanced.is_empty());
        } else {
            prop_assert!(ours >= optimum, "brute force missed a plan: {ours} < {optimum}");
            prop_assert!(ours <= optimum * (1.0 + RELATIVE_SLACK), "{ours} > optimum {optimum}");
        }
        // Only listed adapters with a lookup load anything.
        prop_assert!(balanced.adapters().all(|a| participants.iter().any(|p| p.index == a)));
    }
}

/// A larger random case: up to 20 listed adapters in any order, lookups of
/// various densities, random weights.
#[derive(Clone, Debug)]
struct Wide {
    num_keys: usize,
    adapters: Vec<AdapterDescriptor>,
    lookup: LookupResults,
}

prop_compose! {
    fn wide()(
        num_keys in prop_oneof![0..=130usize, 0..=3000usize],
        slots in proptest::collection::vec((0..3u8, 0..=8u64, any::<u64>(), 1..=40u32), 0..=20),
    ) -> Wide {
        let mut adapters = Vec::new();
        let mut lookup = LookupResults::new();
        for (index, &(role, eighths, seed, weight)) in slots.iter().enumerate() {
            if role != 1 {
                let mut state = seed | 1;
                let bits: Bitmap = (0..num_keys)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        state % 8 < eighths
                    })
                    .collect();
                lookup.insert(index, bits);
            }
            if role != 2 {
                adapters.push(weighted(index, f64::from(weight) / 8.0));
            }
        }
        adapters.sort_by_key(|a| a.index.wrapping_mul(0x9E37_79B9) % 97);
        Wide { num_keys, adapters, lookup }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Complete, the coverage of `default`, deterministic, the same into a
    /// reused plan; and no participant's load is more than its share of the
    /// keys held by it alone plus what balancing can give it.
    #[test]
    fn invariants_on_wide_cases(case in wide()) {
        let balanced = check_invariants(&case.lookup, &case.adapters, case.num_keys);
        // Lower bound: total keys over total weight of participants.
        let participants: Vec<&AdapterDescriptor> =
            case.adapters.iter().filter(|a| case.lookup.contains(a.index)).collect();
        if participants.is_empty() {
            prop_assert!(balanced.is_empty());
            return Ok(());
        }
        let total_weight: f64 = participants.iter().map(|a| a.weight.get()).sum();
        let ours = participants
            .iter()
            .map(|a| balanced.get(a.index).map_or(0, Bitmap::popcount) as f64 / a.weight.get())
            .fold(0.0, f64::max);
        prop_assert!(ours * (1.0 + RELATIVE_SLACK) >= balanced.planned_count() as f64 / total_weight);
    }
}
