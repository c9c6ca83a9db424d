//! `prefetch-plan replay`: a request trace through L1 and L2 adapters, with
//! the controller's plan on every request ([`kv_replay`]), reported as
//! JSON or a short table; several capacities make a sweep, replayed in
//! parallel, one row each; `--bench` times the replay itself, flat or
//! hybrid (`--groups`, `--ranks`, `--windows`).
//!
//! The trace is parsed whole before anything is replayed: a bad line stops
//! the command with its line and field and exit status 2, and nothing is
//! reported (see [`kv_replay::Trace`] for the two line forms).
//!
//! ```
//! use kv_replay::TierSpec;
//! use prefetch_plan::replay_cmd::{ReplayOptions, run};
//!
//! let trace = "{\"hash_ids\": [0, 1]}\n{\"hash_ids\": [0, 1, 2]}\n";
//! let options = ReplayOptions::new("inf".parse()?, vec![]);
//! let outcome = run(trace.as_bytes(), &options)?;
//! assert_eq!((outcome.reports.len(), outcome.reports[0].hit_blocks), (1, 2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, BufRead, Write};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use kv_replay::hybrid::{CellModel, HybridReplayer, HybridReport};
use kv_replay::{AdapterConfig, ReplayConfig, Replayer, Report, TierSpec, Trace, TraceOptions, sweep};
use rayon::prelude::*;
use serde::Serialize;

use crate::error::CliError;
use crate::json;
use crate::replay_eviction::EvictionOptions;

/// How `replay` runs.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ReplayOptions {
    /// `--l1`: one capacity, or several for a sweep.
    pub l1: TierSpec,
    /// `--l2`, in order.
    pub l2: Vec<TierSpec>,
    /// `--policy`.
    pub policy: String,
    /// `--eviction` and LMCache's trigger.
    pub eviction: EvictionOptions,
    /// `--block-tokens`.
    pub block_tokens: u64,
    /// `--kv-bytes-per-token`.
    pub kv_bytes_per_token: Option<u64>,
    /// `--bench RUNS`: replay each configuration this many times and report
    /// the medians.
    pub bench_runs: Option<usize>,
    /// `--threads`: the sweep's threads; `None`: rayon's default (one per
    /// core).
    pub threads: Option<usize>,
    /// Show a progress bar on standard error (the CLI: when it is a
    /// terminal).
    pub progress: bool,
    /// `--groups`, `--ranks`, `--windows`: replay cells, not chunks.
    pub cells: Option<CellModel>,
}

impl ReplayOptions {
    /// L1 and adapters as given, `default`, LRU, 512-token blocks.
    pub fn new(l1: TierSpec, l2: Vec<TierSpec>) -> ReplayOptions {
        ReplayOptions {
            l1,
            l2,
            policy: "default".to_owned(),
            eviction: EvictionOptions::default(),
            block_tokens: 512,
            kv_bytes_per_token: None,
            bench_runs: None,
            threads: None,
            progress: false,
            cells: None,
        }
    }

    /// The configurations to replay: every combination of a policy, an L1
    /// trigger (see [`EvictionOptions::variants`]) and the capacities given
    /// (L1 varying slowest of those), in blocks.
    ///
    /// # Errors
    ///
    /// [`CliError::BadOption`] for a capacity that cannot be resolved (bytes
    /// without `--kv-bytes-per-token`, too many blocks), or eviction options
    /// [`EvictionOptions::variants`] refuses.
    pub fn configs(&self) -> Result<Vec<ReplayConfig>, CliError> {
        let resolve = |option: &'static str, spec: &TierSpec| {
            spec.capacities
                .iter()
                .map(|capacity| capacity.blocks(self.block_tokens, self.kv_bytes_per_token))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|error| CliError::BadOption { option, message: error.to_string() })
        };
        if let Some(spec) = [&self.l1].into_iter().chain(&self.l2).find(|spec| spec.bandwidth.is_some())
            && self.kv_bytes_per_token.is_none()
        {
            let message =
                format!("bw={} is in bytes per second: give --kv-bytes-per-token too", spec.bandwidth.unwrap_or(0.0));
            return Err(CliError::BadOption { option: "--l2", message });
        }
        let l1 = resolve("--l1", &self.l1)?;
        let l2 = self.l2.iter().map(|spec| resolve("--l2", spec)).collect::<Result<Vec<_>, _>>()?;
        let variants = self.eviction.variants(self.l2.len())?;
        if self.cells.is_some()
            && let Some(variant) =
                variants.iter().find(|variant| !variant.eviction.is_list_order() || self.eviction.has_trigger())
        {
            let message =
                format!("the hybrid replay keeps lru, fifo or lfu at strict capacity, not {}", variant.eviction.name());
            let option = if self.eviction.has_trigger() { "--l1-watermark" } else { "--eviction" };
            return Err(CliError::BadOption { option, message });
        }
        let mut configs = Vec::new();
        for variant in variants {
            let mut base = ReplayConfig::new(None, &[]);
            base.adapters = self
                .l2
                .iter()
                .zip(&variant.l2_triggers)
                .map(|(spec, &trigger)| AdapterConfig {
                    capacity: None,
                    weight: spec.weight.unwrap_or(1.0),
                    bandwidth: spec.bandwidth,
                    trigger,
                })
                .collect();
            base.policy.clone_from(&self.policy);
            base.eviction = variant.eviction;
            base.kv_bytes_per_token = self.kv_bytes_per_token;
            base.l1_trigger = variant.l1_trigger;
            base.evict_interval_ms = variant.evict_interval_ms;
            configs.extend(sweep::combinations(&base, &l1, &l2));
        }
        Ok(configs)
    }
}

/// The timing of `--bench` for one configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BenchRow {
    /// The eviction policy.
    pub eviction: &'static str,
    /// L1's watermark under LMCache's trigger (`null`: strict capacity).
    pub l1_watermark: Option<f64>,
    /// L1's eviction ratio under the trigger.
    pub evict_ratio: Option<f64>,
    /// L1's capacity in blocks (`null`: unbounded).
    pub l1_blocks: Option<usize>,
    /// The adapters' capacities.
    pub l2_blocks: Vec<Option<usize>>,
    /// The median replay time over the runs, parsing excluded.
    pub replay_seconds: f64,
    /// Block references over that time.
    pub block_refs_per_second: f64,
    /// With a cell model, cell references over that time: block references
    /// × cells a chunk (absent from the JSON of a flat replay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell_refs_per_second: Option<f64>,
    /// The median over runs of the planner's median time per request (a
    /// hybrid replay's includes the tiers' lookups, see `docs/REPLAY.md`).
    pub planner_ns_p50: u64,
}

/// What `--bench` measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BenchSummary {
    /// Replays per configuration.
    pub runs: usize,
    /// The sweep's threads.
    pub threads: usize,
    /// Parsing the trace, once.
    pub parse_seconds: f64,
    /// The median over runs of the whole sweep's wall time.
    pub sweep_seconds: f64,
    /// The median cost of the `Instant::now` pair around each request's
    /// planner, which `planner_ns_p50` includes.
    pub timer_ns: u64,
    /// With a cell model, its cells a chunk (absent from the JSON of a flat
    /// replay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cells_per_chunk: Option<usize>,
    /// One row per configuration.
    pub rows: Vec<BenchRow>,
}

/// What `replay` found.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ReplayOutcome {
    /// One report per configuration, in order.
    pub reports: Vec<Report>,
    /// With a cell model, one hybrid report per configuration instead.
    pub hybrid: Vec<HybridReport>,
    /// With `--bench`, the timing.
    pub bench: Option<BenchSummary>,
}

/// Parses the trace, replays it at every configuration and returns the
/// reports (and with `bench_runs`, the timing).
///
/// # Errors
///
/// [`CliError::BadTrace`] for a bad line, [`CliError::Replay`] for a
/// configuration the replay refuses (an unknown policy),
/// [`CliError::BadOption`] for a capacity that cannot be resolved.
pub fn run(input: impl BufRead, options: &ReplayOptions) -> Result<ReplayOutcome, CliError> {
    let configs = options.configs()?;
    // Fail on a bad policy before reading a large trace.
    Replayer::new(&configs[0]).map_err(CliError::Replay)?;
    let parse_start = Instant::now();
    let spinner = options.progress.then(|| {
        let spinner = ProgressBar::new_spinner().with_message("reading the trace");
        spinner.enable_steady_tick(std::time::Duration::from_millis(120));
        spinner
    });
    let trace_options = TraceOptions::default().with_block_tokens(options.block_tokens);
    let trace = Trace::parse(input, &trace_options).map_err(|error| CliError::BadTrace(Box::new(error)));
    if let Some(spinner) = spinner {
        spinner.finish_and_clear();
    }
    let trace = trace?;
    let parse_seconds = parse_start.elapsed().as_secs_f64();
    let runs = options.bench_runs.unwrap_or(1).max(1);
    let bar = options.progress.then(|| {
        let total = (trace.len() * configs.len() * runs) as u64;
        let style = ProgressStyle::with_template("{bar:40} {pos}/{len} requests replayed, {eta} left")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        ProgressBar::new(total).with_style(style)
    });
    let progress = |requests: usize| {
        if let Some(bar) = &bar {
            bar.inc(requests as u64);
        }
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.unwrap_or(0))
        .build()
        .map_err(|error| CliError::BadOption { option: "--threads", message: error.to_string() })?;
    let bench = Bench { runs: options.bench_runs, trace: &trace, configs: &configs, parse_seconds, pool: &pool };
    let outcome = match &options.cells {
        None => {
            let replay_all = || {
                pool.install(|| sweep::replay_all_with_progress(&trace, &configs, progress)).map_err(CliError::Replay)
            };
            let timing = |report: &Report| (report.replay_seconds, report.planner_ns.p50);
            bench.run(None, replay_all, timing).map(|(reports, bench)| ReplayOutcome {
                reports,
                hybrid: Vec::new(),
                bench,
            })
        }
        Some(model) => {
            // Capacities in blocks become cells (a block's worth each).
            let cell_configs: Vec<ReplayConfig> = configs.iter().map(|config| model.in_cells(config)).collect();
            let replay_all = || pool.install(|| replay_cells(&trace, &cell_configs, model, progress));
            let timing = |report: &HybridReport| (report.replay_seconds, report.planner_ns.p50);
            bench.run(Some(model.rows()), replay_all, timing).map(|(hybrid, bench)| ReplayOutcome {
                reports: Vec::new(),
                hybrid,
                bench,
            })
        }
    };
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    outcome
}

/// `--bench`, or a single replay without it: what times the replays of a
/// flat or a hybrid model alike.
struct Bench<'a> {
    runs: Option<usize>,
    trace: &'a Trace,
    configs: &'a [ReplayConfig],
    parse_seconds: f64,
    pool: &'a rayon::ThreadPool,
}

impl Bench<'_> {
    /// Runs `replay_all` once (no `--bench`) or once per run, and returns
    /// the last run's reports with, under `--bench`, the medians of what
    /// `timing` reads from each report: its replay seconds and planner p50.
    fn run<R>(
        &self,
        cells_per_chunk: Option<usize>,
        replay_all: impl Fn() -> Result<Vec<R>, CliError>,
        timing: impl Fn(&R) -> (f64, u64),
    ) -> Result<(Vec<R>, Option<BenchSummary>), CliError> {
        let Some(runs) = self.runs else { return Ok((replay_all()?, None)) };
        let runs = runs.max(1);
        let mut sweeps = Vec::with_capacity(runs);
        let mut all_runs = Vec::with_capacity(runs);
        for _ in 0..runs {
            let start = Instant::now();
            all_runs.push(replay_all()?);
            sweeps.push(start.elapsed().as_secs_f64());
        }
        let block_refs = self.trace.block_refs() as f64;
        let rows = (0..self.configs.len())
            .map(|index| {
                let replay_seconds = median_f64(all_runs.iter().map(|reports| timing(&reports[index]).0).collect());
                let mut p50s: Vec<u64> = all_runs.iter().map(|reports| timing(&reports[index]).1).collect();
                p50s.sort_unstable();
                let config = &self.configs[index];
                BenchRow {
                    eviction: config.eviction.name(),
                    l1_watermark: config.l1_trigger.map(|trigger| trigger.watermark),
                    evict_ratio: config.l1_trigger.map(|trigger| trigger.ratio),
                    l1_blocks: self.configs[index].l1,
                    l2_blocks: self.configs[index].adapters.iter().map(|adapter| adapter.capacity).collect(),
                    replay_seconds,
                    block_refs_per_second: block_refs / replay_seconds,
                    cell_refs_per_second: cells_per_chunk.map(|cells| block_refs * cells as f64 / replay_seconds),
                    planner_ns_p50: p50s[p50s.len() / 2],
                }
            })
            .collect();
        let bench = BenchSummary {
            runs,
            threads: self.pool.current_num_threads(),
            parse_seconds: self.parse_seconds,
            sweep_seconds: median_f64(sweeps),
            timer_ns: timer_overhead_ns(),
            cells_per_chunk,
            rows,
        };
        Ok((all_runs.pop().unwrap_or_default(), Some(bench)))
    }
}

/// The median time of an `Instant::now` pair with nothing between, over
/// 10,001 pairs.
fn timer_overhead_ns() -> u64 {
    let mut samples: Vec<u64> = (0..10_001)
        .map(|_| {
            let start = Instant::now();
            start.elapsed().as_nanos() as u64
        })
        .collect();
    samples.sort_unstable();
    samples[samples.len() / 2]
}

/// The hybrid replay of every configuration (capacities in cells), in
/// parallel on the current pool, each reserved for the trace; `progress`
/// as [`sweep::replay_all_with_progress`]'s.
fn replay_cells(
    trace: &Trace,
    configs: &[ReplayConfig],
    model: &CellModel,
    progress: impl Fn(usize) + Sync,
) -> Result<Vec<HybridReport>, CliError> {
    let (distinct, max_keys) = (trace.distinct_keys(), trace.max_keys());
    configs
        .par_iter()
        .map(|config| {
            HybridReplayer::with_reserve(config, model, distinct, max_keys)?.replay_with_progress(trace, &progress)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| CliError::BadOption { option: "--windows", message: error.to_string() })
}

fn median_f64(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// A capacity in blocks for the table: `inf`, or the count with k/M/G.
fn blocks_label(blocks: Option<usize>) -> String {
    match blocks {
        None => "inf".to_owned(),
        Some(blocks) if blocks >= 10_000_000 && blocks % 1_000_000 == 0 => format!("{}M", blocks / 1_000_000),
        Some(blocks) if blocks >= 10_000 && blocks % 1_000 == 0 => format!("{}k", blocks / 1_000),
        Some(blocks) => blocks.to_string(),
    }
}

impl ReplayOutcome {
    /// Writes the reports as JSON, one line each (with `--bench`, one line
    /// of timing instead).
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_json<W: Write>(&self, mut out: W) -> io::Result<()> {
        if let Some(bench) = &self.bench {
            return json::write_line(out, bench);
        }
        for report in &self.hybrid {
            json::write_line(&mut out, report)?;
        }
        for report in &self.reports {
            json::write_line(&mut out, report)?;
        }
        Ok(())
    }

    /// Writes a short table: one block for a single replay, one row per
    /// configuration for a sweep (with `--bench`, the timing).
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_table<W: Write>(&self, mut out: W) -> io::Result<()> {
        if let Some(bench) = &self.bench {
            return write_bench_table(&mut out, bench);
        }
        if !self.hybrid.is_empty() {
            return write_hybrid_table(&mut out, &self.hybrid);
        }
        match self.reports.as_slice() {
            [report] => write_report_table(&mut out, report),
            reports => write_sweep_table(&mut out, reports),
        }
    }
}

fn write_report_table(out: &mut impl Write, report: &Report) -> io::Result<()> {
    writeln!(
        out,
        "{} requests, {} blocks, {} tokens; policy {}, {} eviction",
        report.requests, report.blocks, report.tokens, report.policy, report.eviction
    )?;
    let ratio = &report.hit_ratio;
    writeln!(
        out,
        "hit ratio: {:.4} of blocks, {:.4} of tokens, {:.4} per request on average",
        ratio.block, ratio.token, ratio.request_mean
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:<6} {:>10} {:>12} {:>12} {:>12} {:>10}",
        "tier", "capacity", "hit blocks", "hit GiB", "evictions", "load s"
    )?;
    for (name, tier) in tiers_of(report) {
        let gib = tier.hit_bytes.map_or("-".to_owned(), |bytes| format!("{:.2}", bytes as f64 / (1u64 << 30) as f64));
        let seconds = tier.load_seconds.map_or("-".to_owned(), |seconds| format!("{seconds:.2}"));
        writeln!(
            out,
            "{name:<6} {:>10} {:>12} {gib:>12} {:>12} {seconds:>10}",
            blocks_label(tier.capacity_blocks),
            tier.hit_blocks,
            tier.evictions
        )?;
    }
    for (name, tier) in tiers_of(report) {
        if let (Some(watermark), Some(ratio)) = (tier.watermark, tier.evict_ratio) {
            writeln!(
                out,
                "{name} under LMCache's trigger (watermark {watermark}, ratio {ratio}, a check every {} ms): {} checks \
                 fired, {} keys evicted by them, {} blocks dropped (full), peak {} entries",
                report.evict_interval_ms.unwrap_or(0),
                tier.checks_fired,
                tier.evicted_by_checks,
                tier.dropped_full,
                tier.peak_entries
            )?;
        } else if tier.dropped_full > 0 {
            writeln!(out, "{name}: {} blocks dropped (full: {} never evicts)", tier.dropped_full, report.eviction)?;
        }
    }
    writeln!(out)?;
    let planner = &report.planner_ns;
    writeln!(out, "planner per request: p50 {} ns, p99 {} ns, max {} ns", planner.p50, planner.p99, planner.max)?;
    writeln!(
        out,
        "replay: {:.3} s, {:.0} requests/s, {:.1}M block refs/s",
        report.replay_seconds,
        report.requests_per_second,
        report.block_refs_per_second / 1e6
    )
}

/// The tiers of a report with their names in the tables: `L1`, `L2 0`, ….
fn tiers_of(report: &Report) -> impl Iterator<Item = (String, &kv_replay::TierReport)> {
    std::iter::once(("L1".to_owned(), &report.l1))
        .chain(report.l2.iter().enumerate().map(|(j, tier)| (format!("L2 {j}"), tier)))
}

/// A watermark or ratio for the tables: `-` for strict capacity.
fn fraction_label(value: Option<f64>) -> String {
    value.map_or("-".to_owned(), |value| value.to_string())
}

fn write_sweep_table(out: &mut impl Write, reports: &[Report]) -> io::Result<()> {
    let adapters = reports.first().map_or(0, |report| report.l2.len());
    // The eviction's columns, when the sweep varies it or has a trigger.
    let triggered = reports.iter().any(|report| report.evict_interval_ms.is_some());
    let evictions = triggered || reports.iter().any(|report| report.eviction != reports[0].eviction);
    if evictions {
        write!(out, "{:>8} {:>6} {:>6}", "eviction", "L1 wm", "ratio")?;
    }
    write!(out, "{:>8}", "L1")?;
    for j in 0..adapters {
        write!(out, " {:>8}", format!("L2 {j}"))?;
    }
    write!(out, " {:>8} {:>8} {:>8} {:>12}", "blocks", "tokens", "mean", "L1 evicted")?;
    if triggered {
        write!(out, " {:>8} {:>10}", "checks", "dropped")?;
    }
    writeln!(out, " {:>8}", "seconds")?;
    for report in reports {
        if evictions {
            let (watermark, ratio) = (fraction_label(report.l1.watermark), fraction_label(report.l1.evict_ratio));
            write!(out, "{:>8} {watermark:>6} {ratio:>6}", report.eviction)?;
        }
        write!(out, "{:>8}", blocks_label(report.l1.capacity_blocks))?;
        for tier in &report.l2 {
            write!(out, " {:>8}", blocks_label(tier.capacity_blocks))?;
        }
        let ratio = &report.hit_ratio;
        write!(
            out,
            " {:>8.4} {:>8.4} {:>8.4} {:>12}",
            ratio.block, ratio.token, ratio.request_mean, report.l1.evictions
        )?;
        if triggered {
            write!(out, " {:>8} {:>10}", report.l1.checks_fired, report.l1.dropped_full)?;
        }
        writeln!(out, " {:>8.3}", report.replay_seconds)?;
    }
    Ok(())
}

fn write_hybrid_table(out: &mut impl Write, reports: &[HybridReport]) -> io::Result<()> {
    if let Some(first) = reports.first() {
        writeln!(
            out,
            "{} groups x {} ranks: {} cells a chunk; capacities in cells",
            first.groups, first.ranks, first.cells_per_chunk
        )?;
    }
    writeln!(
        out,
        "{:>10} {:>8} {:>8} {:>8} {:>12} {:>12} {:>12}",
        "L1 cells", "blocks", "tokens", "mean", "L1 evicted", "dropped", "L1 saves"
    )?;
    for report in reports {
        let ratio = &report.hit_ratio;
        let saving = report.capacity_saving.map_or("-".to_owned(), |saving| format!("{:.1}%", 100.0 * saving));
        writeln!(
            out,
            "{:>10} {:>8.4} {:>8.4} {:>8.4} {:>12} {:>12} {saving:>12}",
            blocks_label(report.l1.capacity_blocks),
            ratio.block,
            ratio.token,
            ratio.request_mean,
            report.l1.evictions,
            report.cells_dropped_by_retain
        )?;
    }
    Ok(())
}

fn write_bench_table(out: &mut impl Write, bench: &BenchSummary) -> io::Result<()> {
    writeln!(
        out,
        "median of {} runs on {} threads; parse {:.3} s; whole sweep {:.3} s; timer pair {} ns",
        bench.runs, bench.threads, bench.parse_seconds, bench.sweep_seconds, bench.timer_ns
    )?;
    if let Some(cells) = bench.cells_per_chunk {
        writeln!(out, "hybrid model: {cells} cells a chunk; L1 in blocks, a block's worth of cells each")?;
        writeln!(
            out,
            "{:>8} {:>12} {:>16} {:>16} {:>14}",
            "L1", "replay s", "block refs/s", "cell refs/s", "planner p50 ns"
        )?;
    } else {
        writeln!(
            out,
            "{:>8} {:>6} {:>6} {:>8} {:>12} {:>16} {:>14}",
            "eviction", "L1 wm", "ratio", "L1", "replay s", "block refs/s", "planner p50 ns"
        )?;
    }
    for row in &bench.rows {
        if bench.cells_per_chunk.is_none() {
            let (watermark, ratio) = (fraction_label(row.l1_watermark), fraction_label(row.evict_ratio));
            write!(out, "{:>8} {watermark:>6} {ratio:>6} ", row.eviction)?;
        }
        write!(
            out,
            "{:>8} {:>12.4} {:>15.1}M",
            blocks_label(row.l1_blocks),
            row.replay_seconds,
            row.block_refs_per_second / 1e6
        )?;
        if let Some(cell_refs) = row.cell_refs_per_second {
            write!(out, " {:>15.1}M", cell_refs / 1e6)?;
        }
        writeln!(out, " {:>14}", row.planner_ns_p50)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(l1: &str, l2: &[&str]) -> ReplayOptions {
        ReplayOptions::new(l1.parse().unwrap(), l2.iter().map(|spec| spec.parse().unwrap()).collect())
    }

    #[test]
    fn a_sweep_is_every_combination() {
        let configs = options("10,20", &["inf", "1,2,3"]).configs().unwrap();
        assert_eq!(configs.len(), 6);
        assert_eq!((configs[5].l1, configs[5].adapters[1].capacity), (Some(20), Some(3)));
    }

    #[test]
    fn bytes_need_bytes_per_token() {
        let error = options("64GiB", &[]).configs().unwrap_err();
        assert_eq!((error.exit_code(), error.to_string().starts_with("--l1: ")), (2, true), "{error}");
        let error = options("inf", &["inf:bw=1GB/s"]).configs().unwrap_err();
        assert!(error.to_string().contains("--kv-bytes-per-token"), "{error}");
        let mut with_bytes = options("64GiB", &[]);
        with_bytes.kv_bytes_per_token = Some(131_072);
        assert_eq!(with_bytes.configs().unwrap()[0].l1, Some(1024));
    }

    #[test]
    fn tables_and_json() {
        let trace = "{\"keys\": [1, 2]}\n{\"keys\": [1, 2, 3]}\n";
        let outcome = run(trace.as_bytes(), &options("1,10", &["inf"])).unwrap();
        let mut table = Vec::new();
        outcome.write_table(&mut table).unwrap();
        let table = String::from_utf8(table).unwrap();
        assert_eq!(table.lines().count(), 3, "{table}");
        let mut lines = Vec::new();
        outcome.write_json(&mut lines).unwrap();
        let rows: Vec<serde_json::Value> =
            String::from_utf8(lines).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
        assert_eq!(rows.iter().map(|row| row["hit_blocks"].as_u64().unwrap()).collect::<Vec<_>>(), [2, 2]);
        assert_eq!(rows[0]["l2"][0]["hit_blocks"], 1);

        let single = run(trace.as_bytes(), &options("10", &["inf"])).unwrap();
        let mut table = Vec::new();
        single.write_table(&mut table).unwrap();
        assert!(String::from_utf8(table).unwrap().contains("hit ratio: 0.4000 of blocks"));

        let mut bench = options("1,10", &[]);
        bench.bench_runs = Some(2);
        let timed = run(trace.as_bytes(), &bench).unwrap();
        assert_eq!(timed.bench.as_ref().map(|bench| bench.rows.len()), Some(2));
        let mut table = Vec::new();
        timed.write_table(&mut table).unwrap();
        assert_eq!(String::from_utf8(table).unwrap().lines().count(), 4);
        let mut json = Vec::new();
        timed.write_json(&mut json).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
        // The flat bench's fields, and none of the hybrid ones.
        assert!(json.get("cells_per_chunk").is_none() && json["rows"][0].get("cell_refs_per_second").is_none());
    }

    #[test]
    fn tables_show_the_trigger() {
        let trace: String =
            (0..40).map(|t| format!("{{\"timestamp\": {}, \"keys\": [{}, {}]}}\n", t * 300, t % 5, 100 + t)).collect();
        let mut single = options("10", &[]);
        single.eviction.evictions = vec![kv_replay::Eviction::Arc];
        single.eviction.l1_watermarks = vec![0.5];
        let outcome = run(trace.as_bytes(), &single).unwrap();
        let mut table = Vec::new();
        outcome.write_table(&mut table).unwrap();
        let table = String::from_utf8(table).unwrap();
        assert!(table.contains("arc eviction"), "{table}");
        assert!(
            table.contains("L1 under LMCache's trigger (watermark 0.5, ratio 0.2, a check every 1000 ms)"),
            "{table}"
        );
        let mut sweep = single.clone();
        sweep.l1 = "5,10".parse().unwrap();
        sweep.eviction.evictions = vec![kv_replay::Eviction::Lru, kv_replay::Eviction::S3Fifo];
        let outcome = run(trace.as_bytes(), &sweep).unwrap();
        let mut table = Vec::new();
        outcome.write_table(&mut table).unwrap();
        let table = String::from_utf8(table).unwrap();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 5, "{table}");
        assert!(
            lines[0].contains("eviction") && lines[0].contains("checks") && lines[0].contains("dropped"),
            "{table}"
        );
        assert!(lines[4].trim_start().starts_with("s3fifo") && lines[4].contains("0.5"), "{table}");
    }

    #[test]
    fn bench_times_a_hybrid_replay() {
        let trace = "{\"keys\": [1, 2]}\n{\"keys\": [1, 2, 3]}\n{\"keys\": [1, 2, 3]}\n";
        let mut bench = options("1,10", &["inf"]);
        bench.cells = Some(CellModel { windows: vec![-1, 4, 1], ranks: 2 });
        bench.bench_runs = Some(3);
        let timed = run(trace.as_bytes(), &bench).unwrap();
        let summary = timed.bench.as_ref().unwrap();
        assert_eq!((summary.runs, summary.cells_per_chunk, summary.rows.len()), (3, Some(6), 2));
        let row = &summary.rows[1];
        // Capacities stay in blocks; cell references are 6 a block reference.
        assert_eq!((row.l1_blocks, row.l2_blocks.as_slice()), (Some(10), &[None][..]));
        let cell_refs = row.cell_refs_per_second.unwrap();
        assert!((cell_refs / row.block_refs_per_second - 6.0).abs() < 1e-9, "{row:?}");
        assert_eq!(row.block_refs_per_second, 8.0 / row.replay_seconds);
        // The last run's reports come with the timing.
        assert_eq!(timed.hybrid.len(), 2);
        assert_eq!(timed.hybrid[1].hit_blocks, 2 + 3);
        let mut table = Vec::new();
        timed.write_table(&mut table).unwrap();
        let table = String::from_utf8(table).unwrap();
        assert_eq!(table.lines().count(), 5, "{table}");
        assert!(table.contains("cell refs/s") && table.contains("6 cells a chunk"), "{table}");
        let mut json = Vec::new();
        timed.write_json(&mut json).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(json["cells_per_chunk"], 6);
        assert!(json["rows"][0]["cell_refs_per_second"].as_f64().unwrap() > 0.0);
    }
}
