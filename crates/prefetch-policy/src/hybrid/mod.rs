//! Prefix hits for hybrid models: LMCache's `bitmap_ops` (`fold`, `unfold`
//! and their grouped and ranked forms) over [`Bitmap`](bitmap_core::Bitmap).
//!
//! A request has `C` chunks, `G` object groups (one per window in
//! `windows`) and `R` tensor-parallel ranks. A prefix of `L` chunks is
//! usable only if every group can serve it under its own rule: full
//! attention (`window <= 0`, [`FULL_ATTENTION_WINDOW`]) needs chunks `0..L`,
//! a sliding window `w >= 1` needs chunks `max(0, L − w)..L` (`w = 1` is a
//! Mamba/recurrent group: the last chunk only), and a chunk is present for a
//! group only if all `R` of its rank bits are.
//!
//! - Flat layout (chunk-major): bit `j·G·R + g·R + r` is chunk `j`, group
//!   `g`, rank `r`. [`fold`](fn@fold) gives the servable lengths, [`unfold`](fn@unfold) the keys a
//!   hit needs, [`fold_unfold_ranked`] and [`fold_unfold`](fn@fold_unfold) both at once.
//! - Grouped layout: one `C`-bit row per (group, rank), paired one to one
//!   with `windows`: [`fold_grouped`], [`unfold_grouped`],
//!   [`fold_unfold_grouped`].
//! - The `_into` forms write into reused outputs with temporaries in a
//!   [`FoldWorkspace`]: no allocation once warm.
//!
//! ```
//! use bitmap_core::Bitmap;
//! use prefetch_policy::{FULL_ATTENTION_WINDOW, fold_unfold_ranked};
//!
//! // 300 chunks × 4 ranks × groups [full, full, window 8, window 32, Mamba].
//! let (chunks, ranks, windows) = (300, 4, [FULL_ATTENTION_WINDOW, -1, 8, 32, 1]);
//! let width = windows.len() * ranks;
//! let mut found = Bitmap::with_prefix(chunks * width, chunks * width);
//! found.clear(150 * width); // group 0 misses chunk 150 (all prefixes past it)
//! found.clear(220 * width + ranks + 2); // group 1 misses rank 2 of chunk 220
//! for chunk in 10..13 {
//!     found.clear(chunk * width + 2 * ranks); // window 8 misses chunks 10..13
//! }
//! found.clear(130 * width + 3 * ranks); // window 32 misses chunk 130
//! let (hit, mask) = fold_unfold_ranked(&found, chunks, ranks, &windows)?;
//! assert_eq!(hit, 130);
//! assert_eq!(mask.count_range(..), 130 * 2 * ranks + 32 * ranks + 8 * ranks + ranks);
//! # Ok::<(), prefetch_policy::HybridError>(())
//! ```

mod error;
mod fold;
mod fold_unfold;
mod merge;
pub(crate) mod reference;
mod unfold;
mod words;
mod workspace;

pub use error::{HybridError, chunk_count};
pub use fold::{fold, fold_grouped, fold_grouped_into, fold_into};
/// Whether a window is a sliding window for a number of chunks (one below
/// it), shared with the grid plan so both read a window the same way.
pub(crate) use fold::{fold_word_rows_into, leading_ones, sliding};
pub use fold_unfold::{
    fold_unfold, fold_unfold_grouped, fold_unfold_grouped_into, fold_unfold_ranked, fold_unfold_ranked_into,
};
pub use merge::{TrimPolicy, merge_bitmaps, select_retained};
pub use unfold::{unfold, unfold_grouped, unfold_grouped_into, unfold_into, unfold_range};
pub use workspace::FoldWorkspace;

/// The window of a full-attention group. Every window `<= 0` means full
/// attention; this is the one LMCache uses
/// (`FULL_ATTENTION_WINDOW_CHUNKS = -1`).
pub const FULL_ATTENTION_WINDOW: i64 = -1;
