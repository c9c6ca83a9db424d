//! Iteration over set bits at three densities, with our `Bitmap::ones()`
//! against the iterators of the crates a Rust user would pick instead.
//!
//! Groups `ones_1pct`, `ones_50pct`, `ones_99pct`; throughput counts the
//! bytes of the bitmap. Each iteration sums the indices, the least work a
//! consumer can do with them.
//!
//! The sparse group runs over all of [`SIZES`], since scanning 64 MiB for
//! 1% of bits is where memory bandwidth shows. The dense groups stop at
//! 4 MiB: there, iteration is bound by the work per index, not by memory
//! (a 4 MiB bitmap at 99% already yields 33 million indices), and a 64 MiB
//! one would spend 0.3 to 8 seconds per pass, depending on the crate, to
//! show the same per-index cost again.
//!
//! Implementations: `bitmap` (`Bitmap::ones()`; iteration is word-at-a-time
//! `trailing_zeros` and does not go through the SIMD kernels, so it is
//! measured once, on the active kernel); `scalar_loop`, the plain
//! `trailing_zeros` loop over `u64` words; `copy`, a copy of the same bytes;
//! `fixedbitset` (`ones()`), `bitvec` (`iter_ones()`) and `roaring`
//! (`iter()`, built from the same bits).

#![forbid(unsafe_code)]

use std::cell::OnceCell;
use std::hint::black_box;

use bitmap_core::Bitmap;
use bitplan_benches::data::random_bits;
use bitplan_benches::harness::bench_lazy;
use bitplan_benches::peers::{to_bitvec, to_fixedbitset, to_roaring};
use bitplan_benches::reference::{IndexFingerprint, assert_value_eq, assert_words_eq, copy_words};
use bitplan_benches::sizes::{SIZES, configure};
use criterion::{Criterion, Throughput};

/// The densities: sparse, balanced and nearly full, as group-name suffix,
/// share of set bits, and the largest size measured (see the module
/// documentation).
const DENSITIES: [(&str, f64, usize); 3] = [("1pct", 0.01, 1 << 29), ("50pct", 0.5, 1 << 25), ("99pct", 0.99, 1 << 25)];

fn main() {
    let mut c = Criterion::default().configure_from_args();
    for (label, density, max_bits) in DENSITIES {
        bench_ones(&mut c, label, density, max_bits);
    }
    c.final_summary();
}

/// The sum of `indices`, wrapping: what each timed iteration computes.
#[inline]
fn index_sum(indices: impl Iterator<Item = usize>) -> usize {
    indices.fold(0, usize::wrapping_add)
}

/// The indices of the set bits of `words`, with the loop a Rust user writes
/// over raw words: take the lowest set bit with `trailing_zeros`, clear it
/// with `w & (w - 1)`.
fn scalar_loop_ones(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(|(i, &word)| {
        let mut w = word;
        std::iter::from_fn(move || {
            (w != 0).then(|| {
                let bit = w.trailing_zeros() as usize;
                w &= w - 1;
                i * 64 + bit
            })
        })
    })
}

fn bench_ones(c: &mut Criterion, density_label: &str, density: f64, max_bits: usize) {
    let group_name = format!("ones_{density_label}");
    let mut group = c.benchmark_group(&group_name);
    for size in SIZES.into_iter().filter(|size| size.bits <= max_bits) {
        let bytes = size.bytes() as u64;
        configure(&mut group, bytes);
        group.throughput(Throughput::Bytes(bytes));
        let input = OnceCell::new();
        let input = || {
            input.get_or_init(|| {
                let words = random_bits(size.words(), density, 0x0E5 + size.bits as u64);
                let expected = IndexFingerprint::of_words(&words);
                (words, expected)
            })
        };
        let check = |function: &str, indices: &mut dyn Iterator<Item = usize>| {
            let id = format!("{group_name}/{function}/{}", size.label);
            assert_value_eq(&id, IndexFingerprint::of(indices), input().1);
        };

        bench_lazy(
            &mut group,
            "bitmap",
            size.label,
            || {
                let bits = Bitmap::from_word_slice(size.bits, &input().0).expect("whole words");
                check("bitmap", &mut bits.ones());
                bits
            },
            |bits| index_sum(black_box(&*bits).ones()),
        );
        bench_lazy(
            &mut group,
            "scalar_loop",
            size.label,
            || {
                let words = &input().0;
                check("scalar_loop", &mut scalar_loop_ones(words));
                words
            },
            |words| index_sum(scalar_loop_ones(black_box(words))),
        );
        bench_lazy(
            &mut group,
            "copy",
            size.label,
            || {
                let words = &input().0;
                let mut out = vec![0; words.len()];
                copy_words(&mut out, words);
                assert_words_eq(&format!("{group_name}/copy/{}", size.label), &out, words);
                (out, words)
            },
            |(out, words)| copy_words(black_box(out), black_box(words)),
        );
        bench_lazy(
            &mut group,
            "fixedbitset",
            size.label,
            || {
                let set = to_fixedbitset(&input().0);
                check("fixedbitset", &mut set.ones());
                set
            },
            |set| index_sum(black_box(&*set).ones()),
        );
        bench_lazy(
            &mut group,
            "bitvec",
            size.label,
            || {
                let bits = to_bitvec(&input().0);
                check("bitvec", &mut bits.iter_ones());
                bits
            },
            |bits| index_sum(black_box(&*bits).iter_ones()),
        );
        bench_lazy(
            &mut group,
            "roaring",
            size.label,
            || {
                let set = to_roaring(&input().0);
                check("roaring", &mut set.iter().map(|i| i as usize));
                set
            },
            |set| index_sum(black_box(&*set).iter().map(|i| i as usize)),
        );
    }
    group.finish();
}
