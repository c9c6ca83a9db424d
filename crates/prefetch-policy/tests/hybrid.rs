//! The hybrid-model fold and unfold against the oracle written from the
//! definitions (`reference::naive_*`), LMCache's worked cases and error
//! rules, and the grouped forms against the flat ones.

use bitmap_core::Bitmap;
use prefetch_policy::reference::{
    lmcache_fold_unfold_ranked, naive_fold, naive_fold_grouped, naive_fold_unfold_ranked, naive_unfold,
};
use prefetch_policy::{
    FULL_ATTENTION_WINDOW, FoldWorkspace, HybridError, TrimPolicy, chunk_count, fold, fold_grouped, fold_grouped_into,
    fold_into, fold_unfold, fold_unfold_grouped, fold_unfold_grouped_into, fold_unfold_ranked, fold_unfold_ranked_into,
    merge_bitmaps, select_retained, unfold, unfold_grouped, unfold_grouped_into, unfold_range,
};
use proptest::prelude::*;

const FULL: i64 = FULL_ATTENTION_WINDOW;

/// The flat bitmap of `C` chunks × `G` groups × `R` ranks with every cell
/// for which `present(chunk, group, rank)` holds.
fn flat(chunks: usize, groups: usize, ranks: usize, present: impl Fn(usize, usize, usize) -> bool) -> Bitmap {
    (0..chunks * groups * ranks)
        .map(|i| present(i / (groups * ranks), i % (groups * ranks) / ranks, i % ranks))
        .collect()
}

/// The grouped rows of a flat bitmap (row `g·R + r` is group `g`, rank `r`),
/// with each row's window.
fn rows_of(found: &Bitmap, chunks: usize, ranks: usize, windows: &[i64]) -> (Vec<Bitmap>, Vec<i64>) {
    let width = windows.len() * ranks;
    let rows = (0..width).map(|k| (0..chunks).map(|j| found.get(j * width + k).unwrap_or(false)).collect()).collect();
    let row_windows = (0..width).map(|k| windows[k / ranks]).collect();
    (rows, row_windows)
}

#[test]
fn worked_case_full_beside_window_2() {
    // C = 5, groups [full present {0,1,2,3}, window 2 present {2,3,4}].
    let found = flat(5, 2, 1, |j, g, _| if g == 0 { j <= 3 } else { j >= 2 });
    let (hit, mask) = fold_unfold(&found, 5, &[FULL, 2]).unwrap();
    assert_eq!(hit, 4);
    assert_eq!(mask.to_indices(), [0, 2, 4, 5, 6, 7]);
}

#[test]
fn window_group_holding_only_the_tail_serves_the_whole_prefix() {
    // 6 chunks: a window-2 group holding only {4, 5} beside a full group holding all.
    let found = flat(6, 2, 1, |j, g, _| g == 0 || j >= 4);
    let (hit, mask) = fold_unfold(&found, 6, &[FULL, 2]).unwrap();
    assert_eq!(hit, 6);
    assert_eq!(mask, flat(6, 2, 1, |j, g, _| g == 0 || j >= 4));
}

#[test]
fn mamba_needs_only_the_last_chunk() {
    for last in 0..8 {
        let found = Bitmap::from_indices(8, [last]).unwrap();
        assert_eq!(fold(&found, 8, 1, &[1]).unwrap().to_indices(), [last]);
        let (hit, mask) = fold_unfold(&found, 8, &[1]).unwrap();
        assert_eq!((hit, mask.to_indices()), (last + 1, vec![last]));
    }
    // Beside a full group holding everything: the hit is the last present chunk + 1.
    let found = flat(8, 2, 1, |j, g, _| g == 0 || j == 2 || j == 5);
    assert_eq!(fold_unfold(&found, 8, &[FULL, 1]).unwrap().0, 6);
}

#[test]
fn a_chunk_missing_one_rank_is_absent() {
    for missing_rank in 0..4 {
        let found = flat(6, 1, 4, |j, _, r| !(j == 3 && r == missing_rank));
        assert_eq!(fold(&found, 6, 4, &[FULL]).unwrap().to_string(), "111000");
        assert_eq!(fold(&found, 6, 4, &[1]).unwrap().to_string(), "111011");
        assert_eq!(fold_unfold_ranked(&found, 6, 4, &[FULL]).unwrap(), (3, Bitmap::with_prefix(24, 12)));
    }
}

#[test]
fn adversarial_hybrid_case_hits_130() {
    let windows = [FULL, FULL, 8, 32, 1];
    let found =
        flat(300, 5, 4, |j, g, r| !matches!((j, g, r), (150, 0, _) | (220, 1, 2) | (10..=12, 2, _) | (130, 3, _)));
    let (hit, mask) = fold_unfold_ranked(&found, 300, 4, &windows).unwrap();
    assert_eq!(hit, 130);
    assert_eq!((hit, mask.clone()), naive_fold_unfold_ranked(&found, 300, 4, &windows).unwrap());
    assert_eq!(mask, naive_unfold(130, 300, 4, &windows).unwrap());
    let (rows, row_windows) = rows_of(&found, 300, 4, &windows);
    assert_eq!(fold_unfold_grouped(&rows, &row_windows).unwrap().0, 130);
}

#[test]
fn zero_chunks_and_gappy_windows_and_clamping() {
    assert_eq!(fold_unfold(&Bitmap::new(0), 0, &[FULL, 2]).unwrap(), (0, Bitmap::new(0)));
    let found = Bitmap::from_indices(5, [0, 1, 3, 4]).unwrap();
    assert_eq!(fold(&found, 5, 1, &[2]).unwrap().to_indices(), [0, 1, 4]);
    assert_eq!(unfold(99, 3, 1, &[FULL]).unwrap().to_indices(), [0, 1, 2]);
    assert_eq!(unfold(0, 3, 2, &[FULL, 1]).unwrap(), Bitmap::new(12));
    assert_eq!(
        fold_unfold_grouped(&[Bitmap::new(0), Bitmap::new(0)], &[FULL, 2]).unwrap(),
        (0, vec![Bitmap::new(0), Bitmap::new(0)])
    );
}

#[test]
fn single_full_group_is_leading_ones_and_all_full_is_their_minimum() {
    let found = Bitmap::with_prefix(50, 37);
    let (hit, mask) = fold_unfold(&found, 50, &[FULL]).unwrap();
    assert_eq!((hit, mask), (37, Bitmap::with_prefix(50, 37)));
    // Three full groups (every window <= 0 is full) with 12, 30 and 7 leading chunks.
    let leading = [12, 30, 7];
    let found = flat(40, 3, 2, |j, g, _| j < leading[g]);
    let (hit, mask) = fold_unfold_ranked(&found, 40, 2, &[FULL, 0, -7]).unwrap();
    assert_eq!((hit, mask), (7, Bitmap::with_prefix(240, 7 * 6)));
}

#[test]
fn single_gap_sweep_over_all_ones() {
    for (chunks, ranks, windows) in [(20, 2, vec![0, -7]), (17, 3, vec![FULL, 3, 1]), (9, 1, vec![5, FULL])] {
        let width = windows.len() * ranks;
        for gap in 0..chunks * width {
            let mut found = Bitmap::with_prefix(chunks * width, chunks * width);
            found.clear(gap);
            let got = fold_unfold_ranked(&found, chunks, ranks, &windows).unwrap();
            assert_eq!(got, naive_fold_unfold_ranked(&found, chunks, ranks, &windows).unwrap(), "gap {gap}");
            if windows.iter().all(|&w| w <= 0) {
                let hit = gap / width;
                assert_eq!(got, (hit, Bitmap::with_prefix(chunks * width, hit * width)));
            }
        }
    }
}

#[test]
fn bits_past_the_end_of_found_are_absent_and_extra_bits_ignored() {
    // 4 chunks × 2 groups; found stops in the middle of chunk 2.
    let found = Bitmap::with_prefix(5, 5);
    assert_eq!(fold(&found, 4, 1, &[FULL, FULL]).unwrap().to_string(), "1100");
    assert_eq!(fold(&found, 4, 1, &[1, 1]).unwrap().to_string(), "1100");
    // Bits past C·G·R do not count.
    let found = Bitmap::with_prefix(100, 100);
    assert_eq!(fold(&found, 4, 1, &[FULL, 2]).unwrap().to_string(), "1111");
    assert_eq!(fold_unfold(&found, 4, &[FULL, 2]).unwrap().1.len(), 8);
}

#[test]
fn errors_never_panics() {
    let found = Bitmap::with_prefix(8, 8);
    assert_eq!(fold(&found, 4, 0, &[FULL]), Err(HybridError::ZeroRanks));
    assert_eq!(unfold(2, 4, 0, &[FULL]), Err(HybridError::ZeroRanks));
    assert_eq!(fold_unfold_ranked(&found, 4, 0, &[FULL]), Err(HybridError::ZeroRanks));
    assert_eq!(fold(&found, 4, 1, &[]), Err(HybridError::NoWindows));
    assert_eq!(unfold(2, 4, 1, &[]), Err(HybridError::NoWindows));
    assert_eq!(fold_unfold(&found, 4, &[]), Err(HybridError::NoWindows));
    assert_eq!(chunk_count(-1), Err(HybridError::NegativeChunkCount { num_chunks: -1 }));
    assert_eq!(chunk_count(0), Ok(0));
    assert_eq!(unfold_grouped(2, 4, &[]), Err(HybridError::NoWindows));

    let rows = [Bitmap::new(4), Bitmap::new(5), Bitmap::new(4)];
    assert_eq!(fold_grouped::<Bitmap>(&[], &[]), Err(HybridError::NoWindows));
    assert_eq!(fold_grouped(&rows[..2], &[]), Err(HybridError::NoWindows));
    assert_eq!(fold_grouped(&rows, &[FULL, 1]), Err(HybridError::RowWindowMismatch { rows: 3, windows: 2 }));
    assert_eq!(fold_grouped::<Bitmap>(&[], &[FULL]), Err(HybridError::RowWindowMismatch { rows: 0, windows: 1 }));
    assert_eq!(fold_grouped(&rows, &[FULL, 1, 2]), Err(HybridError::RaggedRows { row: 1, len: 5, expected: 4 }));
    assert_eq!(fold_unfold_grouped(&rows, &[FULL, 1, 2]), Err(HybridError::RaggedRows { row: 1, len: 5, expected: 4 }));

    // Shapes whose key count does not fit: an error, not an overflow.
    let huge = usize::MAX / 2;
    assert!(matches!(fold(&found, 4, huge, &[FULL, FULL, FULL]), Err(HybridError::SizeOverflow { .. })));
    assert!(matches!(unfold(1, huge, 4, &[FULL]), Err(HybridError::SizeOverflow { .. })));
    // A huge chunk count over a short `found` folds to nothing past its end.
    assert_eq!(fold(&found, 1 << 20, 1, &[FULL]).unwrap().popcount(), 8);
}

#[test]
fn unfold_range_matches_lmcache() {
    assert_eq!(unfold_range(0, FULL), (0, 0));
    assert_eq!(unfold_range(-3, 2), (0, 0));
    assert_eq!(unfold_range(5, FULL), (0, 5));
    assert_eq!(unfold_range(5, 0), (0, 5));
    assert_eq!(unfold_range(5, 2), (3, 5));
    assert_eq!(unfold_range(5, 9), (0, 5));
    assert_eq!(unfold_range(i64::MAX, 1), (i64::MAX as usize - 1, i64::MAX as usize));
}

#[test]
fn merge_and_select_retained() {
    let a: Bitmap = "1000001".parse().unwrap();
    let b: Bitmap = "0110".parse().unwrap();
    assert_eq!(merge_bitmaps(&[&a, &b], 7).to_string(), "1110001");
    assert_eq!(merge_bitmaps(&[&a, &b], 5).to_string(), "11100");
    assert_eq!(merge_bitmaps(&[&a], 70).to_indices(), [0, 6]);
    assert_eq!(merge_bitmaps::<Bitmap>(&[], 4), Bitmap::new(4));
    let found: Bitmap = "1101".parse().unwrap();
    assert_eq!(select_retained(&found, 4, TrimPolicy::Prefix).to_string(), "1100");
    assert_eq!(select_retained(&found, 9, TrimPolicy::Prefix).to_string(), "110000000");
    assert_eq!(select_retained(&found, 4, TrimPolicy::SegmentedPrefix), found);
    assert_eq!(select_retained(&found, 4, TrimPolicy::Sparse), found);
}

#[test]
fn lmcache_loop_matches_the_oracle_on_deterministic_patterns() {
    for chunks in [0, 1, 7, 64, 65, 300] {
        for ranks in 1..=4 {
            for windows in [vec![FULL], vec![FULL, 2], vec![3, 1, FULL, 0, 17]] {
                let groups = windows.len();
                let found = flat(chunks, groups, ranks, |j, g, r| (j * 7 + g * 3 + r) % 23 != 0);
                assert_eq!(
                    lmcache_fold_unfold_ranked(&found, chunks, ranks, &windows).unwrap(),
                    naive_fold_unfold_ranked(&found, chunks, ranks, &windows).unwrap()
                );
            }
        }
    }
}

/// A random flat input: a shape, windows, and found bits either random at
/// a density or all set but one.
#[derive(Clone, Debug)]
struct Case {
    chunks: usize,
    ranks: usize,
    windows: Vec<i64>,
    found: Bitmap,
}

/// Found bits set with probability `density` (xorshift64*).
fn random_bits(len: usize, density: f64, seed: u64) -> Bitmap {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            ((state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64) < density
        })
        .collect()
}

fn case() -> impl Strategy<Value = Case> {
    (0..=300usize, 1..=8usize, prop::collection::vec(-2..=40i64, 1..=6)).prop_flat_map(|(chunks, ranks, windows)| {
        let len = chunks * ranks * windows.len();
        // Mostly exactly C·G·R bits; sometimes a shorter or longer `found`.
        let found_len = prop_oneof![8 => Just(len), 1 => 0..=len, 1 => len..=len + 130];
        let bits = prop_oneof![
            (0.5..=1.0f64, any::<u64>()).prop_map(|(density, seed)| (Some(density), seed)),
            // Denser: most cases keep a long prefix.
            (0.97..=1.0f64, any::<u64>()).prop_map(|(density, seed)| (Some(density), seed)),
            // All ones but one gap.
            any::<u64>().prop_map(|gap| (None, gap)),
        ];
        (Just(chunks), Just(ranks), Just(windows), found_len, bits).prop_map(
            |(chunks, ranks, windows, found_len, (density, seed))| {
                let found = match density {
                    Some(density) => random_bits(found_len, density, seed),
                    None => {
                        let mut all = Bitmap::with_prefix(found_len, found_len);
                        if found_len > 0 {
                            all.clear(seed as usize % found_len);
                        }
                        all
                    }
                };
                Case { chunks, ranks, windows, found }
            },
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 512 }))]

    #[test]
    fn fold_and_unfold_match_the_oracle(case in case()) {
        let Case { chunks, ranks, ref windows, ref found } = case;
        let servable = fold(found, chunks, ranks, windows).unwrap();
        prop_assert_eq!(&servable, &naive_fold(found, chunks, ranks, windows).unwrap());
        let (hit, mask) = fold_unfold_ranked(found, chunks, ranks, windows).unwrap();
        prop_assert_eq!(hit, servable.last_set().map_or(0, |l| l + 1));
        prop_assert_eq!(&mask, &naive_unfold(hit, chunks, ranks, windows).unwrap());
        prop_assert_eq!((hit, mask.clone()), lmcache_fold_unfold_ranked(found, chunks, ranks, windows).unwrap());
        if ranks == 1 {
            prop_assert_eq!((hit, mask), fold_unfold(found, chunks, windows).unwrap());
        }
        for other_hit in [0, 1, chunks / 2, chunks, chunks + 3] {
            prop_assert_eq!(unfold(other_hit, chunks, ranks, windows).unwrap(), naive_unfold(other_hit, chunks, ranks, windows).unwrap());
        }
    }

    #[test]
    fn grouped_equals_flat(case in case()) {
        let Case { chunks, ranks, ref windows, ref found } = case;
        let (rows, row_windows) = rows_of(found, chunks, ranks, windows);
        let servable = fold_grouped(&rows, &row_windows).unwrap();
        prop_assert_eq!(&servable, &fold(found, chunks, ranks, windows).unwrap());
        prop_assert_eq!(&servable, &naive_fold_grouped(&rows, &row_windows).unwrap());
        let (hit, mask_rows) = fold_unfold_grouped(&rows, &row_windows).unwrap();
        let (flat_hit, mask) = fold_unfold_ranked(found, chunks, ranks, windows).unwrap();
        prop_assert_eq!(hit, flat_hit);
        let (expected_rows, _) = rows_of(&mask, chunks, ranks, windows);
        prop_assert_eq!(&mask_rows, &expected_rows);
        prop_assert_eq!(&mask_rows, &unfold_grouped(hit, chunks, &row_windows).unwrap());
    }

    #[test]
    fn into_forms_reused_across_shapes_match(cases in prop::collection::vec(case(), 1..5)) {
        let mut ws = FoldWorkspace::new();
        let (mut out, mut mask, mut rows_out) = (Bitmap::new(0), Bitmap::new(0), Vec::new());
        for Case { chunks, ranks, windows, found } in cases {
            fold_into(&found, chunks, ranks, &windows, &mut ws, &mut out).unwrap();
            prop_assert_eq!(&out, &fold(&found, chunks, ranks, &windows).unwrap());
            let hit = fold_unfold_ranked_into(&found, chunks, ranks, &windows, &mut ws, &mut mask).unwrap();
            prop_assert_eq!((hit, mask.clone()), fold_unfold_ranked(&found, chunks, ranks, &windows).unwrap());
            let (rows, row_windows) = rows_of(&found, chunks, ranks, &windows);
            fold_grouped_into(&rows, &row_windows, &mut ws, &mut out).unwrap();
            prop_assert_eq!(&out, &fold_grouped(&rows, &row_windows).unwrap());
            let hit = fold_unfold_grouped_into(&rows, &row_windows, &mut ws, &mut rows_out).unwrap();
            prop_assert_eq!((hit, rows_out.clone()), fold_unfold_grouped(&rows, &row_windows).unwrap());
            unfold_grouped_into(hit / 2, chunks, &row_windows, &mut rows_out).unwrap();
            prop_assert_eq!(&rows_out, &unfold_grouped(hit / 2, chunks, &row_windows).unwrap());
        }
    }
}
