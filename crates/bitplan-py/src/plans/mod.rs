//! What computes a plan or a hit, over the Rust crates' planners: the flat
//! prefetch policies and `LoadPlan` with the controller's helpers
//! (`policy`); the prefix hits of hybrid models, fold and unfold in their
//! forms, once for each module (`hybrid`); `bitplan.Grid`, the grid plan
//! and the grid policies (`grid`); and LMCache's grid `plan_load` over its
//! own `MapState`s in one call (`lmcache`).
//!
//! A folder above the bitmap classes and LMCache's grid containers, which
//! these functions take and answer in. `lmcache` is here, not beside
//! `MapState`, because it reads its grids through `grid::grid_from`, and
//! `grid` and `hybrid` take a `Bitmap2D`: so the folders import one way.

pub(crate) mod grid;
pub(crate) mod hybrid;
pub(crate) mod lmcache;
pub(crate) mod policy;
