//! Every `Bitmap` operation against a naive `Vec<bool>` model, over lengths
//! around the word boundaries and contents of several densities (all clear,
//! sparse, half, dense, all set), checking the tail-bit invariant after every
//! operation.
//!
//! The operations run on whichever kernel is active: CI reruns this suite
//! with `BITMAP_CORE_KERNEL` set to each kernel, so nothing here assumes one.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::ops::Bound;

use bitmap_core::{Bitmap, BitmapError, SizeUnit};

/// Lengths on both sides of every word boundary the code cares about, plus
/// two longer ones that cross the kernels' SIMD block sizes. Miri runs the
/// same logic on the shorter ones only (it is orders of magnitude slower).
const LENGTHS: &[usize] = if cfg!(miri) {
    &[0, 1, 63, 64, 65, 129, 257]
} else {
    &[0, 1, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 4097]
};

/// Bit densities in 1/1024ths: all clear, sparse, half, dense, all set.
const DENSITIES: &[u32] = if cfg!(miri) { &[0, 16, 512, 1024] } else { &[0, 16, 512, 1000, 1024] };

/// The lengths and densities of the binary operations, which run on every
/// pair of densities in every form.
const PAIR_LENGTHS: &[usize] = if cfg!(miri) { &[0, 1, 64, 65, 257] } else { LENGTHS };
const PAIR_DENSITIES: &[u32] = if cfg!(miri) { &[0, 512, 1024] } else { DENSITIES };

/// xorshift64*: small, deterministic, good enough to scatter bits.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn bools(&mut self, len: usize, density: u32) -> Vec<bool> {
        (0..len).map(|_| (self.next() % 1024) < u64::from(density)).collect()
    }
}

/// Every (length, density, model) case, each with its own seed.
fn cases(seed: u64) -> impl Iterator<Item = (usize, u32, Vec<bool>)> {
    LENGTHS.iter().flat_map(move |&len| {
        DENSITIES.iter().map(move |&density| {
            let mut rng = Rng::new(seed ^ (len as u64) << 8 ^ u64::from(density));
            (len, density, rng.bools(len, density))
        })
    })
}

/// The words a correct bitmap of `model` has, computed independently of the
/// crate.
fn model_words(model: &[bool]) -> Vec<u64> {
    let mut words = vec![0u64; model.len().div_ceil(64)];
    for (i, &bit) in model.iter().enumerate() {
        if bit {
            words[i / 64] |= 1 << (i % 64);
        }
    }
    words
}

/// LMCache's byte layout of `model`: bit `i` in byte `i / 8`, position `i % 8`.
fn model_bytes(model: &[bool]) -> Vec<u8> {
    let mut bytes = vec![0u8; model.len().div_ceil(8)];
    for (i, &bit) in model.iter().enumerate() {
        if bit {
            bytes[i / 8] |= 1 << (i % 8);
        }
    }
    bytes
}

fn model_indices(model: &[bool]) -> Vec<usize> {
    model.iter().enumerate().filter(|&(_, &bit)| bit).map(|(i, _)| i).collect()
}

fn model_string(model: &[bool]) -> String {
    model.iter().map(|&bit| if bit { '1' } else { '0' }).collect()
}

/// The tail-bit invariant and the storage size.
#[track_caller]
fn assert_invariant(bitmap: &Bitmap) {
    let len = bitmap.len();
    assert_eq!(bitmap.num_words(), len.div_ceil(64), "num_words for len {len}");
    assert_eq!(bitmap.as_words().len(), len.div_ceil(64), "words for len {len}");
    if len > 0 {
        assert_eq!(bitmap.as_words().as_ptr().align_offset(64), 0, "words of len {len} do not start on a cache line");
    }
    if !len.is_multiple_of(64) {
        let last = *bitmap.as_words().last().unwrap();
        assert_eq!(last >> (len % 64), 0, "bits past len {len} are set: last word {last:#018x}");
    }
}

/// `bitmap` holds exactly `model`, and the invariant holds.
#[track_caller]
fn check(bitmap: &Bitmap, model: &[bool]) {
    assert_invariant(bitmap);
    assert_eq!(bitmap.len(), model.len());
    assert_eq!(bitmap.as_words(), model_words(model), "len {}", model.len());
}

fn hash_of(bitmap: &Bitmap) -> u64 {
    let mut hasher = DefaultHasher::new();
    bitmap.hash(&mut hasher);
    hasher.finish()
}

#[test]
fn constructors() {
    for (len, density, model) in cases(1) {
        let ctx = format!("len {len}, density {density}");
        let indices = model_indices(&model);

        check(&Bitmap::new(len), &vec![false; len]);
        assert_eq!(Bitmap::new(len).len(), len);
        assert_eq!(Bitmap::new(len).is_empty(), len == 0);

        for n in [0, 1, len / 2, len.saturating_sub(1), len, len + 1, len + 100, usize::MAX] {
            let prefix: Vec<bool> = (0..len).map(|i| i < n).collect();
            check(&Bitmap::with_prefix(len, n), &prefix);
        }

        let from_bools = Bitmap::from_bools(&model);
        check(&from_bools, &model);

        check(&Bitmap::from_indices(len, indices.iter().copied()).unwrap(), &model);
        // Any order, with repeats.
        let mut scrambled: Vec<usize> = indices.iter().rev().chain(indices.iter().step_by(3)).copied().collect();
        let third = scrambled.len() / 3;
        scrambled.rotate_left(third);
        check(&Bitmap::from_indices(len, scrambled).unwrap(), &model);

        let collected: Bitmap = model.iter().copied().collect();
        check(&collected, &model);

        // Extend and push, in pieces that cross word boundaries unevenly.
        let mut pushed = Bitmap::new(0);
        check(&pushed, &[]);
        let (head, tail) = model.split_at(len / 3);
        pushed.extend(head.iter().copied());
        check(&pushed, head);
        let (middle, rest) = tail.split_at(tail.len() / 2);
        pushed.extend(middle);
        check(&pushed, &model[..head.len() + middle.len()]);
        for (i, &bit) in rest.iter().enumerate() {
            pushed.push(bit);
            // The invariant after every push; the contents once at the end
            // (comparing them every time would be quadratic).
            assert_invariant(&pushed);
            assert_eq!(pushed.len(), head.len() + middle.len() + i + 1);
            assert_eq!(pushed.test(pushed.len() - 1), bit);
        }
        check(&pushed, &model);
        assert_eq!(pushed, from_bools, "{ctx}");

        let mut with_capacity = Bitmap::with_capacity_bits(len);
        check(&with_capacity, &[]);
        assert!(with_capacity.capacity_bits() >= len, "{ctx}");
        with_capacity.extend(model.iter().copied());
        check(&with_capacity, &model);

        check(&Bitmap::from_words(len, model_words(&model)).unwrap(), &model);
        check(&Bitmap::from_bytes(len, &model_bytes(&model)).unwrap(), &model);
        assert_eq!(from_bools.clone().into_words(), model_words(&model));

        let cloned = from_bools.clone();
        check(&cloned, &model);
        assert_eq!(cloned, from_bools);
        assert_eq!(hash_of(&cloned), hash_of(&from_bools));
    }
    check(&Bitmap::default(), &[]);
    assert_eq!(Bitmap::default(), Bitmap::new(0));
}

#[test]
fn equality_and_hash_follow_the_bits() {
    for (len, _, model) in cases(2) {
        let bitmap = Bitmap::from_bools(&model);
        for i in [0, len / 2, len.wrapping_sub(1)] {
            if i >= len {
                continue;
            }
            let mut other = bitmap.clone();
            other.toggle(i);
            assert_ne!(other, bitmap, "len {len}, bit {i}");
            other.toggle(i);
            assert_eq!(other, bitmap);
            assert_eq!(hash_of(&other), hash_of(&bitmap));
        }
        // Same bits, other length.
        let mut longer = model.clone();
        longer.push(false);
        assert_ne!(Bitmap::from_bools(&longer), bitmap);
    }
}

#[test]
fn reset_copy_from_and_clone_from_reuse_the_buffer() {
    for (len, _, model) in cases(3) {
        let source = Bitmap::from_bools(&model);
        for other_len in [0, 1, 64, 65, 300] {
            let mut reused = Bitmap::with_prefix(other_len, other_len / 2);
            reused.reset(len);
            check(&reused, &vec![false; len]);

            let mut copy = Bitmap::with_prefix(other_len, other_len);
            copy.copy_from(&source);
            check(&copy, &model);

            let mut cloned = Bitmap::with_prefix(other_len, 3);
            cloned.clone_from(&source);
            check(&cloned, &model);
        }
        // Reset to a shorter length and grow back: no stale bits reappear.
        let mut shrink = source.clone();
        let capacity = shrink.capacity_bits();
        shrink.reset(len / 2);
        check(&shrink, &vec![false; len / 2]);
        shrink.reset(len);
        check(&shrink, &vec![false; len]);
        assert_eq!(shrink.capacity_bits(), capacity, "reset within capacity must not reallocate");
    }
}

#[test]
fn single_bits() {
    for (len, density, model) in cases(4) {
        let mut rng = Rng::new(len as u64 * 31 + u64::from(density));
        let mut bitmap = Bitmap::from_bools(&model);
        let mut model = model;
        let steps = match len {
            0 => 0,
            _ if cfg!(miri) => 20,
            _ => 3 * len + 10,
        };
        for _ in 0..steps {
            let i = rng.below(len);
            let value = rng.next() & 1 == 1;
            match rng.below(7) {
                0 => {
                    bitmap.set(i);
                    model[i] = true;
                }
                1 => {
                    bitmap.clear(i);
                    model[i] = false;
                }
                2 => {
                    bitmap.toggle(i);
                    model[i] = !model[i];
                }
                3 => {
                    bitmap.assign(i, value);
                    model[i] = value;
                }
                4 => {
                    assert_eq!(bitmap.try_set(i), Ok(()));
                    model[i] = true;
                }
                5 => {
                    assert_eq!(bitmap.try_clear(i), Ok(()));
                    model[i] = false;
                }
                _ => {
                    let more = [i, rng.below(len), rng.below(len)];
                    assert_eq!(bitmap.set_indices(more), Ok(()));
                    more.iter().for_each(|&j| model[j] = true);
                }
            }
            check(&bitmap, &model);
            assert_eq!(bitmap.test(i), model[i]);
            assert_eq!(bitmap.get(i), Some(model[i]));
        }
        for (i, &bit) in model.iter().enumerate() {
            assert_eq!(bitmap.test(i), bit, "len {len}, bit {i}");
            assert_eq!(bitmap.get(i), Some(bit));
        }

        // Out of range: nothing changes.
        for index in [len, len + 1, len + 64, usize::MAX] {
            assert_eq!(bitmap.get(index), None);
            let error = BitmapError::IndexOutOfRange { index, len };
            assert_eq!(bitmap.try_set(index), Err(error.clone()));
            assert_eq!(bitmap.try_clear(index), Err(error.clone()));
            check(&bitmap, &model);
            assert_eq!(Bitmap::from_indices(len, [index]), Err(error));
        }

        // `set_indices` keeps what it set before the bad index and stops there.
        if len > 0 {
            let first = rng.below(len);
            let never = (first + 1) % len;
            let mut partial = Bitmap::new(len);
            let mut expected = vec![false; len];
            expected[first] = true;
            assert_eq!(partial.set_indices([first, len, never]), Err(BitmapError::IndexOutOfRange { index: len, len }));
            if never != first {
                check(&partial, &expected);
            }
        }
    }
}

/// A range and its clamped model `start..end` (computed here, independently
/// of the crate's clamping).
fn range_cases(len: usize) -> Vec<(Bound<usize>, Bound<usize>)> {
    let points: &[usize] = if cfg!(miri) {
        &[0, 1, 64, 65, len / 2, len, len + 1]
    } else {
        &[0, 1, 2, 31, 63, 64, 65, 127, 128, 129, len / 2, len.saturating_sub(1), len, len + 1, len + 100]
    };
    let mut ranges = Vec::new();
    for &start in points {
        for &end in points {
            ranges.push((Bound::Included(start), Bound::Excluded(end)));
        }
        ranges.push((Bound::Included(start), Bound::Unbounded));
        ranges.push((Bound::Unbounded, Bound::Excluded(start)));
        ranges.push((Bound::Unbounded, Bound::Included(start)));
        ranges.push((Bound::Included(start), Bound::Included(start + 5)));
        ranges.push((Bound::Excluded(start), Bound::Excluded(start + 70)));
    }
    ranges.push((Bound::Unbounded, Bound::Unbounded));
    ranges.push((Bound::Included(usize::MAX), Bound::Unbounded));
    ranges.push((Bound::Unbounded, Bound::Included(usize::MAX)));
    ranges.push((Bound::Excluded(usize::MAX), Bound::Included(usize::MAX)));
    ranges
}

fn model_span(len: usize, range: &(Bound<usize>, Bound<usize>)) -> std::ops::Range<usize> {
    let start = match range.0 {
        Bound::Included(s) => s as u128,
        Bound::Excluded(s) => s as u128 + 1,
        Bound::Unbounded => 0,
    };
    let end = match range.1 {
        Bound::Included(e) => e as u128 + 1,
        Bound::Excluded(e) => e as u128,
        Bound::Unbounded => len as u128,
    };
    let end = end.min(len as u128) as usize;
    let start = start.min(end as u128) as usize;
    start..end
}

#[test]
fn ranges() {
    // Miri: the range cases are quadratic in the number of points.
    let densities: &[u32] = if cfg!(miri) { &[512] } else { DENSITIES };
    for (len, density, model) in cases(5).filter(|(_, d, _)| densities.contains(d)) {
        for range in range_cases(len) {
            let span = model_span(len, &range);
            let ctx = format!("len {len}, density {density}, range {range:?}");

            let expected_count = model[span.clone()].iter().filter(|&&bit| bit).count();
            let bitmap = Bitmap::from_bools(&model);
            assert_eq!(bitmap.count_range(range), expected_count, "{ctx}");

            let mut set = bitmap.clone();
            set.set_range(range);
            let mut set_model = model.clone();
            set_model[span.clone()].fill(true);
            check(&set, &set_model);

            let mut cleared = bitmap.clone();
            cleared.clear_range(range);
            let mut cleared_model = model.clone();
            cleared_model[span.clone()].fill(false);
            check(&cleared, &cleared_model);
        }
        // The concrete range types.
        let bitmap = Bitmap::from_bools(&model);
        let ones = |r: std::ops::Range<usize>| model[r].iter().filter(|&&bit| bit).count();
        assert_eq!(bitmap.count_range(..), ones(0..len));
        assert_eq!(bitmap.count_range(len / 3..), ones(len / 3..len));
        assert_eq!(bitmap.count_range(..len / 3), ones(0..len / 3));
        assert_eq!(bitmap.count_range(len / 4..len / 2), ones(len / 4..len / 2));
        if len > 0 {
            assert_eq!(bitmap.count_range(len / 4..=len / 2), ones(len / 4..len / 2 + 1));
            assert_eq!(bitmap.count_range(..=len - 1), ones(0..len));
        }
    }
}

#[test]
fn whole_bitmap_and_not() {
    for (len, _, model) in cases(6) {
        let bitmap = Bitmap::from_bools(&model);
        let inverse: Vec<bool> = model.iter().map(|&bit| !bit).collect();

        let mut all = bitmap.clone();
        all.set_all();
        check(&all, &vec![true; len]);
        all.clear_all();
        check(&all, &vec![false; len]);

        let mut inverted = bitmap.clone();
        inverted.invert();
        check(&inverted, &inverse);
        inverted.invert();
        check(&inverted, &model);

        check(&!&bitmap, &inverse);
        check(&!bitmap.clone(), &inverse);
        check(&!!bitmap.clone(), &model);
        check(&bitmap, &model);
    }
}

/// One way to compute a binary operation, with its name.
type Form = (&'static str, fn(&Bitmap, &Bitmap) -> Bitmap);

/// One binary operation: its model and every way to compute it.
struct BinaryOp {
    name: &'static str,
    model: fn(bool, bool) -> bool,
    forms: Vec<Form>,
    fused: fn(&Bitmap, &Bitmap) -> usize,
    try_fused: fn(&Bitmap, &Bitmap) -> Result<usize, BitmapError>,
    try_in_place: fn(&mut Bitmap, &Bitmap) -> Result<(), BitmapError>,
}

macro_rules! forms {
    ($op:tt, $op_assign:tt, $named:ident, $try_named:ident) => {
        vec![
            ("&a op &b", |a: &Bitmap, b: &Bitmap| a $op b),
            ("a op &b", |a: &Bitmap, b: &Bitmap| a.clone() $op b),
            ("&a op b", |a: &Bitmap, b: &Bitmap| a $op b.clone()),
            ("a op b", |a: &Bitmap, b: &Bitmap| a.clone() $op b.clone()),
            ("a op= &b", |a: &Bitmap, b: &Bitmap| {
                let mut c = a.clone();
                c $op_assign b;
                c
            }),
            ("a op= b", |a: &Bitmap, b: &Bitmap| {
                let mut c = a.clone();
                c $op_assign b.clone();
                c
            }),
            ("named", |a: &Bitmap, b: &Bitmap| {
                let mut c = a.clone();
                c.$named(b);
                c
            }),
            ("try_named", |a: &Bitmap, b: &Bitmap| {
                let mut c = a.clone();
                c.$try_named(b).unwrap();
                c
            }),
        ]
    };
}

fn binary_ops() -> Vec<BinaryOp> {
    vec![
        BinaryOp {
            name: "and",
            model: |a, b| a & b,
            forms: forms!(&, &=, intersect_with, try_intersect_with),
            fused: Bitmap::and_popcount,
            try_fused: Bitmap::try_and_popcount,
            try_in_place: Bitmap::try_intersect_with,
        },
        BinaryOp {
            name: "or",
            model: |a, b| a | b,
            forms: forms!(|, |=, union_with, try_union_with),
            fused: Bitmap::or_popcount,
            try_fused: Bitmap::try_or_popcount,
            try_in_place: Bitmap::try_union_with,
        },
        BinaryOp {
            name: "xor",
            model: |a, b| a ^ b,
            forms: forms!(^, ^=, symmetric_difference_with, try_symmetric_difference_with),
            fused: Bitmap::xor_popcount,
            try_fused: Bitmap::try_xor_popcount,
            try_in_place: Bitmap::try_symmetric_difference_with,
        },
        BinaryOp {
            name: "and-not",
            model: |a, b| a & !b,
            forms: forms!(-, -=, difference_with, try_difference_with),
            fused: Bitmap::and_not_popcount,
            try_fused: Bitmap::try_and_not_popcount,
            try_in_place: Bitmap::try_difference_with,
        },
    ]
}

#[test]
fn binary_operations() {
    let ops = binary_ops();
    for &len in PAIR_LENGTHS {
        for (i, &density_a) in PAIR_DENSITIES.iter().enumerate() {
            for (j, &density_b) in PAIR_DENSITIES.iter().enumerate() {
                let mut rng = Rng::new((len * 97 + i * 7 + j) as u64);
                let model_a = rng.bools(len, density_a);
                let model_b = rng.bools(len, density_b);
                let a = Bitmap::from_bools(&model_a);
                let b = Bitmap::from_bools(&model_b);
                for op in &ops {
                    let expected: Vec<bool> = model_a.iter().zip(&model_b).map(|(&x, &y)| (op.model)(x, y)).collect();
                    let expected_count = expected.iter().filter(|&&bit| bit).count();
                    for (form, compute) in &op.forms {
                        let result = compute(&a, &b);
                        assert_eq!(result.as_words(), model_words(&expected), "{} {form}, len {len}", op.name);
                        check(&result, &expected);
                    }
                    assert_eq!((op.fused)(&a, &b), expected_count, "fused {} len {len}", op.name);
                    assert_eq!((op.try_fused)(&a, &b), Ok(expected_count));
                    // The operands are untouched.
                    check(&a, &model_a);
                    check(&b, &model_b);
                }
                let subset = model_a.iter().zip(&model_b).all(|(&x, &y)| !x || y);
                let disjoint = model_a.iter().zip(&model_b).all(|(&x, &y)| !(x && y));
                assert_eq!(a.is_subset(&b), subset);
                assert_eq!(a.is_disjoint(&b), disjoint);
            }
        }
    }
}

#[test]
fn binary_operations_reject_other_lengths() {
    for (len, _, model) in cases(7) {
        let a = Bitmap::from_bools(&model);
        for other_len in [len + 1, len + 64, len.saturating_sub(1)] {
            if other_len == len {
                continue;
            }
            let other = Bitmap::with_prefix(other_len, other_len);
            let error = BitmapError::LengthMismatch { left: len, right: other_len };
            for op in binary_ops() {
                let mut c = a.clone();
                assert_eq!((op.try_in_place)(&mut c, &other), Err(error.clone()), "{}", op.name);
                check(&c, &model);
                assert_eq!((op.try_fused)(&a, &other), Err(error.clone()), "{}", op.name);
            }
            assert_eq!(Bitmap::union_of(len, &[&a, &other]), Err(error.clone()));
            let mut target = a.clone();
            assert_eq!(target.union_many_into(&[&a.clone(), &other]), Err(error.clone()));
            check(&target, &model);
        }
    }
}

/// `n` random sources of `len` bits for the many-input operations, of
/// assorted sparse densities: their models and their bitmaps.
fn many_sources(seed: u64, len: usize, n: usize) -> (Vec<Vec<bool>>, Vec<Bitmap>) {
    let mut rng = Rng::new(seed);
    let models: Vec<Vec<bool>> = (0..n).map(|k| rng.bools(len, DENSITIES[k % DENSITIES.len()] / 4)).collect();
    let bitmaps = models.iter().map(|m| Bitmap::from_bools(m)).collect();
    (models, bitmaps)
}

#[test]
fn unions_of_many() {
    let counts: &[usize] = if cfg!(miri) { &[0, 1, 3, 17] } else { &[0, 1, 2, 3, 5, 15, 16, 17, 20, 40] };
    for &len in LENGTHS {
        for &n in counts {
            let (models, bitmaps) = many_sources((len * 1000 + n) as u64, len, n);
            let sources: Vec<&Bitmap> = bitmaps.iter().collect();
            let expected: Vec<bool> = (0..len).map(|i| models.iter().any(|m| m[i])).collect();

            check(&Bitmap::union_of(len, &sources).unwrap(), &expected);

            let mut into = Bitmap::with_prefix(len, len / 2); // previous bits are replaced
            into.union_many_into(&sources).unwrap();
            check(&into, &expected);

            let folded = bitmaps.iter().fold(Bitmap::new(len), |acc, b| acc | b);
            check(&folded, &expected);
        }
    }
}

#[test]
fn first_wins_splits() {
    // Under Miri: the inline (3) and the `Vec` (17) paths, at the pair lengths.
    let counts: &[usize] = if cfg!(miri) { &[3, 17] } else { &[0, 1, 2, 3, 5, 8, 9, 16, 17, 20] };
    for &len in PAIR_LENGTHS {
        for &n in counts {
            let (models, bitmaps) = many_sources((len * 977 + n) as u64, len, n);
            let sources: Vec<&Bitmap> = bitmaps.iter().collect();
            let mut claimed = vec![false; len];
            let expected: Vec<Vec<bool>> = models
                .iter()
                .map(|model| {
                    let first: Vec<bool> = (0..len).map(|i| model[i] && !claimed[i]).collect();
                    claimed.iter_mut().zip(model).for_each(|(c, &m)| *c |= m);
                    first
                })
                .collect();

            // Fresh outputs, and reused ones that are longer, shorter and full
            // of set bits: every word is replaced.
            let mut fresh = vec![Bitmap::default(); n];
            Bitmap::first_wins_split(&sources, &mut fresh).unwrap();
            let mut reused: Vec<Bitmap> = (0..n).map(|k| Bitmap::with_prefix(len + 70 * (k % 3), len + 70)).collect();
            reused.iter_mut().step_by(2).for_each(|b| b.reset(len / 2));
            Bitmap::first_wins_split(&sources, &mut reused).unwrap();
            for (k, expected) in expected.iter().enumerate() {
                check(&fresh[k], expected);
                check(&reused[k], expected);
            }
            match n {
                1 => first_wins_split_array_matches::<1>(&sources, &expected),
                2 => first_wins_split_array_matches::<2>(&sources, &expected),
                3 => first_wins_split_array_matches::<3>(&sources, &expected),
                _ => {}
            }
        }
    }
}

/// `first_wins_split_array` against the first-wins model, into outputs
/// that all have room (written in place: longer, shorter and full of set
/// bits, or empty with capacity) and into outputs of which one must grow
/// (written into new capacity).
fn first_wins_split_array_matches<const M: usize>(sources: &[&Bitmap], expected: &[Vec<bool>]) {
    let sources: &[&Bitmap; M] = sources.try_into().expect("M sources");
    let len = sources[0].len();
    let with_room = |k: usize| match k % 3 {
        0 => Bitmap::with_prefix(len + 70, len + 70),
        1 => {
            let mut shorter = Bitmap::with_prefix(len + 140, len + 140);
            shorter.truncate(len / 2);
            shorter
        }
        _ => Bitmap::with_capacity_bits(len),
    };
    let mut in_place: [Bitmap; M] = core::array::from_fn(with_room);
    let mut growing: [Bitmap; M] = core::array::from_fn(|k| if k + 1 == M { Bitmap::default() } else { with_room(k) });
    Bitmap::first_wins_split_array(sources, in_place.each_mut()).unwrap();
    Bitmap::first_wins_split_array(sources, growing.each_mut()).unwrap();
    for (k, expected) in expected.iter().enumerate() {
        check(&in_place[k], expected);
        check(&growing[k], expected);
    }
}

#[test]
fn first_wins_split_rejects_mismatches() {
    let (a, b) = (Bitmap::with_prefix(70, 10), Bitmap::new(71));
    let mut outputs = [Bitmap::with_prefix(5, 5), Bitmap::new(0)];
    let error = Bitmap::first_wins_split(&[&a, &b], &mut outputs);
    assert_eq!(error, Err(BitmapError::LengthMismatch { left: 70, right: 71 }));
    check(&outputs[0], &[true; 5]);
    let outcome = std::panic::catch_unwind(move || {
        let mut outputs = [Bitmap::new(0)];
        let _ = Bitmap::first_wins_split(&[&a, &a], &mut outputs);
    });
    let message = *outcome.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("2 sources but 1 outputs"), "{message}");
}

#[test]
fn first_wins_split_array_rejects_mismatches() {
    let (a, b) = (Bitmap::with_prefix(70, 10), Bitmap::new(71));
    let mut outputs = [Bitmap::with_prefix(5, 5), Bitmap::with_capacity_bits(128)];
    let [first, second] = &mut outputs;
    let error = Bitmap::first_wins_split_array(&[&a, &b], [first, second]);
    assert_eq!(error, Err(BitmapError::LengthMismatch { left: 70, right: 71 }));
    check(&outputs[0], &[true; 5]);
    check(&outputs[1], &[]);
}

#[test]
fn aggregates() {
    let mut shapes: Vec<(usize, Vec<bool>)> = cases(8).map(|(len, _, model)| (len, model)).collect();
    // Prefixes and suffixes of every interesting size, where the leading
    // counts and the first/last searches have their edge cases.
    for &len in LENGTHS {
        for cut in [0, 1, 63, 64, 65, 128, 129, len / 2, len.saturating_sub(1), len] {
            let cut = cut.min(len);
            shapes.push((len, (0..len).map(|i| i < cut).collect()));
            shapes.push((len, (0..len).map(|i| i >= cut).collect()));
            shapes.push((len, (0..len).map(|i| i == cut).collect()));
            shapes.push((len, (0..len).map(|i| i != cut).collect()));
        }
    }
    for (len, model) in shapes {
        let bitmap = Bitmap::from_bools(&model);
        let ctx = model_string(&model);
        let ones = model.iter().filter(|&&bit| bit).count();
        assert_eq!(bitmap.popcount(), ones, "{ctx}");
        assert_eq!(bitmap.count_leading_zeros(), model.iter().take_while(|&&bit| !bit).count(), "{ctx}");
        assert_eq!(bitmap.count_leading_ones(), model.iter().take_while(|&&bit| bit).count(), "{ctx}");
        assert_eq!(bitmap.first_set(), model.iter().position(|&bit| bit), "{ctx}");
        assert_eq!(bitmap.last_set(), model.iter().rposition(|&bit| bit), "{ctx}");
        assert_eq!(bitmap.any(), ones > 0, "{ctx}");
        assert_eq!(bitmap.none(), ones == 0, "{ctx}");
        assert_eq!(bitmap.all(), ones == len, "{ctx}");
        check(&bitmap, &model);
    }
}

#[test]
fn iteration() {
    for (len, density, model) in cases(9) {
        let ctx = format!("len {len}, density {density}");
        let bitmap = Bitmap::from_bools(&model);
        let indices = model_indices(&model);

        assert_eq!(bitmap.ones().collect::<Vec<_>>(), indices, "{ctx}");
        assert_eq!(bitmap.to_indices(), indices, "{ctx}");
        let mut appended = vec![usize::MAX];
        bitmap.append_indices(&mut appended);
        assert_eq!((appended[0], &appended[1..]), (usize::MAX, &indices[..]), "{ctx}");
        assert_eq!((&bitmap).into_iter().collect::<Vec<_>>(), indices, "{ctx}");
        let mut reversed = indices.clone();
        reversed.reverse();
        assert_eq!(bitmap.ones().rev().collect::<Vec<_>>(), reversed, "{ctx}");
        assert_eq!(bitmap.ones().count(), indices.len(), "{ctx}");
        assert_eq!(bitmap.ones().last(), indices.last().copied(), "{ctx}");
        assert_eq!(bitmap.ones().min(), indices.first().copied(), "{ctx}");
        assert_eq!(bitmap.ones().max(), indices.last().copied(), "{ctx}");

        // Both ends mixed, with the bounds of `size_hint` and `count` checked
        // at every step.
        let mut rng = Rng::new(len as u64 + u64::from(density));
        let mut ones = bitmap.ones();
        let (mut front, mut back) = (0, indices.len());
        loop {
            let remaining = back - front;
            let (lower, upper) = ones.size_hint();
            assert!(lower <= remaining && upper.is_none_or(|upper| remaining <= upper), "{ctx}: {lower} {upper:?}");
            assert_eq!(ones.clone().count(), remaining, "{ctx}");
            if rng.next() & 1 == 0 {
                let next = ones.next();
                assert_eq!(next, indices.get(front).copied().filter(|_| front < back), "{ctx}");
                if next.is_none() {
                    break;
                }
                front += 1;
            } else {
                let next = ones.next_back();
                assert_eq!(next, back.checked_sub(1).filter(|&b| b >= front).map(|b| indices[b]), "{ctx}");
                if next.is_none() {
                    break;
                }
                back -= 1;
            }
        }
        // Fused.
        assert_eq!(ones.next(), None);
        assert_eq!(ones.next_back(), None);

        // Every bit.
        assert_eq!(bitmap.iter().collect::<Vec<_>>(), model, "{ctx}");
        assert_eq!(bitmap.iter().len(), len);
        assert_eq!(bitmap.iter().rev().collect::<Vec<_>>(), model.iter().rev().copied().collect::<Vec<_>>());
        for n in [0, 1, 63, 64, len / 2, len, len + 1] {
            assert_eq!(bitmap.iter().nth(n), model.get(n).copied(), "{ctx}, nth {n}");
        }

        // Gather.
        let items: Vec<String> = (0..len).map(|i| format!("key{i}")).collect();
        let expected: Vec<&String> = indices.iter().map(|&i| &items[i]).collect();
        assert_eq!(bitmap.gather(&items).collect::<Vec<_>>(), expected, "{ctx}");
        assert_eq!(bitmap.try_gather(&items).unwrap().collect::<Vec<_>>(), expected, "{ctx}");
        assert_eq!(bitmap.gather(&items).rev().collect::<Vec<_>>(), expected.iter().rev().copied().collect::<Vec<_>>());
        assert_eq!(bitmap.gather(&items).count(), indices.len());
        assert_eq!(
            bitmap.try_gather(&items[..len.saturating_sub(1)]).err(),
            (len > 0).then(|| BitmapError::LengthMismatch { left: len, right: len - 1 })
        );
    }
}

#[test]
fn text() {
    for (len, _, model) in cases(10) {
        let bitmap = Bitmap::from_bools(&model);
        let text = model_string(&model);
        assert_eq!(bitmap.to_string(), text);
        let parsed: Bitmap = text.parse().unwrap();
        check(&parsed, &model);

        let debug = format!("{bitmap:?}");
        let ones = model.iter().filter(|&&bit| bit).count();
        let shown = &text[..len.min(64)];
        let more = if len > 64 { "…" } else { "" };
        assert_eq!(debug, format!("Bitmap {{ len: {len}, ones: {ones}, bits: \"{shown}{more}\" }}"));

        // A bad character anywhere is reported with its position.
        for position in [0, len / 2, len.saturating_sub(1)] {
            if position >= len {
                continue;
            }
            let found_chars: &[char] = if cfg!(miri) { &['2', '🦀'] } else { &['2', ' ', 'é', '🦀'] };
            for &found in found_chars {
                let mut bad: Vec<char> = text.chars().collect();
                bad[position] = found;
                let bad: String = bad.into_iter().collect();
                assert_eq!(bad.parse::<Bitmap>(), Err(BitmapError::InvalidChar { position, found }));
            }
        }
    }
}

#[test]
fn words_and_bytes() {
    for (len, density, model) in cases(11) {
        let ctx = format!("len {len}, density {density}");
        let bitmap = Bitmap::from_bools(&model);
        let bytes = model_bytes(&model);
        assert_eq!(bitmap.as_bytes(), bytes, "{ctx}");
        assert_eq!(bitmap.as_bytes().len(), len.div_ceil(8));
        assert_eq!(bitmap.as_words(), model_words(&model));

        check(&Bitmap::from_bytes(len, bitmap.as_bytes()).unwrap(), &model);
        check(&Bitmap::from_word_slice(len, bitmap.as_words()).unwrap(), &model);
        check(&Bitmap::from_words(len, bitmap.clone().into_words()).unwrap(), &model);

        // Wrong sizes.
        let words = model_words(&model);
        let mut longer = words.clone();
        longer.push(0);
        assert_eq!(
            Bitmap::from_words(len, longer),
            Err(BitmapError::WrongSize { expected: words.len(), actual: words.len() + 1, unit: SizeUnit::Words })
        );
        if !words.is_empty() {
            assert_eq!(
                Bitmap::from_words(len, words[1..].to_vec()),
                Err(BitmapError::WrongSize { expected: words.len(), actual: words.len() - 1, unit: SizeUnit::Words })
            );
        }
        let mut more_bytes = bytes.clone();
        more_bytes.push(0);
        assert_eq!(
            Bitmap::from_bytes(len, &more_bytes),
            Err(BitmapError::WrongSize { expected: bytes.len(), actual: bytes.len() + 1, unit: SizeUnit::Bytes })
        );

        // Every bit past the end, in the last word and the last byte, is
        // rejected and reported.
        for past in len..len.next_multiple_of(64) {
            let mut bad = words.clone();
            *bad.last_mut().unwrap() |= 1 << (past % 64);
            assert_eq!(Bitmap::from_words(len, bad), Err(BitmapError::BitPastEnd { index: past, len }), "{ctx}");
        }
        for past in len..len.next_multiple_of(8) {
            let mut bad = bytes.clone();
            *bad.last_mut().unwrap() |= 1 << (past % 8);
            assert_eq!(Bitmap::from_bytes(len, &bad), Err(BitmapError::BitPastEnd { index: past, len }), "{ctx}");
        }
    }
}

#[test]
fn words_mut_restores_the_invariant() {
    for (len, _, model) in cases(12) {
        let mut rng = Rng::new(len as u64);
        let mut bitmap = Bitmap::from_bools(&model);
        let written: Vec<u64> = (0..len.div_ceil(64)).map(|_| rng.next()).collect();
        {
            let mut words = bitmap.words_mut();
            assert_eq!(&*words, model_words(&model).as_slice());
            words.copy_from_slice(&written);
            // Disjoint halves, as rayon chunks would write them.
            let middle = words.len() / 2;
            let (left, right) = words.split_at_mut(middle);
            left.iter_mut().for_each(|w| *w = w.rotate_left(1));
            right.iter_mut().for_each(|w| *w = !*w);
        }
        let expected: Vec<bool> = (0..len)
            .map(|i| {
                let w = i / 64;
                let word = if w < len.div_ceil(64) / 2 { written[w].rotate_left(1) } else { !written[w] };
                word & (1 << (i % 64)) != 0
            })
            .collect();
        check(&bitmap, &expected);
        assert_eq!(bitmap.popcount(), expected.iter().filter(|&&bit| bit).count());
    }
}

#[test]
fn debug_output_stays_short_for_large_bitmaps() {
    let len = if cfg!(miri) { 100_000 } else { 4_000_000 };
    let mut bitmap = Bitmap::with_prefix(len, len / 2);
    bitmap.set(len - 1);
    let items = vec![0u8; len];
    let outputs = [
        format!("{bitmap:?}"),
        format!("{:?}", bitmap.ones()),
        format!("{:?}", bitmap.iter()),
        format!("{:?}", bitmap.gather(&items)),
        format!("{:?}", bitmap.words_mut()),
    ];
    for output in outputs {
        assert!(output.len() < 300, "{} bytes: {output}", output.len());
    }
    assert_eq!(format!("{:?}", bitmap.iter()), format!("Iter {{ remaining: 0..{len} }}"));
    assert!(format!("{bitmap:?}").starts_with(&format!("Bitmap {{ len: {len}, ones: {}, ", len / 2 + 1)));
}
