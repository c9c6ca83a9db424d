//! A dense, fixed-length bitmap over `u64` words, with SIMD kernels chosen
//! at run time.
//!
//! [`Bitmap`] is the bitmap of an LMCache-style KV-cache controller: one bit
//! per key of a request, set if a storage adapter has that key. Its bytes
//! ([`Bitmap::as_bytes`]) are LMCache's `Bitmap` layout, its text form
//! ([`Display`](core::fmt::Display), [`FromStr`](core::str::FromStr)) is
//! LMCache's repr, and its ranges clamp to the length as LMCache's do. Bulk
//! work (counts, bitwise operations, unions, searches) runs on the
//! [`kernel`] module's dispatched SIMD kernels, so a 4-million-bit bitmap is
//! counted, combined or searched at memory speed.
//!
//! Every bit at or past the length is kept clear after every operation: see
//! [`Bitmap`] for that invariant and the layout.
//!
//! # Construct
//!
//! ```
//! use bitmap_core::Bitmap;
//!
//! let empty = Bitmap::new(10); // 10 bits, all clear
//! let prefix = Bitmap::with_prefix(10, 4); // bits 0..4 set
//! let listed = Bitmap::from_indices(10, [1, 5]).unwrap();
//! let bools = Bitmap::from_bools(&[true, false, true]);
//! let collected: Bitmap = (0..10).map(|i| i % 2 == 0).collect();
//! let parsed: Bitmap = "0100010000".parse().unwrap();
//! assert_eq!(listed, parsed);
//! assert_eq!((empty.popcount(), prefix.popcount(), bools.len(), collected.popcount()), (0, 4, 3, 5));
//! ```
//!
//! # Single bits
//!
//! ```
//! use bitmap_core::Bitmap;
//!
//! let mut bits = Bitmap::new(8);
//! bits.set(3);
//! bits.toggle(4);
//! bits.assign(5, true);
//! bits.clear(5);
//! assert!(bits.test(3) && bits.test(4) && !bits.test(5));
//! assert_eq!(bits.get(8), None); // out of range; `bits.test(8)` would panic
//! assert!(bits.try_set(8).is_err());
//! ```
//!
//! # Ranges
//!
//! Half-open, clamped to the length:
//!
//! ```
//! use bitmap_core::Bitmap;
//!
//! let mut bits = Bitmap::new(10);
//! bits.set_range(5..100); // sets 5..10
//! bits.clear_range(..7);
//! assert_eq!(bits.count_range(..), 3);
//! assert_eq!(bits.to_string(), "0000000111");
//! ```
//!
//! # Aggregates
//!
//! ```
//! use bitmap_core::Bitmap;
//!
//! let bits: Bitmap = "1110010".parse().unwrap();
//! assert_eq!(bits.popcount(), 4);
//! assert_eq!(bits.count_leading_ones(), 3); // the hit prefix
//! assert_eq!(bits.count_leading_zeros(), 0);
//! assert_eq!((bits.first_set(), bits.last_set()), (Some(0), Some(5)));
//! assert!(bits.any() && !bits.all() && !bits.none());
//! ```
//!
//! # Bitwise
//!
//! Operators for owned and borrowed operands (an owned operand's buffer is
//! reused), assign forms, and named methods with `try_` forms that return an
//! error instead of panicking on a length mismatch:
//!
//! ```
//! use bitmap_core::Bitmap;
//!
//! let a: Bitmap = "1100".parse().unwrap();
//! let b: Bitmap = "1010".parse().unwrap();
//! assert_eq!((&a & &b).to_string(), "1000");
//! assert_eq!((&a | &b).to_string(), "1110");
//! assert_eq!((&a ^ &b).to_string(), "0110");
//! assert_eq!((&a - &b).to_string(), "0100"); // set difference
//! assert_eq!((!a.clone()).to_string(), "0011");
//!
//! let mut c = a.clone();
//! c |= &b;
//! c.difference_with(&a);
//! assert_eq!(c.to_string(), "0010");
//! assert!(c.try_intersect_with(&Bitmap::new(3)).is_err());
//! ```
//!
//! # Fused
//!
//! Counts of a combination without building it, and many-way unions and
//! first-wins splits (each set bit to the first source that has it: a load
//! plan's core) in one pass:
//!
//! ```
//! use bitmap_core::Bitmap;
//!
//! let a: Bitmap = "1100".parse().unwrap();
//! let b: Bitmap = "1010".parse().unwrap();
//! assert_eq!(a.and_popcount(&b), 1);
//! assert_eq!(a.or_popcount(&b), 3);
//! assert_eq!(Bitmap::union_of(4, &[&a, &b]).unwrap().to_string(), "1110");
//! let mut split = [Bitmap::default(), Bitmap::default()];
//! Bitmap::first_wins_split(&[&a, &b], &mut split).unwrap();
//! assert_eq!([split[0].to_string(), split[1].to_string()], ["1100", "0010"]);
//! ```
//!
//! A split whose routing changes along the bits is written run by run with
//! a [`SplitWriter`], each word once, into buffers that are never zeroed.
//!
//! # Iteration
//!
//! ```
//! use bitmap_core::Bitmap;
//!
//! let hits: Bitmap = "0110".parse().unwrap();
//! assert_eq!(hits.ones().collect::<Vec<_>>(), [1, 2]);
//! assert_eq!(hits.to_indices(), [1, 2]);
//! assert_eq!(hits.iter().collect::<Vec<bool>>(), [false, true, true, false]);
//! let keys = ["k0", "k1", "k2", "k3"];
//! assert_eq!(hits.gather(&keys).copied().collect::<Vec<_>>(), ["k1", "k2"]);
//! ```
//!
//! # Rows, deposit and extract
//!
//! The [`layout`] moves of a hybrid-model controller: a flat, chunk-major
//! bitmap (bit `j·n + k` is chunk `j` of row `k`) split into its `n` rows
//! and joined back, and PDEP/PEXT of a flat bitmap into and out of the set
//! positions of mask rows, word by word (BMI2 where the CPU runs it fast):
//!
//! ```
//! use bitmap_core::Bitmap;
//! use bitmap_core::layout::{join_rows, split_rows};
//!
//! let flat: Bitmap = "11011000".parse().unwrap(); // 4 chunks × 2 rows
//! let rows = split_rows(&flat, 2, 4);
//! assert_eq!([rows[0].to_string(), rows[1].to_string()], ["1010", "1100"]);
//! assert_eq!(join_rows(&rows).unwrap(), flat);
//! let mask: Bitmap = "0110".parse().unwrap();
//! assert_eq!("10".parse::<Bitmap>().unwrap().deposit(&mask).unwrap().to_string(), "0100");
//! assert_eq!(flat.extract(&"11110000".parse().unwrap()).unwrap().to_string(), "1101");
//! ```
//!
//! # Text, words and bytes
//!
//! ```
//! use bitmap_core::Bitmap;
//!
//! let bits: Bitmap = "1000000001".parse().unwrap();
//! assert_eq!(bits.to_string(), "1000000001");
//! assert_eq!(bits.as_bytes(), [0b0000_0001, 0b0000_0010]); // LMCache's layout
//! assert_eq!(bits.as_words(), [0b10_0000_0001]);
//! assert_eq!(Bitmap::from_bytes(10, bits.as_bytes()).unwrap(), bits);
//! assert_eq!(Bitmap::from_word_slice(10, bits.as_words()).unwrap(), bits);
//! println!("{bits:?}"); // Bitmap { len: 10, ones: 2, bits: "1000000001" }, cut short for long maps
//! ```
//!
//! The byte view is a view of the words' memory, which is LMCache's layout
//! only on a little-endian target; the crate does not build for big-endian
//! ones.
//!
//! # Reusing buffers
//!
//! Lengths are fixed, but [`Bitmap::reset`] and [`Bitmap::copy_from`] reuse
//! a bitmap's buffer for another length, and [`Bitmap::words_mut`] lets a
//! kernel write the words in place (restoring the invariant afterwards):
//!
//! ```
//! use bitmap_core::Bitmap;
//!
//! let mut scratch = Bitmap::with_capacity_bits(4096);
//! for len in [100, 4096, 7] {
//!     scratch.reset(len); // no allocation: len <= capacity
//!     scratch.words_mut().fill(u64::MAX);
//!     assert_eq!(scratch.popcount(), len);
//! }
//! ```
//!
//! # Serde
//!
//! With the `serde` feature, a bitmap serializes as
//! `{ "len": N, "bits": "0101…" }`: its length and its bit string (bit 0
//! first, as `Display` writes it). Deserializing checks the string as
//! `FromStr` does and that it has exactly `len` characters, so a
//! deserialized bitmap is always valid.
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! use bitmap_core::Bitmap;
//!
//! let bits = Bitmap::from_indices(5, [1, 4]).unwrap();
//! let json = serde_json::to_string(&bits).unwrap();
//! assert_eq!(json, r#"{"len":5,"bits":"01001"}"#);
//! assert_eq!(serde_json::from_str::<Bitmap>(&json).unwrap(), bits);
//! assert!(serde_json::from_str::<Bitmap>(r#"{"len":6,"bits":"01001"}"#).is_err());
//! # }
//! ```
//!
//! # Kernels
//!
//! Word-level work runs on the fastest kernel this CPU supports (AVX-512,
//! else AVX2 on x86-64, NEON on aarch64, else a portable `wide` kernel),
//! picked once per process on first use; small inputs run a scalar loop
//! inline. Setting the environment variable `BITMAP_CORE_KERNEL` to
//! `scalar`, `portable`, `avx2`, `avx512`, `neon` or `auto` forces one (an unknown or unavailable name makes the
//! first bitmap operation panic rather than silently use another kernel).
//! Every kernel gives the same results. See the [`kernel`] module for the
//! details and for calling a particular kernel directly.

// All `unsafe` lives in `kernel`; everything else is safe Rust.
#![deny(unsafe_code)]

#[cfg(target_endian = "big")]
compile_error!(
    "bitmap-core supports little-endian targets only: `Bitmap::as_bytes` views the u64 words' memory as LMCache's \
     byte layout, which requires little-endian words"
);

#[allow(unsafe_code)]
pub mod kernel;
pub mod layout;

mod bitmap;
mod error;
mod fmt;
mod iter;
mod ops;
mod serialization;
mod split_writer;
mod storage;
#[cfg(test)]
mod test_support;

pub use crate::bitmap::Bitmap;
pub use crate::error::{BitmapError, SizeUnit};
pub use crate::iter::{Gather, Iter, Ones};
pub use crate::serialization::WordsMut;
pub use crate::split_writer::SplitWriter;

/// This crate's README (what crates.io shows), its example compiled and run
/// as a doctest so that it cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
