//! `&a OP &b` (one pass into a new buffer: `and_uninit` and the others)
//! against what it replaced, a clone of `a` and the in-place operation
//! (two passes), measured interleaved: each round times a batch of each
//! form one after the other, the order alternating from round to round,
//! and the ratio is taken per round, so a shared machine whose load
//! changes during the run moves both sides alike. Prints, per operation
//! and size, the median time per call of each form and the median
//! per-round ratio `clone + in-place ÷ operator` (above 1: the operator is
//! faster). Both forms allocate and drop their result, as a caller of
//! `&a & &b` does; the results are checked equal first.
//!
//! ```text
//! $ cargo run --release -p bitplan-benches --example operator_ratio [ROUNDS]
//! ```

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Instant;

use bitmap_core::Bitmap;
use bitmap_core::kernel::Kernel;
use bitplan_benches::data::random_words;

/// Target time of one batch of one form.
const BATCH_NS: f64 = 200_000.0;

type Form = fn(&Bitmap, &Bitmap) -> Bitmap;

/// Per operation: the operator, and the clone and in-place form.
const OPS: [(&str, Form, Form); 4] = [
    (
        "and",
        |a, b| a & b,
        |a, b| {
            let mut c = a.clone();
            c &= b;
            c
        },
    ),
    (
        "or",
        |a, b| a | b,
        |a, b| {
            let mut c = a.clone();
            c |= b;
            c
        },
    ),
    (
        "xor",
        |a, b| a ^ b,
        |a, b| {
            let mut c = a.clone();
            c ^= b;
            c
        },
    ),
    (
        "and_not",
        |a, b| a - b,
        |a, b| {
            let mut c = a.clone();
            c -= b;
            c
        },
    ),
];

fn time(batch: usize, a: &Bitmap, b: &Bitmap, form: Form) -> f64 {
    let start = Instant::now();
    for _ in 0..batch {
        drop(black_box(form(black_box(a), black_box(b))));
    }
    start.elapsed().as_nanos() as f64 / batch as f64
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|arg| arg.parse().ok()).unwrap_or(101);
    println!("kernel {}, {rounds} rounds, medians:", Kernel::active());
    for bits in [1 << 10, 1 << 16, 1 << 18, 1 << 20] {
        let a = Bitmap::from_word_slice(bits, &random_words(bits / 64, 1)).expect("whole words");
        let b = Bitmap::from_word_slice(bits, &random_words(bits / 64, 2)).expect("whole words");
        for (name, operator, two_pass) in OPS {
            assert_eq!(operator(&a, &b), two_pass(&a, &b), "{name} at {bits} bits");
            let once = time(100, &a, &b, two_pass);
            let batch = ((BATCH_NS / once.max(1.0)) as usize).clamp(1, 1_000_000);
            let (mut new, mut old, mut ratios) = (vec![], vec![], vec![]);
            for round in 0..=rounds {
                let (n, o) = if round % 2 == 0 {
                    let n = time(batch, &a, &b, operator);
                    (n, time(batch, &a, &b, two_pass))
                } else {
                    let o = time(batch, &a, &b, two_pass);
                    (time(batch, &a, &b, operator), o)
                };
                if round == 0 {
                    continue; // warm-up
                }
                new.push(n);
                old.push(o);
                ratios.push(o / n);
            }
            println!(
                "{name:<8} {bits:>8} bits  operator {:>9.1} ns  clone + in-place {:>9.1} ns  ratio {:.2}x",
                median(new),
                median(old),
                median(ratios)
            );
        }
    }
}
