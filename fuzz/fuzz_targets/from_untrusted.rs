//! Untrusted bytes, bit strings and JSON cases fed to every parser: an
//! error or a valid result, never a panic. See
//! `fuzz_checks::from_untrusted` and docs/FUZZING.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_checks::from_untrusted::check(data));
