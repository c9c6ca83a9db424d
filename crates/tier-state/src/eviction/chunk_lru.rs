//! [`ChunkLru`]: LMCache's LRU with chunk-coherent victims
//! (`eviction_policy/lru.py` with `_selection.py` at d18cdadc): an [`Lru`]
//! for the order, and families from [`KeyMeta`].

use crate::eviction::families::Families;
use crate::eviction::lru::Lru;
use crate::eviction::meta::KeyMeta;
use crate::eviction::policy::{Eligible, EvictionPolicy, target_count};

/// LMCache's LRU as its factory builds it: the order of [`Lru`] (the batch
/// walked in reverse, touches refresh tracked slots only), and victims that
/// never split a chunk family:
///
/// - slots created with [`on_created_with`](EvictionPolicy::on_created_with)
///   belong to their [`KeyMeta::family`]; their namespace records the
///   coordinates (`kv_rank`, `group`) it has seen, and a complete family has
///   every expected coordinate (every global rank of a packed topology times
///   every group seen; without a topology, the coordinates seen);
/// - victims walk the order oldest first; each family is considered once, at
///   its oldest member: taken whole, in coordinate order, if every expected
///   member is tracked and eligible, else skipped. The result may pass the
///   target by up to one family;
/// - slots created without meta are families of one: exactly [`Lru`].
///
/// 8 bytes a slot, plus 12 a slot and 4 a family id once meta is used.
/// Slots created with meta join their family after the whole batch is
/// ordered (the family lists are unordered: victims take coordinate order).
///
/// ```
/// use tier_state::{ChunkLru, Eligible, EvictionPolicy, KeyMeta};
/// let mut lru = ChunkLru::new();
/// // Chunk 0 (family 0) on ranks 0 and 1, stored in two batches.
/// let meta = |family, kv_rank| KeyMeta { family, namespace: 0, kv_rank, group: 0, salt: 0 };
/// lru.on_created_with(&[0, 2], &[meta(0, 0), meta(1, 0)]); // rank 0 of chunks 0, 1
/// let mut out = Vec::new();
/// lru.victims(0.5, Eligible::All, &mut out);
/// assert_eq!(out, [2]); // each a whole family so far (one coordinate seen)
/// lru.on_created_with(&[1], &[meta(0, 1)]); // rank 1 of chunk 0
/// out.clear();
/// lru.victims(0.1, Eligible::All, &mut out);
/// assert_eq!(out, [0, 1]); // chunk 0's family, whole; chunk 1 lacks rank 1
/// ```
#[derive(Clone, Debug, Default)]
pub struct ChunkLru {
    lru: Lru,
    families: Families,
}

impl ChunkLru {
    /// An empty LRU.
    pub fn new() -> ChunkLru {
        ChunkLru::default()
    }

    /// Slots from oldest to most recent (allocates: for tests).
    pub fn order(&self) -> Vec<u32> {
        self.lru.order()
    }

    /// LMCache's `get_eviction_candidates(count)`: the `count` oldest slots.
    pub fn candidates(&self, count: usize) -> Vec<u32> {
        self.slots().take(count).collect()
    }

    /// The order, oldest first.
    fn slots(&self) -> impl Iterator<Item = u32> + '_ {
        core::iter::successors(self.lru.oldest(), |&at| self.lru.newer(at))
    }
}

impl EvictionPolicy for ChunkLru {
    fn name(&self) -> &'static str {
        "LRU"
    }

    /// [`Lru`]'s own code: the plain path costs what it did.
    fn on_created(&mut self, slots: &[u32]) {
        self.lru.on_created(slots);
    }

    fn on_created_with(&mut self, slots: &[u32], meta: &[KeyMeta]) {
        assert_eq!(slots.len(), meta.len(), "on_created_with: one KeyMeta per slot");
        self.lru.on_created(slots);
        for (&slot, meta) in slots.iter().zip(meta) {
            self.families.created(slot, meta);
        }
    }

    fn on_touched(&mut self, slots: &[u32]) {
        self.lru.on_touched(slots);
    }

    fn on_removed(&mut self, slots: &[u32]) {
        self.lru.on_removed(slots);
        if !self.families.is_unused() {
            for &slot in slots {
                // An untracked slot has no family: a no-op.
                self.families.removed(slot);
            }
        }
    }

    fn victims(&mut self, ratio: f64, mut eligible: Eligible<'_>, out: &mut Vec<u32>) {
        if self.families.is_unused() {
            self.lru.victims(ratio, eligible, out);
            return;
        }
        let target = target_count(self.lru.num_tracked(), ratio);
        let (lru, families) = (&self.lru, &mut self.families);
        let order = core::iter::successors(lru.oldest(), |&at| lru.newer(at));
        families.select(order, target, &mut eligible, out);
    }

    fn num_tracked(&self) -> usize {
        self.lru.num_tracked()
    }

    fn is_tracked(&self, slot: u32) -> bool {
        self.lru.is_tracked(slot)
    }

    fn clear(&mut self) {
        self.lru.clear();
        self.families.clear();
    }

    fn memory_bytes(&self) -> usize {
        self.lru.memory_bytes() + self.families.memory_bytes()
    }

    fn reserve_slots(&mut self, slots: usize) {
        self.lru.reserve(slots);
        self.families.reserve(slots);
    }
}
