//! Every SIMD loop, written once over [`Vector`](crate::kernel::vector::Vector).
//!
//! The functions here are `#[inline(always)]` and `unsafe`: each kernel module
//! instantiates them inside a `#[target_feature]` wrapper, so the vector type's
//! intrinsics inline into code compiled for that feature.
//!
//! # Memory safety
//!
//! No function here trusts its callers about lengths: each one works over the
//! shortest of the slices it is given, so the only precondition of every
//! function is the one of [`Vector`](crate::kernel::vector::Vector) itself (the CPU supports `V`'s feature).
//! The safe entry points in [`super::Kernel`] reject mismatched lengths before
//! they get here; that is a matter of meaning, not of memory safety.
//!
//! One file per kind of loop: `sources.rs` the operands a loop reads (a
//! slice, its complement, a binary operation over two), `scans.rs` the
//! counts and searches, `elementwise.rs` the operations word for word into
//! one output, `many.rs` the operations over many inputs.

mod elementwise;
mod many;
mod scans;
mod sources;

pub(crate) use elementwise::{assign, combine, not};
pub(crate) use many::{class_counts, first_wins, split_by_tables, union_many};
pub(crate) use scans::{popcount, position_nonzero};
pub(crate) use sources::{And, AndNot, Inverted, Or, Pair, Words, Xor};
// Only AVX-512's fused counts name the operation trait outside this folder;
// elsewhere the re-export would be an unused import (a warning on aarch64).
#[cfg(target_arch = "x86_64")]
pub(crate) use sources::BinaryOp;
