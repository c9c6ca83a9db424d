//! Each policy against its plain model (`tier_state::policy_model`, LMCache's
//! Python transcribed the obvious way) over random event sequences and
//! victim requests, with the three forms of `Eligible`. After every step the
//! two must hold the same orders and give the same victims.

use bitmap_core::Bitmap;
use proptest::prelude::*;
use tier_state::policy_model::{ArcModel, ChunkLruModel, IsolatedLruModel, LruModel, S3FifoModel, Universe};
use tier_state::{Arc, ChunkLru, Eligible, EvictionPolicy, IsolatedLru, KeyMeta, Lru, S3Fifo, compute_kv_rank};

const SLOTS: u32 = 24;

#[derive(Clone, Debug)]
enum Op {
    Created(Vec<u32>),
    /// LMCache 0.5.6's `on_keys_reserved`: ARC's own; the others take it as
    /// created (the interface's default).
    Reserved(Vec<u32>),
    Touched(Vec<u32>),
    Removed(Vec<u32>),
    /// A victim request; then the controller removes the victims whose bit
    /// in `confirm` is set (a deletion may fail: a locked key).
    Victims {
        ratio: f64,
        form: u8,
        eligible: Vec<bool>,
        salt: u32,
        confirm: Vec<bool>,
    },
}

fn ratio() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(0.01),
        Just(0.1),
        Just(0.2),
        Just(0.34),
        Just(0.5),
        Just(1.0),
        Just(-0.5),
        Just(1.5),
        Just(f64::NAN),
        0.0..1.0f64,
    ]
}

fn op(slots: u32, salts: u32) -> impl Strategy<Value = Op> {
    let batch = || prop::collection::vec(0..slots, 0..7);
    prop_oneof![
        4 => batch().prop_map(Op::Created),
        2 => batch().prop_map(Op::Reserved),
        2 => batch().prop_map(Op::Touched),
        2 => batch().prop_map(Op::Removed),
        3 => (ratio(), 0..3u8, prop::collection::vec(prop::bool::weighted(0.8), slots as usize), 0..salts,
              prop::collection::vec(prop::bool::weighted(0.8), 8))
            .prop_map(|(ratio, form, eligible, salt, confirm)| Op::Victims { ratio, form, eligible, salt, confirm }),
    ]
}

fn ops(slots: u32, salts: u32) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(slots, salts), 1..60)
}

/// Asks `policy` with eligibility in the form `form`; returns the victims
/// and the eligibility the model sees (`None`: LMCache's filter `None`).
fn ask(
    policy: &mut dyn EvictionPolicy,
    ratio: f64,
    form: u8,
    eligible: &[bool],
    salt: u32,
) -> (Vec<u32>, Option<Vec<bool>>) {
    let mut out = Vec::new();
    match form {
        0 => {
            policy.victims_in_salt(salt, ratio, Eligible::All, &mut out);
            (out, None)
        }
        1 => {
            let bits = Bitmap::from_bools(eligible);
            policy.victims_in_salt(salt, ratio, Eligible::Bits(&bits), &mut out);
            (out, Some(eligible.to_vec()))
        }
        _ => {
            let mut test = |slot: u32| eligible[slot as usize];
            policy.victims_in_salt(salt, ratio, Eligible::Predicate(&mut test), &mut out);
            (out, Some(eligible.to_vec()))
        }
    }
}

fn confirmed(victims: &[u32], confirm: &[bool]) -> Vec<u32> {
    victims.iter().enumerate().filter(|&(i, _)| confirm[i % confirm.len()]).map(|(_, &s)| s).collect()
}

fn tracked(policy: &dyn EvictionPolicy, slots: u32) -> Vec<u32> {
    (0..slots).filter(|&s| policy.is_tracked(s)).collect()
}

fn sorted(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn lru_and_chunk_lru_without_meta_match_the_model(ops in ops(SLOTS, 1)) {
        let mut model = LruModel::default();
        let mut lru = Lru::new();
        let mut chunk = ChunkLru::new();
        for op in ops {
            match op {
                Op::Created(s) => { model.created(&s); lru.on_created(&s); chunk.on_created(&s); }
                Op::Reserved(s) => { model.created(&s); lru.on_created(&s); chunk.on_created(&s); }
                Op::Touched(s) => { model.touched(&s); lru.on_touched(&s); chunk.on_touched(&s); }
                Op::Removed(s) => { model.removed(&s); lru.on_removed(&s); chunk.on_removed(&s); }
                Op::Victims { ratio, form, eligible, salt, confirm } => {
                    let (got, seen) = ask(&mut lru, ratio, form, &eligible, salt);
                    let (got_chunk, _) = ask(&mut chunk, ratio, form, &eligible, salt);
                    let want = model.victims(ratio, seen.as_deref());
                    prop_assert_eq!(&got, &want);
                    prop_assert_eq!(&got_chunk, &want);
                    let gone = confirmed(&got, &confirm);
                    model.removed(&gone); lru.on_removed(&gone); chunk.on_removed(&gone);
                }
            }
            prop_assert_eq!(lru.order(), model.order.clone());
            prop_assert_eq!(chunk.order(), model.order.clone());
            prop_assert_eq!(chunk.num_tracked(), model.order.len());
        }
    }

    #[test]
    fn s3fifo_matches_the_model(ops in ops(SLOTS, 1), small_max in prop::option::of(0..6usize)) {
        let mut model = S3FifoModel { small_max_size: small_max, ..S3FifoModel::default() };
        let mut s3 = S3Fifo::with_small_max_size(small_max);
        for op in ops {
            match op {
                Op::Created(s) => { model.created(&s); s3.on_created(&s); }
                Op::Reserved(s) => { model.created(&s); s3.on_created(&s); }
                Op::Touched(s) => { model.touched(&s); s3.on_touched(&s); }
                Op::Removed(s) => { model.removed(&s); s3.on_removed(&s); }
                Op::Victims { ratio, form, eligible, salt, confirm } => {
                    let (got, seen) = ask(&mut s3, ratio, form, &eligible, salt);
                    prop_assert_eq!(&got, &model.victims(ratio, seen.as_deref()));
                    let gone = confirmed(&got, &confirm);
                    model.removed(&gone); s3.on_removed(&gone);
                }
            }
            prop_assert_eq!(s3.small(), model.small.clone());
            prop_assert_eq!(s3.main(), model.main.clone());
            prop_assert_eq!(s3.ghosts(), sorted(model.ghost.iter().copied().collect()));
            prop_assert_eq!(s3.num_tracked(), model.small.len() + model.main.len());
            prop_assert_eq!(s3.num_ghosts(), model.ghost.len());
            for slot in 0..SLOTS {
                prop_assert_eq!(s3.remembers(slot), model.small.contains(&slot) || model.main.contains(&slot) || model.ghost.contains(&slot));
            }
        }
    }

    /// `Arc::new()` against the model, and `Arc::with_fixed_slots()` in
    /// lockstep with it: the same lists, `p`, victims and pending marks, and
    /// no release log.
    #[test]
    fn arc_matches_the_model(ops in ops(SLOTS, 1)) {
        let mut model = ArcModel::default();
        let mut arc = Arc::new();
        let mut fixed = Arc::with_fixed_slots();
        let mut released = Vec::new();
        for op in ops {
            match op {
                Op::Created(s) => { model.created(&s); arc.on_created(&s); fixed.on_created(&s); }
                Op::Reserved(s) => { model.reserved(&s); arc.on_reserved(&s); fixed.on_reserved(&s); }
                Op::Touched(s) => { model.touched(&s); arc.on_touched(&s); fixed.on_touched(&s); }
                Op::Removed(s) => { model.removed(&s); arc.on_removed(&s); fixed.on_removed(&s); }
                Op::Victims { ratio, form, eligible, salt, confirm } => {
                    let (got, seen) = ask(&mut arc, ratio, form, &eligible, salt);
                    prop_assert_eq!(&got, &model.victims(ratio, seen.as_deref()));
                    let (fixed_got, _) = ask(&mut fixed, ratio, form, &eligible, salt);
                    prop_assert_eq!(&fixed_got, &got);
                    let gone = confirmed(&got, &confirm);
                    model.removed(&gone); arc.on_removed(&gone); fixed.on_removed(&gone);
                }
            }
            let state = arc.state();
            prop_assert_eq!(&state.t1, &model.t1);
            prop_assert_eq!(&state.t2, &model.t2);
            prop_assert_eq!(&state.b1, &model.b1);
            prop_assert_eq!(&state.b2, &model.b2);
            prop_assert_eq!(state.capacity, model.capacity);
            prop_assert_eq!(state.target_t1_size.to_bits(), model.p.to_bits());
            prop_assert_eq!(&fixed.state(), &state);
            for slot in 0..SLOTS {
                prop_assert_eq!(arc.is_pending(slot), model.pending.contains(&slot));
                prop_assert_eq!(fixed.is_pending(slot), arc.is_pending(slot));
                prop_assert_eq!(fixed.remembers(slot), arc.remembers(slot));
            }
            // Released slots are exactly the ones no longer remembered that
            // were ghosts: never a remembered one.
            released.clear();
            arc.drain_released(&mut released);
            for &slot in &released {
                prop_assert!(!arc.remembers(slot));
            }
            released.clear();
            fixed.drain_released(&mut released);
            prop_assert!(released.is_empty(), "with_fixed_slots logs nothing");
        }
    }
}

/// A key universe mixing plain ranks, packed topologies and two salts, so
/// families are sometimes complete, sometimes not, across namespaces.
fn universe() -> Universe {
    let ranks = [0, 1, compute_kv_rank(1, 0, 1, 0), compute_kv_rank(2, 0, 2, 0), compute_kv_rank(2, 1, 2, 1)];
    Universe::new(3, 2, &ranks, 2, 2) // 3 chunks × 2 models × 5 ranks × 2 groups × 2 salts = 120 keys
}

#[derive(Clone, Debug)]
enum FamilyOp {
    Op(Op),
    /// Creates every key of one (chunk, model, salt, rank set) in one batch:
    /// complete families happen often.
    Whole {
        chunk: u32,
        model: u32,
        salt: u32,
        packed: bool,
    },
}

fn family_ops(u: &Universe) -> impl Strategy<Value = Vec<FamilyOp>> {
    let n = u.keys.len() as u32;
    let op = prop_oneof![
        3 => op(n, 2).prop_map(FamilyOp::Op),
        1 => (0..3u32, 0..2u32, 0..2u32, any::<bool>()).prop_map(|(chunk, model, salt, packed)| FamilyOp::Whole { chunk, model, salt, packed }),
    ];
    prop::collection::vec(op, 1..50)
}

fn whole(u: &Universe, chunk: u32, model: u32, salt: u32, packed: bool) -> Vec<u32> {
    (0..u.keys.len() as u32)
        .filter(|&s| {
            let k = u.keys[s as usize];
            k.chunk == chunk && k.model == model && k.salt == salt && (k.kv_rank > 1) == packed
        })
        .collect()
}

fn metas(u: &Universe, slots: &[u32]) -> Vec<KeyMeta> {
    slots.iter().map(|&s| u.meta[s as usize]).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn chunk_lru_matches_the_family_model(ops in family_ops(&universe())) {
        let u = universe();
        let n = u.keys.len() as u32;
        let mut model = ChunkLruModel::default();
        let mut lru = ChunkLru::new();
        for op in ops {
            let op = match op {
                FamilyOp::Whole { chunk, model, salt, packed } => Op::Created(whole(&u, chunk, model, salt, packed)),
                FamilyOp::Op(op) => op,
            };
            match op {
                Op::Created(s) => { model.created(&u, &s); lru.on_created_with(&s, &metas(&u, &s)); }
                Op::Reserved(s) => { model.created(&u, &s); lru.on_created_with(&s, &metas(&u, &s)); }
                Op::Touched(s) => { model.lru.touched(&s); lru.on_touched(&s); }
                Op::Removed(s) => { model.lru.removed(&s); lru.on_removed(&s); }
                Op::Victims { ratio, form, eligible, salt, confirm } => {
                    let (got, seen) = ask(&mut lru, ratio, form, &eligible, salt);
                    prop_assert_eq!(&got, &model.victims(&u, ratio, seen.as_deref()));
                    let gone = confirmed(&got, &confirm);
                    model.lru.removed(&gone); lru.on_removed(&gone);
                }
            }
            prop_assert_eq!(lru.order(), model.lru.order.clone());
            prop_assert_eq!(tracked(&lru, n), sorted(model.lru.order.clone()));
        }
    }

    #[test]
    fn isolated_lru_matches_the_family_model(ops in family_ops(&universe())) {
        let u = universe();
        let mut model = IsolatedLruModel::default();
        let mut lru = IsolatedLru::new();
        for op in ops {
            let op = match op {
                FamilyOp::Whole { chunk, model, salt, packed } => Op::Created(whole(&u, chunk, model, salt, packed)),
                FamilyOp::Op(op) => op,
            };
            match op {
                Op::Created(s) => { model.created(&u, &s); lru.on_created_with(&s, &metas(&u, &s)); }
                Op::Reserved(s) => { model.created(&u, &s); lru.on_created_with(&s, &metas(&u, &s)); }
                Op::Touched(s) => { model.touched(&u, &s); lru.on_touched(&s); }
                Op::Removed(s) => { model.removed(&u, &s); lru.on_removed(&s); }
                Op::Victims { ratio, form, eligible, salt, confirm } => {
                    let (got, seen) = ask(&mut lru, ratio, form, &eligible, salt);
                    prop_assert_eq!(&got, &model.victims(&u, salt, ratio, seen.as_deref()));
                    let gone = confirmed(&got, &confirm);
                    model.removed(&u, &gone); lru.on_removed(&gone);
                }
            }
            let salts: Vec<u32> = model.buckets.iter().map(|(s, _)| *s).collect();
            prop_assert_eq!(lru.salts(), salts);
            for (salt, order) in &model.buckets {
                prop_assert_eq!(&lru.order(*salt), order);
            }
            prop_assert_eq!(lru.num_tracked(), model.buckets.iter().map(|(_, o)| o.len()).sum::<usize>());
        }
    }
}
