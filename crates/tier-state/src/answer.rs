//! What a batch call answers: a success mask in request order, the outcome
//! of each key that failed, and for the calls that hand out objects the
//! slot of each key. [`Batch`] for a slice of keys, [`GridBatch`] (a
//! [`Grid`] mask) for a grid request. Both are reused from call to call,
//! so a warmed-up caller allocates nothing.

use bitmap_core::Bitmap;
use prefetch_policy::Grid;

use crate::outcome::Outcome;
use crate::pos::Pos;

/// The slot of a key that has none (a failed key).
pub const NO_SLOT: u32 = u32::MAX;

/// The answer a call fills, whatever the form of its keys. Sealed.
pub trait Answer: sealed::Sealed + Default {
    /// Starts an answer for `len` keys of a request of `shape` (rows,
    /// cols); `slots` says whether the call hands out slots.
    #[doc(hidden)]
    fn begin(&mut self, shape: (usize, usize), len: usize, slots: bool);
    /// Key `pos` succeeded, with its slot (ignored unless slots were asked).
    #[doc(hidden)]
    fn succeed(&mut self, pos: Pos, slot: u32);
    /// Key `pos` failed.
    #[doc(hidden)]
    fn fail(&mut self, pos: Pos, outcome: Outcome);
    /// The answer as a [`GridBatch`], if it is one (the word-at-a-time
    /// calls fill it whole).
    #[doc(hidden)]
    fn as_grid_batch(&mut self) -> Option<&mut GridBatch> {
        None
    }
    /// The outcomes of the keys that failed, in request order.
    fn failed(&self) -> &[(u32, Outcome)];
    /// Each key's slot in request order ([`NO_SLOT`] for a failed key);
    /// empty for calls that hand out no objects.
    fn slots(&self) -> &[u32];
    /// The number of keys that succeeded.
    fn num_ok(&self) -> usize;
    /// The number of keys asked about.
    fn len(&self) -> usize;
    /// Whether the request had no keys.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The outcome of the key at request position `index`.
    fn outcome(&self, index: usize) -> Outcome {
        let failed = self.failed();
        match failed.binary_search_by_key(&(index as u32), |&(at, _)| at) {
            Ok(found) => failed[found].1,
            Err(_) => Outcome::Success,
        }
    }
    /// Every key's outcome in request order (allocates: for tests and
    /// LMCache-shaped callers).
    fn outcomes(&self) -> Vec<Outcome> {
        let mut all = vec![Outcome::Success; self.len()];
        for &(index, outcome) in self.failed() {
            all[index as usize] = outcome;
        }
        all
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Batch {}
    impl Sealed for super::GridBatch {}
}

/// The answer to a call over a slice of keys.
///
/// ```
/// use tier_state::{Answer, Batch, Outcome, Tier, TierConfig, TierKey};
/// let mut tier = Tier::new(TierConfig::new(8))?;
/// let keys = [TierKey::new(1, 0), TierKey::new(2, 0)];
/// let mut answer = Batch::default();
/// tier.reserve_read(&keys[..], 1, &mut answer)?;
/// assert_eq!(answer.ok().popcount(), 0);
/// assert_eq!(answer.failed(), &[(0, Outcome::KeyNotExist), (1, Outcome::KeyNotExist)]);
/// # Ok::<(), tier_state::TierError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Batch {
    ok: Bitmap,
    failed: Vec<(u32, Outcome)>,
    slots: Vec<u32>,
}

impl Batch {
    /// The success mask: bit `i` is set when key `i` succeeded.
    pub fn ok(&self) -> &Bitmap {
        &self.ok
    }
}

impl Answer for Batch {
    fn begin(&mut self, _shape: (usize, usize), len: usize, slots: bool) {
        self.ok.reset(len);
        self.failed.clear();
        self.slots.clear();
        if slots {
            self.slots.resize(len, NO_SLOT);
        }
    }

    #[inline]
    fn succeed(&mut self, pos: Pos, slot: u32) {
        self.ok.set(pos.index as usize);
        if let Some(at) = self.slots.get_mut(pos.index as usize) {
            *at = slot;
        }
    }

    #[inline]
    fn fail(&mut self, pos: Pos, outcome: Outcome) {
        self.failed.push((pos.index, outcome));
    }

    fn failed(&self) -> &[(u32, Outcome)] {
        &self.failed
    }

    fn slots(&self) -> &[u32] {
        &self.slots
    }

    fn num_ok(&self) -> usize {
        self.ok.popcount()
    }

    fn len(&self) -> usize {
        self.ok.len()
    }
}

/// The answer to a call over a grid request ([`GridKeys`](crate::GridKeys)):
/// the success mask as a [`Grid`] of the request's shape; failures and
/// slots by position in request order (row-major: `row × cols + col`, or
/// the `i`-th set cell of a request narrowed to some cells).
#[derive(Debug, Default)]
pub struct GridBatch {
    ok: Grid,
    failed: Vec<(u32, Outcome)>,
    slots: Vec<u32>,
    len: usize,
    /// Keep only the success mask (see [`GridBatch::mask_only`]).
    mask_only: bool,
}

impl GridBatch {
    /// An answer that keeps only the success mask: [`failed`](Answer::failed)
    /// and [`slots`](Answer::slots) stay empty, so a call spends nothing on
    /// them. For callers that read nothing else (the positional Python face
    /// unless asked for the failures): most keys of a lookup may fail, and
    /// listing them costs more than the lookup's words.
    ///
    /// ```
    /// use tier_state::{Answer, GridBatch, GridKeys, Tier, TierConfig};
    /// let mut tier = Tier::new(TierConfig::new(8).with_rows(2))?;
    /// let mut answer = GridBatch::mask_only();
    /// tier.reserve_read(&GridKeys::new(&[1, 2], &[0, 1]), 1, &mut answer)?;
    /// assert_eq!((answer.num_ok(), answer.len()), (0, 4));
    /// assert!(answer.failed().is_empty() && answer.slots().is_empty());
    /// # Ok::<(), tier_state::TierError>(())
    /// ```
    pub fn mask_only() -> GridBatch {
        GridBatch { mask_only: true, ..GridBatch::default() }
    }

    /// Whether the answer keeps only the success mask.
    pub fn is_mask_only(&self) -> bool {
        self.mask_only
    }

    /// The success mask: cell (`r`, `c`) is set when that key succeeded.
    pub fn ok(&self) -> &Grid {
        &self.ok
    }

    /// The success mask, for the word-at-a-time calls to write whole.
    pub(crate) fn ok_mut(&mut self) -> &mut Grid {
        &mut self.ok
    }

    /// The success mask and the slots in request order (empty unless the
    /// call hands them out).
    pub(crate) fn ok_and_slots_mut(&mut self) -> (&Grid, &mut [u32]) {
        (&self.ok, &mut self.slots)
    }

    /// Records a failure; positions come in request order.
    #[inline]
    pub(crate) fn push_failed(&mut self, index: u32, outcome: Outcome) {
        self.failed.push((index, outcome));
    }
}

impl Answer for GridBatch {
    fn as_grid_batch(&mut self) -> Option<&mut GridBatch> {
        Some(self)
    }

    fn begin(&mut self, shape: (usize, usize), len: usize, slots: bool) {
        self.ok.reset(shape.0, shape.1);
        self.failed.clear();
        self.slots.clear();
        self.len = len;
        if slots && !self.mask_only {
            self.slots.resize(len, NO_SLOT);
        }
    }

    #[inline]
    fn succeed(&mut self, pos: Pos, slot: u32) {
        self.ok.set(pos.row as usize, pos.col as usize);
        if let Some(at) = self.slots.get_mut(pos.index as usize) {
            *at = slot;
        }
    }

    #[inline]
    fn fail(&mut self, pos: Pos, outcome: Outcome) {
        if !self.mask_only {
            self.failed.push((pos.index, outcome));
        }
    }

    fn failed(&self) -> &[(u32, Outcome)] {
        &self.failed
    }

    fn slots(&self) -> &[u32] {
        &self.slots
    }

    fn num_ok(&self) -> usize {
        self.ok.popcount()
    }

    fn len(&self) -> usize {
        self.len
    }
}
