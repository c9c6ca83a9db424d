//! The bitmap sizes every operation is measured at, and criterion's sampling
//! settings for each.

use std::time::Duration;

use criterion::BenchmarkGroup;
use criterion::measurement::Measurement;

/// A bitmap size, in bits, with the label used in benchmark names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    /// Length of one bitmap in bits (a multiple of 64, so no tail handling
    /// blurs the comparison with word-level peers).
    pub bits: usize,
    /// The bitmap's size in bytes, as a benchmark name's last part
    /// (`128KiB`).
    pub label: &'static str,
}

impl Size {
    /// The number of `u64` words of one bitmap.
    pub const fn words(self) -> usize {
        self.bits / 64
    }

    /// The number of bytes of one bitmap.
    pub const fn bytes(self) -> usize {
        self.bits / 8
    }
}

/// The sizes of the kernel and iteration benchmarks, chosen so that each
/// level of the memory hierarchy shows on a typical x86-64 or aarch64 core:
/// 128 B and 8 KiB fit in L1, 128 KiB in L2, 4 MiB in L3 (with a few
/// operands), and 64 MiB only in DRAM.
pub const SIZES: [Size; 5] = [
    Size { bits: 1 << 10, label: "128B" },
    Size { bits: 1 << 16, label: "8KiB" },
    Size { bits: 1 << 20, label: "128KiB" },
    Size { bits: 1 << 25, label: "4MiB" },
    Size { bits: 1 << 29, label: "64MiB" },
];

/// From this many bytes touched per iteration on, a benchmark is "large": one
/// iteration takes milliseconds, so it gets fewer samples.
pub const LARGE_BYTES: u64 = 4 << 20;

/// Sets criterion's sampling for the benchmarks registered next in `group`,
/// which touch `bytes` bytes per iteration.
///
/// Small inputs get 50 samples over 2 s (criterion's default of 100 over 5 s
/// makes the full suite take over an hour and changes no conclusion); large
/// ones get criterion's minimum of 10 samples, since each iteration already
/// averages over megabytes. In `--quick` mode the measurement time is the
/// upper bound on each benchmark's run.
pub fn configure<M: Measurement>(group: &mut BenchmarkGroup<'_, M>, bytes: u64) {
    if bytes >= LARGE_BYTES {
        group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    } else {
        group.sample_size(50).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    }
}
