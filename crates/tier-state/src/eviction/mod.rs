//! The eviction policies: the [`EvictionPolicy`] trait a tier reports its
//! events to, LMCache's policies on it ([`Lru`], [`ChunkLru`],
//! [`IsolatedLru`], [`S3Fifo`], [`Arc`], [`NoEviction`]), LMCache's factory
//! by name ([`create_policy`]), what the chunk-coherent and per-salt
//! policies know of a key ([`KeyMeta`]), and the plain models the tests
//! check the policies against (`policy_model`).
//!
//! They are a module of their own because they know nothing of the tier:
//! a policy sees slots, batches of events and an eligibility, never keys,
//! locks or the key table, so every file here imports only this folder
//! (and bitmap-core), and a policy can be written, tested and timed
//! without a [`Tier`](crate::Tier). The rest of the crate uses this
//! module only through the re-exports below.
//!
//! - `policy`: the trait, [`Eligible`], [`target_count`], [`NoEviction`];
//! - `meta`: [`KeyMeta`] and LMCache's `kv_rank` packing;
//! - `links`: the doubly linked lists over slot-indexed arrays that
//!   S3-FIFO, ARC and the per-salt LRU share;
//! - `families`: chunk-coherent victim selection, for the LRU policies;
//! - `lru`, `chunk_lru`, `isolated_lru`, `s3fifo`, `arc`: the policies;
//! - `factory`: [`create_policy`] by LMCache's names;
//! - `policy_model`: the plain models (`#[doc(hidden)]`, public for the
//!   tests and the fuzz checks).

mod arc;
mod chunk_lru;
mod factory;
mod families;
mod isolated_lru;
mod links;
mod lru;
mod meta;
mod policy;
#[doc(hidden)]
pub mod policy_model;
mod s3fifo;

pub use arc::{Arc, ArcState};
pub use chunk_lru::ChunkLru;
pub use factory::{POLICY_NAMES, UnknownPolicy, create_policy};
pub use isolated_lru::IsolatedLru;
pub use lru::Lru;
pub use meta::{KeyMeta, compute_kv_rank, kv_topology};
pub use policy::{Eligible, EvictionPolicy, NoEviction, target_count};
pub use s3fifo::S3Fifo;
