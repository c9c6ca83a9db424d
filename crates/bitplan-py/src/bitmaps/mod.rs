//! The two Python bitmap classes over one Rust `Bitmap`, kept together
//! because they are one design: `flavor` declares both (the Pythonic
//! `bitplan.Bitmap` and LMCache's `bitplan.lmcache.native.Bitmap`), the
//! store of an LMCache `Bitmap2D` whose rows LMCache bitmaps view, and
//! `AnyBitmap`, which borrows either; `bitmap` and `lmcache` give each
//! class its methods, with its own semantics, and take operands of both
//! without importing each other. `positions` reads the positions an
//! LMCache `batched_set` sets, in every form a controller has them in;
//! `moves` is the flat ↔ grid moves both grid classes expose (`from_flat`,
//! `to_flat`), with one set of argument checks.
//!
//! Above `boundary`; below LMCache's grids, the plans, the tiers and
//! eviction, which take and return these bitmaps.

pub(crate) mod bitmap;
pub(crate) mod flavor;
pub(crate) mod lmcache;
pub(crate) mod moves;
pub(crate) mod positions;
