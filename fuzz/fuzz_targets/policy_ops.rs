//! Event sequences on tier-state's eviction policies against their plain
//! models of LMCache's Python. See `fuzz_checks::policy_ops` and
//! docs/FUZZING.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: fuzz_checks::policy_ops::Input| fuzz_checks::policy_ops::check(input));
