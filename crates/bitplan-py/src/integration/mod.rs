//! The native side of the LMCache integration
//! (`python/bitplan/lmcache/integration/`, which puts bitplan under an
//! installed LMCache 0.5.6): [`l1_books::PyL1Books`], the books of one
//! `L1Manager` (its keys, locks, staging and memory objects), with the
//! LMCache-shaped calls its manager makes and the calls over a request's
//! cells its prefetch controller makes, on [`request::PinnedKeys`].
//!
//! A folder of its own at the top, under `lib.rs` only: the integration
//! stands on the tiers, the key table and the grids, and no other folder
//! may import it, so it can use them all without an import circle.

mod answers;
mod books;
pub(crate) mod l1_books;
mod ops;
pub(crate) mod request;
