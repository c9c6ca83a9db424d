//! `plan_invariants`: random lookups planned by every registered policy.
//!
//! # The input
//!
//! Up to [`MAX_KEYS`] keys; 0 to [`MAX_ADAPTERS`] listed adapters (past the
//! 16 the engine keeps on the stack) in any order, with indices below 24 so
//! that some lookups belong to adapters that are not listed; up to
//! [`MAX_LOOKUPS`] lookup entries. Optionally one listed adapter is listed
//! twice and one lookup has a wrong length.
//!
//! # What is checked, for every name in `registered_prefetch_policies()`
//!
//! - Bad input (a lookup of the wrong length, an adapter listed twice) is
//!   refused with an error that names the actual problem; policies that
//!   promise [`PlanContract::FirstWins`] (`default`, `retain`) report exactly
//!   the reference's error. Good input is never refused.
//! - The plan is sound, checked here word by word independently of the
//!   crate's validator: bitmaps of `num_keys` bits, entries only for listed
//!   adapters and never empty, no key on two adapters (non-overlap), every
//!   key held by its adapter's lookup (subset). It also passes
//!   [`LoadPlan::validate_with`] at the contract the policy states, which
//!   must be at least [`PlanContract::Complete`]: its merged bitmap
//!   (coverage) equals the first-wins plan's.
//! - Policies that promise first-wins semantics (`default`, `retain`) plan
//!   exactly [`naive_first_wins_plan`], the per-key reference, and pass
//!   [`LoadPlan::validate`] (first-adapter-wins maximality).
//! - The plan is identical sequential, parallel and `Auto`, and planned into
//!   a reused [`LoadPlan`] full of an earlier plan's buffers.
//! - What a controller does next agrees with the plan: `prefix_len`,
//!   `planned_count`, `trim_to_loadable_prefix`, `unlock_masks`, and one
//!   retention decision per planned key.
//! - [`plan_first_wins_into`] at every [`Parallelism`] and
//!   [`seed_literal_plan`] agree with the reference, and the validator
//!   catches a plan corrupted on purpose (a key added to a second adapter or
//!   moved to a later holder) with the expected violation.
//!
//! # The grid plan
//!
//! An input may also carry a grid plan request (up to [`MAX_GRID_ROWS`]
//! rows with windows in −3…60, up to [`MAX_GRID_CHUNKS`] chunks, up to
//! ten L1 and L2 grids, `prefix` or `full`), planned by **every name in
//! `registered_grid_policies()`** into one reused plan:
//!
//! - a request the definitions refuse (a sliding-window row under `full`,
//!   no rows) is refused, leaving the plan empty; any other is planned;
//! - word by word: no cell planned twice, every planned cell locked by its
//!   index's grid in its tier, no empty entry, no entry for an index that
//!   locked nothing, and the union of the plan is exactly the needed cells
//!   (the union of the tiers, cut under `prefix` to each row's share of the
//!   hit, both from [`hybrid_model`]);
//! - the hit is the reference's, every policy plans the same, and gives one
//!   retention decision per planned cell.

use arbitrary::Arbitrary;
use bitmap_core::Bitmap;
use prefetch_policy::reference::{naive_first_wins_plan, seed_literal_plan};
use prefetch_policy::{
    AdapterDescriptor, FetchingPolicy, GridMap, GridPlan, GridRequest, Keys, LoadPlan, LookupResults, Parallelism,
    PlanContract, PlanError, PlanViolation, PrefetchPolicy, create_grid_policy, create_prefetch_policy,
    plan_first_wins_into, registered_grid_policies, registered_prefetch_policies,
};

use crate::fill::{Fill, Length};
use crate::hybrid_model;
use crate::prefix_hit::grid_tiers;

/// The most keys: 79 words, enough for `Parallelism::Parallel` to split
/// into several chunks (of 8 words or more).
pub const MAX_KEYS: usize = 5_000;

/// The most listed adapters: past the 16 the engine keeps on the stack.
pub const MAX_ADAPTERS: usize = 20;

/// The most lookup entries.
pub const MAX_LOOKUPS: usize = 20;

/// Adapter indices are taken modulo this, a little more than
/// `MAX_ADAPTERS`: lookups of unlisted adapters and listed adapters without
/// a lookup are both common.
const INDEX_SPACE: u8 = 24;

/// One fuzz input.
#[derive(Arbitrary, Debug)]
pub struct Input {
    num_keys: Length,
    /// Listed adapter indices (modulo 24), in this order; repeats after the
    /// first are dropped (see `duplicate`).
    adapters: Vec<u8>,
    /// Lists the adapter at this position (modulo the count) a second time.
    duplicate: Option<u8>,
    lookups: Vec<Lookup>,
    /// Gives the lookup at this position (modulo the count) this many bits
    /// instead of `num_keys` (one more if that is `num_keys`).
    wrong_length: Option<(u8, Length)>,
    /// Builds the lookups through a reused `LookupResults`
    /// (`clear` + `insert_clear`) rather than by collecting.
    reuse_lookup_buffers: bool,
    corruption: Option<Corruption>,
    /// A grid plan request, planned by every registered grid policy.
    grid: Option<GridInput>,
}

/// A grid plan request (LMCache's newer `plan_load`): the rows' windows,
/// the width, and the L1 and L2 grids.
#[derive(Arbitrary, Debug)]
struct GridInput {
    /// Each modulo 64, minus 3: −3…60; at most [`MAX_GRID_ROWS`].
    windows: Vec<u8>,
    num_chunks: Length,
    /// `(is_l2, index modulo 12, cells)`.
    tiers: Vec<(bool, u8, Fill)>,
    full: bool,
}

/// The most rows of a grid request.
pub const MAX_GRID_ROWS: usize = 12;

/// The most chunks of a grid request (the reference fold is `O(C²)`).
pub const MAX_GRID_CHUNKS: usize = 300;

#[derive(Arbitrary, Debug)]
struct Lookup {
    /// The adapter index, modulo 24. A repeated index replaces the earlier
    /// entry, as a map does.
    adapter: u8,
    /// The keys it holds; `Base` is the previous lookup's.
    fill: Fill,
}

/// A change to the first-wins plan that the validator must catch.
#[derive(Arbitrary, Clone, Copy, Debug)]
enum Corruption {
    /// Also plan key (modulo `num_keys`) on the listed adapter at this
    /// position (modulo the count).
    AddKey(u16, u8),
    /// Move the key from its planned adapter to the listed adapter at this
    /// position.
    MoveKey(u16, u8),
}

/// The planning request an input describes.
struct Request {
    num_keys: usize,
    adapters: Vec<AdapterDescriptor>,
    lookup: LookupResults,
}

impl Input {
    fn request(&self) -> Request {
        let num_keys = self.num_keys.bits(MAX_KEYS);
        let mut indices: Vec<usize> = Vec::new();
        for &raw in &self.adapters {
            let index = usize::from(raw % INDEX_SPACE);
            if !indices.contains(&index) && indices.len() < MAX_ADAPTERS {
                indices.push(index);
            }
        }
        if let (Some(at), false) = (self.duplicate, indices.is_empty()) {
            let index = indices[usize::from(at) % indices.len()];
            let position = usize::from(at) % (indices.len() + 1);
            indices.insert(position, index);
        }
        let adapters = indices.iter().map(|&index| AdapterDescriptor::new(index, format!("adapter-{index}"))).collect();

        let lookups = &self.lookups[..self.lookups.len().min(MAX_LOOKUPS)];
        let wrong = self.wrong_length.filter(|_| !lookups.is_empty()).map(|(at, len)| {
            let len = len.bits(MAX_KEYS);
            (usize::from(at) % lookups.len(), if len == num_keys { len + 1 } else { len })
        });
        let mut entries: Vec<(usize, Vec<bool>)> = Vec::with_capacity(lookups.len());
        for (position, entry) in lookups.iter().enumerate() {
            let len = match wrong {
                Some((at, len)) if at == position => len,
                _ => num_keys,
            };
            let previous = entries.last().map(|(_, bits)| bits.as_slice());
            entries.push((usize::from(entry.adapter % INDEX_SPACE), entry.fill.bits(len, previous)));
        }

        let collected: LookupResults =
            entries.iter().map(|(adapter, bits)| (*adapter, Bitmap::from_bools(bits))).collect();
        let lookup = if self.reuse_lookup_buffers {
            // Dirty spare buffers of other lengths first, then the entries.
            let mut reused = LookupResults::new();
            for (adapter, bits) in entries.iter().rev() {
                reused.insert(*adapter + 1, Bitmap::with_prefix(bits.len() + 7, usize::MAX));
            }
            reused.clear();
            for (adapter, bits) in &entries {
                let bitmap = reused.insert_clear(*adapter, bits.len());
                bits.iter().enumerate().filter(|&(_, &set)| set).for_each(|(key, _)| bitmap.set(key));
            }
            assert_eq!(reused, collected, "LookupResults built in place differs from the collected one");
            reused
        } else {
            collected
        };
        Request { num_keys, adapters, lookup }
    }
}

/// Runs one input.
///
/// # Panics
///
/// On any broken invariant.
pub fn check(input: Input) {
    if let Some(grid) = &input.grid {
        check_grid(grid);
    }
    let request = input.request();
    let Request { num_keys, ref adapters, ref lookup } = request;
    let keys = Keys::count(num_keys);

    let expected_error = input_error(&request);
    let reference = naive_first_wins_plan(num_keys, lookup, adapters);
    assert_eq!(reference.as_ref().err(), expected_error.as_ref(), "naive_first_wins_plan's verdict on the input");
    if let Ok(reference) = &reference {
        check_reference(&request, reference);
        let seed_literal = seed_literal_plan(num_keys, lookup, adapters).expect("the reference accepted the input");
        assert_same_plan(&seed_literal, reference, "seed_literal_plan against naive_first_wins_plan");
        if let Some(corruption) = input.corruption {
            check_validator_catches(&request, reference, corruption);
        }
    }

    let mut engine_plan = LoadPlan::with_capacity(num_keys / 2, 3);
    for parallelism in [Parallelism::Sequential, Parallelism::Parallel, Parallelism::Auto] {
        let result = plan_first_wins_into(num_keys, lookup, adapters, parallelism, &mut engine_plan);
        assert_eq!(result.as_ref().err(), expected_error.as_ref(), "plan_first_wins_into {parallelism:?}: verdict");
        if let Ok(reference) = &reference {
            assert_same_plan(&engine_plan, reference, &format!("plan_first_wins_into {parallelism:?}"));
        } else {
            assert!(engine_plan.is_empty(), "plan_first_wins_into left entries after an error");
        }
    }

    // One plan reused by every policy: `select_load_plan_into` must not
    // depend on what an earlier plan left in it.
    let mut reused = LoadPlan::new(0);
    let names = registered_prefetch_policies();
    assert!(names.iter().any(|name| name == "default"), "`default` is not registered: {names:?}");
    for name in &names {
        let mut policy = create_prefetch_policy(name).unwrap_or_else(|e| panic!("creating registered {name:?}: {e}"));
        let mut plan_with = |parallelism| {
            policy.set_parallelism(parallelism);
            policy.select_load_plan(keys, lookup, adapters)
        };
        let sequential = plan_with(Parallelism::Sequential);
        let parallel = plan_with(Parallelism::Parallel);
        let auto = plan_with(Parallelism::Auto);
        assert_same_result(&parallel, &sequential, &format!("{name}, parallel against sequential"));
        assert_same_result(&auto, &sequential, &format!("{name}, Auto against sequential"));
        let into = policy.select_load_plan_into(keys, lookup, adapters, &mut reused);
        match (&into, &sequential) {
            (Ok(()), Ok(plan)) => assert_same_plan(&reused, plan, &format!("{name}, into a reused plan")),
            _ => assert_eq!(into.as_ref().err(), sequential.as_ref().err(), "{name}: select_load_plan_into verdict"),
        }

        let first_wins = policy.contract() >= PlanContract::FirstWins;
        match (&reference, &sequential) {
            (Err(expected), Err(error)) if first_wins => {
                assert_eq!(error, expected, "{name}: wrong error for bad input");
            }
            (Err(_), Err(error)) => check_error_is_true(name, error, &request),
            (Err(expected), Ok(plan)) => panic!("{name} planned bad input ({expected}): {plan:?}"),
            (Ok(_), Err(error)) => panic!("{name} refused good input: {error}"),
            (Ok(reference), Ok(plan)) => check_plan(name, policy.as_ref(), &request, plan, reference),
        }
    }
}

/// The error the input deserves, worked out independently: the first lookup
/// (by adapter index) of the wrong length, else the smallest index listed
/// twice.
fn input_error(request: &Request) -> Option<PlanError> {
    if let Some((adapter, bitmap)) = request.lookup.iter().find(|(_, bitmap)| bitmap.len() != request.num_keys) {
        return Some(PlanError::LookupLengthMismatch { adapter, expected: request.num_keys, actual: bitmap.len() });
    }
    let mut indices: Vec<usize> = request.adapters.iter().map(|a| a.index).collect();
    indices.sort_unstable();
    indices.windows(2).find(|pair| pair[0] == pair[1]).map(|pair| PlanError::DuplicateAdapterIndex { index: pair[0] })
}

/// A policy without first-wins semantics may report another of the input's
/// problems, but what it reports must be true.
fn check_error_is_true(name: &str, error: &PlanError, request: &Request) {
    match *error {
        PlanError::LookupLengthMismatch { adapter, expected, actual } => {
            assert_eq!(expected, request.num_keys, "{name}: {error}");
            assert_eq!(request.lookup.get(adapter).map(Bitmap::len), Some(actual), "{name}: {error}");
            assert_ne!(actual, expected, "{name}: {error}");
        }
        PlanError::DuplicateAdapterIndex { index } => {
            let listed = request.adapters.iter().filter(|a| a.index == index).count();
            assert!(listed >= 2, "{name}: {error}, but it is listed {listed} times");
        }
        _ => panic!("{name}: unexpected error for bad input: {error:?}"),
    }
}

/// The first-wins reference itself, against the rule: each key held by a
/// listed adapter goes to the lowest such index.
fn check_reference(request: &Request, reference: &LoadPlan) {
    let mut listed: Vec<usize> = request.adapters.iter().map(|a| a.index).collect();
    listed.sort_unstable();
    for key in 0..request.num_keys {
        let first = listed.iter().copied().find(|&a| request.lookup.get(a).is_some_and(|held| held.test(key)));
        let planned: Vec<usize> = reference.iter().filter(|(_, b)| b.test(key)).map(|(a, _)| a).collect();
        assert_eq!(planned, Vec::from_iter(first), "naive_first_wins_plan: key {key}");
    }
}

fn check_plan(name: &str, policy: &dyn PrefetchPolicy, request: &Request, plan: &LoadPlan, reference: &LoadPlan) {
    let Request { num_keys, ref adapters, ref lookup } = *request;
    assert_eq!(plan.num_keys(), num_keys, "{name}: num_keys");
    check_sound(name, request, plan);

    let contract = policy.contract();
    assert!(
        contract >= PlanContract::Complete,
        "{name} promises only {contract:?}: every registered policy must plan every key some listed adapter holds"
    );
    assert_eq!(plan.validate_with(lookup, adapters, PlanContract::Sound), Ok(()), "{name}: validate_with(Sound)");
    assert_eq!(plan.validate_with(lookup, adapters, contract), Ok(()), "{name}: validate_with({contract:?})");
    assert_eq!(plan.merged(), reference.merged(), "{name}: covers other keys than the first-wins plan");
    if contract >= PlanContract::FirstWins {
        assert_same_plan(plan, reference, &format!("{name} against naive_first_wins_plan"));
        assert_eq!(plan.validate(lookup, adapters), Ok(()), "{name}: validate");
    }

    // What the controller does next.
    let merged = merged_naively(plan);
    let prefix = merged.iter().position(|&planned| !planned).unwrap_or(num_keys);
    let planned = merged.iter().filter(|&&planned| planned).count();
    assert_eq!(plan.prefix_len(), prefix, "{name}: prefix_len");
    assert_eq!(plan.planned_count(), planned, "{name}: planned_count");
    assert_eq!(policy.select_l1_retentions(Keys::count(planned)).len(), planned, "{name}: one retention per key");
    let mut trimmed = plan.clone();
    assert_eq!(trimmed.trim_to_loadable_prefix(), prefix, "{name}: trim_to_loadable_prefix");
    for (adapter, bitmap) in plan {
        let kept: Vec<usize> = bitmap.ones().take_while(|&key| key < prefix).collect();
        let after: Vec<usize> = trimmed.get(adapter).map(Bitmap::to_indices).unwrap_or_default();
        assert_eq!(after, kept, "{name}: adapter {adapter} after trimming to {prefix} keys");
    }
    assert_eq!(trimmed.validate_with(lookup, adapters, PlanContract::Sound), Ok(()), "{name}: trimmed plan");
    let masks = plan.unlock_masks(lookup).expect("lookup lengths were checked");
    assert_eq!(masks.len(), lookup.len(), "{name}: one unlock mask per lookup entry");
    for (adapter, held) in lookup {
        let mask = masks.get(adapter).expect("a mask for every lookup entry");
        let planned_here = plan.get(adapter);
        for (w, (&mask_word, &held_word)) in mask.as_words().iter().zip(held.as_words()).enumerate() {
            let planned_word = planned_here.map_or(0, |b| b.as_words()[w]);
            assert_eq!(mask_word, held_word & !planned_word, "{name}: unlock mask of adapter {adapter}, word {w}");
        }
    }
}

/// Non-overlap and subset, word by word, without the crate's validator.
fn check_sound(name: &str, request: &Request, plan: &LoadPlan) {
    let words = request.num_keys.div_ceil(64);
    let mut seen = vec![0u64; words];
    for (adapter, bitmap) in plan {
        assert_eq!(bitmap.len(), request.num_keys, "{name}: adapter {adapter}'s bitmap length");
        assert!(request.adapters.iter().any(|a| a.index == adapter), "{name}: plans unlisted adapter {adapter}");
        assert!(bitmap.any(), "{name}: empty entry for adapter {adapter}");
        let held = request.lookup.get(adapter).map(Bitmap::as_words);
        for (w, &planned) in bitmap.as_words().iter().enumerate() {
            let overlap = planned & seen[w];
            assert_eq!(overlap, 0, "{name}: keys {} of word {w} planned twice (adapter {adapter})", bits_of(overlap));
            seen[w] |= planned;
            let not_held = planned & !held.map_or(0, |held| held[w]);
            assert_eq!(not_held, 0, "{name}: adapter {adapter} loads keys it does not hold: word {w}");
        }
    }
}

/// The validator must catch a plan that breaks the contract.
fn check_validator_catches(request: &Request, reference: &LoadPlan, corruption: Corruption) {
    let Request { num_keys, ref adapters, ref lookup } = *request;
    if num_keys == 0 || adapters.is_empty() {
        return;
    }
    let (raw_key, raw_target) = match corruption {
        Corruption::AddKey(key, target) | Corruption::MoveKey(key, target) => (key, target),
    };
    let key = usize::from(raw_key) % num_keys;
    let target = adapters[usize::from(raw_target) % adapters.len()].index;
    let holds = |adapter: usize| lookup.get(adapter).is_some_and(|held| held.test(key));
    let planned_on = reference.iter().find(|(_, bitmap)| bitmap.test(key)).map(|(adapter, _)| adapter);
    if planned_on == Some(target) {
        return;
    }
    let mut entries: Vec<(usize, Bitmap)> = reference.iter().map(|(a, b)| (a, b.clone())).collect();
    if matches!(corruption, Corruption::MoveKey(..)) {
        let Some(from) = planned_on else { return };
        entries.iter_mut().filter(|(a, _)| *a == from).for_each(|(_, bitmap)| bitmap.clear(key));
    }
    match entries.iter_mut().find(|(a, _)| *a == target) {
        Some((_, bitmap)) => bitmap.set(key),
        None => entries.push((target, Bitmap::from_indices(num_keys, [key]).expect("key < num_keys"))),
    }
    let corrupted = LoadPlan::from_entries(num_keys, entries).expect("distinct adapters, num_keys bits");
    let expected = match (corruption, planned_on) {
        _ if !holds(target) => PlanViolation::NotHeld { key, adapter: target },
        (Corruption::AddKey(..), Some(planned)) => {
            PlanViolation::Overlap { key, first: planned.min(target), second: planned.max(target) }
        }
        (Corruption::MoveKey(..), Some(planned)) => {
            PlanViolation::NotFirstHolder { key, planned: target, first: planned }
        }
        // Every key a listed adapter holds is planned in a first-wins plan.
        (_, None) => unreachable!("key {key} is held by listed adapter {target} but not planned"),
    };
    let contract = match expected {
        PlanViolation::NotFirstHolder { .. } => PlanContract::FirstWins,
        _ => PlanContract::Sound,
    };
    assert_eq!(
        corrupted.validate_with(lookup, adapters, contract),
        Err(expected),
        "the validator missed a corrupted plan ({corruption:?}): {corrupted:?}"
    );
}

/// Panics unless the plans are equal, naming the first key planned
/// differently rather than printing both plans (a plan's `Debug` is a bit
/// string per adapter: thousands of characters).
#[track_caller]
fn assert_same_plan(actual: &LoadPlan, expected: &LoadPlan, what: &str) {
    if actual == expected {
        return;
    }
    let (num_keys, expected_keys) = (actual.num_keys(), expected.num_keys());
    assert_eq!(num_keys, expected_keys, "{what}: number of keys");
    let on = |plan: &LoadPlan, key: usize| -> Vec<usize> {
        plan.iter().filter(|(_, bitmap)| bitmap.len() > key && bitmap.test(key)).map(|(adapter, _)| adapter).collect()
    };
    if let Some(key) = (0..num_keys).find(|&key| on(actual, key) != on(expected, key)) {
        panic!(
            "{what}: key {key} (of {num_keys}) is planned on adapters {:?}, expected {:?}",
            on(actual, key),
            on(expected, key)
        );
    }
    // Every key on the same adapters, yet the plans differ: an empty entry
    // or a bitmap of another length.
    let shape = |plan: &LoadPlan| plan.iter().map(|(a, b)| (a, b.len(), b.popcount())).collect::<Vec<_>>();
    panic!("{what}: entries (adapter, bits, keys) {:?}, expected {:?}", shape(actual), shape(expected));
}

#[track_caller]
fn assert_same_result(actual: &Result<LoadPlan, PlanError>, expected: &Result<LoadPlan, PlanError>, what: &str) {
    match (actual, expected) {
        (Ok(actual), Ok(expected)) => assert_same_plan(actual, expected, what),
        _ => assert_eq!(actual.as_ref().err(), expected.as_ref().err(), "{what}: verdict"),
    }
}

fn merged_naively(plan: &LoadPlan) -> Vec<bool> {
    (0..plan.num_keys()).map(|key| plan.iter().any(|(_, bitmap)| bitmap.test(key))).collect()
}

fn bits_of(word: u64) -> String {
    format!("{:?}", (0..64).filter(|bit| word >> bit & 1 == 1).collect::<Vec<_>>())
}

/// Every registered grid policy plans `input` into a plan that is sound
/// (no cell twice, every cell locked by its tier's grid) and complete (the
/// cells it plans are exactly the needed ones: what the tiers hold, cut to
/// the prefix every row can serve under `prefix`), checked word by word
/// against the reference's needed cells; a request the definitions refuse
/// is refused by every policy.
fn check_grid(input: &GridInput) {
    let windows: Vec<i64> = input.windows.iter().take(MAX_GRID_ROWS).map(|&w| i64::from(w % 64) - 3).collect();
    let num_chunks = input.num_chunks.bits(MAX_GRID_CHUNKS);
    let rows = windows.len();
    let (l1, l2, model_l1, model_l2) = grid_tiers(&input.tiers, rows, num_chunks);
    let fetching = if input.full { FetchingPolicy::Full } else { FetchingPolicy::Prefix };
    let request = GridRequest::new(&windows, num_chunks, &l1, &l2, fetching);
    let reference = hybrid_model::grid_plan(&windows, num_chunks, &model_l1, &model_l2, input.full);

    // The needed cells from the definitions: found, cut to the hit's
    // share of each row under `prefix`.
    let found: Vec<Vec<bool>> = (0..rows)
        .map(|r| (0..num_chunks).map(|c| model_l1.iter().chain(&model_l2).any(|(_, grid)| grid[r][c])).collect())
        .collect();
    let hit = reference.as_ref().map_or(0, |(hit, _, _)| *hit);
    let needed: Vec<Bitmap> = found
        .iter()
        .zip(&windows)
        .map(|(row, &w)| {
            let cells: Vec<bool> =
                row.iter().enumerate().map(|(c, &f)| f && (input.full || hybrid_model::in_unfold(c, hit, w))).collect();
            Bitmap::from_bools(&cells)
        })
        .collect();

    let names = registered_grid_policies();
    assert!(names.iter().any(|name| name == "default"), "grid `default` is not registered: {names:?}");
    let mut reused = GridPlan::new();
    let mut first: Option<GridPlan> = None;
    for name in &names {
        let policy = create_grid_policy(name).unwrap_or_else(|e| panic!("creating registered grid {name:?}: {e}"));
        let result = policy.plan_load_into(&request, &mut reused);
        match (&reference, result) {
            (None, Err(_)) => {
                assert!(reused.l1().is_empty() && reused.l2().is_empty(), "grid {name}: a refused plan is not empty");
                continue;
            }
            (None, Ok(())) => panic!("grid {name} planned a request the definitions refuse: {windows:?}"),
            (Some(_), Err(error)) => panic!("grid {name} refused a valid request: {error}"),
            (Some(_), Ok(())) => {}
        }
        assert_eq!(reused.hit(), hit, "grid {name}: hit");
        let words = num_chunks.div_ceil(64);
        let mut seen = vec![vec![0u64; words]; rows];
        for (tier_name, planned, locked) in [("l1", reused.l1(), &l1), ("l2", reused.l2(), &l2)] {
            check_grid_tier(name, tier_name, planned, locked, rows, num_chunks, &mut seen);
        }
        for (r, (seen_row, needed_row)) in seen.iter().zip(&needed).enumerate() {
            assert_eq!(
                seen_row.as_slice(),
                needed_row.as_words(),
                "grid {name}: row {r} covers other cells than needed"
            );
        }
        let planned = reused.planned_count();
        assert_eq!(policy.select_l1_retentions(Keys::count(planned)).len(), planned, "grid {name}: retentions");
        match &first {
            None => first = Some(reused.clone()),
            Some(plan) => assert_eq!(&reused, plan, "grid {name}: another plan than {}", names[0]),
        }
    }
}

/// One tier of a grid plan, word by word: entries only for indices the
/// tier has, of the request's shape, never empty; every planned cell
/// locked in that index's grid and planned by no earlier entry (`seen`).
fn check_grid_tier(
    name: &str,
    tier: &str,
    planned: &GridMap,
    locked: &GridMap,
    rows: usize,
    num_chunks: usize,
    seen: &mut [Vec<u64>],
) {
    for (index, grid) in planned.iter() {
        let held = locked
            .get(index)
            .unwrap_or_else(|| panic!("grid {name}: {tier} plans index {index}, which locked nothing"));
        assert_eq!(grid.shape(), held.shape(), "grid {name}: {tier} index {index}: shape");
        assert_eq!(grid.num_rows(), rows, "grid {name}: {tier} index {index}: rows");
        assert!(grid.any(), "grid {name}: {tier} index {index}: an empty entry");
        assert_eq!(grid.num_cols(), num_chunks, "grid {name}: {tier} index {index}: row length");
        for (r, (row, held_row)) in grid.row_slices().zip(held.row_slices()).enumerate() {
            for (w, (&cells, &held_word)) in row.iter().zip(held_row).enumerate() {
                assert_eq!(
                    cells & !held_word,
                    0,
                    "grid {name}: {tier} index {index}, row {r}, word {w}: cells not locked"
                );
                assert_eq!(
                    cells & seen[r][w],
                    0,
                    "grid {name}: {tier} index {index}, row {r}, word {w}: planned twice"
                );
                seen[r][w] |= cells;
            }
        }
    }
}
