//! Per-slot state: the bitmaps over slots and the per-slot arrays, with the
//! lock and staging rules of LMCache's `TTLLock` and `L1Manager` staging.
//!
//! A slot is one key (its block in the key table names it). Its words
//! (`count`, `deadline`) mean:
//! - resident: `count` is the read lock's count and `deadline` its expiry;
//! - not resident, with its first staging object *inline*: `count` is that
//!   object's writer tag and `deadline` its write lock's expiry;
//! - empty: nothing; the words are not read until a stage or a lock
//!   writes them (the bits say which words mean something).
//!
//! Every other staging object of the key (another writer tag's, or any while
//! the key is resident) sits in `extra`, a map that is empty unless writers
//! race on a key. So a slot costs 12 bytes and 6 bits.

use bitmap_core::{Bitmap, WordsMut};
use rustc_hash::FxHashMap;

/// One staging object kept outside the slot's inline words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Staged {
    pub(crate) tag: u32,
    pub(crate) deadline: u64,
    pub(crate) temporary: bool,
}

/// Where a tag's staging object for a slot is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StageAt {
    Inline,
    Extra(usize),
}

#[derive(Debug, Default)]
pub(crate) struct Slots {
    /// Each slot's read-lock count or inline writer tag.
    pub(crate) count: Vec<u32>,
    /// Each slot's read lock's or inline write lock's expiry (clock ms).
    pub(crate) deadline: Vec<u64>,
    /// Has a resident (readable) object.
    pub(crate) resident: Bitmap,
    /// Resident with a read-lock count above 0; the lock may have expired
    /// since (see [`Slots::read_live`]); [`Slots::sweep_read`] clears those.
    pub(crate) read_locked: Bitmap,
    /// The resident object is temporary.
    pub(crate) temporary: Bitmap,
    /// Has at least one staging object (any tag).
    pub(crate) staged: Bitmap,
    /// Its first staging object is inline (never while resident).
    pub(crate) inline: Bitmap,
    /// The inline staging object is temporary.
    pub(crate) inline_temporary: Bitmap,
    /// The other staging objects, by slot.
    pub(crate) extra: FxHashMap<u32, Vec<Staged>>,
}

/// Every state bitmap's words and the per-slot arrays, all mutable at
/// once: what the word-at-a-time calls work on (`ops::word_calls`). The
/// bitmaps' guards clear their tails when dropped.
pub(crate) struct SlotWords<'a> {
    pub(crate) count: &'a mut [u32],
    pub(crate) deadline: &'a mut [u64],
    pub(crate) resident: WordsMut<'a>,
    pub(crate) read_locked: WordsMut<'a>,
    pub(crate) temporary: WordsMut<'a>,
    pub(crate) staged: WordsMut<'a>,
    pub(crate) inline: WordsMut<'a>,
    pub(crate) inline_temporary: WordsMut<'a>,
}

impl Slots {
    /// Slots so far: every array and bitmap has this length.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.count.len()
    }

    /// Adds a fresh block of `width` empty slots (the key table filed a new
    /// block id). The arrays grow by doubling, up to `limit` slots.
    #[inline]
    pub(crate) fn grow(&mut self, width: usize, limit: usize) {
        let len = self.len() + width;
        if len > self.count.capacity() {
            let want = (len * 2).max(64).min(limit.max(len));
            self.count.reserve_exact(want - self.count.len());
            self.deadline.reserve_exact(want - self.deadline.len());
        }
        self.count.resize(len, 0);
        self.deadline.resize(len, 0);
        for bits in self.bitmaps_mut() {
            bits.resize(len);
        }
    }

    fn bitmaps_mut(&mut self) -> [&mut Bitmap; 6] {
        [
            &mut self.resident,
            &mut self.read_locked,
            &mut self.temporary,
            &mut self.staged,
            &mut self.inline,
            &mut self.inline_temporary,
        ]
    }

    /// The state as words (see [`SlotWords`]).
    pub(crate) fn words(&mut self) -> SlotWords<'_> {
        SlotWords {
            count: &mut self.count,
            deadline: &mut self.deadline,
            resident: self.resident.words_mut(),
            read_locked: self.read_locked.words_mut(),
            temporary: self.temporary.words_mut(),
            staged: self.staged.words_mut(),
            inline: self.inline.words_mut(),
            inline_temporary: self.inline_temporary.words_mut(),
        }
    }

    /// Whether `slot` holds nothing (neither resident nor staged).
    #[inline]
    pub(crate) fn is_empty_slot(&self, slot: u32) -> bool {
        !self.resident.test(slot as usize) && !self.staged.test(slot as usize)
    }

    /// Whether every slot of `slot`'s block (`width` slots, a power of two
    /// of at most 64, so one word of each bitmap) holds nothing.
    #[inline]
    pub(crate) fn is_empty_block(&self, slot: u32, width: u32) -> bool {
        let first = (slot & !(width - 1)) as usize;
        let word = first / 64;
        let mask = if width == 64 { u64::MAX } else { ((1u64 << width) - 1) << (first % 64) };
        (self.resident.as_words()[word] | self.staged.as_words()[word]) & mask == 0
    }

    /// Empties every slot, keeping the slots (and their blocks' ids).
    pub(crate) fn empty_all(&mut self) {
        for bits in self.bitmaps_mut() {
            bits.clear_all();
        }
        self.extra.clear();
    }

    pub(crate) fn clear(&mut self) {
        self.count.clear();
        self.deadline.clear();
        for bits in self.bitmaps_mut() {
            bits.reset(0);
        }
        self.extra.clear();
    }

    #[inline]
    pub(crate) fn is_resident(&self, slot: u32) -> bool {
        self.resident.test(slot as usize)
    }

    #[inline]
    pub(crate) fn is_staged(&self, slot: u32) -> bool {
        self.staged.test(slot as usize)
    }

    /// `TTLLock.is_locked()` of a resident slot's read lock: a count above 0
    /// and `now` before the expiry.
    #[inline]
    pub(crate) fn read_live(&self, slot: u32, now: u64) -> bool {
        self.read_locked.test(slot as usize) && now < self.deadline[slot as usize]
    }

    /// `TTLLock.lock_count(n)`: an expired lock starts again from `n`, a held
    /// one adds `n`; either way the expiry moves to `now + ttl`.
    #[inline]
    pub(crate) fn lock_read(&mut self, slot: u32, n: u32, now: u64, ttl: u64) {
        let s = slot as usize;
        let held = self.read_live(slot, now);
        self.count[s] = if held { self.count[s].saturating_add(n) } else { n };
        self.deadline[s] = now.saturating_add(ttl);
        self.read_locked.set(s);
    }

    /// `TTLLock.unlock_count(n)` on a held lock: the count drops by `n`, not
    /// below 0.
    /// Returns whether the count reached 0 (the lock is released).
    #[inline]
    pub(crate) fn unlock_read(&mut self, slot: u32, n: u32) -> bool {
        let s = slot as usize;
        self.count[s] = self.count[s].saturating_sub(n);
        let released = self.count[s] == 0;
        if released {
            self.read_locked.clear(s);
        }
        released
    }

    /// Clears the read-locked bit of every expired read lock, so that
    /// `read_locked` says exactly which read locks are held at `now`.
    pub(crate) fn sweep_read(&mut self, now: u64) {
        let mut expired = Vec::new();
        for slot in self.read_locked.ones() {
            if now >= self.deadline[slot] {
                expired.push(slot);
            }
        }
        for slot in expired {
            self.read_locked.clear(slot);
            self.count[slot] = 0;
        }
    }

    /// Where `tag`'s staging object for `slot` is.
    #[inline]
    pub(crate) fn find_stage(&self, slot: u32, tag: u32) -> Option<StageAt> {
        let s = slot as usize;
        if !self.staged.test(s) {
            return None;
        }
        if self.inline.test(s) && self.count[s] == tag {
            return Some(StageAt::Inline);
        }
        if self.extra.is_empty() {
            return None;
        }
        self.extra.get(&slot)?.iter().position(|staged| staged.tag == tag).map(StageAt::Extra)
    }

    /// The write lock's expiry of a staging object.
    #[inline]
    pub(crate) fn stage_deadline(&self, slot: u32, at: StageAt) -> u64 {
        match at {
            StageAt::Inline => self.deadline[slot as usize],
            StageAt::Extra(i) => self.extra[&slot][i].deadline,
        }
    }

    /// Re-locks a staging object (an expired reservation handed to a new
    /// writer of the same tag) with a new temporary flag.
    #[inline]
    pub(crate) fn relock_stage(&mut self, slot: u32, at: StageAt, deadline: u64, temporary: bool) {
        match at {
            StageAt::Inline => {
                self.deadline[slot as usize] = deadline;
                self.inline_temporary.assign(slot as usize, temporary);
            }
            StageAt::Extra(i) => {
                let staged = &mut self.extra.get_mut(&slot).expect("found before")[i];
                staged.deadline = deadline;
                staged.temporary = temporary;
            }
        }
    }

    /// Adds `tag`'s staging object to `slot` (which has none for `tag`).
    #[inline]
    pub(crate) fn add_stage(&mut self, slot: u32, tag: u32, deadline: u64, temporary: bool) {
        let s = slot as usize;
        if !self.resident.test(s) && !self.inline.test(s) {
            self.inline.set(s);
            self.count[s] = tag;
            self.deadline[s] = deadline;
            self.inline_temporary.assign(s, temporary);
        } else {
            self.extra.entry(slot).or_default().push(Staged { tag, deadline, temporary });
        }
        self.staged.set(s);
    }

    /// Removes a staging object; returns its temporary flag.
    #[inline]
    pub(crate) fn remove_stage(&mut self, slot: u32, at: StageAt) -> bool {
        let s = slot as usize;
        let temporary = match at {
            StageAt::Inline => {
                self.inline.clear(s);
                self.count[s] = 0;
                self.inline_temporary.test(s)
            }
            StageAt::Extra(i) => {
                let list = self.extra.get_mut(&slot).expect("found before");
                let staged = list.swap_remove(i);
                if list.is_empty() {
                    self.extra.remove(&slot);
                }
                staged.temporary
            }
        };
        let still = self.inline.test(s) || (!self.extra.is_empty() && self.extra.contains_key(&slot));
        self.staged.assign(s, still);
        temporary
    }

    /// Makes `slot` resident with a fresh (unlocked) read lock. Its inline
    /// staging object, if another tag's, moves to `extra` first.
    #[inline]
    pub(crate) fn admit(&mut self, slot: u32, temporary: bool) {
        let s = slot as usize;
        if self.inline.test(s) {
            let staged =
                Staged { tag: self.count[s], deadline: self.deadline[s], temporary: self.inline_temporary.test(s) };
            self.extra.entry(slot).or_default().push(staged);
            self.inline.clear(s);
        }
        self.resident.set(s);
        self.temporary.assign(s, temporary);
        self.read_locked.clear(s);
        self.count[s] = 0;
        self.deadline[s] = 0;
    }

    /// `remove_stage(Inline)` then `admit` for a key that is not resident,
    /// the common finish, with the bits they both touch touched once.
    /// Returns the object's temporary flag.
    #[inline]
    pub(crate) fn admit_inline(&mut self, slot: u32) -> bool {
        let s = slot as usize;
        let temporary = self.inline_temporary.test(s);
        self.inline.clear(s);
        if self.extra.is_empty() || !self.extra.contains_key(&slot) {
            self.staged.clear(s);
        }
        self.resident.set(s);
        self.temporary.assign(s, temporary);
        self.count[s] = 0;
        self.deadline[s] = 0;
        temporary
    }

    /// [`admit_inline`](Slots::admit_inline), then `n` read locks until
    /// `deadline` on the new resident object (whose lock was not held).
    #[inline]
    pub(crate) fn admit_inline_locked(&mut self, slot: u32, n: u32, deadline: u64) {
        self.admit_inline(slot);
        self.read_locked.set(slot as usize);
        self.count[slot as usize] = n;
        self.deadline[slot as usize] = deadline;
    }

    /// `remove_stage(Inline)` for a discard: returns whether the slot still
    /// has staging objects (the inline one means it is not resident).
    #[inline]
    pub(crate) fn discard_inline(&mut self, slot: u32) -> bool {
        let s = slot as usize;
        self.inline.clear(s);
        let still = !self.extra.is_empty() && self.extra.contains_key(&slot);
        if !still {
            self.staged.clear(s);
        }
        still
    }

    /// Drops `slot`'s resident object.
    #[inline]
    pub(crate) fn drop_resident(&mut self, slot: u32) {
        let s = slot as usize;
        self.resident.clear(s);
        self.temporary.clear(s);
        self.read_locked.clear(s);
        self.count[s] = 0;
    }

    /// Frees `slot`'s staging objects whose write lock expired at `now` (all
    /// of them when `force`); returns how many.
    pub(crate) fn reclaim_stages(&mut self, slot: u32, now: u64, force: bool) -> usize {
        let s = slot as usize;
        if !self.staged.test(s) {
            return 0;
        }
        let mut freed = 0;
        if self.inline.test(s) && (force || now >= self.deadline[s]) {
            self.inline.clear(s);
            self.count[s] = 0;
            freed += 1;
        }
        if let Some(list) = if self.extra.is_empty() { None } else { self.extra.get_mut(&slot) } {
            let before = list.len();
            list.retain(|staged| !(force || now >= staged.deadline));
            freed += before - list.len();
            if list.is_empty() {
                self.extra.remove(&slot);
            }
        }
        let still = self.inline.test(s) || self.extra.contains_key(&slot);
        self.staged.assign(s, still);
        freed
    }

    /// Whether one of `slot`'s staging objects has an expired write lock.
    #[inline]
    pub(crate) fn has_expired_stage(&self, slot: u32, now: u64) -> bool {
        let s = slot as usize;
        (self.inline.test(s) && now >= self.deadline[s])
            || self.extra.get(&slot).is_some_and(|list| list.iter().any(|staged| now >= staged.deadline))
    }

    /// How many staging objects `slot` has.
    #[inline]
    pub(crate) fn stage_count(&self, slot: u32) -> usize {
        usize::from(self.inline.test(slot as usize)) + self.extra.get(&slot).map_or(0, Vec::len)
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        let bits =
            [&self.resident, &self.read_locked, &self.temporary, &self.staged, &self.inline, &self.inline_temporary]
                .iter()
                .map(|bits| bits.capacity_bits() / 8)
                .sum::<usize>();
        let extra = self.extra.capacity() * (4 + core::mem::size_of::<Vec<Staged>>() + 1)
            + self.extra.values().map(|list| list.capacity() * core::mem::size_of::<Staged>()).sum::<usize>();
        self.count.capacity() * 4 + self.deadline.capacity() * 8 + bits + extra
    }
}
