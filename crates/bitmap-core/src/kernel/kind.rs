//! The kernel types: [`KernelKind`] (which instruction set), [`Kernel`]
//! (a kernel this CPU can run, so its functions are safe to call) and
//! [`KernelError`], the constructors that check the CPU, and the choice of
//! the active kernel (`BITMAP_CORE_KERNEL`, else the fastest).

use core::fmt;
use core::str::FromStr;
use std::sync::OnceLock;

#[cfg(target_arch = "aarch64")]
use super::aarch64;
use super::portable;
use super::scalar;
use super::table::KernelFns;
#[cfg(target_arch = "x86_64")]
use super::x86_64;

/// The environment variable that forces a kernel.
pub const KERNEL_ENV_VAR: &str = "BITMAP_CORE_KERNEL";

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
    /// Read by the generated methods (`methods.rs`) and dispatch points
    /// (`dispatch.rs`); only this module builds a `Kernel`.
    pub(super) fns: &'static KernelFns,
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
