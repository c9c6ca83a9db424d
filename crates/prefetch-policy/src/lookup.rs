//! [`LookupResults`]: what each L2 adapter reported holding.

use core::fmt;
use std::collections::{BTreeMap, HashMap};

use bitmap_core::Bitmap;

use crate::adapter_map::{AdapterMap, Entries, IntoEntries};

/// The lookup results of one prefetch request: for each adapter that
/// answered, the bitmap of the keys it holds (bit `i` set: it has key `i`).
///
/// Entries are kept sorted by adapter index, one per adapter, so planning
/// walks them in order without sorting. As a map, inserting an index again
/// replaces the bitmap.
///
/// # Reuse
///
/// [`clear`](LookupResults::clear) keeps the bitmaps as spare buffers and
/// [`insert_clear`](LookupResults::insert_clear) hands one out again, so a
/// controller that fills the same `LookupResults` for every request does not
/// allocate once warmed up.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::LookupResults;
///
/// let mut lookup = LookupResults::new();
/// lookup.insert(1, "0110".parse()?);
/// lookup.insert(0, "1100".parse()?);
/// assert_eq!(lookup.indices().collect::<Vec<_>>(), [0, 1]);
/// assert_eq!(lookup.get(1).map(Bitmap::to_string).as_deref(), Some("0110"));
///
/// // Next request: same buffers.
/// lookup.clear();
/// lookup.insert_clear(0, 4).set(3);
/// assert_eq!(lookup.len(), 1);
/// # Ok::<(), bitmap_core::BitmapError>(())
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct LookupResults {
    map: AdapterMap,
}

impl LookupResults {
    /// No entries.
    pub fn new() -> LookupResults {
        LookupResults::default()
    }

    /// No entries, with `adapters` spare bitmaps of `num_keys` bits, so the
    /// first [`insert_clear`](LookupResults::insert_clear)s up to that size
    /// do not allocate.
    pub fn with_capacity(num_keys: usize, adapters: usize) -> LookupResults {
        LookupResults { map: AdapterMap::with_spare(adapters, num_keys) }
    }

    /// The number of entries (adapters that answered).
    #[inline]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there are no entries.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }

    /// The bitmap of `adapter`, if it answered.
    #[inline]
    pub fn get(&self, adapter: usize) -> Option<&Bitmap> {
        self.map.get(adapter)
    }

    /// Whether `adapter` has an entry.
    #[inline]
    pub fn contains(&self, adapter: usize) -> bool {
        self.map.get(adapter).is_some()
    }

    /// The entries, ascending by adapter index.
    #[inline]
    pub fn iter(&self) -> Entries<'_> {
        Entries::new(self.map.entries())
    }

    /// The adapter indices, ascending.
    pub fn indices(&self) -> impl DoubleEndedIterator<Item = usize> + ExactSizeIterator + '_ {
        self.map.entries().iter().map(|&(adapter, _)| adapter)
    }

    /// Sets the bitmap of `adapter`, returning the one it replaces.
    pub fn insert(&mut self, adapter: usize, bitmap: Bitmap) -> Option<Bitmap> {
        self.map.insert(adapter, bitmap)
    }

    /// Makes the bitmap of `adapter` `num_keys` clear bits and returns it for
    /// filling in: the entry's own buffer if it has one, else a spare one,
    /// else a new one.
    pub fn insert_clear(&mut self, adapter: usize, num_keys: usize) -> &mut Bitmap {
        self.map.insert_clear(adapter, num_keys)
    }

    /// Removes the entry of `adapter` and returns its bitmap.
    pub fn remove(&mut self, adapter: usize) -> Option<Bitmap> {
        self.map.remove(adapter)
    }

    /// Removes every entry, keeping the bitmaps as spare buffers for
    /// [`insert_clear`](LookupResults::insert_clear).
    pub fn clear(&mut self) {
        self.map.clear();
    }

    /// Frees the spare buffers that [`clear`](LookupResults::clear) kept.
    pub fn release_spares(&mut self) {
        self.map.release_spares();
    }

    /// The entries as stored, ascending by adapter.
    #[inline]
    pub(crate) fn entries(&self) -> &[(usize, Bitmap)] {
        self.map.entries()
    }

    pub(crate) fn map_mut(&mut self) -> &mut AdapterMap {
        &mut self.map
    }
}

impl fmt::Debug for LookupResults {
    /// As a map from adapter index to bit string (bit 0 first).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter().map(|(adapter, bitmap)| (adapter, DisplayAsDebug(bitmap)))).finish()
    }
}

/// Formats a value's `Display` where `Debug` is asked for.
pub(crate) struct DisplayAsDebug<T>(pub(crate) T);

impl<T: fmt::Display> fmt::Debug for DisplayAsDebug<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl FromIterator<(usize, Bitmap)> for LookupResults {
    /// Of entries with the same adapter index, the last wins (as when
    /// collecting into a map).
    fn from_iter<I: IntoIterator<Item = (usize, Bitmap)>>(iter: I) -> LookupResults {
        LookupResults { map: AdapterMap::from_unsorted(iter.into_iter().collect()) }
    }
}

impl Extend<(usize, Bitmap)> for LookupResults {
    /// Inserts each entry; a repeated adapter index replaces the bitmap.
    fn extend<I: IntoIterator<Item = (usize, Bitmap)>>(&mut self, iter: I) {
        for (adapter, bitmap) in iter {
            self.insert(adapter, bitmap);
        }
    }
}

impl From<BTreeMap<usize, Bitmap>> for LookupResults {
    fn from(map: BTreeMap<usize, Bitmap>) -> LookupResults {
        map.into_iter().collect()
    }
}

impl<S> From<HashMap<usize, Bitmap, S>> for LookupResults {
    fn from(map: HashMap<usize, Bitmap, S>) -> LookupResults {
        map.into_iter().collect()
    }
}

impl<const N: usize> From<[(usize, Bitmap); N]> for LookupResults {
    fn from(entries: [(usize, Bitmap); N]) -> LookupResults {
        entries.into_iter().collect()
    }
}

impl<'a> IntoIterator for &'a LookupResults {
    type Item = (usize, &'a Bitmap);
    type IntoIter = Entries<'a>;

    fn into_iter(self) -> Entries<'a> {
        self.iter()
    }
}

impl IntoIterator for LookupResults {
    type Item = (usize, Bitmap);
    type IntoIter = IntoEntries;

    fn into_iter(self) -> IntoEntries {
        IntoEntries::new(self.map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(s: &str) -> Bitmap {
        s.parse().unwrap()
    }

    #[test]
    fn conversions_sort_by_index() {
        let from_array = LookupResults::from([(2, bits("01")), (0, bits("10"))]);
        let from_btree = LookupResults::from(BTreeMap::from([(0, bits("10")), (2, bits("01"))]));
        let from_hash = LookupResults::from(HashMap::from([(2, bits("01")), (0, bits("10"))]));
        assert_eq!(from_array, from_btree);
        assert_eq!(from_array, from_hash);
        assert_eq!(from_array.indices().collect::<Vec<_>>(), [0, 2]);
        let owned: Vec<(usize, Bitmap)> = from_array.clone().into_iter().collect();
        assert_eq!(owned, [(0, bits("10")), (2, bits("01"))]);
        let borrowed: Vec<usize> = (&from_array).into_iter().map(|(a, _)| a).collect();
        assert_eq!(borrowed, [0, 2]);
    }

    #[test]
    fn collecting_and_extending_keep_the_last_duplicate() {
        let mut lookup: LookupResults = [(1, bits("1")), (1, bits("0"))].into_iter().collect();
        assert_eq!(lookup.get(1), Some(&bits("0")));
        lookup.extend([(1, bits("1")), (0, bits("0"))]);
        assert_eq!(lookup.get(1), Some(&bits("1")));
        assert_eq!(lookup.len(), 2);
        assert!(lookup.contains(0) && !lookup.contains(2));
    }

    #[test]
    fn map_operations() {
        let mut lookup = LookupResults::with_capacity(8, 2);
        assert!(lookup.is_empty());
        lookup.insert_clear(4, 8).set(7);
        assert_eq!(lookup.insert(4, bits("1")), Some(bits("00000001")));
        assert_eq!(lookup.remove(4), Some(bits("1")));
        assert!(lookup.is_empty());
        lookup.insert(0, bits("01"));
        lookup.clear();
        assert!(lookup.is_empty());
        lookup.release_spares();
        assert!(lookup.is_empty());
    }

    #[test]
    fn debug_shows_bit_strings() {
        let lookup = LookupResults::from([(0, bits("101")), (3, bits("011"))]);
        assert_eq!(format!("{lookup:?}"), "{0: 101, 3: 011}");
    }
}
