//! [`FoldWorkspace`]: the fold's reusable temporaries.

use bitmap_core::Bitmap;

/// Reusable temporaries of the `_into` forms ([`fold_into`](crate::fold_into),
/// [`fold_unfold_ranked_into`](crate::fold_unfold_ranked_into), …): after
/// the first call of a given shape, a call with the same workspace and
/// outputs allocates nothing.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::{FoldWorkspace, fold_unfold_ranked_into};
///
/// let mut ws = FoldWorkspace::new();
/// let mut mask = Bitmap::new(0);
/// for gap in [40, 90] {
///     let mut found = Bitmap::with_prefix(100 * 4, 400);
///     found.clear(gap * 4); // chunk `gap` misses rank 0 of group 0
///     let hit = fold_unfold_ranked_into(&found, 100, 2, &[-1, 4], &mut ws, &mut mask)?;
///     assert_eq!(hit, gap);
/// }
/// # Ok::<(), prefetch_policy::HybridError>(())
/// ```
#[derive(Debug, Default)]
pub struct FoldWorkspace {
    /// One group's presence row, then its servable row.
    pub(crate) present: Bitmap,
    /// The fold's result, for the forms that return only the hit and mask.
    pub(crate) servable: Bitmap,
}

impl FoldWorkspace {
    /// An empty workspace; it grows to the shapes it is used with.
    pub fn new() -> Self {
        Self::default()
    }
}
