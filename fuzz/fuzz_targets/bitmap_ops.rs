//! Random operation sequences on a bitmap and a `Vec<bool>` model, every
//! word-level operation also run on every available kernel. See
//! `fuzz_checks::bitmap_ops` and docs/FUZZING.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: fuzz_checks::bitmap_ops::Input| fuzz_checks::bitmap_ops::check(input));
