//! [`create_policy`]: LMCache's `CreateEvictionPolicy`
//! (`eviction_policy/factory.py`) by name.

use crate::eviction::arc::Arc;
use crate::eviction::chunk_lru::ChunkLru;
use crate::eviction::isolated_lru::IsolatedLru;
use crate::eviction::policy::{EvictionPolicy, NoEviction};
use crate::eviction::s3fifo::S3Fifo;

/// The names [`create_policy`] accepts, as LMCache's factory spells them.
pub const POLICY_NAMES: &[&str] = &["LRU", "IsolatedLRU", "S3FIFO", "ARC", "noop"];

/// A policy name LMCache's factory does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown eviction policy {name:?}; known: LRU, IsolatedLRU, S3FIFO, ARC, noop")]
pub struct UnknownPolicy {
    /// The name asked for.
    pub name: String,
}

/// The policy LMCache's `CreateEvictionPolicy` builds for `name`, with its
/// defaults: `"LRU"` → [`ChunkLru`], `"IsolatedLRU"` → [`IsolatedLru`],
/// `"S3FIFO"` → [`S3Fifo`] (no bound on small), `"ARC"` → [`Arc`],
/// `"noop"` → [`NoEviction`]. Names are case-sensitive, as in LMCache.
///
/// ```
/// use tier_state::create_policy;
/// assert_eq!(create_policy("ARC")?.name(), "ARC");
/// let err = create_policy("lfu").unwrap_err();
/// assert_eq!(err.to_string(), r#"unknown eviction policy "lfu"; known: LRU, IsolatedLRU, S3FIFO, ARC, noop"#);
/// # Ok::<(), tier_state::UnknownPolicy>(())
/// ```
pub fn create_policy(name: &str) -> Result<Box<dyn EvictionPolicy>, UnknownPolicy> {
    Ok(match name {
        "LRU" => Box::new(ChunkLru::new()),
        "IsolatedLRU" => Box::new(IsolatedLru::new()),
        "S3FIFO" => Box::new(S3Fifo::new()),
        "ARC" => Box::new(Arc::new()),
        "noop" => Box::new(NoEviction),
        _ => return Err(UnknownPolicy { name: name.to_owned() }),
    })
}
