//! Helpers for the unit tests of more than one module.

/// Replaces the default panic hook, under Miri and once per test process,
/// with one that prints the same location and message and nothing else.
/// Tests that panic on purpose call it first.
///
/// Under Miri the default hook cost about 5 s a panic in this crate's test
/// binary (3 caught panics: 16.2 s with it, 0.56 s with this one, 2026-12-04,
/// whatever `RUST_BACKTRACE` said), and some 20 tests panic on purpose in
/// each Miri job. The message still reaches the test's captured output, so
/// an assertion that fails later in the process reads as before.
pub(crate) fn cheap_panic_hook_under_miri() {
    #[cfg(miri)]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| std::panic::set_hook(Box::new(|info| eprintln!("{info}"))));
    }
}
