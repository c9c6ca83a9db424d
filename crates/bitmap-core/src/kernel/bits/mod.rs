//! The bit moves of the hybrid-model layouts, word by word: strided gather
//! with an AND over each cell (rank reduction, row split), strided scatter
//! (row join), deposit and extract (PDEP/PEXT over whole bitmaps), periodic
//! fills (unfold) and the shifted AND of the windowed run test, plus the
//! 64×64 bit-matrix transpose of the 64-row split and join.
//!
//! Each loop is written once, generic over [`BitMoves`] (the per-word
//! compress and expand): [`Soft`] is the portable bit-trick form, and on
//! x86-64 the `bmi2` module supplies `pext`/`pdep`, chosen at run time where
//! they are fast (see `x86_64::bmi2::is_fast`). The `*_best` functions
//! (`kernel/bits_best.rs`, above this module and `bmi2`) pick between them;
//! every SIMD kernel's table points at those, and the scalar kernel has its
//! own bit-by-bit references in `scalar.rs`.
//!
//! The files: `moves.rs` ([`BitMoves`], [`Soft`]), `words.rs` (reading and
//! writing bits of word slices), `strided.rs` (gather and scatter),
//! `deposit.rs`, `periodic.rs` (the fill), `and_shifted.rs` and `rows.rs`
//! (the transpose, the row split and join).
//!
//! All of it is safe code: every read past a slice's end reads as 0, and
//! every write is to an index the loop bounds by the slice's length.

mod and_shifted;
mod deposit;
mod moves;
mod periodic;
mod rows;
mod strided;
mod words;

pub(crate) use and_shifted::and_shifted;
pub(crate) use deposit::{deposit, extract};
// The trait is named outside `bits/` only by the BMI2 form (x86-64), the
// tests and the docs.
#[cfg(any(target_arch = "x86_64", test, doc))]
pub(crate) use moves::BitMoves;
pub(crate) use moves::Soft;
pub(crate) use periodic::fill_periodic;
pub(crate) use rows::{join_rows, join_rows_with, split_rows, split_rows_with, transpose64};
pub(crate) use strided::{gather_and, scatter_or};
