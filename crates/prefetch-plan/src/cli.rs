//! The command line: [`Cli`] (clap) and [`run`], which runs a parsed
//! command and returns the error that decides the exit status.

use std::fs::File;
use std::io::{self, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use bitmap_core::kernel::Kernel;
use clap::{Args, Parser, Subcommand, ValueEnum};
use kv_replay::hybrid::CellModel;
use kv_replay::{Eviction, TierSpec};

use prefetch_plan::answer::Trim;
use prefetch_plan::bench_cmd::{self, BenchOptions, parse_bits};
use prefetch_plan::case::CaseLimits;
use prefetch_plan::chart;
use prefetch_plan::error::CliError;
use prefetch_plan::features::FeatureReport;
use prefetch_plan::hit_cmd::{self, HitOptions};
use prefetch_plan::plan_cmd::{self, PlanOptions};
use prefetch_plan::replay_cmd::{self, ReplayOptions};

const EXIT_STATUS: &str = "\
Exit status: 0 on success; 2 for bad input (a bad case, option, or BITMAP_CORE_KERNEL value); 1 when reading or \
writing fails.";

const PLAN_HELP: &str = r#"Input: one JSON case per line (NDJSON), or a JSON object spread over several lines:
  {"num_keys": 5, "adapters": [0, 1, 2], "lookup": {"0": [0, 3], "1": "01110", "2": [2, 3, 4]}, "policy": "default"}
  - adapters: indices, or objects {"index": 0, "name": "ssd0", "weight": 2.0}; any order. weight (default 1) is the
    adapter's relative load bandwidth, which the balanced policy shares keys out by.
  - lookup: adapter index (a JSON string) -> the keys it holds: an array of key indices, or a string of num_keys
    0/1 characters, bit 0 first.
  - policy: optional; else --policy.
  Unknown fields are errors: a misspelt field must not be silently ignored.
A grid case (LMCache's newer plan_load over rows of group and rank) has a windows field instead:
  {"windows": [-1, 2], "num_chunks": 4, "l1": {"0": ["1100", [0, 1]]}, "l2": {"1": ["1111", "0011"]},
   "fetching": "prefix"}
  - windows: one per row (<= 0 full attention, >= 1 sliding window); l1, l2: tier index -> one row per window,
    each a list of chunk indices or a 0/1 string of num_chunks; fetching: "prefix" (default) or "full".
  Its answer: {"l1": {"0": [[0, 1], [0, 1]]}, "l2": {"1": [[2, 3], [2, 3]]}, "hit": 4}

Output: one JSON line per case, in input order:
  {"plan": {"0": [0, 3], "1": [1, 2], "2": [4]}, "retain": [false, false, false, false, false], "prefix_len": 5}
  - plan: adapter -> the keys it loads, ascending; adapters with nothing to load are left out.
  - retain: the policy's L1 retention decision for each planned key, in key order.
  - prefix_len: how many leading keys the plan covers without a gap.

A bad case stops the run: the answers to the cases before it are written, nothing is written for it or after it,
and its line number and field go to standard error with exit status 2. So answer line n is always the answer to
case n.

Exit status: 0 when every case was answered; 2 for bad input (a bad case, an unknown --policy, a bad
BITMAP_CORE_KERNEL); 1 when reading or writing fails."#;

const HIT_HELP: &str = r#"Input: one JSON case per line (NDJSON), or a JSON object spread over several lines. Flat (chunk-major: bit
j*G*R + g*R + r is chunk j, group g, rank r; G = the number of windows):
  {"num_chunks": 5, "num_ranks": 1, "windows": [-1, 2], "found": [0, 2, 4, 5, 6, 7, 9]}
  - found: an array of indices below num_chunks*G*R or a 0/1 string of that length; num_ranks defaults to 1.
Grouped (one row per group and rank, each with its window):
  {"rows": ["11110", [2, 3, 4]], "windows": [-1, 2], "num_chunks": 5}
  - num_chunks is optional when every row is a 0/1 string.
A window <= 0 is full attention, >= 1 a sliding window of that many chunks (1: Mamba).

Output: one JSON line per case, in input order: the longest prefix every group can serve, and the keys to keep
for it: {"hit": 4, "retain": [0, 2, 4, 5, 6, 7]} (flat), {"hit": 4, "retain": [[0, 1, 2, 3], [2, 3]]} (grouped).

A bad case stops the run, as for plan: exit status 2 with its line number and field on standard error."#;

const REPLAY_HELP: &str = r#"Input: one request per line (NDJSON), either form:
  {"timestamp": 0, "input_length": 12035, "output_length": 343, "hash_ids": [0, 1, 2, ...]}   (Mooncake)
  {"keys": [7, 8, 9], "tokens": 1500}                                                          (tokens optional)
  - ids: integers from 0 to 2^64 - 1; an id names a block together with everything before it;
  - with a token count, there must be ceil(tokens / --block-tokens) ids.
  A bad line stops the run before anything is replayed: its line and field on standard error, exit status 2.

CAP: blocks (20000, 1e4), tokens (1e7tok), bytes (64GiB, 500GB; needs --kv-bytes-per-token) or inf.
  Several, comma-separated (--l1 1e4,1e5,1e6), make a sweep: one replay per combination, in parallel, one row each.
  An adapter may add :weight=W (for --policy balanced) and :bw=RATE (bytes/s: 12GB/s), e.g. --l2 inf:weight=2:bw=12GB/s.

Model, per request k0..k(n-1) (docs/REPLAY.md has it exactly): look up each key in L1 and in each adapter; the policy
plans the keys not in L1 over the adapters; the hit h is the longest prefix in L1 or planned (later loads are trimmed);
L1 touches k0..k(n-1) in order, evicting when full; each adapter touches the keys it served and every key from h on.

Eviction: --eviction lru|fifo|lfu|s3fifo|arc|noop (several, comma-separated, sweep). --l1-watermark F replays LMCache's
trigger instead of strict capacity: a check every --evict-interval-ms (1000) of the trace's timestamps evicts
--evict-ratio (0.2) of the policy's keys when resident/capacity >= F; a write that finds the tier full drops the keys
that do not fit. --l2-watermark/--l2-evict-ratio do the same for the adapters (one value for all, or one each).
A watermark or ratio outside [0, 1] is exit status 2. docs/REPLAY.md has the model.

Hybrid models: --windows W,... (one per layer group; with --groups G and one window, G groups of it) and --ranks R
make each chunk G*R cells, cached and evicted on their own: the hit is fold_unfold_grouped over the cells found, the
loads follow the grid plan, and tiers keep only the cells the retain mask needs plus the computed ones. Capacities
then count cells (a block's worth: G*R cells).

Output: JSON (one line per replay) when --json is given or standard output is not a terminal, else a short table.
  --bench N replays each configuration N times and reports the median times instead: replay seconds, block references
  per second, the planner's p50; with a hybrid model also cell references per second (block references x G*R)."#;

/// `prefetch-plan`: compute prefetch load plans, show the CPU's kernels,
/// measure them.
#[derive(Debug, Parser)]
#[command(
    name = "prefetch-plan",
    version,
    about = "Compute prefetch load plans for an LMCache-style KV-cache controller, from lookup results in JSON",
    after_help = EXIT_STATUS
)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Compute load plans: one JSON case per line in, one JSON answer per line out
    #[command(after_help = PLAN_HELP)]
    Plan(PlanArgs),
    /// Prefix hits for hybrid models: one JSON case per line in, {"hit": N, "retain": [...]} per line out
    #[command(after_help = HIT_HELP)]
    Hit(HitArgs),
    /// Show the CPU features that matter, the kernels available and the active one
    #[command(
        after_help = "The active kernel honours BITMAP_CORE_KERNEL (scalar, portable, avx2, avx512, neon, auto); \
                            naming one that cannot run here is an error (exit status 2)."
    )]
    Features(FeaturesArgs),
    /// Measure each kernel for a few seconds, beside a plain memory copy
    #[command(after_help = "GB/s counts the bytes of the input bitmaps (one for popcount and or_assign, one per \
                            adapter for first_wins and plan); 'copy' copies as many bytes with a plain loop, and \
                            'x copy' is the operation's speed over the copy's. For real benchmarks: cargo bench \
                            (benches/).")]
    Bench(BenchArgs),
    /// Replay a request trace through L1 and L2 adapters: hit ratios, evictions, the planner's cost
    #[command(after_help = REPLAY_HELP)]
    Replay(Box<ReplayArgs>),
}

/// The options of `plan`.
#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    /// The policy for cases without a "policy" field
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub(crate) policy: String,
    /// Trim each plan before answering: "prefix" cuts it to its first prefix_len keys, as the controller does
    #[arg(long, value_enum, value_name = "MODE", default_value_t = TrimArg::None)]
    pub(crate) trim: TrimArg,
    /// Refuse a case whose lookup bitmaps would take more than this many MiB in all
    #[arg(long, value_name = "MIB", default_value_t = CaseLimits::DEFAULT_MAX_LOOKUP_BYTES >> 20)]
    pub(crate) max_lookup_mib: usize,
    /// The file of cases; standard input when absent or "-"
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<PathBuf>,
}

/// The options of `hit`.
#[derive(Debug, Args)]
pub(crate) struct HitArgs {
    /// Refuse a case whose bitmaps would take more than this many MiB in all
    #[arg(long, value_name = "MIB", default_value_t = CaseLimits::DEFAULT_MAX_LOOKUP_BYTES >> 20)]
    pub(crate) max_lookup_mib: usize,
    /// The file of cases; standard input when absent or "-"
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<PathBuf>,
}

/// `--trim`'s values, as clap parses them: [`Trim`]'s, which implements no
/// clap trait so that clap stays out of the library's API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TrimArg {
    /// Answer the policy's plan as it is.
    None,
    /// Cut the plan to its loadable prefix (`prefix_len` keys).
    Prefix,
}

impl From<TrimArg> for Trim {
    fn from(arg: TrimArg) -> Trim {
        match arg {
            TrimArg::None => Trim::None,
            TrimArg::Prefix => Trim::Prefix,
        }
    }
}

/// A map_err for reading or writing `context` (the library's own helper is
/// private to it).
fn io_error(context: impl Into<String>) -> impl FnOnce(io::Error) -> CliError {
    let context = context.into();
    move |source| CliError::Io { context, source }
}

/// The options of `features`.
#[derive(Debug, Args)]
pub(crate) struct FeaturesArgs {
    /// Print one line of JSON instead of text
    #[arg(long)]
    pub(crate) json: bool,
}

/// The options of `bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// The small size, in bits (keys): a number, or one with Ki, Mi or Gi
    #[arg(long, value_name = "BITS", default_value = "1Ki", value_parser = parse_bits)]
    pub(crate) small: usize,
    /// The large size, in bits (keys)
    #[arg(long, value_name = "BITS", default_value = "32Mi", value_parser = parse_bits)]
    pub(crate) large: usize,
    /// The number of adapters for first_wins and plan
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub(crate) adapters: u16,
    /// Milliseconds to spend measuring each row
    #[arg(long, value_name = "MS", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub(crate) measure_ms: u64,
    /// Print one line of JSON instead of the table
    #[arg(long)]
    pub(crate) json: bool,
}

/// How a full tier picks what to evict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum EvictionArg {
    /// Least recently used
    Lru,
    /// First in, first out (a touch of a held key changes nothing)
    Fifo,
    /// Least frequently used (ties: least recently touched)
    Lfu,
    /// LMCache's S3-FIFO (small, main and ghost queues)
    #[value(name = "s3fifo")]
    S3Fifo,
    /// LMCache's ARC (T1, T2, ghosts, adaptive target)
    Arc,
    /// LMCache's noop: never evicts; a full tier drops new blocks
    Noop,
}

impl From<EvictionArg> for Eviction {
    fn from(eviction: EvictionArg) -> Eviction {
        match eviction {
            EvictionArg::Lru => Eviction::Lru,
            EvictionArg::Fifo => Eviction::Fifo,
            EvictionArg::Lfu => Eviction::Lfu,
            EvictionArg::S3Fifo => Eviction::S3Fifo,
            EvictionArg::Arc => Eviction::Arc,
            EvictionArg::Noop => Eviction::Noop,
        }
    }
}

/// The options of `replay`.
#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// The trace (NDJSON); "-" for standard input
    #[arg(value_name = "TRACE")]
    pub(crate) trace: PathBuf,
    /// L1's capacity: CAP, or CAP,CAP,... for a sweep
    #[arg(long, value_name = "CAP")]
    pub(crate) l1: TierSpec,
    /// The L2 adapters, in order: each a capacity or a sweep of them, with
    /// an optional weight and bandwidth (the help text has the syntax).
    #[arg(
        long,
        value_name = "CAP",
        help = "An L2 adapter: CAP[,CAP...][:weight=W][:bw=RATE]; repeat for more, in order"
    )]
    pub(crate) l2: Vec<TierSpec>,
    /// The prefetch policy: default, balanced, retain, or any registered one
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub(crate) policy: String,
    /// How every tier evicts; several, comma-separated, make a sweep (one line each on --chart)
    #[arg(long, value_enum, value_name = "POLICY", value_delimiter = ',', default_value = "lru")]
    pub(crate) eviction: Vec<EvictionArg>,
    /// LMCache's trigger for L1: evict when usage >= F at a check (0.8 is LMCache's); F,F,... sweep
    #[arg(long, value_name = "F", value_delimiter = ',', allow_negative_numbers = true)]
    pub(crate) l1_watermark: Vec<f64>,
    /// With --l1-watermark: the share of L1's tracked keys a check evicts (default 0.2); F,F,... sweep
    #[arg(long, value_name = "F", value_delimiter = ',', allow_negative_numbers = true)]
    pub(crate) evict_ratio: Vec<f64>,
    /// LMCache's trigger for the adapters: one watermark for all, or one per --l2 in order
    #[arg(long, value_name = "F", value_delimiter = ',', allow_negative_numbers = true)]
    pub(crate) l2_watermark: Vec<f64>,
    /// With --l2-watermark: the adapters' eviction ratios, one for all or one each (default 0.2)
    #[arg(long, value_name = "F", value_delimiter = ',', allow_negative_numbers = true)]
    pub(crate) l2_evict_ratio: Vec<f64>,
    /// The checks' interval in the trace's milliseconds (LMCache's controllers: 1000)
    #[arg(long, value_name = "N")]
    pub(crate) evict_interval_ms: Option<u64>,
    /// Tokens a block (Mooncake's traces: 512)
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) block_tokens: u64,
    /// Bytes of KV cache a token, for capacities and counts in bytes (131072: an 8B model in fp16)
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) kv_bytes_per_token: Option<u64>,
    /// Print JSON even on a terminal
    #[arg(long)]
    pub(crate) json: bool,
    /// Replay each configuration N times and report the median times
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub(crate) bench: Option<u64>,
    /// Threads for a sweep (default: one per core)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub(crate) threads: Option<u64>,
    /// Draw hit ratio against the swept tier's capacity (log scale) into this SVG file
    #[arg(long, value_name = "FILE")]
    pub(crate) chart: Option<PathBuf>,
    /// Hybrid model: the layer groups (with one --windows value, every group has that window)
    #[arg(long, value_name = "G", value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub(crate) groups: Option<u64>,
    /// Hybrid model: tensor-parallel ranks, each group's cells split across them
    #[arg(long, value_name = "R", value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub(crate) ranks: Option<u64>,
    /// Hybrid model: one window per group, comma-separated (<= 0 full attention, >= 1 sliding, 1 Mamba)
    #[arg(long, value_name = "W,...", value_delimiter = ',', allow_hyphen_values = true)]
    pub(crate) windows: Vec<i64>,
}

impl ReplayArgs {
    /// The cell model of `--groups`, `--ranks`, `--windows`, if any is given.
    fn cells(&self) -> Result<Option<CellModel>, CliError> {
        if self.groups.is_none() && self.ranks.is_none() && self.windows.is_empty() {
            return Ok(None);
        }
        let bad = |message: String| CliError::BadOption { option: "--windows", message };
        let windows = match (self.groups, self.windows.as_slice()) {
            (_, []) => return Err(bad("a hybrid model needs --windows (one per group)".to_owned())),
            (Some(groups), &[window]) => vec![window; groups as usize],
            (Some(groups), windows) if windows.len() as u64 != groups => {
                return Err(bad(format!(
                    "{} windows for --groups {groups}: give one per group, or one for all",
                    windows.len()
                )));
            }
            (_, windows) => windows.to_vec(),
        };
        if self.chart.is_some() {
            return Err(bad("--chart is for flat replays, not hybrid ones".to_owned()));
        }
        Ok(Some(CellModel { windows, ranks: self.ranks.unwrap_or(1) as usize }))
    }
}

/// Runs the command.
///
/// # Errors
///
/// The [`CliError`] that ended it; [`CliError::exit_code`] is the exit
/// status.
pub(crate) fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Plan(args) => plan(args),
        Command::Hit(args) => hit(args),
        Command::Features(args) => features(&args),
        Command::Bench(args) => bench(&args),
        Command::Replay(args) => replay(*args),
    }
}

fn replay(args: ReplayArgs) -> Result<(), CliError> {
    Kernel::try_active()?;
    let cells = args.cells()?;
    let mut options = ReplayOptions::new(args.l1, args.l2);
    options.cells = cells;
    options.policy = args.policy;
    options.eviction.evictions = args.eviction.into_iter().map(Eviction::from).collect();
    options.eviction.l1_watermarks = args.l1_watermark;
    options.eviction.evict_ratios = args.evict_ratio;
    options.eviction.l2_watermarks = args.l2_watermark;
    options.eviction.l2_evict_ratios = args.l2_evict_ratio;
    options.eviction.evict_interval_ms = args.evict_interval_ms;
    options.block_tokens = args.block_tokens;
    options.kv_bytes_per_token = args.kv_bytes_per_token;
    options.bench_runs = args.bench.map(|runs| runs as usize);
    options.threads = args.threads.map(|threads| threads as usize);
    options.progress = io::stderr().is_terminal();
    let outcome = if args.trace == Path::new("-") {
        replay_cmd::run(io::stdin().lock(), &options)
    } else {
        let path = &args.trace;
        let file = File::open(path).map_err(io_error(format!("cannot open {}", path.display())))?;
        replay_cmd::run(BufReader::with_capacity(1 << 16, file), &options)
    }?;
    if let Some(path) = &args.chart {
        chart::draw(path, &outcome.reports)?;
    }
    let mut out = io::stdout().lock();
    let table = !args.json && io::stdout().is_terminal();
    let written = if table { outcome.write_table(&mut out) } else { outcome.write_json(&mut out) };
    written.and_then(|()| out.flush()).map_err(io_error("writing the report"))
}

fn plan(args: PlanArgs) -> Result<(), CliError> {
    // A bad BITMAP_CORE_KERNEL would make the first bitmap operation panic:
    // report it as the bad input it is, before reading anything.
    Kernel::try_active()?;
    let max_lookup_bytes = args.max_lookup_mib.saturating_mul(1 << 20);
    let options = PlanOptions::default()
        .with_policy(args.policy)
        .with_trim(args.trim.into())
        .with_limits(CaseLimits::with_max_lookup_bytes(max_lookup_bytes))
        .with_flush_each_answer(io::stdout().is_terminal());
    let output = io::stdout().lock();
    match args.file.as_deref() {
        None => plan_cmd::run(io::stdin().lock(), output, &options),
        Some(path) if path == Path::new("-") => plan_cmd::run(io::stdin().lock(), output, &options),
        Some(path) => {
            let file = File::open(path).map_err(io_error(format!("cannot open {}", path.display())))?;
            plan_cmd::run(BufReader::with_capacity(1 << 16, file), output, &options)
        }
    }
    .map(drop)
}

fn hit(args: HitArgs) -> Result<(), CliError> {
    Kernel::try_active()?;
    let max_lookup_bytes = args.max_lookup_mib.saturating_mul(1 << 20);
    let options = HitOptions::default()
        .with_limits(CaseLimits::with_max_lookup_bytes(max_lookup_bytes))
        .with_flush_each_answer(io::stdout().is_terminal());
    let output = io::stdout().lock();
    match args.file.as_deref() {
        None => hit_cmd::run(io::stdin().lock(), output, &options),
        Some(path) if path == Path::new("-") => hit_cmd::run(io::stdin().lock(), output, &options),
        Some(path) => {
            let file = File::open(path).map_err(io_error(format!("cannot open {}", path.display())))?;
            hit_cmd::run(BufReader::with_capacity(1 << 16, file), output, &options)
        }
    }
    .map(drop)
}

fn features(args: &FeaturesArgs) -> Result<(), CliError> {
    let (report, kernel_error) = FeatureReport::detect();
    let mut out = io::stdout().lock();
    let written = if args.json { report.write_json(&mut out) } else { report.write_text(&mut out) };
    written.and_then(|()| out.flush()).map_err(io_error("writing the report"))?;
    kernel_error.map_or(Ok(()), |error| Err(error.into()))
}

fn bench(args: &BenchArgs) -> Result<(), CliError> {
    let options = BenchOptions::default()
        .with_sizes(args.small, args.large)
        .with_adapters(args.adapters.into())
        .with_measure(Duration::from_millis(args.measure_ms))
        .with_progress(bench_cmd::stderr_is_terminal());
    let report = bench_cmd::run(&options)?;
    let mut out = io::stdout().lock();
    let written = if args.json { report.write_json(&mut out) } else { report.write_table(&mut out) };
    written.and_then(|()| out.flush()).map_err(io_error("writing the report"))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let cli = Cli::try_parse_from(["prefetch-plan", "plan"]).unwrap();
        let Command::Plan(args) = cli.command else { panic!("not plan") };
        assert_eq!(
            (args.policy.as_str(), args.trim, args.max_lookup_mib, args.file),
            ("default", TrimArg::None, 1024, None)
        );
        let cli = Cli::try_parse_from(["prefetch-plan", "bench"]).unwrap();
        let Command::Bench(args) = cli.command else { panic!("not bench") };
        assert_eq!((args.small, args.large, args.adapters, args.measure_ms), (1024, 32 << 20, 3, 100));
    }

    #[test]
    fn bad_values_are_usage_errors() {
        for argv in [
            &["prefetch-plan", "plan", "--trim", "suffix"][..],
            &["prefetch-plan", "bench", "--adapters", "0"],
            &["prefetch-plan", "bench", "--small", "4MB"],
            &["prefetch-plan", "features", "--yaml"],
        ] {
            let error = Cli::try_parse_from(argv).unwrap_err();
            assert_eq!(error.exit_code(), 2, "{argv:?}");
        }
    }
}
