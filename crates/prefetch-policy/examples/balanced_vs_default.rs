//! The largest weighted load (keys on an adapter ÷ its weight: the time the
//! slowest adapter needs, if weights are bandwidths) under `default` and
//! under `balanced`, for three adapters that each hold every key, as
//! LMCache's default store policy leaves them. Prints the Markdown table in
//! `docs/PERFORMANCE.md`.
//!
//! ```sh
//! cargo run --release -p prefetch-policy --example balanced_vs_default
//! ```

use bitmap_core::Bitmap;
use prefetch_policy::{AdapterDescriptor, BalancedPolicy, DefaultPolicy, Keys, LookupResults, PrefetchPolicy};

/// Keys per request: the size the benchmarks time.
const KEYS: usize = 262_144;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let lookup: LookupResults = (0..3).map(|adapter| (adapter, Bitmap::with_prefix(KEYS, KEYS))).collect();
    println!(
        "| weights (adapters 0:1:2) | keys per adapter, `default` | largest weighted load, `default` | keys per adapter, `balanced` | largest weighted load, `balanced` | ideal prefetch time, `default` ÷ `balanced` |"
    );
    println!("|---|---|---:|---|---:|---:|");
    for weights in [[1.0, 1.0, 1.0], [2.0, 1.0, 1.0], [1.0, 1.0, 2.0]] {
        let adapters = weights
            .iter()
            .enumerate()
            .map(|(index, &weight)| AdapterDescriptor::new(index, format!("replica-{index}")).with_weight(weight))
            .collect::<Result<Vec<_>, _>>()?;
        let (default_keys, default_load) = loads(&DefaultPolicy::new(), &lookup, &adapters)?;
        let (balanced_keys, balanced_load) = loads(&BalancedPolicy::new(), &lookup, &adapters)?;
        println!(
            "| {} | {} | {default_load:.0} | {} | {balanced_load:.0} | {:.2}× |",
            weights.map(|w| w.to_string()).join(":"),
            default_keys,
            balanced_keys,
            default_load / balanced_load,
        );
    }
    Ok(())
}

/// The keys each adapter loads (as `a / b / c`) and the largest weighted
/// load of the policy's plan.
fn loads(
    policy: &dyn PrefetchPolicy,
    lookup: &LookupResults,
    adapters: &[AdapterDescriptor],
) -> Result<(String, f64), Box<dyn std::error::Error>> {
    let plan = policy.select_load_plan(Keys::count(KEYS), lookup, adapters)?;
    plan.validate_with(lookup, adapters, policy.contract())?;
    let keys: Vec<usize> = adapters.iter().map(|a| plan.get(a.index).map_or(0, Bitmap::popcount)).collect();
    let largest = keys.iter().zip(adapters).map(|(&k, a)| k as f64 / a.weight.get()).fold(0.0, f64::max);
    Ok((keys.iter().map(usize::to_string).collect::<Vec<_>>().join(" / "), largest))
}
