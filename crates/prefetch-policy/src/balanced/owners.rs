//! The owners of the classes while a `balanced` plan is routed: which
//! participant takes each class's next keys and how many it still takes,
//! and the per-word class masks the routing splits by.

/// Where each class's keys go next: its current owner and that owner's
/// quota left.
pub(super) struct Owners<const P: usize, const C: usize> {
    /// The current owner of each class.
    pub(super) owner: [u8; C],
    /// That owner's quota left.
    pub(super) left: [u64; C],
}

impl<const P: usize, const C: usize> Owners<P, C> {
    pub(super) fn new(flow: &[[u64; P]; C]) -> Self {
        let mut owners = Owners { owner: [0; C], left: [0; C] };
        for class in 1..C {
            owners.owner[class] = class.trailing_zeros() as u8;
            owners.advance(class, 0, flow);
        }
        owners
    }

    /// Makes the owner of `class` its first participant from `from` on with
    /// a quota; leaves it alone (with nothing left) if there is none.
    pub(super) fn advance(&mut self, class: usize, from: usize, flow: &[[u64; P]; C]) {
        if let Some(next) = (from..P).find(|&p| class >> p & 1 == 1 && flow[class][p] > 0) {
            self.owner[class] = next as u8;
            self.left[class] = flow[class][next];
        } else {
            self.left[class] = 0;
        }
    }

    /// Records that the next `keys` keys of `class` went out, owner after
    /// owner, each up to its quota.
    #[inline]
    pub(super) fn take(&mut self, class: usize, mut keys: u64, flow: &[[u64; P]; C]) {
        while keys > 0 && self.left[class] > 0 {
            let taken = keys.min(self.left[class]);
            self.left[class] -= taken;
            keys -= taken;
            if self.left[class] == 0 {
                self.advance(class, usize::from(self.owner[class]) + 1, flow);
            }
        }
        debug_assert_eq!(keys, 0, "class {class} has more keys than quotas");
    }

    /// Hands out the keys of `class` in `mask` (one word), lowest first,
    /// into `out`: owner after owner, each up to its quota.
    #[inline]
    pub(super) fn split_word(&mut self, class: usize, mut mask: u64, out: &mut [u64; P], flow: &[[u64; P]; C]) {
        while mask != 0 {
            let keys = u64::from(mask.count_ones());
            let owner = usize::from(self.owner[class]);
            let left = self.left[class];
            if keys <= left || left == 0 {
                // (`left == 0` only if the counts were wrong: keep the keys
                // on the last owner rather than lose them.)
                out[owner] |= mask;
                self.take(class, keys.min(left), flow);
                return;
            }
            let rest = clear_lowest_ones(mask, left);
            out[owner] |= mask ^ rest;
            self.take(class, left, flow);
            mask = rest;
        }
    }

    /// The split tables of the outputs (see
    /// [`kernel::split_by_tables`](bitmap_core::kernel::split_by_tables)):
    /// for participant `a`, entry `j` is set if `a` owns the class of `a`
    /// plus the other participants whose bits are set in `j` (the others
    /// in index order).
    pub(super) fn tables(&self) -> [u8; P] {
        core::array::from_fn(|a| {
            (0..1usize << (P - 1)).fold(0u8, |table, others| {
                let below = others & ((1 << a) - 1);
                let class = below | (others >> a) << (a + 1) | 1 << a;
                table | u8::from(usize::from(self.owner[class]) == a) << others
            })
        })
    }

    /// Routes one word: the class masks of `held`, each to its owner, split
    /// where a quota ends.
    #[inline]
    pub(super) fn route_word(&mut self, held: [u64; P], flow: &[[u64; P]; C]) -> [u64; P] {
        let masks = class_masks::<P, C>(held);
        let mut out = [0u64; P];
        for (class, &mask) in masks.iter().enumerate().skip(1) {
            self.split_word(class, mask, &mut out, flow);
        }
        out
    }
}

/// The keys of each class in one word: `masks[c]` has the keys held by
/// exactly the participants in `c`.
#[inline]
pub(super) fn class_masks<const P: usize, const C: usize>(held: [u64; P]) -> [u64; C] {
    let mut masks = [0u64; C];
    masks[0] = u64::MAX;
    for (p, &bits) in held.iter().enumerate() {
        for class in 0..1 << p {
            masks[class | 1 << p] = masks[class] & bits;
            masks[class] &= !bits;
        }
    }
    masks
}

/// The keys of `class` in one word.
#[inline]
pub(super) fn class_mask<const P: usize>(held: &[u64; P], class: usize) -> u64 {
    held.iter().enumerate().fold(u64::MAX, |mask, (p, &bits)| mask & if class >> p & 1 == 1 { bits } else { !bits })
}

/// `bits` without its `n` lowest set bits.
#[inline]
fn clear_lowest_ones(mut bits: u64, n: u64) -> u64 {
    for _ in 0..n {
        bits &= bits.wrapping_sub(1);
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clearing_lowest_ones() {
        assert_eq!(clear_lowest_ones(0b1011_0110, 0), 0b1011_0110);
        assert_eq!(clear_lowest_ones(0b1011_0110, 2), 0b1011_0000);
        assert_eq!(clear_lowest_ones(u64::MAX, 63), 1 << 63);
    }
}
