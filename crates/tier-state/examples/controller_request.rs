//! One controller request from end to end, in Rust, on tier-state and
//! prefetch-policy: lookup → grid plan → reserve → load results → finish.
//!
//! The request has 24 chunks × 8 rows (2 object groups × 4 KV ranks; group 0
//! full attention, group 1 a sliding window of 4 chunks). L1 is a [`Tier`];
//! the two L2 adapters are tiers too (their resident keys are what they
//! store). The steps are LMCache's v2 controller's:
//!
//! 1. **lookup**: every tier read-locks the request's keys it holds
//!    (`reserve_read` over the grid: one call a tier, a `Grid` mask back);
//! 2. **grid plan**: `plan_grid_into` decides which cells L1 serves and
//!    which adapter loads the rest, and the hit length;
//! 3. **unlock** what the plan does not use (`finish_read` of the locked
//!    cells outside the plan);
//! 4. **reserve** L1 staging objects for the cells to load (`reserve_write`,
//!    temporary unless the policy retains them);
//! 5. **load results**: a finished load becomes resident and read-locked in
//!    one step (`finish_write_and_reserve_read`), a failed one is dropped
//!    (`finish_write_and_delete`); the adapters release their locks;
//! 6. **finish**: the request's reads end (`finish_read`; temporary
//!    objects go), and the cells it used are touched for the eviction policy.
//!
//! `cargo run -p tier-state --example controller_request`

use prefetch_policy::{FetchingPolicy, Grid, GridMap, GridPlan, GridRequest, plan_grid_into};
use tier_state::{Answer, Batch, Flags, GridBatch, GridKeys, Tier, TierConfig, TierError, TierKey};

const CHUNKS: usize = 24;
const GROUPS: usize = 2;
const RANKS: usize = 4;
/// The request's writer tag in L1.
const TAG: u32 = 42;

/// The keys of the cells set in `mask`, for the calls that take a subset of
/// a request (the positional form takes the whole grid).
fn keys_of(mask: &Grid, keys: GridKeys<'_>) -> Vec<TierKey> {
    mask.cells().map(|(r, c)| TierKey::new(keys.hashes[c], keys.rows[r])).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let hashes: Vec<u64> = (0..CHUNKS as u64).map(|c| 0xc0ffee ^ c.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    let rows: Vec<u32> = (0..(GROUPS * RANKS) as u32).collect();
    let windows: Vec<i64> = (0..GROUPS * RANKS).map(|r| if r / RANKS == 0 { -1 } else { 4 }).collect();
    let request = GridKeys::new(&hashes, &rows);
    let all: Vec<TierKey> = rows.iter().flat_map(|&r| hashes.iter().map(move |&h| TierKey::new(h, r))).collect();

    // The tiers as an earlier request left them: L1 holds chunks 0..6 of
    // every row, adapter 0 chunks 0..16, adapter 1 everything.
    let mut l1 = Tier::new(TierConfig::new(1_000).with_rows(rows.len() as u32))?;
    let mut adapters = [Tier::new(TierConfig::new(10_000))?, Tier::new(TierConfig::new(10_000))?];
    let mut answer = Batch::default();
    let store = |tier: &mut Tier, keys: &[TierKey], answer: &mut Batch| -> Result<(), TierError> {
        tier.reserve_write(keys, Flags::All(false), 0, answer)?;
        tier.finish_write(keys, 0, answer)
    };
    // `all` is row-major: key i is chunk i % CHUNKS.
    let held = |upto: usize| -> Vec<TierKey> {
        all.iter().enumerate().filter(|(i, _)| i % CHUNKS < upto).map(|(_, &k)| k).collect()
    };
    store(&mut l1, &held(6), &mut answer)?;
    store(&mut adapters[0], &held(16), &mut answer)?;
    store(&mut adapters[1], &held(CHUNKS), &mut answer)?;

    // 1. Lookup: each tier read-locks what it holds, one call each.
    let mut l1_locked = GridBatch::default();
    l1.reserve_read(&request, 1, &mut l1_locked)?;
    let mut l2_locked = [GridBatch::default(), GridBatch::default()];
    for (adapter, locked) in adapters.iter_mut().zip(&mut l2_locked) {
        adapter.reserve_read(&request, 1, locked)?;
    }
    println!(
        "lookup: L1 holds {} cells, adapters {} and {}",
        l1_locked.num_ok(),
        l2_locked[0].num_ok(),
        l2_locked[1].num_ok()
    );

    // 2. The grid plan.
    let l1_map = GridMap::from_entries([(0, l1_locked.ok().clone())])?;
    let l2_map = GridMap::from_entries([(0, l2_locked[0].ok().clone()), (1, l2_locked[1].ok().clone())])?;
    let mut plan = GridPlan::new();
    plan_grid_into(&GridRequest::new(&windows, CHUNKS, &l1_map, &l2_map, FetchingPolicy::Prefix), &mut plan)?;
    let empty = Grid::zeros(rows.len(), CHUNKS);
    let planned_l1 = plan.l1().get(0).unwrap_or(&empty);
    println!(
        "plan: hit {} chunks; L1 serves {} cells, adapter 0 loads {}, adapter 1 loads {}",
        plan.hit(),
        planned_l1.popcount(),
        plan.l2().get(0).map_or(0, Grid::popcount),
        plan.l2().get(1).map_or(0, Grid::popcount)
    );

    // 3. Unlock what the plan does not use.
    l1.finish_read(&keys_of(&(l1_locked.ok() - planned_l1), request)[..], 1, &mut answer)?;
    for (index, adapter) in adapters.iter_mut().enumerate() {
        let planned = plan.l2().get(index).unwrap_or(&empty);
        adapter.finish_read(&keys_of(&(l2_locked[index].ok() - planned), request)[..], 1, &mut answer)?;
    }

    // 4. Reserve L1 staging objects for every cell to load (temporary: the
    //    default policy does not retain loaded keys).
    let to_load: Vec<(usize, Vec<TierKey>)> =
        plan.l2().iter().map(|(index, grid)| (index, keys_of(grid, request))).collect();
    let mut reserved = Batch::default();
    for (_, keys) in &to_load {
        l1.reserve_write(&keys[..], Flags::All(true), TAG, &mut reserved)?;
        assert_eq!(reserved.num_ok(), keys.len(), "L1 has room");
    }

    // 5. Load results: adapter 0's loads all finish; adapter 1's last chunk fails.
    for (index, keys) in &to_load {
        let (loaded, failed): (Vec<TierKey>, Vec<TierKey>) =
            keys.iter().partition(|k| !(*index == 1 && k.hash == hashes[CHUNKS - 1]));
        l1.finish_write_and_reserve_read(&loaded[..], 1, TAG, &mut answer)?;
        println!("adapter {index}: {} loaded into L1 and read-locked", answer.num_ok());
        l1.finish_write_and_delete(&failed[..], TAG, &mut answer)?;
        if !failed.is_empty() {
            println!("adapter {index}: {} failed loads dropped", answer.num_ok());
        }
        adapters[*index].finish_read(&keys[..], 1, &mut answer)?;
    }

    // 6. Finish: the request's reads end; the cells it used are touched.
    let used: Vec<TierKey> = keys_of(planned_l1, request)
        .into_iter()
        .chain(to_load.iter().flat_map(|(_, keys)| keys.iter().copied()))
        .filter(|&k| l1.is_read_locked(k))
        .collect();
    l1.finish_read(&used[..], 1, &mut answer)?;
    l1.touch(&used[..], &mut answer)?;
    println!(
        "finish: {} reads ended; L1 keeps {} resident keys (the loaded temporaries are gone), {} staged",
        used.len(),
        l1.num_resident(),
        l1.num_staging()
    );
    assert!(all.iter().all(|&k| !l1.is_read_locked(k)), "no read lock outlives the request");
    assert_eq!(l1.num_staging(), 0, "no reservation outlives the request");
    assert!(adapters.iter().all(|a| all.iter().all(|&k| !a.is_read_locked(k))));
    Ok(())
}
