//! x86-64 kernels. Each instruction set has a module here; an AVX-512 kernel
//! (`avx512`, with `vpopcntq`) would be one more `Vector` impl and one more
//! `simd_kernel_table!` call beside `avx2`.

pub(crate) mod avx2;
pub(crate) mod bmi2;
