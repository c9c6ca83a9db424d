//! Operation sequences on tier-state's `Tier` against its plain model. See
//! `bitplan_fuzz::tier_ops` and docs/FUZZING.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: bitplan_fuzz::tier_ops::Input| bitplan_fuzz::tier_ops::check(input));
