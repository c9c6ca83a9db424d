//! The dispatched free functions: each operation on the active kernel
//! ([`Kernel::active`]), through its own cached function pointer (see the
//! module docs of `kernel`), with inputs of at most [`SMALL_WORDS`] words
//! ([`SMALL_COUNT_WORDS`] for the counts) run by the scalar loop inline.

use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicPtr, Ordering};

use super::checks::{check_first_wins, check_pattern, check_positive, check_rows, check_same_len, check_union};
use super::classes::{check_class_counts, check_split_by_tables};
// Named by the operations' docs.
#[cfg(doc)]
use super::classes::MAX_CLASS_INPUTS;
use super::kind::Kernel;
use super::operations::for_each_kernel_op;
use super::scalar;

/// Inputs of at most this many words run the scalar loop inline instead of
/// the dispatched kernel: below it, the indirect call and the SIMD set-up
/// cost more than they save (measured in `benches/`, see
/// `docs/PERFORMANCE.md`). The counts have their own, smaller cut-over,
/// [`SMALL_COUNT_WORDS`].
pub const SMALL_WORDS: usize = 4;

/// [`SMALL_WORDS`] for the counts ([`popcount`], [`and_popcount`],
/// [`or_popcount`], [`xor_popcount`], [`and_not_popcount`]): their inline
/// scalar loop is slower than the others', since a default x86-64 build
/// has no `popcnt` and `count_ones` becomes a dozen shifts and masks per
/// word, while the AVX2 and AVX-512 kernels count with `popcnt`,
/// `vpshufb` or `vpopcntq`. Measured interleaved on Zen 4 (2026-12-01):
/// at 3 and 4 words the inline loop took 1.1–1.8× the time of a call to
/// either kernel, at 2 words the same, at 1 word less.
pub const SMALL_COUNT_WORDS: usize = 2;

/// Converts a bit count from a kernel. A count never exceeds the bitmap's
/// length, which is a `usize`, so the conversion is lossless.
#[inline]
pub(crate) fn count(n: u64) -> usize {
    n as usize
}

/// Generates the dispatched free function of every operation, with its
/// cached function pointer.
macro_rules! dispatched_fns {
    (@small) => { SMALL_WORDS };
    (@small $small:ident) => { $small };
    (@small_name) => { "SMALL_WORDS" };
    (@small_name $small:ident) => { stringify!($small) };
    ($(
        $(#[$doc:meta])*
        fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;
        check: $check:block;
        words: $words:expr;
        $(small: $small:ident;)?
        $(first: $first:block;)?
    )*) => {
        $(
            $(#[$doc])*
            ///
            /// Runs on the active kernel ([`Kernel::active`]); inputs of at
            #[doc = concat!("most [`", dispatched_fns!(@small_name $($small)?), "`] words run the scalar loop inline.")]
            #[inline]
            #[track_caller]
            pub fn $name($($arg: $ty),*) $(-> $ret)? {
                type KernelFn = unsafe fn($($ty),*) $(-> $ret)?;
                // Starts at `detect`, which replaces itself with the active
                // kernel's function on first use.
                static CACHED: AtomicPtr<()> = AtomicPtr::new(detect as KernelFn as *mut ());

                // SAFETY: no precondition beyond the signature; the function it
                // stores and calls comes from the active `Kernel`'s table.
                unsafe fn detect($($arg: $ty),*) $(-> $ret)? {
                    let chosen: KernelFn = Kernel::active().fns.$name;
                    CACHED.store(chosen as *mut (), Ordering::Relaxed);
                    // SAFETY: `chosen` belongs to a `Kernel`, whose constructor
                    // checked the CPU features it needs.
                    unsafe { chosen($($arg),*) }
                }

                $check;
                $($first)?
                if $words <= dispatched_fns!(@small $($small)?) {
                    return scalar::$name($($arg),*);
                }
                let cached = CACHED.load(Ordering::Relaxed);
                // SAFETY: `CACHED` only ever holds `detect` or a function from a
                // kernel table, both of type `KernelFn`.
                let function = unsafe { core::mem::transmute::<*mut (), KernelFn>(cached) };
                // SAFETY: `detect` needs nothing; a table function's CPU features
                // were checked by the `Kernel` that provided it.
                unsafe { function($($arg),*) }
            }
        )*
    };
}

for_each_kernel_op!(dispatched_fns);

/// Views initialised output slices as possibly-uninitialised ones, for
/// [`first_wins_uninit`] and [`split_by_tables_uninit`], which only write.
#[inline]
pub(super) fn as_uninit_outputs<'o, 'w>(outputs: &'o mut [&'w mut [u64]]) -> &'o mut [&'w mut [MaybeUninit<u64>]] {
    let outputs: *mut [&'w mut [u64]] = outputs;
    // SAFETY: `MaybeUninit<u64>` has the layout of `u64`, so the slices (and
    // the slice of them) have the same layout and length. The only code that
    // receives the result, `first_wins_uninit` or `split_by_tables_uninit`,
    // writes initialised values and never uninitialised ones, so every word
    // is initialised again when the caller's `&mut [u64]` borrow resumes.
    unsafe { &mut *(outputs as *mut [&'w mut [MaybeUninit<u64>]]) }
}

/// [`first_wins_uninit`] over initialised words: for each word, in input
/// order, `outputs[a] = inputs[a] & !claimed; claimed |= inputs[a]`.
///
/// Runs on the active kernel ([`Kernel::active`]). Panics unless there are as
/// many outputs as inputs, all of one length.
///
/// ```
/// use bitmap_core::kernel;
///
/// let (a, b) = ([0b0110_u64], [0b1100_u64]);
/// let (mut out_a, mut out_b) = ([0], [0]);
/// kernel::first_wins(&[&a, &b], &mut [&mut out_a, &mut out_b]);
/// assert_eq!((out_a, out_b), ([0b0110], [0b1000]));
/// ```
#[inline]
#[track_caller]
pub fn first_wins(inputs: &[&[u64]], outputs: &mut [&mut [u64]]) {
    first_wins_uninit(inputs, as_uninit_outputs(outputs));
}

/// [`split_by_tables_uninit`] over initialised words: output `a` keeps the
/// bits of input `a` whose class among the *other* inputs (in index order,
/// as the bits of the entry number) has its entry set in `tables[a]`.
///
/// Runs on the active kernel ([`Kernel::active`]). Panics as
/// [`split_by_tables_uninit`] does.
///
/// ```
/// use bitmap_core::kernel;
///
/// let a = [0b0011_u64];
/// let b = [0b0101_u64];
/// let (mut to_a, mut to_b) = ([0; 1], [0; 1]);
/// // `a` keeps its bits whatever `b` has (entries 0 and 1); `b` keeps
/// // only those `a` lacks (entry 0).
/// kernel::split_by_tables(&[&a, &b], &[0b11, 0b01], &mut [&mut to_a, &mut to_b]);
/// assert_eq!((to_a, to_b), ([0b0011], [0b0100]));
/// ```
#[inline]
#[track_caller]
pub fn split_by_tables(inputs: &[&[u64]], tables: &[u8], outputs: &mut [&mut [u64]]) {
    split_by_tables_uninit(inputs, tables, as_uninit_outputs(outputs));
}
