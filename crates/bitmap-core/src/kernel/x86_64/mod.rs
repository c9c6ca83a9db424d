//! x86-64 kernels. Each instruction set has a module here: a `Vector` impl
//! and a `simd_kernel_table!` call, with the kernel's own functions for the
//! operations its instructions do differently (`avx512`).

pub(crate) mod avx2;
pub(crate) mod avx2_bits;
pub(crate) mod avx512;
pub(crate) mod bmi2;
pub(crate) mod gfni;
