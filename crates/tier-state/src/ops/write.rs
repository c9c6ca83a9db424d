//! The write side: `reserve_write`, `finish_write`, `finish_prefetch`,
//! `finish_write_and_reserve_read`, `finish_write_and_delete`.

use crate::answer::Answer;
use crate::error::TierError;
use crate::outcome::Outcome;
use crate::request::{Flags, Keys};
use crate::table::StageAt;
use crate::tier::{Tier, clamp_read_locks};

/// What a finish does with a staging object it took.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finish {
    /// `finish_write`, `finish_prefetch`: admit it (or discard it when the
    /// key is resident already); report non-temporary admissions created.
    Admit,
    /// `finish_write_and_reserve_read`: admit or discard, then read-lock the
    /// resident object; report every admission created.
    AdmitAndRead(u32),
    /// `finish_write_and_delete`: discard it.
    Discard,
}

impl Tier {
    /// LMCache's `reserve_write`: a staging object per key for writer `tag`,
    /// invisible to readers and to other tags, write-locked for the write
    /// TTL; hands out the key's slot (a staging object is named by its slot
    /// and its tag).
    ///
    /// Outcomes, in LMCache's order:
    /// - `KEY_NOT_WRITABLE`: the key is resident, or `tag` stages it under a
    ///   held write lock;
    /// - `tag` stages it under an expired lock: the reservation is handed
    ///   over (locked again, with the new temporary flag): `SUCCESS`, no new
    ///   object;
    /// - otherwise the key needs a new object. These are allocated all
    ///   together, as LMCache's allocator does: if they do not all fit in
    ///   the capacity, every one of them gets `OUT_OF_MEMORY` and none is
    ///   created (LMCache frees a partial allocation).
    ///
    /// Policy: the successful keys are created, handed-over ones first,
    /// unless no key needed a new object (LMCache returns early then and
    /// reports nothing).
    ///
    /// A key twice in one batch that needs a new object counts twice in the
    /// allocation and gets `KEY_NOT_WRITABLE` the second time (LMCache would
    /// stage it twice over, the first object lost).
    ///
    /// # Errors
    ///
    /// [`TierError::LengthMismatch`] when `temporary` has another length
    /// than `keys` (naming both), [`TierError::ShapeMismatch`], and the
    /// row checks; nothing changes.
    pub fn reserve_write<K: Keys + ?Sized>(
        &mut self,
        keys: &K,
        temporary: Flags<'_>,
        tag: u32,
        out: &mut K::Answer,
    ) -> Result<(), TierError> {
        self.check("reserve_write", keys)?;
        temporary.check("reserve_write", keys.len(), keys.shape())?;
        if self.words_reserve_write(keys, temporary, tag, out) {
            return Ok(());
        }
        let now = self.begin(out, keys, true);
        let deadline = now.saturating_add(self.config.write_ttl_ms);
        // With a zero write TTL a key staged earlier in the batch has
        // expired already, which the one-pass path would take for a
        // hand-over; the two-phase path tells them apart.
        if self.num_objects() + keys.len() <= self.config.capacity && self.config.write_ttl_ms > 0 {
            self.reserve_write_fits(keys, temporary, tag, deadline, now, out);
        } else {
            self.reserve_write_near_capacity(keys, temporary, tag, deadline, now, out);
        }
        Ok(())
    }

    /// `reserve_write` when every key of the batch would fit even if each
    /// needed a new object: one pass, one probe a key (find or insert), and
    /// the same outcomes and events as the two-phase path.
    fn reserve_write_fits<K: Keys + ?Sized>(
        &mut self,
        keys: &K,
        temporary: Flags<'_>,
        tag: u32,
        deadline: u64,
        now: u64,
        out: &mut K::Answer,
    ) {
        self.allocated.clear();
        let mut filled = 0usize;
        {
            let Tier { table, slots, events, allocated, blocks, .. } = self;
            table.for_each_slot_or_insert(slots, keys, blocks, |slots, pos, _, slot| {
                let is_temporary = temporary.get(pos);
                if slots.is_empty_slot(slot) {
                    filled += 1;
                } else {
                    if slots.is_resident(slot) {
                        out.fail(pos, Outcome::KeyNotWritable);
                        return;
                    }
                    match slots.find_stage(slot, tag) {
                        Some(at) if now < slots.stage_deadline(slot, at) => {
                            // Held: by another writer, or by this batch (a
                            // duplicate key, see the method's docs).
                            out.fail(pos, Outcome::KeyNotWritable);
                            return;
                        }
                        Some(at) => {
                            slots.relock_stage(slot, at, deadline, is_temporary);
                            events.push(slot);
                            out.succeed(pos, slot);
                            return;
                        }
                        None => {}
                    }
                }
                slots.add_stage(slot, tag, deadline, is_temporary);
                allocated.push(slot);
                out.succeed(pos, slot);
            });
        }
        self.table.slots_filled(filled);
        if self.allocated.is_empty() {
            // LMCache returns before reporting when nothing was allocated.
            return;
        }
        self.staging_count += self.allocated.len();
        self.events.extend_from_slice(&self.allocated);
        self.report_created();
    }

    /// `reserve_write` when the batch might not fit: LMCache's two phases,
    /// the keys that need a new object first collected, then allocated all
    /// together or not at all.
    fn reserve_write_near_capacity<K: Keys + ?Sized>(
        &mut self,
        keys: &K,
        temporary: Flags<'_>,
        tag: u32,
        deadline: u64,
        now: u64,
        out: &mut K::Answer,
    ) {
        self.pending.clear();
        {
            let Tier { table, slots, events, pending, blocks, .. } = self;
            table.for_each_slot(keys, blocks, |_, pos, key, slot| {
                let is_temporary = temporary.get(pos);
                let Some(slot) = slot.filter(|&slot| !slots.is_empty_slot(slot)) else {
                    pending.push((pos, key, is_temporary));
                    return;
                };
                if slots.is_resident(slot) {
                    out.fail(pos, Outcome::KeyNotWritable);
                    return;
                }
                match slots.find_stage(slot, tag) {
                    Some(at) if now < slots.stage_deadline(slot, at) => out.fail(pos, Outcome::KeyNotWritable),
                    Some(at) => {
                        slots.relock_stage(slot, at, deadline, is_temporary);
                        events.push(slot);
                        out.succeed(pos, slot);
                    }
                    None => pending.push((pos, key, is_temporary)),
                }
            });
        }
        if self.pending.is_empty() {
            return;
        }
        if self.num_objects() + self.pending.len() > self.config.capacity {
            for &(pos, _, _) in &self.pending {
                out.fail(pos, Outcome::OutOfMemory);
            }
            // The allocation failed, but the hand-overs stand and are reported.
            self.report_created();
            return;
        }
        let mut staged = 0usize;
        {
            let Tier { table, slots, events, pending, .. } = self;
            let (width, limit) = (table.width() as usize, table.slot_limit());
            for &(pos, key, is_temporary) in pending.iter() {
                let (slot, at) = table.find_or_insert(key);
                if at.fresh {
                    slots.grow(width, limit);
                }
                if slots.is_empty_slot(slot) {
                    table.slots_filled(1);
                } else if slots.find_stage(slot, tag).is_some() {
                    // The same key earlier in this batch.
                    out.fail(pos, Outcome::KeyNotWritable);
                    continue;
                }
                slots.add_stage(slot, tag, deadline, is_temporary);
                staged += 1;
                events.push(slot);
                out.succeed(pos, slot);
            }
        }
        self.staging_count += staged;
        self.report_created();
    }

    /// LMCache's `finish_write`: admits `tag`'s staging objects as the keys'
    /// resident objects, unlocked (evictable).
    ///
    /// Outcomes: `KEY_NOT_EXIST` (`tag` stages nothing for the key), then
    /// `KEY_IN_WRONG_STATE` (its write lock expired; the object stays staged
    /// for eviction to reclaim). When the key became resident meanwhile
    /// (another tag finished first), the staging object is discarded and
    /// the answer is still `SUCCESS`.
    ///
    /// Policy: the admitted non-temporary keys are created.
    ///
    /// # Errors
    ///
    /// The row checks, with nothing changed.
    pub fn finish_write<K: Keys + ?Sized>(&mut self, keys: &K, tag: u32, out: &mut K::Answer) -> Result<(), TierError> {
        self.check("finish_write", keys)?;
        self.finish(keys, tag, Finish::Admit, out);
        Ok(())
    }

    /// LMCache's `finish_prefetch`: [`finish_write`](Tier::finish_write)
    /// for loaded prefetches, with the same outcomes and events (LMCache
    /// reports them to prefetch listeners, whose default bridge creates
    /// them in the policy just the same).
    ///
    /// # Errors
    ///
    /// As [`finish_write`](Tier::finish_write).
    pub fn finish_prefetch<K: Keys + ?Sized>(
        &mut self,
        keys: &K,
        tag: u32,
        out: &mut K::Answer,
    ) -> Result<(), TierError> {
        self.check("finish_prefetch", keys)?;
        self.finish(keys, tag, Finish::Admit, out);
        Ok(())
    }

    /// LMCache's `finish_write_and_reserve_read`: admits `tag`'s staging
    /// objects and takes `read_locks` (clamped 1–128) read locks on the
    /// resident object in one step; hands out its slot. When the key was
    /// resident already, the staging object is discarded and the locks go
    /// on the resident object.
    ///
    /// Outcomes as [`finish_write`](Tier::finish_write). Policy: the
    /// admitted keys (temporary ones too) are created.
    ///
    /// # Errors
    ///
    /// As [`finish_write`](Tier::finish_write).
    pub fn finish_write_and_reserve_read<K: Keys + ?Sized>(
        &mut self,
        keys: &K,
        read_locks: i64,
        tag: u32,
        out: &mut K::Answer,
    ) -> Result<(), TierError> {
        self.check("finish_write_and_reserve_read", keys)?;
        self.finish(keys, tag, Finish::AdmitAndRead(clamp_read_locks(read_locks)), out);
        Ok(())
    }

    /// LMCache's `finish_write_and_delete`: discards `tag`'s staging
    /// objects; they never become resident.
    ///
    /// Outcomes as [`finish_write`](Tier::finish_write). Policy: a key left
    /// with neither a resident object nor a staging object is removed.
    ///
    /// # Errors
    ///
    /// As [`finish_write`](Tier::finish_write).
    pub fn finish_write_and_delete<K: Keys + ?Sized>(
        &mut self,
        keys: &K,
        tag: u32,
        out: &mut K::Answer,
    ) -> Result<(), TierError> {
        self.check("finish_write_and_delete", keys)?;
        self.finish(keys, tag, Finish::Discard, out);
        Ok(())
    }

    fn finish<K: Keys + ?Sized>(&mut self, keys: &K, tag: u32, how: Finish, out: &mut K::Answer) {
        if self.words_finish(keys, tag, how, out) {
            return;
        }
        let hands_out = matches!(how, Finish::AdmitAndRead(_));
        let now = self.begin(out, keys, hands_out);
        let read_ttl = self.config.read_ttl_ms;
        let (mut taken, mut admitted) = (0usize, 0usize);
        {
            let Tier { table, slots, events, blocks, .. } = self;
            table.for_each_slot(keys, blocks, |table, pos, _, slot| {
                let Some(slot) = slot else {
                    out.fail(pos, Outcome::KeyNotExist);
                    return;
                };
                let at: StageAt = match slots.find_stage(slot, tag) {
                    None => {
                        out.fail(pos, Outcome::KeyNotExist);
                        return;
                    }
                    Some(at) if now >= slots.stage_deadline(slot, at) => {
                        out.fail(pos, Outcome::KeyInWrongState);
                        return;
                    }
                    Some(at) => at,
                };
                taken += 1;
                if at == StageAt::Inline {
                    // Inline means not resident: the common case, each bit
                    // touched once (same outcome as the general path below).
                    match how {
                        Finish::Admit => {
                            admitted += 1;
                            if !slots.admit_inline(slot) {
                                events.push(slot);
                            }
                        }
                        Finish::AdmitAndRead(n) => {
                            admitted += 1;
                            slots.admit_inline_locked(slot, n, now.saturating_add(read_ttl));
                            events.push(slot);
                        }
                        Finish::Discard => {
                            if !slots.discard_inline(slot) {
                                events.push(slot);
                                table.release(slots, slot);
                            }
                        }
                    }
                    out.succeed(pos, slot);
                    return;
                }
                let is_temporary = slots.remove_stage(slot, at);
                match how {
                    Finish::Discard => {
                        if slots.is_empty_slot(slot) {
                            events.push(slot);
                            table.release(slots, slot);
                        }
                    }
                    Finish::Admit => {
                        if !slots.is_resident(slot) {
                            slots.admit(slot, is_temporary);
                            admitted += 1;
                            if !is_temporary {
                                events.push(slot);
                            }
                        }
                    }
                    Finish::AdmitAndRead(n) => {
                        if !slots.is_resident(slot) {
                            slots.admit(slot, is_temporary);
                            admitted += 1;
                            events.push(slot);
                        }
                        slots.lock_read(slot, n, now, read_ttl);
                    }
                }
                out.succeed(pos, slot);
            });
        }
        self.staging_count -= taken;
        self.resident_count += admitted;
        match how {
            Finish::Discard => self.report_removed(),
            Finish::Admit | Finish::AdmitAndRead(_) => self.report_created(),
        }
    }
}
