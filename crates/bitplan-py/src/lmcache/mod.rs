//! LMCache's grid containers as native classes, with LMCache's rules
//! (`storage_controllers/utils.py`): `Bitmap2D` (`grid`), one contiguous
//! prefetch-policy `Grid` whose rows LMCache bitmaps can view, and
//! `MapState` (`map`), tier index → `Bitmap2D` with one shared shape.
//! `bitplan.lmcache.prefetch_policy` re-exports them.
//!
//! A folder of its own because the layers above take these containers:
//! the fold functions and the grid plan (`plans`), the tiers' masks
//! (`tiers`). LMCache's bitmap class is in `bitmaps`, beside the Pythonic
//! one it shares its declaration with; LMCache's `plan_load` over these
//! containers is `plans::lmcache`, above `plans::grid`, whose `grid_from`
//! it reads them with. So the folders import one way: this one imports only
//! `bitmaps` and `boundary`.

pub(crate) mod grid;
pub(crate) mod map;
