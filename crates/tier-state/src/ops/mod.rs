//! The lifecycle calls: LMCache's `L1Manager` calls as methods of
//! [`Tier`](crate::Tier), each file an `impl Tier` block.
//!
//! `tier.rs` defines the tier (its state, construction, queries and the
//! event delivery to the policy); the calls that change that state are
//! most of the crate's rules and lines, so they live here, by side:
//!
//! - `read`: `reserve_read`, `unsafe_read`, `finish_read`;
//! - `write`: `reserve_write` and the finishes of a write;
//! - `delete`: `delete`, `touch`, `clear` and `evict` ([`ClearReport`]);
//! - `word_calls`: the word-at-a-time forms of those calls, which each
//!   per-key call tries first for a grid request whose rows are its
//!   chunks' block rows, a chunk's word of each state bitmap at a time;
//! - `words`: such a request in column form ([`Words`], scratch kept by the
//!   tier), and the column answers back into request order.
//!
//! The per-key calls find keys through the key table's visits
//! (`table/resolve.rs`) and stay the reference the word forms are tested
//! against.

mod delete;
mod read;
mod word_calls;
mod words;
mod write;

pub use delete::ClearReport;
pub(crate) use words::Words;
