//! The read side: `reserve_read`, `unsafe_read`, `finish_read`.

use crate::answer::Answer;
use crate::error::TierError;
use crate::outcome::Outcome;
use crate::request::Keys;
use crate::tier::{Tier, clamp_read_locks};

impl Tier {
    /// LMCache's `reserve_read`: takes `read_locks` (clamped to 1–128) read
    /// locks on each resident key and hands out its slot.
    ///
    /// Outcomes: `KEY_NOT_EXIST` for a key without a resident object (a key
    /// that is only being written is invisible to readers). An expired read
    /// lock starts again from `read_locks`; a held one adds them; either way
    /// its time-to-live starts again. No policy event (recency comes only
    /// from [`touch`](Tier::touch)).
    ///
    /// # Errors
    ///
    /// [`TierError::RowOutOfRange`] and the like, with nothing changed.
    pub fn reserve_read<K: Keys + ?Sized>(
        &mut self,
        keys: &K,
        read_locks: i64,
        out: &mut K::Answer,
    ) -> Result<(), TierError> {
        self.check("reserve_read", keys)?;
        let n = clamp_read_locks(read_locks);
        if self.words_reserve_read(keys, n, out) {
            return Ok(());
        }
        let now = self.begin(out, keys, true);
        let ttl = self.config.read_ttl_ms;
        let Tier { table, slots, blocks, .. } = self;
        table.for_each_slot(keys, blocks, |_, pos, _, slot| match slot {
            Some(slot) if slots.is_resident(slot) => {
                slots.lock_read(slot, n, now, ttl);
                out.succeed(pos, slot);
            }
            _ => out.fail(pos, Outcome::KeyNotExist),
        });
        Ok(())
    }

    /// LMCache's `unsafe_read`: hands out the slots of keys already
    /// read-locked, taking no lock.
    ///
    /// Outcomes, in LMCache's order: `KEY_NOT_EXIST` (no resident object),
    /// then `KEY_NOT_READABLE` (its read lock is not held).
    ///
    /// # Errors
    ///
    /// As [`reserve_read`](Tier::reserve_read).
    pub fn unsafe_read<K: Keys + ?Sized>(&mut self, keys: &K, out: &mut K::Answer) -> Result<(), TierError> {
        self.check("unsafe_read", keys)?;
        if self.words_unsafe_read(keys, out) {
            return Ok(());
        }
        let now = self.begin(out, keys, true);
        let Tier { table, slots, blocks, .. } = self;
        table.for_each_slot(keys, blocks, |_, pos, _, slot| match slot {
            Some(slot) if slots.is_resident(slot) => {
                if slots.read_live(slot, now) {
                    out.succeed(pos, slot);
                } else {
                    out.fail(pos, Outcome::KeyNotReadable);
                }
            }
            _ => out.fail(pos, Outcome::KeyNotExist),
        });
        Ok(())
    }

    /// LMCache's `finish_read`: releases `read_locks` (clamped to 1–128)
    /// read locks on each key. A temporary object whose last read lock goes
    /// is deleted (policy: removed).
    ///
    /// Outcomes, in LMCache's order: `KEY_NOT_EXIST` (no resident object),
    /// then `KEY_IN_WRONG_STATE` (its read lock is not held, or expired).
    ///
    /// # Errors
    ///
    /// As [`reserve_read`](Tier::reserve_read).
    pub fn finish_read<K: Keys + ?Sized>(
        &mut self,
        keys: &K,
        read_locks: i64,
        out: &mut K::Answer,
    ) -> Result<(), TierError> {
        self.check("finish_read", keys)?;
        let n = clamp_read_locks(read_locks);
        if self.words_finish_read(keys, n, out) {
            return Ok(());
        }
        let now = self.begin(out, keys, false);
        let mut freed = 0usize;
        {
            let Tier { table, slots, events, blocks, .. } = self;
            table.for_each_slot(keys, blocks, |table, pos, _, slot| match slot {
                Some(slot) if slots.is_resident(slot) => {
                    if !slots.read_live(slot, now) {
                        out.fail(pos, Outcome::KeyInWrongState);
                        return;
                    }
                    if slots.unlock_read(slot, n) && slots.temporary.test(slot as usize) {
                        slots.drop_resident(slot);
                        freed += 1;
                        events.push(slot);
                        if !slots.is_staged(slot) {
                            table.release(slots, slot);
                        }
                    }
                    out.succeed(pos, slot);
                }
                _ => out.fail(pos, Outcome::KeyNotExist),
            });
        }
        self.resident_count -= freed;
        self.report_removed();
        Ok(())
    }
}
