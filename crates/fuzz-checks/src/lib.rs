//! The checks behind bitplan's fuzz targets.
//!
//! Each module is one target: an input type (built by [`arbitrary`] from the
//! fuzzer's bytes, or the raw bytes themselves) and a `check` function that
//! panics on any finding. The fuzz targets in `fuzz/fuzz_targets/` (a
//! cargo-fuzz workspace of their own) are one line each; this crate's
//! `tests/replay.rs` runs the same functions over every committed seed and
//! regression input under plain `cargo test`, in the main workspace's tests,
//! so a crash once found stays a unit test. See `docs/FUZZING.md`.
//!
//! - [`bitmap_ops`]: random operation sequences on a [`Bitmap`] and on a
//!   `Vec<bool>` model, every word-level operation also run directly on
//!   every available kernel.
//! - [`plan_invariants`]: random lookups planned by every registered policy.
//! - [`from_untrusted`]: bytes, bit strings and JSON cases fed to every
//!   parser.
//! - [`prefix_hit`]: the hybrid-model fold, unfold and grid plan against
//!   the scalar references of [`hybrid_model`], and the bit moves of
//!   `bitmap_core::layout` ([`bit_moves`]).
//! - [`tier_ops`]: operation sequences on tier-state's `Tier` against its
//!   plain model of LMCache's `L1Manager`.
//! - [`policy_ops`]: event sequences on tier-state's eviction policies
//!   against their plain models of LMCache's Python.
//!
//! [`Bitmap`]: bitmap_core::Bitmap

#![forbid(unsafe_code)]

use arbitrary::{Arbitrary, Unstructured};

pub mod bit_moves;
pub mod bitmap_ops;
pub mod fill;
pub mod from_untrusted;
pub mod hybrid_model;
pub mod plan_invariants;
pub mod policy_ops;
pub mod prefix_hit;
pub mod tier_ops;

/// The fuzz targets, by name: what `cargo fuzz run NAME` runs.
pub const TARGETS: [&str; 6] =
    ["bitmap_ops", "plan_invariants", "from_untrusted", "prefix_hit", "tier_ops", "policy_ops"];

/// Runs one input of the target `name` exactly as its fuzz target does: the
/// replay test's entry point.
///
/// # Panics
///
/// On any finding, as the fuzz target would; and for an unknown target name.
pub fn replay(name: &str, data: &[u8]) {
    match name {
        "bitmap_ops" => decode(data).map_or((), bitmap_ops::check),
        "plan_invariants" => decode(data).map_or((), plan_invariants::check),
        "from_untrusted" => from_untrusted::check(data),
        "prefix_hit" => decode(data).map_or((), prefix_hit::check),
        "tier_ops" => decode(data).map_or((), tier_ops::check),
        "policy_ops" => decode(data).map_or((), policy_ops::check),
        _ => panic!("unknown fuzz target {name:?}; the targets are {TARGETS:?}"),
    }
}

/// Decodes a structured input as `libfuzzer_sys::fuzz_target!` does for a
/// typed target: inputs shorter than the type's minimum size are skipped,
/// then the whole buffer goes to `arbitrary_take_rest`. An input that does
/// not decode is skipped (the fuzzer rejects it too).
fn decode<'a, T: Arbitrary<'a>>(data: &'a [u8]) -> Option<T> {
    if data.len() < T::size_hint(0).0 {
        return None;
    }
    T::arbitrary_take_rest(Unstructured::new(data)).ok()
}
