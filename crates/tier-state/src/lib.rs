//! The state of one KV-cache tier as bitmaps over dense slots: LMCache's
//! `L1Manager` bookkeeping (`lmcache/v1/distributed/l1_manager.py`), batched,
//! without the memory.
//!
//! A [`Tier`] maps keys ([`TierKey`]: a chunk hash and a row) to dense slot
//! ids and keeps each key's state in bitmaps over those slots: resident,
//! read-locked, staged (a writer's reservation), temporary. Read-lock
//! counts and lock expiries live in per-slot arrays. Every call takes a
//! batch of keys, as a slice or as a controller request's
//! [`GridKeys`] (chunk hashes × row ids), and answers in a reused
//! [`Batch`] or [`GridBatch`]: a success mask in request order, the
//! [`Outcome`] of each key that failed (LMCache's `L1Error` codes), and the
//! slots of the keys it hands out. The eviction policy hears what was
//! created, touched and removed, in batches ([`EvictionPolicy`], [`Lru`]).
//!
//! LMCache's eviction policies are here too, on the same trait, each event
//! O(1) a slot over arrays indexed by slot: [`ChunkLru`] (its LRU, with
//! chunk-coherent victims), [`IsolatedLru`] (one LRU per cache salt),
//! [`S3Fifo`], [`Arc`] and [`NoEviction`], built by LMCache's names with
//! [`create_policy`]. Chunk families and salts come as [`KeyMeta`] through
//! [`EvictionPolicy::on_created_with`].
//!
//! # LMCache's rules
//!
//! - A key is absent, *staged* (a writer tag's reservation: write-locked,
//!   invisible to readers and to other tags; several tags may stage one
//!   key), *resident*, or resident and *read-locked* with a count.
//! - Both locks are LMCache's `TTLLock`: held while the count is above 0 and
//!   the clock is before the expiry; taking it moves the expiry to
//!   now + TTL, and an expired lock starts again from the new count. An
//!   expired lock counts as unlocked; the tier decides this when a call
//!   reads the lock, with the time from its [`Clock`].
//! - `read_locks` is clamped to 1–128 ([`clamp_read_locks`]).
//! - A temporary object is deleted when its last read lock is released.
//! - Capacity counts objects: resident objects and staging objects. The
//!   new objects of one `reserve_write` are allocated together: if they do
//!   not all fit, each gets `OUT_OF_MEMORY` and nothing is left behind.
//!
//! Each method's docs give its outcomes and events. Where this crate's
//! issue and LMCache's code differ, the code wins; the docs say where
//! ([`Tier::evictable_into`], [`Tier::reserve_write`]).
//!
//! # Example
//!
//! ```
//! use tier_state::{Answer, Batch, Flags, ManualClock, Outcome, Lru, Tier, TierConfig, TierKey};
//!
//! let clock = ManualClock::new(0);
//! let config = TierConfig::new(4).with_ttls_ms(1_000, 500);
//! let mut tier = Tier::with_parts(config, Box::new(clock.clone()), Box::new(Lru::new()))?;
//! let keys = [TierKey::new(0xa, 0), TierKey::new(0xb, 0), TierKey::new(0xc, 0)];
//! let mut answer = Batch::default();
//!
//! // A writer (tag 7) reserves three keys; readers cannot see them yet.
//! tier.reserve_write(&keys[..], Flags::All(false), 7, &mut answer)?;
//! assert_eq!(answer.num_ok(), 3);
//! tier.reserve_read(&keys[..], 1, &mut answer)?;
//! assert_eq!(answer.outcome(0), Outcome::KeyNotExist);
//!
//! // It finishes two; the third's write lock expires.
//! tier.finish_write(&keys[..2], 7, &mut answer)?;
//! clock.advance(500);
//! tier.finish_write(&keys[2..], 7, &mut answer)?;
//! assert_eq!(answer.failed(), &[(0, Outcome::KeyInWrongState)]);
//!
//! // Two readers lock key 0; it cannot be deleted until both finish.
//! tier.reserve_read(&keys[..1], 2, &mut answer)?;
//! tier.delete(&keys[..1], false, &mut answer)?;
//! assert_eq!(answer.outcome(0), Outcome::KeyIsLocked);
//! tier.finish_read(&keys[..1], 2, &mut answer)?;
//! tier.delete(&keys[..1], false, &mut answer)?;
//! assert!(answer.ok().test(0));
//!
//! // Capacity: 4 objects; 2 held (key 1, key 2's expired reservation).
//! let more = [TierKey::new(1, 1), TierKey::new(2, 1), TierKey::new(3, 1)];
//! tier.reserve_write(&more[..], Flags::All(false), 8, &mut answer)?;
//! assert_eq!(answer.failed().len(), 3); // all OUT_OF_MEMORY, none created
//! assert_eq!(tier.num_objects(), 2);
//! # Ok::<(), tier_state::TierError>(())
//! ```
//!
//! # Choices
//!
//! - **Key table:** hashbrown's `HashTable<u32>` of block ids, hashed with
//!   FxHash (see `table/key_table.rs` and [`TierKey`] for why). A block is
//!   a chunk's rows: a tier of at most 64 rows ([`TierConfig::with_rows`])
//!   gives each chunk one block of slots (its row count rounded up to a
//!   power of two), so a grid request probes the table once a chunk and
//!   finds each row's slot by arithmetic; a tier of any row has a block a
//!   key. Lock words and bits cost 12 bytes and 6 bits a slot, a block 12
//!   bytes and its bucket: [`Tier::bytes_per_key`] reports it.
//! - **A chunk at a time:** a block's slots are one word of each state
//!   bitmap, so a grid request whose rows are the block's rows in order (a
//!   controller asking about all of a chunk's groups and ranks) runs most
//!   calls a word per chunk, with per-key work only for lock counts,
//!   expiries and tags, and its answers go back to request order through
//!   64×64 transposes (`ops/words.rs`). Other requests go key by key; both
//!   give the same outcomes, slots, events and state (`tests/grid.rs`).
//!   [`GridBatch::mask_only`] skips the failure list and slots for callers
//!   that read only the mask.
//! - **Expiry** is decided at access. The bitmaps are exact for
//!   resident/staged/temporary; `read_locked` may still hold expired locks
//!   until [`Tier::sweep_expired`] (which [`Tier::evictable_into`] runs).
//! - **Threads:** [`Tier`] is `Send`; [`SharedTier`] puts it behind one
//!   mutex, as LMCache's manager holds one lock around each call.

mod answer;
mod clock;
mod config;
mod error;
mod eviction;
mod key;
#[doc(hidden)]
pub mod model;
mod ops;
mod outcome;
mod pos;
mod request;
mod shared;
mod table;
mod tier;

/// The bitmap crate whose `Bitmap` this crate's API takes and gives
/// (state bitmaps, flags), re-exported so that callers name the same version.
pub use bitmap_core;
/// The planning crate whose `Grid` this crate's grid requests answer in.
pub use prefetch_policy;

pub use answer::{Answer, Batch, GridBatch, NO_SLOT};
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{DEFAULT_READ_TTL_MS, DEFAULT_WRITE_TTL_MS, TierConfig};
pub use error::TierError;
pub use eviction::{
    Arc, ArcState, ChunkLru, Eligible, EvictionPolicy, IsolatedLru, KeyMeta, Lru, NoEviction, POLICY_NAMES, S3Fifo,
    UnknownPolicy, compute_kv_rank, create_policy, kv_topology, target_count,
};
// The policies' plain models: public for the tests and the fuzz checks,
// hidden from the docs, as `model` is.
#[doc(hidden)]
pub use eviction::policy_model;
pub use key::TierKey;
pub use ops::ClearReport;
pub use outcome::Outcome;
pub use request::{Flags, GridKeys, Keys, Pos};
pub use shared::SharedTier;
pub use tier::{MAX_CAPACITY, MAX_READ_LOCK_COUNT, Tier, clamp_read_locks};

/// This crate's README, compiled and run as a doctest so it cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
