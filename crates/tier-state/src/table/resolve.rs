//! Visiting a batch's keys with their slots: one table probe a key for a
//! slice, one a chunk for a grid request whose rows share a block.
//!
//! Every call of the tier is a pass over its keys in request order; these
//! two visits are where the pass finds each key's slot, so the calls
//! themselves are written once for both key forms.

use crate::key::TierKey;
use crate::request::{GridKeys, Keys, Pos};
use crate::table::key_table::KeyTable;
use crate::table::slots::Slots;

/// A chunk not looked up yet, in a grid visit's per-chunk blocks.
const UNSEEN: u32 = u32::MAX;
/// A chunk whose block is not filed.
const NO_BLOCK: u32 = u32::MAX - 1;

impl KeyTable {
    /// The row block shared by every row of a grid request, if they share
    /// one (always, for a tier of at most 64 rows).
    fn shared_row_block(&self, grid: &GridKeys<'_>) -> Option<u32> {
        let shift = self.width().trailing_zeros();
        let first = grid.rows.first()? >> shift;
        grid.rows.iter().all(|&row| row >> shift == first).then_some(first)
    }

    /// Calls `f` with the table, each key, its position and the slot its
    /// block gives it (`None` when no block is filed for it), in request
    /// order. The slot itself may be empty: callers test the state bits.
    /// `f` may [`release`](KeyTable::release) slots: a block unfiled during
    /// the visit has only empty slots, which is what later keys of it see.
    ///
    /// A grid request looks each chunk up once, at its first key, so a
    /// request narrowed to some cells looks up only the chunks it asks
    /// about. `blocks` is scratch (one entry a chunk), kept by the caller
    /// so that a warmed-up tier allocates nothing.
    #[inline]
    pub(crate) fn for_each_slot<K: Keys + ?Sized>(
        &mut self,
        keys: &K,
        blocks: &mut Vec<u32>,
        mut f: impl FnMut(&mut KeyTable, Pos, TierKey, Option<u32>),
    ) {
        if let Some(grid) = keys.as_grid()
            && let Some(row_hi) = self.shared_row_block(&grid)
        {
            blocks.clear();
            blocks.resize(grid.hashes.len(), UNSEEN);
            grid.for_each(|pos, key| {
                let block = &mut blocks[pos.col as usize];
                if *block == UNSEEN {
                    *block = self.block(key.hash, row_hi).unwrap_or(NO_BLOCK);
                }
                let slot = (*block != NO_BLOCK).then(|| self.slot(*block, key.row));
                f(self, pos, key, slot);
            });
            return;
        }
        keys.for_each(|pos, key| {
            let slot = self.find(key);
            f(self, pos, key, slot);
        });
    }

    /// [`for_each_slot`](KeyTable::for_each_slot), filing a block for
    /// every key that has none first (and growing `slots` by each new
    /// block), so every key has a slot. Blocks are filed in request order,
    /// whichever form the keys come in, so a grid request and its slice
    /// hand out the same slots.
    #[inline]
    pub(crate) fn for_each_slot_or_insert<K: Keys + ?Sized>(
        &mut self,
        slots: &mut Slots,
        keys: &K,
        blocks: &mut Vec<u32>,
        mut f: impl FnMut(&mut Slots, Pos, TierKey, u32),
    ) {
        let (width, limit) = (self.width() as usize, self.slot_limit());
        if let Some(grid) = keys.as_grid()
            && let Some(row_hi) = self.shared_row_block(&grid)
        {
            blocks.clear();
            blocks.resize(grid.hashes.len(), UNSEEN);
            grid.for_each(|pos, key| {
                let block = &mut blocks[pos.col as usize];
                if *block == UNSEEN {
                    let at = self.block_or_insert(key.hash, row_hi);
                    if at.fresh {
                        slots.grow(width, limit);
                    }
                    *block = at.id;
                }
                f(slots, pos, key, self.slot(*block, key.row));
            });
            return;
        }
        keys.for_each(|pos, key| {
            let (slot, at) = self.find_or_insert(key);
            if at.fresh {
                slots.grow(width, limit);
            }
            f(slots, pos, key, slot);
        });
    }
}

impl KeyTable {
    /// A live `slot` just emptied (its state bits are clear): counts the
    /// key gone. Its block is unfiled later, once the policy has heard of
    /// the removal ([`Tier::unfile_emptied`](crate::Tier)).
    #[inline]
    pub(crate) fn release(&mut self, slots: &Slots, slot: u32) {
        debug_assert!(slots.is_empty_slot(slot));
        self.slot_emptied();
    }
}
