//! The methods of [`Kernel`]: each operation called directly on one
//! kernel's table after its argument check (the methods generated from the
//! list in `operations.rs`), and `first_wins` and `split_by_tables` over
//! initialised words.

use core::mem::MaybeUninit;

use super::checks::{check_first_wins, check_pattern, check_positive, check_rows, check_same_len, check_union};
use super::classes::{check_class_counts, check_split_by_tables};
use super::dispatch::as_uninit_outputs;
// Named by the operations' docs, which link the free functions.
#[cfg(doc)]
use super::classes::MAX_CLASS_INPUTS;
#[cfg(doc)]
use super::dispatch::{and_assign, and_uninit, first_wins, split_by_tables, split_by_tables_uninit, split_rows};
use super::kind::Kernel;
use super::operations::for_each_kernel_op;

impl Kernel {
    /// [`first_wins_uninit`](Kernel::first_wins_uninit) over initialised
    /// words: for each word, in input order, `outputs[a] = inputs[a] &
    /// !claimed; claimed |= inputs[a]`.
    ///
    /// Panics unless there are as many outputs as inputs, all of one length.
    ///
    /// ```
    /// use bitmap_core::kernel::Kernel;
    ///
    /// let (a, b) = ([0b0110_u64], [0b1100_u64]);
    /// let (mut out_a, mut out_b) = ([0], [0]);
    /// Kernel::scalar().first_wins(&[&a, &b], &mut [&mut out_a, &mut out_b]);
    /// assert_eq!((out_a, out_b), ([0b0110], [0b1000]));
    /// ```
    #[inline]
    #[track_caller]
    pub fn first_wins(self, inputs: &[&[u64]], outputs: &mut [&mut [u64]]) {
        self.first_wins_uninit(inputs, as_uninit_outputs(outputs));
    }
}

impl Kernel {
    /// [`split_by_tables_uninit`](Kernel::split_by_tables_uninit) over
    /// initialised words: output `a` keeps the bits of input `a` whose class
    /// among the other inputs has its entry set in `tables[a]`.
    ///
    /// Panics as [`split_by_tables_uninit`] does.
    ///
    /// ```
    /// use bitmap_core::kernel::Kernel;
    ///
    /// let (a, b) = ([0b0011_u64], [0b0101_u64]);
    /// let (mut to_a, mut to_b) = ([0], [0]);
    /// Kernel::scalar().split_by_tables(&[&a, &b], &[0b11, 0b01], &mut [&mut to_a, &mut to_b]);
    /// assert_eq!((to_a, to_b), ([0b0011], [0b0100]));
    /// ```
    #[inline]
    #[track_caller]
    pub fn split_by_tables(self, inputs: &[&[u64]], tables: &[u8], outputs: &mut [&mut [u64]]) {
        self.split_by_tables_uninit(inputs, tables, as_uninit_outputs(outputs));
    }
}

/// Generates the safe method of every operation on [`Kernel`].
macro_rules! kernel_methods {
    ($(
        $(#[$doc:meta])*
        fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;
        check: $check:block;
        words: $words:expr;
        $(small: $small:ident;)?
        $(first: $first:block;)?
    )*) => {
        impl Kernel {
            $(
                $(#[$doc])*
                #[inline]
                #[track_caller]
                pub fn $name(self, $($arg: $ty),*) $(-> $ret)? {
                    $check;
                    // SAFETY: a `Kernel` is only built from `KernelKind::table`,
                    // which checked the CPU features its functions need.
                    unsafe { (self.fns.$name)($($arg),*) }
                }
            )*
        }
    };
}

for_each_kernel_op!(kernel_methods);
