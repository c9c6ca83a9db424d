//! Prefetch load plans: the `default` policy against the seed's algorithm
//! written literally, the memory limit, and its own kernel.
//!
//! Every benchmark's value is `<keys>x<adapters>`, for 1,024 to 67,108,864
//! keys and 1, 3 and 8 adapters; throughput counts the bytes of all the
//! adapters' lookup bitmaps.
//!
//! - `plan`: each adapter holds a random 60% of the keys.
//!   - `default`: `DefaultPolicy::select_load_plan`, allocating the plan
//!     (and freeing it) every time, as a caller without a reusable plan
//!     does; parallelism `Auto`.
//!   - `default_into`: `select_load_plan_into` a reused `LoadPlan`; `Auto`.
//!   - `sequential`, `parallel`: `select_load_plan_into` with
//!     `Parallelism::Sequential` and `Parallelism::Parallel`; with
//!     `default_into` they show where parallel planning starts to pay, which
//!     is where `PARALLEL_THRESHOLD_WORDS` belongs. These three also run at
//!     1 Mi and 16 Mi keys ([`CROSSOVER_KEYS`]) to locate that point.
//!   - every other registered policy by name (see
//!     [`policies_beside_default`]), allocating, like `default`.
//!   - `seed_literal`: `prefetch_policy::reference::seed_literal_plan`, the
//!     seed's algorithm over our `Bitmap`.
//!   - `seed_literal_fixedbitset`: the same over `fixedbitset`.
//!   - `copy`: copying the lookup bitmaps into as many output buffers (all
//!     lookups in, all outputs out: the memory limit of a plan into reused
//!     buffers).
//!   - `copy_fresh`: the same into newly allocated buffers, dropped again
//!     each time: the memory limit of an allocating plan.
//! - `plan_replicated`: every adapter holds every key (3 adapters).
//! - `plan_kernel`: the plan's core, `Kernel::first_wins` on word slices,
//!   for each kernel this CPU can run, and `copy`.
//! - `balanced_kernel/class_counts`, `balanced_kernel/split_by_tables`: the
//!   `balanced` policy's counting and routing passes, `Kernel::class_counts`
//!   and `Kernel::split_by_tables` (with the first-wins tables), on 3
//!   adapters' lookups, for each kernel this CPU can run.
//!
//! Every plan is checked against a word-level first-wins reference before
//! it is timed (other registered policies against their own contract).

#![forbid(unsafe_code)]

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::hint::black_box;

use bitmap_core::Bitmap;
use bitmap_core::kernel::{Kernel, MAX_CLASS_INPUTS};
use bitplan_benches::data::{Overlap, lookup_words};
use bitplan_benches::harness::{bench_copy, bench_copy_fresh, bench_lazy};
use bitplan_benches::peers::{fixedbitset_words, seed_literal_plan_fixedbitset, to_fixedbitset};
use bitplan_benches::reference::{self, assert_words_eq};
use bitplan_benches::sizes::configure;
use criterion::{Criterion, Throughput};
use prefetch_policy::reference::seed_literal_plan;
use prefetch_policy::{
    AdapterDescriptor, DefaultPolicy, Keys, LoadPlan, LookupResults, Parallelism, PrefetchPolicy,
    create_prefetch_policy, registered_prefetch_policies,
};

/// Keys per plan: a small request (1,024), then 64 Ki, 256 Ki, 4 Mi and
/// 64 Mi keys, whose 3-adapter inputs sit in L1/L2, L2, L3 and DRAM.
const KEYS: [usize; 5] = [1 << 10, 1 << 16, 1 << 18, 1 << 22, 1 << 26];

/// More key counts for the parallelism variants only (`default_into`,
/// `sequential`, `parallel`), so the sequential/parallel crossover is
/// located to within a factor of 4 between 256 Ki and 64 Mi keys.
const CROSSOVER_KEYS: [usize; 2] = [1 << 20, 1 << 24];

/// Adapter counts: one tier, a typical three, and a wide eight.
const ADAPTERS: [usize; 3] = [1, 3, 8];

/// Adapter count of the replicated case.
const REPLICATED_ADAPTERS: usize = 3;

/// Registered policies whose plan is, by definition, the `default` policy's
/// (`retain` differs only in L1 retention): timing them again would time
/// the same code.
const SAME_PLAN_AS_DEFAULT: [&str; 2] = [DefaultPolicy::NAME, "retain"];

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench_plan(&mut c, "plan", Overlap::Random60, &ADAPTERS);
    bench_plan(&mut c, "plan_replicated", Overlap::Replicated, &[REPLICATED_ADAPTERS]);
    bench_plan_kernel(&mut c);
    bench_balanced_kernels(&mut c);
    c.final_summary();
}

/// The registered policies to time beside `default`, by name.
///
/// **This is where new policies join the benchmarks**: any policy in the
/// global registry whose plan is not the default's is timed as
/// `plan/<name>/<keys>x<adapters>` (allocating, with its own default
/// parallelism) and checked against its own `contract()`. A `balanced`
/// policy appears here as soon as it is registered; its target (at most 3×
/// the default plan's time at 262,144 keys × 3 adapters) is checked by
/// `scripts/bench-report`.
fn policies_beside_default() -> Vec<(String, Box<dyn PrefetchPolicy>)> {
    registered_prefetch_policies()
        .into_iter()
        .filter(|name| !SAME_PLAN_AS_DEFAULT.contains(&name.as_str()))
        .map(|name| {
            let policy = create_prefetch_policy(&name).unwrap_or_else(|e| panic!("policy {name:?}: {e}"));
            (name, policy)
        })
        .collect()
}

/// One plan's inputs and its expected result.
struct Case {
    keys: usize,
    adapters: Vec<AdapterDescriptor>,
    /// Each adapter's lookup hits, as words (adapter `i` at index `i`).
    words: Vec<Vec<u64>>,
    lookup: LookupResults,
    /// The first-wins split of `words`, from the word-level reference.
    expected: Vec<Vec<u64>>,
}

impl Case {
    fn new(keys: usize, adapters: usize, overlap: Overlap) -> Case {
        let words = lookup_words(keys, adapters, overlap);
        let lookup = words
            .iter()
            .enumerate()
            .map(|(i, w)| (i, Bitmap::from_word_slice(keys, w).expect("whole words")))
            .collect();
        let expected = reference::first_wins(&words);
        let adapters = (0..adapters).map(|i| AdapterDescriptor::new(i, format!("adapter{i}"))).collect();
        Case { keys, adapters, words, lookup, expected }
    }

    fn value(&self) -> String {
        format!("{}x{}", self.keys, self.adapters.len())
    }

    /// Panics unless `plan` is exactly the expected first-wins plan.
    #[track_caller]
    fn check(&self, group: &str, function: &str, plan: &LoadPlan) {
        let id = format!("{group}/{function}/{}", self.value());
        assert_eq!(plan.num_keys(), self.keys, "{id}: plan covers the wrong number of keys");
        for (adapter, expected) in self.expected.iter().enumerate() {
            match plan.get(adapter) {
                Some(planned) => assert_words_eq(&format!("{id} (adapter {adapter})"), planned.as_words(), expected),
                None => assert!(expected.iter().all(|&w| w == 0), "{id}: adapter {adapter} is missing from the plan"),
            }
        }
        if let Some(extra) = plan.adapters().find(|&a| a >= self.expected.len()) {
            panic!("{id}: plan has adapter {extra}, which has no lookup");
        }
    }

    /// Panics unless `plan` (over fixedbitset) is exactly the expected plan.
    #[track_caller]
    fn check_fixedbitset(&self, group: &str, plan: &BTreeMap<usize, fixedbitset::FixedBitSet>) {
        let id = format!("{group}/seed_literal_fixedbitset/{}", self.value());
        for (adapter, expected) in self.expected.iter().enumerate() {
            match plan.get(&adapter) {
                Some(planned) => {
                    assert_words_eq(&format!("{id} (adapter {adapter})"), &fixedbitset_words(planned), expected)
                }
                None => assert!(expected.iter().all(|&w| w == 0), "{id}: adapter {adapter} is missing from the plan"),
            }
        }
    }
}

/// The `default` policy with the given parallelism.
fn default_policy(parallelism: Parallelism) -> DefaultPolicy {
    DefaultPolicy::new().with_parallelism(parallelism)
}

fn bench_plan(c: &mut Criterion, group_name: &str, overlap: Overlap, adapter_counts: &[usize]) {
    let mut group = c.benchmark_group(group_name);
    let other_policies = if overlap == Overlap::Random60 { policies_beside_default() } else { Vec::new() };
    let mut all_keys = KEYS.to_vec();
    if overlap == Overlap::Random60 {
        all_keys.extend(CROSSOVER_KEYS);
        all_keys.sort_unstable();
    }
    for &adapters in adapter_counts {
        for &keys in &all_keys {
            let crossover_only = !KEYS.contains(&keys);
            let bytes = (adapters * keys / 8) as u64;
            configure(&mut group, bytes);
            group.throughput(Throughput::Bytes(bytes));
            let value = format!("{keys}x{adapters}");
            let case = OnceCell::new();
            let case = || case.get_or_init(|| Case::new(keys, adapters, overlap));

            if !crossover_only {
                let allocating = default_policy(Parallelism::Auto);
                bench_lazy(
                    &mut group,
                    "default",
                    &value,
                    || {
                        let case = case();
                        let plan = allocating.select_load_plan(Keys::count(keys), &case.lookup, &case.adapters);
                        case.check(group_name, "default", &plan.expect("valid inputs"));
                        case
                    },
                    |case| {
                        allocating
                            .select_load_plan(Keys::count(keys), black_box(&case.lookup), black_box(&case.adapters))
                            .expect("valid inputs")
                    },
                );
            }
            let into_variants: &[(&str, Parallelism)] = if overlap == Overlap::Random60 {
                &[
                    ("default_into", Parallelism::Auto),
                    ("sequential", Parallelism::Sequential),
                    ("parallel", Parallelism::Parallel),
                ]
            } else {
                &[("default_into", Parallelism::Auto)]
            };
            for &(function, parallelism) in into_variants {
                let policy = default_policy(parallelism);
                bench_lazy(
                    &mut group,
                    function,
                    &value,
                    || {
                        let case = case();
                        let mut plan = LoadPlan::with_capacity(keys, adapters);
                        policy
                            .select_load_plan_into(Keys::count(keys), &case.lookup, &case.adapters, &mut plan)
                            .expect("valid inputs");
                        case.check(group_name, function, &plan);
                        (case, plan)
                    },
                    |(case, plan)| {
                        policy
                            .select_load_plan_into(
                                Keys::count(keys),
                                black_box(&case.lookup),
                                black_box(&case.adapters),
                                black_box(plan),
                            )
                            .expect("valid inputs")
                    },
                );
            }
            if crossover_only {
                continue;
            }
            for (name, policy) in &other_policies {
                bench_lazy(
                    &mut group,
                    name,
                    &value,
                    || {
                        let case = case();
                        let plan = policy
                            .select_load_plan(Keys::count(keys), &case.lookup, &case.adapters)
                            .expect("valid inputs");
                        if let Err(violation) = plan.validate_with(&case.lookup, &case.adapters, policy.contract()) {
                            panic!("{group_name}/{name}/{value}: plan breaks the policy's contract: {violation}");
                        }
                        case
                    },
                    |case| {
                        policy
                            .select_load_plan(Keys::count(keys), black_box(&case.lookup), black_box(&case.adapters))
                            .expect("valid inputs")
                    },
                );
            }
            bench_lazy(
                &mut group,
                "seed_literal",
                &value,
                || {
                    let case = case();
                    let plan = seed_literal_plan(keys, &case.lookup, &case.adapters).expect("valid inputs");
                    case.check(group_name, "seed_literal", &plan);
                    case
                },
                |case| {
                    seed_literal_plan(keys, black_box(&case.lookup), black_box(&case.adapters)).expect("valid inputs")
                },
            );
            if overlap == Overlap::Random60 {
                bench_lazy(
                    &mut group,
                    "seed_literal_fixedbitset",
                    &value,
                    || {
                        let case = case();
                        let lookup: BTreeMap<usize, fixedbitset::FixedBitSet> =
                            case.words.iter().enumerate().map(|(i, w)| (i, to_fixedbitset(w))).collect();
                        case.check_fixedbitset(
                            group_name,
                            &seed_literal_plan_fixedbitset(keys, &lookup, &case.adapters),
                        );
                        (case, lookup)
                    },
                    |(case, lookup)| seed_literal_plan_fixedbitset(keys, black_box(lookup), black_box(&case.adapters)),
                );
            }
            bench_copy(&mut group, &value, || case().words.iter().map(Vec::as_slice).collect());
            bench_copy_fresh(&mut group, &value, || case().words.iter().map(Vec::as_slice).collect());
        }
    }
    group.finish();
}

/// The largest adapter count, for the stack array of output slices.
const MAX_ADAPTERS: usize = 8;

/// Runs `write` on slices of `outputs` gathered in a stack array, so the
/// timed call allocates nothing.
fn with_output_slices(outputs: &mut [Vec<u64>], write: impl FnOnce(&mut [&mut [u64]])) {
    let count = outputs.len();
    let mut slices: [&mut [u64]; MAX_ADAPTERS] = Default::default();
    for (slot, output) in slices.iter_mut().zip(outputs.iter_mut()) {
        *slot = output;
    }
    write(&mut slices[..count]);
}

/// `kernel.first_wins` over the lookups' words into reused outputs.
fn first_wins_into(kernel: Kernel, inputs: &[&[u64]], outputs: &mut [Vec<u64>]) {
    with_output_slices(outputs, |slices| kernel.first_wins(inputs, slices));
}

/// Panics, naming `id` and the adapter, unless each output holds the words
/// expected of it.
#[track_caller]
fn assert_outputs_eq(id: &str, outputs: &[Vec<u64>], expected: &[Vec<u64>]) {
    for (adapter, (got, expected)) in outputs.iter().zip(expected).enumerate() {
        assert_words_eq(&format!("{id} (adapter {adapter})"), got, expected);
    }
}

fn bench_plan_kernel(c: &mut Criterion) {
    let mut group = c.benchmark_group("plan_kernel");
    for adapters in ADAPTERS {
        assert!(adapters <= MAX_ADAPTERS);
        for keys in KEYS {
            let bytes = (adapters * keys / 8) as u64;
            configure(&mut group, bytes);
            group.throughput(Throughput::Bytes(bytes));
            let value = format!("{keys}x{adapters}");
            let words = OnceCell::new();
            let words = || {
                words.get_or_init(|| {
                    let words = lookup_words(keys, adapters, Overlap::Random60);
                    let expected = reference::first_wins(&words);
                    (words, expected)
                })
            };
            let inputs = || words().0.iter().map(Vec::as_slice).collect::<Vec<&[u64]>>();

            for k in Kernel::available() {
                bench_lazy(
                    &mut group,
                    k.name(),
                    &value,
                    || {
                        let inputs = inputs();
                        let mut outputs = vec![vec![0u64; keys / 64]; adapters];
                        first_wins_into(k, &inputs, &mut outputs);
                        assert_outputs_eq(&format!("plan_kernel/{}/{value}", k.name()), &outputs, &words().1);
                        (inputs, outputs)
                    },
                    |(inputs, outputs)| first_wins_into(k, black_box(inputs), black_box(outputs)),
                );
            }
            bench_copy(&mut group, &value, inputs);
        }
    }
    group.finish();
}

/// Adapters of the `balanced_kernel` groups.
const BALANCED_KERNEL_ADAPTERS: usize = 3;

/// The split tables that make `split_by_tables` the first-wins split: each
/// output keeps the keys no lower input has (entry `j` lists the others,
/// the lower ones in its low bits).
fn first_wins_tables(inputs: usize) -> [u8; MAX_CLASS_INPUTS] {
    core::array::from_fn(|a| {
        (0..1u32 << inputs.saturating_sub(1)).filter(|others| others & ((1 << a) - 1) == 0).fold(0, |t, j| t | 1 << j)
    })
}

/// The class counts of `inputs`, word by word and class by class.
fn reference_class_counts(inputs: &[Vec<u64>]) -> Vec<u64> {
    let mut counts = vec![0u64; 1 << inputs.len()];
    for word in 0..inputs[0].len() {
        for (class, count) in counts.iter_mut().enumerate() {
            let mask = inputs
                .iter()
                .enumerate()
                .fold(u64::MAX, |mask, (p, input)| mask & if class >> p & 1 == 1 { input[word] } else { !input[word] });
            *count += u64::from(mask.count_ones());
        }
    }
    counts
}

/// `kernel.split_by_tables` of the lookups' words into reused outputs.
fn split_into(kernel: Kernel, inputs: &[&[u64]], tables: &[u8], outputs: &mut [Vec<u64>]) {
    with_output_slices(outputs, |slices| kernel.split_by_tables(inputs, tables, slices));
}

fn bench_balanced_kernels(c: &mut Criterion) {
    let adapters = BALANCED_KERNEL_ADAPTERS;
    let tables = first_wins_tables(adapters);
    let tables = &tables[..adapters];
    for op in ["class_counts", "split_by_tables"] {
        let group_name = format!("balanced_kernel/{op}");
        let mut group = c.benchmark_group(&group_name);
        for keys in KEYS {
            let bytes = (adapters * keys / 8) as u64;
            configure(&mut group, bytes);
            group.throughput(Throughput::Bytes(bytes));
            let value = format!("{keys}x{adapters}");
            let words = OnceCell::new();
            let words = || words.get_or_init(|| lookup_words(keys, adapters, Overlap::Random60));
            let inputs = || words().iter().map(Vec::as_slice).collect::<Vec<&[u64]>>();
            for k in Kernel::available() {
                let id = format!("{group_name}/{}/{value}", k.name());
                if op == "class_counts" {
                    bench_lazy(
                        &mut group,
                        k.name(),
                        &value,
                        || {
                            let inputs = inputs();
                            let mut counts = [0u64; 1 << BALANCED_KERNEL_ADAPTERS];
                            k.class_counts(&inputs, &mut counts);
                            assert_eq!(counts[..], reference_class_counts(words())[..], "{id}");
                            (inputs, counts)
                        },
                        |(inputs, counts)| k.class_counts(black_box(inputs), black_box(counts)),
                    );
                } else {
                    bench_lazy(
                        &mut group,
                        k.name(),
                        &value,
                        || {
                            let inputs = inputs();
                            let mut outputs = vec![vec![0u64; keys / 64]; adapters];
                            split_into(k, &inputs, tables, &mut outputs);
                            assert_outputs_eq(&id, &outputs, &reference::first_wins(words()));
                            (inputs, outputs)
                        },
                        |(inputs, outputs)| split_into(k, black_box(inputs), tables, black_box(outputs)),
                    );
                }
            }
        }
        group.finish();
    }
}
