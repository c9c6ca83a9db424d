//! [`GridMap`]: tier index → [`Grid`], one shared shape, LMCache's
//! `MapState` (the keys each L1 manager or L2 adapter locked, or a plan's
//! share of them).
//!
//! Like `AdapterMap` it keeps the grids of removed entries as spare
//! buffers, so a controller that fills the same map request after request
//! stops allocating.

use core::fmt;

use crate::error::GridError;
use crate::grid::Grid;

/// Tier index → [`Grid`], ascending by index, every grid of one shape
/// (LMCache's `MapState`). A missing index reads as a grid of zeros.
///
/// [`insert`](GridMap::insert) refuses a grid whose shape differs from the
/// entries already there; [`merge_into`](GridMap::merge_into) is the union
/// of all entries.
///
/// ```
/// use prefetch_policy::{Grid, GridMap};
///
/// let mut locked = GridMap::new();
/// locked.insert_zeros(1, 2, 4)?.set_range(0, ..2);
/// locked.insert(0, Grid::from_fn(2, 4, |r, c| r == 1 && c == 3))?;
/// assert_eq!(locked.shape(), Some((2, 4)));
/// assert_eq!(locked.indices().collect::<Vec<_>>(), [0, 1]);
/// assert_eq!(locked.merged().to_string(), "[1100, 0001]");
/// assert!(locked.insert(2, Grid::zeros(3, 4)).is_err());
/// assert_eq!(format!("{locked:?}"), "{0: [0000, 0001], 1: [1100, 0000]}");
/// # Ok::<(), prefetch_policy::GridError>(())
/// ```
#[derive(Default)]
pub struct GridMap {
    /// `slots[..live]` are the entries, strictly ascending by index;
    /// `slots[live..]` are spare grids.
    slots: Vec<(usize, Grid)>,
    live: usize,
}

impl GridMap {
    /// An empty map.
    pub fn new() -> GridMap {
        GridMap::default()
    }

    /// An empty map with `spare` spare grids of `rows` × `cols`, so that
    /// filling up to `spare` entries of at most that shape allocates
    /// nothing.
    pub fn with_capacity(spare: usize, rows: usize, cols: usize) -> GridMap {
        GridMap { slots: (0..spare).map(|_| (0, Grid::zeros(rows, cols))).collect(), live: 0 }
    }

    /// A map from `(index, grid)` entries in any order; of entries with the
    /// same index, the last wins.
    ///
    /// # Errors
    ///
    /// [`GridError::ShapeMismatch`] for the first grid whose shape differs
    /// from the first one's.
    pub fn from_entries(entries: impl IntoIterator<Item = (usize, Grid)>) -> Result<GridMap, GridError> {
        let mut map = GridMap::new();
        for (index, grid) in entries {
            map.insert(index, grid)?;
        }
        Ok(map)
    }

    /// The shape every entry has, or `None` if the map is empty.
    pub fn shape(&self) -> Option<(usize, usize)> {
        self.entries().first().map(|(_, grid)| grid.shape())
    }

    /// The number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether there are no entries.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The grid of `index`, or `None` (which reads as all zeros).
    pub fn get(&self, index: usize) -> Option<&Grid> {
        self.find(index).ok().map(|at| &self.slots[at].1)
    }

    /// Whether `index` has an entry.
    pub fn contains(&self, index: usize) -> bool {
        self.find(index).is_ok()
    }

    /// The indices with an entry, ascending.
    pub fn indices(&self) -> impl DoubleEndedIterator<Item = usize> + ExactSizeIterator + '_ {
        self.entries().iter().map(|&(index, _)| index)
    }

    /// The `(index, grid)` entries, ascending by index.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (usize, &Grid)> + ExactSizeIterator + '_ {
        self.entries().iter().map(|(index, grid)| (*index, grid))
    }

    /// Each entry's rows as index lists: the CLI's `{"index": [[cols], …]}`.
    pub fn to_index_lists(&self) -> Vec<(usize, Vec<Vec<usize>>)> {
        self.iter().map(|(index, grid)| (index, grid.to_index_lists())).collect()
    }

    /// The number of set cells over all entries.
    pub fn popcount(&self) -> usize {
        self.iter().map(|(_, grid)| grid.popcount()).sum()
    }

    /// Sets the grid of `index`, returning the one it replaces.
    ///
    /// # Errors
    ///
    /// [`GridError::ShapeMismatch`] (`left` the map's shape) if another
    /// entry has another shape; the map is unchanged.
    pub fn insert(&mut self, index: usize, grid: Grid) -> Result<Option<Grid>, GridError> {
        self.check_shape(index, grid.shape())?;
        Ok(match self.find(index) {
            Ok(at) => Some(core::mem::replace(&mut self.slots[at].1, grid)),
            Err(at) => {
                if self.live < self.slots.len() {
                    // The grid takes a spare's slot (the spare is dropped):
                    // inserting in front of the spares would keep every
                    // one, and a map cleared and refilled request after
                    // request would pile them up, each insert shifting
                    // them all.
                    self.slots[self.live] = (index, grid);
                    self.slots[at..=self.live].rotate_right(1);
                } else {
                    self.slots.insert(at, (index, grid));
                }
                self.live += 1;
                None
            }
        })
    }

    /// Makes the grid of `index` `rows` × `cols` zeros and returns it for
    /// filling in, reusing the entry's buffers or a spare grid's.
    ///
    /// # Errors
    ///
    /// [`GridError::ShapeMismatch`] if another entry has another shape.
    pub fn insert_zeros(&mut self, index: usize, rows: usize, cols: usize) -> Result<&mut Grid, GridError> {
        self.check_shape(index, Grid::zeros_shape(rows, cols))?;
        let grid = self.slot(index);
        grid.reset(rows, cols);
        Ok(grid)
    }

    /// Makes the grid of `index` a copy of `grid`, reusing the entry's
    /// buffer or a spare grid's, and returns it: one pass over the cells,
    /// where [`insert_zeros`](GridMap::insert_zeros) and a copy would be
    /// two, and no allocation where [`insert`](GridMap::insert) of a clone
    /// would make one.
    ///
    /// ```
    /// use prefetch_policy::{Grid, GridMap};
    /// let mut map = GridMap::new();
    /// let grid = Grid::from_rows(vec!["110".parse()?, "011".parse()?])?;
    /// map.insert_copy(2, &grid)?;
    /// assert_eq!(map.get(2), Some(&grid));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`GridError::ShapeMismatch`] if another entry has another shape; the
    /// map is unchanged.
    pub fn insert_copy(&mut self, index: usize, grid: &Grid) -> Result<&mut Grid, GridError> {
        self.check_shape(index, grid.shape())?;
        let slot = self.slot(index);
        slot.copy_from(grid);
        Ok(slot)
    }

    /// Removes the entry of `index` and returns its grid.
    pub fn remove(&mut self, index: usize) -> Option<Grid> {
        let at = self.find(index).ok()?;
        self.live -= 1;
        Some(self.slots.remove(at).1)
    }

    /// Removes every entry, keeping the grids as spares.
    pub fn clear(&mut self) {
        self.live = 0;
    }

    /// Removes the entries with no cell set (their grids become spares).
    pub fn remove_empty(&mut self) {
        let mut kept = 0;
        for at in 0..self.live {
            if self.slots[at].1.any() {
                self.slots.swap(kept, at);
                kept += 1;
            }
        }
        self.live = kept;
    }

    /// Frees the spare grids.
    pub fn release_spares(&mut self) {
        self.slots.truncate(self.live);
        self.slots.shrink_to_fit();
    }

    /// The union of every entry as a new grid; [`Grid::empty`] for an
    /// empty map (LMCache's `merge`).
    pub fn merged(&self) -> Grid {
        let mut merged = Grid::empty();
        self.merge_into(&mut merged);
        merged
    }

    /// Writes the union of every entry into `out`, reusing its buffers.
    ///
    /// Entries of another shape than the first (possible only through
    /// `&mut Grid` from [`insert_zeros`](GridMap::insert_zeros) reset to
    /// another shape) are a caller bug: see
    /// [`try_merge_into`](GridMap::try_merge_into).
    ///
    /// # Panics
    ///
    /// If the entries' shapes differ.
    #[track_caller]
    pub fn merge_into(&self, out: &mut Grid) {
        if let Err(error) = self.try_merge_into(out) {
            panic!("prefetch-policy: {error}");
        }
    }

    /// [`merge_into`](GridMap::merge_into), refusing entries of different
    /// shapes.
    ///
    /// # Errors
    ///
    /// [`GridError::ShapeMismatch`]; `out` is then unspecified.
    pub fn try_merge_into(&self, out: &mut Grid) -> Result<(), GridError> {
        match self.entries() {
            [] => out.reset(0, 0),
            [(_, first), rest @ ..] => {
                out.copy_from(first);
                for (_, grid) in rest {
                    out.try_union_with(grid)?;
                }
            }
        }
        Ok(())
    }

    /// Adds `other`'s entries to this map's, index by index (LMCache's
    /// `MapState +=`); an index only `other` has gets a copy of its grid.
    ///
    /// # Errors
    ///
    /// [`GridError::ShapeMismatch`] if the maps' shapes differ; the map is
    /// unchanged.
    pub fn try_union_with(&mut self, other: &GridMap) -> Result<(), GridError> {
        self.check_other(other)?;
        for (index, grid) in other.iter() {
            match self.find(index) {
                Ok(at) => self.slots[at].1.try_union_with(grid)?,
                Err(_) => self.slot(index).copy_from(grid),
            }
        }
        Ok(())
    }

    /// Removes `other`'s cells from this map's entries, index by index, for
    /// the indices this map has (LMCache's `MapState -=`): what a
    /// controller unlocks is `locked - planned`.
    ///
    /// # Errors
    ///
    /// [`GridError::ShapeMismatch`] if the maps' shapes differ; the map is
    /// unchanged.
    pub fn try_difference_with(&mut self, other: &GridMap) -> Result<(), GridError> {
        self.check_other(other)?;
        for (index, grid) in other.iter() {
            if let Ok(at) = self.find(index) {
                self.slots[at].1.try_difference_with(grid)?;
            }
        }
        Ok(())
    }

    #[inline]
    pub(crate) fn entries(&self) -> &[(usize, Grid)] {
        &self.slots[..self.live]
    }

    #[inline]
    pub(crate) fn entries_mut(&mut self) -> &mut [(usize, Grid)] {
        &mut self.slots[..self.live]
    }

    /// Makes the entries exactly `indices` (strictly ascending), with
    /// grids of unspecified shape and contents for a caller that overwrites
    /// them whole. Reuses spares.
    pub(crate) fn prepare_slots(&mut self, indices: impl ExactSizeIterator<Item = usize>) -> &mut [(usize, Grid)] {
        let needed = indices.len();
        if self.slots.len() < needed {
            self.slots.resize_with(needed, || (0, Grid::empty()));
        }
        for (slot, index) in self.slots.iter_mut().zip(indices) {
            slot.0 = index;
        }
        self.live = needed;
        &mut self.slots[..needed]
    }

    #[inline]
    fn find(&self, index: usize) -> Result<usize, usize> {
        self.entries().binary_search_by_key(&index, |&(at, _)| at)
    }

    /// The grid of `index`, adding an entry (a spare grid, else a new one)
    /// if there is none; its shape and contents are the caller's to set.
    fn slot(&mut self, index: usize) -> &mut Grid {
        let at = match self.find(index) {
            Ok(at) => at,
            Err(at) => {
                if self.live == self.slots.len() {
                    self.slots.push((index, Grid::empty()));
                }
                self.slots[at..=self.live].rotate_right(1);
                self.slots[at].0 = index;
                self.live += 1;
                at
            }
        };
        &mut self.slots[at].1
    }

    /// `Ok` if a grid of `shape` may be stored under `index`: the other
    /// entries (not the one it replaces) have that shape.
    fn check_shape(&self, index: usize, shape: (usize, usize)) -> Result<(), GridError> {
        match self.iter().find(|&(at, _)| at != index) {
            Some((_, other)) if other.shape() != shape => {
                Err(GridError::ShapeMismatch { left: other.shape(), right: shape })
            }
            _ => Ok(()),
        }
    }

    fn check_other(&self, other: &GridMap) -> Result<(), GridError> {
        match (self.shape(), other.shape()) {
            (Some(left), Some(right)) if left != right => Err(GridError::ShapeMismatch { left, right }),
            _ => Ok(()),
        }
    }
}

impl Grid {
    /// The shape `Grid::zeros(rows, cols)` has.
    pub(crate) const fn zeros_shape(rows: usize, cols: usize) -> (usize, usize) {
        if rows == 0 { (0, 0) } else { (rows, cols) }
    }
}

impl Clone for GridMap {
    /// Clones the entries, not the spare grids.
    fn clone(&self) -> GridMap {
        GridMap { slots: self.entries().to_vec(), live: self.live }
    }
}

impl PartialEq for GridMap {
    /// Same indices with equal grids (spares do not count).
    fn eq(&self, other: &GridMap) -> bool {
        self.entries() == other.entries()
    }
}

impl Eq for GridMap {}

impl fmt::Debug for GridMap {
    /// As a map from index to the grid's rows as bit strings.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(rows: &[&str]) -> Grid {
        Grid::from_rows(rows.iter().map(|row| row.parse().unwrap()).collect()).unwrap()
    }

    #[test]
    fn entries_stay_sorted_and_replace() {
        let mut map = GridMap::new();
        assert_eq!(map.shape(), None);
        assert_eq!(map.merged(), Grid::empty());
        map.insert(3, grid(&["10"])).unwrap();
        map.insert(1, grid(&["01"])).unwrap();
        assert_eq!(map.insert(3, grid(&["11"])).unwrap(), Some(grid(&["10"])));
        assert_eq!(map.indices().collect::<Vec<_>>(), [1, 3]);
        assert_eq!(map.to_index_lists(), [(1, vec![vec![1]]), (3, vec![vec![0, 1]])]);
        assert_eq!(map.popcount(), 3);
        assert!(map.contains(1) && !map.contains(2));
        assert_eq!(map.get(2), None);
        assert_eq!(map.remove(1), Some(grid(&["01"])));
        assert_eq!(map.len(), 1);
    }

    #[test]
    fn one_shape_for_all_entries() {
        let mut map = GridMap::from_entries([(0, grid(&["10", "01"]))]).unwrap();
        let error = map.insert(1, grid(&["10"])).unwrap_err();
        assert_eq!(error, GridError::ShapeMismatch { left: (2, 2), right: (1, 2) });
        assert!(map.insert_zeros(1, 2, 3).is_err());
        assert_eq!(map.len(), 1);
        // The only entry may be replaced by another shape.
        map.insert(0, grid(&["1"])).unwrap();
        assert_eq!(map.shape(), Some((1, 1)));
        assert!(GridMap::from_entries([(0, grid(&["1"])), (1, grid(&["11"]))]).is_err());
    }

    #[test]
    fn union_and_difference_per_index() {
        let mut locked = GridMap::from_entries([(0, grid(&["1110"])), (2, grid(&["0011"]))]).unwrap();
        let planned = GridMap::from_entries([(0, grid(&["0110"])), (1, grid(&["1000"]))]).unwrap();
        let mut unlock = locked.clone();
        unlock.try_difference_with(&planned).unwrap();
        assert_eq!(format!("{unlock:?}"), "{0: [1000], 2: [0011]}");
        locked.try_union_with(&planned).unwrap();
        assert_eq!(format!("{locked:?}"), "{0: [1110], 1: [1000], 2: [0011]}");
        let other = GridMap::from_entries([(0, grid(&["1", "0"]))]).unwrap();
        assert!(locked.try_union_with(&other).is_err());
        assert!(locked.try_difference_with(&other).is_err());
    }

    #[test]
    fn spares_are_reused() {
        let mut map = GridMap::with_capacity(2, 4, 64);
        map.insert_zeros(5, 4, 64).unwrap().set(3, 63);
        map.insert_zeros(2, 4, 64).unwrap();
        map.remove_empty();
        assert_eq!(map.indices().collect::<Vec<_>>(), [5]);
        map.clear();
        assert!(map.is_empty());
        assert_eq!(map.slots.len(), 2);
        map.release_spares();
        assert_eq!(map.slots.len(), 0);
    }

    #[test]
    fn inserting_after_clear_does_not_pile_up_spares() {
        let mut map = GridMap::new();
        for _ in 0..100 {
            map.clear();
            map.insert(2, grid(&["01"])).unwrap();
            map.insert(0, grid(&["10"])).unwrap();
            map.insert(1, grid(&["11"])).unwrap();
        }
        assert_eq!(map.slots.len(), 3);
        assert_eq!(format!("{map:?}"), "{0: [10], 1: [11], 2: [01]}");
        map.remove_empty();
        map.clear();
        map.insert(5, grid(&["1"])).unwrap();
        assert_eq!((map.len(), map.slots.len(), map.get(5)), (1, 3, Some(&grid(&["1"]))));
    }

    #[test]
    fn insert_copy_reuses_slots_and_checks_the_shape() {
        let mut map = GridMap::new();
        for _ in 0..10 {
            map.clear();
            map.insert_copy(3, &grid(&["011", "100"])).unwrap();
            map.insert_copy(1, &grid(&["111", "000"])).unwrap();
        }
        assert_eq!(map.slots.len(), 2);
        assert_eq!(format!("{map:?}"), "{1: [111, 000], 3: [011, 100]}");
        // Replacing an entry, alone of its shape, may change the shape; a
        // second entry of another shape may not.
        assert_eq!(
            map.insert_copy(4, &grid(&["1"])).unwrap_err(),
            GridError::ShapeMismatch { left: (2, 3), right: (1, 1) }
        );
        assert_eq!(map.len(), 2);
        map.remove(1);
        map.insert_copy(3, &grid(&["1"])).unwrap();
        assert_eq!(format!("{map:?}"), "{3: [1]}");
    }

    #[test]
    fn merge_is_the_union() {
        let map = GridMap::from_entries([(0, grid(&["100", "000"])), (4, grid(&["001", "010"]))]).unwrap();
        let mut merged = Grid::zeros(7, 7);
        map.merge_into(&mut merged);
        assert_eq!(merged.to_string(), "[101, 010]");
        assert_eq!(map.clone(), map);
    }
}
