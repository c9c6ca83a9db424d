//! Measures sequential against parallel first-wins planning over a range of
//! sizes, to choose `PARALLEL_THRESHOLD_WORDS` on a given machine:
//!
//! ```text
//! cargo run --release -p prefetch-policy --example parallel_threshold [ADAPTERS]
//! ```
//!
//! For each bitmap size (in words) it prints the best time of each mode
//! into a reused plan and the speed-up of parallel; the threshold is the
//! smallest size from which parallel is never slower.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bitmap_core::Bitmap;
use prefetch_policy::{
    AdapterDescriptor, LoadPlan, LookupResults, PARALLEL_THRESHOLD_WORDS, Parallelism, plan_first_wins_into,
};

/// A bitmap with about half its bits set (xorshift64).
fn noise(len: usize, seed: u64) -> Bitmap {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut words: Vec<u64> = (0..len.div_ceil(64))
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        })
        .collect();
    if let (Some(last), used @ 1..) = (words.last_mut(), len % 64) {
        *last &= (1 << used) - 1;
    }
    Bitmap::from_words(len, words).expect("tail bits are clear")
}

/// How many times `work` must run to last a few milliseconds.
fn repeat_count(mut work: impl FnMut()) -> u32 {
    let mut repeat = 1;
    loop {
        let start = Instant::now();
        for _ in 0..repeat {
            work();
        }
        if start.elapsed() >= Duration::from_millis(3) {
            return repeat;
        }
        repeat *= 2;
    }
}

/// The time of one call of `work`, averaged over `repeat` calls.
fn time(repeat: u32, mut work: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..repeat {
        work();
    }
    start.elapsed() / repeat
}

/// Timed runs per mode and size.
const RUNS: usize = 25;

fn main() {
    let adapters_count: usize = std::env::args().nth(1).map_or(3, |arg| arg.parse().expect("ADAPTERS is a number"));
    let adapters: Vec<AdapterDescriptor> =
        (0..adapters_count).map(|index| AdapterDescriptor::new(index, format!("adapter-{index}"))).collect();
    println!(
        "{adapters_count} adapters, {} rayon threads, current threshold {PARALLEL_THRESHOLD_WORDS} words",
        rayon::current_num_threads()
    );
    println!("{:>10} {:>10} {:>12} {:>12} {:>8}", "words", "keys", "sequential", "parallel", "speed-up");
    for log2_words in 10..=20 {
        let words = 1usize << log2_words;
        let num_keys = words * 64;
        let lookup: LookupResults = (0..adapters_count).map(|a| (a, noise(num_keys, a as u64 + 1))).collect();
        let mut plan = LoadPlan::with_capacity(num_keys, adapters_count);
        let mut run = |parallelism| {
            plan_first_wins_into(num_keys, &lookup, &adapters, parallelism, &mut plan).expect("valid input");
            black_box(&plan);
        };
        let repeat = repeat_count(|| run(Parallelism::Sequential));
        // Alternate the modes and keep each one's best time: on a shared
        // machine the minimum is the estimate least disturbed by other load.
        let (mut sequential, mut parallel) = (Duration::MAX, Duration::MAX);
        for _ in 0..RUNS {
            sequential = sequential.min(time(repeat, || run(Parallelism::Sequential)));
            parallel = parallel.min(time(repeat, || run(Parallelism::Parallel)));
        }
        println!(
            "{words:>10} {num_keys:>10} {:>10.1}µs {:>10.1}µs {:>7.2}×",
            sequential.as_secs_f64() * 1e6,
            parallel.as_secs_f64() * 1e6,
            sequential.as_secs_f64() / parallel.as_secs_f64()
        );
    }
}
