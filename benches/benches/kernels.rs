//! Word-level operations: every kernel this CPU can run, timed in one process
//! next to the baselines a Rust user would otherwise reach for.
//!
//! Groups (`op/implementation/size`):
//!
//! - `popcount`, `and_assign`, `or_assign`, `xor_assign`, `and_not_assign`,
//!   `not_assign`, `and_popcount`: one bitmap of each size in [`SIZES`];
//!   throughput counts the bytes of one bitmap.
//! - `union_many`: the union of [`UNION_SOURCES`] bitmaps; throughput counts
//!   the bytes of all sources.
//! - `cutover/popcount`, `cutover/or_assign`: 1 to 32 words, to place
//!   bitmap-core's `SMALL_WORDS` cut-over between the inline scalar loop and
//!   the dispatched kernel.
//!
//! Implementations: each kernel by name (`scalar`, `portable`, `avx2`,
//! `neon`) through its `Kernel` methods; `bitmap`, the `Bitmap` method users
//! call (dispatched to the active kernel); `scalar_loop`, the plain loop
//! over `u64` words; `copy`, a plain copy of the same bytes (the memory
//! limit); and `fixedbitset`, `bitvec`, `roaring` where they have the
//! operation.

#![forbid(unsafe_code)]

use std::cell::OnceCell;
use std::hint::black_box;

use bitmap_core::Bitmap;
use bitmap_core::kernel::{self, Kernel};
use bitplan_benches::data::random_words;
use bitplan_benches::harness::{bench_copy, bench_lazy};
use bitplan_benches::peers::{
    BitVec64, assert_roaring_eq, bitvec_words, fixedbitset_words, to_bitvec, to_fixedbitset, to_roaring,
};
use bitplan_benches::reference::{self, BinaryOp, assert_value_eq, assert_words_eq};
use bitplan_benches::sizes::{SIZES, Size, configure};
use criterion::measurement::Measurement;
use criterion::{BenchmarkGroup, Criterion, Throughput};
use roaring::MultiOps;

/// Seeds of the two operands.
const SEED_A: u64 = 0xA;
const SEED_B: u64 = 0xB;

/// How many bitmaps `union_many` unites: as many as adapters in the largest
/// plan benchmark.
const UNION_SOURCES: usize = 8;

/// The word counts of the cut-over groups.
const CUTOVER_WORDS: [usize; 6] = [1, 2, 4, 8, 16, 32];

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench_popcount(&mut c);
    for op in BinaryOp::ALL {
        bench_binary_assign(&mut c, op);
    }
    bench_not(&mut c);
    bench_and_popcount(&mut c);
    bench_union_many(&mut c);
    bench_cutover(&mut c);
    c.final_summary();
}

/// A bitmap of `size` over `words` (whose length is a whole number of
/// words, so the conversion cannot fail).
fn bitmap(size: Size, words: &[u64]) -> Bitmap {
    Bitmap::from_word_slice(size.bits, words).expect("benchmark inputs are whole words")
}

/// Starts the benchmarks of one size in `group`: criterion's sampling and
/// the throughput in bytes.
fn start_size<M: Measurement>(group: &mut BenchmarkGroup<'_, M>, bytes: usize) {
    let bytes = bytes as u64;
    configure(group, bytes);
    group.throughput(Throughput::Bytes(bytes));
}

fn bench_popcount(c: &mut Criterion) {
    let mut group = c.benchmark_group("popcount");
    for size in SIZES {
        start_size(&mut group, size.bytes());
        let input = OnceCell::new();
        let input = || {
            input.get_or_init(|| {
                let words = random_words(size.words(), SEED_A);
                let expected = reference::popcount(&words);
                (words, expected)
            })
        };
        let check = |function: &str, got: u64| {
            assert_value_eq(&format!("popcount/{function}/{}", size.label), got, input().1);
        };

        for k in Kernel::available() {
            bench_lazy(
                &mut group,
                k.name(),
                size.label,
                || {
                    let words = &input().0;
                    check(k.name(), k.popcount(words));
                    words
                },
                |words| k.popcount(black_box(words)),
            );
        }
        bench_lazy(
            &mut group,
            "bitmap",
            size.label,
            || {
                let bits = bitmap(size, &input().0);
                check("bitmap", bits.popcount() as u64);
                bits
            },
            |bits| black_box(&*bits).popcount(),
        );
        // The loop a Rust user writes without a bitmap crate.
        let scalar_loop = |words: &[u64]| words.iter().map(|w| w.count_ones() as u64).sum::<u64>();
        bench_lazy(
            &mut group,
            "scalar_loop",
            size.label,
            || {
                let words = &input().0;
                check("scalar_loop", scalar_loop(words));
                words
            },
            |words| scalar_loop(black_box(words)),
        );
        bench_copy(&mut group, size.label, || vec![&input().0[..]]);
        bench_lazy(
            &mut group,
            "fixedbitset",
            size.label,
            || {
                let set = to_fixedbitset(&input().0);
                check("fixedbitset", set.count_ones(..) as u64);
                set
            },
            |set| black_box(&*set).count_ones(..),
        );
        bench_lazy(
            &mut group,
            "bitvec",
            size.label,
            || {
                let bits = to_bitvec(&input().0);
                check("bitvec", bits.count_ones() as u64);
                bits
            },
            |bits| black_box(&*bits).count_ones(),
        );
        // No roaring here: `RoaringBitmap::len` adds up per-container counts
        // kept up to date by every update, so it does not count bits at all.
    }
    group.finish();
}

/// `dst OP= src` with the kernel's method.
#[inline]
fn kernel_assign(k: Kernel, op: BinaryOp, dst: &mut [u64], src: &[u64]) {
    match op {
        BinaryOp::And => k.and_assign(dst, src),
        BinaryOp::Or => k.or_assign(dst, src),
        BinaryOp::Xor => k.xor_assign(dst, src),
        BinaryOp::AndNot => k.and_not_assign(dst, src),
    }
}

/// `dst OP= src` with the `Bitmap` method.
#[inline]
fn bitmap_assign(op: BinaryOp, dst: &mut Bitmap, src: &Bitmap) {
    match op {
        BinaryOp::And => dst.intersect_with(src),
        BinaryOp::Or => dst.union_with(src),
        BinaryOp::Xor => dst.symmetric_difference_with(src),
        BinaryOp::AndNot => dst.difference_with(src),
    }
}

/// `dst OP= src` with the plain loop a Rust user writes, one loop per
/// operation so each vectorises on its own.
#[inline]
fn scalar_loop_assign(op: BinaryOp, dst: &mut [u64], src: &[u64]) {
    match op {
        BinaryOp::And => dst.iter_mut().zip(src).for_each(|(d, s)| *d &= s),
        BinaryOp::Or => dst.iter_mut().zip(src).for_each(|(d, s)| *d |= s),
        BinaryOp::Xor => dst.iter_mut().zip(src).for_each(|(d, s)| *d ^= s),
        BinaryOp::AndNot => dst.iter_mut().zip(src).for_each(|(d, s)| *d &= !s),
    }
}

/// `dst OP= src` with fixedbitset's in-place method.
#[inline]
fn fixedbitset_assign(op: BinaryOp, dst: &mut fixedbitset::FixedBitSet, src: &fixedbitset::FixedBitSet) {
    match op {
        BinaryOp::And => dst.intersect_with(src),
        BinaryOp::Or => dst.union_with(src),
        BinaryOp::Xor => dst.symmetric_difference_with(src),
        BinaryOp::AndNot => dst.difference_with(src),
    }
}

/// `dst OP= src` with roaring's assign operators.
#[inline]
fn roaring_assign(op: BinaryOp, dst: &mut roaring::RoaringBitmap, src: &roaring::RoaringBitmap) {
    match op {
        BinaryOp::And => *dst &= src,
        BinaryOp::Or => *dst |= src,
        BinaryOp::Xor => *dst ^= src,
        BinaryOp::AndNot => *dst -= src,
    }
}

/// The in-place binary operation `op`: `dst OP= src`, repeated on the same
/// `dst` (after the first iteration AND, OR and AND-NOT no longer change it
/// and XOR toggles it, but every kernel still reads both operands and writes
/// `dst` in full, so the time does not depend on the bits).
fn bench_binary_assign(c: &mut Criterion, op: BinaryOp) {
    let group_name = op.assign_name();
    let mut group = c.benchmark_group(group_name);
    for size in SIZES {
        start_size(&mut group, size.bytes());
        let input = OnceCell::new();
        let input = || {
            input.get_or_init(|| {
                let a = random_words(size.words(), SEED_A);
                let b = random_words(size.words(), SEED_B);
                let expected = op.words(&a, &b);
                (a, b, expected)
            })
        };
        let check = |function: &str, got: &[u64]| {
            assert_words_eq(&format!("{group_name}/{function}/{}", size.label), got, &input().2);
        };

        for k in Kernel::available() {
            bench_lazy(
                &mut group,
                k.name(),
                size.label,
                || {
                    let (a, b, _) = input();
                    let mut dst = a.clone();
                    kernel_assign(k, op, &mut dst, b);
                    check(k.name(), &dst);
                    (dst, &b[..])
                },
                |(dst, src)| kernel_assign(k, op, black_box(dst), black_box(src)),
            );
        }
        bench_lazy(
            &mut group,
            "bitmap",
            size.label,
            || {
                let (a, b, _) = input();
                let (mut dst, src) = (bitmap(size, a), bitmap(size, b));
                bitmap_assign(op, &mut dst, &src);
                check("bitmap", dst.as_words());
                (dst, src)
            },
            |(dst, src)| bitmap_assign(op, black_box(dst), black_box(src)),
        );
        bench_lazy(
            &mut group,
            "scalar_loop",
            size.label,
            || {
                let (a, b, _) = input();
                let mut dst = a.clone();
                scalar_loop_assign(op, &mut dst, b);
                check("scalar_loop", &dst);
                (dst, &b[..])
            },
            |(dst, src)| scalar_loop_assign(op, black_box(dst), black_box(src)),
        );
        bench_copy(&mut group, size.label, || vec![&input().1[..]]);
        bench_lazy(
            &mut group,
            "fixedbitset",
            size.label,
            || {
                let (a, b, _) = input();
                let (mut dst, src) = (to_fixedbitset(a), to_fixedbitset(b));
                fixedbitset_assign(op, &mut dst, &src);
                check("fixedbitset", &fixedbitset_words(&dst));
                (dst, src)
            },
            |(dst, src)| fixedbitset_assign(op, black_box(dst), black_box(src)),
        );
        // bitvec has `&=`, `|=` and `^=` but no AND-NOT.
        if op != BinaryOp::AndNot {
            let bitvec_assign = |dst: &mut BitVec64, src: &BitVec64| match op {
                BinaryOp::And => *dst &= src.as_bitslice(),
                BinaryOp::Or => *dst |= src.as_bitslice(),
                BinaryOp::Xor => *dst ^= src.as_bitslice(),
                BinaryOp::AndNot => unreachable!("bitvec has no AND-NOT"),
            };
            bench_lazy(
                &mut group,
                "bitvec",
                size.label,
                || {
                    let (a, b, _) = input();
                    let (mut dst, src) = (to_bitvec(a), to_bitvec(b));
                    bitvec_assign(&mut dst, &src);
                    check("bitvec", &bitvec_words(&dst));
                    (dst, src)
                },
                |(dst, src)| bitvec_assign(black_box(dst), black_box(src)),
            );
        }
        bench_lazy(
            &mut group,
            "roaring",
            size.label,
            || {
                let (a, b, _) = input();
                let (mut dst, src) = (to_roaring(a), to_roaring(b));
                roaring_assign(op, &mut dst, &src);
                assert_roaring_eq(&format!("{group_name}/roaring/{}", size.label), &dst, &input().2);
                (dst, src)
            },
            |(dst, src)| roaring_assign(op, black_box(dst), black_box(src)),
        );
    }
    group.finish();
}

/// In-place complement, repeated on the same bitmap (which toggles it).
fn bench_not(c: &mut Criterion) {
    let mut group = c.benchmark_group("not_assign");
    for size in SIZES {
        start_size(&mut group, size.bytes());
        let input = OnceCell::new();
        let input = || {
            input.get_or_init(|| {
                let words = random_words(size.words(), SEED_A);
                let expected = reference::not(&words);
                (words, expected)
            })
        };
        let check = |function: &str, got: &[u64]| {
            assert_words_eq(&format!("not_assign/{function}/{}", size.label), got, &input().1);
        };

        for k in Kernel::available() {
            bench_lazy(
                &mut group,
                k.name(),
                size.label,
                || {
                    let mut words = input().0.clone();
                    k.not_assign(&mut words);
                    check(k.name(), &words);
                    words
                },
                |words| k.not_assign(black_box(words)),
            );
        }
        bench_lazy(
            &mut group,
            "bitmap",
            size.label,
            || {
                let mut bits = bitmap(size, &input().0);
                bits.invert();
                check("bitmap", bits.as_words());
                bits
            },
            |bits| black_box(bits).invert(),
        );
        let scalar_loop = |words: &mut [u64]| words.iter_mut().for_each(|w| *w = !*w);
        bench_lazy(
            &mut group,
            "scalar_loop",
            size.label,
            || {
                let mut words = input().0.clone();
                scalar_loop(&mut words);
                check("scalar_loop", &words);
                words
            },
            |words| scalar_loop(black_box(words)),
        );
        bench_copy(&mut group, size.label, || vec![&input().0[..]]);
        bench_lazy(
            &mut group,
            "fixedbitset",
            size.label,
            || {
                let mut set = to_fixedbitset(&input().0);
                set.toggle_range(..);
                check("fixedbitset", &fixedbitset_words(&set));
                set
            },
            |set| black_box(set).toggle_range(..),
        );
        // bitvec's `!` consumes the vector and complements it in place.
        let bitvec_not = |bits: &mut BitVec64| *bits = !std::mem::take(bits);
        bench_lazy(
            &mut group,
            "bitvec",
            size.label,
            || {
                let mut bits = to_bitvec(&input().0);
                bitvec_not(&mut bits);
                check("bitvec", &bitvec_words(&bits));
                bits
            },
            |bits| bitvec_not(black_box(bits)),
        );
        // No roaring: it has no complement within a fixed universe.
    }
    group.finish();
}

/// `popcount(a & b)` without materialising `a & b`, against materialising
/// it (the target: `and_popcount` at least 2× `(&a & &b).popcount()`).
fn bench_and_popcount(c: &mut Criterion) {
    let mut group = c.benchmark_group("and_popcount");
    for size in SIZES {
        start_size(&mut group, size.bytes());
        let input = OnceCell::new();
        let input = || {
            input.get_or_init(|| {
                let a = random_words(size.words(), SEED_A);
                let b = random_words(size.words(), SEED_B);
                let expected = reference::popcount(&BinaryOp::And.words(&a, &b));
                (a, b, expected)
            })
        };
        let check = |function: &str, got: u64| {
            assert_value_eq(&format!("and_popcount/{function}/{}", size.label), got, input().2);
        };

        for k in Kernel::available() {
            bench_lazy(
                &mut group,
                k.name(),
                size.label,
                || {
                    let (a, b, _) = input();
                    check(k.name(), k.and_popcount(a, b));
                    (&a[..], &b[..])
                },
                |(a, b)| k.and_popcount(black_box(a), black_box(b)),
            );
        }
        let bitmaps = || {
            let (a, b, _) = input();
            (bitmap(size, a), bitmap(size, b))
        };
        bench_lazy(
            &mut group,
            "bitmap",
            size.label,
            || {
                let (a, b) = bitmaps();
                check("bitmap", a.and_popcount(&b) as u64);
                (a, b)
            },
            |(a, b)| black_box(&*a).and_popcount(black_box(b)),
        );
        bench_lazy(
            &mut group,
            "bitmap_materialized",
            size.label,
            || {
                let (a, b) = bitmaps();
                check("bitmap_materialized", (&a & &b).popcount() as u64);
                (a, b)
            },
            |(a, b)| (black_box(&*a) & black_box(&*b)).popcount(),
        );
        let scalar_loop = |a: &[u64], b: &[u64]| a.iter().zip(b).map(|(a, b)| (a & b).count_ones() as u64).sum::<u64>();
        bench_lazy(
            &mut group,
            "scalar_loop",
            size.label,
            || {
                let (a, b, _) = input();
                check("scalar_loop", scalar_loop(a, b));
                (&a[..], &b[..])
            },
            |(a, b)| scalar_loop(black_box(a), black_box(b)),
        );
        bench_copy(&mut group, size.label, || vec![&input().0[..]]);
        bench_lazy(
            &mut group,
            "fixedbitset",
            size.label,
            || {
                let (a, b, _) = input();
                let (a, b) = (to_fixedbitset(a), to_fixedbitset(b));
                check("fixedbitset", a.intersection_count(&b) as u64);
                (a, b)
            },
            |(a, b)| black_box(&*a).intersection_count(black_box(b)),
        );
        bench_lazy(
            &mut group,
            "roaring",
            size.label,
            || {
                let (a, b, _) = input();
                let (a, b) = (to_roaring(a), to_roaring(b));
                check("roaring", a.intersection_len(&b));
                (a, b)
            },
            |(a, b)| black_box(&*a).intersection_len(black_box(b)),
        );
        // No bitvec: it has no fused count, and materialising is measured
        // above with our own bitmap.
    }
    group.finish();
}

/// The union of [`UNION_SOURCES`] bitmaps, written over an existing one.
fn bench_union_many(c: &mut Criterion) {
    let mut group = c.benchmark_group("union_many");
    for size in SIZES {
        start_size(&mut group, size.bytes() * UNION_SOURCES);
        let input = OnceCell::new();
        let input = || {
            input.get_or_init(|| {
                let sources: Vec<Vec<u64>> =
                    (0..UNION_SOURCES).map(|i| random_words(size.words(), SEED_A + i as u64)).collect();
                let expected = reference::union(size.words(), &sources);
                (sources, expected)
            })
        };
        let slices = || input().0.iter().map(Vec::as_slice).collect::<Vec<&[u64]>>();
        let check = |function: &str, got: &[u64]| {
            assert_words_eq(&format!("union_many/{function}/{}", size.label), got, &input().1);
        };

        for k in Kernel::available() {
            bench_lazy(
                &mut group,
                k.name(),
                size.label,
                || {
                    let sources = slices();
                    let mut dst = vec![0; size.words()];
                    k.union_many(&mut dst, &sources);
                    check(k.name(), &dst);
                    (dst, sources)
                },
                |(dst, sources)| k.union_many(black_box(dst), black_box(sources)),
            );
        }
        bench_lazy(
            &mut group,
            "bitmap",
            size.label,
            || {
                let sources: Vec<Bitmap> = input().0.iter().map(|s| bitmap(size, s)).collect();
                let mut dst = Bitmap::new(size.bits);
                dst.union_many_into(&sources.iter().collect::<Vec<_>>()).expect("same lengths");
                check("bitmap", dst.as_words());
                (dst, sources)
            },
            |(dst, sources)| {
                let sources: [&Bitmap; UNION_SOURCES] = std::array::from_fn(|i| &sources[i]);
                black_box(dst).union_many_into(black_box(&sources)).expect("same lengths")
            },
        );
        // The loops a Rust user writes: clear, then OR each source in turn.
        let scalar_loop = |dst: &mut [u64], sources: &[&[u64]]| {
            dst.fill(0);
            for source in sources {
                dst.iter_mut().zip(*source).for_each(|(d, s)| *d |= s);
            }
        };
        bench_lazy(
            &mut group,
            "scalar_loop",
            size.label,
            || {
                let sources = slices();
                let mut dst = vec![0; size.words()];
                scalar_loop(&mut dst, &sources);
                check("scalar_loop", &dst);
                (dst, sources)
            },
            |(dst, sources)| scalar_loop(black_box(dst), black_box(sources)),
        );
        bench_copy(&mut group, size.label, slices);
        let fixedbitset_union = |dst: &mut fixedbitset::FixedBitSet, sources: &[fixedbitset::FixedBitSet]| {
            dst.clear();
            for source in sources {
                dst.union_with(source);
            }
        };
        bench_lazy(
            &mut group,
            "fixedbitset",
            size.label,
            || {
                let sources: Vec<_> = input().0.iter().map(|s| to_fixedbitset(s)).collect();
                let mut dst = fixedbitset::FixedBitSet::with_capacity(size.bits);
                fixedbitset_union(&mut dst, &sources);
                check("fixedbitset", &fixedbitset_words(&dst));
                (dst, sources)
            },
            |(dst, sources)| fixedbitset_union(black_box(dst), black_box(sources)),
        );
        let bitvec_union = |dst: &mut BitVec64, sources: &[BitVec64]| {
            dst.fill(false);
            for source in sources {
                *dst |= source.as_bitslice();
            }
        };
        bench_lazy(
            &mut group,
            "bitvec",
            size.label,
            || {
                let sources: Vec<_> = input().0.iter().map(|s| to_bitvec(s)).collect();
                let mut dst = to_bitvec(&vec![0; size.words()]);
                bitvec_union(&mut dst, &sources);
                check("bitvec", &bitvec_words(&dst));
                (dst, sources)
            },
            |(dst, sources)| bitvec_union(black_box(dst), black_box(sources)),
        );
        // roaring's many-way union (`MultiOps`) builds a new bitmap.
        bench_lazy(
            &mut group,
            "roaring",
            size.label,
            || {
                let sources: Vec<_> = input().0.iter().map(|s| to_roaring(s)).collect();
                assert_roaring_eq(&format!("union_many/roaring/{}", size.label), &sources.iter().union(), &input().1);
                sources
            },
            |sources| black_box(&*sources).iter().union(),
        );
    }
    group.finish();
}

/// Tiny inputs: the dispatched function (which runs the scalar loop inline
/// up to `SMALL_WORDS` words and calls the active kernel above) against each
/// kernel called directly, to show where the cut-over belongs.
fn bench_cutover(c: &mut Criterion) {
    let mut popcount = c.benchmark_group("cutover/popcount");
    for words in CUTOVER_WORDS {
        let value = words.to_string();
        start_size(&mut popcount, words * 8);
        let input = random_words(words, SEED_A);
        let expected = reference::popcount(&input);
        let check = |function: &str, got: u64| {
            assert_value_eq(&format!("cutover/popcount/{function}/{words}"), got, expected);
        };
        bench_lazy(
            &mut popcount,
            "dispatched",
            &value,
            || check("dispatched", kernel::popcount(&input)),
            |()| kernel::popcount(black_box(input.as_slice())),
        );
        for k in Kernel::available() {
            bench_lazy(
                &mut popcount,
                k.name(),
                &value,
                || check(k.name(), k.popcount(&input)),
                |()| k.popcount(black_box(input.as_slice())),
            );
        }
    }
    popcount.finish();

    let mut or_assign = c.benchmark_group("cutover/or_assign");
    for words in CUTOVER_WORDS {
        let value = words.to_string();
        start_size(&mut or_assign, words * 8);
        let a = random_words(words, SEED_A);
        let b = random_words(words, SEED_B);
        let expected = BinaryOp::Or.words(&a, &b);
        let check = |function: &str, got: &[u64]| {
            assert_words_eq(&format!("cutover/or_assign/{function}/{words}"), got, &expected);
        };
        bench_lazy(
            &mut or_assign,
            "dispatched",
            &value,
            || {
                let mut dst = a.clone();
                kernel::or_assign(&mut dst, &b);
                check("dispatched", &dst);
                dst
            },
            |dst| kernel::or_assign(black_box(dst), black_box(b.as_slice())),
        );
        for k in Kernel::available() {
            bench_lazy(
                &mut or_assign,
                k.name(),
                &value,
                || {
                    let mut dst = a.clone();
                    k.or_assign(&mut dst, &b);
                    check(k.name(), &dst);
                    dst
                },
                |dst| k.or_assign(black_box(dst), black_box(b.as_slice())),
            );
        }
    }
    or_assign.finish();
}
