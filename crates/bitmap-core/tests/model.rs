//! Every `Bitmap` operation against a naive `Vec<bool>` model, over lengths
//! around the word boundaries and contents of several densities (all clear,
//! sparse, half, dense, all set), checking the tail-bit invariant after every
//! operation.
//!
//! The operations run on whichever kernel is active: CI reruns this suite
//! with `BITMAP_CORE_KERNEL` set to each kernel, so nothing here assumes one.

use std::ops::Bound;

use bitmap_core::{Bitmap, BitmapError, SizeUnit};
mod model_support;

use model_support::*;

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
