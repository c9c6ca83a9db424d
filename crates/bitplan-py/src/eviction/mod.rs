//! `bitplan.lmcache.eviction_policy` (issue #29): LMCache's eviction
//! policies over tier-state's, behind two faces. `_EvictionCore`
//! (`policy`) is the native base that LMCache's policy classes subclass in
//! Python, over any hashable keys through the key table;
//! `SlotEvictionPolicy` (`slots`) is the positional fast path, keys named
//! by dense slot ids in numpy arrays. `native` is the tier-state policy
//! behind both, chosen by LMCache's factory name.
//!
//! Above `key_table` and the bitmap classes (eligibility is a `Bitmap`
//! over slots); the tiers do not import it, nor it the tiers.

pub(crate) mod native;
pub(crate) mod policy;
pub(crate) mod slots;
