//! [`Links`]: doubly linked lists threaded through two arrays indexed by
//! slot, shared by the policies that keep several orders over one set of
//! slots (S3-FIFO's small and main queues, ARC's four lists, one LRU order
//! per salt). A slot is on at most one list at a time; which one is the
//! policy's business (each keeps its own tag per slot).

/// The end of a list.
pub(crate) const NIL: u32 = u32::MAX;
/// `prev` of a slot on no list (kept so a stale link is never followed).
const OFF: u32 = u32::MAX - 1;

/// One list's ends and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct List {
    /// The oldest slot (LMCache's `OrderedDict` front).
    pub(crate) head: u32,
    /// The newest slot.
    pub(crate) tail: u32,
    pub(crate) len: usize,
}

impl List {
    pub(crate) const EMPTY: List = List { head: NIL, tail: NIL, len: 0 };
}

impl Default for List {
    fn default() -> List {
        List::EMPTY
    }
}

/// The `prev`/`next` arrays (slots up to `u32::MAX - 3`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Links {
    prev: Vec<u32>,
    next: Vec<u32>,
}

/// Grows `v` to `need` entries of `fill`, by at least an eighth of its length
/// at a time: amortized O(1) a slot, while capacity stays within 12.5 % of
/// the largest slot seen (the per-key memory bound holds with growth slack).
#[inline]
pub(crate) fn grow<T: Copy>(v: &mut Vec<T>, need: usize, fill: T) {
    if v.len() < need {
        grow_slow(v, need, fill);
    }
}

#[cold]
#[inline(never)]
fn grow_slow<T: Copy>(v: &mut Vec<T>, need: usize, fill: T) {
    if v.capacity() < need {
        let want = need.max(v.len() + v.len() / 8);
        v.reserve_exact(want - v.len());
    }
    v.resize(need, fill);
}

/// Grows `v` to exactly `slots` entries of `fill` (nothing if it has them):
/// what `reserve_slots` does, so later events never grow.
pub(crate) fn grow_exact<T: Copy>(v: &mut Vec<T>, slots: usize, fill: T) {
    if v.len() < slots {
        v.reserve_exact(slots - v.len());
        v.resize(slots, fill);
    }
}

impl Links {
    /// Makes room for `slot`.
    #[inline]
    pub(crate) fn grow_to(&mut self, slot: u32) {
        let need = slot as usize + 1;
        if self.prev.len() < need {
            self.grow_slow(need);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow_slow(&mut self, need: usize) {
        grow(&mut self.prev, need, OFF);
        grow(&mut self.next, need, NIL);
    }

    /// Slots `0..slots` allocated and initialised: later events never grow.
    pub(crate) fn reserve(&mut self, slots: usize) {
        grow_exact(&mut self.prev, slots, OFF);
        grow_exact(&mut self.next, slots, NIL);
    }

    /// The slot after `slot` on its list (toward the newest), or [`NIL`].
    #[inline]
    pub(crate) fn next(&self, slot: u32) -> u32 {
        self.next[slot as usize]
    }

    /// Appends `slot` (on no list) at `list`'s newest end.
    #[inline]
    pub(crate) fn push_back(&mut self, list: &mut List, slot: u32) {
        self.prev[slot as usize] = list.tail;
        self.next[slot as usize] = NIL;
        if list.tail == NIL {
            list.head = slot;
        } else {
            self.next[list.tail as usize] = slot;
        }
        list.tail = slot;
        list.len += 1;
    }

    /// Takes `slot` off `list`.
    #[inline]
    pub(crate) fn unlink(&mut self, list: &mut List, slot: u32) {
        let (p, n) = (self.prev[slot as usize], self.next[slot as usize]);
        if p == NIL {
            list.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            list.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.prev[slot as usize] = OFF;
        list.len -= 1;
    }

    /// Moves `slot` (on `list`) to its newest end.
    #[inline]
    pub(crate) fn move_to_back(&mut self, list: &mut List, slot: u32) {
        if list.tail != slot {
            self.unlink(list, slot);
            self.push_back(list, slot);
        }
    }

    /// Takes the oldest slot off `list`.
    #[inline]
    pub(crate) fn pop_front(&mut self, list: &mut List) -> Option<u32> {
        let head = list.head;
        if head == NIL {
            return None;
        }
        self.unlink(list, head);
        Some(head)
    }

    /// `list`'s slots, oldest first (allocates: for tests and debug views).
    pub(crate) fn collect(&self, list: &List) -> Vec<u32> {
        let mut out = Vec::with_capacity(list.len);
        let mut at = list.head;
        while at != NIL {
            out.push(at);
            at = self.next(at);
        }
        out
    }

    pub(crate) fn clear(&mut self) {
        self.prev.clear();
        self.next.clear();
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        (self.prev.capacity() + self.next.capacity()) * 4
    }
}
