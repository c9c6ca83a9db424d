//! [`Tier`]: one cache tier's keys and object states, LMCache's
//! `L1Manager` bookkeeping without the memory.

use bitmap_core::Bitmap;

use crate::answer::Answer;
use crate::clock::{Clock, SystemClock};
use crate::config::TierConfig;
use crate::error::TierError;
use crate::eviction::{EvictionPolicy, Lru};
use crate::key::TierKey;
use crate::ops::Words;
use crate::request::Keys;
use crate::table::{KeyTable, Slots};

/// LMCache's `MAX_READ_LOCK_COUNT`: `read_locks` is clamped to `1..=128`.
pub const MAX_READ_LOCK_COUNT: u32 = 128;

/// The largest capacity: slot ids are `u32`, and [`NO_SLOT`](crate::NO_SLOT)
/// is one of them.
pub const MAX_CAPACITY: usize = (u32::MAX - 2) as usize;

/// LMCache's `validate_read_locks`: below 1 → 1, above 128 → 128.
///
/// ```
/// assert_eq!(tier_state::clamp_read_locks(-3), 1);
/// assert_eq!(tier_state::clamp_read_locks(500), 128);
/// ```
pub const fn clamp_read_locks(read_locks: i64) -> u32 {
    if read_locks < 1 {
        1
    } else if read_locks > MAX_READ_LOCK_COUNT as i64 {
        MAX_READ_LOCK_COUNT
    } else {
        read_locks as u32
    }
}

/// The state of one cache tier: which keys it holds, in which state, over
/// dense slots, with LMCache's `L1Manager` rules (see the crate docs).
///
/// Every call is batched and answers in a reusable [`Answer`]: a success
/// mask in request order, each failed key's [`Outcome`](crate::Outcome),
/// and slots for the calls that hand out objects. `Send`, not `Sync`: share
/// it through [`SharedTier`](crate::SharedTier).
#[derive(Debug)]
pub struct Tier {
    pub(crate) config: TierConfig,
    pub(crate) clock: Box<dyn Clock>,
    pub(crate) policy: Box<dyn EvictionPolicy>,
    pub(crate) table: KeyTable,
    pub(crate) slots: Slots,
    /// Resident objects.
    pub(crate) resident_count: usize,
    /// Staging objects (all tags).
    pub(crate) staging_count: usize,
    /// Reused per call: events for the policy.
    pub(crate) events: Vec<u32>,
    /// Reused per call: `reserve_write`'s new staging objects (reported
    /// after its hand-overs, as LMCache orders them).
    pub(crate) allocated: Vec<u32>,
    /// Reused per call: `reserve_write`'s keys that need a new object.
    pub(crate) pending: Vec<(crate::request::Pos, TierKey, bool)>,
    /// Reused per call: a grid request's block per chunk.
    pub(crate) blocks: Vec<u32>,
    /// Reused per call: slots whose ghost history the policy dropped.
    pub(crate) forgotten: Vec<u32>,
    /// Reused per call: a grid request in column form (the word path).
    pub(crate) words: Words,
}

/// Bytes of state per slot (arrays and bits, the block's key and its
/// bucket), for the capacity check.
const BYTES_PER_SLOT: usize = 8 + 4 + 1 + 8 + 4 + 5;

/// The slots of a key-table block for a tier of `rows` rows: `rows`
/// rounded up to a power of two when that is at most 64 (one bitmap word),
/// else 1 (a block per key).
const fn block_width(rows: u32) -> u32 {
    if rows <= 64 { if rows == 0 { 1 } else { rows.next_power_of_two() } } else { 1 }
}

impl Tier {
    /// A tier of `config.capacity` objects on the system clock, with an
    /// [`Lru`] policy.
    ///
    /// # Errors
    ///
    /// [`TierError::ImpossibleCapacity`] past [`MAX_CAPACITY`] or when its
    /// state could not fit in the address space; nothing is allocated
    /// first.
    pub fn new(config: TierConfig) -> Result<Tier, TierError> {
        Tier::with_parts(config, Box::new(SystemClock::new()), Box::new(Lru::new()))
    }

    /// A tier on this clock and this eviction policy.
    ///
    /// # Errors
    ///
    /// As [`Tier::new`].
    pub fn with_parts(
        config: TierConfig,
        clock: Box<dyn Clock>,
        policy: Box<dyn EvictionPolicy>,
    ) -> Result<Tier, TierError> {
        // A block of `width` slots holds at least one object, so the slots
        // may reach capacity × width when the rows of chunks are sparse.
        let width = block_width(config.rows);
        let max_by_ids = MAX_CAPACITY / width as usize;
        if config.capacity > max_by_ids {
            return Err(TierError::ImpossibleCapacity {
                capacity: config.capacity,
                max: max_by_ids,
                reason: if width == 1 { "slot ids are u32" } else { "slot ids (capacity × row block) are u32" },
            });
        }
        let max_by_memory = isize::MAX as usize / BYTES_PER_SLOT / width as usize;
        if config.capacity > max_by_memory {
            return Err(TierError::ImpossibleCapacity {
                capacity: config.capacity,
                max: max_by_memory,
                reason: "its state would not fit in the address space",
            });
        }
        Ok(Tier {
            config,
            clock,
            policy,
            table: KeyTable::new(width, config.capacity),
            slots: Slots::default(),
            resident_count: 0,
            staging_count: 0,
            events: Vec::new(),
            allocated: Vec::new(),
            pending: Vec::new(),
            blocks: Vec::new(),
            forgotten: Vec::new(),
            words: Words::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &TierConfig {
        &self.config
    }

    /// The clock's time now, in ms.
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// The eviction policy.
    pub fn policy(&self) -> &dyn EvictionPolicy {
        &*self.policy
    }

    /// The eviction policy, to ask it for victims with another eligibility.
    pub fn policy_mut(&mut self) -> &mut dyn EvictionPolicy {
        &mut *self.policy
    }

    /// Objects held: resident plus staging (what capacity counts).
    pub fn num_objects(&self) -> usize {
        self.resident_count + self.staging_count
    }

    /// Resident (readable) objects.
    pub fn num_resident(&self) -> usize {
        self.resident_count
    }

    /// Staging objects, all tags.
    pub fn num_staging(&self) -> usize {
        self.staging_count
    }

    /// Keys with a slot (resident or staged).
    pub fn num_keys(&self) -> usize {
        self.table.len()
    }

    /// Slot ids handed out so far: bitmaps over slots have this length.
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// Slots a key-table block: a chunk's rows `r` with the same `r /
    /// block_width` share a block of slots, found with one probe (the
    /// tier's row count rounded up to a power of two when at most 64, else
    /// 1).
    pub fn block_width(&self) -> u32 {
        self.table.width()
    }

    /// The slot of `key`, if the tier has it (resident or staged).
    pub fn slot_of(&self, key: TierKey) -> Option<u32> {
        self.table.find(key).filter(|&slot| !self.slots.is_empty_slot(slot))
    }

    /// The key in a live slot, `None` for a free or unknown one.
    pub fn key_of(&self, slot: u32) -> Option<TierKey> {
        ((slot as usize) < self.slot_count() && !self.slots.is_empty_slot(slot)).then(|| self.table.key(slot))
    }

    /// Whether `key` has a resident (readable) object.
    pub fn is_resident(&self, key: TierKey) -> bool {
        self.slot_of(key).is_some_and(|slot| self.slots.is_resident(slot))
    }

    /// Whether `key`'s resident object is read-locked now (LMCache's
    /// `read_lock.is_locked()`).
    pub fn is_read_locked(&self, key: TierKey) -> bool {
        let now = self.now_ms();
        self.slot_of(key).is_some_and(|slot| self.slots.is_resident(slot) && self.slots.read_live(slot, now))
    }

    /// The read-lock count of `key`'s resident object now: 0 unless held.
    pub fn read_count(&self, key: TierKey) -> u32 {
        let now = self.now_ms();
        match self.slot_of(key) {
            Some(slot) if self.slots.is_resident(slot) && self.slots.read_live(slot, now) => {
                self.slots.count[slot as usize]
            }
            _ => 0,
        }
    }

    /// Whether `key`'s resident object is temporary.
    pub fn is_temporary(&self, key: TierKey) -> bool {
        self.slot_of(key).is_some_and(|slot| self.slots.temporary.test(slot as usize))
    }

    /// How many staging objects (writer tags) `key` has.
    pub fn num_stages(&self, key: TierKey) -> usize {
        self.slot_of(key).map_or(0, |slot| self.slots.stage_count(slot))
    }

    /// Whether `tag` stages `key`, and if so whether its write lock is held
    /// now: `None` (no staging object), `Some(true)` held, `Some(false)`
    /// expired.
    pub fn stage_state(&self, key: TierKey, tag: u32) -> Option<bool> {
        let now = self.now_ms();
        let slot = self.slot_of(key)?;
        let at = self.slots.find_stage(slot, tag)?;
        Some(now < self.slots.stage_deadline(slot, at))
    }

    /// Resident slots, a bitmap over slots.
    pub fn resident(&self) -> &Bitmap {
        &self.slots.resident
    }

    /// Slots whose resident object has a read-lock count; a lock may have
    /// expired since (run [`sweep_expired`](Tier::sweep_expired) first to
    /// have exactly the held ones).
    pub fn read_locked(&self) -> &Bitmap {
        &self.slots.read_locked
    }

    /// Slots with at least one staging object (any tag, held or expired).
    pub fn staged(&self) -> &Bitmap {
        &self.slots.staged
    }

    /// Slots whose resident object is temporary.
    pub fn temporary(&self) -> &Bitmap {
        &self.slots.temporary
    }

    /// Settles expired read locks: an expired lock counts as unlocked, so
    /// its bit in [`read_locked`](Tier::read_locked) is cleared and its
    /// count dropped (the next lock starts from its own count, as
    /// `TTLLock` does). Calls decide expiry at access anyway; this is for
    /// readers of the bitmaps.
    pub fn sweep_expired(&mut self) {
        let now = self.now_ms();
        self.slots.sweep_read(now);
    }

    /// Fills `out` (a bitmap over slots) with the slots LMCache's
    /// `is_key_evictable` accepts now: a resident object whose read lock
    /// is not held, or a staging object whose write lock expired. That is
    /// `resident − read_locked` after [`sweep_expired`](Tier::sweep_expired),
    /// or'ed with the staged slots holding an expired reservation.
    ///
    /// The issue's text reads "resident, not read-locked, not staged";
    /// LMCache's code also accepts a resident key that another tag is
    /// staging (its `delete` then answers `KEY_IS_LOCKED`), and a key whose
    /// reservation expired. This follows the code.
    pub fn evictable_into(&mut self, out: &mut Bitmap) {
        let now = self.now_ms();
        self.slots.sweep_read(now);
        out.copy_from(&self.slots.resident);
        out.difference_with(&self.slots.read_locked);
        for slot in self.slots.staged.ones() {
            if self.slots.has_expired_stage(slot as u32, now) {
                out.set(slot);
            }
        }
    }

    /// Heap bytes of the key table and the state (the policy aside: see
    /// [`EvictionPolicy::memory_bytes`]).
    pub fn memory_bytes(&self) -> usize {
        self.table.memory_bytes() + self.slots.memory_bytes()
    }

    /// [`memory_bytes`](Tier::memory_bytes) per key held (0 when empty).
    pub fn bytes_per_key(&self) -> f64 {
        match self.num_keys() {
            0 => 0.0,
            keys => self.memory_bytes() as f64 / keys as f64,
        }
    }

    /// Checks a batch before a call touches anything: its length fits the
    /// answer's `u32` positions and its rows are below the tier's.
    pub(crate) fn check<K: Keys + ?Sized>(&self, what: &'static str, keys: &K) -> Result<(), TierError> {
        let len = keys.len();
        if len > u32::MAX as usize {
            return Err(TierError::BatchTooLong { what, len, max: u32::MAX as usize });
        }
        if self.config.rows != u32::MAX
            && let Some((index, row)) = keys.first_row_at_least(self.config.rows)
        {
            return Err(TierError::RowOutOfRange { what, index, row, rows: self.config.rows });
        }
        Ok(())
    }

    /// Delivers the collected events to the policy.
    #[inline]
    pub(crate) fn report_created(&mut self) {
        if !self.events.is_empty() {
            self.policy.on_created(&self.events);
            self.unfile_forgotten();
        }
    }

    /// Delivers the collected events, keys removed (emptied, or left with
    /// a staging object), to the policy, then unfiles the blocks they
    /// emptied that the policy does not remember.
    #[inline]
    pub(crate) fn report_removed(&mut self) {
        if !self.events.is_empty() {
            self.policy.on_removed(&self.events);
            let events = core::mem::take(&mut self.events);
            for &slot in &events {
                self.unfile_if_free(slot);
            }
            self.events = events;
            self.unfile_forgotten();
        }
    }

    /// Unfiles the blocks of the slots whose ghost history the policy
    /// dropped on its own (ARC's trims), if nothing else holds them.
    fn unfile_forgotten(&mut self) {
        let mut forgotten = core::mem::take(&mut self.forgotten);
        forgotten.clear();
        self.policy.drain_released(&mut forgotten);
        for &slot in &forgotten {
            self.unfile_if_free(slot);
        }
        self.forgotten = forgotten;
    }

    /// Unfiles `slot`'s block if it is filed, every slot of it is empty,
    /// and the policy remembers none of them (history is kept by slot: a
    /// remembered slot must keep naming its key).
    #[inline]
    pub(crate) fn unfile_if_free(&mut self, slot: u32) {
        if self.table.is_filed(slot)
            && self.slots.is_empty_block(slot, self.table.width())
            && !self.table.block_slots(slot).any(|s| self.policy.remembers(s))
        {
            self.table.unfile(slot);
        }
    }

    pub(crate) fn begin<K: Keys + ?Sized, A: Answer>(&mut self, answer: &mut A, keys: &K, slots: bool) -> u64 {
        answer.begin(keys.shape(), keys.len(), slots);
        self.events.clear();
        self.clock.now_ms()
    }
}
