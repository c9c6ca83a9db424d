//! The `balanced` policy's planning time over the `default` policy's,
//! measured interleaved: each round times a batch of `default` plans, then
//! a batch of `balanced` plans of the same lookups (the order alternating
//! from round to round), and the ratio is taken per round, so a machine
//! whose load changes during the run (other builds on a shared machine)
//! moves both sides of each ratio alike. Prints the median per-plan time of
//! each policy and the median ratio, over the rounds, at 1,024, 262,144 and
//! 4,194,304 keys × 3 adapters.
//!
//! The inputs and calls are `benches/plan.rs`'s `plan/default/…` and
//! `plan/balanced/…`: 60%-dense random lookups, allocating plans
//! (`select_load_plan`), `default` at `Parallelism::Auto`. The kernel is
//! the active one, so `BITMAP_CORE_KERNEL=avx2` gives the same ratios on
//! the AVX2 kernel, in another process.
//!
//! ```text
//! $ cargo run --release -p bitplan-benches --example balanced_ratio [ROUNDS [KEYS]]
//! ```

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Instant;

use bitmap_core::Bitmap;
use bitmap_core::kernel::Kernel;
use bitplan_benches::data::{Overlap, lookup_words};
use prefetch_policy::{AdapterDescriptor, Keys, LookupResults, create_prefetch_policy};

const ADAPTERS: usize = 3;
/// Target time of one batch of one policy.
const BATCH_NS: f64 = 1_000_000.0;

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|arg| arg.parse().ok()).unwrap_or(101);
    let default = create_prefetch_policy("default").expect("registered");
    let balanced = create_prefetch_policy("balanced").expect("registered");
    let adapters: Vec<AdapterDescriptor> =
        (0..ADAPTERS).map(|i| AdapterDescriptor::new(i, format!("adapter{i}"))).collect();
    println!("kernel {}, {rounds} rounds, medians:", Kernel::active());
    let only: Option<usize> = std::env::args().nth(2).and_then(|arg| arg.parse().ok());
    for keys in [1 << 10, 1 << 18, 1 << 22].into_iter().filter(|&k| only.is_none_or(|only| only == k)) {
        let words = lookup_words(keys, ADAPTERS, Overlap::Random60);
        let lookup: LookupResults = words
            .iter()
            .enumerate()
            .map(|(i, w)| (i, Bitmap::from_word_slice(keys, w).expect("whole words")))
            .collect();
        let plan = |policy: &dyn prefetch_policy::PrefetchPolicy| {
            policy.select_load_plan(Keys::count(keys), &lookup, &adapters).expect("valid inputs")
        };
        // Both plan every key somewhere, and the same keys (`balanced`
        // moves keys between adapters, never drops or adds one).
        assert_eq!(plan(&*default).planned_count(), plan(&*balanced).planned_count());
        let start = Instant::now();
        black_box(plan(&*balanced));
        let batch = ((BATCH_NS / start.elapsed().as_nanos().max(1) as f64) as usize).clamp(1, 100_000);
        let (mut default_ns, mut balanced_ns, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..=rounds {
            let mut ns = [0.0; 2];
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in order {
                let policy = if i == 0 { &*default } else { &*balanced };
                let start = Instant::now();
                for _ in 0..batch {
                    black_box(plan(black_box(policy)));
                }
                ns[i] = start.elapsed().as_nanos() as f64 / batch as f64;
            }
            if round == 0 {
                continue; // warm-up
            }
            default_ns.push(ns[0]);
            balanced_ns.push(ns[1]);
            ratios.push(ns[1] / ns[0]);
        }
        println!(
            "  {keys:>8}x{ADAPTERS}  default {:>9.3} µs  balanced {:>9.3} µs  balanced/default {:>5.2}x",
            median(&mut default_ns) / 1000.0,
            median(&mut balanced_ns) / 1000.0,
            median(&mut ratios)
        );
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
