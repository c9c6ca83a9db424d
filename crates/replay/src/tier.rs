//! [`Tier`]: one cache level of the replay (L1 or an L2 adapter), a set of
//! keys with a capacity and an eviction order.
//!
//! # What an entry is
//!
//! A tier's keys are a [`Trace`](crate::Trace)'s dense ids (`0..distinct`,
//! interned as the trace is read), so its index is a plain vector:
//!
//! - a slot per distinct key of the trace, `slot_of[key]`: the key's node,
//!   or none (4 bytes);
//! - a [`Node`] per key held: the key, the slots of its neighbours in the
//!   eviction list and its touch count for LFU (4 × 4 bytes, 16).
//!
//! So 20 bytes per distinct key per tier when the replay reserves both for
//! its trace, at most 30 when they grow (by half) as keys come; [`Tier::memory_bytes`] gives the figure
//! for a tier as it stands, and the replay's report prints it. A lookup is
//! one load from `slot_of` and one from the node, with no hashing: the
//! replay does 4 to 6 of them per block reference.
//!
//! The list is index-linked rather than a `LinkedList` of boxes: nodes sit
//! contiguously, an eviction frees a node that the insertion which caused
//! it reuses at once, so the vector never has holes and needs no free list.

/// The end of the recency list.
const NIL: u32 = u32::MAX;

/// How a tier picks the keys to drop.
///
/// `Lru`, `Fifo` and `Lfu` are the replay's own orders, which a strict
/// [`Tier`] keeps in one index-linked list. The others are LMCache's
/// policies from the `tier-state` crate, replayed by a
/// [`PolicyTier`](crate::PolicyTier); so are all six under LMCache's timed
/// trigger ([`Trigger`](crate::Trigger)), where `Lru` means LMCache's LRU
/// (`docs/REPLAY.md` says how the two LRUs differ).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Eviction {
    /// Least recently used: a touch moves a key to the most recent end.
    #[default]
    Lru,
    /// First in, first out: a touch of a held key changes nothing; the key
    /// inserted longest ago goes first.
    Fifo,
    /// Least frequently used: the key touched the fewest times while held
    /// goes first, the least recently touched among those. A new key comes
    /// in with one touch, so it is the first to go if every other key has
    /// more (LFU's known weakness, kept: it is what users compare).
    Lfu,
    /// LMCache's S3-FIFO (`eviction_policy/s3fifo.py`): a small and a main
    /// FIFO and a ghost set.
    S3Fifo,
    /// LMCache's ARC (`eviction_policy/arc.py`): T1, T2, their ghosts and
    /// an adaptive target.
    Arc,
    /// LMCache's `noop`: never evicts, so a full tier drops what comes.
    Noop,
}

impl Eviction {
    /// Every policy, in the order the flag's help lists them.
    pub const ALL: [Eviction; 6] =
        [Eviction::Lru, Eviction::Fifo, Eviction::Lfu, Eviction::S3Fifo, Eviction::Arc, Eviction::Noop];

    /// The flag's spelling: `lru`, `fifo`, `lfu`, `s3fifo`, `arc`, `noop`.
    pub const fn name(self) -> &'static str {
        match self {
            Eviction::Lru => "lru",
            Eviction::Fifo => "fifo",
            Eviction::Lfu => "lfu",
            Eviction::S3Fifo => "s3fifo",
            Eviction::Arc => "arc",
            Eviction::Noop => "noop",
        }
    }

    /// The policy named `name` (as [`name`](Eviction::name) spells it), or
    /// `None`.
    ///
    /// ```
    /// use kv_replay::Eviction;
    /// assert_eq!(Eviction::from_name("fifo"), Some(Eviction::Fifo));
    /// assert_eq!(Eviction::from_name("arc"), Some(Eviction::Arc));
    /// assert_eq!(Eviction::from_name("ARC"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Eviction> {
        Eviction::ALL.into_iter().find(|eviction| eviction.name() == name)
    }

    /// The names, comma-separated, for messages: `lru, fifo, …`.
    pub fn names() -> String {
        Eviction::ALL.map(Eviction::name).join(", ")
    }

    /// Whether a strict [`Tier`] keeps this order itself (`lru`, `fifo`,
    /// `lfu`); the others need a [`PolicyTier`](crate::PolicyTier).
    pub const fn is_list_order(self) -> bool {
        matches!(self, Eviction::Lru | Eviction::Fifo | Eviction::Lfu)
    }
}

/// A key's node in the recency list.
#[derive(Clone, Copy, Debug)]
struct Node {
    key: u32,
    /// Towards the most recent end.
    newer: u32,
    /// Towards the least recent end.
    older: u32,
    /// Touches while held (LFU's order; 1 from the insertion).
    count: u32,
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
    /// The node of each key, `NIL` if not held; grown on demand to the
    /// largest key touched.
    slot_of: Vec<u32>,
    /// LFU: the newest node touched `f` times, for each `f` (`NIL`: none).
    /// The list is in (count, last touch) order, oldest first, so each
    /// count's nodes are contiguous and a touch moves its node just past
    /// the tail of the next count.
    tail_of: Vec<u32>,
    newest: u32,
    oldest: u32,
    evictions: u64,
    /// The most keys held at once.
    peak: usize,
}

impl Tier {
    /// The most keys a tier holds: `2^32 − 2` (nodes are indexed by `u32`,
    /// and `u32::MAX` marks the end of the list).
    pub const MAX_CAPACITY: usize = NIL as usize - 1;

    /// An empty tier holding at most `capacity` keys (`None`: unbounded).
    ///
    /// # Panics
    ///
    /// If `capacity` is `u32::MAX` keys or more: nodes are indexed by
    /// `u32` to keep an entry at 16 bytes. If `eviction` is not a
    /// [list order](Eviction::is_list_order) (a [`PolicyTier`](crate::PolicyTier)
    /// replays the others).
    pub fn new(capacity: Option<usize>, eviction: Eviction) -> Tier {
        Tier::with_reserve(capacity, eviction, capacity.unwrap_or(0))
    }

    /// [`new`](Tier::new), reserving room for keys `0..reserve` (nodes for
    /// at most the capacity): a replay that knows how many distinct keys its
    /// trace has reserves that many and never grows the tier.
    ///
    /// # Panics
    ///
    /// As [`new`](Tier::new).
    pub fn with_reserve(capacity: Option<usize>, eviction: Eviction, reserve: usize) -> Tier {
        assert!(eviction.is_list_order(), "a strict tier keeps lru, fifo or lfu, not {}", eviction.name());
        assert!(capacity.is_none_or(|capacity| capacity < NIL as usize), "a tier holds fewer than 2^32 - 1 keys");
        let nodes = capacity.map_or(reserve, |capacity| reserve.min(capacity));
        Tier {
            capacity,
            eviction,
            nodes: Vec::with_capacity(nodes),
            slot_of: vec![NIL; reserve],
            tail_of: Vec::new(),
            newest: NIL,
            oldest: NIL,
            evictions: 0,
            peak: 0,
        }
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

    /// The most keys held at once so far.
    pub fn peak_len(&self) -> usize {
        self.peak
    }

    /// Whether `key` is held.
    #[inline]
    pub fn contains(&self, key: u32) -> bool {
        self.slot_of.get(key as usize).is_some_and(|&slot| slot != NIL)
    }

    /// Inserts `key` as the most recent, or (LRU) moves it there if held;
    /// then evicts while over capacity.
    #[inline]
    pub fn touch(&mut self, key: u32) {
        match self.slot_of.get(key as usize) {
            Some(&slot) if slot != NIL => self.refresh(slot),
            _ => self.insert(key),
        }
    }

    /// Drops `key` if held (not an eviction: the hybrid model's retain mask
    /// dropping cells no later hit needs). Returns whether it was held.
    ///
    /// The last node moves into the freed slot, so nodes stay contiguous.
    pub fn remove(&mut self, key: u32) -> bool {
        let slot = match self.slot_of.get(key as usize) {
            Some(&slot) if slot != NIL => slot,
            _ => return false,
        };
        let Node { older, count, .. } = self.nodes[slot as usize];
        if self.tail(count) == slot {
            let same = older != NIL && self.nodes[older as usize].count == count;
            self.set_tail(count, if same { older } else { NIL });
        }
        self.unlink(slot);
        self.slot_of[key as usize] = NIL;
        let last = (self.nodes.len() - 1) as u32;
        if slot != last {
            let moved = self.nodes[last as usize];
            self.nodes[slot as usize] = moved;
            match moved.newer {
                NIL => self.newest = slot,
                newer => self.nodes[newer as usize].older = slot,
            }
            match moved.older {
                NIL => self.oldest = slot,
                older => self.nodes[older as usize].newer = slot,
            }
            self.slot_of[moved.key as usize] = slot;
            if self.tail(moved.count) == last {
                self.set_tail(moved.count, slot);
            }
        }
        self.nodes.pop();
        true
    }

    /// The keys held, from the most recent (LRU) or the newest inserted
    /// (FIFO) to the next to be evicted: for tests and debugging.
    pub fn keys_newest_first(&self) -> Vec<u32> {
        let mut keys = Vec::with_capacity(self.len());
        let mut slot = self.newest;
        while slot != NIL {
            let node = self.nodes[slot as usize];
            keys.push(node.key);
            slot = node.older;
        }
        keys
    }

    /// The keys held, from the next to be evicted to the most recent (the
    /// reverse of [`keys_newest_first`](Tier::keys_newest_first), without
    /// allocating).
    pub fn keys_oldest_first(&self) -> impl Iterator<Item = u32> + '_ {
        let mut slot = self.oldest;
        std::iter::from_fn(move || {
            let node = self.nodes.get(slot as usize)?;
            slot = node.newer;
            Some(node.key)
        })
    }

    /// The heap bytes the tier holds: its node vector and its key index.
    pub fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * size_of::<Node>() + self.slot_of.capacity() * size_of::<u32>()
    }

    fn refresh(&mut self, slot: u32) {
        if self.eviction == Eviction::Lfu {
            return self.bump(slot);
        }
        if self.eviction == Eviction::Lru && slot != self.newest {
            self.unlink(slot);
            self.link_newest(slot);
        }
    }

    fn insert(&mut self, key: u32) {
        if self.capacity == Some(0) {
            // Held for no time at all: inserted and evicted at once.
            self.evictions += 1;
            return;
        }
        let slot = if self.capacity.is_some_and(|capacity| self.nodes.len() >= capacity) {
            // Full: the oldest key's node becomes the new key's.
            let slot = self.oldest;
            let Node { key: old, count, .. } = self.nodes[slot as usize];
            self.slot_of[old as usize] = NIL;
            if self.tail_of.get(count as usize) == Some(&slot) {
                self.tail_of[count as usize] = NIL;
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
            self.nodes.push(Node { key, newer: NIL, older: NIL, count: 1 });
            // Only here does the tier grow (a full tier reuses a node).
            self.peak = self.peak.max(self.nodes.len());
            slot
        };
        let index = key as usize;
        if index >= self.slot_of.len() {
            // Grow by half (keys come in roughly increasing order, so
            // doubling would overshoot by more).
            let len = (index + 1).max(self.slot_of.len() + self.slot_of.len() / 2);
            self.slot_of.resize(len, NIL);
        }
        self.slot_of[index] = slot;
        self.nodes[slot as usize].count = 1;
        if self.eviction == Eviction::Lfu {
            // After the keys touched once, before all others.
            let after = self.tail(1);
            self.link_after(slot, after);
            self.set_tail(1, slot);
        } else {
            self.link_newest(slot);
        }
    }

    /// LFU: one more touch of the node at `slot`.
    fn bump(&mut self, slot: u32) {
        let Node { older, count, .. } = self.nodes[slot as usize];
        let Some(next) = count.checked_add(1) else { return };
        if self.tail(count) == slot {
            let same = older != NIL && self.nodes[older as usize].count == count;
            self.set_tail(count, if same { older } else { NIL });
        }
        self.unlink(slot);
        // Past the nodes touched `next` times; else past those still at
        // `count`; else where it was.
        let after = match (self.tail(next), self.tail(count)) {
            (NIL, NIL) => older,
            (NIL, tail) | (tail, _) => tail,
        };
        self.link_after(slot, after);
        self.nodes[slot as usize].count = next;
        self.set_tail(next, slot);
    }

    fn tail(&self, count: u32) -> u32 {
        self.tail_of.get(count as usize).copied().unwrap_or(NIL)
    }

    fn set_tail(&mut self, count: u32, slot: u32) {
        let index = count as usize;
        if index >= self.tail_of.len() {
            self.tail_of.resize(index + 1, NIL);
        }
        self.tail_of[index] = slot;
    }

    /// Links `slot` just newer than `after` (`NIL`: at the oldest end).
    fn link_after(&mut self, slot: u32, after: u32) {
        let newer = if after == NIL { self.oldest } else { self.nodes[after as usize].newer };
        let node = &mut self.nodes[slot as usize];
        node.older = after;
        node.newer = newer;
        match after {
            NIL => self.oldest = slot,
            after => self.nodes[after as usize].newer = slot,
        }
        match newer {
            NIL => self.newest = slot,
            newer => self.nodes[newer as usize].older = slot,
        }
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

    fn touched(capacity: Option<usize>, eviction: Eviction, keys: &[u32]) -> Tier {
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
        assert!(!tier.contains(2) && tier.contains(3) && !tier.contains(1_000));
    }

    #[test]
    fn fifo_ignores_touches_of_held_keys() {
        let tier = touched(Some(3), Eviction::Fifo, &[1, 2, 3, 1, 4]);
        assert_eq!(tier.keys_newest_first(), [4, 3, 2]);
        assert_eq!(tier.evictions(), 1);
    }

    #[test]
    fn lfu_evicts_the_least_touched_then_the_least_recent() {
        // 1 is touched 3 times, 2 twice, 3 once: 4 evicts 3; then 5 evicts
        // 4 (touched once, the only one); 2 and 1 stay.
        let tier = touched(Some(3), Eviction::Lfu, &[1, 2, 3, 1, 2, 1, 4, 5]);
        assert_eq!(tier.keys_newest_first(), [1, 2, 5]);
        assert_eq!(tier.evictions(), 2);
        // Ties go to the least recently touched: 1 and 2 twice each, 1 last.
        let tier = touched(Some(2), Eviction::Lfu, &[1, 2, 2, 1, 3]);
        assert_eq!(tier.keys_newest_first(), [1, 3]);
    }

    #[test]
    fn remove_keeps_the_order_of_the_rest() {
        for eviction in [Eviction::Lru, Eviction::Fifo, Eviction::Lfu] {
            let mut tier = touched(Some(4), eviction, &[1, 2, 3, 4, 2]);
            let before: Vec<u32> = tier.keys_newest_first().into_iter().filter(|&key| key != 1).collect();
            assert!(tier.remove(1) && !tier.remove(1) && !tier.remove(99));
            assert_eq!((tier.keys_newest_first(), tier.len(), tier.evictions()), (before, 3, 0), "{eviction:?}");
            // The moved node (the last one, key 4) still works: touch and evict through it.
            for key in [4, 5, 6, 7] {
                tier.touch(key);
            }
            assert_eq!(tier.len(), 4);
            assert!(tier.contains(7) && tier.contains(6));
        }
        let mut lfu = touched(Some(3), Eviction::Lfu, &[1, 1, 2, 2, 3]);
        lfu.remove(2); // a count-2 tail goes; 1 is the tail of count 2 again
        lfu.touch(4);
        lfu.touch(5); // evicts 3 or 4 (count 1), not 1
        assert!(lfu.contains(1) && lfu.contains(5));
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
    fn an_entry_is_within_30_bytes() {
        assert_eq!(size_of::<Node>(), 16);
        for count in [1_000u32, 100_000, 300_000] {
            let keys: Vec<u32> = (0..count).collect();
            let per_key = touched(None, Eviction::Lru, &keys).memory_bytes() as f64 / f64::from(count);
            assert!(per_key <= 30.0, "{count} keys: {per_key} bytes each");
            // Reserved for a trace of `count` distinct keys, a tier of a
            // tenth of them: 4 bytes a distinct key, 16 a key held.
            let mut bounded = Tier::with_reserve(Some(count as usize / 10), Eviction::Lru, count as usize);
            keys.iter().for_each(|&key| bounded.touch(key));
            assert_eq!(bounded.memory_bytes(), 4 * count as usize + 16 * (count as usize / 10));
        }
    }
}
