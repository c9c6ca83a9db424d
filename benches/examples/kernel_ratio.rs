//! Every operation of the kernel table on two kernels (by default `avx2`
//! and `avx512`) and through dispatch, measured interleaved: each round
//! times a batch of calls of every variant one after the other, and the
//! ratios are taken per round, so a machine whose load changes during the
//! run (other builds on a shared machine) moves both sides of each ratio
//! alike. Prints, per operation and size, the median time per call of each
//! variant and the median per-round ratios `base ÷ other` and `base ÷
//! dispatched` (above 1: faster than `base`).
//!
//! ```text
//! $ cargo run --release -p bitplan-benches --example kernel_ratio -- [OPTIONS]
//!   --rounds N        rounds per operation and size (default 31)
//!   --base K          the kernel ratios are taken against (default avx2)
//!   --other K         the kernel compared with it (default avx512)
//!   --ops a,b,..      only operations whose name contains one of these
//!   --sizes a,b,..    only these sizes (labels as printed: 128B, 8KiB, …)
//!   --align N         place every slice N bytes past a 64-byte boundary
//!                     (default: where the allocator puts it)
//! ```
//!
//! The inputs are `benches/`'s pseudo-random words (uniform bits, the plan
//! operations on three 60%-dense lookups, as in `benches/plan.rs`); every
//! result is checked against the base kernel's before timing.

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Instant;

use bitmap_core::kernel::{self, Kernel, KernelKind};
use bitplan_benches::data::{random_bits, random_words};

/// Bytes of one operand at each size: the kernel benchmarks' five, plus
/// the 262,144-key plan's 32 KiB lookups, plus the cut-over group's small
/// inputs (the dispatched functions run the scalar loop inline up to
/// `SMALL_WORDS` words).
const SIZES: [(usize, &str); 14] = [
    (8, "1w"),
    (16, "2w"),
    (24, "3w"),
    (32, "4w"),
    (40, "5w"),
    (64, "8w"),
    (128, "16w"),
    (256, "32w"),
    (128, "128B"),
    (8 << 10, "8KiB"),
    (32 << 10, "32KiB"),
    (128 << 10, "128KiB"),
    (4 << 20, "4MiB"),
    (64 << 20, "64MiB"),
];

/// Target time of one batch of one variant: long enough that the clock's
/// resolution does not matter, short enough that the load rarely changes
/// within a round.
const BATCH_NS: f64 = 200_000.0;

/// A buffer of words placed at a chosen offset from a 64-byte boundary.
struct Placed {
    buf: Vec<u64>,
    start: usize,
    len: usize,
}

impl Placed {
    fn new(words: &[u64], align: Option<usize>) -> Placed {
        let mut buf = vec![0u64; words.len() + 16];
        let start = match align {
            None => 0,
            Some(bytes) => {
                let base = buf.as_ptr() as usize;
                (0..8).find(|&w| (base + 8 * w) % 64 == bytes % 64).expect("8-byte aligned allocation")
            }
        };
        if align.is_none() {
            buf.truncate(words.len());
        }
        buf[start..start + words.len()].copy_from_slice(words);
        Placed { buf, start, len: words.len() }
    }

    fn get(&self) -> &[u64] {
        &self.buf[self.start..self.start + self.len]
    }

    fn get_mut(&mut self) -> &mut [u64] {
        &mut self.buf[self.start..self.start + self.len]
    }
}

/// Which implementation a variant runs.
#[derive(Clone, Copy)]
enum Variant {
    Kernel(Kernel),
    Dispatched,
}

/// The operands of one size.
struct Operands {
    a: Placed,
    b: Placed,
    dst: Placed,
    zeros: Placed,
    ones: Placed,
    lookups: Vec<Placed>,
    outputs: Vec<Placed>,
    sources: Vec<Placed>,
}

/// The sources of `union_many`, as in `benches/kernels.rs`.
const UNION_SOURCES: usize = 8;
/// Adapters of the plan kernels, as in `benches/plan.rs`.
const ADAPTERS: usize = 3;

impl Operands {
    fn new(words: usize, align: Option<usize>) -> Operands {
        let lookups = (0..ADAPTERS).map(|i| Placed::new(&random_bits(words, 0.6, 11 + i as u64), align)).collect();
        Operands {
            a: Placed::new(&random_words(words, 1), align),
            b: Placed::new(&random_words(words, 2), align),
            dst: Placed::new(&random_words(words, 3), align),
            zeros: Placed::new(&vec![0; words], align),
            ones: Placed::new(&vec![u64::MAX; words], align),
            lookups,
            outputs: (0..ADAPTERS).map(|_| Placed::new(&vec![0; words], align)).collect(),
            sources: (0..UNION_SOURCES).map(|i| Placed::new(&random_words(words, 20 + i as u64), align)).collect(),
        }
    }
}

/// Every operation of the kernel table: runs it once on `variant`, and
/// returns a summary of the result to compare variants by.
type Op = fn(Variant, &mut Operands) -> u64;

macro_rules! pick {
    ($variant:expr, $name:ident($($arg:expr),*)) => {
        match $variant {
            Variant::Kernel(k) => k.$name($($arg),*),
            Variant::Dispatched => kernel::$name($($arg),*),
        }
    };
}

fn digest(words: &[u64]) -> u64 {
    words.iter().fold(0xcbf2_9ce4_8422_2325, |h, &w| (h ^ w).wrapping_mul(0x1000_0000_01b3))
}

fn outputs_digest(outputs: &mut [Placed]) -> u64 {
    outputs.iter().map(|o| digest(o.get())).fold(0, |h, d| h.rotate_left(7) ^ d)
}

fn first_wins_tables() -> [u8; ADAPTERS] {
    // Each adapter keeps the bits no earlier adapter has: entry 0 of the
    // others' classes in index order, i.e. no earlier one set.
    core::array::from_fn(|a| (0u8..4).filter(|&j| j & ((1 << a) - 1) == 0).fold(0, |t, j| t | 1 << j))
}

const OPS: &[(&str, Op)] = &[
    ("popcount", |v, o| pick!(v, popcount(o.a.get()))),
    ("and_popcount", |v, o| pick!(v, and_popcount(o.a.get(), o.b.get()))),
    ("or_popcount", |v, o| pick!(v, or_popcount(o.a.get(), o.b.get()))),
    ("xor_popcount", |v, o| pick!(v, xor_popcount(o.a.get(), o.b.get()))),
    ("and_not_popcount", |v, o| pick!(v, and_not_popcount(o.a.get(), o.b.get()))),
    ("and_assign", |v, o| {
        pick!(v, and_assign(o.dst.get_mut(), o.a.get()));
        0
    }),
    ("or_assign", |v, o| {
        pick!(v, or_assign(o.dst.get_mut(), o.a.get()));
        0
    }),
    ("xor_assign", |v, o| {
        pick!(v, xor_assign(o.dst.get_mut(), o.a.get()));
        0
    }),
    ("and_not_assign", |v, o| {
        pick!(v, and_not_assign(o.dst.get_mut(), o.a.get()));
        0
    }),
    ("not_assign", |v, o| {
        pick!(v, not_assign(o.dst.get_mut()));
        0
    }),
    ("union_many", |v, o| {
        let srcs: [&[u64]; UNION_SOURCES] = core::array::from_fn(|i| o.sources[i].get());
        pick!(v, union_many(o.dst.get_mut(), &srcs));
        digest(o.dst.get())
    }),
    ("first_wins", |v, o| {
        let inputs: [&[u64]; ADAPTERS] = core::array::from_fn(|i| o.lookups[i].get());
        let [x, y, z] = &mut o.outputs[..] else { unreachable!("ADAPTERS outputs") };
        let mut outputs: [&mut [u64]; ADAPTERS] = [x.get_mut(), y.get_mut(), z.get_mut()];
        pick!(v, first_wins(&inputs, &mut outputs));
        outputs_digest(&mut o.outputs)
    }),
    ("class_counts", |v, o| {
        let inputs: [&[u64]; ADAPTERS] = core::array::from_fn(|i| o.lookups[i].get());
        let mut counts = [0u64; 1 << ADAPTERS];
        pick!(v, class_counts(&inputs, &mut counts));
        counts.iter().fold(0, |h, &c| h.rotate_left(9) ^ c)
    }),
    ("split_by_tables", |v, o| {
        let inputs: [&[u64]; ADAPTERS] = core::array::from_fn(|i| o.lookups[i].get());
        let [x, y, z] = &mut o.outputs[..] else { unreachable!("ADAPTERS outputs") };
        let mut outputs: [&mut [u64]; ADAPTERS] = [x.get_mut(), y.get_mut(), z.get_mut()];
        pick!(v, split_by_tables(&inputs, &first_wins_tables(), &mut outputs));
        outputs_digest(&mut o.outputs)
    }),
    ("position_nonzero", |v, o| pick!(v, position_nonzero(o.zeros.get())).map_or(u64::MAX, |p| p as u64)),
    ("position_not_all_ones", |v, o| pick!(v, position_not_all_ones(o.ones.get())).map_or(u64::MAX, |p| p as u64)),
    ("gather_and", |v, o| {
        let len = o.a.len;
        let out = &mut o.dst.get_mut()[..len.div_ceil(3)];
        pick!(v, gather_and(o.a.get(), 3, 1, 3, out));
        digest(out)
    }),
    ("scatter_or", |v, o| {
        let len = o.a.len;
        pick!(v, scatter_or(&o.a.get()[..len.div_ceil(3)], 3, 1, o.dst.get_mut()));
        0
    }),
    ("deposit", |v, o| pick!(v, deposit(o.a.get(), 0, o.b.get(), o.dst.get_mut())) as u64),
    ("extract", |v, o| pick!(v, extract(o.a.get(), o.b.get(), o.dst.get_mut(), 5)) as u64),
    ("fill_periodic", |v, o| {
        let bits = o.dst.len * 64;
        pick!(v, fill_periodic(o.dst.get_mut(), 3, bits, &[0b1_0110_1101], 9));
        0
    }),
    ("and_shifted", |v, o| {
        pick!(v, and_shifted(o.dst.get_mut(), 5));
        0
    }),
    ("transpose64", |v, o| {
        pick!(v, transpose64(o.dst.get_mut()));
        digest(o.dst.get())
    }),
];

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).map(|i| args[i + 1].clone());
    let rounds: usize = value("--rounds").map_or(31, |r| r.parse().expect("--rounds N"));
    let kernel = |flag: &str, default: KernelKind| {
        let kind = value(flag).map_or(default, |k| k.parse().expect("a kernel name"));
        Kernel::new(kind).unwrap_or_else(|e| panic!("{flag}: {e}"))
    };
    let (base, other) = (kernel("--base", KernelKind::Avx2), kernel("--other", KernelKind::Avx512));
    let ops_filter: Option<Vec<String>> = value("--ops").map(|s| s.split(',').map(str::to_owned).collect());
    let sizes_filter: Option<Vec<String>> = value("--sizes").map(|s| s.split(',').map(str::to_owned).collect());
    let align: Option<usize> = value("--align").map(|a| a.parse().expect("--align BYTES"));
    println!(
        "base {base}, other {other}, dispatched = {} (auto unless BITMAP_CORE_KERNEL), {rounds} rounds, align {}",
        Kernel::active(),
        align.map_or("as allocated".to_owned(), |a| format!("{a} B past 64")),
    );
    println!(
        "{:<22} {:>7} {:>11} {:>11} {:>11} {:>9} {:>9}",
        "op",
        "size",
        base.name(),
        other.name(),
        "dispatched",
        format!("{base}/{other}"),
        format!("{base}/disp")
    );
    let variants = [Variant::Kernel(base), Variant::Kernel(other), Variant::Dispatched];
    for &(bytes, label) in &SIZES {
        if sizes_filter.as_ref().is_some_and(|f| !f.iter().any(|s| s == label)) {
            continue;
        }
        let mut operands = Operands::new(bytes / 8, align);
        for &(name, op) in OPS {
            if ops_filter.as_ref().is_some_and(|f| !f.iter().any(|s| name.contains(s.as_str()))) {
                continue;
            }
            // The same answer from every variant, before any timing.
            // (At most 32 KiB: building the operands is slower than the op.)
            let check_words = (bytes / 8).min(4096);
            let expected = op(variants[0], &mut Operands::new(check_words, align));
            for variant in &variants[1..] {
                let got = op(*variant, &mut Operands::new(check_words, align));
                assert_eq!(got, expected, "{name} at {label}: variants disagree");
            }
            // Calls per batch, from one timed call of the base.
            let start = Instant::now();
            black_box(op(variants[0], &mut operands));
            let once = start.elapsed().as_nanos().max(1) as f64;
            let batch = ((BATCH_NS / once) as usize).clamp(1, 1_000_000);
            let mut times: [Vec<f64>; 3] = Default::default();
            let mut ratios: [Vec<f64>; 2] = Default::default();
            for round in 0..=rounds {
                let mut ns = [0.0; 3];
                // Alternate the order, so neither kernel always runs first.
                let order: [usize; 3] = if round % 2 == 0 { [0, 1, 2] } else { [2, 1, 0] };
                for &i in &order {
                    let start = Instant::now();
                    for _ in 0..batch {
                        black_box(op(variants[i], black_box(&mut operands)));
                    }
                    ns[i] = start.elapsed().as_nanos() as f64 / batch as f64;
                }
                if round == 0 {
                    continue; // warm-up
                }
                for i in 0..3 {
                    times[i].push(ns[i]);
                }
                ratios[0].push(ns[0] / ns[1]);
                ratios[1].push(ns[0] / ns[2]);
            }
            let show = |ns: f64| {
                if ns < 1e3 {
                    format!("{ns:.2} ns")
                } else if ns < 1e6 {
                    format!("{:.2} µs", ns / 1e3)
                } else {
                    format!("{:.2} ms", ns / 1e6)
                }
            };
            println!(
                "{name:<22} {label:>7} {:>11} {:>11} {:>11} {:>8.3}x {:>8.3}x",
                show(median(&mut times[0])),
                show(median(&mut times[1])),
                show(median(&mut times[2])),
                median(&mut ratios[0]),
                median(&mut ratios[1]),
            );
        }
    }
}
