//! The native policy behind both faces of `bitplan.lmcache.eviction_policy`:
//! one of tier-state's policies, chosen by LMCache's factory name, kept as
//! its concrete type so that the test helpers LMCache's classes have
//! (`get_eviction_candidates`, `get_debug_state`, the per-salt counts) can
//! reach it.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tier_state::{ChunkLru, Eligible, EvictionPolicy, IsolatedLru, KeyMeta, NoEviction, POLICY_NAMES, S3Fifo};

/// A policy by its LMCache name.
#[derive(Debug)]
pub(crate) enum Native {
    Lru(ChunkLru),
    /// LMCache 0.5.6's LRU: victims key by key (no chunk families), so no
    /// key's meta is read.
    PlainLru(ChunkLru),
    IsolatedLru(IsolatedLru),
    S3Fifo(S3Fifo),
    Arc(tier_state::Arc),
    NoOp(NoEviction),
}

impl Native {
    /// `name` as LMCache's `CreateEvictionPolicy` spells it; `small_max_size`
    /// is S3-FIFO's (`ValueError` for the others, which take none). `plain`
    /// makes the LRUs take victims key by key, as LMCache 0.5.6's release
    /// does, rather than whole chunk families.
    pub(crate) fn new(name: &str, small_max_size: Option<usize>, plain: bool) -> PyResult<Native> {
        if small_max_size.is_some() && name != "S3FIFO" {
            return Err(PyValueError::new_err(format!("small_max_size is S3FIFO's; {name} takes none")));
        }
        Ok(match name {
            "LRU" if plain => Native::PlainLru(ChunkLru::default()),
            "LRU" => Native::Lru(ChunkLru::default()),
            "IsolatedLRU" if plain => Native::IsolatedLru(IsolatedLru::plain()),
            "IsolatedLRU" => Native::IsolatedLru(IsolatedLru::default()),
            "S3FIFO" => Native::S3Fifo(S3Fifo::with_small_max_size(small_max_size)),
            "ARC" => Native::Arc(tier_state::Arc::default()),
            "noop" => Native::NoOp(NoEviction),
            _ => return Err(unknown_policy(name)),
        })
    }

    /// The policy behind the trait.
    pub(crate) fn policy(&mut self) -> &mut dyn EvictionPolicy {
        match self {
            Native::Lru(policy) | Native::PlainLru(policy) => policy,
            Native::IsolatedLru(policy) => policy,
            Native::S3Fifo(policy) => policy,
            Native::Arc(policy) => policy,
            Native::NoOp(policy) => policy,
        }
    }

    /// The policy behind the trait, read-only.
    pub(crate) fn policy_ref(&self) -> &dyn EvictionPolicy {
        match self {
            Native::Lru(policy) | Native::PlainLru(policy) => policy,
            Native::IsolatedLru(policy) => policy,
            Native::S3Fifo(policy) => policy,
            Native::Arc(policy) => policy,
            Native::NoOp(policy) => policy,
        }
    }

    /// Whether the policy needs each key's [`KeyMeta`] (the chunk-coherent
    /// LRUs).
    pub(crate) fn wants_meta(&self) -> bool {
        matches!(self, Native::Lru(_) | Native::IsolatedLru(_))
    }

    /// `on_keys_created`, with the keys' metas for the policies that use them.
    pub(crate) fn created(&mut self, slots: &[u32], metas: &[KeyMeta]) {
        if self.wants_meta() && metas.len() == slots.len() {
            self.policy().on_created_with(slots, metas);
        } else {
            self.policy().on_created(slots);
        }
    }

    /// The victims for `ratio`, in `salt` for the isolated policy.
    pub(crate) fn victims(&mut self, ratio: f64, salt: Option<u32>, eligible: Eligible<'_>, out: &mut Vec<u32>) {
        match salt {
            Some(salt) => self.policy().victims_in_salt(salt, ratio, eligible, out),
            None => self.policy().victims(ratio, eligible, out),
        }
    }
}

/// `ValueError` naming the known policies.
pub(crate) fn unknown_policy(name: &str) -> PyErr {
    PyValueError::new_err(format!("Unsupported eviction policy: {name:?}; known: {}", POLICY_NAMES.join(", ")))
}
