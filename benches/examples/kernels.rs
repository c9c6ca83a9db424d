//! Prints the kernels this CPU can run, the one the dispatched functions
//! use, and the size of the inline cut-over, one `key: value` per line, for
//! `scripts/bench-report`'s machine description.
//!
//! ```text
//! $ cargo run --release -p bitplan-benches --example kernels
//! available: scalar portable avx2
//! best: avx2
//! active: avx2
//! small_words: 4
//! small_count_words: 2
//! ```

#![forbid(unsafe_code)]

use bitmap_core::kernel::{KERNEL_ENV_VAR, Kernel, SMALL_COUNT_WORDS, SMALL_WORDS};

fn main() {
    let available: Vec<&str> = Kernel::available().into_iter().map(Kernel::name).collect();
    println!("available: {}", available.join(" "));
    println!("best: {}", Kernel::best().name());
    match Kernel::try_active() {
        Ok(kernel) => println!("active: {}", kernel.name()),
        Err(error) => println!("active: none ({error})"),
    }
    if let Ok(value) = std::env::var(KERNEL_ENV_VAR) {
        println!("forced_by: {KERNEL_ENV_VAR}={value}");
    }
    println!("small_words: {SMALL_WORDS}");
    println!("small_count_words: {SMALL_COUNT_WORDS}");
}
