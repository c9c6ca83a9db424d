//! The hybrid-model fold, unfold (flat, ranked, grouped) and grid plan
//! against scalar references. See `fuzz_checks::prefix_hit` and
//! docs/FUZZING.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: fuzz_checks::prefix_hit::Input| fuzz_checks::prefix_hit::check(input));
