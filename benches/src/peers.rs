//! The benchmark inputs as values of the crates a Rust user would pick
//! instead of bitmap-core, back to words for checking, and the seed's plan
//! algorithm over `fixedbitset`.

use std::collections::BTreeMap;

use bitvec::order::Lsb0;
use bitvec::vec::BitVec;
use fixedbitset::FixedBitSet;
use prefetch_policy::AdapterDescriptor;
use roaring::RoaringBitmap;

/// A `bitvec` bit vector over `u64` words, least significant bit first: the
/// same layout as our words, so its word-level fast paths apply.
pub type BitVec64 = BitVec<u64, Lsb0>;

/// `words` (a bitmap of `words.len() * 64` bits) as a `FixedBitSet`.
pub fn to_fixedbitset(words: &[u64]) -> FixedBitSet {
    // `usize` is 64 bits wide (checked at the crate root), so the casts are
    // lossless.
    FixedBitSet::with_capacity_and_blocks(words.len() * 64, words.iter().map(|&w| w as usize))
}

/// The words of a `FixedBitSet` built by [`to_fixedbitset`].
pub fn fixedbitset_words(set: &FixedBitSet) -> Vec<u64> {
    set.as_slice().iter().map(|&block| block as u64).collect()
}

/// `words` as a `bitvec` bit vector.
pub fn to_bitvec(words: &[u64]) -> BitVec64 {
    BitVec64::from_vec(words.to_vec())
}

/// The words of a `bitvec` bit vector built by [`to_bitvec`].
pub fn bitvec_words(bits: &BitVec64) -> Vec<u64> {
    bits.as_raw_slice().to_vec()
}

/// `words` as a `RoaringBitmap`, in the containers roaring itself chooses:
/// a 65,536-bit chunk with more than 4,096 bits set (6.25%) becomes a bitmap
/// container, a sparser one an array container. The kernel benchmarks'
/// random inputs (50%) are therefore all bitmap containers, so roaring runs
/// its dense, word-level operations; the 1% iteration benchmark gets array
/// containers, roaring's natural form for sparse sets.
///
/// # Panics
///
/// If the bitmap has more than 2³² bits (roaring's values are `u32`).
pub fn to_roaring(words: &[u64]) -> RoaringBitmap {
    assert!(words.len() * 64 <= 1 << 32, "roaring holds at most 2^32 bits");
    let mut bytes = vec![0u8; words.len() * 8];
    for (chunk, word) in bytes.chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    RoaringBitmap::from_lsb0_bytes(0, &bytes)
}

/// The set bits of `set` as `words` words.
///
/// # Panics
///
/// If a set bit lies past `words * 64`.
pub fn roaring_words(set: &RoaringBitmap, words: usize) -> Vec<u64> {
    let mut out = vec![0u64; words];
    for bit in set {
        let bit = bit as usize;
        out[bit / 64] |= 1 << (bit % 64);
    }
    out
}

/// Panics, naming the benchmark and the first differing word, unless `got`
/// holds exactly the set bits of `expected`.
///
/// Compares with roaring's own equality against a bitmap built from
/// `expected` (container by container, which is fast), and only on a
/// mismatch walks the bits to say where.
#[track_caller]
pub fn assert_roaring_eq(benchmark: &str, got: &RoaringBitmap, expected: &[u64]) {
    if *got != to_roaring(expected) {
        // Equal sets can only compare unequal if their containers differ in
        // kind, which roaring's invariants rule out; compare the bits, which
        // is what matters.
        crate::reference::assert_words_eq(benchmark, &roaring_words(got, expected.len()), expected);
    }
}

/// The seed's `DefaultPrefetchPolicy.select_load_plan` written literally over
/// `fixedbitset`, as a Rust user porting the Python would: the same sequence
/// of whole-bitmap operations, each allocating its result, with the lookups
/// and the plan in maps (the seed's `dict`s).
///
/// ```text
/// global = Bitmap(len(keys)); for b in lookups: global |= b
/// for ad in sorted(adapters, by index):
///     curr = lookups.get(ad.index) or skip
///     local = global & curr; global &= ~local
///     if local.popcount() == 0: skip
///     plan[ad.index] = local
/// ```
///
/// The same algorithm over our `Bitmap` is
/// `prefetch_policy::reference::seed_literal_plan`.
pub fn seed_literal_plan_fixedbitset(
    num_keys: usize,
    lookup: &BTreeMap<usize, FixedBitSet>,
    adapters: &[AdapterDescriptor],
) -> BTreeMap<usize, FixedBitSet> {
    let mut plan = BTreeMap::new();
    let mut global = FixedBitSet::with_capacity(num_keys);
    for bitmap in lookup.values() {
        global.union_with(bitmap);
    }
    let mut sorted: Vec<&AdapterDescriptor> = adapters.iter().collect();
    sorted.sort_by_key(|adapter| adapter.index);
    for adapter in sorted {
        let Some(current) = lookup.get(&adapter.index) else { continue };
        let local = &global & current;
        // `global &= ~local`: fixedbitset has no `!`, so the complement is
        // built the way it has to be, as a new set with every bit toggled.
        let mut not_local = local.clone();
        not_local.toggle_range(..);
        global &= &not_local;
        if local.count_ones(..) == 0 {
            continue;
        }
        plan.insert(adapter.index, local);
    }
    plan
}
