//! `merge_bitmaps` and `select_retained`: LMCache's small helpers around
//! the fold.

use core::borrow::Borrow;

use bitmap_core::Bitmap;

/// The union of `bitmaps`, `num_keys` bits long: an input's bits past
/// `num_keys` are dropped and its missing bits read as 0 (LMCache's
/// `merge_bitmaps` instead shrinks the result to its shortest input, a
/// side effect of its `|`; here the length is always `num_keys`). No input
/// gives all zeros.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::merge_bitmaps;
///
/// let a: Bitmap = "1100".parse()?;
/// let b: Bitmap = "001".parse()?;
/// assert_eq!(merge_bitmaps(&[a, b], 5).to_string(), "11100");
/// assert_eq!(merge_bitmaps::<Bitmap>(&[], 3).to_string(), "000");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn merge_bitmaps<B: Borrow<Bitmap>>(bitmaps: &[B], num_keys: usize) -> Bitmap {
    let mut out = Bitmap::new(num_keys);
    {
        // The guard clears the bits of an input's last word past num_keys.
        let mut words = out.words_mut();
        for bitmap in bitmaps {
            for (o, w) in words.iter_mut().zip(bitmap.borrow().as_words()) {
                *o |= *w;
            }
        }
    }
    out
}

/// LMCache's `TrimPolicy`: which found keys a prefix fetch keeps. Only
/// [`Prefix`](TrimPolicy::Prefix) changes anything (LMCache tests
/// `policy is PREFIX`); it is superseded by the grid plan's fetching
/// policy, and kept for callers of the older API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TrimPolicy {
    /// Keep the leading run of found keys.
    Prefix,
    /// Keep every found key (LMCache's `SEGMENTED_PREFIX`).
    SegmentedPrefix,
    /// Keep every found key (LMCache's `SPARSE`).
    Sparse,
}

/// The found keys to retain under `policy`: with [`TrimPolicy::Prefix`], the
/// first `found.count_leading_ones()` of `num_keys` bits; otherwise a copy
/// of `found`.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::{TrimPolicy, select_retained};
///
/// let found: Bitmap = "110110".parse()?;
/// assert_eq!(select_retained(&found, 6, TrimPolicy::Prefix).to_string(), "110000");
/// assert_eq!(select_retained(&found, 6, TrimPolicy::Sparse), found);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn select_retained(found: &Bitmap, num_keys: usize, policy: TrimPolicy) -> Bitmap {
    match policy {
        TrimPolicy::Prefix => Bitmap::with_prefix(num_keys, found.count_leading_ones()),
        TrimPolicy::SegmentedPrefix | TrimPolicy::Sparse => found.clone(),
    }
}
