//! Word-level kernels and their run-time dispatch.
//!
//! # Kernels
//!
//! | kernel | where | how |
//! |---|---|---|
//! | [`scalar`](KernelKind::Scalar) | everywhere | plain Rust loops, the reference |
//! | [`portable`](KernelKind::Portable) | everywhere | `wide::u64x4`, whose backend is chosen at compile time |
//! | [`avx2`](KernelKind::Avx2) | x86-64 with AVX2 | `core::arch`, Muła/Harley–Seal popcount |
//! | [`avx512`](KernelKind::Avx512) | x86-64 with AVX512F, BW, VL and VPOPCNTDQ | `core::arch`, `vpopcntq` counts, `vpternlogq` three-input logic, `k`-masked tails; with VBMI and GFNI (checked separately), the row split and join of 64 and 8 rows in registers; the `avx2` functions for the memory-bound operations |
//! | [`neon`](KernelKind::Neon) | aarch64 | `core::arch`, `cnt` popcount |
//!
//! Where AVX-512 gains and where it does not (measured on Zen 4, see
//! `docs/PERFORMANCE.md`): the counts (`popcount`, the fused
//! `and_popcount` and friends, `class_counts`) are compute-bound in the
//! AVX2 kernel, whose `vpshufb` popcount needs a Harley–Seal tree to keep
//! up with memory; `vpopcntq` counts a lane in one instruction, so these
//! gain most while the data is in cache (popcount 2.8–3.0× at 8 KiB,
//! `class_counts` of 3 inputs 2.8–3.6× at 32 KiB). `split_by_tables` gains 0–14% from
//! its one-instruction `vpternlogq` selects, `first_wins` 0–4%. The
//! in-place operations, `union_many`, the searches and the bit moves do
//! one or two instructions per word loaded (and stored), so a 512-bit
//! register saves only instructions, and Zen 4 runs each 512-bit
//! operation as two 256-bit halves: there the 512-bit loops timed up to
//! 11% *slower* than AVX2 at some sizes (the searches: faster at 8–32 KiB,
//! slower on short inputs), so the `avx512` kernel's table takes the AVX2
//! functions for those entries (a per-operation choice; `Kernel::best`
//! still picks `avx512`, which is never the slower kernel that way). Some Intel parts lower their clock
//! while 512-bit instructions run; that was not measured here.
//!
//! A [`Kernel`] value can only be obtained from a constructor that checked
//! the CPU, so holding one proves its functions are safe to call: every
//! method on it is safe. [`Kernel::available`] lists those this CPU can run,
//! so a benchmark can time each of them in one process.
//!
//! # Dispatch
//!
//! The free functions of this module ([`popcount`], [`or_assign`],
//! [`first_wins`], …) run on the *active* kernel. Each keeps its own cached
//! function pointer, which starts out pointing at a detection routine: the
//! first call picks the kernel (once per process, see [`Kernel::active`]),
//! stores the chosen function, and every later call costs one relaxed load
//! and one indirect call. Inputs of at most [`SMALL_WORDS`] words
//! ([`SMALL_COUNT_WORDS`] for the counts) skip the indirect call and run
//! the scalar loop inline, because at that size the call costs more than
//! the SIMD saves.
//!
//! The active kernel is the fastest available one (AVX-512, else AVX2, else
//! NEON, else portable), unless the environment variable
//! `BITMAP_CORE_KERNEL` names another (`scalar`, `portable`, `avx2`,
//! `avx512`, `neon` or `auto`). Naming an
//! unknown or unavailable kernel is an error, reported by
//! [`Kernel::try_active`]; code that goes on to use the bitmap anyway panics
//! with that message rather than run an instruction the CPU lacks.
//!
//! ```
//! use bitmap_core::kernel::{self, Kernel, KernelKind};
//!
//! // Every kernel this CPU can run, each callable directly:
//! let words = vec![0b1011_u64; 1000];
//! for k in Kernel::available() {
//!     assert_eq!(k.popcount(&words), 3000, "kernel {k}");
//! }
//! // The scalar and portable kernels exist everywhere.
//! assert!(Kernel::new(KernelKind::Portable).is_ok());
//! // The dispatched form uses the active kernel.
//! assert_eq!(kernel::popcount(&words), 3000);
//! ```

mod bits;
mod bits_best;
mod checks;
mod classes;
mod dispatch;
mod generic;
mod kind;
mod methods;
mod operations;
pub(crate) mod portable;
pub(crate) mod scalar;
mod simd_table;
mod spare_capacity;
mod table;
mod vector;

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(test)]
mod bit_tests;
#[cfg(test)]
mod class_tests;
#[cfg(test)]
pub(crate) mod tests;

pub use classes::MAX_CLASS_INPUTS;
// The dispatched free functions (one per operation of `operations.rs`, and
// `first_wins` and `split_by_tables`) and their small-input cut-overs.
pub use dispatch::*;
pub use kind::{KERNEL_ENV_VAR, Kernel, KernelError, KernelKind};
pub(crate) use spare_capacity::{
    Combine, append_ones, combine_overwrite, first_wins_overwrite, split_by_tables_append,
};
pub(crate) use table::KernelFns;
