//! [`Tier`]: one cache level of the replay (L1 or an L2 adapter), a set of
//! keys with a capacity and an eviction order.
//!
//! # What an entry is
//!
//! One entry per distinct key held:
//!
//! - a [`Node`] in a `Vec`: the key (8 bytes) and the slots of its
//!   neighbours in the recency list (4 + 4 bytes), 16 bytes;
//! - a bucket of the hash index: the node's slot (4 bytes; the key is read
//!   from the node, so it is not stored twice) and hashbrown's control
//!   byte.
//!
//! A tier of finite capacity reserves its nodes once (16 bytes an entry)
//! and an index with room for twice its keys, so that the tombstones of its
//! churn are cleaned in place rather than by growing: at most 4.6 buckets a
//! key, 23 bytes. An unbounded tier grows its nodes by half (at most 24
//! bytes an entry) and its index by doubling (at most 16/7 buckets a key,
//! 11.4 bytes). So at most 39 bytes an entry either way;
//! [`Tier::memory_bytes`] gives the figure for a tier as it stands, and the
//! replay's report prints it.
//!
//! The list is index-linked rather than a `LinkedList` of boxes: nodes sit
//! contiguously, an eviction frees a node that the insertion which caused
//! it reuses at once, so the vector never has holes and needs no free list.

use core::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// The end of the recency list.
const NIL: u32 = u32::MAX;

/// The hash of a key: FxHash, one multiply and a rotation, several times
/// faster than SipHash on `u64` keys (a replay hashes every key 4 to 6
/// times; nothing untrusted reaches a long-lived table, so HashDoS is not a
/// concern).
#[inline]
fn hash(key: u64) -> u64 {
    FxBuildHasher.hash_one(key)
}

/// How a full tier picks the key to drop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Eviction {
    /// Least recently used: a touch moves a key to the most recent end.
    #[default]
    Lru,
    /// First in, first out: a touch of a held key changes nothing; the key
    /// inserted longest ago goes first.
    Fifo,
}

impl Eviction {
    /// The flag's spelling: `lru`, `fifo`.
    pub const fn name(self) -> &'static str {
        match self {
            Eviction::Lru => "lru",
            Eviction::Fifo => "fifo",
        }
    }

    /// The policy named `name` (`lru`, `fifo`), or `None`.
    ///
    /// ```
    /// use kv_replay::Eviction;
    /// assert_eq!(Eviction::from_name("fifo"), Some(Eviction::Fifo));
    /// assert_eq!(Eviction::from_name("lfu"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Eviction> {
        match name {
            "lru" => Some(Eviction::Lru),
            "fifo" => Some(Eviction::Fifo),
            _ => None,
        }
    }
}

/// A key's node in the recency list.
#[derive(Clone, Copy, Debug)]
struct Node {
    key: u64,
    /// Towards the most recent end.
    newer: u32,
    /// Towards the least recent end.
    older: u32,
}

/// A cache level: at most `capacity` keys, evicting in its [`Eviction`]
/// order.
///
/// ```
/// use kv_replay::{Eviction, Tier};
///
/// let mut tier = Tier::new(Some(2), Eviction::Lru);
/// for key in [1, 2, 1, 3] {
///     tier.touch(key);
/// }
/// assert!(tier.contains(1) && tier.contains(3) && !tier.contains(2)); // 2 was least recent
/// assert_eq!((tier.len(), tier.evictions()), (2, 1));
/// ```
#[derive(Clone, Debug)]
pub struct Tier {
    capacity: Option<usize>,
    eviction: Eviction,
    nodes: Vec<Node>,
    /// Node slots, found by their key's hash and compared by the node's
    /// key.
    index: HashTable<u32>,
    newest: u32,
    oldest: u32,
    evictions: u64,
}

impl Tier {
    /// An empty tier holding at most `capacity` keys (`None`: unbounded).
    ///
    /// # Panics
    ///
    /// If `capacity` is `u32::MAX` keys or more: nodes are indexed by
    /// `u32` to keep an entry at 16 bytes.
    pub fn new(capacity: Option<usize>, eviction: Eviction) -> Tier {
        Tier::with_reserve(capacity, eviction, capacity.unwrap_or(0))
    }

    /// [`new`](Tier::new), reserving room for `reserve` keys (at most the
    /// capacity): a replay that knows how many distinct keys its trace has
    /// reserves that many and never grows the tier.
    pub fn with_reserve(capacity: Option<usize>, eviction: Eviction, reserve: usize) -> Tier {
        assert!(capacity.is_none_or(|capacity| capacity < NIL as usize), "a tier holds fewer than 2^32 - 1 keys");
        let reserve = capacity.map_or(reserve, |capacity| reserve.min(capacity));
        // A full tier's churn leaves tombstones; hashbrown cleans them in
        // place only while the table is at most half full, and would
        // otherwise double it (an allocation mid-replay). Room for twice a
        // full tier's keys keeps it in place.
        let full = capacity.is_some_and(|capacity| reserve == capacity);
        let index = HashTable::with_capacity(if full { 2 * reserve } else { reserve });
        Tier { capacity, eviction, nodes: Vec::with_capacity(reserve), index, newest: NIL, oldest: NIL, evictions: 0 }
    }

    /// The capacity in keys; `None` for unbounded.
    pub fn capacity(&self) -> Option<usize> {
        self.capacity
    }

    /// The eviction order.
    pub fn eviction(&self) -> Eviction {
        self.eviction
    }

    /// The number of keys held.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The number of keys evicted so far.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    /// Whether `key` is held.
    #[inline]
    pub fn contains(&self, key: u64) -> bool {
        self.find(key).is_some()
    }

    /// The slot of `key` if it is held: a hint for
    /// [`touch_hinted`](Tier::touch_hinted), which saves a second hash
    /// lookup when the same request looks a key up and then touches it.
    #[inline]
    pub fn find(&self, key: u64) -> Option<u32> {
        let nodes = &self.nodes;
        self.index.find(hash(key), |&slot| nodes[slot as usize].key == key).copied()
    }

    /// Inserts `key` as the most recent, or (LRU) moves it there if held;
    /// then evicts while over capacity.
    #[inline]
    pub fn touch(&mut self, key: u64) {
        match self.find(key) {
            Some(slot) => self.refresh(slot),
            None => self.insert(key),
        }
    }

    /// [`touch`](Tier::touch) with the slot [`find`](Tier::find) gave for
    /// `key` earlier (or `None`). The hint is checked: if the slot has been
    /// given to another key since (an eviction in between), it falls back
    /// to the hash lookup, so a stale hint is never wrong, only slower.
    #[inline]
    pub fn touch_hinted(&mut self, key: u64, hint: Option<u32>) {
        match hint {
            // Slots are never left empty (an eviction's slot is reused by
            // the insertion that caused it), so a slot holding `key` is
            // `key`'s node.
            Some(slot) if self.nodes.get(slot as usize).is_some_and(|node| node.key == key) => self.refresh(slot),
            _ => self.touch(key),
        }
    }

    /// The keys held, from the most recent (LRU) or the newest inserted
    /// (FIFO) to the next to be evicted: for tests and debugging.
    pub fn keys_newest_first(&self) -> Vec<u64> {
        let mut keys = Vec::with_capacity(self.len());
        let mut slot = self.newest;
        while slot != NIL {
            let node = self.nodes[slot as usize];
            keys.push(node.key);
            slot = node.older;
        }
        keys
    }

    /// An estimate of the heap bytes the tier holds: its node vector and
    /// hashbrown's table (buckets of 16 bytes and a control byte each, for
    /// the next power of two at or above 8/7 of the map's capacity).
    pub fn memory_bytes(&self) -> usize {
        let capacity = self.index.capacity();
        // hashbrown's buckets: a power of two, 8/7 of the capacity (4 for
        // capacity 3, 8 for 7: tables under 8 buckets are full-sized).
        let buckets = match capacity {
            0 => 0,
            1..=3 => 4,
            4..=7 => 8,
            _ => (capacity * 8 / 7).next_power_of_two(),
        };
        self.nodes.capacity() * size_of::<Node>() + buckets * (size_of::<u32>() + 1)
    }

    fn refresh(&mut self, slot: u32) {
        if self.eviction == Eviction::Lru && slot != self.newest {
            self.unlink(slot);
            self.link_newest(slot);
        }
    }

    fn insert(&mut self, key: u64) {
        if self.capacity == Some(0) {
            // Held for no time at all: inserted and evicted at once.
            self.evictions += 1;
            return;
        }
        let slot = if self.capacity.is_some_and(|capacity| self.nodes.len() >= capacity) {
            // Full: the oldest key's node becomes the new key's.
            let slot = self.oldest;
            let old = self.nodes[slot as usize].key;
            if let Ok(entry) = self.index.find_entry(hash(old), |&other| other == slot) {
                entry.remove();
            }
            self.unlink(slot);
            self.evictions += 1;
            self.nodes[slot as usize].key = key;
            slot
        } else {
            if self.nodes.len() == self.nodes.capacity() {
                // Grow by half rather than double: keeps an unbounded
                // tier's entry within 64 bytes (see the module's doc).
                self.nodes.reserve_exact((self.nodes.len() / 2).max(16));
            }
            let slot = self.nodes.len() as u32;
            assert!(slot != NIL, "a tier holds fewer than 2^32 - 1 keys");
            self.nodes.push(Node { key, newer: NIL, older: NIL });
            slot
        };
        let nodes = &self.nodes;
        self.index.insert_unique(hash(key), slot, |&slot| hash(nodes[slot as usize].key));
        self.link_newest(slot);
    }

    fn unlink(&mut self, slot: u32) {
        let Node { newer, older, .. } = self.nodes[slot as usize];
        match newer {
            NIL => self.newest = older,
            newer => self.nodes[newer as usize].older = older,
        }
        match older {
            NIL => self.oldest = newer,
            older => self.nodes[older as usize].newer = newer,
        }
    }

    fn link_newest(&mut self, slot: u32) {
        let node = &mut self.nodes[slot as usize];
        node.newer = NIL;
        node.older = self.newest;
        match self.newest {
            NIL => self.oldest = slot,
            newest => self.nodes[newest as usize].newer = slot,
        }
        self.newest = slot;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touched(capacity: Option<usize>, eviction: Eviction, keys: &[u64]) -> Tier {
        let mut tier = Tier::new(capacity, eviction);
        for &key in keys {
            tier.touch(key);
        }
        tier
    }

    #[test]
    fn lru_moves_a_touched_key_to_the_front() {
        let tier = touched(Some(3), Eviction::Lru, &[1, 2, 3, 1, 4]);
        assert_eq!(tier.keys_newest_first(), [4, 1, 3]);
        assert_eq!(tier.evictions(), 1);
    }

    #[test]
    fn fifo_ignores_touches_of_held_keys() {
        let tier = touched(Some(3), Eviction::Fifo, &[1, 2, 3, 1, 4]);
        assert_eq!(tier.keys_newest_first(), [4, 3, 2]);
        assert_eq!(tier.evictions(), 1);
    }

    #[test]
    fn capacity_zero_holds_nothing_and_unbounded_evicts_nothing() {
        let tier = touched(Some(0), Eviction::Lru, &[1, 2, 1]);
        assert_eq!((tier.len(), tier.evictions()), (0, 3));
        let tier = touched(None, Eviction::Lru, &(0..1000).collect::<Vec<_>>());
        assert_eq!((tier.len(), tier.evictions()), (1000, 0));
        assert_eq!(tier.keys_newest_first()[..2], [999, 998]);
    }

    #[test]
    fn a_stale_hint_falls_back_to_the_lookup() {
        let mut tier = touched(Some(2), Eviction::Lru, &[1, 2]);
        let hint = tier.find(1);
        tier.touch(3); // evicts 1; its slot now holds 3
        tier.touch_hinted(1, hint); // 1 is back, 2 evicted
        assert_eq!(tier.keys_newest_first(), [1, 3]);
        let hint = tier.find(3);
        tier.touch_hinted(3, hint);
        assert_eq!(tier.keys_newest_first(), [3, 1]);
    }

    #[test]
    fn an_entry_is_within_64_bytes() {
        assert_eq!(size_of::<Node>(), 16);
        for count in [1_000u64, 100_000, 300_000] {
            let tier = touched(None, Eviction::Lru, &(0..count).collect::<Vec<_>>());
            let per_entry = tier.memory_bytes() as f64 / count as f64;
            assert!(per_entry <= 39.0, "{count} keys: {per_entry} bytes each");
            // A full tier under churn: four times its capacity in distinct keys.
            let bounded = touched(Some(count as usize), Eviction::Lru, &(0..4 * count).collect::<Vec<_>>());
            let per_entry = bounded.memory_bytes() as f64 / count as f64;
            assert!(per_entry <= 39.0, "{count} keys, bounded: {per_entry} bytes each");
        }
    }
}
