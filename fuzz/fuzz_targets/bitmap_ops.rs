//! Random operation sequences on a bitmap and a `Vec<bool>` model, every
//! word-level operation also run on every available kernel. See
//! `bitplan_fuzz::bitmap_ops` and docs/FUZZING.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: bitplan_fuzz::bitmap_ops::Input| bitplan_fuzz::bitmap_ops::check(input));
