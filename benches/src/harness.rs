//! Registering benchmarks whose inputs are built lazily.
//!
//! Criterion calls a benchmark's closure only if its name passes the filter
//! (`cargo bench -- popcount/avx2`), and then many times (warm-up, each
//! sample). So inputs are built inside the closure, on the first call, and
//! kept for the later ones: a filtered run builds nothing it does not time,
//! `--test` builds each input once, and a 64 MiB input is allocated once per
//! benchmark, never per iteration.

use std::hint::black_box;

use criterion::measurement::Measurement;
use criterion::{BenchmarkGroup, BenchmarkId};

use crate::reference::{assert_words_eq, copy_words, copy_words_fresh};

/// Registers the benchmark `group/function/value`.
///
/// On the first call, `setup` builds the state; it must also run the
/// operation once and check its result against the reference (panicking if
/// it is wrong), so that nothing wrong is ever timed. Then `routine` is timed
/// on that state; its return value is passed through `black_box` by
/// criterion.
pub fn bench_lazy<M, S, R>(
    group: &mut BenchmarkGroup<'_, M>,
    function: &str,
    value: &str,
    setup: impl FnOnce() -> S,
    mut routine: impl FnMut(&mut S) -> R,
) where
    M: Measurement,
{
    let mut setup = Some(setup);
    let mut state: Option<S> = None;
    group.bench_function(BenchmarkId::new(function, value), |b| {
        let state = state.get_or_insert_with(|| (setup.take().expect("setup runs once"))());
        b.iter(|| routine(state));
    });
}

/// Registers `group/copy/value`: copying `sources` into as many output
/// buffers with [`copy_words`], the memory limit of an operation that reads
/// those bytes and writes as many.
pub fn bench_copy<'a, M: Measurement>(
    group: &mut BenchmarkGroup<'_, M>,
    value: &str,
    sources: impl FnOnce() -> Vec<&'a [u64]>,
) {
    bench_lazy(
        group,
        "copy",
        value,
        || {
            let sources = sources();
            let mut outputs: Vec<Vec<u64>> = sources.iter().map(|s| vec![0; s.len()]).collect();
            for (out, src) in outputs.iter_mut().zip(&sources) {
                copy_words(out, src);
                assert_words_eq("copy", out, src);
            }
            (sources, outputs)
        },
        |(sources, outputs)| {
            for (out, src) in outputs.iter_mut().zip(sources.iter()) {
                copy_words(black_box(out), black_box(src));
            }
        },
    );
}

/// Registers `group/copy_fresh/value`: copying `sources` into newly
/// allocated buffers (dropped again after each iteration), the memory limit
/// of an operation that reads those bytes and returns as many in new
/// buffers, as an allocating plan does. Each buffer is written once, by
/// [`copy_words_fresh`], never zeroed first.
pub fn bench_copy_fresh<'a, M: Measurement>(
    group: &mut BenchmarkGroup<'_, M>,
    value: &str,
    sources: impl FnOnce() -> Vec<&'a [u64]>,
) {
    bench_lazy(
        group,
        "copy_fresh",
        value,
        || {
            let sources = sources();
            for src in &sources {
                assert_words_eq("copy_fresh", &copy_words_fresh(src), src);
            }
            sources
        },
        |sources| sources.iter().map(|src| copy_words_fresh(black_box(src))).collect::<Vec<Vec<u64>>>(),
    );
}
