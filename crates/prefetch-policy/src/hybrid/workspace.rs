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
    /// Chunk-major presence cells (one bit per chunk and group), or one
    /// row's presence.
    pub(crate) cells: Bitmap,
    /// The cells under the windowed run test.
    pub(crate) runs: Bitmap,
    /// A periodic group mask over the cells.
    pub(crate) mask: Bitmap,
    /// The servable cells, then their AND per chunk.
    pub(crate) servable: Bitmap,
    /// The per-chunk AND of the servable cells.
    pub(crate) chunks: Bitmap,
    /// The fold's result, for the forms that return only the hit and mask.
    pub(crate) folded: Bitmap,
    /// One period of a group mask.
    pub(crate) pattern: Vec<u64>,
    /// The distinct sliding windows, ascending.
    pub(crate) windows: Vec<usize>,
}

impl FoldWorkspace {
    /// An empty workspace; it grows to the shapes it is used with.
    pub fn new() -> Self {
        Self::default()
    }
}
