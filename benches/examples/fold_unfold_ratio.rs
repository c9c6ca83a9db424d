//! `fold_unfold_ranked_into` against LMCache's per-bit loop
//! (`reference::lmcache_fold_unfold_ranked`), measured interleaved: each
//! round times a batch of every variant one after the other, and the ratio
//! is taken per round, so a shared machine whose load changes during the
//! run moves both sides of a ratio alike. Prints, per shape, the median
//! per-call time of the engine (reused workspace and mask, and allocating)
//! and of the loop, the fastest round of the engine (the least disturbed
//! by other load), and the median per-round ratio.
//!
//! The shapes are `benches/hybrid.rs`'s `fold_unfold` group (C × R × G,
//! windows, gaps); the answers are checked against the loop's first.
//!
//! ```text
//! $ cargo run --release -p bitplan-benches --example fold_unfold_ratio [ROUNDS]
//! ```

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Instant;

use bitmap_core::Bitmap;
use prefetch_policy::reference::lmcache_fold_unfold_ranked;
use prefetch_policy::{FoldWorkspace, fold_unfold_ranked, fold_unfold_ranked_into};

struct Shape {
    name: &'static str,
    chunks: usize,
    ranks: usize,
    windows: Vec<i64>,
    /// Cleared `(chunk, group, rank)` cells of an otherwise full `found`.
    gaps: Vec<(usize, usize, usize)>,
}

fn shapes() -> Vec<Shape> {
    let mixed = vec![-1, -1, -1, -1, 128, 128, 1, 1];
    vec![
        Shape {
            name: "300x4x5-mixed",
            chunks: 300,
            ranks: 4,
            windows: vec![-1, -1, 8, 32, 1],
            gaps: vec![(150, 0, 0), (220, 1, 2), (10, 2, 0), (11, 2, 1), (12, 2, 3), (130, 3, 0)],
        },
        Shape { name: "4096x8x8-full", chunks: 4096, ranks: 8, windows: vec![-1; 8], gaps: vec![(3000, 5, 3)] },
        Shape {
            name: "4096x8x8-mixed",
            chunks: 4096,
            ranks: 8,
            windows: mixed.clone(),
            gaps: vec![(4000, 4, 3), (3500, 6, 0)],
        },
        Shape {
            name: "4096x8x8-mixed-gap0",
            chunks: 4096,
            ranks: 8,
            windows: mixed,
            gaps: vec![(0, 7, 0), (4000, 4, 3)],
        },
    ]
}

/// Times `batch` calls of `f`, per call.
fn time(batch: usize, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..batch {
        f();
    }
    start.elapsed().as_nanos() as f64 / batch as f64
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|arg| arg.parse().ok()).unwrap_or(200);
    for shape in shapes() {
        let (chunks, ranks, windows) = (shape.chunks, shape.ranks, &shape.windows[..]);
        let width = windows.len() * ranks;
        let mut found = Bitmap::with_prefix(chunks * width, chunks * width);
        for &(chunk, group, rank) in &shape.gaps {
            found.clear(chunk * width + group * ranks + rank);
        }
        let expected = lmcache_fold_unfold_ranked(&found, chunks, ranks, windows).expect("valid shape");
        let (mut ws, mut mask) = (FoldWorkspace::new(), Bitmap::new(0));
        let hit = fold_unfold_ranked_into(&found, chunks, ranks, windows, &mut ws, &mut mask).expect("valid shape");
        assert_eq!((hit, &mask), (expected.0, &expected.1), "{}", shape.name);
        // Batches of about 50 µs of the loop each.
        let loop_ns = time(3, || drop(black_box(lmcache_fold_unfold_ranked(&found, chunks, ranks, windows))));
        let loop_batch = ((50_000.0 / loop_ns) as usize).max(1);
        let engine_batch = loop_batch * 50;
        let (mut into, mut alloc, mut reference, mut ratios) = (vec![], vec![], vec![], vec![]);
        for round in 0..=rounds {
            let i = time(engine_batch, || {
                black_box(fold_unfold_ranked_into(black_box(&found), chunks, ranks, windows, &mut ws, &mut mask).ok());
            });
            let a =
                time(engine_batch, || drop(black_box(fold_unfold_ranked(black_box(&found), chunks, ranks, windows))));
            let r = time(loop_batch, || {
                drop(black_box(lmcache_fold_unfold_ranked(black_box(&found), chunks, ranks, windows)));
            });
            if round == 0 {
                continue; // warm-up
            }
            into.push(i);
            alloc.push(a);
            reference.push(r);
            ratios.push(r / i);
        }
        println!(
            "{:<22} hit {:>5}  into {:>8.1} ns (fastest round {:>8.1})  allocating {:>8.1} ns  lmcache loop {:>10.1} ns  loop/into {:>6.1}x",
            shape.name,
            hit,
            median(&mut into),
            into[0],
            median(&mut alloc),
            median(&mut reference),
            median(&mut ratios),
        );
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
