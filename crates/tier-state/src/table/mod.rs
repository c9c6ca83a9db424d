//! Where a tier keeps its keys and their state: the key table, which
//! files each key under a dense slot id, and the slot state, bitmaps and
//! per-slot arrays indexed by those ids.
//!
//! None of it is public: [`Tier`](crate::Tier) owns one of each, and the
//! calls (`ops/`) read and change them. They are a module of their own
//! because they are the crate's storage, below the calls and beside the
//! public vocabulary at the top level (keys, requests, answers, outcomes),
//! and know nothing of the calls or of the eviction policy.
//!
//! - `key_table`: [`KeyTable`], chunks → blocks of slots over hashbrown's
//!   `HashTable<u32>`, freed blocks reused;
//! - `slots`: [`Slots`], the bitmaps over slots and the per-slot words,
//!   with LMCache's `TTLLock` and staging rules, and [`SlotWords`], the
//!   same state as words for the word-at-a-time calls;
//! - `resolve`: visiting a batch's keys with their slots, one probe a key
//!   or one a chunk (the pass every call makes).

mod key_table;
mod resolve;
mod slots;

pub(crate) use key_table::KeyTable;
pub(crate) use slots::{SlotWords, Slots, StageAt};
