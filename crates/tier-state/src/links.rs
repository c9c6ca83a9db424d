//! [`Links`]: doubly linked lists threaded through one array of nodes
//! indexed by slot, shared by the policies that keep several orders over one
//! set of slots (S3-FIFO's small and main queues, ARC's four lists, one LRU
//! order per salt). A slot is on at most one list at a time. Each node also
//! holds the policy's tag for the slot (which list, flags, a salt), so an
//! event on a cold slot touches one 12-byte record, not three arrays.

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

/// A slot's links and its policy's tag.
#[derive(Clone, Copy, Debug)]
struct Node {
    prev: u32,
    next: u32,
    tag: u32,
}

/// A slot no policy has touched: on no list, tag 0.
const UNUSED: Node = Node { prev: OFF, next: NIL, tag: 0 };

/// The nodes (slots up to `u32::MAX - 3`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Links {
    nodes: Vec<Node>,
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
        grow(&mut self.nodes, slot as usize + 1, UNUSED);
    }

    /// Slots `0..slots` allocated and initialised: later events never grow.
    pub(crate) fn reserve(&mut self, slots: usize) {
        grow_exact(&mut self.nodes, slots, UNUSED);
    }

    /// How many slots have nodes.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// `slot`'s tag (0 for a slot past the end).
    #[inline]
    pub(crate) fn tag(&self, slot: u32) -> u32 {
        self.nodes.get(slot as usize).map_or(0, |node| node.tag)
    }

    /// `slot`'s tag, to change (the slot must have a node).
    #[inline]
    pub(crate) fn tag_mut(&mut self, slot: u32) -> &mut u32 {
        &mut self.nodes[slot as usize].tag
    }

    /// The slot after `slot` on its list (toward the newest), or [`NIL`].
    #[inline]
    pub(crate) fn next(&self, slot: u32) -> u32 {
        self.nodes[slot as usize].next
    }

    /// Appends `slot` (on no list) at `list`'s newest end.
    #[inline]
    pub(crate) fn push_back(&mut self, list: &mut List, slot: u32) {
        let node = &mut self.nodes[slot as usize];
        node.prev = list.tail;
        node.next = NIL;
        if list.tail == NIL {
            list.head = slot;
        } else {
            self.nodes[list.tail as usize].next = slot;
        }
        list.tail = slot;
        list.len += 1;
    }

    /// Takes `slot` off `list`.
    #[inline]
    pub(crate) fn unlink(&mut self, list: &mut List, slot: u32) {
        let node = &mut self.nodes[slot as usize];
        let (p, n) = (node.prev, node.next);
        node.prev = OFF;
        if p == NIL {
            list.head = n;
        } else {
            self.nodes[p as usize].next = n;
        }
        if n == NIL {
            list.tail = p;
        } else {
            self.nodes[n as usize].prev = p;
        }
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

    /// Forgets every slot, keeping the capacity.
    pub(crate) fn clear(&mut self) {
        self.nodes.clear();
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * core::mem::size_of::<Node>()
    }
}
