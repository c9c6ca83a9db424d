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

use core::fmt;
use core::mem::MaybeUninit;
use core::str::FromStr;
use core::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use crate::storage::Words;

mod bits;
mod classes;
mod generic;
pub(crate) mod portable;
pub(crate) mod scalar;
mod simd_table;
mod vector;

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(test)]
mod bit_tests;
#[cfg(test)]
pub(crate) mod tests;

pub use classes::MAX_CLASS_INPUTS;
use classes::{check_class_counts, check_split_by_tables};

/// The environment variable that forces a kernel.
pub const KERNEL_ENV_VAR: &str = "BITMAP_CORE_KERNEL";

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

/// Which instruction set a kernel is written for.
///
/// `#[non_exhaustive]`: more kernels may be added later.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum KernelKind {
    /// Plain Rust over `u64` words; the reference.
    Scalar,
    /// `wide::u64x4`, vectorised with whatever the build target allows.
    Portable,
    /// x86-64 AVX2 through `core::arch`.
    Avx2,
    /// x86-64 AVX-512 (F, BW, VL and VPOPCNTDQ) through `core::arch`.
    Avx512,
    /// aarch64 NEON through `core::arch`.
    Neon,
}

impl KernelKind {
    /// Every kernel kind, available here or not, slowest first.
    pub const ALL: [KernelKind; 5] =
        [KernelKind::Scalar, KernelKind::Portable, KernelKind::Avx2, KernelKind::Avx512, KernelKind::Neon];

    /// The kernel's name, as `BITMAP_CORE_KERNEL` takes it.
    ///
    /// ```
    /// use bitmap_core::kernel::KernelKind;
    /// assert_eq!(KernelKind::Avx2.name(), "avx2");
    /// assert_eq!("avx2".parse::<KernelKind>(), Ok(KernelKind::Avx2));
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            KernelKind::Scalar => "scalar",
            KernelKind::Portable => "portable",
            KernelKind::Avx2 => "avx2",
            KernelKind::Avx512 => "avx512",
            KernelKind::Neon => "neon",
        }
    }

    /// Whether this CPU can run the kernel.
    pub fn is_available(self) -> bool {
        self.table().is_some()
    }

    /// The kernel's function table, if and only if this CPU can run it. This
    /// is the one place where CPU features are checked.
    fn table(self) -> Option<&'static KernelFns> {
        match self {
            KernelKind::Scalar => Some(&scalar::FNS),
            KernelKind::Portable => Some(&portable::FNS),
            #[cfg(target_arch = "x86_64")]
            KernelKind::Avx2 if x86_64::avx2::is_available() => Some(&x86_64::avx2::FNS),
            #[cfg(target_arch = "x86_64")]
            KernelKind::Avx512 if x86_64::avx512::is_available() => Some(&x86_64::avx512::FNS),
            #[cfg(target_arch = "aarch64")]
            KernelKind::Neon if aarch64::neon::is_available() => Some(&aarch64::neon::FNS),
            _ => None,
        }
    }
}

impl fmt::Display for KernelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for KernelKind {
    type Err = KernelError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        KernelKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| KernelError::Unknown { name: name.to_owned() })
    }
}

/// Why a kernel could not be selected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// The name is not a kernel's.
    #[error("unknown kernel {name:?}: expected one of scalar, portable, avx2, avx512, neon, auto")]
    Unknown {
        /// The name that was given.
        name: String,
    },
    /// The kernel exists but this CPU (or this build's architecture) cannot
    /// run it.
    #[error("kernel `{kind}` is not available on this CPU (available: {})", available_names())]
    Unavailable {
        /// The kernel that was asked for.
        kind: KernelKind,
    },
    /// `BITMAP_CORE_KERNEL` asked for a kernel that cannot be used.
    #[error("{KERNEL_ENV_VAR}={value:?}: {source}")]
    Environment {
        /// The variable's value.
        value: String,
        /// Why that value cannot be used.
        source: Box<KernelError>,
    },
}

fn available_names() -> String {
    Kernel::available().iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
}

/// A kernel this CPU can run: holding one proves that its functions are safe
/// to call, so all its methods are safe.
///
/// Its methods are the word-level operations, on slices of `u64` words. The
/// two-operand forms panic if the slices differ in length (a caller bug, as
/// with `copy_from_slice`).
#[derive(Clone, Copy)]
pub struct Kernel {
    kind: KernelKind,
    fns: &'static KernelFns,
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Kernel").field(&self.kind).finish()
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq for Kernel {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
    }
}

impl Eq for Kernel {}

static ACTIVE: OnceLock<Result<Kernel, KernelError>> = OnceLock::new();

impl Kernel {
    /// The kernel of that kind, or [`KernelError::Unavailable`] if this CPU
    /// cannot run it.
    ///
    /// ```
    /// use bitmap_core::kernel::{Kernel, KernelKind};
    /// let scalar = Kernel::new(KernelKind::Scalar).unwrap();
    /// assert_eq!(scalar.popcount(&[u64::MAX, 1]), 65);
    /// ```
    pub fn new(kind: KernelKind) -> Result<Kernel, KernelError> {
        match kind.table() {
            Some(fns) => Ok(Kernel { kind, fns }),
            None => Err(KernelError::Unavailable { kind }),
        }
    }

    /// The scalar reference kernel, available everywhere.
    pub fn scalar() -> Kernel {
        Kernel { kind: KernelKind::Scalar, fns: &scalar::FNS }
    }

    /// The portable `wide` kernel, available everywhere.
    pub fn portable() -> Kernel {
        Kernel { kind: KernelKind::Portable, fns: &portable::FNS }
    }

    /// Every kernel this CPU can run, slowest first.
    pub fn available() -> Vec<Kernel> {
        KernelKind::ALL.into_iter().filter_map(|k| Kernel::new(k).ok()).collect()
    }

    /// The fastest kernel this CPU can run, ignoring `BITMAP_CORE_KERNEL`.
    pub fn best() -> Kernel {
        KernelKind::ALL.into_iter().rev().find_map(|k| Kernel::new(k).ok()).unwrap_or_else(Kernel::portable)
    }

    /// The kernel the dispatched functions use, chosen on first use and then
    /// fixed for the life of the process: `BITMAP_CORE_KERNEL` if set, else
    /// [`Kernel::best`]. Returns the error if the variable names a kernel that
    /// is unknown or unavailable here.
    ///
    /// ```
    /// use bitmap_core::kernel::Kernel;
    /// match Kernel::try_active() {
    ///     Ok(kernel) => println!("active kernel: {kernel}"),
    ///     Err(error) => eprintln!("{error}"),
    /// }
    /// ```
    pub fn try_active() -> Result<Kernel, KernelError> {
        ACTIVE.get_or_init(select_from_environment).clone()
    }

    /// As [`Kernel::try_active`].
    ///
    /// # Panics
    ///
    /// If `BITMAP_CORE_KERNEL` names an unknown or unavailable kernel: a
    /// process told to use a kernel must not silently use another one.
    pub fn active() -> Kernel {
        match Kernel::try_active() {
            Ok(kernel) => kernel,
            Err(error) => panic!("bitmap-core: {error}"),
        }
    }

    /// Which kernel this is.
    pub fn kind(self) -> KernelKind {
        self.kind
    }

    /// The kernel's name, as `BITMAP_CORE_KERNEL` takes it.
    pub fn name(self) -> &'static str {
        self.kind.name()
    }
}

fn select_from_environment() -> Result<Kernel, KernelError> {
    let value = match std::env::var(KERNEL_ENV_VAR) {
        Ok(value) if !value.trim().is_empty() => value,
        _ => return Ok(Kernel::best()),
    };
    if value.trim().eq_ignore_ascii_case("auto") {
        return Ok(Kernel::best());
    }
    value
        .parse::<KernelKind>()
        .and_then(Kernel::new)
        .map_err(|source| KernelError::Environment { value: value.clone(), source: Box::new(source) })
}

#[track_caller]
#[inline]
fn check_same_len(a: usize, b: usize) {
    if a != b {
        mismatch(a, b)
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn mismatch(a: usize, b: usize) -> ! {
    panic!("bitmap-core: word slices differ in length: {a} and {b}")
}

#[track_caller]
#[inline]
fn check_positive(op: &str, stride: usize, width: usize) {
    if stride == 0 || width == 0 {
        panic!("bitmap-core: {op} needs a stride and a width of at least 1 (got {stride} and {width})");
    }
}

#[track_caller]
#[inline]
fn check_rows(op: &str, mut lens: impl Iterator<Item = usize>) {
    if let Some(first) = lens.next()
        && let Some(other) = lens.find(|&len| len != first)
    {
        panic!("bitmap-core: {op} needs rows of one length (got {first} and {other} words)");
    }
}

#[track_caller]
#[inline]
fn check_pattern(pattern: &[u64], period: usize) {
    if period == 0 || pattern.len().saturating_mul(64) < period {
        panic!(
            "bitmap-core: fill_periodic needs 1 <= period <= pattern bits (got {period} and {})",
            pattern.len() * 64
        );
    }
}

#[track_caller]
#[inline]
fn check_union(dst: &[u64], srcs: &[&[u64]]) {
    for s in srcs {
        check_same_len(dst.len(), s.len());
    }
}

#[track_caller]
#[inline]
fn check_first_wins<T>(inputs: &[&[u64]], outputs: &[&mut [T]]) {
    if inputs.len() != outputs.len() {
        panic!("bitmap-core: first_wins has {} inputs but {} outputs", inputs.len(), outputs.len());
    }
    check_one_len(inputs, outputs);
}

/// Checks that every input and every output has the first input's length.
#[track_caller]
#[inline]
fn check_one_len<T>(inputs: &[&[u64]], outputs: &[&mut [T]]) {
    let n = inputs.first().map_or(0, |s| s.len());
    for s in inputs {
        check_same_len(n, s.len());
    }
    for s in outputs {
        check_same_len(n, s.len());
    }
}

/// Views initialised output slices as possibly-uninitialised ones, for
/// [`first_wins_uninit`] and [`split_by_tables_uninit`], which only write.
#[inline]
fn as_uninit_outputs<'o, 'w>(outputs: &'o mut [&'w mut [u64]]) -> &'o mut [&'w mut [MaybeUninit<u64>]] {
    let outputs: *mut [&'w mut [u64]] = outputs;
    // SAFETY: `MaybeUninit<u64>` has the layout of `u64`, so the slices (and
    // the slice of them) have the same layout and length. The only code that
    // receives the result, `first_wins_uninit` or `split_by_tables_uninit`,
    // writes initialised values and never uninitialised ones, so every word
    // is initialised again when the caller's `&mut [u64]` borrow resumes.
    unsafe { &mut *(outputs as *mut [&'w mut [MaybeUninit<u64>]]) }
}

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

/// Appends to each output the table-driven split of `inputs` (see
/// [`split_by_tables_uninit`]): `inputs[0].len()` new words each, written
/// once into spare capacity, never zeroed first.
///
/// Panics, appending nothing, on the arguments `split_by_tables_uninit`
/// rejects.
pub(crate) fn split_by_tables_append<const N: usize>(inputs: &[&[u64]; N], tables: &[u8; N], outputs: [&mut Words; N]) {
    let n = inputs.first().map_or(0, |input| input.len());
    let mut outputs = outputs;
    {
        let mut spares: [&mut [MaybeUninit<u64>]; N] = core::array::from_fn(|_| <&mut [MaybeUninit<u64>]>::default());
        for (spare, output) in spares.iter_mut().zip(outputs.iter_mut()) {
            *spare = output.spare_after(n);
        }
        // Checks the lengths and tables; panics otherwise, before any
        // length is set below.
        split_by_tables_uninit(inputs, tables, &mut spares);
    }
    for output in outputs.iter_mut() {
        let written = output.buf.len() + n;
        // SAFETY: `split_by_tables_uninit` returned, so it wrote every word
        // of each spare, and each was exactly the `n` words of spare
        // capacity right after this buffer's `len()` (from `spare_after`,
        // with nothing changing the buffer since).
        unsafe { output.buf.set_len(written) };
    }
}

/// Replaces the words of each output with the first-wins split of `inputs`
/// (one output per input, all inputs of one length), writing each new word
/// once: the buffers are never zeroed first, which is most of what a fresh
/// plan's allocation would otherwise cost.
///
/// Panics, leaving the outputs empty, unless there are as many outputs as
/// inputs and the inputs share one length.
pub(crate) fn first_wins_overwrite<const N: usize>(inputs: &[&[u64]], mut outputs: [Option<&mut Words>; N]) {
    let (m, n) = (inputs.len(), inputs.first().map_or(0, |input| input.len()));
    {
        let mut spares: [&mut [MaybeUninit<u64>]; N] = core::array::from_fn(|_| <&mut [MaybeUninit<u64>]>::default());
        for (spare, output) in spares.iter_mut().zip(outputs.iter_mut()) {
            if let Some(output) = output {
                *spare = output.spare_for_overwrite(n);
            }
        }
        // Checks that the first `m` spares are `n` words each (a missing
        // output has an empty one); panics otherwise, before any length is
        // set below.
        first_wins_uninit(inputs, &mut spares[..m]);
    }
    for output in outputs.iter_mut().take(m).flatten() {
        let written = output.buf.len() + n;
        // SAFETY: `first_wins_uninit` returned, so it wrote every word of
        // each of the first `m` spares, and each was exactly the `n` words of
        // spare capacity right after this buffer's `len()` (from
        // `spare_for_overwrite`, with nothing changing the buffer since).
        unsafe { output.buf.set_len(written) };
    }
}

/// The word-wise binary operations that [`combine_overwrite`] can write
/// into a fresh buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Combine {
    /// `a & b`: [`and_uninit`].
    And,
    /// `a | b`: [`or_uninit`].
    Or,
    /// `a ^ b`: [`xor_uninit`].
    Xor,
    /// `a & !b`: [`and_not_uninit`].
    AndNot,
}

/// Replaces the words of `out` with `a OP b`, each written once into spare
/// capacity: a new bitmap's result costs one pass over the operands, where
/// a copy of `a` and an in-place operation would cost two (measured in
/// `docs/PERFORMANCE.md`, "Operators into a new bitmap").
///
/// Panics, leaving `out` empty, unless `a` and `b` have one length.
pub(crate) fn combine_overwrite(op: Combine, a: &[u64], b: &[u64], out: &mut Words) {
    let n = a.len();
    {
        let spare = out.spare_for_overwrite(n);
        // Each checks that `b` and `spare` are `n` words; panics otherwise,
        // before the length is set below.
        match op {
            Combine::And => and_uninit(a, b, spare),
            Combine::Or => or_uninit(a, b, spare),
            Combine::Xor => xor_uninit(a, b, spare),
            Combine::AndNot => and_not_uninit(a, b, spare),
        }
    }
    let written = out.buf.len() + n;
    // SAFETY: the operation returned, so it wrote every word of the spare,
    // which was exactly the `n` words of spare capacity right after the
    // buffer's `len()` (from `spare_for_overwrite`, with nothing changing the
    // buffer since).
    unsafe { out.buf.set_len(written) };
}

/// Appends to `out` the indices of the set bits of `words`, ascending (bit
/// `j` of word `i` is index `64·i + j`), each written once into spare
/// capacity reserved for exactly that many: no capacity check per index,
/// which `Vec::extend` over [`Ones`](crate::Ones) pays (it cannot know the
/// count), and which made up most of listing 131,072 indices.
pub(crate) fn append_ones(words: &[u64], out: &mut Vec<usize>) {
    let total = crate::bitmap::count(popcount(words));
    out.reserve(total);
    let start = out.len();
    let spare = &mut out.spare_capacity_mut()[..total];
    let mut written = 0;
    for (i, &word) in words.iter().enumerate() {
        let (mut rest, base) = (word, i * 64);
        while rest != 0 {
            // Bounds-checked: `written` stays below `total`, the popcount,
            // so the check never fails and the branch predicts.
            spare[written].write(base + rest.trailing_zeros() as usize);
            written += 1;
            rest &= rest - 1;
        }
    }
    // SAFETY: the loop wrote `spare[..written]`, the `written` words of
    // spare capacity right after `out`'s `start` initialised ones (the
    // indexing would have panicked before writing past `spare`).
    unsafe { out.set_len(start + written) };
}

/// Declares each operation once and generates from it: the field of
/// [`KernelFns`], the safe method on [`Kernel`], and the dispatched free
/// function with its cached function pointer.
macro_rules! kernel_ops {
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
        /// One kernel's implementation of every operation. Its functions may
        /// require CPU features: only [`KernelKind::table`] hands one out,
        /// after checking them.
        pub(crate) struct KernelFns {
            $(pub(crate) $name: unsafe fn($($ty),*) $(-> $ret)?,)*
        }

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

        $(
            $(#[$doc])*
            ///
            /// Runs on the active kernel ([`Kernel::active`]); inputs of at
            #[doc = concat!("most [`", kernel_ops!(@small_name $($small)?), "`] words run the scalar loop inline.")]
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
                if $words <= kernel_ops!(@small $($small)?) {
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

kernel_ops! {
    /// The number of set bits in `words`.
    fn popcount(words: &[u64]) -> u64;
    check: {};
    words: words.len();
    small: SMALL_COUNT_WORDS;

    /// `popcount(a & b)`, without materialising `a & b`.
    fn and_popcount(a: &[u64], b: &[u64]) -> u64;
    check: { check_same_len(a.len(), b.len()) };
    words: a.len();
    small: SMALL_COUNT_WORDS;

    /// `popcount(a | b)`, without materialising `a | b`.
    fn or_popcount(a: &[u64], b: &[u64]) -> u64;
    check: { check_same_len(a.len(), b.len()) };
    words: a.len();
    small: SMALL_COUNT_WORDS;

    /// `popcount(a ^ b)` (the Hamming distance), without materialising `a ^ b`.
    fn xor_popcount(a: &[u64], b: &[u64]) -> u64;
    check: { check_same_len(a.len(), b.len()) };
    words: a.len();
    small: SMALL_COUNT_WORDS;

    /// `popcount(a & !b)`, without materialising `a & !b`.
    fn and_not_popcount(a: &[u64], b: &[u64]) -> u64;
    check: { check_same_len(a.len(), b.len()) };
    words: a.len();
    small: SMALL_COUNT_WORDS;

    /// `dst &= src`, word by word.
    fn and_assign(dst: &mut [u64], src: &[u64]);
    check: { check_same_len(dst.len(), src.len()) };
    words: dst.len();

    /// `dst |= src`, word by word.
    fn or_assign(dst: &mut [u64], src: &[u64]);
    check: { check_same_len(dst.len(), src.len()) };
    words: dst.len();

    /// `dst ^= src`, word by word.
    fn xor_assign(dst: &mut [u64], src: &[u64]);
    check: { check_same_len(dst.len(), src.len()) };
    words: dst.len();

    /// `dst &= !src`, word by word.
    fn and_not_assign(dst: &mut [u64], src: &[u64]);
    check: { check_same_len(dst.len(), src.len()) };
    words: dst.len();

    /// `dst = !dst`, word by word (every bit of every word: a bitmap must
    /// clear its tail afterwards).
    fn not_assign(dst: &mut [u64]);
    check: {};
    words: dst.len();

    /// `out = a & b`, word by word.
    ///
    /// Each word of `out` is written once and never read, so `out` may be
    /// uninitialised memory (a `Vec`'s spare capacity): one pass where a
    /// copy of `a` and [`and_assign`] would take two. Panics unless the
    /// three slices have one length.
    ///
    /// ```
    /// use core::mem::MaybeUninit;
    /// use bitmap_core::kernel;
    ///
    /// let mut out = [MaybeUninit::<u64>::uninit(); 2];
    /// kernel::and_uninit(&[0b0110, 7], &[0b1100, 5], &mut out);
    /// // Every word was written: reading them back is fine.
    /// assert_eq!(out.map(|w| unsafe { w.assume_init() }), [0b0100, 5]);
    /// ```
    fn and_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]);
    check: { check_same_len(a.len(), b.len()); check_same_len(a.len(), out.len()) };
    words: a.len();

    /// `out = a | b`, word by word.
    ///
    /// As [`and_uninit`]: `out` may be uninitialised.
    fn or_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]);
    check: { check_same_len(a.len(), b.len()); check_same_len(a.len(), out.len()) };
    words: a.len();

    /// `out = a ^ b`, word by word.
    ///
    /// As [`and_uninit`]: `out` may be uninitialised.
    fn xor_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]);
    check: { check_same_len(a.len(), b.len()); check_same_len(a.len(), out.len()) };
    words: a.len();

    /// `out = a & !b`, word by word.
    ///
    /// As [`and_uninit`]: `out` may be uninitialised.
    fn and_not_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]);
    check: { check_same_len(a.len(), b.len()); check_same_len(a.len(), out.len()) };
    words: a.len();

    /// `dst = srcs[0] | srcs[1] | …` in one pass over the words; no sources
    /// clears `dst`.
    fn union_many(dst: &mut [u64], srcs: &[&[u64]]);
    check: { check_union(dst, srcs) };
    words: dst.len();

    /// The first-wins split: for each word, in input order,
    /// `outputs[a] = inputs[a] & !claimed; claimed |= inputs[a]`, so every
    /// set input bit goes to the first input that has it and no two outputs
    /// overlap. One pass; each output word is written once, and none is
    /// read, so the outputs may be uninitialised memory (a `Vec`'s spare
    /// capacity): afterwards every word of every output is initialised.
    /// [`first_wins`] is the same over initialised words.
    ///
    /// Panics unless there are as many outputs as inputs, all of one length.
    ///
    /// ```
    /// use core::mem::MaybeUninit;
    /// use bitmap_core::kernel;
    ///
    /// let (a, b) = ([0b0110_u64, 1], [0b1100_u64, 3]);
    /// let mut out_a = [MaybeUninit::<u64>::uninit(); 2];
    /// let mut out_b = [MaybeUninit::<u64>::uninit(); 2];
    /// kernel::first_wins_uninit(&[&a, &b], &mut [&mut out_a, &mut out_b]);
    /// // Every word was written: reading them back is fine.
    /// let written = |out: &[MaybeUninit<u64>]| out.iter().map(|w| unsafe { w.assume_init() }).collect::<Vec<_>>();
    /// assert_eq!(written(&out_a), [0b0110, 1]);
    /// assert_eq!(written(&out_b), [0b1000, 2]);
    /// ```
    fn first_wins_uninit(inputs: &[&[u64]], outputs: &mut [&mut [MaybeUninit<u64>]]);
    check: { check_first_wins(inputs, outputs) };
    words: inputs.len() * inputs.first().map_or(0, |s| s.len());

    /// The class counts of up to [`MAX_CLASS_INPUTS`] inputs, in one pass:
    /// `counts[c]` becomes the number of bit positions whose *class* (the
    /// set of inputs with that bit set, bit `p` for input `p`) is exactly
    /// `c`. `counts[0]` counts the positions no input has, so the counts
    /// add up to 64 × the words per input.
    ///
    /// Panics unless there are at most [`MAX_CLASS_INPUTS`] inputs, all of
    /// one length, and `2^inputs` counts.
    ///
    /// ```
    /// use bitmap_core::kernel;
    ///
    /// let a = [0b0011_u64, u64::MAX];
    /// let b = [0b0101_u64, 0];
    /// let mut counts = [0; 4];
    /// kernel::class_counts(&[&a, &b], &mut counts);
    /// // neither, only `a`, only `b`, both:
    /// assert_eq!(counts, [61, 1 + 64, 1, 1]);
    /// ```
    fn class_counts(inputs: &[&[u64]], counts: &mut [u64]);
    check: { check_class_counts(inputs, counts) };
    words: inputs.first().map_or(0, |s| s.len());

    /// The table-driven split of up to [`MAX_CLASS_INPUTS`] inputs, in one
    /// pass: output `a` keeps the bits of input `a` whose class among the
    /// *other* inputs has its entry set in `tables[a]`. Entry `j` (bit `j`
    /// of the table) is for the bits that, of the other inputs in index
    /// order, exactly those whose bits are set in `j` also have. Each
    /// output word is written once, and none is read, so the outputs may
    /// be uninitialised memory: afterwards every word of every output is
    /// initialised. [`split_by_tables`] is the same over initialised words.
    ///
    /// With one table per class owner this hands every class of bits to
    /// one output (as `first_wins` hands each to the first input that has
    /// it), but any tables are allowed: outputs may overlap.
    ///
    /// Panics unless there are at most [`MAX_CLASS_INPUTS`] inputs, as many
    /// tables and outputs, all of one length, and no table has bits past
    /// its `2^(inputs − 1)` entries.
    ///
    /// ```
    /// use core::mem::MaybeUninit;
    /// use bitmap_core::kernel;
    ///
    /// let a = [0b0011_u64];
    /// let b = [0b0101_u64];
    /// let mut to_a = [MaybeUninit::<u64>::uninit()];
    /// let mut to_b = [MaybeUninit::<u64>::uninit()];
    /// // `a` keeps its bits whatever `b` has (entries 0 and 1); `b` keeps
    /// // only those `a` lacks (entry 0).
    /// kernel::split_by_tables_uninit(&[&a, &b], &[0b11, 0b01], &mut [&mut to_a, &mut to_b]);
    /// // Every word was written: reading them back is fine.
    /// let written = |out: &[MaybeUninit<u64>]| unsafe { out[0].assume_init() };
    /// assert_eq!((written(&to_a), written(&to_b)), (0b0011, 0b0100));
    /// ```
    fn split_by_tables_uninit(inputs: &[&[u64]], tables: &[u8], outputs: &mut [&mut [MaybeUninit<u64>]]);
    check: { check_split_by_tables(inputs, tables, outputs) };
    words: inputs.len() * inputs.first().map_or(0, |s| s.len());

    /// The index of the first non-zero word.
    fn position_nonzero(words: &[u64]) -> Option<usize>;
    check: {};
    words: words.len();
    // Answered by the first word more often than not (a non-empty plan
    // output, a lookup that holds key 0): no call for that.
    first: {
        if words.first().is_some_and(|&w| w != 0) {
            return Some(0);
        }
    };

    /// The index of the first word that is not all ones.
    fn position_not_all_ones(words: &[u64]) -> Option<usize>;
    check: {};
    words: words.len();
    first: {
        if words.first().is_some_and(|&w| w != u64::MAX) {
            return Some(0);
        }
    };
    /// Strided gather with an AND over each cell: `dst` bit `j` (every bit
    /// of `dst`) = the AND of the `width` bits of `src` from bit
    /// `j·stride + offset`; bits past `src` read 0. The rank reduction of a
    /// flat layout (`stride = width = ranks`) and the split of one row out
    /// of an interleaved bitmap (`width = 1`).
    ///
    /// Panics if `stride` or `width` is 0.
    ///
    /// ```
    /// use bitmap_core::kernel;
    ///
    /// let mut pairs = [0u64];
    /// kernel::gather_and(&[0b11_01_11_10_11], 2, 0, 2, &mut pairs); // AND of each bit pair
    /// assert_eq!(pairs, [0b10101]);
    /// let mut odd = [0u64];
    /// kernel::gather_and(&[0b1010_0110], 2, 1, 1, &mut odd); // every other bit, from bit 1
    /// assert_eq!(odd, [0b1101]);
    /// ```
    fn gather_and(src: &[u64], stride: usize, offset: usize, width: usize, dst: &mut [u64]);
    check: { check_positive("gather_and", stride, width) };
    // The work is the `stride` input words behind each output word, each
    // one compress: the scalar kernel's bit-trick compress costs dozens of
    // instructions where BMI2's `pext` costs one, so a few output words of
    // a wide stride (a fold's per-chunk AND over `G` cells) are already
    // worth the indirect call.
    words: dst.len().saturating_mul(stride);

    /// Strided scatter: `dst` bit `j·stride + offset` |= `src` bit `j`, for
    /// every such position within `dst` (the join of one row into an
    /// interleaved bitmap).
    ///
    /// Panics if `stride` is 0.
    ///
    /// ```
    /// use bitmap_core::kernel;
    ///
    /// let mut flat = [0b0001u64];
    /// kernel::scatter_or(&[0b11], 2, 1, &mut flat);
    /// assert_eq!(flat, [0b1011]);
    /// ```
    fn scatter_or(src: &[u64], stride: usize, offset: usize, dst: &mut [u64]);
    check: { check_positive("scatter_or", stride, 1) };
    words: dst.len();

    /// PDEP over slices: `dst` gets, at the `i`-th set position of `mask`,
    /// bit `src_start + i` of `src` (0 past its end), and 0 elsewhere.
    /// Returns the number of `src` bits used, `popcount(mask)`.
    ///
    /// Panics unless `mask` and `dst` have one length.
    ///
    /// ```
    /// use bitmap_core::kernel;
    ///
    /// let mut out = [0u64];
    /// assert_eq!(kernel::deposit(&[0b10], 0, &[0b1010_0000], &mut out), 2);
    /// assert_eq!(out, [0b1000_0000]);
    /// ```
    fn deposit(src: &[u64], src_start: usize, mask: &[u64], dst: &mut [u64]) -> usize;
    check: { check_same_len(mask.len(), dst.len()) };
    words: dst.len();

    /// PEXT over slices: the bits of `src` at the set positions of `mask`,
    /// in order, written to `dst` from bit `dst_start` to `dst_start +
    /// popcount(mask)`: the bits below `dst_start` are kept, the rest of the
    /// word holding the run's end is cleared, later words are left as they
    /// are, bits past `dst` are dropped. Returns `popcount(mask)`.
    ///
    /// Panics unless `src` and `mask` have one length.
    ///
    /// ```
    /// use bitmap_core::kernel;
    ///
    /// let mut out = [0b1u64];
    /// assert_eq!(kernel::extract(&[0b1000_0000], &[0b1010_0000], &mut out, 1), 2);
    /// assert_eq!(out, [0b101]);
    /// ```
    fn extract(src: &[u64], mask: &[u64], dst: &mut [u64], dst_start: usize) -> usize;
    check: { check_same_len(src.len(), mask.len()) };
    words: src.len();

    /// ORs into `dst` bits `start..end` (clamped to `dst`) the repetition of
    /// the first `period` bits of `pattern`: bit `p` gets pattern bit
    /// `(p − start) % period`.
    ///
    /// Panics if `period` is 0 or `pattern` has fewer than `period` bits.
    ///
    /// ```
    /// use bitmap_core::kernel;
    ///
    /// let mut out = [0u64];
    /// kernel::fill_periodic(&mut out, 2, 12, &[0b011], 3);
    /// assert_eq!(out, [0b1011_0110_1100]);
    /// ```
    fn fill_periodic(dst: &mut [u64], start: usize, end: usize, pattern: &[u64], period: usize);
    check: { check_pattern(pattern, period) };
    words: dst.len();

    /// `words` bit `i` &= bit `i − shift` for every `i`, bits before 0
    /// reading as set: one step of the windowed run test (after steps of
    /// 1, 2, 4, … each set bit marks the end of a run of set bits that
    /// long).
    ///
    /// ```
    /// use bitmap_core::kernel;
    ///
    /// let mut words = [0b1110_1101u64];
    /// kernel::and_shifted(&mut words, 1);
    /// assert_eq!(words, [0b1100_1001]);
    /// ```
    fn and_shifted(words: &mut [u64], shift: usize);
    check: {};
    words: words.len();

    /// Transposes each whole block of 64 words as a 64×64 bit matrix, in
    /// place: bit `c` of word `r` of a block trades places with bit `r` of
    /// word `c`. A partial last block is left as it is.
    ///
    /// ```
    /// use bitmap_core::kernel;
    ///
    /// let mut block = [0u64; 64];
    /// block[3] = 1 << 10;
    /// kernel::transpose64(&mut block);
    /// assert_eq!((block[10], block[3]), (1 << 3, 0));
    /// ```
    fn transpose64(words: &mut [u64]);
    check: {};
    words: words.len();

    /// The row split of a flat, interleaved layout of `n = rows.len()`
    /// rows of one length: `rows[k]` bit `j` = `src` bit `j·n + k` (0 past
    /// `src`'s end), for every bit of every row. 64 rows (8 groups × 8
    /// ranks) are 64×64 bit transposes, 8 rows one bit of every byte;
    /// other counts a strided gather per row.
    ///
    /// Panics unless the rows have one length.
    ///
    /// ```
    /// use bitmap_core::kernel;
    ///
    /// let (mut even, mut odd) = ([0u64], [0u64]);
    /// kernel::split_rows(&[0b1110_0100], &mut [&mut even, &mut odd]);
    /// assert_eq!((even, odd), ([0b1010], [0b1100]));
    /// ```
    fn split_rows(src: &[u64], rows: &mut [&mut [u64]]);
    check: { check_rows("split_rows", rows.iter().map(|r| r.len())) };
    words: rows.len() * rows.first().map_or(0, |r| r.len());

    /// The row join, the inverse of [`split_rows`]: `dst` bit `p` =
    /// `rows[p % n]` bit `p / n` for `n = rows.len()` rows of one length
    /// (0 past their end, and everywhere for no rows), for every bit of
    /// `dst`.
    ///
    /// Panics unless the rows have one length.
    ///
    /// ```
    /// use bitmap_core::kernel;
    ///
    /// let mut flat = [0u64];
    /// kernel::join_rows(&[&[0b1010], &[0b1100]], &mut flat);
    /// assert_eq!(flat, [0b1110_0100]);
    /// ```
    fn join_rows(rows: &[&[u64]], dst: &mut [u64]);
    check: { check_rows("join_rows", rows.iter().map(|r| r.len())) };
    words: dst.len();
}
