//! Random lookups planned by every registered policy: a clear error or a
//! sound plan, first-wins exact for `default`/`retain`, the same sequential
//! and parallel. See `fuzz_checks::plan_invariants` and docs/FUZZING.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: fuzz_checks::plan_invariants::Input| fuzz_checks::plan_invariants::check(input));
