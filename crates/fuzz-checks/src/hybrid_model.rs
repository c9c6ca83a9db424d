//! Scalar references for the hybrid-model functions, written here from the
//! definitions (issue #13, lmcache-notes §2–§3) over `Vec<bool>`, sharing
//! no code with the crates they check: `prefix_hit` compares fold, unfold
//! and the grid plan with them, `plan_invariants` the grid plan's needed
//! cells.
//!
//! They are as plain as possible, one cell at a time. Their cost is
//! `O(C² · G)` for a fold (each length tests its window chunk by chunk), so
//! the targets keep `C` to a few hundred.

/// Whether a group whose chunk `j` is present iff `present(j)` can serve a
/// prefix of `len` chunks under `window`: chunks `0..len` for full attention
/// (`window <= 0`), else `max(0, len - window)..len`.
pub fn serves(len: usize, window: i64, present: impl Fn(usize) -> bool) -> bool {
    let lo = if window <= 0 { 0 } else { len.saturating_sub(usize::try_from(window).unwrap_or(usize::MAX)) };
    (lo..len).all(present)
}

/// `fold` over the flat chunk-major layout: bit `j` set iff every group
/// serves length `j + 1`; chunk `j` of group `g` is present iff all its
/// `num_ranks` bits `j·G·R + g·R + r` are set (bits past `found`'s end
/// absent).
pub fn fold(found: &[bool], num_chunks: usize, num_ranks: usize, windows: &[i64]) -> Vec<bool> {
    let width = windows.len() * num_ranks;
    let bit = |index: usize| found.get(index).copied().unwrap_or(false);
    let present: Vec<Vec<bool>> = (0..windows.len())
        .map(|g| (0..num_chunks).map(|j| (0..num_ranks).all(|r| bit(j * width + g * num_ranks + r))).collect())
        .collect();
    (1..=num_chunks).map(|len| windows.iter().enumerate().all(|(g, &w)| serves(len, w, |j| present[g][j]))).collect()
}

/// The hit of a fold: its highest set bit plus one, 0 if none.
pub fn hit_of(folded: &[bool]) -> usize {
    folded.iter().rposition(|&bit| bit).map_or(0, |last| last + 1)
}

/// Whether chunk `j` is in a group's share of a hit of `hit` chunks:
/// `unfold_range(hit, window)`, `(0, 0)` for hit 0.
pub fn in_unfold(j: usize, hit: usize, window: i64) -> bool {
    j < hit && (window <= 0 || j as u128 + window as u128 >= hit as u128)
}

/// `unfold` over the flat layout: all rank bits of each group's share of
/// `min(hit, num_chunks)`.
pub fn unfold(hit: usize, num_chunks: usize, num_ranks: usize, windows: &[i64]) -> Vec<bool> {
    let hit = hit.min(num_chunks);
    let width = windows.len() * num_ranks;
    (0..num_chunks * width).map(|bit| in_unfold(bit / width, hit, windows[bit % width / num_ranks])).collect()
}

/// `fold_grouped`: bit `j` set iff every row serves `j + 1` under its own
/// window (`C` = row 0's length).
pub fn fold_grouped(rows: &[Vec<bool>], windows: &[i64]) -> Vec<bool> {
    let num_chunks = rows.first().map_or(0, Vec::len);
    (1..=num_chunks).map(|len| rows.iter().zip(windows).all(|(row, &w)| serves(len, w, |j| row[j]))).collect()
}

/// `unfold_grouped`: one row per window, its share of `min(hit, C)`.
pub fn unfold_grouped(hit: usize, num_chunks: usize, windows: &[i64]) -> Vec<Vec<bool>> {
    let hit = hit.min(num_chunks);
    windows.iter().map(|&w| (0..num_chunks).map(|j| in_unfold(j, hit, w)).collect()).collect()
}

/// A tier's locked cells: index → rows.
pub type Tier = Vec<(usize, Vec<Vec<bool>>)>;

/// The grid plan decided cell by cell: `None` where the plan must refuse
/// (no rows, a sliding window under `full`); else the hit and, per tier,
/// index → the planned cells of the indices that plan any. `l1` and `l2`
/// must be sorted by index, every grid `windows.len()` × `num_chunks`.
pub fn grid_plan(windows: &[i64], num_chunks: usize, l1: &Tier, l2: &Tier, full: bool) -> Option<(usize, Tier, Tier)> {
    if windows.is_empty() || (full && windows.iter().any(|&w| w >= 1)) {
        return None;
    }
    let rows = windows.len();
    let tiers: Vec<&(usize, Vec<Vec<bool>>)> = l1.iter().chain(l2).collect();
    let found: Vec<Vec<bool>> =
        (0..rows).map(|r| (0..num_chunks).map(|c| tiers.iter().any(|(_, grid)| grid[r][c])).collect()).collect();
    // Under `full` every row is full attention, where this is the shortest
    // run of found chunks from chunk 0.
    let hit = hit_of(&fold_grouped(&found, windows));
    let mut planned: Vec<Vec<Vec<bool>>> = tiers.iter().map(|_| vec![vec![false; num_chunks]; rows]).collect();
    for r in 0..rows {
        for c in 0..num_chunks {
            let needed = found[r][c] && (full || in_unfold(c, hit, windows[r]));
            if let (true, Some(first)) = (needed, tiers.iter().position(|(_, grid)| grid[r][c])) {
                planned[first][r][c] = true;
            }
        }
    }
    let mut entries = tiers.iter().zip(planned).map(|((index, _), cells)| (*index, cells));
    let keep = |(_, cells): &(usize, Vec<Vec<bool>>)| cells.iter().flatten().any(|&bit| bit);
    let l1_plan: Tier = entries.by_ref().take(l1.len()).filter(keep).collect();
    let l2_plan: Tier = entries.filter(keep).collect();
    Some((hit, l1_plan, l2_plan))
}
