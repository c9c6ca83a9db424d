//! Random lookups planned by every registered policy: a clear error or a
//! sound plan, first-wins exact for `default`/`retain`, the same sequential
//! and parallel. See `bitplan_fuzz::plan_invariants` and docs/FUZZING.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: bitplan_fuzz::plan_invariants::Input| bitplan_fuzz::plan_invariants::check(input));
