//! One test per rule of LMCache's eviction policies (see
//! `/work/shared/eviction-notes.md` §3 and LMCache's own tests named there),
//! on small hand-made cases, slots standing for keys.

use bitmap_core::Bitmap;
use tier_state::policy_model::Universe;
use tier_state::{
    Arc, ChunkLru, Eligible, EvictionPolicy, IsolatedLru, KeyMeta, Lru, NoEviction, POLICY_NAMES, S3Fifo,
    compute_kv_rank, create_policy,
};

fn victims(policy: &mut dyn EvictionPolicy, ratio: f64) -> Vec<u32> {
    let mut out = Vec::new();
    policy.victims(ratio, Eligible::All, &mut out);
    out
}

fn victims_if(policy: &mut dyn EvictionPolicy, ratio: f64, ok: impl Fn(u32) -> bool) -> Vec<u32> {
    let mut out = Vec::new();
    let mut ok = ok;
    policy.victims(ratio, Eligible::Predicate(&mut ok), &mut out);
    out
}

/// Victims, then their removal (LMCache tests' `_complete_eviction`).
fn complete(policy: &mut dyn EvictionPolicy, ratio: f64) -> Vec<u32> {
    let out = victims(policy, ratio);
    policy.on_removed(&out);
    out
}

// ---- the factory ----

#[test]
fn factory_builds_each_lmcache_name() {
    for &name in POLICY_NAMES {
        assert_eq!(create_policy(name).unwrap().name(), name);
    }
}

#[test]
fn factory_refuses_unknown_names_listing_the_known() {
    for bad in ["lru", "LFU", "", "UserLRU"] {
        let err = create_policy(bad).expect_err("unknown");
        assert_eq!(err.name, bad);
        let message = err.to_string();
        for known in POLICY_NAMES {
            assert!(message.contains(known), "{message}");
        }
    }
}

#[test]
fn only_isolated_lru_supports_isolation() {
    for &name in POLICY_NAMES {
        assert_eq!(create_policy(name).unwrap().supports_isolation(), name == "IsolatedLRU");
    }
}

#[test]
fn noop_never_evicts() {
    let mut noop = NoEviction;
    noop.on_created(&[0, 1]);
    assert!(victims(&mut noop, 1.0).is_empty());
    assert_eq!(noop.num_tracked(), 0);
}

// ---- rules every policy shares ----

#[test]
fn ratio_rounds_as_lmcache_for_every_policy() {
    for &name in &["LRU", "S3FIFO", "ARC"] {
        let mut p = create_policy(name).unwrap();
        p.on_created(&(0..10).collect::<Vec<_>>());
        assert!(victims(p.as_mut(), 0.0).is_empty(), "{name}");
        assert!(victims(p.as_mut(), -1.0).is_empty(), "{name}");
        let mut p = create_policy(name).unwrap();
        p.on_created(&(0..10).collect::<Vec<_>>());
        assert_eq!(victims(p.as_mut(), 0.01).len(), 1, "{name}: a positive ratio takes at least one");
        let mut p = create_policy(name).unwrap();
        p.on_created(&(0..10).collect::<Vec<_>>());
        assert_eq!(victims(p.as_mut(), 0.25).len(), 2, "{name}: int(10 × 0.25)");
        let mut p = create_policy(name).unwrap();
        p.on_created(&(0..10).collect::<Vec<_>>());
        assert_eq!(victims(p.as_mut(), 2.0).len(), 10, "{name}: clamped to 1");
    }
}

#[test]
fn the_three_eligibility_forms_agree() {
    for &name in &["LRU", "S3FIFO", "ARC", "IsolatedLRU"] {
        let mut answers = Vec::new();
        for form in 0..2 {
            let mut p = create_policy(name).unwrap();
            p.on_created(&(0..8).collect::<Vec<_>>());
            let bits = Bitmap::from_indices(6, [1, 3, 5]).unwrap(); // slots 6, 7 past its end
            let mut odd = |s: u32| s % 2 == 1 && s < 6;
            let eligible = if form == 0 { Eligible::Bits(&bits) } else { Eligible::Predicate(&mut odd) };
            let mut out = Vec::new();
            p.victims_in_salt(0, 1.0, eligible, &mut out);
            answers.push(out);
        }
        assert_eq!(answers[0], answers[1], "{name}");
        let mut sorted = answers[0].clone();
        sorted.sort_unstable();
        assert_eq!(sorted, [1, 3, 5], "{name}");
    }
}

// ---- LRU (plain and chunk-coherent) ----

#[test]
fn chunk_lru_without_meta_is_lru() {
    let mut a = Lru::new();
    let mut b = ChunkLru::new();
    for p in [&mut a as &mut dyn EvictionPolicy, &mut b] {
        p.on_created(&[0, 1, 2, 3]);
        p.on_touched(&[2, 9]);
        p.on_removed(&[1]);
        p.on_created(&[1]);
    }
    assert_eq!(a.order(), b.order());
    assert_eq!(victims(&mut a, 0.75), victims(&mut b, 0.75));
}

#[test]
fn lru_batch_walked_in_reverse_so_the_suffix_goes_first() {
    let mut lru = ChunkLru::new();
    lru.on_created(&[0, 1, 2]);
    assert_eq!(lru.order(), [2, 1, 0]);
    assert_eq!(victims(&mut lru, 0.34), [2]);
}

#[test]
fn lru_recreating_refreshes() {
    let mut lru = ChunkLru::new();
    lru.on_created(&[0]);
    lru.on_created(&[1]);
    lru.on_created(&[0]);
    assert_eq!(lru.order(), [1, 0]);
}

#[test]
fn lru_touch_never_brings_a_key_back() {
    let mut lru = ChunkLru::new();
    lru.on_created(&[0, 1]);
    lru.on_removed(&[0]);
    lru.on_touched(&[0]);
    assert!(!lru.is_tracked(0));
    assert_eq!(lru.num_tracked(), 1);
}

#[test]
fn lru_victims_stay_tracked_until_removed() {
    let mut lru = ChunkLru::new();
    lru.on_created(&[0, 1, 2]);
    assert_eq!(victims(&mut lru, 0.5), [2]);
    assert_eq!(victims(&mut lru, 0.5), [2]);
    lru.on_removed(&[2]);
    assert_eq!(victims(&mut lru, 0.5), [1]);
}

#[test]
fn lru_skips_ineligible_and_goes_on() {
    let mut lru = ChunkLru::new();
    lru.on_created(&[0, 1, 2, 3]); // order 3, 2, 1, 0
    assert_eq!(victims_if(&mut lru, 0.5, |s| s != 3), [2, 1]);
    assert!(victims_if(&mut lru, 1.0, |_| false).is_empty());
}

#[test]
fn lru_candidates_are_the_oldest() {
    let mut lru = ChunkLru::new();
    lru.on_created(&[0, 1, 2]);
    assert_eq!(lru.candidates(2), [2, 1]);
    assert_eq!(lru.candidates(9), [2, 1, 0]);
}

// ---- chunk-coherent families (LMCache's test_chunk_coherent_lru_eviction.py) ----

/// Chunks 0..3 of "hybrid-model" on kv_rank 0..2 × group 0..2, salts `salts`.
fn hybrid(salts: u32) -> Universe {
    Universe::new(3, 1, &[0, 1], 2, salts)
}

fn slot(u: &Universe, chunk: u32, kv_rank: u32, group: u32, salt: u32) -> u32 {
    u.slots[&tier_state::policy_model::ModelKey { chunk, model: 0, kv_rank, group, salt }]
}

fn family(u: &Universe, chunk: u32, salt: u32) -> Vec<u32> {
    let mut f: Vec<u32> =
        (0..2).flat_map(|r| (0..2).map(move |g| (r, g))).map(|(r, g)| slot(u, chunk, r, g, salt)).collect();
    f.sort_unstable();
    f
}

fn create(p: &mut dyn EvictionPolicy, u: &Universe, slots: &[u32]) {
    let meta: Vec<KeyMeta> = slots.iter().map(|&s| u.meta[s as usize]).collect();
    p.on_created_with(slots, &meta);
}

/// LMCache's `_register_rank_group_batches`: one batch per (rank, group).
fn register_batches(p: &mut dyn EvictionPolicy, u: &Universe, chunks: &[u32], salt: u32) {
    for r in 0..2 {
        for g in 0..2 {
            let batch: Vec<u32> = chunks.iter().map(|&c| slot(u, c, r, g, salt)).collect();
            create(p, u, &batch);
        }
    }
}

fn sorted(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v
}

#[test]
fn global_lru_does_not_split_rank_or_group_family() {
    let u = hybrid(1);
    let mut lru = ChunkLru::new();
    register_batches(&mut lru, &u, &[0, 1, 2], 0);
    let out = sorted(victims(&mut lru, 0.25));
    assert_eq!(out.len(), 4);
    assert!((0..3).any(|c| out == family(&u, c, 0)));
}

#[test]
fn family_returned_in_coordinate_order() {
    let u = hybrid(1);
    let mut lru = ChunkLru::new();
    register_batches(&mut lru, &u, &[0], 0);
    let out = victims(&mut lru, 0.1);
    let coords: Vec<(u32, u32)> = out.iter().map(|&s| (u.keys[s as usize].kv_rank, u.keys[s as usize].group)).collect();
    assert_eq!(coords, [(0, 0), (0, 1), (1, 0), (1, 1)]);
}

#[test]
fn locked_family_is_skipped_as_a_unit() {
    let u = hybrid(1);
    let mut lru = ChunkLru::new();
    register_batches(&mut lru, &u, &[0, 1], 0);
    let locked = slot(&u, 1, 0, 0, 0);
    let out = sorted(victims_if(&mut lru, 1.0, |s| s != locked));
    assert_eq!(out, family(&u, 0, 0));
}

#[test]
fn removed_family_members_are_not_returned_as_stale_siblings() {
    let u = hybrid(1);
    let mut lru = ChunkLru::new();
    register_batches(&mut lru, &u, &[0, 1], 0);
    lru.on_removed(&family(&u, 0, 0));
    assert_eq!(sorted(victims(&mut lru, 1.0)), family(&u, 1, 0));
}

#[test]
fn incomplete_family_is_skipped_until_the_late_sibling_arrives() {
    let u = hybrid(1);
    let mut lru = ChunkLru::new();
    create(&mut lru, &u, &family(&u, 0, 0));
    let late = slot(&u, 0, 1, 1, 0);
    lru.on_removed(&[late]);
    assert!(victims(&mut lru, 1.0).is_empty());
    create(&mut lru, &u, &[late]);
    assert_eq!(sorted(victims(&mut lru, 1.0)), family(&u, 0, 0));
}

#[test]
fn family_topology_is_scoped_to_its_namespace() {
    // Model 0 sees four coordinates; model 1's key has only its own.
    let u = Universe::new(2, 2, &[0, 1], 2, 1);
    let k = |chunk, model, kv_rank, group| {
        u.slots[&tier_state::policy_model::ModelKey { chunk, model, kv_rank, group, salt: 0 }]
    };
    let mut lru = ChunkLru::new();
    let hybrid: Vec<u32> = (0..2).flat_map(|r| (0..2).map(move |g| (r, g))).map(|(r, g)| k(0, 0, r, g)).collect();
    create(&mut lru, &u, &hybrid);
    lru.on_removed(&hybrid);
    let ordinary = k(1, 1, 0, 0);
    create(&mut lru, &u, &[ordinary]);
    assert_eq!(victims(&mut lru, 1.0), [ordinary]);
}

#[test]
fn packed_topology_expects_every_rank_before_it_is_seen() {
    let ranks = [compute_kv_rank(2, 0, 2, 0), compute_kv_rank(2, 1, 2, 1)];
    let u = Universe::new(1, 1, &ranks, 2, 1);
    let k =
        |kv_rank, group| u.slots[&tier_state::policy_model::ModelKey { chunk: 0, model: 0, kv_rank, group, salt: 0 }];
    let mut lru = ChunkLru::new();
    let rank0 = [k(ranks[0], 0), k(ranks[0], 1)];
    let rank1 = [k(ranks[1], 0), k(ranks[1], 1)];
    create(&mut lru, &u, &rank0);
    assert!(victims(&mut lru, 1.0).is_empty(), "rank 1 is expected though never seen");
    create(&mut lru, &u, &rank1);
    assert_eq!(sorted(victims(&mut lru, 1.0)), sorted([rank0, rank1].concat()));
}

#[test]
fn parallel_topologies_do_not_require_each_others_ranks() {
    let mut ranks = Vec::new();
    for world in [2u8, 4] {
        for r in 0..world {
            ranks.push(compute_kv_rank(world, r, world, r));
        }
    }
    let u = Universe::new(1, 1, &ranks, 1, 1);
    let mut lru = ChunkLru::new();
    let all: Vec<u32> = (0..u.keys.len() as u32).collect();
    create(&mut lru, &u, &all);
    let out = victims(&mut lru, 0.1);
    let worlds: std::collections::HashSet<u32> = out.iter().map(|&s| u.keys[s as usize].kv_rank >> 24).collect();
    assert_eq!(worlds.len(), 1);
    assert!(out.len() == 2 || out.len() == 4);
}

#[test]
fn isolated_lru_keeps_each_salt_chunk_coherent() {
    let u = hybrid(2);
    for salt in 0..2 {
        let mut lru = IsolatedLru::new();
        register_batches(&mut lru, &u, &[0, 1, 2], salt);
        let mut out = Vec::new();
        lru.victims_in_salt(salt, 0.25, Eligible::All, &mut out);
        let out = sorted(out);
        assert!((0..3).any(|c| out == family(&u, c, salt)));
    }
}

#[test]
fn isolated_lru_never_crosses_salts() {
    let u = hybrid(2);
    let mut lru = IsolatedLru::new();
    register_batches(&mut lru, &u, &[0, 1], 0);
    register_batches(&mut lru, &u, &[0, 1], 1);
    let mut out = Vec::new();
    lru.victims_in_salt(0, 1.0, Eligible::All, &mut out);
    assert_eq!(sorted(out), sorted([family(&u, 0, 0), family(&u, 1, 0)].concat()));
}

#[test]
fn isolated_lru_counts_the_target_within_the_salt_and_needs_one() {
    let mut lru = IsolatedLru::new();
    let meta = |salt| KeyMeta::single(salt);
    lru.on_created_with(&[0, 1, 2, 3], &[meta(1), meta(1), meta(2), meta(2)]);
    lru.on_created_with(&[4, 5, 6, 7], &[meta(2); 4]);
    let mut out = Vec::new();
    lru.victims_in_salt(1, 0.5, Eligible::All, &mut out);
    assert_eq!(out, [1], "int(2 × 0.5), salt 1's oldest");
    out.clear();
    lru.victims(1.0, Eligible::All, &mut out);
    assert!(out.is_empty(), "no global path: LMCache raises for cache_salt=None");
    lru.victims_in_salt(9, 1.0, Eligible::All, &mut out);
    assert!(out.is_empty(), "an unknown salt has nothing");
}

#[test]
fn isolated_lru_drops_empty_buckets_and_remakes_them_last() {
    let mut lru = IsolatedLru::new();
    lru.on_created_with(&[0, 1], &[KeyMeta::single(5), KeyMeta::single(6)]);
    assert_eq!(lru.salts(), [6, 5], "the batch is walked in reverse");
    lru.on_created_with(&[2], &[KeyMeta::single(5)]);
    lru.on_removed(&[2]);
    lru.on_removed(&[1]);
    assert_eq!(lru.salts(), [5]);
    lru.on_created_with(&[1], &[KeyMeta::single(6)]);
    assert_eq!(lru.salts(), [5, 6]);
    assert_eq!(lru.num_tracked(), 2);
}

// ---- S3-FIFO ----

#[test]
fn s3fifo_new_keys_enter_small_duplicates_ignored() {
    let mut s3 = S3Fifo::new();
    s3.on_created(&[0, 1]);
    s3.on_created(&[1, 2]);
    assert_eq!(s3.small(), [0, 1, 2]);
    assert_eq!(s3.num_tracked(), 3);
}

#[test]
fn s3fifo_touch_promotes_small_to_main_and_refreshes_main() {
    let mut s3 = S3Fifo::new();
    s3.on_created(&[0, 1, 2]);
    s3.on_touched(&[1, 0]);
    assert_eq!(s3.main(), [1, 0]);
    s3.on_touched(&[1]);
    assert_eq!(s3.main(), [0, 1]);
    assert_eq!(s3.small(), [2]);
    s3.on_touched(&[7]);
    assert!(!s3.is_tracked(7));
}

#[test]
fn s3fifo_victims_small_first_then_main_and_become_ghosts() {
    let mut s3 = S3Fifo::new();
    s3.on_created(&[0, 1, 2, 3]);
    s3.on_touched(&[0]);
    assert_eq!(victims_if(&mut s3, 1.0, |s| s != 2), [1, 3, 0]);
    assert_eq!(s3.ghosts(), [0, 1, 3]);
    assert_eq!(s3.num_tracked(), 1);
    assert!(s3.remembers(1) && !s3.is_tracked(1));
}

#[test]
fn s3fifo_ghost_hit_goes_to_main() {
    let mut s3 = S3Fifo::new();
    s3.on_created(&[0, 1]);
    assert_eq!(victims(&mut s3, 0.5), [0]);
    s3.on_created(&[0]);
    assert_eq!(s3.main(), [0]);
    assert!(s3.ghosts().is_empty());
}

#[test]
fn s3fifo_removal_clears_the_ghost_too() {
    let mut s3 = S3Fifo::new();
    s3.on_created(&[0, 1]);
    assert_eq!(complete(&mut s3, 0.5), [0]);
    assert!(!s3.remembers(0));
    s3.on_created(&[0]);
    assert_eq!(s3.small(), [1, 0], "no ghost hit after a confirmed removal");
}

#[test]
fn s3fifo_small_max_size_trims_its_front_into_ghosts() {
    let mut s3 = S3Fifo::with_small_max_size(Some(2));
    s3.on_created(&[0, 1, 2, 3]);
    assert_eq!(s3.small(), [2, 3]);
    assert_eq!(s3.ghosts(), [0, 1]);
    s3.on_created(&[0]);
    assert_eq!(s3.main(), [0]);
}

#[test]
fn s3fifo_all_ineligible_gives_nothing() {
    let mut s3 = S3Fifo::new();
    s3.on_created(&[0, 1]);
    assert!(victims_if(&mut s3, 1.0, |_| false).is_empty());
    assert_eq!(s3.num_tracked(), 2);
}

// ---- ARC (LMCache's test_arc_eviction_policy.py) ----

#[test]
fn arc_touch_promotes_recent_and_protects_frequent() {
    let mut arc = Arc::new();
    for k in 1..5 {
        arc.on_created(&[k]);
    }
    arc.on_touched(&[1, 2]);
    assert_eq!(victims(&mut arc, 0.5), [3, 4]);
}

#[test]
fn arc_batch_order_keeps_later_suffixes_first() {
    let mut arc = Arc::new();
    arc.on_created(&[1, 2, 3]);
    assert_eq!(victims(&mut arc, 0.34), [3]);
}

#[test]
fn arc_filter_skips_locked() {
    let mut arc = Arc::new();
    for k in 1..4 {
        arc.on_created(&[k]);
    }
    assert_eq!(victims_if(&mut arc, 0.34, |s| s != 1), [2]);
}

#[test]
fn arc_adaptation_uses_fractional_ghost_ratio() {
    let mut arc = Arc::new();
    let capacity: Vec<u32> = (1..6).collect();
    for &k in &capacity {
        arc.on_created(&[k]);
    }
    arc.on_removed(&capacity);
    for k in 6..9 {
        arc.on_created(&[k]);
        arc.on_touched(&[k]);
        assert_eq!(complete(&mut arc, 1.0), [k]);
    }
    for k in [9, 10] {
        arc.on_created(&[k]);
        assert_eq!(complete(&mut arc, 1.0), [k]);
    }
    arc.on_created(&[9]);
    assert_eq!(arc.state().target_t1_size, 1.5);
}

#[test]
fn arc_recent_and_frequent_ghosts_adjust_the_next_victim() {
    let mut arc = Arc::new();
    arc.on_created(&[1]);
    arc.on_created(&[2]);
    assert_eq!(complete(&mut arc, 0.5), [1]);
    assert_eq!(arc.state().b1, [1]);
    arc.on_created(&[1]);
    assert_eq!(arc.state().target_t1_size, 1.0);
    assert_eq!(complete(&mut arc, 0.5), [2]);
    assert_eq!(arc.state().b1, [2]);
    assert_eq!(complete(&mut arc, 1.0), [1]);
    assert_eq!(arc.state().b2, [1]);
    arc.on_created(&[1]);
    assert_eq!(arc.state().target_t1_size, 0.0);
    arc.on_created(&[3]);
    assert_eq!(victims(&mut arc, 0.5), [3]);
}

#[test]
fn arc_equal_target_selects_t1() {
    let mut arc = Arc::new();
    arc.on_created(&[1]);
    arc.on_created(&[2]);
    assert_eq!(complete(&mut arc, 0.5), [1]);
    arc.on_created(&[1]);
    let state = arc.state();
    assert_eq!((state.target_t1_size, state.t1), (1.0, vec![2]));
    assert_eq!(victims(&mut arc, 0.5), [2]);
}

#[test]
fn arc_explicit_removal_makes_no_ghost() {
    let mut arc = Arc::new();
    arc.on_created(&[1]);
    arc.on_created(&[2]);
    arc.on_removed(&[1]);
    assert!(!arc.remembers(1));
    arc.on_created(&[1]);
    let state = arc.state();
    assert!(state.b1.is_empty() && state.b2.is_empty());
    assert_eq!(state.target_t1_size, 0.0);
    assert_eq!(victims(&mut arc, 0.5), [2]);
}

#[test]
fn arc_selection_without_removal_keeps_the_key_resident() {
    let mut arc = Arc::new();
    arc.on_created(&[1]);
    assert_eq!(victims(&mut arc, 1.0), [1]);
    assert!(arc.is_pending(1));
    assert_eq!(arc.num_tracked(), 1);
    assert!(arc.state().b1.is_empty());
}

#[test]
fn arc_recreating_a_pending_victim_cancels_it() {
    let mut arc = Arc::new();
    arc.on_created(&[1, 2]);
    assert_eq!(victims(&mut arc, 0.5), [2]);
    arc.on_created(&[2]);
    assert!(!arc.is_pending(2));
    arc.on_removed(&[2]);
    assert!(!arc.remembers(2), "an explicit removal: no ghost");
}

#[test]
fn arc_capacity_is_the_largest_resident_count_and_ghosts_are_trimmed() {
    let mut arc = Arc::new();
    arc.on_created(&[0, 1, 2]);
    assert_eq!(arc.state().capacity, 3);
    assert_eq!(complete(&mut arc, 1.0), [2, 1, 0]);
    assert_eq!(arc.state().b1, [2, 1, 0]);
    assert_eq!(arc.state().capacity, 3);
    // New keys push T1 + B1 past the capacity: B1 loses its front.
    arc.on_created(&[5]);
    assert_eq!(arc.state().b1, [1, 0]);
    let mut released = Vec::new();
    arc.drain_released(&mut released);
    assert_eq!(released, [2]);
    arc.drain_released(&mut released);
    assert_eq!(released, [2], "drained once");
}

#[test]
fn arc_drain_skips_slots_remembered_again() {
    let mut arc = Arc::new();
    arc.on_created(&[0, 1]);
    complete(&mut arc, 1.0);
    arc.on_created(&[7]);
    arc.on_created(&[8]); // B1 trimmed: 1 then 0 released
    arc.on_created(&[1]); // the caller reused slot 1 before draining
    let mut released = Vec::new();
    arc.drain_released(&mut released);
    assert!(!released.contains(&1));
    for s in &released {
        assert!(!arc.remembers(*s));
    }
}

// ---- memory ----

/// Bytes per key at `n` dense slots, all tracked, then again after half
/// were evicted and removed (S3-FIFO and ARC keep them as ghosts: the same
/// per-slot arrays hold them, and nothing is added for them).
fn bytes_per_key(p: &mut dyn EvictionPolicy, n: u32, reserve: bool, with_meta: Option<&Universe>) -> [f64; 2] {
    if reserve {
        p.reserve_slots(n as usize);
    }
    let slots: Vec<u32> = (0..n).collect();
    for chunk in slots.chunks(64) {
        match with_meta {
            Some(u) => create(p, u, chunk),
            None => p.on_created(chunk),
        }
    }
    assert_eq!(p.num_tracked(), n as usize);
    let full = p.memory_bytes() as f64 / f64::from(n);
    let out = victims(p, 0.5);
    p.on_removed(&out);
    [full, p.memory_bytes() as f64 / f64::from(n)]
}

#[test]
fn every_policy_stays_within_32_bytes_a_key() {
    let u = Universe::new(4096, 1, &[0, 1], 2, 2); // 32,768 keys, 4 a family, 2 salts
    let n = u.keys.len() as u32;
    for &name in POLICY_NAMES.iter().filter(|&&n| n != "noop") {
        for reserve in [false, true] {
            for meta in [None, Some(&u)] {
                let mut p = create_policy(name).unwrap();
                let bytes = bytes_per_key(p.as_mut(), n, reserve, meta);
                assert!(
                    bytes[0] <= 32.0 && bytes[1] <= 32.0,
                    "{name} reserve={reserve} meta={}: {bytes:?} B/key",
                    meta.is_some()
                );
                eprintln!("{name} reserve={reserve} meta={}: {bytes:.1?} B/key", meta.is_some());
            }
        }
    }
}
