//! The key table: keys → dense slot ids, freed ids reused.
//!
//! hashbrown's [`HashTable<u32>`] holds only slot ids (4 bytes and one
//! control byte a bucket); each slot's key lives in its [`SlotRec`], next to
//! the slot's lock words, so a lookup and the state it then reads share a
//! cache line. A `HashMap<TierKey, u32>` would store each key twice (16
//! bytes more a key), and an open-addressing table of our own would redo
//! what hashbrown (the standard library's own map) does with SIMD probing.
//! Free slots are chained through their records' `count` word, so reuse
//! costs no memory.

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;

use crate::key::{TierKey, key_hash};

/// The end of the free chain.
const FREE_END: u32 = u32::MAX;

/// One slot's words: its key, and its lock's count and expiry (see
/// `slots.rs` for what `count` and `deadline` hold in each state).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SlotRec {
    pub(crate) hash: u64,
    pub(crate) deadline: u64,
    pub(crate) row: u32,
    pub(crate) count: u32,
}

impl SlotRec {
    #[inline]
    fn is(&self, key: TierKey) -> bool {
        self.hash == key.hash && self.row == key.row
    }

    #[inline]
    fn table_hash(&self) -> u64 {
        key_hash(self.hash, self.row)
    }
}

#[derive(Debug)]
pub(crate) struct KeyTable {
    index: HashTable<u32>,
    /// The most recently freed slot (`FREE_END` when none).
    free_head: u32,
    /// The most slots the table may ever hold: the tier's capacity (every
    /// live slot holds an object). Records grow up to it and no further.
    limit: usize,
}

impl KeyTable {
    pub(crate) fn new(limit: usize) -> KeyTable {
        KeyTable { index: HashTable::new(), free_head: FREE_END, limit }
    }

    /// The slot of `key`, if it has one.
    #[inline]
    pub(crate) fn find(&self, recs: &[SlotRec], key: TierKey) -> Option<u32> {
        self.index.find(key_hash(key.hash, key.row), |&slot| recs[slot as usize].is(key)).copied()
    }

    /// The slot of `key` and its bucket in the index, for a later
    /// [`free_at`](KeyTable::free_at) without a second probe.
    #[inline]
    pub(crate) fn find_at(&self, recs: &[SlotRec], key: TierKey) -> Option<(u32, usize)> {
        let bucket = self.index.find_bucket_index(key_hash(key.hash, key.row), |&slot| recs[slot as usize].is(key))?;
        Some((*self.index.get_bucket(bucket)?, bucket))
    }

    /// The slot of `key`, inserting the key with a slot if it has none, in
    /// one probe: a freed slot if any, else a new record pushed on `recs`.
    /// Returns the slot, whether the key was inserted, and whether the slot
    /// is new (the caller's bitmaps over slots must grow by one).
    #[inline]
    pub(crate) fn find_or_insert(&mut self, recs: &mut Vec<SlotRec>, key: TierKey) -> (u32, bool, bool) {
        let hash = key_hash(key.hash, key.row);
        let entry = {
            let recs: &[SlotRec] = recs;
            self.index.entry(hash, |&slot| recs[slot as usize].is(key), |&slot| recs[slot as usize].table_hash())
        };
        let vacant = match entry {
            Entry::Occupied(occupied) => return (*occupied.get(), false, false),
            Entry::Vacant(vacant) => vacant,
        };
        let (slot, fresh) = if self.free_head != FREE_END {
            let slot = self.free_head;
            let rec = &mut recs[slot as usize];
            self.free_head = rec.count;
            *rec = SlotRec { hash: key.hash, row: key.row, count: 0, deadline: 0 };
            (slot, false)
        } else {
            let slot = recs.len();
            if slot == recs.capacity() {
                // Grow by doubling, but never past the limit: a full tier's
                // records are exactly its capacity long.
                let want = (slot * 2).max(64).min(self.limit.max(slot + 1));
                recs.reserve_exact(want - slot);
            }
            recs.push(SlotRec { hash: key.hash, row: key.row, count: 0, deadline: 0 });
            (slot as u32, true)
        };
        vacant.insert(slot);
        (slot, true, fresh)
    }

    /// Removes a live slot's key and chains the slot into the free list.
    #[inline]
    pub(crate) fn free(&mut self, recs: &mut [SlotRec], slot: u32) {
        let hash = recs[slot as usize].table_hash();
        if let Ok(entry) = self.index.find_entry(hash, |&s| s == slot) {
            entry.remove();
        }
        self.chain_free(recs, slot);
    }

    /// [`free`](KeyTable::free) for a slot found by [`find_at`](KeyTable::find_at)
    /// with no insert or removal since: no probe.
    #[inline]
    pub(crate) fn free_at(&mut self, recs: &mut [SlotRec], slot: u32, bucket: usize) {
        if let Ok(entry) = self.index.get_bucket_entry(bucket) {
            debug_assert_eq!(*entry.get(), slot);
            entry.remove();
        }
        self.chain_free(recs, slot);
    }

    #[inline]
    fn chain_free(&mut self, recs: &mut [SlotRec], slot: u32) {
        recs[slot as usize].count = self.free_head;
        self.free_head = slot;
    }

    /// Live keys.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    /// Forgets every key and slot, keeping the buffers.
    pub(crate) fn clear(&mut self) {
        self.index.clear();
        self.free_head = FREE_END;
    }

    /// Heap bytes held by the index (the records are the caller's).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.index.allocation_size()
    }
}
