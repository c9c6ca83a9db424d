//! The native side of the LMCache integration
//! (`python/bitplan/lmcache/integration/`, which puts bitplan under an
//! installed LMCache): whatever of it comes to need Rust goes here. Empty
//! for now; nothing in the crate imports it.
//!
//! A folder of its own at the top, under `lib.rs` only: the integration
//! stands on the tiers, eviction and the plans, and no other folder may
//! import it, so it can use them all without an import circle.
