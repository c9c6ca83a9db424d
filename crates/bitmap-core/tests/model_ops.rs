//! The binary operations, unions of many, the first-wins splits and the
//! aggregates of `Bitmap` against the naive `Vec<bool>` model of
//! `model_support` (`model.rs` has the constructors, single bits, ranges,
//! iteration and views), checking the tail-bit invariant after every
//! operation.
//!
//! The operations run on whichever kernel is active: CI reruns this suite
//! with `BITMAP_CORE_KERNEL` set to each kernel, so nothing here assumes one.

use bitmap_core::{Bitmap, BitmapError};
mod model_support;

use model_support::*;

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
