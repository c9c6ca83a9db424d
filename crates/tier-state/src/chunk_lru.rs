//! [`ChunkLru`]: LMCache's LRU with chunk-coherent victims
//! (`eviction_policy/lru.py` with `_selection.py` at d18cdadc): [`Lru`]'s
//! order, and families from [`KeyMeta`].
//!
//! [`Lru`]: crate::Lru

use crate::families::Families;
use crate::links::{Links, List, NIL};
use crate::meta::KeyMeta;
use crate::policy::{Eligible, EvictionPolicy, target_count};

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
///
/// [`Lru`]: crate::Lru
#[derive(Clone, Debug, Default)]
pub struct ChunkLru {
    links: Links,
    order: List,
    families: Families,
}

impl ChunkLru {
    /// An empty LRU.
    pub fn new() -> ChunkLru {
        ChunkLru::default()
    }

    /// Slots from oldest to most recent (allocates: for tests).
    pub fn order(&self) -> Vec<u32> {
        self.links.collect(&self.order)
    }

    /// LMCache's `get_eviction_candidates(count)`: the `count` oldest slots.
    pub fn candidates(&self, count: usize) -> Vec<u32> {
        let mut out = Vec::with_capacity(count.min(self.order.len));
        let mut at = self.order.head;
        while at != NIL && out.len() < count {
            out.push(at);
            at = self.links.next(at);
        }
        out
    }

    #[inline]
    fn create(&mut self, slot: u32) {
        self.links.grow_to(slot);
        if self.links.is_linked(slot) {
            self.links.move_to_back(&mut self.order, slot);
        } else {
            self.links.push_back(&mut self.order, slot);
        }
    }
}

impl EvictionPolicy for ChunkLru {
    fn name(&self) -> &'static str {
        "LRU"
    }

    fn on_created(&mut self, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            self.create(slot);
        }
    }

    fn on_created_with(&mut self, slots: &[u32], meta: &[KeyMeta]) {
        assert_eq!(slots.len(), meta.len(), "on_created_with: one KeyMeta per slot");
        for (&slot, meta) in slots.iter().zip(meta).rev() {
            self.create(slot);
            self.families.created(slot, meta);
        }
    }

    fn on_touched(&mut self, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            if self.links.is_linked(slot) {
                self.links.move_to_back(&mut self.order, slot);
            }
        }
    }

    fn on_removed(&mut self, slots: &[u32]) {
        for &slot in slots {
            if self.links.is_linked(slot) {
                self.links.unlink(&mut self.order, slot);
                self.families.removed(slot);
            }
        }
    }

    fn victims(&mut self, ratio: f64, mut eligible: Eligible<'_>, out: &mut Vec<u32>) {
        let target = target_count(self.order.len, ratio);
        let (links, head) = (&self.links, self.order.head);
        let order = core::iter::successors((head != NIL).then_some(head), |&at| {
            let next = links.next(at);
            (next != NIL).then_some(next)
        });
        if self.families.is_unused() {
            let start = out.len();
            for slot in order {
                if out.len() - start >= target {
                    break;
                }
                if eligible.test(slot) {
                    out.push(slot);
                }
            }
        } else {
            self.families.select(order, target, &mut eligible, out);
        }
    }

    fn num_tracked(&self) -> usize {
        self.order.len
    }

    fn is_tracked(&self, slot: u32) -> bool {
        self.links.is_linked(slot)
    }

    fn clear(&mut self) {
        self.links.clear();
        self.order = List::EMPTY;
        self.families.clear();
    }

    fn memory_bytes(&self) -> usize {
        self.links.memory_bytes() + self.families.memory_bytes()
    }

    fn reserve_slots(&mut self, slots: usize) {
        self.links.reserve(slots);
        self.families.reserve(slots);
    }
}
