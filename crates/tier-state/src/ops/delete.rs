//! Deleting and recency: `delete`, `clear`, `touch`, and `evict` (the
//! eviction controller's step, on the policy and the evictable bitmap).

use bitmap_core::Bitmap;

use crate::answer::Answer;
use crate::error::TierError;
use crate::eviction::Eligible;
use crate::key::TierKey;
use crate::outcome::Outcome;
use crate::request::Keys;
use crate::tier::Tier;

/// What [`Tier::clear`] did, as LMCache logs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClearReport {
    /// Resident objects deleted.
    pub cleared: usize,
    /// Staging objects freed.
    pub staging_freed: usize,
    /// Read-locked resident objects kept.
    pub locked_remaining: usize,
    /// Staging objects kept (held write locks).
    pub staging_remaining: usize,
}

impl Tier {
    /// LMCache's `delete`: deletes each key's resident object, after
    /// reclaiming its staging objects whose write lock expired (all of them
    /// when `force`).
    ///
    /// Outcomes, in LMCache's order: `KEY_NOT_EXIST` (neither resident nor
    /// staged); `KEY_IS_LOCKED` when a staging object with a held write lock
    /// remains, or (without `force`) the resident object is read-locked;
    /// otherwise `SUCCESS` (also for a key that had only expired
    /// reservations, now gone). Policy: every key that goes is removed.
    ///
    /// # Errors
    ///
    /// The row checks, with nothing changed.
    pub fn delete<K: Keys + ?Sized>(&mut self, keys: &K, force: bool, out: &mut K::Answer) -> Result<(), TierError> {
        self.check("delete", keys)?;
        if self.words_delete(keys, force, out) {
            return Ok(());
        }
        let now = self.begin(out, keys, false);
        let (mut deleted, mut reclaimed) = (0usize, 0usize);
        {
            let Tier { table, slots, events, blocks, .. } = self;
            table.for_each_slot(keys, blocks, |table, pos, _, slot| {
                let Some(slot) = slot.filter(|&slot| !slots.is_empty_slot(slot)) else {
                    out.fail(pos, Outcome::KeyNotExist);
                    return;
                };
                if slots.is_staged(slot) {
                    reclaimed += slots.reclaim_stages(slot, now, force);
                }
                if slots.is_staged(slot) {
                    out.fail(pos, Outcome::KeyIsLocked);
                    return;
                }
                if slots.is_resident(slot) {
                    if !force && slots.read_live(slot, now) {
                        out.fail(pos, Outcome::KeyIsLocked);
                        return;
                    }
                    slots.drop_resident(slot);
                    deleted += 1;
                }
                events.push(slot);
                table.release(slots, slot);
                out.succeed(pos, slot);
            });
        }
        self.resident_count -= deleted;
        self.staging_count -= reclaimed;
        self.report_removed();
        Ok(())
    }

    /// LMCache's `touch_keys`: the keys were accessed (retrieved or
    /// stored). Policy: the keys the tier has are touched (a key it lacks
    /// is untracked, and a touch never brings one back). LMCache answers
    /// nothing; the mask says which keys the tier has, the others failing
    /// with `KEY_NOT_EXIST`.
    ///
    /// # Errors
    ///
    /// The row checks, with nothing changed.
    pub fn touch<K: Keys + ?Sized>(&mut self, keys: &K, out: &mut K::Answer) -> Result<(), TierError> {
        self.check("touch", keys)?;
        if self.words_touch(keys, out) {
            return Ok(());
        }
        self.begin(out, keys, false);
        {
            let Tier { table, slots, events, blocks, .. } = self;
            table.for_each_slot(keys, blocks, |_, pos, _, slot| match slot {
                Some(slot) if !slots.is_empty_slot(slot) => {
                    events.push(slot);
                    out.succeed(pos, slot);
                }
                _ => out.fail(pos, Outcome::KeyNotExist),
            });
        }
        if !self.events.is_empty() {
            self.policy.on_touched(&self.events);
        }
        Ok(())
    }

    /// LMCache's `clear`. With `force`, every object goes, locked or not,
    /// and every staging object. Without, the resident objects whose read
    /// lock is not held go, and the staging objects whose write lock
    /// expired. Policy: every resident key deleted is removed, then every
    /// key left with nothing.
    pub fn clear(&mut self, force: bool) -> ClearReport {
        let now = self.clock.now_ms();
        self.events.clear();
        let mut report = ClearReport::default();
        if force {
            self.events.extend(self.slots.resident.ones().map(|slot| slot as u32));
            let staged_only = &self.slots.staged - &self.slots.resident;
            self.events.extend(staged_only.ones().map(|slot| slot as u32));
            report.cleared = self.resident_count;
            report.staging_freed = self.staging_count;
            self.report_removed();
            self.resident_count = 0;
            self.staging_count = 0;
            let width = self.table.width() as usize;
            if (0..self.slots.len() as u32).any(|slot| self.policy.remembers(slot)) {
                // Ghost history (S3-FIFO, ARC) pins its slots to their keys:
                // empty every slot, and keep the blocks it remembers.
                self.slots.empty_all();
                self.table.forget_keys();
                for first in (0..self.slots.len()).step_by(width) {
                    self.unfile_if_free(first as u32);
                }
            } else {
                self.table.clear();
                self.slots.clear();
            }
            return report;
        }
        let mut touched = Vec::new();
        for slot in self.slots.resident.ones() {
            let slot = slot as u32;
            if self.slots.read_live(slot, now) {
                report.locked_remaining += 1;
            } else {
                touched.push(slot);
            }
        }
        // Each slot is released where it empties, so that a block goes
        // with its last live slot.
        for &slot in &touched {
            self.slots.drop_resident(slot);
            self.events.push(slot);
            if !self.slots.is_staged(slot) {
                self.table.release(&self.slots, slot);
            }
        }
        report.cleared = touched.len();
        self.resident_count -= touched.len();
        let staged: Vec<u32> = self.slots.staged.ones().map(|slot| slot as u32).collect();
        for &slot in &staged {
            let freed = self.slots.reclaim_stages(slot, now, false);
            report.staging_freed += freed;
            if freed > 0 && self.slots.is_empty_slot(slot) {
                self.events.push(slot);
                self.table.release(&self.slots, slot);
            }
        }
        self.staging_count -= report.staging_freed;
        report.staging_remaining = self.staging_count;
        self.report_removed();
        report
    }

    /// One step of LMCache's L1 eviction controller: asks the policy for
    /// victims at `ratio` among the [evictable](Tier::evictable_into) slots
    /// and deletes them (not forced; a victim that is locked by then stays).
    /// Appends the deleted keys to `evicted` and returns how many.
    pub fn evict(&mut self, ratio: f64, evicted: &mut Vec<TierKey>) -> usize {
        let mut eligible = Bitmap::new(0);
        self.evictable_into(&mut eligible);
        let mut victims = Vec::new();
        self.policy.victims(ratio, Eligible::Bits(&eligible), &mut victims);
        let keys: Vec<TierKey> = victims.iter().map(|&slot| self.table.key(slot)).collect();
        let mut answer = crate::answer::Batch::default();
        if self.delete(&keys[..], false, &mut answer).is_err() {
            return 0;
        }
        let before = evicted.len();
        evicted.extend(answer.ok().ones().map(|i| keys[i]));
        evicted.len() - before
    }
}
