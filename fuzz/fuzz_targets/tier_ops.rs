//! Operation sequences on tier-state's `Tier` against its plain model. See
//! `fuzz_checks::tier_ops` and docs/FUZZING.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: fuzz_checks::tier_ops::Input| fuzz_checks::tier_ops::check(input));
