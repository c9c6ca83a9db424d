//! The word-at-a-time forms of the calls a controller makes on every
//! request (`reserve_read`, `unsafe_read`, `finish_read`, `touch`,
//! `reserve_write`, the finishes of a write, and `delete`), for a grid
//! request in column form (see `words`).
//!
//! Each returns `false`, having changed nothing the per-key path would not
//! change the same way, when the request does not qualify; the call then
//! runs key by key. The rules are the per-key calls' (their docs say what
//! LMCache does); here they are the same rules over one chunk's word of
//! each state bitmap:
//! - resident `res`, read-locked `rl`, staged `stg`, inline `inl` (the
//!   staging object kept in the slot's own words), temporary `tmp` and the
//!   inline object's temporary flag `itmp`, each shifted so that bit `r`
//!   is the chunk's row `r`;
//! - per-key numbers (a read lock's count and expiry, an inline staging
//!   object's tag and expiry) are read and written only for the keys whose
//!   bits say they matter.
//!
//! The writes (`reserve_write`, the finishes) take the word path only while
//! no key has a second staging object (writers racing on a key, kept in
//! `Slots::extra`): then "staged" is "inline", and a staging object is the
//! slot's own words.

use crate::answer::{Answer, GridBatch};
use crate::ops::words::{NO_BASE, WordShape, for_each_bit};
use crate::ops::write::Finish;
use crate::outcome::Outcome;
use crate::request::{Flags, GridKeys, Keys};
use crate::table::SlotWords;
use crate::tier::Tier;

/// The word holding `base`'s block, and the block's bit offset in it.
#[inline]
fn at(base: u32) -> (usize, u32) {
    (base as usize / 64, base % 64)
}

/// Which of the locks `locked` (read locks of resident slots, or inline
/// staging objects' write locks) of `base`'s block are held at `now`:
/// LMCache's `TTLLock` is held until its expiry, not at it.
#[inline]
fn held_now(locked: u64, base: u32, deadline: &[u64], now: u64) -> u64 {
    let mut held = 0u64;
    for_each_bit(locked, |r| {
        if now < deadline[base as usize + r] {
            held |= 1 << r;
        }
    });
    held
}

/// `finish_read`'s unlock of the read-locked slots `locked` of `base`'s
/// block: each lock live at `now` drops by `n`. Returns the live locks and
/// those released (their count reached 0). A run from the block's first
/// row is one pass without branches over its slots; any other word goes
/// bit by bit.
#[inline]
fn unlock_reads(locked: u64, base: u32, count: &mut [u32], deadline: &[u64], now: u64, n: u32) -> (u64, u64) {
    let (mut live, mut released) = (0u64, 0u64);
    if locked != 0 && locked & locked.wrapping_add(1) == 0 {
        let run = base as usize..base as usize + locked.count_ones() as usize;
        for (r, (count, &deadline)) in count[run.clone()].iter_mut().zip(&deadline[run]).enumerate() {
            let is_live = now < deadline;
            let left = if is_live { count.saturating_sub(n) } else { *count };
            *count = left;
            live |= u64::from(is_live) << r;
            released |= u64::from(is_live & (left == 0)) << r;
        }
        return (live, released);
    }
    for_each_bit(locked, |r| {
        let s = base as usize + r;
        if now < deadline[s] {
            live |= 1 << r;
            count[s] = count[s].saturating_sub(n);
            if count[s] == 0 {
                released |= 1 << r;
            }
        }
    });
    (live, released)
}

/// Sets the count and the expiry of each slot of `base`'s block whose bit
/// is set in `bits`. A run from the block's first row (a whole chunk's
/// rows, the common case) is two slice fills, which the compiler turns
/// into vector stores; any other word goes bit by bit.
#[inline]
fn set_counts(bits: u64, base: u32, count: &mut [u32], deadline: &mut [u64], to: (u32, u64)) {
    if bits & bits.wrapping_add(1) == 0 {
        let run = base as usize..base as usize + bits.count_ones() as usize;
        count[run.clone()].fill(to.0);
        deadline[run].fill(to.1);
    } else {
        for_each_bit(bits, |r| {
            count[base as usize + r] = to.0;
            deadline[base as usize + r] = to.1;
        });
    }
}

impl Tier {
    /// The word path's start for a call that looks its keys up: the
    /// request in column form with each chunk's block found, the answer
    /// begun (`slots`: the call hands them out) and the time now; `None`,
    /// with nothing changed, when the request does not qualify.
    fn start_words<'k, 'o, K: Keys + ?Sized>(
        &mut self,
        keys: &'k K,
        out: &'o mut K::Answer,
        slots: bool,
    ) -> Option<(GridKeys<'k>, &'o mut GridBatch, WordShape, u64)> {
        let (Some(grid), Some(out)) = (keys.as_grid(), out.as_grid_batch()) else { return None };
        let shape = self.words.prepare(&grid, &self.table)?;
        self.words.look_up(&grid, &self.table, shape);
        if !self.words.distinct(&self.table) {
            return None;
        }
        let now = self.begin(out, keys, slots);
        Some((grid, out, shape, now))
    }

    /// `reserve_read` a chunk at a time.
    pub(crate) fn words_reserve_read<K: Keys + ?Sized>(&mut self, keys: &K, n: u32, out: &mut K::Answer) -> bool {
        let Some((grid, out, shape, now)) = self.start_words(keys, out, true) else { return false };
        let ttl = self.config.read_ttl_ms;
        let Tier { slots, words, .. } = self;
        {
            let SlotWords { count, deadline, resident, mut read_locked, .. } = slots.words();
            for c in 0..shape.cols {
                let Some((m, base)) = words.column(c) else { continue };
                let (i, off) = at(base);
                let ok = (resident[i] >> off) & m;
                let live = held_now(ok & (read_locked[i] >> off), base, deadline, now);
                let until = now.saturating_add(ttl);
                if live == 0 {
                    // No lock held: each starts from `n`.
                    set_counts(ok, base, count, deadline, (n, until));
                } else {
                    for_each_bit(ok, |r| {
                        let s = base as usize + r;
                        count[s] = if live >> r & 1 == 1 { count[s].saturating_add(n) } else { n };
                        deadline[s] = until;
                    });
                }
                read_locked[i] |= ok << off;
                words.ok[c] = ok;
                words.fail[0][c] = m & !ok;
            }
        }
        words.answer(shape, grid.cells(), Outcome::KeyNotExist, Outcome::Success, out);
        true
    }

    /// `unsafe_read` a chunk at a time: the slots of the keys whose read
    /// lock is held now, taking none.
    pub(crate) fn words_unsafe_read<K: Keys + ?Sized>(&mut self, keys: &K, out: &mut K::Answer) -> bool {
        let Some((grid, out, shape, now)) = self.start_words(keys, out, true) else { return false };
        let Tier { slots, words, .. } = self;
        let (resident, read_locked) = (slots.resident.as_words(), slots.read_locked.as_words());
        for c in 0..shape.cols {
            let Some((m, base)) = words.column(c) else { continue };
            let (i, off) = at(base);
            let res = (resident[i] >> off) & m;
            let live = held_now(res & (read_locked[i] >> off), base, &slots.deadline, now);
            words.ok[c] = live;
            words.fail[0][c] = m & !res;
            words.fail[1][c] = res & !live;
        }
        words.answer(shape, grid.cells(), Outcome::KeyNotExist, Outcome::KeyNotReadable, out);
        true
    }

    /// `finish_read` a chunk at a time.
    pub(crate) fn words_finish_read<K: Keys + ?Sized>(&mut self, keys: &K, n: u32, out: &mut K::Answer) -> bool {
        let Some((grid, out, shape, now)) = self.start_words(keys, out, false) else { return false };
        let mut freed = 0usize;
        {
            let Tier { slots, words, table, .. } = self;
            let SlotWords { count, deadline, mut resident, mut read_locked, mut temporary, staged, .. } = slots.words();
            for c in 0..shape.cols {
                let Some((m, base)) = words.column(c) else { continue };
                let (i, off) = at(base);
                let res = (resident[i] >> off) & m;
                let (live, released) = unlock_reads(res & (read_locked[i] >> off), base, count, deadline, now, n);
                read_locked[i] &= !(released << off);
                // A temporary object goes with its last read lock.
                let gone = released & (temporary[i] >> off);
                if gone != 0 {
                    resident[i] &= !(gone << off);
                    temporary[i] &= !(gone << off);
                    freed += gone.count_ones() as usize;
                    table.slots_emptied((gone & !(staged[i] >> off)).count_ones() as usize);
                    words.event[0][c] = gone;
                }
                words.ok[c] = live;
                words.fail[0][c] = m & !res;
                words.fail[1][c] = res & !live;
            }
        }
        self.words.answer(shape, grid.cells(), Outcome::KeyNotExist, Outcome::KeyInWrongState, out);
        self.words.events(shape, 0, &mut self.events);
        self.resident_count -= freed;
        self.report_removed();
        true
    }

    /// `touch` a chunk at a time.
    pub(crate) fn words_touch<K: Keys + ?Sized>(&mut self, keys: &K, out: &mut K::Answer) -> bool {
        let Some((grid, out, shape, _)) = self.start_words(keys, out, false) else { return false };
        {
            let Tier { slots, words, .. } = self;
            let (resident, staged) = (slots.resident.as_words(), slots.staged.as_words());
            for c in 0..shape.cols {
                let Some((m, base)) = words.column(c) else { continue };
                let (i, off) = at(base);
                let held = ((resident[i] | staged[i]) >> off) & m;
                words.ok[c] = held;
                words.event[0][c] = held;
                words.fail[0][c] = m & !held;
            }
        }
        self.words.answer(shape, grid.cells(), Outcome::KeyNotExist, Outcome::Success, out);
        self.words.events(shape, 0, &mut self.events);
        if !self.events.is_empty() {
            self.policy.on_touched(&self.events);
        }
        true
    }

    /// The finishes of a write (`finish_write`, `finish_prefetch`,
    /// `finish_write_and_reserve_read`, `finish_write_and_delete`) a chunk
    /// at a time, while every staging object is inline.
    pub(crate) fn words_finish<K: Keys + ?Sized>(
        &mut self,
        keys: &K,
        tag: u32,
        how: Finish,
        out: &mut K::Answer,
    ) -> bool {
        if !self.slots.extra.is_empty() {
            return false;
        }
        let Some((grid, out, shape, now)) = self.start_words(keys, out, matches!(how, Finish::AdmitAndRead(_))) else {
            return false;
        };
        let read_deadline = now.saturating_add(self.config.read_ttl_ms);
        let (mut taken_all, mut admitted) = (0usize, 0usize);
        {
            let Tier { slots, words, table, .. } = self;
            let SlotWords {
                count,
                deadline,
                mut resident,
                mut read_locked,
                mut temporary,
                mut staged,
                mut inline,
                inline_temporary,
            } = slots.words();
            for c in 0..shape.cols {
                let Some((m, base)) = words.column(c) else { continue };
                let (i, off) = at(base);
                // `tag`'s staging objects: inline ones naming it (no other).
                let (mut mine, mut expired) = (0u64, 0u64);
                for_each_bit((inline[i] >> off) & m, |r| {
                    let s = base as usize + r;
                    if count[s] == tag {
                        mine |= 1 << r;
                        if now >= deadline[s] {
                            expired |= 1 << r;
                        }
                    }
                });
                let taken = mine & !expired;
                words.fail[0][c] = m & !mine;
                words.fail[1][c] = expired;
                words.ok[c] = taken;
                if taken == 0 {
                    continue;
                }
                taken_all += taken.count_ones() as usize;
                let shifted = taken << off;
                // Inline means not resident: nothing else stages these keys.
                inline[i] &= !shifted;
                staged[i] &= !shifted;
                match how {
                    Finish::Discard => {
                        words.event[0][c] = taken;
                        table.slots_emptied(taken.count_ones() as usize);
                    }
                    Finish::Admit | Finish::AdmitAndRead(_) => {
                        let temp = (inline_temporary[i] >> off) & taken;
                        resident[i] |= shifted;
                        temporary[i] = (temporary[i] & !shifted) | (temp << off);
                        admitted += taken.count_ones() as usize;
                        if let Finish::AdmitAndRead(n) = how {
                            read_locked[i] |= shifted;
                            set_counts(taken, base, count, deadline, (n, read_deadline));
                            words.event[0][c] = taken;
                        } else {
                            set_counts(taken, base, count, deadline, (0, 0));
                            words.event[0][c] = taken & !temp;
                        }
                    }
                }
            }
        }
        self.words.answer(shape, grid.cells(), Outcome::KeyNotExist, Outcome::KeyInWrongState, out);
        self.words.events(shape, 0, &mut self.events);
        self.staging_count -= taken_all;
        self.resident_count += admitted;
        match how {
            Finish::Discard => self.report_removed(),
            Finish::Admit | Finish::AdmitAndRead(_) => self.report_created(),
        }
        true
    }

    /// `delete` a chunk at a time, while every staging object is inline
    /// (then a staged key is not resident, and its one staging object is
    /// the slot's own words).
    pub(crate) fn words_delete<K: Keys + ?Sized>(&mut self, keys: &K, force: bool, out: &mut K::Answer) -> bool {
        if !self.slots.extra.is_empty() {
            return false;
        }
        let Some((grid, out, shape, now)) = self.start_words(keys, out, false) else { return false };
        let (mut deleted, mut reclaimed) = (0usize, 0usize);
        {
            let Tier { slots, words, table, .. } = self;
            let SlotWords {
                count, deadline, mut resident, mut read_locked, mut temporary, mut staged, mut inline, ..
            } = slots.words();
            for c in 0..shape.cols {
                let Some((m, base)) = words.column(c) else { continue };
                let (i, off) = at(base);
                let (res, stg) = ((resident[i] >> off) & m, (staged[i] >> off) & m);
                // A reservation goes when forced or expired; a held one
                // keeps the key locked. A resident object goes unless (not
                // forced) read-locked now.
                let (expired, locked) = if force {
                    (stg, 0)
                } else {
                    (
                        stg & !held_now(stg, base, deadline, now),
                        held_now(res & (read_locked[i] >> off), base, deadline, now),
                    )
                };
                let dropped = res & !locked;
                for_each_bit(expired | dropped, |r| count[base as usize + r] = 0);
                let (expired_shifted, dropped_shifted) = (expired << off, dropped << off);
                inline[i] &= !expired_shifted;
                staged[i] &= !expired_shifted;
                resident[i] &= !dropped_shifted;
                temporary[i] &= !dropped_shifted;
                read_locked[i] &= !dropped_shifted;
                reclaimed += expired.count_ones() as usize;
                deleted += dropped.count_ones() as usize;
                let gone = expired | dropped;
                table.slots_emptied(gone.count_ones() as usize);
                words.ok[c] = gone;
                words.event[0][c] = gone;
                words.fail[0][c] = m & !res & !stg;
                words.fail[1][c] = (stg & !expired) | locked;
            }
        }
        self.words.answer(shape, grid.cells(), Outcome::KeyNotExist, Outcome::KeyIsLocked, out);
        self.words.events(shape, 0, &mut self.events);
        self.resident_count -= deleted;
        self.staging_count -= reclaimed;
        self.report_removed();
        true
    }

    /// `reserve_write` a chunk at a time, when the batch fits whatever it
    /// needs (the one-pass case), the flags come as one or as a grid, and
    /// every staging object is inline.
    pub(crate) fn words_reserve_write<K: Keys + ?Sized>(
        &mut self,
        keys: &K,
        temporary: Flags<'_>,
        tag: u32,
        out: &mut K::Answer,
    ) -> bool {
        if !self.slots.extra.is_empty()
            || self.config.write_ttl_ms == 0
            || self.num_objects() + keys.len() > self.config.capacity
        {
            return false;
        }
        let (Some(grid), Some(out)) = (keys.as_grid(), out.as_grid_batch()) else { return false };
        let Some(shape) = self.words.prepare(&grid, &self.table) else { return false };
        match temporary {
            Flags::All(flag) => {
                self.words.flags.clear();
                self.words.flags.resize(shape.cols, if flag { !0 } else { 0 });
            }
            Flags::Cells(flags) => {
                if flags.columns_into(&mut self.words.flags).is_err() {
                    return false;
                }
            }
            Flags::Each(_) | Flags::Bits(_) => return false,
        }
        self.words.look_up(&grid, &self.table, shape);
        // File the missing chunks' blocks in the per-key path's order, so
        // both forms hand out the same slots.
        self.words.filing_order(shape);
        let (width, limit) = (self.table.width() as usize, self.table.slot_limit());
        for k in 0..self.words.order.len() {
            let c = self.words.order[k] as usize;
            if self.words.base[c] == NO_BASE {
                let block = self.table.block_or_insert(grid.hashes[c], shape.row_hi);
                if block.fresh {
                    self.slots.grow(width, limit);
                }
                self.words.base[c] = self.table.slot(block.id, 0);
            }
        }
        if !self.words.distinct(&self.table) || self.stages_of_other_tags(shape, tag) {
            // The per-key path finds the blocks just filed, in its order.
            return false;
        }
        let now = self.begin(out, keys, true);
        let write_deadline = now.saturating_add(self.config.write_ttl_ms);
        let (mut filled, mut allocated) = (0usize, 0usize);
        {
            let Tier { slots, words, .. } = self;
            let SlotWords { count, deadline, resident, mut staged, mut inline, mut inline_temporary, .. } =
                slots.words();
            for c in 0..shape.cols {
                let (m, base) = (words.mask[c], words.base[c]);
                if m == 0 {
                    continue;
                }
                let (i, off) = at(base);
                let res = (resident[i] >> off) & m;
                let stg = (staged[i] >> off) & m & !res;
                let empty = m & !res & !stg;
                let flags = words.flags[c];
                // A new inline staging object for each empty slot.
                let shifted = empty << off;
                inline[i] |= shifted;
                staged[i] |= shifted;
                inline_temporary[i] = (inline_temporary[i] & !shifted) | ((flags & empty) << off);
                set_counts(empty, base, count, deadline, (tag, write_deadline));
                filled += empty.count_ones() as usize;
                allocated += empty.count_ones() as usize;
                // `tag`'s own reservations (checked above: no other tag's):
                // a held one refuses, an expired one is handed over.
                let handed = stg & !held_now(stg, base, deadline, now);
                set_counts(handed, base, count, deadline, (tag, write_deadline));
                let handed_shifted = handed << off;
                inline_temporary[i] = (inline_temporary[i] & !handed_shifted) | ((flags & handed) << off);
                words.event[0][c] = handed;
                words.event[1][c] = empty;
                words.ok[c] = empty | handed;
                words.fail[0][c] = res | (stg & !handed);
            }
        }
        self.words.answer(shape, grid.cells(), Outcome::KeyNotWritable, Outcome::Success, out);
        self.table.slots_filled(filled);
        if allocated == 0 {
            // LMCache returns before reporting when nothing was allocated.
            return true;
        }
        self.staging_count += allocated;
        self.words.events(shape, 0, &mut self.events);
        self.words.events(shape, 1, &mut self.events);
        self.report_created();
        true
    }

    /// Whether a key of the request that is staged and not resident is
    /// staged by another tag (its new staging object would not be inline).
    fn stages_of_other_tags(&self, shape: WordShape, tag: u32) -> bool {
        let (resident, staged) = (self.slots.resident.as_words(), self.slots.staged.as_words());
        let words = &self.words;
        (0..shape.cols).any(|c| {
            let (m, base) = (words.mask[c], words.base[c]);
            if m == 0 {
                return false;
            }
            let (i, off) = at(base);
            let mut other = false;
            for_each_bit(((staged[i] & !resident[i]) >> off) & m, |r| {
                other |= self.slots.count[base as usize + r] != tag;
            });
            other
        })
    }
}
