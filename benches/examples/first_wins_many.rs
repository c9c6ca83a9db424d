//! The first-wins split over as many adapters as a controller has tiers
//! (1 to 9), at a request's size and at a large one: the dispatched
//! `kernel::first_wins` on slices, and the reused flat plan
//! (`DefaultPolicy::select_load_plan_into` through `&dyn PrefetchPolicy`)
//! over the same lookups, measured interleaved (each round times a batch of
//! each form, the order alternating from round to round).
//!
//! The kernel's inputs and outputs start at a cache line, as the plan's
//! bitmaps do, or with `FIRST_WINS_PAGE=1` each at the start of a page.
//! Prints one line per case, `KERNEL ADAPTERS KEYS kernel NS plan NS`
//! (medians over the rounds), so that runs of two builds, alternated
//! process by process, can be compared line by line. The kernel is the
//! active one: `BITMAP_CORE_KERNEL=scalar|portable|avx2|avx512` forces it.
//!
//! ```text
//! $ cargo run --release -p bitplan-benches --example first_wins_many [ROUNDS [ADAPTERS,... [KEYS,...]]]
//! $ BITMAP_CORE_KERNEL=avx2 target/release/examples/first_wins_many 101 3,5,8,9 1024,262144
//! ```
//!
//! `first_wins_many profile kernel|plan ADAPTERS KEYS CALLS` makes only
//! that form's calls, for an instruction count:
//!
//! ```text
//! $ BITMAP_CORE_KERNEL=avx2 valgrind --tool=callgrind target/release/examples/first_wins_many profile kernel 3 1024 100000
//! ```

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Instant;

use bitmap_core::Bitmap;
use bitmap_core::kernel::{self, Kernel};
use bitplan_benches::data::random_words;
use prefetch_policy::{AdapterDescriptor, DefaultPolicy, Keys, LoadPlan, LookupResults, PrefetchPolicy};

/// Target time of one batch of one form.
const BATCH_NS: f64 = 200_000.0;
/// The most adapters a case may have (the stack arrays of slices below).
const MAX_ADAPTERS: usize = 16;

/// `words` words starting at a cache line, as a `Bitmap`'s are (a `Vec`'s
/// are 16 bytes past one as often as not, and then every other 32-byte
/// vector straddles two lines), or with `FIRST_WINS_PAGE=1` at the start of
/// a 4 KiB page: every input and output then has the same page offset,
/// which is where a load after another bitmap's store at the same offset
/// waits on it (4K aliasing).
struct Lined {
    buffer: Vec<u64>,
    start: usize,
    words: usize,
}

impl Lined {
    fn new(words: &[u64]) -> Lined {
        let align = if std::env::var_os("FIRST_WINS_PAGE").is_some_and(|page| page == "1") { 4096 } else { 64 };
        let mut buffer = vec![0; words.len() + align / 8];
        let start = buffer.as_ptr().align_offset(align).min(align / 8);
        buffer[start..start + words.len()].copy_from_slice(words);
        Lined { buffer, start, words: words.len() }
    }

    fn words(&self) -> &[u64] {
        &self.buffer[self.start..self.start + self.words]
    }

    fn words_mut(&mut self) -> &mut [u64] {
        &mut self.buffer[self.start..self.start + self.words]
    }
}

struct Case {
    keys: usize,
    lookups: Vec<Lined>,
    lookup: LookupResults,
    adapters: Vec<AdapterDescriptor>,
    plan: LoadPlan,
    policy: DefaultPolicy,
    outputs: Vec<Lined>,
}

impl Case {
    fn new(keys: usize, count: usize) -> Case {
        assert!((1..=MAX_ADAPTERS).contains(&count), "1 to {MAX_ADAPTERS} adapters, not {count}");
        let words = keys.div_ceil(64);
        // Random lookups of density ½, each adapter its own.
        let lookups: Vec<Lined> = (0..count)
            .map(|a| {
                let mut words = random_words(words, 100 + a as u64);
                if !keys.is_multiple_of(64) {
                    *words.last_mut().expect("at least one word") &= (1u64 << (keys % 64)) - 1;
                }
                Lined::new(&words)
            })
            .collect();
        let lookup = lookups
            .iter()
            .enumerate()
            .map(|(a, words)| (a, Bitmap::from_word_slice(keys, words.words()).expect("tails are clear")))
            .collect();
        Case {
            keys,
            lookup,
            adapters: (0..count).map(|a| AdapterDescriptor::new(a, format!("adapter-{a}"))).collect(),
            plan: LoadPlan::with_capacity(keys, count),
            policy: DefaultPolicy::new(),
            outputs: (0..count).map(|_| Lined::new(&vec![0; words])).collect(),
            lookups,
        }
    }

    fn run(&mut self, form: usize) {
        if form == 0 {
            // Slices on the stack, as the plan passes them: no allocation
            // in the timed call.
            let count = self.lookups.len();
            let inputs: [&[u64]; MAX_ADAPTERS] =
                core::array::from_fn(|a| self.lookups.get(a).map_or(&[][..], Lined::words));
            let mut outputs = self.outputs.iter_mut();
            let mut targets: [&mut [u64]; MAX_ADAPTERS] =
                core::array::from_fn(|_| outputs.next().map_or(&mut [][..], Lined::words_mut));
            kernel::first_wins(black_box(&inputs[..count]), &mut targets[..count]);
        } else {
            let policy: &dyn PrefetchPolicy = &self.policy;
            let planned =
                policy.select_load_plan_into(Keys::count(self.keys), &self.lookup, &self.adapters, &mut self.plan);
            black_box(planned.is_ok());
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

const FORMS: [&str; 2] = ["kernel", "plan"];

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// A comma-separated list of numbers, or `default` if the argument is absent.
fn numbers(arg: Option<&String>, default: &[usize]) -> Vec<usize> {
    arg.map_or_else(
        || default.to_vec(),
        |arg| arg.split(',').map(|n| n.trim().parse().expect("a comma-separated list of numbers")).collect(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("profile") {
        let form = FORMS.iter().position(|form| args.get(1) == Some(&form.to_string())).expect("kernel or plan");
        let number = |at: usize| -> usize { args.get(at).and_then(|arg| arg.parse().ok()).expect("a number") };
        let mut case = Case::new(number(3), number(2));
        for _ in 0..number(4) {
            case.run(form);
        }
        return;
    }
    let rounds: usize = args.first().and_then(|arg| arg.parse().ok()).unwrap_or(101);
    let counts = numbers(args.get(1), &[3, 5, 8, 9]);
    let sizes = numbers(args.get(2), &[1 << 10, 1 << 18]);
    let active = Kernel::active();
    for &keys in &sizes {
        for &count in &counts {
            let mut case = Case::new(keys, count);
            let once = case.time(1, 1000);
            let batch = ((BATCH_NS / once.max(1.0)) as usize).clamp(1, 1_000_000);
            let mut times = vec![Vec::new(); FORMS.len()];
            for round in 0..=rounds {
                let mut this = [0.0; FORMS.len()];
                for step in 0..FORMS.len() {
                    let form = (step + round) % FORMS.len();
                    this[form] = case.time(form, batch);
                }
                if round == 0 {
                    continue; // warm-up
                }
                for (times, time) in times.iter_mut().zip(this) {
                    times.push(time);
                }
            }
            let cells: Vec<String> =
                FORMS.iter().zip(times).map(|(form, times)| format!("{form} {:.1}", median(times))).collect();
            println!("{active} {count} {keys} {}", cells.join(" "));
        }
    }
}
