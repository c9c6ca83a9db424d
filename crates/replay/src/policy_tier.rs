//! [`PolicyTier`]: a cache level that evicts with a `tier-state`
//! [`EvictionPolicy`] (LMCache's LRU, S3-FIFO, ARC, noop, or the replay's
//! FIFO and LFU as [`ListPolicy`]), at strict capacity or under LMCache's
//! timed [`Trigger`].
//!
//! # What an entry is
//!
//! The tier's keys are the trace's dense ids, and they are the policy's
//! slots too: a key names the same slot for the whole replay, so the
//! policy's ghost entries (S3-FIFO's, ARC's) stay valid and no key table
//! is needed (`docs/REPLAY.md` gives the measurements behind this). The
//! tier keeps a byte per distinct key (resident or not); the policy its
//! own arrays over slots, which [`memory_bytes`](PolicyTier::memory_bytes)
//! counts.
//!
//! # The two modes
//!
//! - **Strict capacity** (no trigger): keys come one at a time, as in a
//!   strict [`Tier`](crate::Tier): a held key is *touched*; a new one, when
//!   the tier is full, first evicts the policy's next victim (a ratio that
//!   rounds to one key), then is *created*. A policy that gives no victim
//!   (noop) leaves the tier full, and the new key is dropped.
//! - **Triggered**: [`check`](PolicyTier::check) is LMCache's controller
//!   waking up; requests come in batches ([`touch_batch`](PolicyTier::touch_batch),
//!   [`write_batch`](PolicyTier::write_batch)), and a write that finds the
//!   tier full drops the keys that do not fit (LMCache's `OUT_OF_MEMORY`).

use tier_state::{Arc, Eligible, EvictionPolicy, Lru, NoEviction, S3Fifo};

use crate::list_policy::ListPolicy;
use crate::tier::Eviction;
use crate::trigger::Trigger;

/// The policy `eviction` names: LMCache's class for `lru`, `s3fifo`,
/// `arc` and `noop`, a [`ListPolicy`] for `fifo` and `lfu`.
///
/// `lru` is `tier-state`'s plain [`Lru`], not the chunk-coherent
/// `ChunkLru` that LMCache's factory now returns: the replay's keys carry
/// no chunk families (each block is its own family), and there the two
/// are the same order, at 8 bytes a slot. `arc` is
/// [`Arc::with_fixed_slots`]: the replay's slots are its trace's dense key
/// ids, each one key for good, so ARC logs no released ghosts.
///
/// ```
/// use kv_replay::{Eviction, new_policy};
/// assert_eq!(new_policy(Eviction::Lru).name(), "LRU");
/// assert_eq!(new_policy(Eviction::Lfu).name(), "LFU");
/// ```
pub fn new_policy(eviction: Eviction) -> Box<dyn EvictionPolicy> {
    match eviction {
        Eviction::Lru => Box::new(Lru::new()),
        Eviction::Fifo | Eviction::Lfu => Box::new(ListPolicy::new(eviction)),
        Eviction::S3Fifo => Box::new(S3Fifo::new()),
        Eviction::Arc => Box::new(Arc::with_fixed_slots()),
        Eviction::Noop => Box::new(NoEviction),
    }
}

/// A ratio that [`tier_state::target_count`] rounds to one key whatever
/// the count (below 2^32 slots, `tracked × 1e-12 < 1` truncates to 0, and a
/// positive ratio gives at least one): strict capacity's one victim at a
/// time. Not `f64::MIN_POSITIVE`: its products are subnormal, which cost
/// a microcode assist each on x86 (a third of the replay's time, measured).
const ONE_KEY: f64 = 1e-12;

/// What a [`PolicyTier`] counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PolicyCounts {
    /// Keys removed to make room or by checks.
    pub evictions: u64,
    /// Checks whose usage was at or above the watermark.
    pub checks_fired: u64,
    /// Keys removed by those checks.
    pub evicted_by_checks: u64,
    /// Keys not admitted because the tier was full.
    pub dropped_full: u64,
    /// The most keys held at once.
    pub peak: usize,
}

/// A cache level evicting with an [`EvictionPolicy`].
///
/// ```
/// use kv_replay::{Eviction, PolicyTier, Trigger};
///
/// // LMCache's LRU under its default trigger, 10 blocks.
/// let mut tier = PolicyTier::new(Some(10), Eviction::Lru, Some(Trigger::LMCACHE_DEFAULT), 100);
/// tier.write_batch((0..12).map(|key| key as u32), false); // 10 fit, 2 dropped
/// assert_eq!((tier.len(), tier.counts().dropped_full), (10, 2));
/// assert!(tier.check()); // usage 1.0 >= 0.8: evicts int(10 × 0.2) keys
/// // LMCache's LRU walks a batch in reverse: the first key is the most recent.
/// assert!(!tier.contains(9) && !tier.contains(8) && tier.contains(0));
/// assert_eq!((tier.len(), tier.counts().evicted_by_checks), (8, 2));
/// assert!(tier.check()); // 8 / 10 >= 0.8 again: int(8 × 0.2) = 1 key
/// assert!(!tier.check()); // 7 / 10 < 0.8
/// ```
#[derive(Debug)]
pub struct PolicyTier {
    capacity: Option<usize>,
    eviction: Eviction,
    trigger: Option<Trigger>,
    policy: Box<dyn EvictionPolicy>,
    /// Whether each key is held, grown on demand to the largest key.
    resident: Vec<bool>,
    len: usize,
    counts: PolicyCounts,
    /// The victims of one check or eviction, reused.
    victims: Vec<u32>,
    /// One batch of keys for the policy, reused.
    batch: Vec<u32>,
}

impl PolicyTier {
    /// An empty tier of `capacity` keys (`None`: unbounded), evicting with
    /// `eviction`'s policy, at strict capacity (`trigger` `None`) or under
    /// `trigger`, reserved for keys `0..reserve`.
    pub fn new(capacity: Option<usize>, eviction: Eviction, trigger: Option<Trigger>, reserve: usize) -> PolicyTier {
        // An unbounded tier is never full and never reaches a watermark, so
        // no one ever asks its policy for a victim: it keeps none (the
        // replay's results are the same, and the events cost nothing).
        let mut policy = if capacity.is_some() { new_policy(eviction) } else { Box::new(NoEviction) };
        // Brings the policy's arrays to every slot at once (ids come in
        // increasing order: growing as they come would be a resize call a
        // new key). `reserve_slots` initialises the slots of tier-state's
        // S3-FIFO and ARC and of the replay's FIFO and LFU; `Lru` keeps the
        // trait's default and grows on demand, so a key created and removed
        // at once grows it instead, and leaves nothing behind.
        policy.reserve_slots(reserve);
        if let (Some(last), Eviction::Lru) = (reserve.checked_sub(1), eviction) {
            let last = last as u32;
            policy.on_created(&[last]);
            policy.on_removed(&[last]);
        }
        PolicyTier {
            capacity,
            eviction,
            trigger,
            policy,
            resident: vec![false; reserve],
            len: 0,
            counts: PolicyCounts::default(),
            victims: Vec::new(),
            batch: Vec::new(),
        }
    }

    /// The capacity in keys; `None` for unbounded.
    pub fn capacity(&self) -> Option<usize> {
        self.capacity
    }

    /// The policy's name on the command line.
    pub fn eviction(&self) -> Eviction {
        self.eviction
    }

    /// The trigger, if the tier is not at strict capacity.
    pub fn trigger(&self) -> Option<Trigger> {
        self.trigger
    }

    /// The policy (`noop` for an unbounded tier: see [`new`](PolicyTier::new)).
    pub fn policy(&self) -> &dyn EvictionPolicy {
        self.policy.as_ref()
    }

    /// The number of keys held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// What the tier counted so far.
    pub fn counts(&self) -> PolicyCounts {
        self.counts
    }

    /// Whether `key` is held.
    #[inline]
    pub fn contains(&self, key: u32) -> bool {
        self.resident.get(key as usize).copied().unwrap_or(false)
    }

    /// The heap bytes held: a byte a key for residence, the policy's own
    /// arrays, the reused buffers.
    pub fn memory_bytes(&self) -> usize {
        let buffers = self.victims.capacity() + self.batch.capacity();
        self.resident.capacity() + self.policy.memory_bytes() + buffers * 4
    }

    fn has_room(&self) -> bool {
        self.capacity.is_none_or(|capacity| self.len < capacity)
    }

    fn admit(&mut self, key: u32) {
        let index = key as usize;
        if index >= self.resident.len() {
            self.grow_resident(index);
        }
        self.resident[index] = true;
        self.len += 1;
        self.counts.peak = self.counts.peak.max(self.len);
    }

    /// Room for key `index` (a tier not reserved for its trace's keys).
    #[cold]
    fn grow_resident(&mut self, index: usize) {
        let len = (index + 1).max(self.resident.len() + self.resident.len() / 2);
        self.resident.resize(len, false);
    }

    /// Removes the keys in `self.victims` from the tier and the policy.
    fn remove_victims(&mut self) {
        for &key in &self.victims {
            // A policy names only keys it tracks, and it tracks only keys
            // held (created on admission, removed here).
            debug_assert!(self.resident[key as usize], "victim {key} is not held");
            self.resident[key as usize] = false;
        }
        self.len -= self.victims.len();
        self.counts.evictions += self.victims.len() as u64;
        // (ARC logs no released ghosts here: see `new_policy`.)
        self.policy.on_removed(&self.victims);
    }

    /// Strict capacity: a touch of `key`, as a strict tier's (see the
    /// module's doc).
    pub fn touch(&mut self, key: u32) {
        if self.contains(key) {
            self.policy.on_touched(&[key]);
            return;
        }
        if self.capacity == Some(0) {
            // Held for no time at all, as in a strict tier.
            self.counts.evictions += 1;
            return;
        }
        if !self.has_room() {
            self.victims.clear();
            self.policy.victims(ONE_KEY, Eligible::All, &mut self.victims);
            if self.victims.is_empty() {
                self.counts.dropped_full += 1;
                return;
            }
            self.remove_victims();
        }
        self.admit(key);
        self.policy.on_created(&[key]);
    }

    /// One of LMCache's checks: if the trigger fires at the tier's usage,
    /// evicts its ratio of the policy's keys (every key is eligible:
    /// between requests nothing is locked). Returns whether it fired; a
    /// tier at strict capacity never fires.
    pub fn check(&mut self) -> bool {
        let (Some(trigger), Some(capacity)) = (self.trigger, self.capacity) else { return false };
        if !trigger.fires(self.len, capacity) {
            return false;
        }
        self.victims.clear();
        self.policy.victims(trigger.ratio, Eligible::All, &mut self.victims);
        self.remove_victims();
        self.counts.checks_fired += 1;
        self.counts.evicted_by_checks += self.victims.len() as u64;
        true
    }

    /// Triggered: reports the held keys among `keys` *touched*, in one
    /// batch, in order.
    pub fn touch_batch(&mut self, keys: impl IntoIterator<Item = u32>) {
        self.batch.clear();
        for key in keys {
            if self.contains(key) {
                self.batch.push(key);
            }
        }
        if !self.batch.is_empty() {
            self.policy.on_touched(&self.batch);
        }
    }

    /// Triggered: writes `keys`, in order: each key not held is admitted
    /// while there is room, else dropped and counted; a held key is
    /// written again if `rewrite` (an adapter's store of a key it has:
    /// LMCache's bridge reports it created again), else skipped. The keys
    /// admitted or written again are reported *created*, in one batch.
    pub fn write_batch(&mut self, keys: impl IntoIterator<Item = u32>, rewrite: bool) {
        self.batch.clear();
        // The count and the limit in locals: the loop is the replay's
        // hottest under a trigger.
        let limit = self.capacity.unwrap_or(usize::MAX);
        let mut len = self.len;
        for key in keys {
            let index = key as usize;
            if index >= self.resident.len() {
                self.grow_resident(index);
            }
            if self.resident[index] {
                if rewrite {
                    self.batch.push(key);
                }
            } else if len < limit {
                self.resident[index] = true;
                len += 1;
                self.batch.push(key);
            } else {
                self.counts.dropped_full += 1;
            }
        }
        // A write only adds keys: its end is its peak.
        self.len = len;
        self.counts.peak = self.counts.peak.max(len);
        if !self.batch.is_empty() {
            self.policy.on_created(&self.batch);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_capacity_evicts_one_victim_at_a_time() {
        // LMCache's LRU through one-key batches is plain LRU.
        let mut tier = PolicyTier::new(Some(3), Eviction::Lru, None, 0);
        for key in [1, 2, 3, 1, 4] {
            tier.touch(key);
        }
        assert!(tier.contains(1) && tier.contains(3) && tier.contains(4) && !tier.contains(2));
        assert_eq!(tier.counts(), PolicyCounts { evictions: 1, peak: 3, ..PolicyCounts::default() });
        assert!(!tier.check(), "no trigger, no check");
    }

    #[test]
    fn noop_fills_then_drops() {
        let mut tier = PolicyTier::new(Some(2), Eviction::Noop, None, 8);
        for key in [1, 2, 3, 1, 4] {
            tier.touch(key);
        }
        assert_eq!((tier.len(), tier.counts().dropped_full, tier.counts().evictions), (2, 2, 0));
        let mut zero = PolicyTier::new(Some(0), Eviction::Noop, None, 8);
        zero.touch(1);
        assert_eq!((zero.len(), zero.counts().evictions), (0, 1));
    }

    #[test]
    fn a_write_drops_what_does_not_fit_and_rewrites_only_when_asked() {
        let mut tier = PolicyTier::new(Some(3), Eviction::Fifo, Some(Trigger::LMCACHE_DEFAULT), 0);
        tier.write_batch([7, 8], false);
        tier.write_batch([8, 9, 10, 11], false);
        assert_eq!((tier.len(), tier.counts().dropped_full, tier.policy().num_tracked()), (3, 2, 3));
        tier.write_batch([9], true);
        assert!(tier.check());
        // FIFO: 7 first; int(3 × 0.2) = 0, so one key.
        assert!(!tier.contains(7) && tier.contains(8));
        assert_eq!(tier.counts().evicted_by_checks, 1);
        // 2 of 3: 0.67 < 0.8.
        assert!(!tier.check());
        tier.touch_batch([8, 100]);
        assert_eq!(tier.counts().checks_fired, 1);
    }

    #[test]
    fn memory_counts_the_policy() {
        let tier = PolicyTier::new(Some(10), Eviction::Lru, None, 1_000);
        // A byte a key, and LMCache's LRU's 8 bytes a slot.
        assert!(tier.memory_bytes() >= 1_000 + 8 * 1_000, "{}", tier.memory_bytes());
    }
}
