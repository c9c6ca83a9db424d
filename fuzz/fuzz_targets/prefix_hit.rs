//! The hybrid-model fold, unfold (flat, ranked, grouped) and grid plan
//! against scalar references. See `bitplan_fuzz::prefix_hit` and
//! docs/FUZZING.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: bitplan_fuzz::prefix_hit::Input| bitplan_fuzz::prefix_hit::check(input));
