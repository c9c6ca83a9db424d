//! The table of Python keys under `bitplan.lmcache.tiers.L1Bookkeeper`
//! and `bitplan.lmcache.eviction_policy`'s classes: each hashable key
//! (LMCache's `ObjectKey`) gets a dense slot id once, and the native tier
//! or policy works on slots (`table`); keys whose `__hash__` and `__eq__`
//! dataclasses wrote are hashed and compared natively, where that gives
//! exactly what their Python code gives (`fields`).
//!
//! A folder of its own, below `tiers` and `eviction`, because both stand
//! on it and neither is the other's; it imports nothing of the crate.

pub(crate) mod fields;
pub(crate) mod table;
