//! [`TierKey`]: a chunk hash and a row, and the hash the key table files
//! it under.

use core::hash::Hasher;

use rustc_hash::FxHasher;

/// One object's key in a tier: a 64-bit chunk hash and a small row id.
///
/// The row names one (object group, KV rank) pair of the controller's
/// request layout: row `r` of a [`Grid`](prefetch_policy::Grid). A pair
/// rather than a `u128`, so the table can keep the hashes and the rows in
/// two arrays (12 bytes a key, not 16).
///
/// ```
/// use tier_state::TierKey;
/// let key = TierKey::new(0xfeed_beef, 3);
/// assert_eq!((key.hash, key.row), (0xfeed_beef, 3));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TierKey {
    /// The chunk's 64-bit hash.
    pub hash: u64,
    /// The row: an (object group, KV rank) pair's index.
    pub row: u32,
}

impl TierKey {
    /// The key of chunk `hash` in row `row`.
    pub const fn new(hash: u64, row: u32) -> TierKey {
        TierKey { hash, row }
    }
}

/// The table's hash of a key.
///
/// FxHash (rustc-hash): one multiply per word. The chunk hashes are
/// already hashes, so a DoS-resistant hasher (SipHash) buys nothing and a
/// stronger mixer costs more than the probe; Fx still mixes the row in and
/// spreads sequential test hashes (0, 1, 2, …) over the table's buckets
/// and its 7-bit control tags, which take the top bits.
#[inline]
pub(crate) fn key_hash(hash: u64, row: u32) -> u64 {
    let mut hasher = FxHasher::default();
    hasher.write_u64(hash);
    hasher.write_u32(row);
    hasher.finish()
}
