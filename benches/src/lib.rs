//! Shared helpers for bitplan's criterion benchmarks (`benches/benches/*.rs`).
//!
//! Every benchmark is named `op/implementation/size` (criterion's
//! `group/function/value`), for example `popcount/avx2/128KiB`, so that one
//! group holds our kernels and their baselines at one size, measured in the
//! same run. `scripts/bench-report` reads those names back from
//! `target/criterion` to build `docs/PERFORMANCE.md`.
//!
//! This crate provides what the benchmark files share:
//!
//! - [`sizes`]: the bitmap sizes (L1 to DRAM) and criterion's settings for
//!   each;
//! - [`data`]: deterministic pseudo-random inputs of a given density and
//!   adapter lookups for the plan;
//! - [`reference`](mod@reference): plain, obviously correct implementations every benchmark
//!   is checked against before it is timed, and the `copy` baseline;
//! - [`peers`]: the same inputs as `fixedbitset`, `bitvec` and `roaring`
//!   values, and the seed's plan algorithm written literally over
//!   `fixedbitset`;
//! - [`harness`]: registering a benchmark whose inputs are built (and its
//!   result checked) only if criterion's filter selects it.

#![forbid(unsafe_code)]

// `fixedbitset` stores `usize` blocks and the inputs here are `u64` words;
// the conversions in `peers` assume the two are the same.
#[cfg(not(target_pointer_width = "64"))]
compile_error!("bitplan-benches assumes a 64-bit `usize` (fixedbitset's block type)");

pub mod data;
pub mod harness;
pub mod peers;
pub mod reference;
pub mod sizes;
