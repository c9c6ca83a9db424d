//! `prefetch-plan bench`: a quick look at the kernels' speed on this
//! machine, beside the speed of copying the same bytes.
//!
//! For each kernel this CPU runs, at a small and a large size, it times:
//!
//! - `popcount`: counting the set bits of one bitmap;
//! - `or_assign`: `a |= b` in place;
//! - `first_wins`: the default plan's core, splitting one lookup bitmap
//!   per adapter into non-overlapping plan bitmaps;
//!
//! and once, on the active kernel (the one `BITMAP_CORE_KERNEL` forces, else
//! the fastest), `plan`: the whole `default` policy call into a reused
//! [`LoadPlan`], rayon chunking included.
//!
//! Every result is first checked against the scalar kernel; a mismatch is
//! reported as an error (exit status 1) and nothing is timed.
//!
//! # The numbers
//!
//! Each operation runs once to warm up, then in batches of enough calls to
//! fill `measure / 5`; the table shows the median batch's time per call.
//! GB/s counts the bytes of the bitmaps the operation is about, read once:
//! one bitmap for `popcount` and `or_assign`, one per adapter for
//! `first_wins` and `plan` (the convention of the criterion benchmarks in
//! `benches/`). The `copy` beside it copies the same bitmaps with a plain
//! loop, each into a buffer of its own (one for `popcount` and
//! `or_assign`; for `first_wins` and `plan`, each adapter's lookup into an
//! output, as the plan reads each lookup and writes one bitmap per
//! adapter): the memory system's pace for reading those bytes and writing
//! as many. `x copy` is the operation's speed over the copy's (above 1:
//! faster than copying its inputs).
//!
//! This is a sanity check, not a benchmark suite: `cargo bench` in
//! `benches/` runs the full one, with statistics and the peer crates.

use std::hint::black_box;
use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

use bitmap_core::Bitmap;
use bitmap_core::kernel::Kernel;
use prefetch_policy::{AdapterDescriptor, DefaultPolicy, Keys, LoadPlan, LookupResults, PrefetchPolicy};
use serde::Serialize;

use crate::error::CliError;
use crate::json;

/// Batches per measurement; the median is reported.
const BATCHES: usize = 5;

/// The largest size `bench` accepts, in bits: 128 MiB per bitmap.
pub const MAX_BITS: usize = 1 << 30;

/// The most memory `bench` may use for its bitmaps (see [`memory_needed`]).
pub const MAX_MEMORY_BYTES: usize = 4 << 30;

/// About how many bytes `bench` allocates at `bits` bits with `adapters`
/// adapters: two operands, an OR destination and its check, and per
/// adapter a lookup (as words and as a bitmap), a first-wins output, its
/// check, a plan bitmap and the copy baseline's source and destination.
pub fn memory_needed(bits: usize, adapters: usize) -> usize {
    bits.div_ceil(64).saturating_mul(8).saturating_mul(adapters.saturating_mul(6).saturating_add(4))
}

/// How `bench` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BenchOptions {
    /// The small size, in bits (keys).
    pub small_bits: usize,
    /// The large size, in bits (keys).
    pub large_bits: usize,
    /// The number of adapters for `first_wins` and `plan`.
    pub adapters: usize,
    /// The time to spend measuring each row (its copy is measured too).
    pub measure: Duration,
    /// Show progress on standard error.
    pub progress: bool,
}

impl Default for BenchOptions {
    fn default() -> BenchOptions {
        BenchOptions {
            small_bits: 1 << 10,
            large_bits: 32 << 20,
            adapters: 3,
            measure: Duration::from_millis(100),
            progress: false,
        }
    }
}

impl BenchOptions {
    /// These options with the given sizes, in bits.
    #[must_use]
    pub fn with_sizes(mut self, small_bits: usize, large_bits: usize) -> BenchOptions {
        self.small_bits = small_bits;
        self.large_bits = large_bits;
        self
    }

    /// These options with the given number of adapters.
    #[must_use]
    pub fn with_adapters(mut self, adapters: usize) -> BenchOptions {
        self.adapters = adapters;
        self
    }

    /// These options with the given time per measurement.
    #[must_use]
    pub fn with_measure(mut self, measure: Duration) -> BenchOptions {
        self.measure = measure;
        self
    }

    /// These options, showing progress or not.
    #[must_use]
    pub fn with_progress(mut self, progress: bool) -> BenchOptions {
        self.progress = progress;
        self
    }
}

/// One measured operation beside its copy baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct BenchRow {
    /// The kernel that ran it.
    pub kernel: &'static str,
    /// `popcount`, `or_assign`, `first_wins` or `plan`.
    pub operation: &'static str,
    /// The size, in bits (keys) per bitmap.
    pub bits: usize,
    /// The bytes the operation is about (see the module docs).
    pub bytes: usize,
    /// Median time per call.
    pub ns_per_call: f64,
    /// `bytes` per nanosecond.
    pub gb_per_s: f64,
    /// The bitmaps the copy baseline copies, each into a buffer of its own:
    /// 1, or the adapter count for `first_wins` and `plan`.
    pub copy_buffers: usize,
    /// Median time to copy the operation's input bitmaps (`bytes` bytes in
    /// all), each into a buffer of its own.
    pub copy_ns_per_call: f64,
    /// `bytes` per nanosecond, copying.
    pub copy_gb_per_s: f64,
    /// `copy_ns_per_call / ns_per_call`: above 1, faster than the copy.
    pub ratio_to_copy: f64,
}

/// What `bench` measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct BenchReport {
    /// The number of adapters of `first_wins` and `plan`.
    pub adapters: usize,
    /// The time spent measuring each row, in milliseconds.
    pub measure_ms: u128,
    /// Batches per measurement.
    pub batches: usize,
    /// The rows, by size, then kernel, then operation.
    pub rows: Vec<BenchRow>,
}

/// Runs the measurements.
///
/// # Errors
///
/// [`CliError::SelfCheck`] if a kernel's result differs from the scalar
/// kernel's; [`CliError::BadOption`] for sizes of 0 or above [`MAX_BITS`],
/// no adapters, or more than [`MAX_MEMORY_BYTES`] of bitmaps.
pub fn run(options: &BenchOptions) -> Result<BenchReport, CliError> {
    for (option, bits) in [("--small", options.small_bits), ("--large", options.large_bits)] {
        if bits == 0 || bits > MAX_BITS {
            return Err(CliError::BadOption { option, message: format!("{bits} bits: expected 1 to {MAX_BITS}") });
        }
    }
    if options.adapters == 0 {
        return Err(CliError::BadOption { option: "--adapters", message: "expected at least 1".into() });
    }
    let needed = memory_needed(options.small_bits.max(options.large_bits), options.adapters);
    if needed > MAX_MEMORY_BYTES {
        let message = format!(
            "{} adapters at {} bits would need about {} MiB, more than the {} MiB allowed",
            options.adapters,
            options.small_bits.max(options.large_bits),
            needed >> 20,
            MAX_MEMORY_BYTES >> 20
        );
        return Err(CliError::BadOption { option: "--large", message });
    }
    let kernels = Kernel::available();
    let active = Kernel::try_active()?;
    let mut progress = Progress::new(options.progress, 2 * (3 * kernels.len() + 1));
    let mut rows = Vec::new();
    for bits in [options.small_bits, options.large_bits] {
        let data = Data::new(bits, options.adapters);
        data.check(&kernels, active)?;
        let mut copy_cache = CopyCache::default();
        for &kernel in &kernels {
            let mut popcount = || {
                black_box(kernel.popcount(black_box(&data.a)));
            };
            progress.step(kernel.name(), "popcount", bits);
            rows.push(row(kernel.name(), "popcount", &data, 1, &mut copy_cache, options, &mut popcount));

            let mut dst = data.a.clone();
            let mut or_assign = || kernel.or_assign(black_box(&mut dst), black_box(&data.b));
            progress.step(kernel.name(), "or_assign", bits);
            rows.push(row(kernel.name(), "or_assign", &data, 1, &mut copy_cache, options, &mut or_assign));

            let inputs: Vec<&[u64]> = data.lookups.iter().map(Vec::as_slice).collect();
            let mut outputs = vec![vec![0u64; data.words()]; options.adapters];
            let mut slices: Vec<&mut [u64]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
            let mut first_wins = || kernel.first_wins(black_box(&inputs), black_box(&mut slices));
            progress.step(kernel.name(), "first_wins", bits);
            rows.push(row(
                kernel.name(),
                "first_wins",
                &data,
                options.adapters,
                &mut copy_cache,
                options,
                &mut first_wins,
            ));
        }
        let policy = DefaultPolicy::new();
        let mut plan = LoadPlan::with_capacity(bits, options.adapters);
        let mut default_plan = || {
            let planned = policy.select_load_plan_into(Keys::count(bits), &data.lookup, &data.adapters, &mut plan);
            black_box(planned.is_ok());
        };
        progress.step(active.name(), "plan", bits);
        rows.push(row(active.name(), "plan", &data, options.adapters, &mut copy_cache, options, &mut default_plan));
    }
    progress.finish();
    Ok(BenchReport { adapters: options.adapters, measure_ms: options.measure.as_millis(), batches: BATCHES, rows })
}

/// Measures `operation`, which reads `bitmaps` input bitmaps, and the copy
/// of each of them into a buffer of its own.
fn row(
    kernel: &'static str,
    operation: &'static str,
    data: &Data,
    bitmaps: usize,
    copies: &mut CopyCache,
    options: &BenchOptions,
    run: &mut dyn FnMut(),
) -> BenchRow {
    let ns_per_call = measure(options.measure, run);
    let bytes = data.bitmap_bytes() * bitmaps;
    let copy_ns_per_call = copies.measure(bytes, bitmaps, options.measure);
    let per_ns = |ns: f64| if ns > 0.0 { bytes as f64 / ns } else { f64::INFINITY };
    BenchRow {
        kernel,
        operation,
        bits: data.bits,
        bytes,
        ns_per_call,
        gb_per_s: per_ns(ns_per_call),
        copy_buffers: bitmaps,
        copy_ns_per_call,
        copy_gb_per_s: per_ns(copy_ns_per_call),
        ratio_to_copy: if ns_per_call > 0.0 { copy_ns_per_call / ns_per_call } else { f64::INFINITY },
    }
}

/// The median time per call of `run`, in nanoseconds, over [`BATCHES`]
/// batches that each take about `target / BATCHES`.
fn measure(target: Duration, run: &mut dyn FnMut()) -> f64 {
    let per_batch = (target / BATCHES as u32).max(Duration::from_micros(10));
    run(); // Warm-up: caches, page faults, lazy kernel selection.
    let mut calls: u64 = 1;
    loop {
        let took = time_calls(calls, run);
        if took >= per_batch || calls >= 1 << 40 {
            break;
        }
        // Aim straight for the batch time, growing at most a hundredfold a
        // step so one noisy short timing cannot overshoot by much.
        let scale = (per_batch.as_secs_f64() / took.as_secs_f64().max(1e-9)).clamp(2.0, 100.0);
        calls = ((calls as f64) * scale).ceil() as u64;
    }
    let mut per_call: Vec<f64> =
        (0..BATCHES).map(|_| time_calls(calls, run).as_secs_f64() * 1e9 / calls as f64).collect();
    per_call.sort_by(f64::total_cmp);
    per_call[BATCHES / 2]
}

fn time_calls(calls: u64, run: &mut dyn FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..calls {
        run();
    }
    start.elapsed()
}

/// The copy baselines measured so far, by byte and buffer count:
/// operations of the same shape share one.
#[derive(Default)]
struct CopyCache {
    measured: Vec<((usize, usize), f64)>,
}

impl CopyCache {
    /// The median time to copy `buffers` buffers of `bytes / buffers` bytes
    /// each into as many others: at a request's size the loop per buffer
    /// is part of the cost, so one copy of all the bytes at once would be a
    /// baseline no plan over separate bitmaps could reach.
    fn measure(&mut self, bytes: usize, buffers: usize, target: Duration) -> f64 {
        let shape = (bytes, buffers.max(1));
        if let Some(&(_, ns)) = self.measured.iter().find(|(measured, _)| *measured == shape) {
            return ns;
        }
        let words = bytes.div_ceil(8).div_ceil(shape.1);
        let sources: Vec<Vec<u64>> = (0..shape.1).map(|k| random_words(words, 0xC0FF_EE00 + k as u64)).collect();
        let mut destinations = vec![vec![0u64; words]; shape.1];
        let mut copy_all = || {
            for (destination, source) in destinations.iter_mut().zip(&sources) {
                copy_words(black_box(destination), black_box(source));
            }
        };
        copy_all();
        let ns = measure(target, &mut copy_all);
        self.measured.push((shape, ns));
        ns
    }
}

/// Copies `src` into `dst` with a plain loop, the baseline: not
/// `copy_from_slice`, whose `memcpy` switches strategy (`rep movsb`,
/// non-temporal stores) on glibc's tunables and the copy's size, which
/// would make the baseline measure glibc rather than the machine.
#[inline(never)]
fn copy_words(dst: &mut [u64], src: &[u64]) {
    // OR-ing in a zero the optimiser cannot see keeps LLVM from turning the
    // loop into a `memcpy` call; it still vectorises, and the OR is free
    // next to the loads and stores.
    let opaque_zero = black_box(0u64);
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s | opaque_zero;
    }
}

/// The inputs at one size.
struct Data {
    bits: usize,
    a: Vec<u64>,
    b: Vec<u64>,
    lookups: Vec<Vec<u64>>,
    lookup: LookupResults,
    adapters: Vec<AdapterDescriptor>,
}

impl Data {
    fn new(bits: usize, adapters: usize) -> Data {
        let words = bits.div_ceil(64);
        let tail_mask = match bits % 64 {
            0 => u64::MAX,
            used => (1u64 << used) - 1,
        };
        let bitmap_words = |seed: u64| {
            let mut words = random_words(words, seed);
            if let Some(last) = words.last_mut() {
                *last &= tail_mask;
            }
            words
        };
        let lookups: Vec<Vec<u64>> = (0..adapters).map(|a| bitmap_words(100 + a as u64)).collect();
        let lookup = lookups
            .iter()
            .enumerate()
            .map(|(a, words)| (a, Bitmap::from_word_slice(bits, words).expect("tail bits are cleared above")))
            .collect();
        Data {
            bits,
            a: bitmap_words(1),
            b: bitmap_words(2),
            lookups,
            lookup,
            adapters: (0..adapters).map(|a| AdapterDescriptor::new(a, format!("adapter-{a}"))).collect(),
        }
    }

    fn words(&self) -> usize {
        self.a.len()
    }

    fn bitmap_bytes(&self) -> usize {
        self.words() * 8
    }

    /// Checks every kernel, and the default plan on the active one, against
    /// the scalar kernel.
    fn check(&self, kernels: &[Kernel], active: Kernel) -> Result<(), CliError> {
        let scalar = Kernel::scalar();
        let expected_count = scalar.popcount(&self.a);
        let mut expected_or = self.a.clone();
        scalar.or_assign(&mut expected_or, &self.b);
        let inputs: Vec<&[u64]> = self.lookups.iter().map(Vec::as_slice).collect();
        let expected_split = first_wins(scalar, &inputs, self.words());
        let fail = |kernel: Kernel, operation: &str| {
            Err(CliError::SelfCheck(format!(
                "kernel {kernel} gives a different {operation} from the scalar kernel at {} bits",
                self.bits
            )))
        };
        for &kernel in kernels {
            if kernel.popcount(&self.a) != expected_count {
                return fail(kernel, "popcount");
            }
            let mut or = self.a.clone();
            kernel.or_assign(&mut or, &self.b);
            if or != expected_or {
                return fail(kernel, "or_assign");
            }
            if first_wins(kernel, &inputs, self.words()) != expected_split {
                return fail(kernel, "first_wins");
            }
        }
        let expected_entries: Result<Vec<(usize, Bitmap)>, _> = expected_split
            .into_iter()
            .enumerate()
            .map(|(a, words)| Bitmap::from_words(self.bits, words).map(|bitmap| (a, bitmap)))
            .collect();
        let expected_plan = expected_entries.ok().and_then(|entries| LoadPlan::from_entries(self.bits, entries).ok());
        let plan = DefaultPolicy::new().select_load_plan(Keys::count(self.bits), &self.lookup, &self.adapters);
        match (plan, expected_plan) {
            (Ok(plan), Some(expected)) if plan == expected => Ok(()),
            _ => fail(active, "default plan"),
        }
    }
}

/// Splits `inputs` first-wins with `kernel`, into new vectors.
fn first_wins(kernel: Kernel, inputs: &[&[u64]], words: usize) -> Vec<Vec<u64>> {
    let mut outputs = vec![vec![0u64; words]; inputs.len()];
    let mut slices: Vec<&mut [u64]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
    kernel.first_wins(inputs, &mut slices);
    outputs
}

/// `len` pseudo-random words (SplitMix64): every bit set with probability
/// 1/2, so no kernel can skip work.
fn random_words(len: usize, seed: u64) -> Vec<u64> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
        .collect()
}

/// A one-line progress indicator on standard error, or nothing.
struct Progress {
    enabled: bool,
    done: usize,
    total: usize,
}

impl Progress {
    fn new(enabled: bool, total: usize) -> Progress {
        Progress { enabled, done: 0, total }
    }

    fn step(&mut self, kernel: &str, operation: &str, bits: usize) {
        self.done += 1;
        if self.enabled {
            let mut stderr = io::stderr().lock();
            // A failed progress write is not worth failing the run for.
            let _ = write!(
                stderr,
                "\r\x1b[2K[{}/{}] {kernel} {operation}, {} bits",
                self.done,
                self.total,
                bits_label(bits)
            );
            let _ = stderr.flush();
        }
    }

    fn finish(&mut self) {
        if self.enabled {
            let mut stderr = io::stderr().lock();
            let _ = write!(stderr, "\r\x1b[2K");
            let _ = stderr.flush();
        }
    }
}

/// Whether progress should be shown: only on a terminal, where `\r`
/// rewrites the line instead of filling a log.
pub fn stderr_is_terminal() -> bool {
    io::stderr().is_terminal()
}

impl BenchReport {
    /// Writes the table for a person to read.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_table<W: Write>(&self, mut out: W) -> io::Result<()> {
        writeln!(
            out,
            "median of {} batches, about {} ms per measurement; first_wins and plan over {} adapters",
            self.batches, self.measure_ms, self.adapters
        )?;
        writeln!(out, "GB/s: bytes of the input bitmaps per second; copy: a plain copy of each input bitmap")?;
        writeln!(out)?;
        writeln!(
            out,
            "{:<9} {:<11} {:>9} {:>10} {:>12} {:>9} {:>12} {:>9} {:>7}",
            "kernel", "operation", "bits", "bytes", "ns/call", "GB/s", "copy ns", "copy GB/s", "x copy"
        )?;
        for row in &self.rows {
            writeln!(
                out,
                "{:<9} {:<11} {:>9} {:>10} {:>12} {:>9.2} {:>12} {:>9.2} {:>7.2}",
                row.kernel,
                row.operation,
                bits_label(row.bits),
                bytes_label(row.bytes),
                ns_label(row.ns_per_call),
                row.gb_per_s,
                ns_label(row.copy_ns_per_call),
                row.copy_gb_per_s,
                row.ratio_to_copy
            )?;
        }
        Ok(())
    }

    /// Writes the report as one line of JSON.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_json<W: Write>(&self, out: W) -> io::Result<()> {
        json::write_line(out, self)
    }
}

/// `1Ki`, `32Mi`, or the plain number when it is not a whole multiple.
fn bits_label(bits: usize) -> String {
    for (shift, suffix) in [(30, "Gi"), (20, "Mi"), (10, "Ki")] {
        if bits >= 1 << shift && bits.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", bits >> shift);
        }
    }
    bits.to_string()
}

fn bytes_label(bytes: usize) -> String {
    for (shift, suffix) in [(30, " GiB"), (20, " MiB"), (10, " KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", bytes >> shift);
        }
    }
    format!("{bytes} B")
}

fn ns_label(ns: f64) -> String {
    if ns < 100.0 {
        format!("{ns:.2}")
    } else if ns < 100_000.0 {
        format!("{ns:.1}")
    } else {
        format!("{ns:.0}")
    }
}

/// Parses a size in bits: a number, optionally with `_` between digits and
/// a binary suffix `Ki`, `Mi` or `Gi` (`32Mi` is 33,554,432).
///
/// # Errors
///
/// A message for anything else, or a size that overflows.
///
/// ```
/// use prefetch_plan::bench_cmd::parse_bits;
/// assert_eq!(parse_bits("1024"), Ok(1024));
/// assert_eq!(parse_bits("32Mi"), Ok(32 << 20));
/// assert_eq!(parse_bits("1_000"), Ok(1000));
/// assert!(parse_bits("4MB").is_err());
/// ```
pub fn parse_bits(text: &str) -> Result<usize, String> {
    let (digits, shift) = match text {
        _ if text.ends_with("Ki") => (&text[..text.len() - 2], 10),
        _ if text.ends_with("Mi") => (&text[..text.len() - 2], 20),
        _ if text.ends_with("Gi") => (&text[..text.len() - 2], 30),
        _ => (text, 0),
    };
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    let invalid = || format!("{text:?} is not a size in bits (examples: 1024, 64Ki, 32Mi)");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid());
    }
    digits.parse::<usize>().ok().and_then(|n| n.checked_mul(1 << shift)).ok_or_else(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tiny_run_measures_every_row() {
        let options =
            BenchOptions::default().with_sizes(64, 1000).with_adapters(2).with_measure(Duration::from_millis(1));
        let report = run(&options).unwrap();
        let kernels = Kernel::available().len();
        assert_eq!(report.rows.len(), 2 * (3 * kernels + 1));
        for row in &report.rows {
            assert!(row.ns_per_call > 0.0 && row.copy_ns_per_call > 0.0, "{row:?}");
            let expected_bytes = match row.operation {
                "popcount" | "or_assign" => row.bits.div_ceil(64) * 8,
                _ => 2 * row.bits.div_ceil(64) * 8,
            };
            assert_eq!(row.bytes, expected_bytes, "{row:?}");
        }
        let mut table = Vec::new();
        report.write_table(&mut table).unwrap();
        let table = String::from_utf8(table).unwrap();
        assert_eq!(table.lines().count(), 4 + report.rows.len());
        assert!(table.contains("scalar    popcount"), "{table}");
        let mut json = Vec::new();
        report.write_json(&mut json).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(value["rows"].as_array().map(Vec::len), Some(report.rows.len()));
    }

    #[test]
    fn bad_options() {
        let zero = run(&BenchOptions::default().with_sizes(0, 64)).unwrap_err();
        assert_eq!(zero.to_string(), format!("--small: 0 bits: expected 1 to {MAX_BITS}"));
        let none = run(&BenchOptions::default().with_adapters(0)).unwrap_err();
        assert_eq!(none.exit_code(), 2);
        let huge = run(&BenchOptions::default().with_sizes(64, MAX_BITS).with_adapters(64)).unwrap_err();
        assert_eq!(
            huge.to_string(),
            "--large: 64 adapters at 1073741824 bits would need about 49664 MiB, more than the 4096 MiB allowed"
        );
        assert!(memory_needed(32 << 20, 3) < 100 << 20);
    }

    #[test]
    fn copy_copies() {
        let source = random_words(37, 5);
        let mut destination = vec![0; 37];
        copy_words(&mut destination, &source);
        assert_eq!(destination, source);
    }

    #[test]
    fn labels_and_sizes() {
        assert_eq!([bits_label(1024), bits_label(32 << 20), bits_label(1000)], ["1Ki", "32Mi", "1000"]);
        assert_eq!([bytes_label(128), bytes_label(4 << 20), bytes_label(1536)], ["128 B", "4 MiB", "1536 B"]);
        assert_eq!([ns_label(1.234), ns_label(1234.56), ns_label(1e6)], ["1.23", "1234.6", "1000000"]);
        assert_eq!(parse_bits("1Gi"), Ok(1 << 30));
        assert_eq!(parse_bits("64Ki"), Ok(65536));
        for bad in ["", "Mi", "-1", "1.5", "1 Mi", "99999999999999999999Gi", "1e6"] {
            assert!(parse_bits(bad).is_err(), "{bad:?}");
        }
    }
}
