//! [`AdapterMap`], the storage of [`LookupResults`](crate::LookupResults)
//! and [`LoadPlan`](crate::LoadPlan): adapter index → bitmap, sorted by
//! index, with a pool of spare bitmaps; and [`Entries`], its iterator.
//!
//! Why a pool: a controller plans one request after another with the same
//! adapters and similar key counts. If removing an entry dropped its bitmap,
//! every request would free and allocate the same buffers again. Instead the
//! slots past `live` keep their bitmaps, and the next entry takes one of
//! them (resetting its length, which reuses the buffer when it is big
//! enough).

use core::iter::FusedIterator;

use bitmap_core::Bitmap;

/// Adapter index → bitmap, sorted by index, plus spare bitmaps.
#[derive(Default)]
pub(crate) struct AdapterMap {
    /// `slots[..live]` are the entries, strictly ascending by adapter;
    /// `slots[live..]` are spare buffers (their index and bits mean nothing).
    slots: Vec<(usize, Bitmap)>,
    live: usize,
}

impl AdapterMap {
    /// An empty map with `spare` spare bitmaps of `len` bits.
    pub(crate) fn with_spare(spare: usize, len: usize) -> AdapterMap {
        AdapterMap { slots: (0..spare).map(|_| (0, Bitmap::new(len))).collect(), live: 0 }
    }

    /// The entries, ascending by adapter.
    #[inline]
    pub(crate) fn entries(&self) -> &[(usize, Bitmap)] {
        &self.slots[..self.live]
    }

    /// The entries, mutably. Callers may change bits and lengths, not the
    /// adapter indices.
    #[inline]
    pub(crate) fn entries_mut(&mut self) -> &mut [(usize, Bitmap)] {
        &mut self.slots[..self.live]
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.live
    }

    #[inline]
    fn find(&self, adapter: usize) -> Result<usize, usize> {
        self.entries().binary_search_by_key(&adapter, |&(index, _)| index)
    }

    #[inline]
    pub(crate) fn get(&self, adapter: usize) -> Option<&Bitmap> {
        self.find(adapter).ok().map(|at| &self.slots[at].1)
    }

    /// Inserts `bitmap` for `adapter`, returning the bitmap it replaces.
    pub(crate) fn insert(&mut self, adapter: usize, bitmap: Bitmap) -> Option<Bitmap> {
        match self.find(adapter) {
            Ok(at) => Some(core::mem::replace(&mut self.slots[at].1, bitmap)),
            Err(at) => {
                // Shifts the spares too, which keeps them past `live`.
                self.slots.insert(at, (adapter, bitmap));
                self.live += 1;
                None
            }
        }
    }

    /// The bitmap of `adapter`, made `len` clear bits: the existing entry's
    /// buffer, else a spare one, else a new one.
    pub(crate) fn insert_clear(&mut self, adapter: usize, len: usize) -> &mut Bitmap {
        let at = match self.find(adapter) {
            Ok(at) => at,
            Err(at) => {
                if self.live == self.slots.len() {
                    self.slots.push((adapter, Bitmap::new(len)));
                }
                // The first spare moves to `at`; the entries after `at` move
                // up one slot, staying in order.
                self.slots[at..=self.live].rotate_right(1);
                self.slots[at].0 = adapter;
                self.live += 1;
                at
            }
        };
        let bitmap = &mut self.slots[at].1;
        bitmap.reset(len);
        bitmap
    }

    /// Appends an entry for `adapter`, which must be above every current
    /// entry, holding a copy of `source`; reuses a spare buffer if there is
    /// one (and it is large enough, see [`Bitmap::copy_from`]).
    pub(crate) fn push_copy(&mut self, adapter: usize, source: &Bitmap) -> &mut Bitmap {
        debug_assert!(self.entries().last().is_none_or(|&(last, _)| last < adapter));
        if self.live == self.slots.len() {
            self.slots.push((adapter, source.clone()));
        } else {
            let slot = &mut self.slots[self.live];
            slot.0 = adapter;
            slot.1.copy_from(source);
        }
        self.live += 1;
        &mut self.slots[self.live - 1].1
    }

    /// Removes the entry of `adapter` and returns its bitmap.
    pub(crate) fn remove(&mut self, adapter: usize) -> Option<Bitmap> {
        let at = self.find(adapter).ok()?;
        self.live -= 1;
        Some(self.slots.remove(at).1)
    }

    /// Removes every entry, keeping the bitmaps as spares.
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.live = 0;
    }

    /// Keeps the entries with a bit set, in order; the others become spares.
    #[inline(never)]
    pub(crate) fn retain_nonempty(&mut self) {
        self.retain(Bitmap::any);
    }

    /// Keeps the entries whose bitmap satisfies `keep`, in order; the others
    /// become spares.
    #[inline]
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&Bitmap) -> bool) {
        let mut kept = 0;
        for at in 0..self.live {
            if keep(&self.slots[at].1) {
                // Most plans keep every entry: a swap of a slot with itself
                // still moved its 48 bytes through a temporary.
                if kept != at {
                    self.slots.swap(kept, at);
                }
                kept += 1;
            }
        }
        self.live = kept;
    }

    /// Makes the entries exactly `adapters` (strictly ascending), each with a
    /// bitmap of `len` bits whose **contents are unspecified**: the caller
    /// overwrites every word. Reuses spares; allocates only for slots the
    /// pool lacks or buffers too small for `len`.
    pub(crate) fn prepare_overwrite(&mut self, adapters: &[usize], len: usize) -> &mut [(usize, Bitmap)] {
        let slots = self.take_slots(adapters, || Bitmap::new(len));
        for (_, bitmap) in slots.iter_mut() {
            // Same length: the words are about to be overwritten, so skip
            // the clearing `reset` would do.
            if bitmap.len() != len {
                bitmap.reset(len);
            }
        }
        slots
    }

    /// Makes the entries exactly `adapters` (strictly ascending), each with a
    /// bitmap of **unspecified length and contents**, for a caller that
    /// replaces them whole (as `Bitmap::first_wins_split` does). Reuses
    /// spares; new slots get an empty, unallocated bitmap.
    #[inline]
    pub(crate) fn prepare_slots(&mut self, adapters: &[usize]) -> &mut [(usize, Bitmap)] {
        self.take_slots(adapters, Bitmap::empty)
    }

    /// Makes the entries exactly `adapters` (strictly ascending), with the
    /// bitmaps the slots hold: spares first, then `new()` ones for the slots
    /// the pool lacks.
    #[inline]
    fn take_slots(&mut self, adapters: &[usize], new: impl FnMut() -> Bitmap) -> &mut [(usize, Bitmap)] {
        debug_assert!(adapters.windows(2).all(|pair| pair[0] < pair[1]));
        let needed = adapters.len();
        if self.slots.len() < needed {
            let mut new = new;
            self.slots.reserve_exact(needed - self.slots.len());
            self.slots.resize_with(needed, || (0, new()));
        }
        for (slot, &adapter) in self.slots.iter_mut().zip(adapters) {
            slot.0 = adapter;
        }
        self.live = needed;
        &mut self.slots[..needed]
    }

    /// The number of spare bitmaps.
    #[cfg(test)]
    pub(crate) fn spare_count(&self) -> usize {
        self.slots.len() - self.live
    }

    /// Drops the spare bitmaps.
    pub(crate) fn release_spares(&mut self) {
        self.slots.truncate(self.live);
        self.slots.shrink_to_fit();
    }

    /// Builds a map from entries in any order; of entries with the same
    /// adapter, the last wins.
    pub(crate) fn from_unsorted(mut entries: Vec<(usize, Bitmap)>) -> AdapterMap {
        // Stable, so equal adapters keep their order for `dedup_by`.
        entries.sort_by_key(|&(adapter, _)| adapter);
        // `dedup_by` hands (later, earlier kept): move the later one into the
        // kept slot so the last occurrence wins.
        entries.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                core::mem::swap(later, earlier);
            }
            same
        });
        let live = entries.len();
        AdapterMap { slots: entries, live }
    }

    /// The entries, consuming the map (spares are dropped).
    pub(crate) fn into_entries(mut self) -> Vec<(usize, Bitmap)> {
        self.slots.truncate(self.live);
        self.slots
    }
}

impl Clone for AdapterMap {
    /// Clones the entries only; the clone has no spares.
    fn clone(&self) -> AdapterMap {
        AdapterMap { slots: self.entries().to_vec(), live: self.live }
    }
}

impl PartialEq for AdapterMap {
    /// Compares the entries; spares are not part of the value.
    fn eq(&self, other: &AdapterMap) -> bool {
        self.entries() == other.entries()
    }
}

impl Eq for AdapterMap {}

/// An iterator over `(adapter index, &bitmap)` entries, ascending by
/// adapter: from [`LookupResults::iter`](crate::LookupResults::iter) and
/// [`LoadPlan::iter`](crate::LoadPlan::iter).
#[derive(Clone, Debug)]
pub struct Entries<'a> {
    inner: core::slice::Iter<'a, (usize, Bitmap)>,
}

impl<'a> Entries<'a> {
    #[inline]
    pub(crate) fn new(entries: &'a [(usize, Bitmap)]) -> Entries<'a> {
        Entries { inner: entries.iter() }
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = (usize, &'a Bitmap);

    #[inline]
    fn next(&mut self) -> Option<(usize, &'a Bitmap)> {
        self.inner.next().map(|(adapter, bitmap)| (*adapter, bitmap))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl DoubleEndedIterator for Entries<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back().map(|(adapter, bitmap)| (*adapter, bitmap))
    }
}

impl ExactSizeIterator for Entries<'_> {}

impl FusedIterator for Entries<'_> {}

/// An iterator over owned `(adapter index, bitmap)` entries, ascending by
/// adapter: from `LookupResults::into_iter` and `LoadPlan::into_iter`.
#[derive(Debug)]
pub struct IntoEntries {
    inner: std::vec::IntoIter<(usize, Bitmap)>,
}

impl IntoEntries {
    pub(crate) fn new(map: AdapterMap) -> IntoEntries {
        IntoEntries { inner: map.into_entries().into_iter() }
    }
}

impl Iterator for IntoEntries {
    type Item = (usize, Bitmap);

    #[inline]
    fn next(&mut self) -> Option<(usize, Bitmap)> {
        self.inner.next()
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl DoubleEndedIterator for IntoEntries {
    #[inline]
    fn next_back(&mut self) -> Option<(usize, Bitmap)> {
        self.inner.next_back()
    }
}

impl ExactSizeIterator for IntoEntries {}

impl FusedIterator for IntoEntries {}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(s: &str) -> Bitmap {
        s.parse().unwrap()
    }

    fn adapters(map: &AdapterMap) -> Vec<usize> {
        map.entries().iter().map(|&(a, _)| a).collect()
    }

    #[test]
    fn insert_keeps_order_and_replaces() {
        let mut map = AdapterMap::default();
        assert_eq!(map.insert(5, bits("1")), None);
        assert_eq!(map.insert(1, bits("0")), None);
        assert_eq!(map.insert(3, bits("1")), None);
        assert_eq!(map.insert(3, bits("0")), Some(bits("1")));
        assert_eq!(adapters(&map), [1, 3, 5]);
        assert_eq!(map.get(3), Some(&bits("0")));
        assert_eq!(map.get(4), None);
    }

    #[test]
    fn removed_entries_become_spares_and_are_reused() {
        let mut map = AdapterMap::default();
        map.insert(0, bits("11"));
        map.insert(1, bits("01"));
        map.insert(2, bits("10"));
        map.retain(|b| b.test(0));
        assert_eq!(adapters(&map), [0, 2]);
        assert_eq!(map.spare_count(), 1);
        map.clear();
        assert_eq!(map.len(), 0);
        assert_eq!(map.spare_count(), 3);
        // Reuses spares: no growth of the slot vector.
        let bitmap = map.insert_clear(7, 5);
        assert_eq!(bitmap, &Bitmap::new(5));
        bitmap.set(4);
        map.insert_clear(2, 3).set(0);
        map.insert_clear(9, 3);
        assert_eq!(adapters(&map), [2, 7, 9]);
        assert_eq!(map.spare_count(), 0);
        assert_eq!(map.get(7), Some(&bits("00001")));
        // Existing entry: cleared and resized in place.
        assert_eq!(map.insert_clear(2, 4), &Bitmap::new(4));
        // A fourth entry grows the pool.
        map.insert_clear(0, 1);
        assert_eq!(adapters(&map), [0, 2, 7, 9]);
        assert_eq!(map.remove(7), Some(bits("00001")));
        assert_eq!(map.remove(7), None);
        assert_eq!(adapters(&map), [0, 2, 9]);
        map.release_spares();
        assert_eq!(map.spare_count(), 0);
    }

    #[test]
    fn prepare_overwrite_sets_adapters_and_lengths() {
        let mut map = AdapterMap::with_spare(1, 10);
        let slots = map.prepare_overwrite(&[1, 4], 70);
        assert_eq!(slots.len(), 2);
        assert!(slots.iter().all(|(_, b)| b.len() == 70));
        assert_eq!(adapters(&map), [1, 4]);
        map.prepare_overwrite(&[], 3);
        assert_eq!(map.len(), 0);
        assert_eq!(map.spare_count(), 2);
    }

    #[test]
    fn from_unsorted_sorts_and_last_wins() {
        let map = AdapterMap::from_unsorted(vec![(2, bits("1")), (0, bits("0")), (2, bits("0")), (1, bits("1"))]);
        assert_eq!(adapters(&map), [0, 1, 2]);
        assert_eq!(map.get(2), Some(&bits("0")));
    }

    #[test]
    fn equality_and_clone_ignore_spares() {
        let mut a = AdapterMap::default();
        a.insert(0, bits("1"));
        a.insert(1, bits("1"));
        a.remove(1);
        a.insert_clear(1, 1);
        a.retain(|b| b.any());
        let mut b = AdapterMap::default();
        b.insert(0, bits("1"));
        assert!(a == b);
        assert_eq!(a.clone().spare_count(), 0);
    }

    #[test]
    fn iterators_are_exact_and_double_ended() {
        let map = AdapterMap::from_unsorted(vec![(0, bits("1")), (3, bits("0"))]);
        let mut entries = Entries::new(map.entries());
        assert_eq!(entries.len(), 2);
        assert_eq!(entries.next_back().map(|(a, _)| a), Some(3));
        assert_eq!(entries.next().map(|(a, _)| a), Some(0));
        assert_eq!(entries.next(), None);
        let owned: Vec<_> = IntoEntries::new(map).rev().map(|(a, _)| a).collect();
        assert_eq!(owned, [3, 0]);
    }
}
