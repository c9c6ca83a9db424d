//! The replay's speed with each eviction policy, strict and under LMCache's
//! trigger, against today's strict LRU replay in the same run: each round
//! replays every configuration once (the order rotating from round to
//! round) and takes each one's ratio to that round's strict LRU, so a
//! shared machine whose load changes moves them all alike. Prints the
//! median block references a second and the median ratio.
//!
//! ```text
//! $ cargo run --release -p kv-replay --example eviction_speed -- TRACE [ROUNDS]
//! ```
//!
//! Tiers: L1 of 5,000 blocks, adapters of 20,000 blocks and unbounded (the
//! replay's speed benchmark since issue #20), `default`; under the trigger
//! L1 and the bounded adapter at LMCache's defaults (0.8, 0.2), or L1
//! alone (the adapters at strict capacity, with the same policy).

#![forbid(unsafe_code)]

use std::fs::File;
use std::io::BufReader;

use kv_replay::{Eviction, ReplayConfig, Replayer, Trace, TraceOptions, Trigger};

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: eviction_speed TRACE [ROUNDS]")?;
    let rounds: usize = args.next().map_or(Ok(15), |rounds| rounds.parse())?;
    let trace = Trace::parse(BufReader::new(File::open(path)?), &TraceOptions::default())?;
    let mut configs = Vec::new();
    let trigger = Some(Trigger::LMCACHE_DEFAULT);
    for (l1_trigger, l2_trigger) in [(None, None), (trigger, trigger), (trigger, None)] {
        for eviction in [Eviction::Lru, Eviction::S3Fifo, Eviction::Arc] {
            let mut config = ReplayConfig::new(Some(5_000), &[Some(20_000), None]);
            config.eviction = eviction;
            config.l1_trigger = l1_trigger;
            config.adapters[0].trigger = l2_trigger;
            configs.push(config);
        }
    }
    let (distinct, longest) = (trace.distinct_keys(), trace.max_keys());
    let mut rates = vec![Vec::new(); configs.len()];
    let mut ratios = vec![Vec::new(); configs.len()];
    for round in 0..rounds {
        let mut round_rates = vec![0.0; configs.len()];
        for step in 0..configs.len() {
            let index = (round + step) % configs.len();
            let report = Replayer::with_reserve(&configs[index], distinct, longest)?.replay(&trace)?;
            round_rates[index] = report.block_refs_per_second;
        }
        for (index, &rate) in round_rates.iter().enumerate() {
            rates[index].push(rate);
            ratios[index].push(rate / round_rates[0]);
        }
    }
    println!("{} block references, {rounds} rounds; medians", trace.block_refs());
    for ((config, rates), ratios) in configs.iter().zip(rates).zip(ratios) {
        let mode = match (config.l1_trigger, config.adapters[0].trigger) {
            (None, _) => "strict",
            (Some(_), Some(_)) => "trigger L1+L2",
            (Some(_), None) => "trigger L1",
        };
        let (rate, ratio) = (median(rates), median(ratios));
        println!(
            "{:>6} {mode:>16} {:>7.1} M block refs/s {ratio:>6.2}x strict LRU",
            config.eviction.name(),
            rate / 1e6
        );
    }
    Ok(())
}
