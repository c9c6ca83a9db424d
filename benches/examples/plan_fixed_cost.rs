//! The flat plan's fixed cost: `DefaultPolicy::select_load_plan_into` on a
//! reused plan against copying its inputs into its outputs, at a request's
//! size, measured interleaved (each round times a batch of every form, the
//! order rotating from round to round; ratios are taken per round, so a
//! shared machine whose load changes moves all forms alike).
//!
//! Forms, per size (keys × 3 adapters, random lookups of density ½):
//! - `plan`: the policy call through `&dyn PrefetchPolicy`, as the replay
//!   and the CLI make it;
//! - `kernel`: the dispatched `kernel::first_wins` on slices alone (what
//!   the plan would cost with no bookkeeping);
//! - `copy3`: three inputs copied into three outputs, one loop each (the
//!   issue's baseline: "the time to copy its three inputs into three
//!   outputs");
//! - `copy1`: one copy of all three inputs' bytes as one contiguous buffer
//!   (`prefetch-plan bench`'s baseline, a little faster than `copy3`).
//!
//! Copies use their own loop, not `memcpy` (glibc's `rep movsb` is slow
//! here at some offsets and sizes).
//!
//! ```text
//! $ cargo run --release -p bitplan-benches --example plan_fixed_cost [ROUNDS]
//! ```
//!
//! `plan_fixed_cost profile KEYS CALLS` makes only the `plan` calls, for an
//! instruction profile of the fixed cost:
//!
//! ```text
//! $ valgrind --tool=callgrind target/release/examples/plan_fixed_cost profile 1024 100000
//! ```

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Instant;

use bitmap_core::Bitmap;
use bitmap_core::kernel::{self, Kernel};
use bitplan_benches::data::random_words;
use prefetch_policy::{AdapterDescriptor, DefaultPolicy, Keys, LoadPlan, LookupResults, PrefetchPolicy};

/// Target time of one batch of one form.
const BATCH_NS: f64 = 100_000.0;
const ADAPTERS: usize = 3;

/// Copies `src` into `dst` with a plain loop that LLVM vectorises but does
/// not turn into `memcpy` (see `prefetch-plan bench`'s `copy_words`).
#[inline(never)]
fn copy_words(dst: &mut [u64], src: &[u64]) {
    let opaque_zero = black_box(0u64);
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s | opaque_zero;
    }
}

struct Case {
    keys: usize,
    lookups: Vec<Vec<u64>>,
    lookup: LookupResults,
    adapters: Vec<AdapterDescriptor>,
    plan: LoadPlan,
    policy: DefaultPolicy,
    outputs: Vec<Vec<u64>>,
    flat_in: Vec<u64>,
    flat_out: Vec<u64>,
}

impl Case {
    fn new(keys: usize) -> Case {
        let words = keys.div_ceil(64);
        let lookups: Vec<Vec<u64>> = (0..ADAPTERS)
            .map(|a| {
                let mut words = random_words(words, 100 + a as u64);
                if !keys.is_multiple_of(64) {
                    *words.last_mut().expect("at least one word") &= (1u64 << (keys % 64)) - 1;
                }
                words
            })
            .collect();
        let lookup = lookups
            .iter()
            .enumerate()
            .map(|(a, words)| (a, Bitmap::from_word_slice(keys, words).expect("tails are clear")))
            .collect();
        Case {
            keys,
            lookup,
            adapters: (0..ADAPTERS).map(|a| AdapterDescriptor::new(a, format!("adapter-{a}"))).collect(),
            plan: LoadPlan::with_capacity(keys, ADAPTERS),
            policy: DefaultPolicy::new(),
            outputs: vec![vec![0; words]; ADAPTERS],
            flat_in: lookups.concat(),
            flat_out: vec![0; words * ADAPTERS],
            lookups,
        }
    }

    fn run(&mut self, form: usize) {
        match form {
            0 => {
                let policy: &dyn PrefetchPolicy = &self.policy;
                let planned =
                    policy.select_load_plan_into(Keys::count(self.keys), &self.lookup, &self.adapters, &mut self.plan);
                black_box(planned.is_ok());
            }
            1 => {
                let inputs: [&[u64]; ADAPTERS] = core::array::from_fn(|a| self.lookups[a].as_slice());
                let [x, y, z] = &mut self.outputs[..] else { unreachable!() };
                kernel::first_wins(black_box(&inputs), &mut [x.as_mut_slice(), y, z]);
            }
            2 => {
                for (output, input) in self.outputs.iter_mut().zip(&self.lookups) {
                    copy_words(black_box(output), black_box(input));
                }
            }
            _ => copy_words(black_box(&mut self.flat_out), black_box(&self.flat_in)),
        }
    }

    fn time(&mut self, form: usize, batch: usize) -> f64 {
        let start = Instant::now();
        for _ in 0..batch {
            self.run(form);
        }
        start.elapsed().as_nanos() as f64 / batch as f64
    }
}

const FORMS: [&str; 4] = ["plan", "kernel", "copy3", "copy1"];

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("profile") {
        let number = |at: usize, default: usize| args.get(at).and_then(|arg| arg.parse().ok()).unwrap_or(default);
        let mut case = Case::new(number(1, 1 << 10));
        for _ in 0..number(2, 100_000) {
            case.run(0);
        }
        return;
    }
    let rounds: usize = args.first().and_then(|arg| arg.parse().ok()).unwrap_or(201);
    println!("kernel {}, {ADAPTERS} adapters, {rounds} rounds, medians (ratios per round):", Kernel::active());
    for keys in [24, 1 << 10, 1 << 14, 1 << 18] {
        let mut case = Case::new(keys);
        let once = case.time(0, 1000);
        let batch = ((BATCH_NS / once.max(1.0)) as usize).clamp(1, 1_000_000);
        let mut times = vec![Vec::new(); FORMS.len()];
        let mut ratios = vec![Vec::new(); FORMS.len()];
        for round in 0..=rounds {
            let mut this = [0.0; FORMS.len()];
            for step in 0..FORMS.len() {
                let form = (step + round) % FORMS.len();
                this[form] = case.time(form, batch);
            }
            if round == 0 {
                continue; // warm-up
            }
            for form in 0..FORMS.len() {
                times[form].push(this[form]);
                ratios[form].push(this[form] / this[2]);
            }
        }
        let cells: Vec<String> = (0..FORMS.len())
            .map(|form| {
                format!(
                    "{} {:>8.1} ns ({:.2}x)",
                    FORMS[form],
                    median(times[form].clone()),
                    median(ratios[form].clone())
                )
            })
            .collect();
        println!("{keys:>7} keys  {}", cells.join("  "));
    }
    println!("(x: the form's time over copy3's in the same round)");
}
