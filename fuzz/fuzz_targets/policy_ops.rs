//! Event sequences on tier-state's eviction policies against their plain
//! models of LMCache's Python. See `bitplan_fuzz::policy_ops` and
//! docs/FUZZING.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: bitplan_fuzz::policy_ops::Input| bitplan_fuzz::policy_ops::check(input));
