//! `fold_unfold*`: the prefix hit and the keys it needs, in one call.

use core::borrow::Borrow;

use bitmap_core::Bitmap;

use super::error::HybridError;
use super::fold::{fold_grouped_into, fold_into};
use super::unfold::{unfold_grouped_into, unfold_into};
use super::workspace::FoldWorkspace;

/// The hit of a fold: the longest servable prefix, `highest set bit + 1`,
/// or 0 if no length is servable.
#[inline]
pub(crate) fn hit_of(servable: &Bitmap) -> usize {
    servable.last_set().map_or(0, |last| last + 1)
}

/// The prefix hit over the flat layout and the keys it needs: `hit` is the
/// longest prefix every group can serve ([`fold`](crate::fold)'s highest set
/// bit + 1, 0 if none) and the mask is [`unfold`](crate::unfold)`(hit, …)`.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::fold_unfold_ranked;
///
/// // 3 chunks × 2 ranks × one full group: chunk 2 misses rank 1.
/// let (hit, mask) = fold_unfold_ranked(&"111110".parse()?, 3, 2, &[-1])?;
/// assert_eq!((hit, mask.to_string().as_str()), (2, "111100"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`unfold`](crate::unfold).
pub fn fold_unfold_ranked(
    found: &Bitmap,
    num_chunks: usize,
    num_ranks: usize,
    windows: &[i64],
) -> Result<(usize, Bitmap), HybridError> {
    let mut mask = Bitmap::new(0);
    let hit = fold_unfold_ranked_into(found, num_chunks, num_ranks, windows, &mut FoldWorkspace::new(), &mut mask)?;
    Ok((hit, mask))
}

/// [`fold_unfold_ranked`] with one rank.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::fold_unfold;
///
/// // 5 chunks, groups [full {0,1,2,3}, window 2 {2,3,4}]: bit 2j + g.
/// let found = Bitmap::from_indices(10, [0, 2, 4, 5, 6, 7, 9])?;
/// let (hit, mask) = fold_unfold(&found, 5, &[-1, 2])?;
/// assert_eq!((hit, mask.to_indices()), (4, vec![0, 2, 4, 5, 6, 7]));
/// assert_eq!(fold_unfold(&Bitmap::new(0), 0, &[-1, 2])?, (0, Bitmap::new(0)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`unfold`](crate::unfold).
pub fn fold_unfold(found: &Bitmap, num_chunks: usize, windows: &[i64]) -> Result<(usize, Bitmap), HybridError> {
    fold_unfold_ranked(found, num_chunks, 1, windows)
}

/// [`fold_unfold_ranked`] into `mask` (made `num_chunks · G · R` bits long,
/// its buffer reused), with temporaries in `ws`; returns the hit. Allocates
/// nothing once `ws` and `mask` have served a call of the same shape.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::{FoldWorkspace, fold_unfold_ranked_into};
///
/// let (mut ws, mut mask) = (FoldWorkspace::new(), Bitmap::new(0));
/// let hit = fold_unfold_ranked_into(&Bitmap::with_prefix(12, 12), 3, 2, &[-1, 1], &mut ws, &mut mask)?;
/// assert_eq!((hit, mask.to_string().as_str()), (3, "110011001111"));
/// # Ok::<(), prefetch_policy::HybridError>(())
/// ```
///
/// # Errors
///
/// As [`unfold`](crate::unfold); `mask` is unspecified after an error.
pub fn fold_unfold_ranked_into(
    found: &Bitmap,
    num_chunks: usize,
    num_ranks: usize,
    windows: &[i64],
    ws: &mut FoldWorkspace,
    mask: &mut Bitmap,
) -> Result<usize, HybridError> {
    let mut servable = core::mem::take(&mut ws.folded);
    let folded = fold_into(found, num_chunks, num_ranks, windows, ws, &mut servable);
    ws.folded = servable;
    folded?;
    let hit = hit_of(&ws.folded);
    unfold_into(hit, num_chunks, num_ranks, windows, mask)?;
    Ok(hit)
}

/// The grouped form of [`fold_unfold_ranked`]: the hit over rows paired
/// with windows ([`fold_grouped`](crate::fold_grouped)) and one mask row
/// per input row ([`unfold_grouped`](crate::unfold_grouped)).
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::fold_unfold_grouped;
///
/// let rows: [Bitmap; 2] = ["11111".parse()?, "01011".parse()?];
/// let (hit, mask) = fold_unfold_grouped(&rows, &[-1, 2])?;
/// assert_eq!(hit, 5);
/// assert_eq!([mask[0].to_string(), mask[1].to_string()], ["11111", "00011"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`fold_grouped`](crate::fold_grouped).
pub fn fold_unfold_grouped<B: Borrow<Bitmap>>(
    rows: &[B],
    windows: &[i64],
) -> Result<(usize, Vec<Bitmap>), HybridError> {
    let mut out = Vec::new();
    let hit = fold_unfold_grouped_into(rows, windows, &mut FoldWorkspace::new(), &mut out)?;
    Ok((hit, out))
}

/// [`fold_unfold_grouped`] into `out` (resized to one row per window, each
/// row's buffer reused), with temporaries in `ws`; returns the hit.
/// Allocates nothing once warm.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::{FoldWorkspace, fold_unfold_grouped_into};
///
/// let rows = [Bitmap::new(0), Bitmap::new(0)];
/// let (mut ws, mut out) = (FoldWorkspace::new(), Vec::new());
/// assert_eq!(fold_unfold_grouped_into(&rows, &[-1, 2], &mut ws, &mut out)?, 0);
/// assert_eq!(out, [Bitmap::new(0), Bitmap::new(0)]);
/// # Ok::<(), prefetch_policy::HybridError>(())
/// ```
///
/// # Errors
///
/// As [`fold_grouped`](crate::fold_grouped); `out` is unspecified after an
/// error.
pub fn fold_unfold_grouped_into<B: Borrow<Bitmap>>(
    rows: &[B],
    windows: &[i64],
    ws: &mut FoldWorkspace,
    out: &mut Vec<Bitmap>,
) -> Result<usize, HybridError> {
    let mut servable = core::mem::take(&mut ws.folded);
    let folded = fold_grouped_into(rows, windows, ws, &mut servable);
    ws.folded = servable;
    folded?;
    let hit = hit_of(&ws.folded);
    unfold_grouped_into(hit, ws.folded.len(), windows, out)?;
    Ok(hit)
}
