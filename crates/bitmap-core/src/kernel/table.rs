//! [`KernelFns`], the function table of one kernel: a field per operation
//! (generated from the list in `operations.rs`). Each kernel module defines
//! its table (`scalar.rs`, `portable.rs`, and the SIMD kernels through
//! `simd_table.rs`); only [`KernelKind::table`](super::KernelKind::table)
//! hands one out.

use core::mem::MaybeUninit;

use super::operations::for_each_kernel_op;

/// Generates [`KernelFns`] from the list of operations.
macro_rules! kernel_fns {
    ($(
        $(#[$doc:meta])*
        fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;
        check: $check:block;
        words: $words:expr;
        $(small: $small:ident;)?
        $(first: $first:block;)?
    )*) => {
        /// One kernel's implementation of every operation. Its functions may
        /// require CPU features: only [`KernelKind::table`](super::KernelKind::table) hands one out,
        /// after checking them.
        pub(crate) struct KernelFns {
            $(pub(crate) $name: unsafe fn($($ty),*) $(-> $ret)?,)*
        }
    };
}

for_each_kernel_op!(kernel_fns);
