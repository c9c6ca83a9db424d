//! `bitplan.lmcache.tiers` (issue #28): a tier's bookkeeping, LMCache's
//! `L1Manager` rules over one tier-state `Tier`, behind two faces.
//! `ChunkTier` (`chunk`) is the positional fast path: a request's keys as
//! one `RequestKeys` (`request_keys`, chunk hashes × row ids), answers as
//! `Bitmap2D` masks. `L1Bookkeeper` (`books`) keeps LMCache's method
//! names, arguments and results over any hashable keys, through the key
//! table. `common` holds what both share: tier-state's errors as Python
//! exceptions, LMCache's `L1Error` members, writer tags, the `ManualClock`
//! and how a tier is built from Python arguments.
//!
//! Above `key_table` and LMCache's grids (`lmcache`), which it takes and
//! answers in.

pub(crate) mod books;
pub(crate) mod chunk;
pub(crate) mod common;
pub(crate) mod request_keys;
