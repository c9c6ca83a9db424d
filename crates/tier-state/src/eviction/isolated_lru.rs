//! [`IsolatedLru`]: LMCache's per-`cache_salt` LRU
//! (`eviction_policy/isolated_lru.py`, with `_selection.py`'s chunk-coherent
//! victims at d18cdadc): one LRU order per salt over shared link arrays.

use crate::eviction::families::Families;
use crate::eviction::links::{Links, List, NIL, grow, grow_exact};
use crate::eviction::meta::KeyMeta;
use crate::eviction::policy::{Eligible, EvictionPolicy, target_count};

/// `salt` of an untracked slot.
const UNTRACKED: u32 = u32::MAX;

/// One salt's order, and when it last became non-empty (LMCache drops an
/// empty bucket and appends it anew to its dict when it comes back).
#[derive(Clone, Copy, Debug, Default)]
struct Bucket {
    order: List,
    since: u64,
}

/// LMCache's `IsolatedLRU`, 12 bytes a slot: [`ChunkLru`]'s rules within
/// each salt ([`KeyMeta::salt`]; slots created without meta are in salt 0).
/// Victims come from one salt only
/// ([`victims_in_salt`](EvictionPolicy::victims_in_salt)), the target
/// counted over that salt's keys. [`victims`](EvictionPolicy::victims)
/// without a salt returns nothing: LMCache raises `ValueError` for
/// `cache_salt=None`, which a binding must raise itself.
///
/// ```
/// use tier_state::{Eligible, EvictionPolicy, IsolatedLru, KeyMeta};
/// let mut lru = IsolatedLru::new();
/// lru.on_created_with(&[0, 1, 2], &[KeyMeta::single(7), KeyMeta::single(9), KeyMeta::single(7)]);
/// let mut out = Vec::new();
/// lru.victims_in_salt(7, 0.5, Eligible::All, &mut out);
/// assert_eq!(out, [2]); // salt 7's oldest (the batch walked in reverse)
/// assert_eq!(lru.num_tracked_in(9), 1);
/// assert_eq!(lru.salts(), [7, 9]);
/// ```
///
/// [`ChunkLru`]: crate::ChunkLru
#[derive(Clone, Debug, Default)]
pub struct IsolatedLru {
    links: Links,
    salt: Vec<u32>,
    buckets: Vec<Bucket>,
    /// Buckets made non-empty so far (orders `salts()`).
    clock: u64,
    tracked: usize,
    families: Families,
    /// Victims key by key, never a whole family (LMCache 0.5.6's release:
    /// its isolated LRU has no chunk families).
    plain: bool,
}

impl IsolatedLru {
    /// An empty policy.
    pub fn new() -> IsolatedLru {
        IsolatedLru::default()
    }

    /// An empty policy whose victims are taken key by key, oldest first,
    /// as LMCache 0.5.6's `IsolatedLRUEvictionPolicy` takes them: the metas
    /// given to [`on_created_with`](EvictionPolicy::on_created_with) place
    /// a key in its salt, and their families are not kept.
    ///
    /// ```
    /// use tier_state::{Eligible, EvictionPolicy, IsolatedLru, KeyMeta};
    /// // Two members of one chunk family in salt 1 (ranks 0 and 1).
    /// let meta = |kv_rank| KeyMeta { family: 0, namespace: 0, kv_rank, group: 0, salt: 1 };
    /// let mut lru = IsolatedLru::plain();
    /// lru.on_created_with(&[0, 1], &[meta(0), meta(1)]);
    /// let mut out = Vec::new();
    /// lru.victims_in_salt(1, 0.5, Eligible::All, &mut out);
    /// assert_eq!(out, [1]); // one key, not its family
    /// ```
    pub fn plain() -> IsolatedLru {
        IsolatedLru { plain: true, ..IsolatedLru::default() }
    }

    /// `salt`'s slots, oldest first (allocates: for tests).
    pub fn order(&self, salt: u32) -> Vec<u32> {
        self.buckets.get(salt as usize).map_or_else(Vec::new, |b| self.links.collect(&b.order))
    }

    /// LMCache's `get_num_tracked_keys(cache_salt)`.
    pub fn num_tracked_in(&self, salt: u32) -> usize {
        self.buckets.get(salt as usize).map_or(0, |b| b.order.len)
    }

    /// LMCache's `get_tracked_salts()`: salts with a key, in the order their
    /// buckets were (re)made (allocates).
    pub fn salts(&self) -> Vec<u32> {
        let mut salts: Vec<u32> = (0..self.buckets.len() as u32).filter(|&s| self.num_tracked_in(s) > 0).collect();
        salts.sort_by_key(|&s| self.buckets[s as usize].since);
        salts
    }

    #[inline]
    fn salt_of(&self, slot: u32) -> u32 {
        self.salt.get(slot as usize).copied().unwrap_or(UNTRACKED)
    }

    #[inline]
    fn create(&mut self, slot: u32, salt: u32) {
        assert!(salt < UNTRACKED, "salt ids are below u32::MAX");
        self.links.grow_to(slot);
        grow(&mut self.salt, slot as usize + 1, UNTRACKED);
        let tracked_in = self.salt[slot as usize];
        if tracked_in != UNTRACKED {
            let order = &mut self.buckets[tracked_in as usize].order;
            self.links.move_to_back(order, slot);
            return;
        }
        if self.buckets.len() <= salt as usize {
            self.buckets.resize(salt as usize + 1, Bucket::default());
        }
        let bucket = &mut self.buckets[salt as usize];
        if bucket.order.len == 0 {
            bucket.since = self.clock;
            self.clock += 1;
        }
        self.links.push_back(&mut bucket.order, slot);
        self.salt[slot as usize] = salt;
        self.tracked += 1;
    }
}

impl EvictionPolicy for IsolatedLru {
    fn name(&self) -> &'static str {
        "IsolatedLRU"
    }

    fn on_created(&mut self, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            self.create(slot, 0);
        }
    }

    fn on_created_with(&mut self, slots: &[u32], meta: &[KeyMeta]) {
        assert_eq!(slots.len(), meta.len(), "on_created_with: one KeyMeta per slot");
        for (&slot, meta) in slots.iter().zip(meta).rev() {
            self.create(slot, meta.salt);
            if !self.plain {
                self.families.created(slot, meta);
            }
        }
    }

    fn on_touched(&mut self, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            let salt = self.salt_of(slot);
            if salt != UNTRACKED {
                self.links.move_to_back(&mut self.buckets[salt as usize].order, slot);
            }
        }
    }

    fn on_removed(&mut self, slots: &[u32]) {
        for &slot in slots {
            let salt = self.salt_of(slot);
            if salt != UNTRACKED {
                self.links.unlink(&mut self.buckets[salt as usize].order, slot);
                self.salt[slot as usize] = UNTRACKED;
                self.tracked -= 1;
                self.families.removed(slot);
            }
        }
    }

    /// Nothing: the policy has no global order (see the type's docs).
    fn victims(&mut self, _ratio: f64, _eligible: Eligible<'_>, _out: &mut Vec<u32>) {}

    fn supports_isolation(&self) -> bool {
        true
    }

    fn victims_in_salt(&mut self, salt: u32, ratio: f64, mut eligible: Eligible<'_>, out: &mut Vec<u32>) {
        let Some(bucket) = self.buckets.get(salt as usize) else { return };
        let target = target_count(bucket.order.len, ratio);
        let (links, head) = (&self.links, bucket.order.head);
        let order = core::iter::successors((head != NIL).then_some(head), |&at| {
            let next = links.next(at);
            (next != NIL).then_some(next)
        });
        self.families.select(order, target, &mut eligible, out);
    }

    fn num_tracked(&self) -> usize {
        self.tracked
    }

    fn is_tracked(&self, slot: u32) -> bool {
        self.salt_of(slot) != UNTRACKED
    }

    fn clear(&mut self) {
        self.links.clear();
        self.salt.clear();
        self.buckets.clear();
        self.clock = 0;
        self.tracked = 0;
        self.families.clear();
    }

    fn memory_bytes(&self) -> usize {
        self.links.memory_bytes()
            + self.salt.capacity() * 4
            + self.buckets.capacity() * core::mem::size_of::<Bucket>()
            + self.families.memory_bytes()
    }

    fn reserve_slots(&mut self, slots: usize) {
        self.links.reserve(slots);
        grow_exact(&mut self.salt, slots, UNTRACKED);
        self.families.reserve(slots);
    }
}
