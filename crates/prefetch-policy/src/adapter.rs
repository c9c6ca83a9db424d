//! [`AdapterDescriptor`], its [`AdapterWeight`], and the index order
//! policies walk adapters in.

use core::fmt;

use crate::error::{PlanError, WeightError};

/// What a policy knows about one L2 adapter.
///
/// `index` is the adapter's position in the controller's adapter list; it
/// is the key of lookup results and load plans. `weight` is its relative
/// load bandwidth, which the `balanced` policy shares keys out by (the
/// first-wins policies ignore it). `#[non_exhaustive]` keeps room for more
/// fields: build one with [`AdapterDescriptor::new`] (weight 1) and
/// [`with_weight`](AdapterDescriptor::with_weight), read the fields
/// directly.
///
/// ```
/// use prefetch_policy::AdapterDescriptor;
/// let adapter = AdapterDescriptor::new(1, "s3");
/// assert_eq!((adapter.index, adapter.name.as_str(), adapter.weight.get()), (1, "s3", 1.0));
/// let fast = AdapterDescriptor::new(0, "nvme").with_weight(2.5)?;
/// assert_eq!(fast.weight.get(), 2.5);
/// # Ok::<(), prefetch_policy::WeightError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct AdapterDescriptor {
    /// The adapter's position in the controller's adapter list.
    pub index: usize,
    /// A name for logs and reports.
    pub name: String,
    /// The adapter's relative load bandwidth: an adapter of weight 2 loads
    /// twice as many keys as one of weight 1 in the same time.
    pub weight: AdapterWeight,
}

impl AdapterDescriptor {
    /// A descriptor with the given index and name, and weight 1.
    pub fn new(index: usize, name: impl Into<String>) -> AdapterDescriptor {
        AdapterDescriptor { index, name: name.into(), weight: AdapterWeight::ONE }
    }

    /// This descriptor with the given weight.
    ///
    /// # Errors
    ///
    /// [`WeightError`], naming the adapter, unless `weight` is finite and
    /// greater than 0.
    ///
    /// ```
    /// use prefetch_policy::AdapterDescriptor;
    /// let error = AdapterDescriptor::new(2, "hdd").with_weight(0.0).unwrap_err();
    /// assert_eq!(error.to_string(), r#"adapter 2 ("hdd"): weight 0 is not a finite number greater than 0"#);
    /// ```
    pub fn with_weight(self, weight: f64) -> Result<AdapterDescriptor, WeightError> {
        match AdapterWeight::new(weight) {
            Some(weight) => Ok(AdapterDescriptor { weight, ..self }),
            None => Err(WeightError { adapter: self.index, name: self.name, weight }),
        }
    }
}

/// An adapter's relative load bandwidth: a finite `f64` greater than 0.
///
/// Only a valid weight can be built, so a descriptor never holds a zero,
/// negative, NaN or infinite one and planning has nothing to check.
///
/// ```
/// use prefetch_policy::AdapterWeight;
/// assert_eq!(AdapterWeight::new(0.5).map(AdapterWeight::get), Some(0.5));
/// assert_eq!(AdapterWeight::default(), AdapterWeight::ONE);
/// for invalid in [0.0, -1.0, f64::NAN, f64::INFINITY] {
///     assert_eq!(AdapterWeight::new(invalid), None);
/// }
/// ```
#[derive(Clone, Copy, PartialEq, PartialOrd)]
pub struct AdapterWeight(f64);

impl AdapterWeight {
    /// Weight 1, the default.
    pub const ONE: AdapterWeight = AdapterWeight(1.0);

    /// `weight` as an adapter weight, or `None` unless it is finite and
    /// greater than 0.
    pub fn new(weight: f64) -> Option<AdapterWeight> {
        (weight.is_finite() && weight > 0.0).then_some(AdapterWeight(weight))
    }

    /// The weight.
    #[inline]
    pub const fn get(self) -> f64 {
        self.0
    }
}

impl Default for AdapterWeight {
    fn default() -> AdapterWeight {
        AdapterWeight::ONE
    }
}

impl fmt::Debug for AdapterWeight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for AdapterWeight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// Writes the indices of `adapters` into `out` (of the same length),
/// ascending, without allocating: the order policies walk adapters in.
///
/// # Errors
///
/// [`PlanError::DuplicateAdapterIndex`] with the smallest index listed twice
/// or more.
#[inline]
pub(crate) fn sorted_indices(adapters: &[AdapterDescriptor], out: &mut [usize]) -> Result<(), PlanError> {
    debug_assert_eq!(adapters.len(), out.len());
    // Insertion sort as the indices arrive: a handful of items, no call.
    for (filled, adapter) in adapters.iter().enumerate() {
        let mut at = filled;
        while at > 0 && out[at - 1] > adapter.index {
            out[at] = out[at - 1];
            at -= 1;
        }
        out[at] = adapter.index;
    }
    // Sorted, the first equal neighbours are the smallest duplicate.
    match out.windows(2).find(|pair| pair[0] == pair[1]) {
        Some(pair) => Err(PlanError::DuplicateAdapterIndex { index: pair[0] }),
        None => Ok(()),
    }
}

/// The indices of `adapters`, ascending, in a new vector (for code off the
/// hot path).
///
/// # Errors
///
/// As [`sorted_indices`].
pub(crate) fn sorted_index_vec(adapters: &[AdapterDescriptor]) -> Result<Vec<usize>, PlanError> {
    let mut indices = vec![0; adapters.len()];
    sorted_indices(adapters, &mut indices)?;
    Ok(indices)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(indices: &[usize]) -> Vec<AdapterDescriptor> {
        indices.iter().map(|&i| AdapterDescriptor::new(i, format!("a{i}"))).collect()
    }

    #[test]
    fn sorts_any_order() {
        assert_eq!(sorted_index_vec(&list(&[3, 0, 9, 1])), Ok(vec![0, 1, 3, 9]));
        assert_eq!(sorted_index_vec(&list(&[])), Ok(vec![]));
        let indices: Vec<usize> = (0..40).rev().collect();
        assert_eq!(sorted_index_vec(&list(&indices)), Ok((0..40).collect()));
    }

    #[test]
    fn reports_the_smallest_duplicate() {
        let error = sorted_index_vec(&list(&[5, 2, 5, 1, 2]));
        assert_eq!(error, Err(PlanError::DuplicateAdapterIndex { index: 2 }));
    }
}
