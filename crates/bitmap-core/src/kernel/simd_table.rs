//! Builds a kernel's function table from a [`Vector`](super::vector::Vector)
//! type: one `#[target_feature]` wrapper per operation around the generic
//! loop, so that each instruction set is a `Vector` impl and one macro call.
//!
//! A kernel whose instruction set changes the algorithm of some operations
//! (AVX-512: `vpopcntq` makes Harley–Seal pointless, `vpternlogq` fuses three
//! inputs, `k` masks replace scalar tails) names its own functions for those
//! entries and takes the generic wrapper for every other one, so an
//! operation added to the table reaches every kernel without touching it.

/// `simd_kernel_table!(VectorType, "feature,list")` defines `pub(crate) static
/// FNS: KernelFns` whose functions run the generic loops over `VectorType`,
/// compiled with the listed target features. Without a feature list the
/// wrappers are plain functions (for the portable kernel).
///
/// `simd_kernel_table!(VectorType, "feature,list", { entry: function, … })`
/// does the same but puts `function` in each listed `entry`: the kernel's
/// own function, or another kernel's (`super::avx2::GENERIC_FNS.entry`,
/// where that one is measured faster on the CPUs that run this kernel).
/// Either way it has the entry's signature and must require no CPU
/// features beyond the listed ones. The other entries stay generic.
/// The generic wrappers then live in a submodule, `generic_table`, so the
/// kernel's own functions may have the operations' names.
macro_rules! simd_kernel_table {
    ($vector:ty, $feature:literal, { $($entry:ident: $function:expr),* $(,)? }) => {
        /// The generic loops over this kernel's vector type, for the
        /// operations the kernel has no function of its own for.
        mod generic_table {
            #[allow(unused_imports)] // which of them the wrappers need varies
            use super::*;
            $crate::kernel::simd_table::simd_kernel_table!(@generic $vector, $feature);
        }

        /// This kernel's function table: its own functions where it has
        /// them, the generic loops elsewhere. Its functions require the CPU
        /// features of the kernel: reach it only through a
        /// [`Kernel`]($crate::kernel::Kernel), whose constructor checks them.
        // A kernel may have its own function for every entry there is; the
        // update still supplies the generic loop for any entry added later.
        #[allow(clippy::needless_update)]
        pub(crate) static FNS: $crate::kernel::KernelFns =
            $crate::kernel::KernelFns { $($entry: $function,)* ..generic_table::GENERIC_FNS };
    };
    ($vector:ty $(, $feature:literal)?) => {
        $crate::kernel::simd_table::simd_kernel_table!(@generic $vector $(, $feature)?);

        /// This kernel's function table. Its functions require the CPU
        /// features of the kernel: reach it only through a
        /// [`Kernel`]($crate::kernel::Kernel), whose constructor checks them.
        pub(crate) static FNS: KernelFns = GENERIC_FNS;
    };
    (@generic $vector:ty $(, $feature:literal)?) => {
        use $crate::kernel::generic::{self, And, AndNot, Inverted, Or, Pair, Words, Xor};
        use $crate::kernel::KernelFns;
        use core::mem::MaybeUninit;

        /// The generic loop of every operation over this vector type.
        pub(super) const GENERIC_FNS: KernelFns = KernelFns {
            popcount,
            and_popcount,
            or_popcount,
            xor_popcount,
            and_not_popcount,
            and_assign,
            or_assign,
            xor_assign,
            and_not_assign,
            not_assign,
            and_uninit,
            or_uninit,
            xor_uninit,
            and_not_uninit,
            union_many,
            first_wins_uninit,
            class_counts,
            split_by_tables_uninit,
            position_nonzero,
            position_not_all_ones,
            gather_and,
            scatter_or,
            deposit,
            extract,
            fill_periodic,
            and_shifted,
            transpose64,
            split_rows,
            join_rows,
        };

        $(#[target_feature(enable = $feature)])?
        unsafe fn popcount(words: &[u64]) -> u64 {
            // SAFETY: `Words` covers `words.len()` words; the caller
            // guarantees the CPU features this function is compiled for.
            unsafe { generic::popcount::<$vector, _>(Words::new(words), words.len()) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn and_popcount(a: &[u64], b: &[u64]) -> u64 {
            // SAFETY: the pair is read over the shorter length; the caller
            // guarantees the CPU features.
            unsafe { generic::popcount::<$vector, _>(Pair::<And>::new(a, b), a.len().min(b.len())) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn or_popcount(a: &[u64], b: &[u64]) -> u64 {
            // SAFETY: as `and_popcount`.
            unsafe { generic::popcount::<$vector, _>(Pair::<Or>::new(a, b), a.len().min(b.len())) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn xor_popcount(a: &[u64], b: &[u64]) -> u64 {
            // SAFETY: as `and_popcount`.
            unsafe { generic::popcount::<$vector, _>(Pair::<Xor>::new(a, b), a.len().min(b.len())) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn and_not_popcount(a: &[u64], b: &[u64]) -> u64 {
            // SAFETY: as `and_popcount`.
            unsafe { generic::popcount::<$vector, _>(Pair::<AndNot>::new(a, b), a.len().min(b.len())) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn and_assign(dst: &mut [u64], src: &[u64]) {
            // SAFETY: the caller guarantees the CPU features.
            unsafe { generic::assign::<$vector, And>(dst, src) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn or_assign(dst: &mut [u64], src: &[u64]) {
            // SAFETY: the caller guarantees the CPU features.
            unsafe { generic::assign::<$vector, Or>(dst, src) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn xor_assign(dst: &mut [u64], src: &[u64]) {
            // SAFETY: the caller guarantees the CPU features.
            unsafe { generic::assign::<$vector, Xor>(dst, src) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn and_not_assign(dst: &mut [u64], src: &[u64]) {
            // SAFETY: the caller guarantees the CPU features.
            unsafe { generic::assign::<$vector, AndNot>(dst, src) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn not_assign(dst: &mut [u64]) {
            // SAFETY: the caller guarantees the CPU features.
            unsafe { generic::not::<$vector>(dst) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn and_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]) {
            // SAFETY: the caller guarantees the CPU features.
            unsafe { generic::combine::<$vector, And>(a, b, out) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn or_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]) {
            // SAFETY: the caller guarantees the CPU features.
            unsafe { generic::combine::<$vector, Or>(a, b, out) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn xor_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]) {
            // SAFETY: the caller guarantees the CPU features.
            unsafe { generic::combine::<$vector, Xor>(a, b, out) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn and_not_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]) {
            // SAFETY: the caller guarantees the CPU features.
            unsafe { generic::combine::<$vector, AndNot>(a, b, out) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn union_many(dst: &mut [u64], srcs: &[&[u64]]) {
            // SAFETY: the caller guarantees the CPU features.
            unsafe { generic::union_many::<$vector>(dst, srcs) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn first_wins_uninit(inputs: &[&[u64]], outputs: &mut [&mut [MaybeUninit<u64>]]) {
            // SAFETY: the caller guarantees the CPU features.
            unsafe { generic::first_wins::<$vector>(inputs, outputs) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn class_counts(inputs: &[&[u64]], counts: &mut [u64]) {
            // SAFETY: the caller guarantees the CPU features.
            unsafe { generic::class_counts::<$vector>(inputs, counts) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn split_by_tables_uninit(inputs: &[&[u64]], tables: &[u8], outputs: &mut [&mut [MaybeUninit<u64>]]) {
            // SAFETY: the caller guarantees the CPU features.
            unsafe { generic::split_by_tables::<$vector>(inputs, tables, outputs) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn position_nonzero(words: &[u64]) -> Option<usize> {
            // SAFETY: `Words` covers `words.len()` words; the caller
            // guarantees the CPU features.
            unsafe { generic::position_nonzero::<$vector, _>(Words::new(words), words.len()) }
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn position_not_all_ones(words: &[u64]) -> Option<usize> {
            // SAFETY: `Inverted` covers `words.len()` words; the caller
            // guarantees the CPU features.
            unsafe { generic::position_nonzero::<$vector, _>(Inverted::new(words), words.len()) }
        }

        // The bit moves are word-level loops (`kernel::bits`) over BMI2's
        // `pext`/`pdep` where this CPU runs them fast, else bit tricks; the
        // shifted AND and the transpose are compiled here for the kernel's
        // features, so the compiler may vectorise them.

        $(#[target_feature(enable = $feature)])?
        unsafe fn gather_and(src: &[u64], stride: usize, offset: usize, width: usize, dst: &mut [u64]) {
            $crate::kernel::bits_best::gather_and_best(src, stride, offset, width, dst)
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn scatter_or(src: &[u64], stride: usize, offset: usize, dst: &mut [u64]) {
            $crate::kernel::bits_best::scatter_or_best(src, stride, offset, dst)
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn deposit(src: &[u64], src_start: usize, mask: &[u64], dst: &mut [u64]) -> usize {
            $crate::kernel::bits_best::deposit_best(src, src_start, mask, dst)
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn extract(src: &[u64], mask: &[u64], dst: &mut [u64], dst_start: usize) -> usize {
            $crate::kernel::bits_best::extract_best(src, mask, dst, dst_start)
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn fill_periodic(dst: &mut [u64], start: usize, end: usize, pattern: &[u64], period: usize) {
            $crate::kernel::bits::fill_periodic(dst, start, end, pattern, period)
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn and_shifted(words: &mut [u64], shift: usize) {
            $crate::kernel::bits::and_shifted(words, shift)
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn transpose64(words: &mut [u64]) {
            $crate::kernel::bits::transpose64(words)
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn split_rows(src: &[u64], rows: &mut [&mut [u64]]) {
            $crate::kernel::bits_best::split_rows_best(src, rows)
        }

        $(#[target_feature(enable = $feature)])?
        unsafe fn join_rows(rows: &[&[u64]], dst: &mut [u64]) {
            $crate::kernel::bits_best::join_rows_best(rows, dst)
        }
    };
}

pub(crate) use simd_kernel_table;
