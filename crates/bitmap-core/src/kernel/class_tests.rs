//! The class operations (`class_counts`, `split_by_tables`) of every
//! kernel tested (as in `tests.rs`) against bit-by-bit references, over
//! every input count up to [`MAX_CLASS_INPUTS`], the lengths of
//! `tests::lengths` and misaligned inputs and outputs.

use core::mem::MaybeUninit;

use super::tests::{OFFSETS, XorShift, lengths, placed, reference_or_scalar, tested_kernels};
use super::*;

/// The class of every bit position, bit by bit: the set of inputs that
/// have it.
fn naive_classes(inputs: &[Vec<u64>], n: usize) -> Vec<usize> {
    (0..n * 64)
        .map(|bit| {
            inputs
                .iter()
                .enumerate()
                .filter(|(_, input)| input[bit / 64] >> (bit % 64) & 1 == 1)
                .fold(0, |c, (p, _)| c | 1 << p)
        })
        .collect()
}

/// The input counts of the class operations to test: all of them, or under
/// Miri (where the bit-by-bit reference is most of the cost) none, one,
/// three and the most.
fn class_input_counts() -> Vec<usize> {
    if cfg!(miri) { vec![0, 1, 3, MAX_CLASS_INPUTS] } else { (0..=MAX_CLASS_INPUTS).collect() }
}

/// Word offsets for the class operations: [`OFFSETS`], or under Miri only a
/// misaligned one (Miri checks memory accesses: see [`lengths`]).
const CLASS_OFFSETS: &[usize] = if cfg!(miri) { &[1] } else { OFFSETS };

/// `count` inputs of `n` words for the class operations, each of its own
/// density (which of them, varies with `n`).
fn class_inputs(rng: &mut XorShift, count: usize, n: usize) -> Vec<Vec<u64>> {
    (0..count).map(|p| rng.words(n, (p * 3 + n) as u32 % 5)).collect()
}

#[test]
fn class_counts_match_reference() {
    let mut rng = XorShift(0x6A09_E667_F3BC_C908);
    for n in lengths() {
        for count in class_input_counts() {
            for &offset in CLASS_OFFSETS {
                let inputs = class_inputs(&mut rng, count, n);
                let placed: Vec<Vec<u64>> =
                    inputs.iter().enumerate().map(|(p, w)| placed(w, (offset + p) % 4)).collect();
                let views: Vec<&[u64]> = placed.iter().enumerate().map(|(p, buf)| &buf[(offset + p) % 4..]).collect();
                let expected = reference_or_scalar(
                    || {
                        let mut expected = vec![0u64; 1 << count];
                        if count > 0 {
                            for class in naive_classes(&inputs, n) {
                                expected[class] += 1;
                            }
                        }
                        expected
                    },
                    |scalar| {
                        let mut expected = vec![0u64; 1 << count];
                        scalar.class_counts(&views, &mut expected);
                        expected
                    },
                );
                for kernel in tested_kernels() {
                    // Dirty counts: the kernel must overwrite every one.
                    let mut counts = vec![u64::MAX; 1 << count];
                    kernel.class_counts(&views, &mut counts);
                    assert_eq!(counts, expected, "{kernel} {count} inputs n={n} offset={offset}");
                }
            }
        }
    }
}

#[test]
fn split_by_tables_matches_reference() {
    let mut rng = XorShift(0xBB67_AE85_84CA_A73B);
    let lengths: Vec<usize> = lengths().into_iter().filter(|&n| n <= 300).collect();
    for &n in &lengths {
        for count in class_input_counts().into_iter().filter(|&count| count > 0) {
            let inputs = class_inputs(&mut rng, count, n);
            let views: Vec<&[u64]> = inputs.iter().map(Vec::as_slice).collect();
            let entries = 1 << (count - 1);
            // Random tables, plus all-clear and all-set ones.
            let tables: Vec<u8> = (0..count)
                .map(|a| match (n + a) % 5 {
                    0 => 0,
                    1 => ((1u32 << entries) - 1) as u8,
                    _ => (rng.next() as u32 & ((1u32 << entries) - 1)) as u8,
                })
                .collect();
            let expected = reference_or_scalar(
                || {
                    let mut expected = vec![vec![0u64; n]; count];
                    for (bit, &class) in naive_classes(&inputs, n).iter().enumerate() {
                        for (a, output) in expected.iter_mut().enumerate() {
                            // The class among the others: drop input `a`'s bit.
                            let others = (class & ((1 << a) - 1)) | (class >> (a + 1)) << a;
                            if class >> a & 1 == 1 && tables[a] >> others & 1 == 1 {
                                output[bit / 64] |= 1 << (bit % 64);
                            }
                        }
                    }
                    expected
                },
                |scalar| {
                    let mut expected = vec![vec![0u64; n]; count];
                    let mut outputs: Vec<&mut [u64]> = expected.iter_mut().map(Vec::as_mut_slice).collect();
                    scalar.split_by_tables(&views, &tables, &mut outputs);
                    expected
                },
            );
            for kernel in tested_kernels() {
                // The outputs at every word offset within a 64-byte line
                // (the loops peel the words before the first output's
                // vector boundary), and at offset 1 under Miri.
                for offset in if cfg!(miri) { 1..2 } else { 1..9 } {
                    let mut outputs: Vec<Vec<u64>> = (0..count).map(|_| placed(&rng.words(n, 4), offset)).collect();
                    let mut output_views: Vec<&mut [u64]> = outputs.iter_mut().map(|o| &mut o[offset..]).collect();
                    kernel.split_by_tables(&views, &tables, &mut output_views);
                    for (a, (output, expected)) in outputs.iter().zip(&expected).enumerate() {
                        let context = format!("{kernel} output {a} of {count} at {offset}, tables {tables:?} n={n}");
                        assert_eq!(&output[offset..], &expected[..], "{context}");
                        assert_eq!(output[offset - 1], 0xDEAD_BEEF, "{kernel} wrote before the slice");
                    }
                }
                // Into uninitialised memory: every word must be written.
                let mut fresh: Vec<Vec<u64>> = (0..count).map(|_| Vec::with_capacity(n)).collect();
                let mut spares: Vec<&mut [MaybeUninit<u64>]> =
                    fresh.iter_mut().map(|output| &mut output.spare_capacity_mut()[..n]).collect();
                kernel.split_by_tables_uninit(&views, &tables, &mut spares);
                for output in &mut fresh {
                    // SAFETY: `split_by_tables_uninit` wrote the first `n`
                    // words of the spare capacity (what this checks: Miri
                    // reports any it did not write when they are compared).
                    unsafe { output.set_len(n) };
                }
                assert_eq!(fresh, expected, "{kernel} uninit, {count} inputs, tables {tables:?} n={n}");
            }
        }
    }
}

#[test]
#[should_panic(expected = "class_counts takes at most 4 inputs, not 5")]
fn class_counts_takes_at_most_four_inputs() {
    crate::test_support::cheap_panic_hook_under_miri();
    Kernel::scalar().class_counts(&[&[0u64][..]; 5], &mut [0; 32]);
}

#[test]
#[should_panic(expected = "class_counts of 2 inputs needs 4 counts, not 3")]
fn class_counts_needs_a_count_per_class() {
    crate::test_support::cheap_panic_hook_under_miri();
    class_counts(&[&[0], &[0]], &mut [0; 3]);
}

#[test]
#[should_panic(expected = "split_by_tables has 2 inputs, 1 tables and 2 outputs")]
fn split_by_tables_needs_a_table_per_input() {
    crate::test_support::cheap_panic_hook_under_miri();
    split_by_tables(&[&[0], &[0]], &[0], &mut [&mut [0], &mut [0]]);
}

#[test]
#[should_panic(expected = "split_by_tables table 1 (0b00000100) has bits past its 2 entries")]
fn split_by_tables_rejects_entries_past_the_others() {
    crate::test_support::cheap_panic_hook_under_miri();
    split_by_tables(&[&[0], &[0]], &[0b11, 0b100], &mut [&mut [0], &mut [0]]);
}
