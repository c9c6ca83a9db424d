//! The key table: keys → dense slot ids, freed ids reused.
//!
//! hashbrown's [`HashTable<u32>`] holds only slot ids (4 bytes and one
//! control byte a bucket); the keys live in two arrays indexed by slot
//! (`hashes`, `rows`), which the tier needs anyway to name a slot's key.
//! A `HashMap<TierKey, u32>` would store each key twice (16 bytes more a
//! key) and an open-addressing table of our own would redo what hashbrown
//! (the standard library's own map) does with SIMD probing. Free slots are
//! chained through the caller's spare per-slot word (see
//! [`KeyTable::free`]), so reuse costs no memory.

use hashbrown::HashTable;

use crate::key::{TierKey, key_hash};

/// The end of the free chain.
const FREE_END: u32 = u32::MAX;

#[derive(Debug, Default)]
pub(crate) struct KeyTable {
    index: HashTable<u32>,
    hashes: Vec<u64>,
    rows: Vec<u32>,
    /// The most recently freed slot (`FREE_END` when none).
    free_head: u32,
    /// The most slots the table may ever hold: the tier's capacity (every
    /// live slot holds an object). Arrays grow up to it and no further.
    limit: usize,
}

impl KeyTable {
    pub(crate) fn new(limit: usize) -> KeyTable {
        KeyTable { index: HashTable::new(), hashes: Vec::new(), rows: Vec::new(), free_head: FREE_END, limit }
    }

    /// The slot of `key`, if it has one.
    #[inline]
    pub(crate) fn find(&self, key: TierKey) -> Option<u32> {
        let hashes = &self.hashes;
        let rows = &self.rows;
        self.index
            .find(key_hash(key.hash, key.row), |&slot| {
                hashes[slot as usize] == key.hash && rows[slot as usize] == key.row
            })
            .copied()
    }

    /// The key a slot holds (garbage for a free slot).
    #[inline]
    pub(crate) fn key(&self, slot: u32) -> TierKey {
        TierKey { hash: self.hashes[slot as usize], row: self.rows[slot as usize] }
    }

    /// Slot ids handed out so far (live and free): per-slot arrays have this length.
    #[inline]
    pub(crate) fn slot_count(&self) -> usize {
        self.hashes.len()
    }

    /// Live keys.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    /// Gives `key` (absent) a slot: a freed one if any (`next_free` reads
    /// the chain from the caller's per-slot word), else a new id. Returns
    /// the slot and whether it is new (per-slot arrays must grow by one).
    #[inline]
    pub(crate) fn insert(&mut self, key: TierKey, next_free: impl FnOnce(u32) -> u32) -> (u32, bool) {
        let (slot, fresh) = if self.free_head != FREE_END {
            let slot = self.free_head;
            self.free_head = next_free(slot);
            self.hashes[slot as usize] = key.hash;
            self.rows[slot as usize] = key.row;
            (slot, false)
        } else {
            let slot = self.hashes.len();
            if slot == self.hashes.capacity() {
                // Grow by doubling, but never past the limit: a full tier's
                // arrays are exactly its capacity long.
                let want = (slot * 2).max(64).min(self.limit.max(slot + 1));
                self.hashes.reserve_exact(want - slot);
                self.rows.reserve_exact(want - slot);
            }
            self.hashes.push(key.hash);
            self.rows.push(key.row);
            (slot as u32, true)
        };
        let hashes = &self.hashes;
        let rows = &self.rows;
        self.index
            .insert_unique(key_hash(key.hash, key.row), slot, |&s| key_hash(hashes[s as usize], rows[s as usize]));
        (slot, fresh)
    }

    /// Removes a live slot's key; returns the old head of the free chain,
    /// which the caller stores in the slot's spare word.
    #[inline]
    pub(crate) fn free(&mut self, slot: u32) -> u32 {
        let hash = key_hash(self.hashes[slot as usize], self.rows[slot as usize]);
        if let Ok(entry) = self.index.find_entry(hash, |&s| s == slot) {
            entry.remove();
        }
        let next = self.free_head;
        self.free_head = slot;
        next
    }

    /// Forgets every key and slot, keeping the buffers.
    pub(crate) fn clear(&mut self) {
        self.index.clear();
        self.hashes.clear();
        self.rows.clear();
        self.free_head = FREE_END;
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.index.allocation_size() + self.hashes.capacity() * 8 + self.rows.capacity() * 4
    }

    /// Grows the per-slot array `v` alongside the table's own arrays, by the
    /// same rule, and pushes `value`.
    #[inline]
    pub(crate) fn push_alongside<T>(&self, v: &mut Vec<T>, value: T) {
        if v.len() == v.capacity() {
            let len = v.len();
            let want = (len * 2).max(64).min(self.limit.max(len + 1));
            v.reserve_exact(want - len);
        }
        v.push(value);
    }
}
