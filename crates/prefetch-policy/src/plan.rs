//! [`LoadPlan`]: which adapter loads which keys, and what a controller does
//! with it (merge, prefix, trim, unlock masks, gather).
//!
//! Validation against a contract is in `validate.rs`.

use core::fmt;

use bitmap_core::{Bitmap, kernel};

use crate::adapter_map::{AdapterMap, Entries, IntoEntries};
use crate::error::PlanError;
use crate::lookup::{DisplayAsDebug, LookupResults};

/// Words of the merged plan computed at a time on the stack by
/// [`LoadPlan::prefix_len`] and [`LoadPlan::planned_count`]: 512 bytes, big
/// enough for the SIMD kernels to run at speed, small enough to stay in L1.
const MERGE_BLOCK_WORDS: usize = 64;

/// A load plan: for each adapter with something to load, the bitmap of the
/// keys it loads (bit `i` set: it loads key `i`).
///
/// Entries are in ascending adapter order; an adapter with nothing to load
/// has no entry (so [`get`](LoadPlan::get) returning `None` means "loads
/// nothing"). Every bitmap has [`num_keys`](LoadPlan::num_keys) bits. A
/// plan made by a policy loads each key from at most one adapter and only
/// from an adapter that holds it; [`validate`](LoadPlan::validate) checks
/// that and more.
///
/// # Reuse
///
/// A `LoadPlan` keeps the bitmaps of entries it drops as spare buffers, and
/// planning into it ([`PrefetchPolicy::select_load_plan_into`]) reuses them.
/// Once it has held as many entries as a request needs, at that many keys
/// or more — after one warm-up plan, or from
/// [`with_capacity`](LoadPlan::with_capacity) — planning into it allocates
/// nothing.
///
/// [`PrefetchPolicy::select_load_plan_into`]: crate::PrefetchPolicy::select_load_plan_into
///
/// ```
/// use prefetch_policy::{AdapterDescriptor, DefaultPolicy, Keys, LoadPlan, LookupResults, PrefetchPolicy};
///
/// let lookup = LookupResults::from([(0, "11010".parse()?), (1, "01111".parse()?)]);
/// let adapters = [AdapterDescriptor::new(0, "dram"), AdapterDescriptor::new(1, "disk")];
/// let mut plan = LoadPlan::with_capacity(5, 2);
/// DefaultPolicy::new().select_load_plan_into(Keys::count(5), &lookup, &adapters, &mut plan)?;
///
/// assert_eq!(plan.to_index_lists(), [(0, vec![0, 1, 3]), (1, vec![2, 4])]);
/// assert_eq!(plan.merged().to_string(), "11111");
/// assert_eq!(plan.prefix_len(), 5);
/// plan.trim_to_prefix(2);
/// assert_eq!(plan.to_index_lists(), [(0, vec![0, 1])]); // adapter 1 left empty: gone
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct LoadPlan {
    num_keys: usize,
    map: AdapterMap,
}

/// # Construction and reuse
impl LoadPlan {
    /// An empty plan (nothing to load) over `num_keys` keys.
    pub fn new(num_keys: usize) -> LoadPlan {
        LoadPlan { num_keys, map: AdapterMap::default() }
    }

    /// An empty plan over `num_keys` keys with spare bitmaps for `adapters`
    /// entries, so that planning up to `num_keys` keys across up to
    /// `adapters` adapters into it never allocates (sequentially, with at
    /// most [`MAX_INLINE_ADAPTERS`](crate::MAX_INLINE_ADAPTERS) listed
    /// adapters).
    pub fn with_capacity(num_keys: usize, adapters: usize) -> LoadPlan {
        LoadPlan { num_keys, map: AdapterMap::with_spare(adapters, num_keys) }
    }

    /// A plan from `(adapter, bitmap)` entries in any order; entries whose
    /// bitmap has no bit set are left out.
    ///
    /// # Errors
    ///
    /// [`PlanError::PlanLengthMismatch`] for a bitmap that does not have
    /// `num_keys` bits, [`PlanError::DuplicateAdapterIndex`] for an adapter
    /// given twice.
    ///
    /// ```
    /// use prefetch_policy::{LoadPlan, PlanError};
    /// let plan = LoadPlan::from_entries(3, [(2, "001".parse()?), (0, "110".parse()?), (1, "000".parse()?)])?;
    /// assert_eq!(plan.to_index_lists(), [(0, vec![0, 1]), (2, vec![2])]);
    /// let error = LoadPlan::from_entries(3, [(0, "11".parse()?)]).unwrap_err();
    /// assert_eq!(error, PlanError::PlanLengthMismatch { adapter: 0, expected: 3, actual: 2 });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_entries(
        num_keys: usize,
        entries: impl IntoIterator<Item = (usize, Bitmap)>,
    ) -> Result<LoadPlan, PlanError> {
        let mut plan = LoadPlan::new(num_keys);
        for (adapter, bitmap) in entries {
            if plan.insert(adapter, bitmap)?.is_some() {
                return Err(PlanError::DuplicateAdapterIndex { index: adapter });
            }
        }
        plan.remove_empty();
        Ok(plan)
    }

    /// Empties the plan and makes it cover `num_keys` keys, keeping the
    /// bitmaps as spare buffers: the start of writing a plan by hand (see
    /// [`insert_clear`](LoadPlan::insert_clear)).
    pub fn reset(&mut self, num_keys: usize) {
        self.num_keys = num_keys;
        self.map.clear();
    }

    /// Sets the bitmap of `adapter`, returning the one it replaces.
    ///
    /// The bitmap is stored even if no bit is set; a policy that builds a
    /// plan this way calls [`remove_empty`](LoadPlan::remove_empty) at the
    /// end.
    ///
    /// # Errors
    ///
    /// [`PlanError::PlanLengthMismatch`] if the bitmap does not have
    /// [`num_keys`](LoadPlan::num_keys) bits; the plan is unchanged.
    pub fn insert(&mut self, adapter: usize, bitmap: Bitmap) -> Result<Option<Bitmap>, PlanError> {
        if bitmap.len() != self.num_keys {
            return Err(PlanError::PlanLengthMismatch { adapter, expected: self.num_keys, actual: bitmap.len() });
        }
        Ok(self.map.insert(adapter, bitmap))
    }

    /// Makes the bitmap of `adapter` [`num_keys`](LoadPlan::num_keys) clear
    /// bits and returns it for filling in, reusing the entry's buffer or a
    /// spare one: with [`reset`](LoadPlan::reset) and
    /// [`remove_empty`](LoadPlan::remove_empty), how a policy writes a plan
    /// without allocating.
    ///
    /// Set bits through it; do not change its length (a plan whose bitmaps
    /// have other lengths fails [`validate`](LoadPlan::validate), and the
    /// other methods treat it as a caller bug and panic).
    ///
    /// ```
    /// use prefetch_policy::LoadPlan;
    /// let mut plan = LoadPlan::with_capacity(4, 2);
    /// plan.reset(4);
    /// plan.insert_clear(1).set_range(2..);
    /// plan.insert_clear(0);
    /// plan.remove_empty();
    /// assert_eq!(plan.to_index_lists(), [(1, vec![2, 3])]);
    /// ```
    pub fn insert_clear(&mut self, adapter: usize) -> &mut Bitmap {
        self.map.insert_clear(adapter, self.num_keys)
    }

    /// Removes the entry of `adapter` and returns its bitmap.
    pub fn remove(&mut self, adapter: usize) -> Option<Bitmap> {
        self.map.remove(adapter)
    }

    /// Removes the entries with no bit set, keeping their buffers as spares.
    #[inline]
    pub fn remove_empty(&mut self) {
        // Most plans have nothing to remove: finding that out is a read of
        // each entry's first word, inline, and the moves are out of line.
        if !self.map.entries().iter().all(|(_, bitmap)| bitmap.any()) {
            self.map.retain_nonempty();
        }
    }

    /// Frees the spare buffers the plan keeps for reuse.
    pub fn release_spares(&mut self) {
        self.map.release_spares();
    }

    pub(crate) fn map_mut(&mut self) -> &mut AdapterMap {
        &mut self.map
    }
}

/// # Reading
impl LoadPlan {
    /// The number of keys the plan covers: the length of every bitmap.
    #[inline]
    pub fn num_keys(&self) -> usize {
        self.num_keys
    }

    /// The number of adapters with something to load.
    #[inline]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no adapter loads anything.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }

    /// The keys `adapter` loads, or `None` if it loads nothing.
    #[inline]
    pub fn get(&self, adapter: usize) -> Option<&Bitmap> {
        self.map.get(adapter)
    }

    /// Whether `adapter` loads anything.
    #[inline]
    pub fn contains_adapter(&self, adapter: usize) -> bool {
        self.map.get(adapter).is_some()
    }

    /// The `(adapter, keys)` entries, ascending by adapter.
    #[inline]
    pub fn iter(&self) -> Entries<'_> {
        Entries::new(self.map.entries())
    }

    /// The adapters that load something, ascending.
    pub fn adapters(&self) -> impl DoubleEndedIterator<Item = usize> + ExactSizeIterator + '_ {
        self.map.entries().iter().map(|&(adapter, _)| adapter)
    }

    /// Each adapter with the indices of the keys it loads: the plan in the
    /// seed's `{adapter: [keys]}` shape, for tests, reports and JSON.
    pub fn to_index_lists(&self) -> Vec<(usize, Vec<usize>)> {
        self.iter().map(|(adapter, bitmap)| (adapter, bitmap.to_indices())).collect()
    }

    /// The keys loaded from any adapter, as a new bitmap.
    pub fn merged(&self) -> Bitmap {
        let mut merged = Bitmap::new(0);
        self.merged_into(&mut merged);
        merged
    }

    /// Writes the keys loaded from any adapter into `out`, reusing its
    /// buffer (no allocation if it holds [`num_keys`](LoadPlan::num_keys)
    /// bits).
    pub fn merged_into(&self, out: &mut Bitmap) {
        match self.map.entries() {
            [] => out.reset(self.num_keys),
            [(_, first), rest @ ..] => {
                out.copy_from(first);
                for (_, bitmap) in rest {
                    out.union_with(bitmap);
                }
            }
        }
    }

    /// The number of keys loaded from any adapter.
    pub fn planned_count(&self) -> usize {
        match self.map.entries() {
            [] => 0,
            [(_, only)] => only.popcount(),
            _ => {
                let mut count = 0;
                self.for_each_merged_block(|_, block| {
                    count += kernel::popcount(block) as usize;
                    None::<()>
                });
                count
            }
        }
    }

    /// The length of the run of loaded keys from key 0: the number of
    /// leading ones of the [`merged`](LoadPlan::merged) bitmap. Computed a
    /// block of words at a time on the stack, without building the merged
    /// bitmap.
    ///
    /// ```
    /// use prefetch_policy::LoadPlan;
    /// let plan = LoadPlan::from_entries(6, [(0, "110100".parse()?), (1, "001010".parse()?)])?;
    /// assert_eq!(plan.prefix_len(), 5);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn prefix_len(&self) -> usize {
        match self.map.entries() {
            [] => 0,
            [(_, only)] => only.count_leading_ones(),
            _ => self
                .for_each_merged_block(|first_word, block| {
                    let word = kernel::position_not_all_ones(block)?;
                    let bits = (first_word + word) * 64 + block[word].trailing_ones() as usize;
                    Some(bits.min(self.num_keys))
                })
                .unwrap_or(self.num_keys),
        }
    }

    /// Calls `visit(first_word, merged_words)` for each block of the merged
    /// bitmap's words, in order, until it returns `Some`.
    fn for_each_merged_block<R>(&self, mut visit: impl FnMut(usize, &[u64]) -> Option<R>) -> Option<R> {
        let entries = self.map.entries();
        let (first, rest) = entries.split_first()?;
        let words = first.1.num_words();
        let mut merged = [0u64; MERGE_BLOCK_WORDS];
        for start in (0..words).step_by(MERGE_BLOCK_WORDS) {
            let end = words.min(start + MERGE_BLOCK_WORDS);
            let block = &mut merged[..end - start];
            block.copy_from_slice(&first.1.as_words()[start..end]);
            for (_, bitmap) in rest {
                kernel::or_assign(block, &bitmap.as_words()[start..end]);
            }
            if let Some(result) = visit(start, block) {
                return Some(result);
            }
        }
        None
    }
}

/// # What a controller does with a plan
impl LoadPlan {
    /// Keeps only keys `0..n`: clears every later key and removes the
    /// adapters left with nothing to load (their buffers stay as spares).
    /// The bitmaps keep their length, [`num_keys`](LoadPlan::num_keys).
    pub fn trim_to_prefix(&mut self, n: usize) {
        if n >= self.num_keys {
            return;
        }
        for (_, bitmap) in self.map.entries_mut() {
            bitmap.clear_range(n..);
        }
        self.remove_empty();
    }

    /// Trims the plan to its [`prefix_len`](LoadPlan::prefix_len) and
    /// returns that length: only a contiguous run of keys from key 0 is
    /// useful to the model, so LMCache's controller loads nothing after the
    /// first key no adapter will load.
    ///
    /// ```
    /// use prefetch_policy::LoadPlan;
    /// let mut plan = LoadPlan::from_entries(5, [(0, "11010".parse()?), (1, "00001".parse()?)])?;
    /// assert_eq!(plan.trim_to_loadable_prefix(), 2);
    /// assert_eq!(plan.to_index_lists(), [(0, vec![0, 1])]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn trim_to_loadable_prefix(&mut self) -> usize {
        let n = self.prefix_len();
        self.trim_to_prefix(n);
        n
    }

    /// For every adapter with a lookup entry, the keys it locked during the
    /// lookup but will not load: `lookup & !plan` (the whole lookup for an
    /// adapter the plan does not use). The controller unlocks them right
    /// after planning. Entries may have no bit set.
    ///
    /// # Errors
    ///
    /// [`PlanError::LookupLengthMismatch`] if a lookup bitmap does not have
    /// [`num_keys`](LoadPlan::num_keys) bits.
    ///
    /// ```
    /// use prefetch_policy::{LoadPlan, LookupResults};
    /// let lookup = LookupResults::from([(0, "1101".parse()?), (1, "0111".parse()?), (5, "1000".parse()?)]);
    /// let plan = LoadPlan::from_entries(4, [(0, "1100".parse()?), (1, "0010".parse()?)])?;
    /// let unlock = plan.unlock_masks(&lookup)?;
    /// assert_eq!(format!("{unlock:?}"), "{0: 0001, 1: 0101, 5: 1000}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn unlock_masks(&self, lookup: &LookupResults) -> Result<LookupResults, PlanError> {
        let mut masks = LookupResults::with_capacity(self.num_keys, lookup.len());
        self.unlock_masks_into(lookup, &mut masks)?;
        Ok(masks)
    }

    /// [`unlock_masks`](LoadPlan::unlock_masks) into `out`, replacing its
    /// entries and reusing its buffers: no allocation once `out` has held as
    /// many masks of at least as many keys.
    ///
    /// # Errors
    ///
    /// As [`unlock_masks`](LoadPlan::unlock_masks); `out` is then empty.
    pub fn unlock_masks_into(&self, lookup: &LookupResults, out: &mut LookupResults) -> Result<(), PlanError> {
        out.clear();
        check_lookup_lengths(self.num_keys, lookup)?;
        let masks = out.map_mut();
        for (adapter, held) in lookup {
            let mask = masks.push_copy(adapter, held);
            if let Some(planned) = self.get(adapter) {
                mask.difference_with(planned);
            }
        }
        Ok(())
    }

    /// For each adapter in the plan, references to the items (keys) it
    /// loads, in key order: what the controller hands each adapter's load
    /// call.
    ///
    /// # Errors
    ///
    /// [`PlanError::KeyCountMismatch`] if `items` does not have
    /// [`num_keys`](LoadPlan::num_keys) items.
    ///
    /// ```
    /// use prefetch_policy::LoadPlan;
    /// let plan = LoadPlan::from_entries(3, [(0, "101".parse()?), (2, "010".parse()?)])?;
    /// let names = ["k0", "k1", "k2"];
    /// assert_eq!(plan.gather(&names)?, [(0, vec![&"k0", &"k2"]), (2, vec![&"k1"])]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn gather<'t, T>(&self, items: &'t [T]) -> Result<Vec<(usize, Vec<&'t T>)>, PlanError> {
        if items.len() != self.num_keys {
            return Err(PlanError::KeyCountMismatch { expected: self.num_keys, actual: items.len() });
        }
        Ok(self.iter().map(|(adapter, bitmap)| (adapter, bitmap.gather(items).collect())).collect())
    }
}

/// [`PlanError::LookupLengthMismatch`] for the first lookup bitmap (in
/// adapter order) that does not have `num_keys` bits.
pub(crate) fn check_lookup_lengths(num_keys: usize, lookup: &LookupResults) -> Result<(), PlanError> {
    match lookup.iter().find(|(_, bitmap)| bitmap.len() != num_keys) {
        Some((adapter, bitmap)) => {
            Err(PlanError::LookupLengthMismatch { adapter, expected: num_keys, actual: bitmap.len() })
        }
        None => Ok(()),
    }
}

impl fmt::Debug for LoadPlan {
    /// The key count and the entries as bit strings (bit 0 first).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct EntriesDebug<'a>(&'a LoadPlan);
        impl fmt::Debug for EntriesDebug<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_map().entries(self.0.iter().map(|(adapter, bitmap)| (adapter, DisplayAsDebug(bitmap)))).finish()
            }
        }
        f.debug_struct("LoadPlan").field("num_keys", &self.num_keys).field("entries", &EntriesDebug(self)).finish()
    }
}

impl<'a> IntoIterator for &'a LoadPlan {
    type Item = (usize, &'a Bitmap);
    type IntoIter = Entries<'a>;

    fn into_iter(self) -> Entries<'a> {
        self.iter()
    }
}

impl IntoIterator for LoadPlan {
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

    fn plan(num_keys: usize, entries: &[(usize, &str)]) -> LoadPlan {
        LoadPlan::from_entries(num_keys, entries.iter().map(|&(a, s)| (a, bits(s)))).unwrap()
    }

    #[test]
    fn from_entries_rejects_duplicates_and_drops_empty() {
        let error = LoadPlan::from_entries(2, [(1, bits("10")), (1, bits("01"))]).unwrap_err();
        assert_eq!(error, PlanError::DuplicateAdapterIndex { index: 1 });
        let p = plan(2, &[(3, "00"), (1, "01")]);
        assert_eq!(p.adapters().collect::<Vec<_>>(), [1]);
        assert_eq!(p.len(), 1);
        assert!(!p.is_empty());
        assert!(p.contains_adapter(1) && !p.contains_adapter(3));
    }

    #[test]
    fn insert_checks_length_and_replaces() {
        let mut p = LoadPlan::new(3);
        assert_eq!(p.insert(0, bits("100")), Ok(None));
        assert_eq!(p.insert(0, bits("010")), Ok(Some(bits("100"))));
        assert_eq!(p.insert(1, bits("1")), Err(PlanError::PlanLengthMismatch { adapter: 1, expected: 3, actual: 1 }));
        assert_eq!(p.remove(0), Some(bits("010")));
        assert!(p.is_empty());
    }

    #[test]
    fn merged_prefix_and_count_across_block_boundaries() {
        // 3 adapters over 200 words, interleaved so only the union is full.
        let n = 200 * 64 + 5;
        let mut entries = [Bitmap::new(n), Bitmap::new(n), Bitmap::new(n)];
        for key in 0..n {
            entries[key % 3].set(key);
        }
        let full = LoadPlan::from_entries(n, entries.clone().into_iter().enumerate()).unwrap();
        assert_eq!(full.prefix_len(), n);
        assert_eq!(full.planned_count(), n);
        assert!(full.merged().all());
        for hole in [0, 63, 64, 64 * 64 - 1, 64 * 64, 64 * 130 + 7, n - 1] {
            let mut holed = entries.clone();
            holed[hole % 3].clear(hole);
            let p = LoadPlan::from_entries(n, holed.into_iter().enumerate()).unwrap();
            assert_eq!(p.prefix_len(), hole, "hole at {hole}");
            assert_eq!(p.planned_count(), n - 1);
            assert_eq!(p.merged().count_leading_ones(), hole);
        }
    }

    #[test]
    fn empty_plan_has_empty_merge() {
        let p = LoadPlan::new(70);
        assert_eq!(p.prefix_len(), 0);
        assert_eq!(p.planned_count(), 0);
        assert_eq!(p.merged(), Bitmap::new(70));
        let single = plan(3, &[(2, "110")]);
        assert_eq!((single.prefix_len(), single.planned_count()), (2, 2));
    }

    #[test]
    fn merged_into_reuses_the_buffer() {
        let p = plan(4, &[(0, "1000"), (1, "0010")]);
        let mut out = Bitmap::new(100);
        p.merged_into(&mut out);
        assert_eq!(out, bits("1010"));
    }

    #[test]
    fn trimming() {
        let mut p = plan(6, &[(0, "110001"), (1, "001100")]);
        p.trim_to_prefix(10);
        assert_eq!(p.len(), 2);
        p.trim_to_prefix(3);
        assert_eq!(p.to_index_lists(), [(0, vec![0, 1]), (1, vec![2])]);
        assert_eq!(p.num_keys(), 6);
        p.trim_to_prefix(2);
        assert_eq!(p.to_index_lists(), [(0, vec![0, 1])]);
        p.trim_to_prefix(0);
        assert!(p.is_empty());
        let mut gap = plan(3, &[(0, "011")]);
        assert_eq!(gap.trim_to_loadable_prefix(), 0);
        assert!(gap.is_empty());
    }

    #[test]
    fn unlock_masks_cover_every_lookup_entry() {
        let lookup = LookupResults::from([(0, bits("1100")), (1, bits("0110")), (2, bits("0000"))]);
        let p = plan(4, &[(0, "1100"), (1, "0010")]);
        let masks = p.unlock_masks(&lookup).unwrap();
        assert_eq!(masks, LookupResults::from([(0, bits("0000")), (1, bits("0100")), (2, bits("0000"))]));
        let bad = LookupResults::from([(0, bits("1100")), (3, bits("1"))]);
        let mut out = masks;
        assert_eq!(
            p.unlock_masks_into(&bad, &mut out),
            Err(PlanError::LookupLengthMismatch { adapter: 3, expected: 4, actual: 1 })
        );
        assert!(out.is_empty());
    }

    #[test]
    fn gather_checks_the_item_count() {
        let p = plan(2, &[(0, "01")]);
        assert_eq!(p.gather(&[1]), Err(PlanError::KeyCountMismatch { expected: 2, actual: 1 }));
        assert_eq!(p.gather(&['a', 'b']).unwrap(), [(0, vec![&'b'])]);
    }

    #[test]
    fn debug_and_iteration() {
        let p = plan(3, &[(2, "001"), (0, "100")]);
        assert_eq!(format!("{p:?}"), "LoadPlan { num_keys: 3, entries: {0: 100, 2: 001} }");
        let adapters: Vec<usize> = (&p).into_iter().map(|(a, _)| a).collect();
        assert_eq!(adapters, [0, 2]);
        let owned: Vec<(usize, Bitmap)> = p.into_iter().collect();
        assert_eq!(owned, [(0, bits("100")), (2, bits("001"))]);
    }

    #[test]
    fn equality_ignores_spares() {
        let mut a = LoadPlan::with_capacity(3, 4);
        a.insert(0, bits("100")).unwrap();
        let b = plan(3, &[(0, "100")]);
        assert_eq!(a, b);
        a.release_spares();
        assert_eq!(a, b);
        assert_ne!(LoadPlan::new(3), LoadPlan::new(4));
    }
}
