//! [`ListPolicy`]: the replay's own FIFO and LFU orders as a `tier-state`
//! [`EvictionPolicy`], so that LMCache's timed trigger can replay them too.
//!
//! They are a strict [`Tier`] without a capacity (it never evicts on its
//! own): *created* inserts an unknown key or (LFU) counts a known one
//! again, *touched* does the same for tracked keys only, *removed* drops,
//! and the victims are the tier's eviction order, oldest first. A batch is
//! walked in its order (these are not LMCache's classes, which have their
//! own batch orders), so a request's first block is the first to go, as in
//! the strict replay.

use tier_state::{Eligible, EvictionPolicy, target_count};

use crate::tier::{Eviction, Tier};

/// FIFO or LFU over slots, 20 bytes a slot (see [`Tier`]).
///
/// ```
/// use kv_replay::{Eviction, ListPolicy};
/// use tier_state::{Eligible, EvictionPolicy};
///
/// let mut lfu = ListPolicy::new(Eviction::Lfu);
/// lfu.on_created(&[0, 1, 2]);
/// lfu.on_touched(&[0, 2, 9]); // 9 is not tracked: ignored
/// let mut victims = Vec::new();
/// lfu.victims(0.5, Eligible::All, &mut victims); // int(3 × 0.5) = 1
/// assert_eq!(victims, [1]);
/// ```
#[derive(Clone, Debug)]
pub struct ListPolicy {
    order: Tier,
}

impl ListPolicy {
    /// An empty policy keeping `eviction`'s order.
    ///
    /// # Panics
    ///
    /// Unless `eviction` is [`Fifo`](Eviction::Fifo) or
    /// [`Lfu`](Eviction::Lfu).
    pub fn new(eviction: Eviction) -> ListPolicy {
        assert!(matches!(eviction, Eviction::Fifo | Eviction::Lfu), "a list policy is fifo or lfu");
        ListPolicy { order: Tier::new(None, eviction) }
    }
}

impl EvictionPolicy for ListPolicy {
    fn name(&self) -> &'static str {
        if self.order.eviction() == Eviction::Fifo { "FIFO" } else { "LFU" }
    }

    fn on_created(&mut self, slots: &[u32]) {
        slots.iter().for_each(|&slot| self.order.touch(slot));
    }

    fn on_touched(&mut self, slots: &[u32]) {
        for &slot in slots {
            if self.order.contains(slot) {
                self.order.touch(slot);
            }
        }
    }

    fn on_removed(&mut self, slots: &[u32]) {
        for &slot in slots {
            self.order.remove(slot);
        }
    }

    fn victims(&mut self, ratio: f64, mut eligible: Eligible<'_>, out: &mut Vec<u32>) {
        let target = target_count(self.order.len(), ratio);
        out.extend(self.order.keys_oldest_first().filter(|&slot| eligible.test(slot)).take(target));
    }

    fn num_tracked(&self) -> usize {
        self.order.len()
    }

    fn is_tracked(&self, slot: u32) -> bool {
        self.order.contains(slot)
    }

    fn clear(&mut self) {
        self.order = Tier::new(None, self.order.eviction());
    }

    fn reserve_slots(&mut self, slots: usize) {
        if self.order.is_empty() {
            // A node for every slot: the tier may track them all.
            self.order = Tier::with_reserve(None, self.order.eviction(), slots);
        }
    }

    fn memory_bytes(&self) -> usize {
        self.order.memory_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn victims(policy: &mut ListPolicy, ratio: f64) -> Vec<u32> {
        let mut out = Vec::new();
        policy.victims(ratio, Eligible::All, &mut out);
        out
    }

    #[test]
    fn fifo_keeps_insertion_order_through_touches() {
        let mut fifo = ListPolicy::new(Eviction::Fifo);
        fifo.on_created(&[5, 6, 7]);
        fifo.on_touched(&[5]);
        fifo.on_created(&[5, 8]); // 5 again: no change
        assert_eq!(victims(&mut fifo, 0.5), [5, 6]);
        // Victims stay tracked until removed.
        assert_eq!(victims(&mut fifo, 0.5), [5, 6]);
        fifo.on_removed(&[5, 99]);
        assert_eq!((fifo.num_tracked(), fifo.is_tracked(5), fifo.is_tracked(6)), (3, false, true));
        let mut not_six = |slot: u32| slot != 6;
        let mut out = Vec::new();
        fifo.victims(0.4, Eligible::Predicate(&mut not_six), &mut out);
        assert_eq!(out, [7]);
    }

    #[test]
    fn lfu_counts_created_again_and_touched() {
        let mut lfu = ListPolicy::new(Eviction::Lfu);
        lfu.on_created(&[1, 2, 3]);
        lfu.on_created(&[1]);
        lfu.on_touched(&[1, 2]);
        // 3 once, 2 twice, 1 three times.
        assert_eq!(victims(&mut lfu, 1.0), [3, 2, 1]);
        assert_eq!(lfu.name(), "LFU");
        lfu.clear();
        assert_eq!(lfu.num_tracked(), 0);
    }
}
