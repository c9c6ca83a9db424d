//! [`ReplayTier`]: a replay's tier, strict ([`Tier`]) or policy-driven
//! ([`PolicyTier`]), and [`HoldsKeys`], what the [`Planner`](crate::Planner)
//! looks keys up in.

use bitmap_core::Bitmap;

use crate::policy_tier::{PolicyCounts, PolicyTier};
use crate::tier::{Eviction, Tier};
use crate::trigger::Trigger;

/// A tier the planner can look keys up in.
pub trait HoldsKeys {
    /// Whether `key` is held.
    fn contains(&self, key: u32) -> bool;

    /// Sets bit `i` of `out` for each `keys[i]` held whose bit in `skip`
    /// (if given) is clear: the planner's lookup of one tier. A tier of
    /// several kinds overrides it to pick its kind once, not per key.
    #[inline]
    fn mark_held(&self, keys: &[u32], skip: Option<&Bitmap>, out: &mut Bitmap) {
        mark_held_in(self, keys, skip, out);
    }
}

/// The lookup loop of [`HoldsKeys::mark_held`], for one kind of tier.
#[inline]
fn mark_held_in<T: HoldsKeys + ?Sized>(tier: &T, keys: &[u32], skip: Option<&Bitmap>, out: &mut Bitmap) {
    match skip {
        None => {
            for (i, &key) in keys.iter().enumerate() {
                if tier.contains(key) {
                    out.set(i);
                }
            }
        }
        Some(skip) => {
            for (i, &key) in keys.iter().enumerate() {
                if !skip.test(i) && tier.contains(key) {
                    out.set(i);
                }
            }
        }
    }
}

impl HoldsKeys for Tier {
    #[inline]
    fn contains(&self, key: u32) -> bool {
        Tier::contains(self, key)
    }
}

impl HoldsKeys for PolicyTier {
    #[inline]
    fn contains(&self, key: u32) -> bool {
        PolicyTier::contains(self, key)
    }
}

/// One tier of a [`Replayer`](crate::Replayer): a strict [`Tier`] for
/// `lru`, `fifo` and `lfu` at strict capacity (today's replay, unchanged),
/// else a [`PolicyTier`].
#[derive(Debug)]
pub enum ReplayTier {
    /// The replay's own list orders at strict capacity.
    Strict(Tier),
    /// A `tier-state` policy, at strict capacity or under a trigger.
    Policy(PolicyTier),
}

impl ReplayTier {
    /// The tier a replay of `capacity` keys with `eviction` and `trigger`
    /// needs, reserved for keys `0..reserve`.
    pub fn new(capacity: Option<usize>, eviction: Eviction, trigger: Option<Trigger>, reserve: usize) -> ReplayTier {
        if trigger.is_none() && eviction.is_list_order() {
            ReplayTier::Strict(Tier::with_reserve(capacity, eviction, reserve))
        } else {
            ReplayTier::Policy(PolicyTier::new(capacity, eviction, trigger, reserve))
        }
    }

    /// The capacity in keys; `None` for unbounded.
    pub fn capacity(&self) -> Option<usize> {
        match self {
            ReplayTier::Strict(tier) => tier.capacity(),
            ReplayTier::Policy(tier) => tier.capacity(),
        }
    }

    /// The number of keys held.
    pub fn len(&self) -> usize {
        match self {
            ReplayTier::Strict(tier) => tier.len(),
            ReplayTier::Policy(tier) => tier.len(),
        }
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of keys evicted so far.
    pub fn evictions(&self) -> u64 {
        self.counts().evictions
    }

    /// Its counts (a strict tier fires no checks and drops nothing).
    pub fn counts(&self) -> PolicyCounts {
        match self {
            ReplayTier::Strict(tier) => {
                PolicyCounts { evictions: tier.evictions(), peak: tier.peak_len(), ..PolicyCounts::default() }
            }
            ReplayTier::Policy(tier) => tier.counts(),
        }
    }

    /// The trigger, if any.
    pub fn trigger(&self) -> Option<Trigger> {
        match self {
            ReplayTier::Strict(_) => None,
            ReplayTier::Policy(tier) => tier.trigger(),
        }
    }

    /// The heap bytes held (the policy's included).
    pub fn memory_bytes(&self) -> usize {
        match self {
            ReplayTier::Strict(tier) => tier.memory_bytes(),
            ReplayTier::Policy(tier) => tier.memory_bytes(),
        }
    }

    /// Strict capacity: touches each key in order.
    #[inline]
    pub fn touch_each(&mut self, keys: impl IntoIterator<Item = u32>) {
        match self {
            ReplayTier::Strict(tier) => keys.into_iter().for_each(|key| tier.touch(key)),
            ReplayTier::Policy(tier) => keys.into_iter().for_each(|key| tier.touch(key)),
        }
    }

    /// One of LMCache's checks (never fires without a trigger).
    pub fn check(&mut self) -> bool {
        match self {
            ReplayTier::Strict(_) => false,
            ReplayTier::Policy(tier) => tier.check(),
        }
    }
}

impl HoldsKeys for ReplayTier {
    #[inline]
    fn contains(&self, key: u32) -> bool {
        match self {
            ReplayTier::Strict(tier) => tier.contains(key),
            ReplayTier::Policy(tier) => tier.contains(key),
        }
    }

    #[inline]
    fn mark_held(&self, keys: &[u32], skip: Option<&Bitmap>, out: &mut Bitmap) {
        match self {
            ReplayTier::Strict(tier) => mark_held_in(tier, keys, skip, out),
            ReplayTier::Policy(tier) => mark_held_in(tier, keys, skip, out),
        }
    }
}
