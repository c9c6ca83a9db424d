//! The `bitmap_core::layout` bit moves against a copy of the same bytes
//! (issue #13: "row split and join, deposit and extract at 262,144 bits:
//! each within 3× of a copy"), measured interleaved: each round times a
//! batch of the copy and of every move one after the other, and each ratio
//! is taken per round, so a shared machine whose load changes during the
//! run moves both sides of a ratio alike. Prints, per move and shape, the
//! median per-call time, the fastest round, the median copy of the same
//! rounds and the median per-round ratio to it.
//!
//! The shapes are `benches/hybrid.rs`'s `layout/*` groups: 262,144 bits
//! (4,096 words) split into and joined from 64 rows × 4,096 bits and 8
//! rows × 32,768 bits, and deposit and extract over 64 rows × 4,096 bits
//! with random 50% masks and with prefix masks. The copy is
//! `bitplan_benches::reference::copy_words` of the 4,096 words, as the
//! criterion groups' `copy` entries.
//!
//! ```text
//! $ cargo run --release -p bitplan-benches --example bitmove_ratio [ROUNDS [NAME-FILTER]]
//! ```

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Instant;

use bitmap_core::Bitmap;
use bitmap_core::layout::{deposit_rows_into, extract_rows_into, join_rows_into, split_rows, split_rows_into};
use bitplan_benches::data::random_words;
use bitplan_benches::reference::copy_words;

const WORDS: usize = 4096;
/// Calls per timed batch: about 10–50 µs per batch.
const BATCH: usize = 16;

/// Times `BATCH` calls of `f`, per call, in ns.
fn time(mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..BATCH {
        f();
    }
    start.elapsed().as_nanos() as f64 / BATCH as f64
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// One move under test: its name and the closure that runs it once.
type Move<'a> = (String, Box<dyn FnMut() + 'a>);

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|arg| arg.parse().ok()).unwrap_or(300);
    // An optional second argument keeps only the moves whose name has it
    // (for a profiler).
    let only = std::env::args().nth(2).unwrap_or_default();
    let dense: Vec<u64> = {
        let (a, b) = (random_words(WORDS, 3), random_words(WORDS, 3 ^ 0x55));
        a.iter().zip(&b).map(|(x, y)| x | y | (x.rotate_left(7) & y)).collect()
    };
    let flat = Bitmap::from_word_slice(WORDS * 64, &dense).expect("whole words");
    let copy_src = flat.as_words().to_vec();
    let mut copy_dst = vec![0u64; WORDS];

    let rows64 = split_rows(&flat, 64, WORDS);
    let rows8 = split_rows(&flat, 8, WORDS * 8);
    let random_masks =
        split_rows(&Bitmap::from_word_slice(WORDS * 64, &random_words(WORDS, 4)).expect("whole words"), 64, WORDS);
    let prefix_masks: Vec<Bitmap> = (0..64).map(|k| Bitmap::with_prefix(WORDS, WORDS - 37 * k)).collect();
    let src = Bitmap::from_word_slice(WORDS * 64, &random_words(WORDS, 5)).expect("whole words");

    let mut moves: Vec<Move<'_>> = Vec::new();
    for (count, rows) in [(64, &rows64), (8, &rows8)] {
        let row_len = WORDS * 64 / count;
        let mut out = vec![Bitmap::new(0); count];
        split_rows_into(&flat, count, row_len, &mut out).expect("row count");
        assert_eq!(&out, rows);
        let flat = &flat;
        moves.push((
            format!("split_rows {count}x{row_len}"),
            Box::new(move || split_rows_into(black_box(flat), count, row_len, &mut out).expect("row count")),
        ));
        let mut joined = Bitmap::new(0);
        join_rows_into(rows, &mut joined).expect("equal rows");
        assert_eq!(&joined, flat);
        moves.push((
            format!("join_rows {count}x{row_len}"),
            Box::new(move || join_rows_into(black_box(rows), &mut joined).expect("equal rows")),
        ));
    }
    for (shape, masks) in [("64x4096", &random_masks), ("64x4096-prefix", &prefix_masks)] {
        let total: usize = masks.iter().map(Bitmap::popcount).sum();
        let mut deposited = vec![Bitmap::new(0); 64];
        assert_eq!(deposit_rows_into(&src, masks, &mut deposited).expect("shape"), total);
        let mut back = Bitmap::new(0);
        extract_rows_into(&deposited, masks, &mut back).expect("shape");
        assert!((0..total).all(|i| back.test(i) == src.test(i)), "{shape}: extract(deposit(x)) != x");
        let src = &src;
        moves.push((
            format!("deposit_rows {shape}"),
            Box::new(move || {
                black_box(deposit_rows_into(black_box(src), masks, &mut deposited).expect("shape"));
            }),
        ));
        let rows = &rows64;
        let mut out = Bitmap::new(0);
        moves.push((
            format!("extract_rows {shape}"),
            Box::new(move || extract_rows_into(black_box(rows), masks, &mut out).expect("shape")),
        ));
    }

    moves.retain(|(name, _)| name.contains(&only));
    let mut copies = vec![];
    let mut times: Vec<Vec<f64>> = vec![vec![]; moves.len()];
    let mut ratios: Vec<Vec<f64>> = vec![vec![]; moves.len()];
    for round in 0..=rounds {
        let copy = time(|| copy_words(black_box(&mut copy_dst), black_box(&copy_src)));
        let round_times: Vec<f64> = moves.iter_mut().map(|(_, f)| time(f)).collect();
        if round == 0 {
            continue; // warm-up
        }
        copies.push(copy);
        for (i, t) in round_times.into_iter().enumerate() {
            times[i].push(t);
            ratios[i].push(t / copy);
        }
    }
    let kernel = bitmap_core::kernel::Kernel::active();
    println!(
        "kernel {kernel}, {rounds} rounds of {BATCH} calls; copy of {WORDS} words: median {:.0} ns",
        median(&mut copies)
    );
    for (((name, _), t), r) in moves.iter().zip(&mut times).zip(&mut ratios) {
        let med = median(t);
        println!("{name:<30} median {med:>8.0} ns  fastest round {:>8.0} ns  ratio to copy {:>5.2}x", t[0], median(r));
    }
}
