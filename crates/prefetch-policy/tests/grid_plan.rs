//! The grid plan (LMCache's newer `plan_load`) against a cell-by-cell model
//! written from the definition, by proptest over random shapes, and
//! LMCache's policy test cases (test_prefetch_policy.py, as listed in
//! lmcache-notes §4).

use bitmap_core::Bitmap;
use prefetch_policy::{
    DefaultGridPolicy, FetchingPolicy, Grid, GridMap, GridPlan, GridPolicy, GridPolicyRegistry, GridRequest,
    HybridError, Keys, RetainGridPolicy, create_grid_policy, plan_grid, plan_grid_into, registered_grid_policies,
};
use proptest::prelude::*;

// ---------------------------------------------------------------------------
// The model: every cell decided on its own, from the definition.
// ---------------------------------------------------------------------------

/// The model's plan: the hit and, per tier, index → the set cells.
#[derive(Debug, PartialEq, Eq)]
struct ModelPlan {
    hit: usize,
    l1: Vec<(usize, Vec<Vec<usize>>)>,
    l2: Vec<(usize, Vec<Vec<usize>>)>,
}

/// Whether a row with `window` can serve a prefix of `len` chunks, chunk by
/// chunk.
fn serves(row: &[bool], window: i64, len: usize) -> bool {
    let lo = if window <= 0 { 0 } else { len.saturating_sub(window as usize) };
    (lo..len).all(|c| row[c])
}

/// Whether cell `c` is in row `r`'s share of a hit of `hit` chunks.
fn in_unfold(c: usize, hit: usize, window: i64) -> bool {
    c < hit && (window <= 0 || c + window as usize >= hit)
}

fn model(windows: &[i64], cols: usize, l1: &GridMap, l2: &GridMap, fetching: FetchingPolicy) -> Result<ModelPlan, ()> {
    let rows = windows.len();
    if rows == 0 || (fetching == FetchingPolicy::Full && windows.iter().any(|&w| w >= 1)) {
        return Err(());
    }
    let tiers: Vec<(u8, usize, &Grid)> =
        l1.iter().map(|(i, g)| (1, i, g)).chain(l2.iter().map(|(i, g)| (2, i, g))).collect();
    if tiers.iter().any(|(_, _, g)| g.shape() != (rows, cols)) {
        return Err(());
    }
    let found: Vec<Vec<bool>> =
        (0..rows).map(|r| (0..cols).map(|c| tiers.iter().any(|(_, _, g)| g.test(r, c))).collect()).collect();
    let servable = |len: usize| (0..rows).all(|r| serves(&found[r], windows[r], len));
    let hit = (1..=cols).rev().find(|&len| servable(len)).unwrap_or(0);
    let needed =
        |r: usize, c: usize| found[r][c] && (fetching == FetchingPolicy::Full || in_unfold(c, hit, windows[r]));
    let mut plans: Vec<(u8, usize, Vec<Vec<usize>>)> =
        tiers.iter().map(|&(tier, index, _)| (tier, index, vec![Vec::new(); rows])).collect();
    for r in 0..rows {
        for c in 0..cols {
            if needed(r, c) {
                // L1 before L2, each in ascending index order: `tiers` is.
                let first = tiers.iter().position(|(_, _, g)| g.test(r, c)).expect("a found cell has a holder");
                plans[first].2[r].push(c);
            }
        }
    }
    let entries = |tier: u8| -> Vec<(usize, Vec<Vec<usize>>)> {
        plans
            .iter()
            .filter(|(t, _, cells)| *t == tier && cells.iter().any(|row| !row.is_empty()))
            .map(|(_, index, cells)| (*index, cells.clone()))
            .collect()
    };
    Ok(ModelPlan { hit, l1: entries(1), l2: entries(2) })
}

fn as_model(plan: &GridPlan) -> ModelPlan {
    ModelPlan { hit: plan.hit(), l1: plan.l1().to_index_lists(), l2: plan.l2().to_index_lists() }
}

// ---------------------------------------------------------------------------
// Random inputs
// ---------------------------------------------------------------------------

/// A random grid: cells set with probability `density`, then, if `gap` is
/// given, one column cleared in every row (a hole at the same chunk).
fn random_grid(rows: usize, cols: usize, density: f64, seed: u64, gap: Option<usize>) -> Grid {
    let mut state = seed | 1;
    Grid::from_fn(rows, cols, |_, c| {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let unit = (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
        unit < density && gap.is_none_or(|gap| gap != c)
    })
}

#[derive(Clone, Debug)]
struct Case {
    windows: Vec<i64>,
    cols: usize,
    l1: Vec<(usize, f64, u64, Option<usize>)>,
    l2: Vec<(usize, f64, u64, Option<usize>)>,
    fetching: FetchingPolicy,
}

impl Case {
    fn maps(&self) -> (GridMap, GridMap) {
        let map = |entries: &[(usize, f64, u64, Option<usize>)]| {
            GridMap::from_entries(entries.iter().map(|&(index, density, seed, gap)| {
                (index, random_grid(self.windows.len(), self.cols, density, seed, gap.map(|g| g % self.cols.max(1))))
            }))
            .unwrap()
        };
        (map(&self.l1), map(&self.l2))
    }
}

fn tier_entries() -> impl Strategy<Value = Vec<(usize, f64, u64, Option<usize>)>> {
    prop::collection::vec(
        (
            0..6usize,
            prop_oneof![Just(1.0), Just(0.0), 0.5..=1.0f64, 0.0..=1.0f64],
            any::<u64>(),
            any::<Option<usize>>(),
        ),
        0..4,
    )
}

fn case() -> impl Strategy<Value = Case> {
    (
        // Repeated windows make runs of rows that the plan splits at once;
        // rows past 512 chunks take the windowed per-row split.
        prop::collection::vec(prop_oneof![Just(-1i64), Just(3i64), -2..=40i64], 1..12),
        prop_oneof![0..=8usize, 0..=200usize, 500..=700usize],
        tier_entries(),
        tier_entries(),
        prop_oneof![Just(FetchingPolicy::Prefix), Just(FetchingPolicy::Full)],
    )
        .prop_map(|(windows, cols, l1, l2, fetching)| {
            // Full fetches need full-attention rows; keep half of them valid.
            let windows = if fetching == FetchingPolicy::Full && cols % 2 == 0 {
                windows.iter().map(|&w| w.min(0)).collect()
            } else {
                windows
            };
            Case { windows, cols, l1, l2, fetching }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 512 }))]

    #[test]
    fn the_plan_is_the_cell_by_cell_model(case in case()) {
        let (l1, l2) = case.maps();
        let request = GridRequest::new(&case.windows, case.cols, &l1, &l2, case.fetching);
        let expected = model(&case.windows, case.cols, &l1, &l2, case.fetching);
        let planned = plan_grid(&request);
        match (&expected, &planned) {
            (Ok(expected), Ok(plan)) => {
                prop_assert_eq!(&as_model(plan), expected);
                // The contract: planned cells are unique, locked by their
                // tier, and the union is the needed cells.
                let mut seen = Grid::zeros(case.windows.len(), case.cols);
                for (tier, index, grid) in plan.l1().iter().map(|(i, g)| (&l1, i, g)).chain(plan.l2().iter().map(|(i, g)| (&l2, i, g))) {
                    prop_assert!(grid.any());
                    let locked = tier.get(index).expect("an entry only for a tier that locked something");
                    prop_assert!((grid - locked).none(), "cells not locked by tier {}", index);
                    prop_assert!((grid & &seen).none(), "a cell planned twice");
                    seen |= grid;
                }
                prop_assert_eq!(seen.popcount(), plan.planned_count());
                prop_assert_eq!(&plan.merged(), &seen);
            }
            (Err(()), Err(_)) => {}
            _ => prop_assert!(false, "model {:?}, plan {:?}", expected, planned),
        }
    }

    #[test]
    fn a_reused_plan_equals_a_fresh_one(first in case(), second in case()) {
        let mut reused = GridPlan::new();
        for case in [&first, &second] {
            let (l1, l2) = case.maps();
            let request = GridRequest::new(&case.windows, case.cols, &l1, &l2, case.fetching);
            let fresh = plan_grid(&request);
            let into = plan_grid_into(&request, &mut reused);
            match fresh {
                Ok(fresh) => { into.unwrap(); prop_assert_eq!(&reused, &fresh); }
                Err(error) => {
                    prop_assert_eq!(into.unwrap_err(), error);
                    prop_assert!(reused.l1().is_empty() && reused.l2().is_empty() && reused.hit() == 0);
                }
            }
        }
    }

    #[test]
    fn prefix_hit_is_fold_unfold_grouped_of_the_union(case in case()) {
        prop_assume!(case.fetching == FetchingPolicy::Prefix);
        let (l1, l2) = case.maps();
        let plan = plan_grid(&GridRequest::new(&case.windows, case.cols, &l1, &l2, case.fetching)).unwrap();
        let mut found = Grid::zeros(case.windows.len(), case.cols);
        for (_, grid) in l1.iter().chain(l2.iter()) {
            found |= grid;
        }
        let (hit, mask) = prefetch_policy::fold_unfold_grouped(&found.to_rows(), &case.windows).unwrap();
        prop_assert_eq!(plan.hit(), hit);
        let needed = Grid::from_rows(mask).unwrap() & &found;
        prop_assert_eq!(plan.merged(), needed);
    }
}

// ---------------------------------------------------------------------------
// LMCache's policy test cases
// ---------------------------------------------------------------------------

fn grid(rows: &[&str]) -> Grid {
    Grid::from_rows(rows.iter().map(|row| row.parse::<Bitmap>().unwrap()).collect()).unwrap()
}

fn map(entries: &[(usize, &[&str])]) -> GridMap {
    GridMap::from_entries(entries.iter().map(|&(index, rows)| (index, grid(rows)))).unwrap()
}

fn plan_of(windows: &[i64], l1: &GridMap, l2: &GridMap, fetching: FetchingPolicy) -> Result<GridPlan, HybridError> {
    let cols = l1.shape().or(l2.shape()).map_or(0, |(_, cols)| cols);
    plan_grid(&GridRequest::new(windows, cols, l1, l2, fetching))
}

fn lists(map: &GridMap) -> String {
    format!("{map:?}")
}

#[test]
fn l1_comes_before_l2() {
    let l1 = map(&[(5, &["0110"])]);
    let l2 = map(&[(0, &["1111"])]);
    let plan = plan_of(&[-1], &l1, &l2, FetchingPolicy::Prefix).unwrap();
    assert_eq!(lists(plan.l1()), "{5: [0110]}");
    assert_eq!(lists(plan.l2()), "{0: [1001]}");
    assert_eq!(plan.hit(), 4);
}

#[test]
fn the_lower_index_wins_by_number_not_insertion_order() {
    let mut l2 = GridMap::new();
    l2.insert(10, grid(&["111"])).unwrap();
    l2.insert(2, grid(&["011"])).unwrap();
    let plan = plan_of(&[-1], &GridMap::new(), &l2, FetchingPolicy::Prefix).unwrap();
    assert_eq!(lists(plan.l2()), "{2: [011], 10: [100]}");
    let l1 = map(&[(9, &["11"]), (3, &["11"])]);
    let plan = plan_of(&[-1], &l1, &GridMap::new(), FetchingPolicy::Prefix).unwrap();
    assert_eq!(lists(plan.l1()), "{3: [11]}");
}

#[test]
fn prefix_stops_at_a_gap() {
    let l2 = map(&[(0, &["110111"])]);
    let plan = plan_of(&[-1], &GridMap::new(), &l2, FetchingPolicy::Prefix).unwrap();
    assert_eq!(plan.hit(), 2);
    assert_eq!(lists(plan.l2()), "{0: [110000]}");
    let nothing =
        plan_grid(&GridRequest::new(&[-1], 3, &GridMap::new(), &map(&[(0, &["011"])]), FetchingPolicy::Prefix))
            .unwrap();
    assert_eq!((nothing.hit(), nothing.l2().len()), (0, 0));
}

#[test]
fn the_shortest_row_bounds_the_prefix() {
    let l1 = map(&[(0, &["11111", "11100", "11110"])]);
    let plan = plan_of(&[-1, -1, -1], &l1, &GridMap::new(), FetchingPolicy::Prefix).unwrap();
    assert_eq!(plan.hit(), 3);
    assert_eq!(lists(plan.l1()), "{0: [11100, 11100, 11100]}");
}

#[test]
fn the_union_across_tiers_serves_the_prefix() {
    let l1 = map(&[(0, &["1100", "1000"])]);
    let l2 = map(&[(0, &["0011", "0000"]), (1, &["0000", "0111"])]);
    let plan = plan_of(&[-1, -1], &l1, &l2, FetchingPolicy::Prefix).unwrap();
    assert_eq!(plan.hit(), 4);
    assert_eq!(lists(plan.l1()), "{0: [1100, 1000]}");
    assert_eq!(lists(plan.l2()), "{0: [0011, 0000], 1: [0000, 0111]}");
}

#[test]
fn windowed_rows_keep_the_trailing_window() {
    // A full row and a window-2 row (rank 0 and 1 of it) of 6 chunks.
    let l2 = map(&[(0, &["111111", "111111", "000011"])]);
    let plan = plan_of(&[-1, 2, 2], &GridMap::new(), &l2, FetchingPolicy::Prefix).unwrap();
    assert_eq!(plan.hit(), 6);
    assert_eq!(lists(plan.l2()), "{0: [111111, 000011, 000011]}");
    // Mamba (w = 1) needs only the last chunk.
    let plan = plan_of(&[-1, 1], &GridMap::new(), &map(&[(0, &["1111", "0101"])]), FetchingPolicy::Prefix).unwrap();
    assert_eq!(plan.hit(), 4);
    assert_eq!(lists(plan.l2()), "{0: [1111, 0001]}");
}

#[test]
fn the_issue_worked_case_as_a_grid() {
    // C = 5, [full present {0,1,2,3}, window 2 present {2,3,4}]: hit 4, and
    // the window-2 row needs chunks 2 and 3.
    let l1 = map(&[(0, &["11110", "00111"])]);
    let plan = plan_of(&[-1, 2], &l1, &GridMap::new(), FetchingPolicy::Prefix).unwrap();
    assert_eq!(plan.hit(), 4);
    assert_eq!(lists(plan.l1()), "{0: [11110, 00110]}");
}

#[test]
fn full_keeps_gaps_and_refuses_windows() {
    let l1 = map(&[(0, &["1101", "0110"])]);
    let l2 = map(&[(3, &["0001", "1000"])]);
    let plan = plan_of(&[-1, 0], &l1, &l2, FetchingPolicy::Full).unwrap();
    // Chunk 3 of row 0 is past the gap at chunk 2: planned all the same.
    assert_eq!(lists(plan.l1()), "{0: [1101, 0110]}");
    assert_eq!(lists(plan.l2()), "{3: [0000, 1000]}");
    assert_eq!(plan.hit(), 2);
    assert_eq!(plan.fetching(), FetchingPolicy::Full);
    assert_eq!(
        self::plan_of(&[-1, 4], &l1, &l2, FetchingPolicy::Full).unwrap_err(),
        HybridError::SlidingWindowInFullFetch { row: 1, window: 4 }
    );
    assert_eq!(
        self::plan_of(&[1, -1], &l1, &l2, FetchingPolicy::Full).unwrap_err(),
        HybridError::SlidingWindowInFullFetch { row: 0, window: 1 }
    );
}

#[test]
fn planned_cells_are_locked_and_unique() {
    let l1 = map(&[(0, &["1010", "1111"]), (1, &["1111", "0000"])]);
    let l2 = map(&[(0, &["1111", "1111"])]);
    let plan = plan_of(&[-1, -1], &l1, &l2, FetchingPolicy::Full).unwrap();
    assert_eq!(lists(plan.l1()), "{0: [1010, 1111], 1: [0101, 0000]}");
    assert!(plan.l2().is_empty());
    assert_eq!(plan.planned_count(), 8);
}

#[test]
fn inputs_are_not_mutated() {
    let l1 = map(&[(0, &["1100", "1110"])]);
    let l2 = map(&[(1, &["1111", "1111"])]);
    let (before_l1, before_l2) = (l1.clone(), l2.clone());
    let windows = [-1, 2];
    let mut reused = GridPlan::new();
    plan_grid_into(&GridRequest::new(&windows, 4, &l1, &l2, FetchingPolicy::Prefix), &mut reused).unwrap();
    assert_eq!((l1, l2, windows), (before_l1, before_l2, [-1, 2]));
}

#[test]
fn mismatched_shapes_and_no_rows_are_errors() {
    let l1 = map(&[(0, &["1100", "1110"])]);
    let l2 = map(&[(1, &["111", "111"])]);
    let error = plan_grid(&GridRequest::new(&[-1, -1], 4, &l1, &l2, FetchingPolicy::Prefix)).unwrap_err();
    assert_eq!(error, HybridError::ShapeMismatch { expected: (2, 4), found: (2, 3) });
    let error = plan_grid(&GridRequest::new(&[-1], 4, &l1, &GridMap::new(), FetchingPolicy::Prefix)).unwrap_err();
    assert_eq!(error, HybridError::ShapeMismatch { expected: (1, 4), found: (2, 4) });
    let error = plan_grid(&GridRequest::new(&[], 0, &GridMap::new(), &GridMap::new(), FetchingPolicy::Full));
    assert_eq!(error.unwrap_err(), HybridError::NoWindows);
    // An error leaves a reused plan empty.
    let mut reused = plan_grid(&GridRequest::new(&[-1, -1], 4, &l1, &GridMap::new(), FetchingPolicy::Prefix)).unwrap();
    assert!(!reused.l1().is_empty());
    assert!(plan_grid_into(&GridRequest::new(&[-1, -1], 4, &l1, &l2, FetchingPolicy::Prefix), &mut reused).is_err());
    assert!(reused.l1().is_empty() && reused.l2().is_empty() && reused.hit() == 0);
}

#[test]
fn empty_tiers_and_zero_chunks() {
    let empty = GridMap::new();
    let plan = plan_grid(&GridRequest::new(&[-1, 3], 7, &empty, &empty, FetchingPolicy::Prefix)).unwrap();
    assert_eq!((plan.hit(), plan.shape(), plan.planned_count()), (0, (2, 7), 0));
    let zero = map(&[(0, &["", ""])]);
    let plan = plan_grid(&GridRequest::new(&[-1, 2], 0, &zero, &empty, FetchingPolicy::Prefix)).unwrap();
    assert_eq!((plan.hit(), plan.l1().len()), (0, 0));
}

#[test]
fn more_tiers_than_the_stack_holds() {
    // 20 L2 adapters, adapter i holding chunks i and 19 of a 20-chunk row;
    // one L1 manager holding every even chunk.
    let l2 = GridMap::from_entries((0..20).map(|i| (i, Grid::from_fn(1, 20, |_, c| c == i || c == 19)))).unwrap();
    let l1 = GridMap::from_entries([(0, Grid::from_fn(1, 20, |_, c| c % 2 == 0))]).unwrap();
    let plan = plan_grid(&GridRequest::new(&[-1], 20, &l1, &l2, FetchingPolicy::Prefix)).unwrap();
    assert_eq!(plan.hit(), 20);
    assert_eq!(plan.l1().to_index_lists(), [(0, vec![(0..20).step_by(2).collect::<Vec<_>>()])]);
    // Chunk 19 goes to adapter 0, the lowest index that holds it.
    let mut expected = vec![(0, vec![vec![19]])];
    expected.extend((1..19).step_by(2).map(|i| (i, vec![vec![i]])));
    assert_eq!(plan.l2().to_index_lists(), expected);
}

#[test]
fn retention_flags_per_policy() {
    assert_eq!(DefaultGridPolicy::new().select_l1_retentions(Keys::count(3)), [false; 3]);
    assert_eq!(RetainGridPolicy::new().select_l1_retentions(Keys::count(3)), [true; 3]);
    // Both plan the same.
    let l1 = map(&[(0, &["1100"])]);
    let l2 = map(&[(0, &["0111"])]);
    let request = GridRequest::new(&[-1], 4, &l1, &l2, FetchingPolicy::Prefix);
    assert_eq!(
        DefaultGridPolicy::new().plan_load(&request).unwrap(),
        RetainGridPolicy::new().plan_load(&request).unwrap()
    );
}

#[test]
fn registry_has_default_and_retain() {
    assert!(registered_grid_policies().iter().any(|name| name == "default"));
    assert!(registered_grid_policies().iter().any(|name| name == "retain"));
    assert_eq!(create_grid_policy("retain").unwrap().name(), "retain");
    assert!(create_grid_policy("balanced").is_err());
    let registry = GridPolicyRegistry::with_builtin();
    assert!(registry.register("retain", || Box::new(DefaultGridPolicy::new())).is_err());
}

#[test]
fn fetching_policy_names() {
    assert_eq!("prefix".parse::<FetchingPolicy>().unwrap(), FetchingPolicy::Prefix);
    assert_eq!("full".parse::<FetchingPolicy>().unwrap().to_string(), "full");
    assert_eq!(
        "Full".parse::<FetchingPolicy>().unwrap_err().to_string(),
        r#"unknown fetching policy "Full": expected "prefix" or "full""#
    );
}
