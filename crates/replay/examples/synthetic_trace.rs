//! Writes a synthetic Mooncake-shaped trace to standard output, for trying
//! `prefetch-plan replay` and measuring it without the real traces:
//!
//! ```text
//! cargo run --release -p kv-replay --example synthetic_trace -- 12000 24 > trace.jsonl
//! ```
//!
//! Arguments: requests (default 12,000), mean blocks a request (24), seed (1).

use std::io::{self, BufWriter, Write};

use kv_replay::synthetic::{SyntheticOptions, generate, write_mooncake};

fn main() -> io::Result<()> {
    let args: Vec<u64> = std::env::args().skip(1).map(|arg| arg.parse().expect("a number")).collect();
    let defaults = [12_000, 24, 1];
    let arg = |i: usize| args.get(i).copied().unwrap_or(defaults[i]);
    let options = SyntheticOptions::default().with_size(arg(0) as usize, arg(1) as usize).with_seed(arg(2));
    let mut out = BufWriter::new(io::stdout().lock());
    write_mooncake(&generate(&options), &mut out)?;
    out.flush()
}
