//! `policy_ops`: random event sequences and victim requests on tier-state's
//! eviction policies (`ChunkLru` with and without chunk families,
//! `IsolatedLru`, `S3Fifo`, `Arc`) and on their plain models
//! (`tier_state::policy_model`, LMCache's Python transcribed with `Vec`s and
//! `HashSet`s), compared after every step: the victims (with eligibility as
//! `All`, a bitmap or a predicate), every order, ghost set, ARC's `p` and
//! capacity, and the released-slot contract.
//!
//! Why not in `tier_ops`: the tier's model evicts by its own LRU list, and
//! `tier_ops` compares the tier's evictions and order with it; another
//! policy would need the tier model to carry that policy's model too. Here
//! each policy meets its own model directly, with events the tier cannot
//! produce (removals of victims that were never deleted, touches of unknown
//! slots, slots created twice in a batch).

use arbitrary::Arbitrary;
use bitmap_core::Bitmap;
use tier_state::policy_model::{ArcModel, ChunkLruModel, IsolatedLruModel, S3FifoModel, Universe};
use tier_state::{Arc, ChunkLru, Eligible, EvictionPolicy, IsolatedLru, KeyMeta, S3Fifo, compute_kv_rank};

/// Plain slots for the policies without meta.
const SLOTS: u32 = 32;

/// One step; slot lists are indices into the universe.
#[derive(Arbitrary, Clone, Debug)]
pub enum Op {
    /// `on_created` (with meta for the family policies).
    Created(Vec<u8>),
    /// `on_touched`.
    Touched(Vec<u8>),
    /// `on_removed`.
    Removed(Vec<u8>),
    /// A victim request; then the victims whose bit in `confirm` is set are
    /// removed (a deletion may fail: a locked key).
    Victims {
        /// The ratio, /200 (so past 1 too); 255 is NaN.
        ratio: u8,
        /// Eligibility: 0 `All`, 1 a bitmap, 2 a predicate.
        form: u8,
        /// The eligible slots, by slot mod 64.
        eligible: u64,
        /// The salt (mod 3).
        salt: u8,
        /// Which victims are removed, by position mod 8.
        confirm: u8,
    },
}

/// Which policy, and the steps.
#[derive(Arbitrary, Clone, Debug)]
pub struct Input {
    /// 0: `ChunkLru` with families, 1: `IsolatedLru`, 2: `S3Fifo`, 3: `Arc`.
    pub policy: u8,
    /// `S3Fifo`'s `small_max_size`.
    pub small_max_size: Option<u8>,
    /// At most 300 steps.
    pub ops: Vec<Op>,
}

fn universe() -> Universe {
    let ranks = [0, 1, compute_kv_rank(1, 0, 1, 0), compute_kv_rank(2, 0, 2, 0), compute_kv_rank(2, 1, 2, 1)];
    Universe::new(3, 2, &ranks, 2, 2)
}

enum Twin {
    Chunk(ChunkLru, ChunkLruModel, Universe),
    Isolated(IsolatedLru, IsolatedLruModel, Universe),
    S3(S3Fifo, S3FifoModel),
    Arc(Arc, ArcModel),
}

impl Twin {
    fn slots(&self) -> u32 {
        match self {
            Twin::Chunk(.., u) | Twin::Isolated(.., u) => u.keys.len() as u32,
            _ => SLOTS,
        }
    }

    fn policy(&mut self) -> &mut dyn EvictionPolicy {
        match self {
            Twin::Chunk(p, ..) => p,
            Twin::Isolated(p, ..) => p,
            Twin::S3(p, _) => p,
            Twin::Arc(p, _) => p,
        }
    }

    fn created(&mut self, slots: &[u32]) {
        let meta = |u: &Universe| -> Vec<KeyMeta> { slots.iter().map(|&s| u.meta[s as usize]).collect() };
        match self {
            Twin::Chunk(p, m, u) => {
                p.on_created_with(slots, &meta(u));
                m.created(u, slots);
            }
            Twin::Isolated(p, m, u) => {
                p.on_created_with(slots, &meta(u));
                m.created(u, slots);
            }
            Twin::S3(p, m) => {
                p.on_created(slots);
                m.created(slots);
            }
            Twin::Arc(p, m) => {
                p.on_created(slots);
                m.created(slots);
            }
        }
    }

    fn touched(&mut self, slots: &[u32]) {
        self.policy().on_touched(slots);
        match self {
            Twin::Chunk(_, m, _) => m.lru.touched(slots),
            Twin::Isolated(_, m, u) => m.touched(u, slots),
            Twin::S3(_, m) => m.touched(slots),
            Twin::Arc(_, m) => m.touched(slots),
        }
    }

    fn removed(&mut self, slots: &[u32]) {
        self.policy().on_removed(slots);
        match self {
            Twin::Chunk(_, m, _) => m.lru.removed(slots),
            Twin::Isolated(_, m, u) => m.removed(u, slots),
            Twin::S3(_, m) => m.removed(slots),
            Twin::Arc(_, m) => m.removed(slots),
        }
    }

    fn model_victims(&mut self, salt: u32, ratio: f64, eligible: Option<&[bool]>) -> Vec<u32> {
        match self {
            Twin::Chunk(_, m, u) => m.victims(u, ratio, eligible),
            Twin::Isolated(_, m, u) => m.victims(u, salt, ratio, eligible),
            Twin::S3(_, m) => m.victims(ratio, eligible),
            Twin::Arc(_, m) => m.victims(ratio, eligible),
        }
    }

    fn compare(&mut self) {
        let slots = self.slots();
        match self {
            Twin::Chunk(p, m, _) => assert_eq!(p.order(), m.lru.order, "LRU order"),
            Twin::Isolated(p, m, _) => {
                let salts: Vec<u32> = m.buckets.iter().map(|(s, _)| *s).collect();
                assert_eq!(p.salts(), salts, "salts");
                for (salt, order) in &m.buckets {
                    assert_eq!(&p.order(*salt), order, "salt {salt} order");
                }
            }
            Twin::S3(p, m) => {
                assert_eq!(p.small(), m.small, "small");
                assert_eq!(p.main(), m.main, "main");
                let mut ghosts: Vec<u32> = m.ghost.iter().copied().collect();
                ghosts.sort_unstable();
                assert_eq!(p.ghosts(), ghosts, "ghosts");
            }
            Twin::Arc(p, m) => {
                let state = p.state();
                assert_eq!((&state.t1, &state.t2, &state.b1, &state.b2), (&m.t1, &m.t2, &m.b1, &m.b2), "ARC lists");
                assert_eq!(state.capacity, m.capacity, "ARC capacity");
                assert_eq!(state.target_t1_size.to_bits(), m.p.to_bits(), "ARC p");
                for slot in 0..slots {
                    assert_eq!(p.is_pending(slot), m.pending.contains(&slot), "pending {slot}");
                }
                let mut released = Vec::new();
                p.drain_released(&mut released);
                for slot in released {
                    assert!(!p.remembers(slot), "released slot {slot} still remembered");
                }
            }
        }
        let policy = self.policy();
        let tracked = (0..slots).filter(|&s| policy.is_tracked(s)).count();
        assert_eq!(tracked, policy.num_tracked(), "num_tracked");
        for slot in 0..slots {
            assert!(!policy.is_tracked(slot) || policy.remembers(slot), "tracked but not remembered: {slot}");
        }
    }
}

/// Runs `input`; panics on the first difference.
pub fn check(input: Input) {
    let small_max = input.small_max_size.map(|n| usize::from(n % 8));
    let mut twin = match input.policy % 4 {
        0 => Twin::Chunk(ChunkLru::new(), ChunkLruModel::default(), universe()),
        1 => Twin::Isolated(IsolatedLru::new(), IsolatedLruModel::default(), universe()),
        2 => Twin::S3(
            S3Fifo::with_small_max_size(small_max),
            S3FifoModel { small_max_size: small_max, ..S3FifoModel::default() },
        ),
        _ => Twin::Arc(Arc::new(), ArcModel::default()),
    };
    let n = twin.slots();
    let list = |l: &[u8]| -> Vec<u32> { l.iter().take(12).map(|&i| u32::from(i) % n).collect() };
    for op in input.ops.iter().take(300) {
        match op {
            Op::Created(l) => twin.created(&list(l)),
            Op::Touched(l) => twin.touched(&list(l)),
            Op::Removed(l) => twin.removed(&list(l)),
            &Op::Victims { ratio, form, eligible, salt, confirm } => {
                let ratio = if ratio == 255 { f64::NAN } else { f64::from(ratio) / 200.0 };
                let bools: Vec<bool> = (0..n).map(|s| eligible >> (s % 64) & 1 == 1).collect();
                let salt = u32::from(salt % 3);
                let mut got = Vec::new();
                let seen = match form % 3 {
                    0 => {
                        twin.policy().victims_in_salt(salt, ratio, Eligible::All, &mut got);
                        None
                    }
                    1 => {
                        let bits = Bitmap::from_bools(&bools);
                        twin.policy().victims_in_salt(salt, ratio, Eligible::Bits(&bits), &mut got);
                        Some(bools)
                    }
                    _ => {
                        let mut test = |slot: u32| bools[slot as usize];
                        twin.policy().victims_in_salt(salt, ratio, Eligible::Predicate(&mut test), &mut got);
                        Some(bools)
                    }
                };
                let want = twin.model_victims(salt, ratio, seen.as_deref());
                assert_eq!(got, want, "victims at ratio {ratio}, salt {salt}");
                let gone: Vec<u32> =
                    got.iter().enumerate().filter(|&(i, _)| confirm >> (i % 8) & 1 == 1).map(|(_, &s)| s).collect();
                twin.removed(&gone);
            }
        }
        twin.compare();
    }
}
