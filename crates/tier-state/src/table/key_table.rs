//! The key table: chunks → dense blocks of slots, freed blocks reused.
//!
//! A controller asks about a request's chunks in every row at once (a
//! [`GridKeys`](crate::GridKeys): chunk hashes × row ids), so the table is
//! keyed by chunk, not by key: a key (`hash`, `row`) lives in slot
//! `block × width + row % width` of the block filed under (`hash`,
//! `row / width`). A grid call probes once per chunk and finds each row's
//! slot by arithmetic; a row's state is then one bit of the block's word
//! in each bitmap over slots. The width is the tier's row count rounded up
//! to a power of two, at most 64 (a block never straddles a bitmap word),
//! and 1 for a tier that accepts any row: then a block is one key, and the
//! table is a plain key table.
//!
//! hashbrown's [`HashTable<u32>`] holds only block ids (4 bytes and one
//! control byte a bucket); each block's chunk hash and row block live in
//! [`Blocks`], so a block's key is stored once. A `HashMap<(u64, u32),
//! u32>` would store it twice, and an open-addressing table of our own
//! would redo what hashbrown (the standard library's own map) does with
//! SIMD probing. Free blocks are chained through their `row_hi` word, so
//! reuse costs no memory.
//!
//! A block stays filed while any of its slots is live (resident or
//! staged), or is remembered by the eviction policy (ghost history is kept
//! by slot, so a slot must keep naming its key while remembered); the tier
//! [unfiles](KeyTable::unfile) a block once neither holds, after the
//! policy has heard of the removals.

use bitmap_core::Bitmap;
use hashbrown::HashTable;
use hashbrown::hash_table::Entry;

use crate::key::{TierKey, key_hash};

/// The end of the free chain.
const FREE_END: u32 = u32::MAX;

/// The blocks' keys, by block id: a chunk hash and the row block
/// (`row / width`); a free block's `row_hi` links the free chain.
#[derive(Debug, Default)]
pub(crate) struct Blocks {
    hash: Vec<u64>,
    row_hi: Vec<u32>,
}

impl Blocks {
    #[inline]
    fn is(&self, block: u32, hash: u64, row_hi: u32) -> bool {
        self.hash[block as usize] == hash && self.row_hi[block as usize] == row_hi
    }

    #[inline]
    fn table_hash(&self, block: u32) -> u64 {
        key_hash(self.hash[block as usize], self.row_hi[block as usize])
    }

    fn len(&self) -> usize {
        self.hash.len()
    }
}

/// A block found or made by [`KeyTable::block_or_insert`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BlockAt {
    /// The block's id: its slots are `id × width ..`.
    pub(crate) id: u32,
    /// Whether the id is new: the slot arrays must grow by a block.
    pub(crate) fresh: bool,
}

#[derive(Debug)]
pub(crate) struct KeyTable {
    index: HashTable<u32>,
    blocks: Blocks,
    /// Which block ids are filed (the others are free).
    filed: Bitmap,
    /// The most recently freed block (`FREE_END` when none).
    free_head: u32,
    /// log2 of the block width.
    shift: u32,
    /// Keys with a live slot.
    live_keys: usize,
    /// The most blocks the table may ever hold: one per object of the
    /// tier's capacity (every filed block holds an object).
    limit: usize,
}

impl KeyTable {
    /// A table of blocks `width` slots wide (a power of two, at most 64),
    /// for at most `limit` blocks.
    pub(crate) fn new(width: u32, limit: usize) -> KeyTable {
        debug_assert!(width.is_power_of_two() && width <= 64);
        KeyTable {
            index: HashTable::new(),
            blocks: Blocks::default(),
            filed: Bitmap::new(0),
            free_head: FREE_END,
            shift: width.trailing_zeros(),
            live_keys: 0,
            limit,
        }
    }

    /// Slots a block.
    #[inline]
    pub(crate) const fn width(&self) -> u32 {
        1 << self.shift
    }

    /// The most slots the table's blocks may span.
    #[inline]
    pub(crate) fn slot_limit(&self) -> usize {
        self.limit.saturating_mul(self.width() as usize)
    }

    /// The block key and the slot offset of `row`.
    #[inline]
    const fn split(&self, row: u32) -> (u32, u32) {
        (row >> self.shift, row & (self.width() - 1))
    }

    /// The slot of `row` in `block`.
    #[inline]
    pub(crate) const fn slot(&self, block: u32, row: u32) -> u32 {
        (block << self.shift) | (row & (self.width() - 1))
    }

    /// The block holding chunk `hash`'s row block `row_hi`, if filed.
    #[inline]
    pub(crate) fn block(&self, hash: u64, row_hi: u32) -> Option<u32> {
        let blocks = &self.blocks;
        self.index.find(key_hash(hash, row_hi), |&block| blocks.is(block, hash, row_hi)).copied()
    }

    /// The slot `key` would have: its block is filed (the slot itself may
    /// be empty: the caller's bitmaps say).
    #[inline]
    pub(crate) fn find(&self, key: TierKey) -> Option<u32> {
        let (row_hi, _) = self.split(key.row);
        self.block(key.hash, row_hi).map(|block| self.slot(block, key.row))
    }

    /// The block of chunk `hash`'s row block `row_hi`, filing one if there
    /// is none, in one probe: a freed block if any, else a new id.
    #[inline]
    pub(crate) fn block_or_insert(&mut self, hash: u64, row_hi: u32) -> BlockAt {
        let entry = {
            let blocks = &self.blocks;
            self.index.entry(
                key_hash(hash, row_hi),
                |&block| blocks.is(block, hash, row_hi),
                |&block| blocks.table_hash(block),
            )
        };
        let vacant = match entry {
            Entry::Occupied(occupied) => return BlockAt { id: *occupied.get(), fresh: false },
            Entry::Vacant(vacant) => vacant,
        };
        let at = if self.free_head != FREE_END {
            let block = self.free_head;
            self.free_head = self.blocks.row_hi[block as usize];
            self.blocks.hash[block as usize] = hash;
            self.blocks.row_hi[block as usize] = row_hi;
            self.filed.set(block as usize);
            BlockAt { id: block, fresh: false }
        } else {
            let block = self.blocks.len();
            if block == self.blocks.hash.capacity() {
                // Grow by doubling, but never past the limit: a full tier's
                // blocks are at most its capacity long.
                let want = (block * 2).max(64).min(self.limit.max(block + 1));
                self.blocks.hash.reserve_exact(want - block);
                self.blocks.row_hi.reserve_exact(want - block);
            }
            self.blocks.hash.push(hash);
            self.blocks.row_hi.push(row_hi);
            self.filed.push(true);
            BlockAt { id: block as u32, fresh: true }
        };
        vacant.insert(at.id);
        at
    }

    /// The slot of `key`, filing its block if needed (see
    /// [`block_or_insert`](KeyTable::block_or_insert)).
    #[inline]
    pub(crate) fn find_or_insert(&mut self, key: TierKey) -> (u32, BlockAt) {
        let (row_hi, _) = self.split(key.row);
        let at = self.block_or_insert(key.hash, row_hi);
        (self.slot(at.id, key.row), at)
    }

    /// The key a slot of a filed block names.
    #[inline]
    pub(crate) fn key(&self, slot: u32) -> TierKey {
        let block = (slot >> self.shift) as usize;
        let row = (self.blocks.row_hi[block] << self.shift) | (slot & (self.width() - 1));
        TierKey { hash: self.blocks.hash[block], row }
    }

    /// `n` keys' slots became live (staged, from empty).
    #[inline]
    pub(crate) fn slots_filled(&mut self, n: usize) {
        self.live_keys += n;
    }

    /// A live slot emptied: one key fewer. Its block stays filed until
    /// [`unfile`](KeyTable::unfile).
    #[inline]
    pub(crate) fn slot_emptied(&mut self) {
        self.live_keys -= 1;
    }

    /// `n` live slots emptied (see [`slot_emptied`](KeyTable::slot_emptied)).
    #[inline]
    pub(crate) fn slots_emptied(&mut self, n: usize) {
        self.live_keys -= n;
    }

    /// Whether `slot`'s block is filed.
    #[inline]
    pub(crate) fn is_filed(&self, slot: u32) -> bool {
        self.filed.test((slot >> self.shift) as usize)
    }

    /// The slots of `slot`'s block.
    #[inline]
    pub(crate) fn block_slots(&self, slot: u32) -> core::ops::Range<u32> {
        let first = slot & !(self.width() - 1);
        first..first + self.width()
    }

    /// Unfiles `slot`'s block (filed, its slots empty and forgotten by the
    /// policy: the caller checked) and frees its id for reuse.
    #[inline]
    pub(crate) fn unfile(&mut self, slot: u32) {
        let block = slot >> self.shift;
        let hash = self.blocks.table_hash(block);
        if let Ok(entry) = self.index.find_entry(hash, |&b| b == block) {
            entry.remove();
        }
        self.filed.clear(block as usize);
        self.blocks.row_hi[block as usize] = self.free_head;
        self.free_head = block;
    }

    /// Block ids handed out so far (filed or free).
    #[inline]
    pub(crate) fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// Keys with a live slot.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.live_keys
    }

    /// Counts every key gone (their slots were emptied), keeping the
    /// blocks filed until [`unfile`](KeyTable::unfile).
    pub(crate) fn forget_keys(&mut self) {
        self.live_keys = 0;
    }

    /// Forgets every key and block, keeping the buffers.
    pub(crate) fn clear(&mut self) {
        self.index.clear();
        self.blocks.hash.clear();
        self.blocks.row_hi.clear();
        self.filed.reset(0);
        self.free_head = FREE_END;
        self.live_keys = 0;
    }

    /// Heap bytes held by the index and the blocks' keys.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.index.allocation_size()
            + self.blocks.hash.capacity() * 8
            + self.blocks.row_hi.capacity() * 4
            + self.filed.capacity_bits() / 8
    }
}
