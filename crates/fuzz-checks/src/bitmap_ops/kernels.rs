//! Every word-level operation of a `bitmap_ops` step, run directly on every
//! kernel this CPU has (and through dispatch) over copies of the operands'
//! words placed at a changing word offset, against a per-word reference.
//! The bitmap's own operations run on the active kernel only; these reach
//! the others within one run.

use std::iter;

use bitmap_core::kernel::{self, Kernel};
use bitmap_core::{Bitmap, SplitWriter};

use super::{BinaryOp, State};
use crate::fill::words_of;

/// Fills the words before a kernel's operand copy: a kernel that writes
/// before its slice changes them.
const SENTINEL: u64 = 0xA5A5_5A5A_C3C3_3C3C;

impl State {
    pub(super) fn check_kernels_binary(&self, binary: BinaryOp, a: &[u64], b: &[u64]) {
        let step = self.step;
        let expected: Vec<u64> = a.iter().zip(b).map(|(&x, &y)| binary.word(x, y)).collect();
        let expected_count: u64 = expected.iter().map(|w| u64::from(w.count_ones())).sum();
        let (pad_a, pad_b) = (self.pad(), (self.pad() + 1) % 8);
        for &kernel in &self.kernels {
            let (mut dst, src) = (placed(a, pad_a), placed(b, pad_b));
            let (x, y) = (&dst[pad_a..], &src[pad_b..]);
            let count = match binary {
                BinaryOp::And => kernel.and_popcount(x, y),
                BinaryOp::Or => kernel.or_popcount(x, y),
                BinaryOp::Xor => kernel.xor_popcount(x, y),
                BinaryOp::AndNot => kernel.and_not_popcount(x, y),
            };
            assert_eq!(count, expected_count, "step {step}: {kernel} {binary:?} popcount of {} words", a.len());
            let (out, y) = (&mut dst[pad_a..], &src[pad_b..]);
            match binary {
                BinaryOp::And => kernel.and_assign(out, y),
                BinaryOp::Or => kernel.or_assign(out, y),
                BinaryOp::Xor => kernel.xor_assign(out, y),
                BinaryOp::AndNot => kernel.and_not_assign(out, y),
            }
            assert_eq!(out, expected, "step {step}: {kernel} {binary:?} assign of {} words", a.len());
            check_sentinels(&dst, pad_a, step, kernel, "binary assign");
        }
    }

    pub(super) fn check_kernels_unary(&self, words: &[u64]) {
        let step = self.step;
        let n = words.len();
        let count: u64 = words.iter().map(|w| u64::from(w.count_ones())).sum();
        let nonzero = words.iter().position(|&w| w != 0);
        let not_all_ones = words.iter().position(|&w| w != u64::MAX);
        let inverted: Vec<u64> = words.iter().map(|w| !w).collect();
        let pad = self.pad();
        for &kernel in &self.kernels {
            let mut buffer = placed(words, pad);
            let slice = &buffer[pad..];
            assert_eq!(kernel.popcount(slice), count, "step {step}: {kernel} popcount of {n} words");
            assert_eq!(kernel.position_nonzero(slice), nonzero, "step {step}: {kernel} position_nonzero");
            assert_eq!(kernel.position_not_all_ones(slice), not_all_ones, "step {step}: {kernel} not_all_ones");
            kernel.not_assign(&mut buffer[pad..]);
            assert_eq!(buffer[pad..], inverted, "step {step}: {kernel} not_assign of {n} words");
            check_sentinels(&buffer, pad, step, kernel, "not_assign");
        }
        // The dispatched forms, for the active kernel at this size.
        assert_eq!(kernel::popcount(words), count, "step {step}: dispatched popcount");
        assert_eq!(kernel::position_nonzero(words), nonzero, "step {step}: dispatched position_nonzero");
        assert_eq!(kernel::position_not_all_ones(words), not_all_ones, "step {step}: dispatched not_all_ones");
    }

    pub(super) fn check_kernels_union(&self, sources: &[Vec<u64>]) {
        let step = self.step;
        let n = self.bitmap.num_words();
        let expected: Vec<u64> = (0..n).map(|w| sources.iter().fold(0, |acc, s| acc | s[w])).collect();
        let pad = self.pad();
        for &kernel in &self.kernels {
            let placed_sources: Vec<Vec<u64>> =
                sources.iter().enumerate().map(|(i, s)| placed(s, (pad + i) % 8)).collect();
            let refs: Vec<&[u64]> = placed_sources.iter().enumerate().map(|(i, s)| &s[(pad + i) % 8..]).collect();
            // The destination starts as garbage: union_many overwrites it.
            let mut dst = placed(&vec![SENTINEL; n], pad);
            kernel.union_many(&mut dst[pad..], &refs);
            assert_eq!(dst[pad..], expected, "step {step}: {kernel} union_many of {} sources", sources.len());
            check_sentinels(&dst, pad, step, kernel, "union_many");
        }
    }

    /// `Bitmap::first_wins_split` of `sources` into fresh outputs and into
    /// reused ones (copies of the current bitmap, of whatever length and
    /// bits): every output must be exactly its model, with a clear tail.
    pub(super) fn check_first_wins_split(&self, sources: &[Bitmap], models: &[Vec<bool>]) {
        let step = self.step;
        let refs: Vec<&Bitmap> = sources.iter().collect();
        let mut outputs: Vec<Bitmap> =
            (0..sources.len()).map(|i| if i % 2 == 0 { Bitmap::default() } else { self.bitmap.clone() }).collect();
        Bitmap::first_wins_split(&refs, &mut outputs).expect("first_wins_split sources of equal length");
        let mut claimed = vec![false; self.len()];
        for (i, (output, bits)) in outputs.iter().zip(models).enumerate() {
            let want: Vec<bool> = bits.iter().zip(&claimed).map(|(&bit, &taken)| bit && !taken).collect();
            claimed.iter_mut().zip(bits).for_each(|(taken, &bit)| *taken |= bit);
            assert_eq!(output.len(), want.len(), "step {step}: first_wins_split output {i} length");
            assert_eq!(output.as_words(), words_of(&want), "step {step}: first_wins_split output {i}");
        }
    }

    /// The first-wins split of `inputs` on every kernel and through dispatch,
    /// against the rule applied word by word.
    pub(super) fn check_first_wins(&self, inputs: &[Vec<u64>]) {
        let step = self.step;
        let n = self.bitmap.num_words();
        let mut expected = vec![vec![0u64; n]; inputs.len()];
        for w in 0..n {
            let mut claimed = 0;
            for (input, out) in inputs.iter().zip(&mut expected) {
                out[w] = input[w] & !claimed;
                claimed |= input[w];
            }
        }
        let pad = self.pad();
        let offset = |i: usize| (pad + i) % 8;
        let input_refs: Vec<&[u64]> = inputs.iter().map(Vec::as_slice).collect();
        let mut dispatched: Vec<Vec<u64>> = vec![vec![SENTINEL; n]; inputs.len()];
        let mut dispatched_refs: Vec<&mut [u64]> = dispatched.iter_mut().map(Vec::as_mut_slice).collect();
        kernel::first_wins(&input_refs, &mut dispatched_refs);
        assert_eq!(dispatched, expected, "step {step}: dispatched first_wins of {} inputs", inputs.len());
        for &kernel in &self.kernels {
            let placed_inputs: Vec<Vec<u64>> = inputs.iter().enumerate().map(|(i, s)| placed(s, offset(i))).collect();
            let refs: Vec<&[u64]> = placed_inputs.iter().enumerate().map(|(i, s)| &s[offset(i)..]).collect();
            let mut outputs: Vec<Vec<u64>> =
                (0..inputs.len()).map(|i| placed(&vec![SENTINEL; n], offset(i + 1))).collect();
            let mut output_refs: Vec<&mut [u64]> =
                outputs.iter_mut().enumerate().map(|(i, s)| &mut s[offset(i + 1)..]).collect();
            kernel.first_wins(&refs, &mut output_refs);
            for (i, (output, want)) in outputs.iter().zip(&expected).enumerate() {
                assert_eq!(
                    output[offset(i + 1)..],
                    want[..],
                    "step {step}: {kernel} first_wins output {i} of {n} words"
                );
                check_sentinels(output, offset(i + 1), step, kernel, "first_wins");
            }
        }
    }

    /// The class counts and the table-driven split of `inputs` on every
    /// kernel and through dispatch, against a bit-by-bit reference: each
    /// bit's class is the set of inputs that have it.
    pub(super) fn check_classes(&self, inputs: &[Vec<u64>], tables: &[u8]) {
        let step = self.step;
        let n = self.bitmap.num_words();
        let mut counts = vec![0u64; 1 << inputs.len()];
        let mut split = vec![vec![0u64; n]; inputs.len()];
        if !inputs.is_empty() {
            for bit in 0..n * 64 {
                let (w, mask) = (bit / 64, 1u64 << (bit % 64));
                let class =
                    inputs.iter().enumerate().filter(|(_, input)| input[w] & mask != 0).fold(0, |c, (p, _)| c | 1 << p);
                counts[class] += 1;
                for (a, output) in split.iter_mut().enumerate() {
                    // The class among the others: input `a`'s bit taken out.
                    let others = (class & ((1 << a) - 1)) | (class >> (a + 1)) << a;
                    if class >> a & 1 == 1 && tables[a] >> others & 1 == 1 {
                        output[w] |= mask;
                    }
                }
            }
        }
        // Through `SplitWriter`, cut at a word that varies with the step.
        let (len, cut) = (self.bitmap.len(), step.wrapping_mul(31) % (n + 1));
        match inputs.len() {
            1 => check_split_writer::<1>(step, len, inputs, tables, &split, cut),
            2 => check_split_writer::<2>(step, len, inputs, tables, &split, cut),
            3 => check_split_writer::<3>(step, len, inputs, tables, &split, cut),
            4 => check_split_writer::<4>(step, len, inputs, tables, &split, cut),
            _ => {}
        }
        let pad = self.pad();
        let offset = |i: usize| (pad + i) % 8;
        let input_refs: Vec<&[u64]> = inputs.iter().map(Vec::as_slice).collect();
        let mut dispatched_counts = vec![u64::MAX; counts.len()];
        kernel::class_counts(&input_refs, &mut dispatched_counts);
        assert_eq!(dispatched_counts, counts, "step {step}: dispatched class_counts of {} inputs", inputs.len());
        let mut dispatched: Vec<Vec<u64>> = vec![vec![SENTINEL; n]; inputs.len()];
        let mut dispatched_refs: Vec<&mut [u64]> = dispatched.iter_mut().map(Vec::as_mut_slice).collect();
        kernel::split_by_tables(&input_refs, tables, &mut dispatched_refs);
        assert_eq!(dispatched, split, "step {step}: dispatched split_by_tables of {} inputs", inputs.len());
        for &kernel in &self.kernels {
            let placed_inputs: Vec<Vec<u64>> = inputs.iter().enumerate().map(|(i, s)| placed(s, offset(i))).collect();
            let refs: Vec<&[u64]> = placed_inputs.iter().enumerate().map(|(i, s)| &s[offset(i)..]).collect();
            let mut got = vec![u64::MAX; counts.len()];
            kernel.class_counts(&refs, &mut got);
            assert_eq!(got, counts, "step {step}: {kernel} class_counts of {} inputs, {n} words", inputs.len());
            let mut outputs: Vec<Vec<u64>> =
                (0..inputs.len()).map(|i| placed(&vec![SENTINEL; n], offset(i + 1))).collect();
            let mut output_refs: Vec<&mut [u64]> =
                outputs.iter_mut().enumerate().map(|(i, s)| &mut s[offset(i + 1)..]).collect();
            kernel.split_by_tables(&refs, tables, &mut output_refs);
            for (i, (output, want)) in outputs.iter().zip(&split).enumerate() {
                assert_eq!(
                    output[offset(i + 1)..],
                    want[..],
                    "step {step}: {kernel} split_by_tables output {i} of {n} words"
                );
                check_sentinels(output, offset(i + 1), step, kernel, "split_by_tables");
            }
        }
    }
}

/// `SplitWriter` over the `N` `inputs` (whole words of `len`-bit bitmaps):
/// the split of the first `cut` words as one run, the next word pushed from
/// the reference `split`, the rest as one run; into fresh outputs and into
/// reused ones holding other words, which must all be replaced.
fn check_split_writer<const N: usize>(
    step: usize,
    len: usize,
    inputs: &[Vec<u64>],
    tables: &[u8],
    split: &[Vec<u64>],
    cut: usize,
) {
    let refs: [&[u64]; N] = core::array::from_fn(|p| inputs[p].as_slice());
    let tables: [u8; N] = core::array::from_fn(|p| tables[p]);
    let n = refs[0].len();
    for fresh in [true, false] {
        let mut outputs: [Bitmap; N] = core::array::from_fn(|p| {
            if fresh {
                Bitmap::empty()
            } else {
                Bitmap::from_words(64 * (p + 3), vec![u64::MAX; p + 3]).expect("whole words")
            }
        });
        let mut writer = SplitWriter::new(len, outputs.each_mut());
        writer.split_by_tables(&refs, &tables, cut);
        if cut < n {
            writer.push(core::array::from_fn(|a| split[a][cut]));
        }
        let rest = n - writer.written_words();
        writer.split_by_tables(&refs, &tables, rest);
        writer.finish();
        for (a, output) in outputs.iter().enumerate() {
            assert_eq!(output.len(), len, "step {step}: SplitWriter output {a} length");
            assert_eq!(
                output.as_words(),
                &split[a][..],
                "step {step}: SplitWriter output {a}, fresh {fresh}, cut {cut}"
            );
        }
    }
}

/// `words` in a buffer of its own, `pad` sentinel words in, ending where the
/// allocation ends.
fn placed(words: &[u64], pad: usize) -> Vec<u64> {
    let mut buffer = Vec::with_capacity(pad + words.len());
    buffer.extend(iter::repeat_n(SENTINEL, pad));
    buffer.extend_from_slice(words);
    buffer
}

fn check_sentinels(buffer: &[u64], pad: usize, step: usize, kernel: Kernel, what: &str) {
    assert!(buffer[..pad].iter().all(|&w| w == SENTINEL), "step {step}: {kernel} {what} wrote before its slice");
}
