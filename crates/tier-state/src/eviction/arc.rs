//! [`Arc`]: LMCache's Adaptive Replacement Cache policy
//! (`eviction_policy/arc.py`, read at 58b31084) over slots: T1, T2, B1 and
//! B2 threaded through shared link arrays, with a tag byte per slot for the
//! list, the pending-victim mark and the release-log mark.

use crate::eviction::links::{Links, List, NIL, grow, grow_exact};
use crate::eviction::policy::{Eligible, EvictionPolicy, target_count};

/// Which list a slot is on (the tag's low bits).
const NONE: u8 = 0;
const T1: u8 = 1;
const T2: u8 = 2;
const B1: u8 = 3;
const B2: u8 = 4;
const LIST: u8 = 0b111;
/// Returned as a victim and not yet removed (LMCache's `_pending_evictions`).
const PENDING: u8 = 0b1000;
/// In the release log (so it is logged once).
const LOGGED: u8 = 0b1_0000;
/// Reserved and not yet created (LMCache 0.5.6's `_pending_admissions`):
/// the write that admits it is not an access.
const ADMITTING: u8 = 0b10_0000;

/// LMCache's ARC, 9 bytes a slot (ghosts included):
///
/// - the capacity is the largest resident count (`|T1| + |T2|`) seen;
/// - *created*, batch in reverse: T1 → end of T2; T2 → end of T2; B1 → T2,
///   raising `p` by `max(1, |B2| / |B1|)` up to the capacity; B2 → T2,
///   lowering `p` by `max(1, |B1| / |B2|)` down to 0; others → end of T1.
///   After each slot the capacity is updated and the ghosts trimmed: B1 from
///   its front while `|T1| + |B1|` > capacity, then B2 (or B1 when B2 is
///   empty) while everything held > 2 × capacity. Re-creating a pending
///   victim cancels it;
/// - *reserved* ([`on_reserved`](Arc::on_reserved), LMCache 0.5.6), batch
///   in reverse: the slot leaves whichever list holds it (a B1 or B2 ghost
///   moving `p` as *created* does) for the end of T1, admitting; the
///   *created* that admits it then leaves it where it is;
/// - *touched*, in reverse: T1 → end of T2; T2 → end of T2;
/// - *removed*: a pending victim moves T1 → B1 or T2 → B2; any other slot is
///   forgotten without a ghost; then the ghosts are trimmed;
/// - victims: per victim, T1's next eligible slot if the virtual `|T1|` ≥
///   `int(p)` (the virtual size then drops by one), else (or if T1 has none)
///   T2's, failing that T1's. Victims stay resident and become pending.
///
/// `p` is an `f64` computed as Python computes it.
///
/// Ghosts outlive the removal that makes them, and are kept by slot: a
/// caller that reuses slots must not give a slot to another key while
/// [`remembers`](EvictionPolicy::remembers) holds, and learns from
/// [`drain_released`](EvictionPolicy::drain_released) when the trims drop
/// one.
///
/// ```
/// use tier_state::{Arc, Eligible, EvictionPolicy};
/// let mut arc = Arc::new();
/// arc.on_created(&[1]);
/// arc.on_created(&[2]);
/// let mut out = Vec::new();
/// arc.victims(0.5, Eligible::All, &mut out);
/// assert_eq!(out, [1]);
/// arc.on_removed(&out); // confirmed: 1 becomes a B1 ghost
/// assert_eq!(arc.state().b1, [1]);
/// arc.on_created(&[1]); // a B1 hit: p grows, 1 goes to T2
/// assert_eq!(arc.state().target_t1_size, 1.0);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Arc {
    links: Links,
    tag: Vec<u8>,
    t1: List,
    t2: List,
    b1: List,
    b2: List,
    /// `p`, LMCache's `_target_t1_size`.
    target_t1_size: f64,
    capacity: usize,
    released: Vec<u32>,
    /// The caller's slots name one key each for good: no release log.
    fixed_slots: bool,
}

/// A copy of [`Arc`]'s state: LMCache's `get_debug_state()`.
#[derive(Clone, Debug, PartialEq)]
pub struct ArcState {
    /// T1, oldest first.
    pub t1: Vec<u32>,
    /// T2, oldest first.
    pub t2: Vec<u32>,
    /// B1, oldest first.
    pub b1: Vec<u32>,
    /// B2, oldest first.
    pub b2: Vec<u32>,
    /// The largest resident count seen.
    pub capacity: usize,
    /// `p`.
    pub target_t1_size: f64,
}

impl Arc {
    /// An empty ARC.
    pub fn new() -> Arc {
        Arc::default()
    }

    /// An empty ARC for a caller whose slots each name one key for good,
    /// such as a replay over a trace's dense key ids: the ghosts its trims
    /// drop are forgotten without being logged, and
    /// [`drain_released`](EvictionPolicy::drain_released) has nothing to
    /// give. Its lists, victims and `p` are [`new`](Arc::new)'s. (In the
    /// replay the log cost about 4% of the instructions, and the caller
    /// only emptied it.)
    ///
    /// ```
    /// use tier_state::{Arc, Eligible, EvictionPolicy};
    /// let mut arc = Arc::with_fixed_slots();
    /// arc.on_created(&[1, 2]);
    /// let mut victims = Vec::new();
    /// arc.victims(1.0, Eligible::All, &mut victims);
    /// arc.on_removed(&victims);
    /// arc.on_created(&[3, 4, 5]); // the trims drop ghosts 1 and 2
    /// assert!(!arc.remembers(1));
    /// let mut released = Vec::new();
    /// arc.drain_released(&mut released);
    /// assert!(released.is_empty());
    /// ```
    pub fn with_fixed_slots() -> Arc {
        Arc { fixed_slots: true, ..Arc::default() }
    }

    /// Its lists, capacity and `p` (allocates: for tests and bindings).
    pub fn state(&self) -> ArcState {
        ArcState {
            t1: self.links.collect(&self.t1),
            t2: self.links.collect(&self.t2),
            b1: self.links.collect(&self.b1),
            b2: self.links.collect(&self.b2),
            capacity: self.capacity,
            target_t1_size: self.target_t1_size,
        }
    }

    /// Whether `slot` is a victim not yet removed.
    pub fn is_pending(&self, slot: u32) -> bool {
        self.tag_of(slot) & PENDING != 0
    }

    /// LMCache 0.5.6's `on_keys_reserved`: keys reserved for a write are
    /// tracked at once, so that an abandoned reservation can be evicted,
    /// but the write is not an access. Batch in reverse: a ghost moves `p`
    /// as [`on_created`](EvictionPolicy::on_created) does; the slot leaves
    /// its list (T2 included) for the end of T1, a pending victim no
    /// longer; the capacity is updated and the ghosts trimmed. The
    /// `on_created` that admits the slot leaves it where it is.
    ///
    /// ```
    /// use tier_state::{Arc, EvictionPolicy};
    /// let mut arc = Arc::new();
    /// arc.on_reserved(&[1, 2]);
    /// arc.on_created(&[1, 2]); // admitted: still recent, not frequent
    /// assert_eq!(arc.state().t1, [2, 1]);
    /// arc.on_touched(&[1]); // an access promotes
    /// assert_eq!(arc.state().t2, [1]);
    /// ```
    pub fn on_reserved(&mut self, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            self.links.grow_to(slot);
            grow(&mut self.tag, slot as usize + 1, NONE);
            let tag = self.tag[slot as usize] & !PENDING;
            let list = tag & LIST;
            match list {
                B1 => {
                    let raised = self.target_t1_size + adaptation_delta(self.b1.len, self.b2.len);
                    self.target_t1_size = raised.min(self.capacity as f64);
                }
                B2 => {
                    let lowered = self.target_t1_size - adaptation_delta(self.b2.len, self.b1.len);
                    self.target_t1_size = lowered.max(0.0);
                }
                _ => {}
            }
            self.unlink(slot, list);
            self.links.push_back(&mut self.t1, slot);
            self.tag[slot as usize] = (tag & !LIST) | T1 | ADMITTING;
            self.capacity = self.capacity.max(self.resident());
            self.trim_ghosts();
        }
    }

    #[inline]
    fn tag_of(&self, slot: u32) -> u8 {
        self.tag.get(slot as usize).copied().unwrap_or(NONE)
    }

    #[inline]
    fn list_of(&self, slot: u32) -> u8 {
        self.tag_of(slot) & LIST
    }

    #[inline]
    fn set_list(&mut self, slot: u32, list: u8) {
        let tag = &mut self.tag[slot as usize];
        *tag = (*tag & !LIST) | list;
    }

    #[inline]
    fn resident(&self) -> usize {
        self.t1.len + self.t2.len
    }

    /// Takes `slot` off whichever list holds it.
    #[inline]
    fn unlink(&mut self, slot: u32, list: u8) {
        let list = match list {
            T1 => &mut self.t1,
            T2 => &mut self.t2,
            B1 => &mut self.b1,
            B2 => &mut self.b2,
            _ => return,
        };
        self.links.unlink(list, slot);
    }

    /// Forgets a ghost the trims dropped, logging it for
    /// [`drain_released`](EvictionPolicy::drain_released) once.
    #[inline]
    fn release(&mut self, slot: u32) {
        if self.fixed_slots {
            self.tag[slot as usize] = NONE;
            return;
        }
        let tag = &mut self.tag[slot as usize];
        let logged = *tag & LOGGED != 0;
        *tag = LOGGED;
        if !logged {
            self.released.push(slot);
        }
    }

    /// LMCache's `_trim_ghost_lists`. Called after every created slot, and
    /// inlined there with its trims: in a replay the calls were a tenth of
    /// ARC's instructions (at steady state most creations trim a ghost).
    #[inline(always)]
    fn trim_ghosts(&mut self) {
        if self.capacity == 0 {
            return;
        }
        while self.t1.len + self.b1.len > self.capacity {
            let Some(slot) = self.links.pop_front(&mut self.b1) else { break };
            self.release(slot);
        }
        while self.resident() + self.b1.len + self.b2.len > 2 * self.capacity {
            let ghosts = if self.b2.len > 0 { &mut self.b2 } else { &mut self.b1 };
            let Some(slot) = self.links.pop_front(ghosts) else { break };
            self.release(slot);
        }
    }

    /// Moves a resident slot on `list` to the end of T2 (a T1 promotion or
    /// a T2 refresh); the caller sets its tag's list to T2.
    #[inline(always)]
    fn promote(&mut self, slot: u32, list: u8) {
        if list == T1 {
            self.links.unlink(&mut self.t1, slot);
            self.links.push_back(&mut self.t2, slot);
        } else {
            self.links.move_to_back(&mut self.t2, slot);
        }
    }

    /// The next slot from `cursor` (advancing it) that `eligible` accepts.
    #[inline(always)]
    fn next_eligible(&self, cursor: &mut u32, eligible: &mut impl FnMut(u32) -> bool) -> Option<u32> {
        while *cursor != NIL {
            let slot = *cursor;
            *cursor = self.links.next(slot);
            if eligible(slot) {
                return Some(slot);
            }
        }
        None
    }

    /// Appends up to `target` victims to `out` (see the type's docs): T1's
    /// next eligible slot while its virtual size is at least `boundary`,
    /// else T2's, failing that T1's.
    #[inline(always)]
    fn pick(&self, target: usize, boundary: usize, mut eligible: impl FnMut(u32) -> bool, out: &mut Vec<u32>) {
        let mut virtual_t1 = self.t1.len;
        let (mut t1, mut t2) = (self.t1.head, self.t2.head);
        let start = out.len();
        while out.len() - start < target {
            let mut candidate = None;
            if virtual_t1 >= boundary {
                candidate = self.next_eligible(&mut t1, &mut eligible);
                if candidate.is_some() {
                    virtual_t1 -= 1;
                }
            }
            if candidate.is_none() {
                candidate = self.next_eligible(&mut t2, &mut eligible);
            }
            if candidate.is_none() {
                candidate = self.next_eligible(&mut t1, &mut eligible);
                if candidate.is_some() {
                    virtual_t1 -= 1;
                }
            }
            let Some(slot) = candidate else { break };
            out.push(slot);
        }
    }
}

/// LMCache's `_adaptation_delta`: `max(1.0, len(other) / len(hit))`.
#[inline]
fn adaptation_delta(hit: usize, other: usize) -> f64 {
    (other as f64 / hit as f64).max(1.0)
}

impl EvictionPolicy for Arc {
    fn name(&self) -> &'static str {
        "ARC"
    }

    fn on_created(&mut self, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            self.links.grow_to(slot);
            grow(&mut self.tag, slot as usize + 1, NONE);
            // The tag is read once and written once: the pending mark goes,
            // the list becomes the one the slot lands on.
            let tag = self.tag[slot as usize] & !PENDING;
            if tag & ADMITTING != 0 {
                // The write a reservation announced: not an access, and
                // LMCache neither updates the capacity nor trims here.
                self.tag[slot as usize] = tag & !ADMITTING;
                continue;
            }
            let list = match tag & LIST {
                list @ (T1 | T2) => {
                    self.promote(slot, list);
                    T2
                }
                B1 => {
                    let raised = self.target_t1_size + adaptation_delta(self.b1.len, self.b2.len);
                    self.target_t1_size = raised.min(self.capacity as f64);
                    self.links.unlink(&mut self.b1, slot);
                    self.links.push_back(&mut self.t2, slot);
                    T2
                }
                B2 => {
                    let lowered = self.target_t1_size - adaptation_delta(self.b2.len, self.b1.len);
                    self.target_t1_size = lowered.max(0.0);
                    self.links.unlink(&mut self.b2, slot);
                    self.links.push_back(&mut self.t2, slot);
                    T2
                }
                _ => {
                    self.links.push_back(&mut self.t1, slot);
                    T1
                }
            };
            self.tag[slot as usize] = (tag & !LIST) | list;
            self.capacity = self.capacity.max(self.resident());
            self.trim_ghosts();
        }
    }

    fn on_touched(&mut self, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            if let list @ (T1 | T2) = self.list_of(slot) {
                self.promote(slot, list);
                self.set_list(slot, T2);
            }
        }
    }

    fn on_removed(&mut self, slots: &[u32]) {
        // LMCache returns on an empty batch before trimming.
        if slots.is_empty() {
            return;
        }
        for &slot in slots {
            let tag = self.tag_of(slot);
            let list = tag & LIST;
            if tag & PENDING != 0 {
                // LMCache's `_retire`: a confirmed victim becomes a ghost.
                let (from, to, ghost) = match list {
                    T1 => (&mut self.t1, &mut self.b1, B1),
                    T2 => (&mut self.t2, &mut self.b2, B2),
                    _ => unreachable!("a pending victim is resident"),
                };
                self.links.unlink(from, slot);
                self.links.push_back(to, slot);
                self.tag[slot as usize] = (tag & LOGGED) | ghost;
            } else if list != NONE {
                self.unlink(slot, list);
                self.tag[slot as usize] = tag & LOGGED;
            }
        }
        self.trim_ghosts();
    }

    fn victims(&mut self, ratio: f64, eligible: Eligible<'_>, out: &mut Vec<u32>) {
        let resident = self.resident();
        if resident == 0 {
            return;
        }
        let target = target_count(resident, ratio);
        if target == 0 {
            return;
        }
        self.capacity = self.capacity.max(resident);
        self.target_t1_size = self.target_t1_size.min(self.capacity as f64);
        self.trim_ghosts();

        // `int(p)`: p is never negative, so truncation is Python's int().
        let boundary = self.target_t1_size as usize;
        let start = out.len();
        // Every slot eligible (a replay's checks, LMCache's filter `None`):
        // the walk without a test a slot.
        match eligible {
            Eligible::All => self.pick(target, boundary, |_| true, out),
            mut other => self.pick(target, boundary, |slot| other.test(slot), out),
        }
        for &slot in &out[start..] {
            self.tag[slot as usize] |= PENDING;
        }
    }

    fn num_tracked(&self) -> usize {
        self.resident()
    }

    fn is_tracked(&self, slot: u32) -> bool {
        matches!(self.list_of(slot), T1 | T2)
    }

    fn clear(&mut self) {
        self.links.clear();
        self.tag.clear();
        self.t1 = List::EMPTY;
        self.t2 = List::EMPTY;
        self.b1 = List::EMPTY;
        self.b2 = List::EMPTY;
        self.target_t1_size = 0.0;
        self.capacity = 0;
        self.released.clear();
    }

    fn memory_bytes(&self) -> usize {
        self.links.memory_bytes() + self.tag.capacity() + self.released.capacity() * 4
    }

    fn remembers(&self, slot: u32) -> bool {
        self.list_of(slot) != NONE
    }

    fn drain_released(&mut self, out: &mut Vec<u32>) {
        for slot in self.released.drain(..) {
            let tag = &mut self.tag[slot as usize];
            *tag &= !LOGGED;
            // Re-created on the same slot since: not free after all.
            if *tag & LIST == NONE {
                out.push(slot);
            }
        }
    }

    fn reserve_slots(&mut self, slots: usize) {
        self.links.reserve(slots);
        grow_exact(&mut self.tag, slots, NONE);
    }
}
