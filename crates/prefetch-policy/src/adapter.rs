//! [`AdapterDescriptor`] and the index order policies walk adapters in.

use crate::error::PlanError;

/// What a policy knows about one L2 adapter.
///
/// `index` is the adapter's position in the controller's adapter list; it
/// is the key of lookup results and load plans. `#[non_exhaustive]` keeps
/// room for more fields (a weight or a bandwidth for a balancing policy):
/// build one with [`AdapterDescriptor::new`], read the fields directly.
///
/// ```
/// use prefetch_policy::AdapterDescriptor;
/// let adapter = AdapterDescriptor::new(1, "s3");
/// assert_eq!((adapter.index, adapter.name.as_str()), (1, "s3"));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct AdapterDescriptor {
    /// The adapter's position in the controller's adapter list.
    pub index: usize,
    /// A name for logs and reports.
    pub name: String,
}

impl AdapterDescriptor {
    /// A descriptor with the given index and name.
    pub fn new(index: usize, name: impl Into<String>) -> AdapterDescriptor {
        AdapterDescriptor { index, name: name.into() }
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
