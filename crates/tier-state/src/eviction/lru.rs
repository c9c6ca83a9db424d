//! [`Lru`]: LMCache's LRU policy (`eviction_policy/lru.py`) over slots, as
//! an intrusive doubly linked list in two arrays indexed by slot.

use crate::eviction::policy::{Eligible, EvictionPolicy, target_count};

/// `prev` of an untracked slot.
const UNTRACKED: u32 = u32::MAX;
/// The end of the list.
const NIL: u32 = u32::MAX - 1;

/// LMCache's LRU, oldest first, 8 bytes a slot:
///
/// - *created* walks the batch in reverse, inserting unknown slots at the
///   recent end and moving known ones there, so the batch's first key ends
///   as the most recent;
/// - *touched* does the same for tracked slots only;
/// - *removed* unlinks;
/// - victims are taken oldest first, skipping the ineligible.
///
/// ```
/// use tier_state::{Eligible, EvictionPolicy, Lru};
/// let mut lru = Lru::new();
/// lru.on_created(&[0, 1, 2]); // recency: 2 (oldest), 1, 0
/// lru.on_touched(&[2]);       // 1, 0, 2
/// let mut out = Vec::new();
/// lru.victims(0.67, Eligible::All, &mut out); // int(3 × 0.67) = 2
/// assert_eq!(out, [1, 0]);
/// ```
#[derive(Clone, Debug)]
pub struct Lru {
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Oldest.
    head: u32,
    /// Most recent.
    tail: u32,
    tracked: usize,
}

impl Default for Lru {
    fn default() -> Lru {
        Lru::new()
    }
}

impl Lru {
    /// An empty LRU.
    pub const fn new() -> Lru {
        Lru { prev: Vec::new(), next: Vec::new(), head: NIL, tail: NIL, tracked: 0 }
    }

    /// Slots from oldest to most recent (allocates: for tests).
    pub fn order(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.tracked);
        let mut at = self.head;
        while at != NIL {
            out.push(at);
            at = self.next[at as usize];
        }
        out
    }

    /// The oldest slot, or `None` when empty (for policies built on this
    /// order, such as [`ChunkLru`](crate::ChunkLru)).
    #[inline]
    pub(crate) fn oldest(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }

    /// The slot after tracked `slot`, toward the most recent.
    #[inline]
    pub(crate) fn newer(&self, slot: u32) -> Option<u32> {
        let next = self.next[slot as usize];
        (next != NIL).then_some(next)
    }

    /// Slots `0..slots` allocated and initialised: later events never grow.
    pub(crate) fn reserve(&mut self, slots: usize) {
        if self.prev.len() < slots {
            self.prev.reserve_exact(slots - self.prev.len());
            self.next.reserve_exact(slots - self.next.len());
            self.prev.resize(slots, UNTRACKED);
            self.next.resize(slots, NIL);
        }
    }

    #[inline]
    fn grow_to(&mut self, slot: u32) {
        let need = slot as usize + 1;
        if self.prev.len() < need {
            self.prev.resize(need, UNTRACKED);
            self.next.resize(need, NIL);
        }
    }

    #[inline]
    fn tracks(&self, slot: u32) -> bool {
        self.prev.get(slot as usize).is_some_and(|&p| p != UNTRACKED)
    }

    #[inline]
    fn unlink(&mut self, slot: u32) {
        let (p, n) = (self.prev[slot as usize], self.next[slot as usize]);
        if p == NIL {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    #[inline]
    fn push_recent(&mut self, slot: u32) {
        self.prev[slot as usize] = self.tail;
        self.next[slot as usize] = NIL;
        if self.tail == NIL {
            self.head = slot;
        } else {
            self.next[self.tail as usize] = slot;
        }
        self.tail = slot;
    }

    #[inline]
    fn refresh(&mut self, slot: u32) {
        if self.tail != slot {
            self.unlink(slot);
            self.push_recent(slot);
        }
    }
}

impl EvictionPolicy for Lru {
    fn name(&self) -> &'static str {
        "LRU"
    }

    fn on_created(&mut self, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            self.grow_to(slot);
            if self.tracks(slot) {
                self.refresh(slot);
            } else {
                self.push_recent(slot);
                self.tracked += 1;
            }
        }
    }

    fn on_touched(&mut self, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            if self.tracks(slot) {
                self.refresh(slot);
            }
        }
    }

    fn on_removed(&mut self, slots: &[u32]) {
        for &slot in slots {
            if self.tracks(slot) {
                self.unlink(slot);
                self.prev[slot as usize] = UNTRACKED;
                self.tracked -= 1;
            }
        }
    }

    fn victims(&mut self, ratio: f64, mut eligible: Eligible<'_>, out: &mut Vec<u32>) {
        let target = target_count(self.tracked, ratio);
        let mut taken = 0;
        let mut at = self.head;
        while at != NIL && taken < target {
            if eligible.test(at) {
                out.push(at);
                taken += 1;
            }
            at = self.next[at as usize];
        }
    }

    fn num_tracked(&self) -> usize {
        self.tracked
    }

    fn is_tracked(&self, slot: u32) -> bool {
        self.tracks(slot)
    }

    fn clear(&mut self) {
        self.prev.clear();
        self.next.clear();
        self.head = NIL;
        self.tail = NIL;
        self.tracked = 0;
    }

    fn memory_bytes(&self) -> usize {
        (self.prev.capacity() + self.next.capacity()) * 4
    }
}
