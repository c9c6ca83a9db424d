//! What the model tests (`model.rs`, `model_ops.rs`) share: the lengths
//! and densities they sweep, a small deterministic generator, the naive
//! `Vec<bool>` model's views, and the checks of a bitmap against it. Each
//! test file uses a part of it.

#![allow(dead_code)]

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use bitmap_core::Bitmap;

/// Lengths on both sides of every word boundary the code cares about, plus
/// two longer ones that cross the kernels' SIMD block sizes. Miri runs the
/// same logic on the shorter ones only (it is orders of magnitude slower).
pub(crate) const LENGTHS: &[usize] = if cfg!(miri) {
    &[0, 1, 63, 64, 65, 129, 257]
} else {
    &[0, 1, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 4097]
};

/// Bit densities in 1/1024ths: all clear, sparse, half, dense, all set.
pub(crate) const DENSITIES: &[u32] = if cfg!(miri) { &[0, 16, 512, 1024] } else { &[0, 16, 512, 1000, 1024] };

/// The lengths and densities of the binary operations, which run on every
/// pair of densities in every form.
pub(crate) const PAIR_LENGTHS: &[usize] = if cfg!(miri) { &[0, 1, 64, 65, 257] } else { LENGTHS };
pub(crate) const PAIR_DENSITIES: &[u32] = if cfg!(miri) { &[0, 512, 1024] } else { DENSITIES };

/// xorshift64*: small, deterministic, good enough to scatter bits.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub(crate) fn bools(&mut self, len: usize, density: u32) -> Vec<bool> {
        (0..len).map(|_| (self.next() % 1024) < u64::from(density)).collect()
    }
}

/// Every (length, density, model) case, each with its own seed.
pub(crate) fn cases(seed: u64) -> impl Iterator<Item = (usize, u32, Vec<bool>)> {
    LENGTHS.iter().flat_map(move |&len| {
        DENSITIES.iter().map(move |&density| {
            let mut rng = Rng::new(seed ^ (len as u64) << 8 ^ u64::from(density));
            (len, density, rng.bools(len, density))
        })
    })
}

/// The words a correct bitmap of `model` has, computed independently of the
/// crate.
pub(crate) fn model_words(model: &[bool]) -> Vec<u64> {
    let mut words = vec![0u64; model.len().div_ceil(64)];
    for (i, &bit) in model.iter().enumerate() {
        if bit {
            words[i / 64] |= 1 << (i % 64);
        }
    }
    words
}

/// LMCache's byte layout of `model`: bit `i` in byte `i / 8`, position `i % 8`.
pub(crate) fn model_bytes(model: &[bool]) -> Vec<u8> {
    let mut bytes = vec![0u8; model.len().div_ceil(8)];
    for (i, &bit) in model.iter().enumerate() {
        if bit {
            bytes[i / 8] |= 1 << (i % 8);
        }
    }
    bytes
}

pub(crate) fn model_indices(model: &[bool]) -> Vec<usize> {
    model.iter().enumerate().filter(|&(_, &bit)| bit).map(|(i, _)| i).collect()
}

pub(crate) fn model_string(model: &[bool]) -> String {
    model.iter().map(|&bit| if bit { '1' } else { '0' }).collect()
}

/// The tail-bit invariant and the storage size.
#[track_caller]
pub(crate) fn assert_invariant(bitmap: &Bitmap) {
    let len = bitmap.len();
    assert_eq!(bitmap.num_words(), len.div_ceil(64), "num_words for len {len}");
    assert_eq!(bitmap.as_words().len(), len.div_ceil(64), "words for len {len}");
    if len > 0 {
        assert_eq!(bitmap.as_words().as_ptr().align_offset(64), 0, "words of len {len} do not start on a cache line");
    }
    if !len.is_multiple_of(64) {
        let last = *bitmap.as_words().last().unwrap();
        assert_eq!(last >> (len % 64), 0, "bits past len {len} are set: last word {last:#018x}");
    }
}

/// `bitmap` holds exactly `model`, and the invariant holds.
#[track_caller]
pub(crate) fn check(bitmap: &Bitmap, model: &[bool]) {
    assert_invariant(bitmap);
    assert_eq!(bitmap.len(), model.len());
    assert_eq!(bitmap.as_words(), model_words(model), "len {}", model.len());
}

pub(crate) fn hash_of(bitmap: &Bitmap) -> u64 {
    let mut hasher = DefaultHasher::new();
    bitmap.hash(&mut hasher);
    hasher.finish()
}
