//! Prefix hits for hybrid models: the bit-move kernels of `bitmap-core`,
//! the `bitmap_core::layout` moves, and `prefetch_policy`'s fold/unfold,
//! each next to its baseline in the same run.
//!
//! Groups (`op/implementation/size`):
//!
//! - `bitmoves/<op>`: each bit-move kernel (`gather_and` as the rank
//!   reduction of 8 adjacent bits, `scatter_or` and `gather_and` with
//!   stride 8, `deposit`, `extract`, `fill_periodic`, `and_shifted`,
//!   `transpose64`) over 262,144 bits (32 KiB), per kernel, and `copy`: a
//!   copy of the same bytes.
//! - `layout/<op>`: `split_rows_into` and `join_rows_into` at 64 rows ×
//!   4,096 bits and 8 rows × 32,768 bits, `deposit_rows_into` and
//!   `extract_rows_into` over 64 rows × 4,096 bits with a 50% mask; `copy`
//!   copies 32 KiB.
//! - `fold_unfold/<shape>`: `fold_unfold_ranked` (`bitmap`, allocating),
//!   `fold_unfold_ranked_into` (`into`, reused workspace and mask) and
//!   `lmcache_loop` (LMCache's loop: for each group, for each length, test
//!   the R rank bits), at `C x R x G` with the windows named in the value.
//! - `fold_unfold_grouped/<shape>`: the grouped form over the same cells as
//!   64 rows, `bitmap` and `into`.

#![forbid(unsafe_code)]

use std::hint::black_box;

use bitmap_core::Bitmap;
use bitmap_core::kernel::{self, Kernel};
use bitmap_core::layout::{deposit_rows_into, extract_rows_into, join_rows_into, split_rows_into};
use bitplan_benches::data::random_words;
use bitplan_benches::harness::{bench_copy, bench_lazy};
use criterion::{Criterion, Throughput};
use prefetch_policy::reference::lmcache_fold_unfold_ranked;
use prefetch_policy::{
    FoldWorkspace, fold_unfold_grouped, fold_unfold_grouped_into, fold_unfold_ranked, fold_unfold_ranked_into,
};

/// Words of the primitives' inputs: 262,144 bits.
const WORDS: usize = 4096;
const VALUE: &str = "32KiB";

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench_bitmoves(&mut c);
    bench_layout(&mut c);
    bench_fold_unfold(&mut c);
    c.final_summary();
}

/// Mostly-set words: a rank reduction or run test over them keeps work to
/// do (random words would AND to nothing).
fn dense(words: usize, seed: u64) -> Vec<u64> {
    let a = random_words(words, seed);
    let b = random_words(words, seed ^ 0x55);
    a.iter().zip(&b).map(|(x, y)| x | y | (x.rotate_left(7) & y)).collect()
}

fn group<'c>(c: &'c mut Criterion, name: &str) -> criterion::BenchmarkGroup<'c, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes((WORDS * 8) as u64));
    group
}

fn bench_bitmoves(c: &mut Criterion) {
    let src = dense(WORDS, 1);
    let mask = random_words(WORDS, 2);
    // Each kernel's result is checked against the scalar kernel's before
    // it is timed.
    type Op = fn(Kernel, &[u64], &[u64], &mut [u64]);
    let ops: [(&str, Op); 8] = [
        ("gather_and_r8", |k, s, _, d| k.gather_and(s, 8, 0, 8, &mut d[..s.len() / 8])),
        ("gather_stride8", |k, s, _, d| k.gather_and(s, 8, 3, 1, &mut d[..s.len() / 8])),
        ("scatter_stride8", |k, s, _, d| {
            d.fill(0);
            k.scatter_or(&s[..s.len() / 8], 8, 3, d);
        }),
        ("deposit", |k, s, m, d| {
            k.deposit(s, 0, m, d);
        }),
        ("extract", |k, s, m, d| {
            k.extract(s, m, d, 0);
        }),
        ("fill_periodic", |k, s, _, d| {
            d.fill(0);
            k.fill_periodic(d, 3, d.len() * 64, &s[..2], 80);
        }),
        ("and_shifted", |k, s, _, d| {
            d.copy_from_slice(s);
            k.and_shifted(d, 8 * 16);
        }),
        ("transpose64", |k, s, _, d| {
            d.copy_from_slice(s);
            k.transpose64(d);
        }),
    ];
    for (name, op) in ops {
        let mut g = group(c, &format!("bitmoves/{name}"));
        let mut expected = vec![0u64; WORDS];
        op(Kernel::scalar(), &src, &mask, &mut expected);
        for kernel in Kernel::available() {
            let (src, mask, expected) = (&src, &mask, &expected);
            bench_lazy(
                &mut g,
                kernel.name(),
                VALUE,
                || {
                    let mut out = vec![0u64; WORDS];
                    op(kernel, src, mask, &mut out);
                    assert_eq!(&out, expected, "{name} on {kernel}");
                    out
                },
                |out| op(kernel, black_box(src), black_box(mask), out),
            );
        }
        bench_copy(&mut g, VALUE, || vec![&src[..]]);
        g.finish();
    }
}

fn bench_layout(c: &mut Criterion) {
    let flat = Bitmap::from_word_slice(WORDS * 64, &dense(WORDS, 3)).unwrap();
    let copy_source = flat.as_words().to_vec();
    for rows_count in [64, 8] {
        let row_len = WORDS * 64 / rows_count;
        let value = format!("{rows_count}x{row_len}");
        let mut g = group(c, "layout/split_rows");
        bench_lazy(
            &mut g,
            "bitmap",
            &value,
            || {
                let mut rows = vec![Bitmap::new(0); rows_count];
                split_rows_into(&flat, rows_count, row_len, &mut rows).unwrap();
                for (k, row) in rows.iter().enumerate().step_by(7) {
                    for j in (0..row_len).step_by(61) {
                        assert_eq!(row.test(j), flat.test(j * rows_count + k));
                    }
                }
                rows
            },
            |rows| split_rows_into(black_box(&flat), rows_count, row_len, rows).unwrap(),
        );
        bench_copy(&mut g, &value, || vec![&copy_source[..]]);
        g.finish();

        let mut g = group(c, "layout/join_rows");
        let rows = bitmap_core::layout::split_rows(&flat, rows_count, row_len);
        bench_lazy(
            &mut g,
            "bitmap",
            &value,
            || {
                let mut out = Bitmap::new(0);
                join_rows_into(&rows, &mut out).unwrap();
                assert_eq!(out, flat);
                out
            },
            |out| join_rows_into(black_box(&rows), out).unwrap(),
        );
        bench_copy(&mut g, &value, || vec![&copy_source[..]]);
        g.finish();
    }

    let rows = bitmap_core::layout::split_rows(&flat, 64, WORDS);
    // Two kinds of masks: random (half the bits, every word mixed: one
    // pdep/pext per word) and prefix-shaped (each row's cells up to a cut,
    // as a prefix plan's are: whole words but one per row).
    let random_masks = bitmap_core::layout::split_rows(
        &Bitmap::from_word_slice(WORDS * 64, &random_words(WORDS, 4)).unwrap(),
        64,
        WORDS,
    );
    let prefix_masks: Vec<Bitmap> = (0..64).map(|k| Bitmap::with_prefix(WORDS, WORDS - 37 * k)).collect();
    for (value, masks) in [("64x4096", random_masks), ("64x4096-prefix", prefix_masks)] {
        bench_deposit_extract(c, value, &rows, &masks, &copy_source);
    }
}

fn bench_deposit_extract(c: &mut Criterion, value: &str, rows: &[Bitmap], masks: &[Bitmap], copy_source: &[u64]) {
    let total: usize = masks.iter().map(Bitmap::popcount).sum();
    let src = Bitmap::from_word_slice(WORDS * 64, &random_words(WORDS, 5)).unwrap();
    let mut g = group(c, "layout/deposit_rows");
    bench_lazy(
        &mut g,
        "bitmap",
        value,
        || {
            let mut out = vec![Bitmap::new(0); 64];
            assert_eq!(deposit_rows_into(&src, masks, &mut out).unwrap(), total);
            let mut back = Bitmap::new(0);
            extract_rows_into(&out, masks, &mut back).unwrap();
            assert!((0..total).step_by(17).all(|i| back.test(i) == src.test(i)));
            out
        },
        |out| deposit_rows_into(black_box(&src), masks, out).unwrap(),
    );
    bench_copy(&mut g, value, || vec![copy_source]);
    g.finish();
    let mut g = group(c, "layout/extract_rows");
    bench_lazy(
        &mut g,
        "bitmap",
        value,
        || {
            let mut out = Bitmap::new(0);
            extract_rows_into(rows, masks, &mut out).unwrap();
            assert_eq!(out.len(), total);
            out
        },
        |out| extract_rows_into(black_box(rows), masks, out).unwrap(),
    );
    bench_copy(&mut g, value, || vec![copy_source]);
    g.finish();
}

/// One fold benchmark input.
struct Shape {
    value: &'static str,
    chunks: usize,
    ranks: usize,
    windows: Vec<i64>,
    /// Cleared `(chunk, group, rank)` cells of an otherwise full `found`.
    gaps: Vec<(usize, usize, usize)>,
    hit: usize,
}

fn shapes() -> Vec<Shape> {
    let mixed = vec![-1, -1, -1, -1, 128, 128, 1, 1];
    vec![
        Shape { value: "64x1x1-full", chunks: 64, ranks: 1, windows: vec![-1], gaps: vec![(48, 0, 0)], hit: 48 },
        Shape {
            value: "300x4x5-mixed",
            chunks: 300,
            ranks: 4,
            windows: vec![-1, -1, 8, 32, 1],
            gaps: vec![(150, 0, 0), (220, 1, 2), (10, 2, 0), (11, 2, 1), (12, 2, 3), (130, 3, 0)],
            hit: 130,
        },
        Shape {
            value: "4096x8x8-full",
            chunks: 4096,
            ranks: 8,
            windows: vec![-1; 8],
            gaps: vec![(3000, 5, 3)],
            hit: 3000,
        },
        Shape {
            value: "4096x8x8-mixed",
            chunks: 4096,
            ranks: 8,
            windows: mixed.clone(),
            gaps: vec![(4000, 4, 3), (3500, 6, 0)],
            hit: 4000,
        },
        // The worst case for the prefix skip: a Mamba group misses chunk 0,
        // so no chunk is whole from the start and every cell is tested.
        Shape {
            value: "4096x8x8-mixed-gap0",
            chunks: 4096,
            ranks: 8,
            windows: mixed.clone(),
            gaps: vec![(0, 7, 0), (4000, 4, 3)],
            hit: 4000,
        },
        Shape {
            value: "65536x8x8-mixed",
            chunks: 65536,
            ranks: 8,
            windows: mixed,
            gaps: vec![(0, 7, 0), (65500, 5, 1)],
            hit: 65500,
        },
    ]
}

fn found_of(shape: &Shape) -> Bitmap {
    let width = shape.windows.len() * shape.ranks;
    let len = shape.chunks * width;
    let mut found = Bitmap::with_prefix(len, len);
    for &(chunk, group, rank) in &shape.gaps {
        found.clear(chunk * width + group * shape.ranks + rank);
    }
    found
}

fn bench_fold_unfold(c: &mut Criterion) {
    for shape in shapes() {
        let found = found_of(&shape);
        let (chunks, ranks, windows) = (shape.chunks, shape.ranks, &shape.windows[..]);
        let expected = lmcache_fold_unfold_ranked(&found, chunks, ranks, windows).unwrap();
        assert_eq!(expected.0, shape.hit, "{}", shape.value);
        let mut g = c.benchmark_group("fold_unfold");
        g.throughput(Throughput::Bytes(found.as_bytes().len() as u64));
        bench_lazy(
            &mut g,
            "bitmap",
            shape.value,
            || assert_eq!(fold_unfold_ranked(&found, chunks, ranks, windows).unwrap(), expected),
            |()| fold_unfold_ranked(black_box(&found), chunks, ranks, windows).unwrap(),
        );
        bench_lazy(
            &mut g,
            "into",
            shape.value,
            || {
                let (mut ws, mut mask) = (FoldWorkspace::new(), Bitmap::new(0));
                let hit = fold_unfold_ranked_into(&found, chunks, ranks, windows, &mut ws, &mut mask).unwrap();
                assert_eq!((hit, &mask), (expected.0, &expected.1));
                (ws, mask)
            },
            |(ws, mask)| fold_unfold_ranked_into(black_box(&found), chunks, ranks, windows, ws, mask).unwrap(),
        );
        bench_lazy(
            &mut g,
            "lmcache_loop",
            shape.value,
            || (),
            |()| lmcache_fold_unfold_ranked(black_box(&found), chunks, ranks, windows).unwrap(),
        );
        g.finish();

        // The same cells as rows, one per (group, rank).
        let width = windows.len() * ranks;
        let rows = bitmap_core::layout::split_rows(&found, width, chunks);
        let row_windows: Vec<i64> = (0..width).map(|k| windows[k / ranks]).collect();
        let mut g = c.benchmark_group("fold_unfold_grouped");
        g.throughput(Throughput::Bytes(found.as_bytes().len() as u64));
        bench_lazy(
            &mut g,
            "bitmap",
            shape.value,
            || assert_eq!(fold_unfold_grouped(&rows, &row_windows).unwrap().0, expected.0),
            |()| fold_unfold_grouped(black_box(&rows), &row_windows).unwrap(),
        );
        bench_lazy(
            &mut g,
            "into",
            shape.value,
            || {
                let (mut ws, mut out) = (FoldWorkspace::new(), Vec::new());
                assert_eq!(fold_unfold_grouped_into(&rows, &row_windows, &mut ws, &mut out).unwrap(), expected.0);
                (ws, out)
            },
            |(ws, out)| fold_unfold_grouped_into(black_box(&rows), &row_windows, ws, out).unwrap(),
        );
        g.finish();
    }
    // Keep the kernel import used when only some groups are compiled in.
    let _ = kernel::SMALL_WORDS;
}
