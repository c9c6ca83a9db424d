//! Checking a [`LoadPlan`] against its lookups and adapters:
//! [`PlanContract`] and [`LoadPlan::validate_with`].

use bitmap_core::Bitmap;

use crate::adapter::{AdapterDescriptor, sorted_index_vec};
use crate::error::PlanViolation;
use crate::lookup::LookupResults;
use crate::plan::{LoadPlan, check_lookup_lengths};

/// What a policy promises about its plans, from weakest to strongest; each
/// level includes the ones before it (so `contract >= PlanContract::Complete`
/// reads "at least complete").
///
/// A policy states its contract in
/// [`PrefetchPolicy::contract`](crate::PrefetchPolicy::contract), and
/// [`LoadPlan::validate_with`] checks a plan against one. `default` and
/// `retain` promise [`FirstWins`](PlanContract::FirstWins); `balanced`,
/// which shares keys out across adapters, promises
/// [`Complete`](PlanContract::Complete): it plans every key some adapter
/// holds (the same coverage as first-wins), but not necessarily on the
/// first holder.
///
/// ```
/// use prefetch_policy::PlanContract;
/// assert!(PlanContract::FirstWins > PlanContract::Complete);
/// assert!(PlanContract::Complete > PlanContract::Sound);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum PlanContract {
    /// The seed's interface contract: bitmaps of the right length, entries
    /// only for listed adapters and never empty, no key on two adapters, and
    /// every planned key held by its adapter's lookup.
    Sound,
    /// Sound, and every key that some listed adapter holds is planned.
    Complete,
    /// Complete, and every planned key is on the lowest-indexed listed
    /// adapter that holds it: the plan is exactly the first-wins plan.
    FirstWins,
}

impl LoadPlan {
    /// Checks the plan against [`PlanContract::FirstWins`], the contract of
    /// `default` and `retain`: non-overlapping, each key on an adapter that
    /// holds it, and every key some listed adapter holds planned on the
    /// lowest-indexed such adapter.
    ///
    /// # Errors
    ///
    /// The first violation found, as [`validate_with`](LoadPlan::validate_with).
    ///
    /// ```
    /// use prefetch_policy::{AdapterDescriptor, LoadPlan, LookupResults, PlanViolation};
    ///
    /// let lookup = LookupResults::from([(0, "110".parse()?), (1, "011".parse()?)]);
    /// let adapters = [AdapterDescriptor::new(0, "a"), AdapterDescriptor::new(1, "b")];
    /// let good = LoadPlan::from_entries(3, [(0, "110".parse()?), (1, "001".parse()?)])?;
    /// assert_eq!(good.validate(&lookup, &adapters), Ok(()));
    ///
    /// let second_holder = LoadPlan::from_entries(3, [(0, "100".parse()?), (1, "011".parse()?)])?;
    /// assert_eq!(
    ///     second_holder.validate(&lookup, &adapters),
    ///     Err(PlanViolation::NotFirstHolder { key: 1, planned: 1, first: 0 })
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn validate(&self, lookup: &LookupResults, adapters: &[AdapterDescriptor]) -> Result<(), PlanViolation> {
        self.validate_with(lookup, adapters, PlanContract::FirstWins)
    }

    /// Checks the plan against `contract` for these lookups and adapters.
    ///
    /// # Errors
    ///
    /// - [`PlanViolation::Input`] if the inputs are bad: a lookup bitmap
    ///   without [`num_keys`](LoadPlan::num_keys) bits, a repeated adapter
    ///   index.
    /// - For every contract, in this order: [`BitmapLength`], then per entry
    ///   in adapter order [`UnlistedAdapter`], [`EmptyEntry`], [`NotHeld`];
    ///   then [`Overlap`].
    /// - For [`Complete`](PlanContract::Complete) and above: [`Missed`].
    /// - For [`FirstWins`](PlanContract::FirstWins): [`NotFirstHolder`].
    ///
    /// Within a kind, the lowest key is reported.
    ///
    /// [`BitmapLength`]: PlanViolation::BitmapLength
    /// [`UnlistedAdapter`]: PlanViolation::UnlistedAdapter
    /// [`EmptyEntry`]: PlanViolation::EmptyEntry
    /// [`NotHeld`]: PlanViolation::NotHeld
    /// [`Overlap`]: PlanViolation::Overlap
    /// [`Missed`]: PlanViolation::Missed
    /// [`NotFirstHolder`]: PlanViolation::NotFirstHolder
    pub fn validate_with(
        &self,
        lookup: &LookupResults,
        adapters: &[AdapterDescriptor],
        contract: PlanContract,
    ) -> Result<(), PlanViolation> {
        let num_keys = self.num_keys();
        check_lookup_lengths(num_keys, lookup)?;
        let order = sorted_index_vec(adapters)?;
        if let Some((adapter, bitmap)) = self.iter().find(|(_, bitmap)| bitmap.len() != num_keys) {
            return Err(PlanViolation::BitmapLength { adapter, expected: num_keys, actual: bitmap.len() });
        }
        for (adapter, planned) in self {
            if order.binary_search(&adapter).is_err() {
                return Err(PlanViolation::UnlistedAdapter { adapter });
            }
            let Some(first_planned) = planned.first_set() else {
                return Err(PlanViolation::EmptyEntry { adapter });
            };
            let first_not_held = match lookup.get(adapter) {
                None => Some(first_planned),
                Some(held) => first_set_of(planned.as_words(), held.as_words(), |p, h| p & !h),
            };
            if let Some(key) = first_not_held {
                return Err(PlanViolation::NotHeld { key, adapter });
            }
        }
        self.check_overlap()?;
        if contract < PlanContract::Complete {
            return Ok(());
        }

        // The listed adapters' lookups, ascending: who could load each key.
        let holders: Vec<(usize, &Bitmap)> =
            order.iter().filter_map(|&adapter| Some((adapter, lookup.get(adapter)?))).collect();
        let first_holder = |key: usize| holders.iter().find(|(_, held)| held.test(key)).map(|&(adapter, _)| adapter);
        let planned_on = |key: usize| self.iter().find(|(_, planned)| planned.test(key)).map(|(adapter, _)| adapter);
        for word in 0..num_keys.div_ceil(64) {
            let held = holders.iter().fold(0, |acc, (_, bitmap)| acc | bitmap.as_words()[word]);
            let planned = self.iter().fold(0, |acc, (_, bitmap)| acc | bitmap.as_words()[word]);
            if let Some(key) = lowest_bit(word, held & !planned) {
                let holder = first_holder(key).unwrap_or_default();
                return Err(PlanViolation::Missed { key, holder });
            }
        }
        if contract < PlanContract::FirstWins {
            return Ok(());
        }

        // Planned keys are held by their adapter and every held key is
        // planned (checked above), so a difference from the first-wins words
        // means a key on a later holder.
        for word in 0..num_keys.div_ceil(64) {
            let mut claimed = 0u64;
            let mut wrong = 0u64;
            for &(adapter, held) in &holders {
                let expected = held.as_words()[word] & !claimed;
                claimed |= held.as_words()[word];
                let actual = self.get(adapter).map_or(0, |planned| planned.as_words()[word]);
                wrong |= expected ^ actual;
            }
            if let Some(key) = lowest_bit(word, wrong) {
                let first = first_holder(key).unwrap_or_default();
                let planned = planned_on(key).unwrap_or_default();
                return Err(PlanViolation::NotFirstHolder { key, planned, first });
            }
        }
        Ok(())
    }

    /// [`PlanViolation::Overlap`] for the lowest key planned twice.
    fn check_overlap(&self) -> Result<(), PlanViolation> {
        for word in 0..self.num_keys().div_ceil(64) {
            let mut seen = 0u64;
            for (adapter, planned) in self {
                let bits = planned.as_words()[word];
                if let Some(key) = lowest_bit(word, bits & seen) {
                    let first = self.adapters().find(|&a| self.get(a).is_some_and(|b| b.test(key))).unwrap_or_default();
                    return Err(PlanViolation::Overlap { key, first, second: adapter });
                }
                seen |= bits;
            }
        }
        Ok(())
    }
}

/// The key of the lowest set bit of `bits`, word `word` of a bitmap.
#[inline]
fn lowest_bit(word: usize, bits: u64) -> Option<usize> {
    (bits != 0).then(|| word * 64 + bits.trailing_zeros() as usize)
}

/// The lowest key whose bit is set in `combine(a, b)`, word by word.
fn first_set_of(a: &[u64], b: &[u64], combine: impl Fn(u64, u64) -> u64) -> Option<usize> {
    a.iter().zip(b).enumerate().find_map(|(word, (&x, &y))| lowest_bit(word, combine(x, y)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::PlanError;

    fn bits(s: &str) -> Bitmap {
        s.parse().unwrap()
    }

    fn listed(indices: &[usize]) -> Vec<AdapterDescriptor> {
        indices.iter().map(|&i| AdapterDescriptor::new(i, "")).collect()
    }

    fn lookup() -> LookupResults {
        // key:        0123
        LookupResults::from([(0, bits("1100")), (1, bits("0110")), (2, bits("0011")), (7, bits("1111"))])
    }

    /// A plan from `(adapter, bits)` entries, stored as given (even empty).
    fn raw(num_keys: usize, entries: &[(usize, &str)]) -> LoadPlan {
        let mut plan = LoadPlan::new(num_keys);
        for &(adapter, s) in entries {
            plan.insert(adapter, bits(s)).unwrap();
        }
        plan
    }

    fn check(plan: &LoadPlan, contract: PlanContract) -> Result<(), PlanViolation> {
        plan.validate_with(&lookup(), &listed(&[2, 0, 1]), contract)
    }

    #[test]
    fn first_wins_plan_passes_every_contract() {
        let plan = raw(4, &[(0, "1100"), (1, "0010"), (2, "0001")]);
        for contract in [PlanContract::Sound, PlanContract::Complete, PlanContract::FirstWins] {
            assert_eq!(check(&plan, contract), Ok(()), "{contract:?}");
        }
        assert_eq!(plan.validate(&lookup(), &listed(&[0, 1, 2])), Ok(()));
    }

    #[test]
    fn balanced_plan_is_complete_but_not_first_wins() {
        let plan = raw(4, &[(0, "1000"), (1, "0110"), (2, "0001")]);
        assert_eq!(check(&plan, PlanContract::Complete), Ok(()));
        assert_eq!(
            check(&plan, PlanContract::FirstWins),
            Err(PlanViolation::NotFirstHolder { key: 1, planned: 1, first: 0 })
        );
    }

    #[test]
    fn partial_plan_is_sound_but_not_complete() {
        let plan = raw(4, &[(0, "1100"), (2, "0001")]);
        assert_eq!(check(&plan, PlanContract::Sound), Ok(()));
        assert_eq!(check(&plan, PlanContract::Complete), Err(PlanViolation::Missed { key: 2, holder: 1 }));
    }

    #[test]
    fn each_soundness_violation() {
        let cases = [
            (raw(4, &[(0, "1100"), (7, "0011")]), PlanViolation::UnlistedAdapter { adapter: 7 }),
            (raw(4, &[(0, "1100"), (1, "0000")]), PlanViolation::EmptyEntry { adapter: 1 }),
            (raw(4, &[(0, "1110")]), PlanViolation::NotHeld { key: 2, adapter: 0 }),
            (raw(4, &[(0, "1100"), (1, "0110")]), PlanViolation::Overlap { key: 1, first: 0, second: 1 }),
        ];
        for (plan, violation) in cases {
            assert_eq!(check(&plan, PlanContract::Sound), Err(violation));
        }
        // A listed adapter without a lookup entry holds nothing.
        let plan = raw(4, &[(3, "0100")]);
        let result = plan.validate_with(&lookup(), &listed(&[3]), PlanContract::Sound);
        assert_eq!(result, Err(PlanViolation::NotHeld { key: 1, adapter: 3 }));
    }

    #[test]
    fn bitmap_length_violation() {
        let mut plan = raw(4, &[(0, "1100")]);
        plan.insert_clear(1).reset(3);
        assert_eq!(
            check(&plan, PlanContract::Sound),
            Err(PlanViolation::BitmapLength { adapter: 1, expected: 4, actual: 3 })
        );
    }

    #[test]
    fn bad_inputs() {
        let plan = raw(4, &[(0, "1100")]);
        let short = LookupResults::from([(0, bits("110"))]);
        assert_eq!(
            plan.validate(&short, &listed(&[0])),
            Err(PlanViolation::Input(PlanError::LookupLengthMismatch { adapter: 0, expected: 4, actual: 3 }))
        );
        assert_eq!(
            plan.validate(&lookup(), &listed(&[0, 0])),
            Err(PlanViolation::Input(PlanError::DuplicateAdapterIndex { index: 0 }))
        );
    }

    #[test]
    fn violations_across_words_report_the_lowest_key() {
        let n = 200;
        let mut held = Bitmap::new(n);
        held.set_range(..);
        let lookup = LookupResults::from([(0, held.clone()), (1, held)]);
        let mut first = Bitmap::new(n);
        first.set_range(..);
        first.clear(150);
        first.clear(130);
        let plan = LoadPlan::from_entries(n, [(0, first)]).unwrap();
        assert_eq!(plan.validate(&lookup, &listed(&[0, 1])), Err(PlanViolation::Missed { key: 130, holder: 0 }));
        let mut second = Bitmap::new(n);
        second.set(130);
        second.set(150);
        let mut plan = plan;
        plan.insert(1, second).unwrap();
        assert_eq!(
            plan.validate(&lookup, &listed(&[0, 1])),
            Err(PlanViolation::NotFirstHolder { key: 130, planned: 1, first: 0 })
        );
    }
}
