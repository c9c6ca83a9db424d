//! [`EvictionPolicy`]: what a tier tells its eviction policy, in batches of
//! slots, and how the policy answers with victims.
//!
//! The tier reports events as LMCache's `L1EvictionPolicy` bridge does
//! (`lmcache/v1/distributed/eviction.py`): a reserved write and a finished
//! write (or prefetch, or write-and-read) are *created*, `touch` is
//! *touched*, every key the manager deletes is *removed*. Reads are nothing.
//! Slots name keys: the tier reports a slot removed before it reuses it.

use bitmap_core::Bitmap;

use crate::eviction::meta::KeyMeta;

/// Which slots may be evicted: LMCache's `key_eligible_filter`.
pub enum Eligible<'a> {
    /// Every tracked slot (LMCache's filter `None`).
    All,
    /// The slots set in a bitmap over slots, e.g. the tier's
    /// [`evictable`](crate::Tier::evictable_into) expression (the fast path).
    /// Slots past its end are not eligible.
    Bits(&'a Bitmap),
    /// A per-slot predicate (LMCache's callable).
    Predicate(&'a mut dyn FnMut(u32) -> bool),
}

impl core::fmt::Debug for Eligible<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Eligible::All => f.write_str("All"),
            Eligible::Bits(bits) => f.debug_tuple("Bits").field(bits).finish(),
            Eligible::Predicate(_) => f.write_str("Predicate(..)"),
        }
    }
}

impl Eligible<'_> {
    /// Whether `slot` may be evicted.
    #[inline]
    pub fn test(&mut self, slot: u32) -> bool {
        match self {
            Eligible::All => true,
            Eligible::Bits(bits) => bits.get(slot as usize).unwrap_or(false),
            Eligible::Predicate(predicate) => predicate(slot),
        }
    }
}

/// LMCache's rounding of an eviction ratio to a count of keys: the ratio
/// clamped to [0, 1] as `max(0.0, min(1.0, ratio))` does in Python (which
/// makes NaN 1.0: `min(1.0, nan)` is `1.0`), `int(tracked × ratio)`, and
/// at least 1 when the ratio is above 0 and keys are tracked.
///
/// ```
/// use tier_state::target_count;
/// assert_eq!(target_count(10, 0.25), 2);
/// assert_eq!(target_count(3, 0.1), 1);
/// assert_eq!(target_count(3, 0.0), 0);
/// assert_eq!(target_count(0, 0.5), 0);
/// assert_eq!(target_count(7, 3.0), 7);
/// assert_eq!(target_count(7, f64::NAN), 7);
/// ```
pub fn target_count(tracked: usize, ratio: f64) -> usize {
    let ratio = if ratio.is_nan() { 1.0 } else { ratio.clamp(0.0, 1.0) };
    // Python's int() truncates toward zero, as `as` does for these values.
    let target = (tracked as f64 * ratio) as usize;
    if target == 0 && ratio > 0.0 && tracked > 0 { 1 } else { target.min(tracked) }
}

/// An eviction policy over a tier's slots.
///
/// Every event costs O(1) per slot over arrays indexed by slot (no
/// allocation per key once the arrays have grown to the tier's slots).
/// Object-safe, so a tier holds `Box<dyn EvictionPolicy>` chosen at run
/// time ([`create_policy`](crate::create_policy) by LMCache's names). The
/// methods past [`memory_bytes`](EvictionPolicy::memory_bytes) have
/// defaults: per-key meta for chunk-coherent and per-salt policies, and
/// the ghost-history contract of S3-FIFO and ARC.
pub trait EvictionPolicy: Send + core::fmt::Debug {
    /// The policy's name, as LMCache's factory spells it (`"LRU"`).
    fn name(&self) -> &'static str;
    /// Keys were created (write reserved, write finished): LMCache's
    /// `on_keys_created`, in the batch's order.
    fn on_created(&mut self, slots: &[u32]);
    /// Keys were accessed: `on_keys_touched`. Untracked slots are ignored.
    fn on_touched(&mut self, slots: &[u32]);
    /// Keys were deleted: `on_keys_removed`. Untracked slots are ignored.
    fn on_removed(&mut self, slots: &[u32]);
    /// Appends to `out` the slots to evict for `ratio`
    /// ([`target_count`] of the tracked slots), in LMCache's order,
    /// skipping the ineligible. The victims stay tracked until
    /// [`on_removed`](EvictionPolicy::on_removed).
    fn victims(&mut self, ratio: f64, eligible: Eligible<'_>, out: &mut Vec<u32>);
    /// How many slots the policy tracks.
    fn num_tracked(&self) -> usize;
    /// Whether it tracks `slot`.
    fn is_tracked(&self, slot: u32) -> bool;
    /// Forgets everything.
    fn clear(&mut self);
    /// Heap bytes held.
    fn memory_bytes(&self) -> usize;

    /// [`on_created`](EvictionPolicy::on_created), telling the policy each
    /// slot's chunk family, coordinate and salt (`meta[i]` is `slots[i]`'s).
    /// The policy records a slot's meta when it starts tracking it and drops
    /// it at removal. A slot created without meta is its own family, in
    /// salt 0. Policies that need no meta ignore it (the default).
    ///
    /// # Panics
    ///
    /// If `meta.len() != slots.len()`.
    fn on_created_with(&mut self, slots: &[u32], meta: &[KeyMeta]) {
        assert_eq!(slots.len(), meta.len(), "on_created_with: one KeyMeta per slot");
        self.on_created(slots);
    }

    /// LMCache's `support_isolation`: whether
    /// [`victims_in_salt`](EvictionPolicy::victims_in_salt) evicts within
    /// one salt.
    fn supports_isolation(&self) -> bool {
        false
    }

    /// `get_eviction_actions(..., cache_salt=salt)`. Policies without
    /// isolation ignore the salt, as LMCache's do (the default).
    fn victims_in_salt(&mut self, salt: u32, ratio: f64, eligible: Eligible<'_>, out: &mut Vec<u32>) {
        let _ = salt;
        self.victims(ratio, eligible, out);
    }

    /// Whether the policy remembers `slot`: tracks it, or holds it as ghost
    /// history (S3-FIFO's ghost set, ARC's B1/B2). History is kept by slot,
    /// so a slot must keep naming the same key while it is remembered: a
    /// caller that recycles slots must not give a remembered slot to another
    /// key (see [`drain_released`](EvictionPolicy::drain_released)).
    fn remembers(&self, slot: u32) -> bool {
        self.is_tracked(slot)
    }

    /// Appends the slots whose ghost history the policy dropped on its own
    /// (ARC's ghost trims) since the last call: they may now name other
    /// keys. Slots leave otherwise only through
    /// [`on_removed`](EvictionPolicy::on_removed), after which
    /// [`remembers`](EvictionPolicy::remembers) tells whether a ghost stayed.
    fn drain_released(&mut self, out: &mut Vec<u32>) {
        let _ = out;
    }

    /// Allocates and initialises slots `0..slots` (all untracked), so that
    /// later events on them never grow the policy's arrays, and its memory
    /// is exactly its per-slot cost. The default does nothing (`Lru` grows
    /// as slots come; [`ChunkLru`](crate::ChunkLru) reserves its `Lru`).
    fn reserve_slots(&mut self, slots: usize) {
        let _ = slots;
    }
}

/// LMCache's `noop` policy: tracks nothing, never evicts.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoEviction;

impl EvictionPolicy for NoEviction {
    fn name(&self) -> &'static str {
        "noop"
    }
    fn on_created(&mut self, _slots: &[u32]) {}
    fn on_touched(&mut self, _slots: &[u32]) {}
    fn on_removed(&mut self, _slots: &[u32]) {}
    fn victims(&mut self, _ratio: f64, _eligible: Eligible<'_>, _out: &mut Vec<u32>) {}
    fn num_tracked(&self) -> usize {
        0
    }
    fn is_tracked(&self, _slot: u32) -> bool {
        false
    }
    fn clear(&mut self) {}
    fn memory_bytes(&self) -> usize {
        0
    }
}
