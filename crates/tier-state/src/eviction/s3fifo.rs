//! [`S3Fifo`]: LMCache's S3-FIFO policy (`eviction_policy/s3fifo.py`, read
//! at 604f3ae3) over slots: a small and a main FIFO threaded through shared
//! link arrays, and the ghost set as a tag per slot.

use crate::eviction::links::{Links, List, grow, grow_exact};
use crate::eviction::policy::{Eligible, EvictionPolicy, target_count};

/// A slot on no list and not a ghost.
const NONE: u8 = 0;
const SMALL: u8 = 1;
const MAIN: u8 = 2;
const GHOST: u8 = 3;

/// LMCache's S3-FIFO, 9 bytes a slot:
///
/// - *created*, in batch order: a slot in small or main is left alone; a
///   ghost goes to the end of main and stops being a ghost; any other slot
///   goes to the end of small. Then, with a `small_max_size`, small is
///   trimmed from its front into the ghost set;
/// - *touched*, in batch order: small → end of main, main → end of main;
/// - *removed*: the slot leaves small, main and the ghost set;
/// - victims come from small front to back, then main, skipping the
///   ineligible. Unlike LMCache's other policies, S3-FIFO **forgets its
///   victims when it returns them**: each leaves its queue at selection and
///   becomes a ghost (LMCache pops them in `get_eviction_actions`). The
///   ghost set has no bound; a ghost leaves through *removed* or a
///   re-creation. So every ghost is a key the tier still holds (a victim
///   not yet deleted, or a small-queue trim), and after *removed* a slot is
///   never remembered: a caller may reuse it for another key.
///
/// ```
/// use tier_state::{Eligible, EvictionPolicy, S3Fifo};
/// let mut s3 = S3Fifo::new();
/// s3.on_created(&[0, 1, 2]); // small: 0, 1, 2
/// s3.on_touched(&[0]);       // small: 1, 2; main: 0
/// let mut out = Vec::new();
/// s3.victims(0.67, Eligible::All, &mut out);
/// assert_eq!(out, [1, 2]);
/// assert_eq!(s3.num_tracked(), 1); // 1 and 2 are ghosts now
/// s3.on_created(&[2]);             // a ghost comes back: to main
/// assert_eq!(s3.main(), [0, 2]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct S3Fifo {
    links: Links,
    tag: Vec<u8>,
    small: List,
    main: List,
    ghosts: usize,
    small_max_size: Option<usize>,
}

impl S3Fifo {
    /// An empty S3-FIFO with no bound on small (LMCache's default).
    pub fn new() -> S3Fifo {
        S3Fifo::default()
    }

    /// An empty S3-FIFO whose small queue is trimmed to `small_max_size`
    /// after each *created* batch (LMCache's `small_max_size`).
    pub fn with_small_max_size(small_max_size: Option<usize>) -> S3Fifo {
        S3Fifo { small_max_size, ..S3Fifo::default() }
    }

    /// The small queue, oldest first (allocates: for tests).
    pub fn small(&self) -> Vec<u32> {
        self.links.collect(&self.small)
    }

    /// The main queue, oldest first (allocates: for tests).
    pub fn main(&self) -> Vec<u32> {
        self.links.collect(&self.main)
    }

    /// How many ghosts it holds.
    pub fn num_ghosts(&self) -> usize {
        self.ghosts
    }

    /// The ghost set, ascending (allocates: for tests).
    pub fn ghosts(&self) -> Vec<u32> {
        (0..self.tag.len() as u32).filter(|&slot| self.tag[slot as usize] == GHOST).collect()
    }

    #[inline]
    fn tag_of(&self, slot: u32) -> u8 {
        self.tag.get(slot as usize).copied().unwrap_or(NONE)
    }

    #[inline]
    fn grow_to(&mut self, slot: u32) {
        self.links.grow_to(slot);
        grow(&mut self.tag, slot as usize + 1, NONE);
    }

    /// Moves the first eligible slots of `list` (up to `target` victims in
    /// `out` in all) to the ghost set.
    fn take_from(
        &mut self,
        from_main: bool,
        target: usize,
        eligible: &mut Eligible<'_>,
        out: &mut Vec<u32>,
        taken: &mut usize,
    ) {
        let mut at = if from_main { self.main.head } else { self.small.head };
        while at != crate::eviction::links::NIL && *taken < target {
            let next = self.links.next(at);
            if eligible.test(at) {
                let list = if from_main { &mut self.main } else { &mut self.small };
                self.links.unlink(list, at);
                self.tag[at as usize] = GHOST;
                self.ghosts += 1;
                out.push(at);
                *taken += 1;
            }
            at = next;
        }
    }
}

impl EvictionPolicy for S3Fifo {
    fn name(&self) -> &'static str {
        "S3FIFO"
    }

    fn on_created(&mut self, slots: &[u32]) {
        for &slot in slots {
            self.grow_to(slot);
            match self.tag[slot as usize] {
                SMALL | MAIN => continue,
                GHOST => {
                    self.ghosts -= 1;
                    self.links.push_back(&mut self.main, slot);
                    self.tag[slot as usize] = MAIN;
                }
                _ => {
                    self.links.push_back(&mut self.small, slot);
                    self.tag[slot as usize] = SMALL;
                }
            }
        }
        if let Some(max) = self.small_max_size {
            while self.small.len > max {
                let Some(slot) = self.links.pop_front(&mut self.small) else { break };
                self.tag[slot as usize] = GHOST;
                self.ghosts += 1;
            }
        }
    }

    fn on_touched(&mut self, slots: &[u32]) {
        for &slot in slots {
            match self.tag_of(slot) {
                SMALL => {
                    self.links.unlink(&mut self.small, slot);
                    self.links.push_back(&mut self.main, slot);
                    self.tag[slot as usize] = MAIN;
                }
                MAIN => self.links.move_to_back(&mut self.main, slot),
                _ => {}
            }
        }
    }

    fn on_removed(&mut self, slots: &[u32]) {
        for &slot in slots {
            match self.tag_of(slot) {
                SMALL => self.links.unlink(&mut self.small, slot),
                MAIN => self.links.unlink(&mut self.main, slot),
                GHOST => self.ghosts -= 1,
                _ => continue,
            }
            self.tag[slot as usize] = NONE;
        }
    }

    fn victims(&mut self, ratio: f64, mut eligible: Eligible<'_>, out: &mut Vec<u32>) {
        let target = target_count(self.small.len + self.main.len, ratio);
        let mut taken = 0;
        self.take_from(false, target, &mut eligible, out, &mut taken);
        self.take_from(true, target, &mut eligible, out, &mut taken);
    }

    fn num_tracked(&self) -> usize {
        self.small.len + self.main.len
    }

    fn is_tracked(&self, slot: u32) -> bool {
        matches!(self.tag_of(slot), SMALL | MAIN)
    }

    fn clear(&mut self) {
        self.links.clear();
        self.tag.clear();
        self.small = List::EMPTY;
        self.main = List::EMPTY;
        self.ghosts = 0;
    }

    fn memory_bytes(&self) -> usize {
        self.links.memory_bytes() + self.tag.capacity()
    }

    fn remembers(&self, slot: u32) -> bool {
        self.tag_of(slot) != NONE
    }

    fn reserve_slots(&mut self, slots: usize) {
        self.links.reserve(slots);
        grow_exact(&mut self.tag, slots, NONE);
    }
}
