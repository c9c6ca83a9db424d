//! The word-level pieces of the class operations ([`class_counts`] and
//! [`split_by_tables`]) that every kernel shares: the argument checks, the
//! transform from intersection counts to class counts, and one word of the
//! table-driven split (the kernels' tails, and the scalar kernel).
//!
//! A bit position's *class* is the set of inputs that have it set, as a
//! number: bit `p` of the class is input `p`'s bit. With at most
//! [`MAX_CLASS_INPUTS`] inputs there are at most 16 classes.
//!
//! [`class_counts`]: super::class_counts
//! [`split_by_tables`]: super::split_by_tables

use super::checks::check_one_len;

/// The most inputs [`class_counts`](super::class_counts) and
/// [`split_by_tables`](super::split_by_tables) take: 16 classes, and a
/// split table of 8 entries (one `u8`) per output.
pub const MAX_CLASS_INPUTS: usize = 4;

#[track_caller]
#[inline]
pub(super) fn check_class_counts(inputs: &[&[u64]], counts: &[u64]) {
    if inputs.len() > MAX_CLASS_INPUTS {
        too_many_inputs("class_counts", inputs.len());
    }
    if counts.len() != 1 << inputs.len() {
        panic!(
            "bitmap-core: class_counts of {} inputs needs {} counts, not {}",
            inputs.len(),
            1 << inputs.len(),
            counts.len()
        );
    }
    check_one_len::<u64>(inputs, &[]);
}

#[track_caller]
#[inline]
pub(super) fn check_split_by_tables<T>(inputs: &[&[u64]], tables: &[u8], outputs: &[&mut [T]]) {
    if inputs.len() > MAX_CLASS_INPUTS {
        too_many_inputs("split_by_tables", inputs.len());
    }
    if inputs.len() != outputs.len() || inputs.len() != tables.len() {
        panic!(
            "bitmap-core: split_by_tables has {} inputs, {} tables and {} outputs",
            inputs.len(),
            tables.len(),
            outputs.len()
        );
    }
    // A table has one bit per set of the other inputs: 2^(P-1) of them.
    let entries = 1u32 << inputs.len().saturating_sub(1);
    if let Some(a) = tables.iter().position(|&table| u32::from(table) >> entries != 0) {
        panic!("bitmap-core: split_by_tables table {a} ({:#010b}) has bits past its {entries} entries", tables[a]);
    }
    check_one_len(inputs, outputs);
}

#[cold]
#[inline(never)]
#[track_caller]
fn too_many_inputs(op: &str, inputs: usize) -> ! {
    panic!("bitmap-core: {op} takes at most {MAX_CLASS_INPUTS} inputs, not {inputs}")
}

/// Turns `common[t]`, the positions every input in `t` has (whoever else
/// does; `common[0]` is every position), into `common[t]`, the positions
/// whose class is exactly `t`: the Möbius transform over supersets,
/// `exactly(t) = common(t) − Σ exactly(s) over strict supersets s of t`,
/// one input at a time. `common.len()` is a power of two.
#[inline]
pub(super) fn exact_from_common(common: &mut [u64]) {
    let classes = common.len();
    let mut bit = 1;
    while bit < classes {
        for set in (0..classes).filter(|set| set & bit == 0) {
            common[set] = common[set].wrapping_sub(common[set | bit]);
        }
        bit <<= 1;
    }
}

/// One output word of the table-driven split: `held[a]` AND the entry of
/// `table` that the other inputs' bits select, bit by bit (the others in
/// index order, the first of them choosing between neighbouring entries).
#[inline(always)]
pub(super) fn split_word(held: &[u64], a: usize, table: u8) -> u64 {
    let mut level: [u64; 8] = core::array::from_fn(|entry| if table >> entry & 1 == 1 { u64::MAX } else { 0 });
    let mut width = 1 << held.len().saturating_sub(1);
    for (_, &bits) in held.iter().enumerate().filter(|&(p, _)| p != a) {
        width /= 2;
        for entry in 0..width {
            let (low, high) = (level[2 * entry], level[2 * entry + 1]);
            level[entry] = low ^ (bits & (low ^ high));
        }
    }
    held[a] & level[0]
}
