//! [`KeyMeta`]: what a chunk-coherent or per-salt policy must know about a
//! slot's key beyond the slot (LMCache's `ObjectKey` fields that
//! `eviction_policy/_selection.py` and `isolated_lru.py` read), and LMCache's
//! packing of `kv_rank`.

/// A key's family, coordinate and salt, told to a policy when it starts
/// tracking the slot ([`EvictionPolicy::on_created_with`]).
///
/// The caller interns the ids; they index arrays in the policy, so keep them
/// dense and small.
///
/// [`EvictionPolicy::on_created_with`]: crate::EvictionPolicy::on_created_with
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct KeyMeta {
    /// The logical chunk: one id per (`chunk_hash`, `model_name`,
    /// `cache_salt`, [`kv_topology`]`(kv_rank)`), LMCache's
    /// `_logical_chunk_family`.
    pub family: u32,
    /// One id per (`model_name`, [`kv_topology`]`(kv_rank)`), LMCache's
    /// `_topology_namespace`: the scope in which coordinates are recorded.
    pub namespace: u32,
    /// `ObjectKey.kv_rank`, packed ([`compute_kv_rank`]) or a plain rank.
    pub kv_rank: u32,
    /// `ObjectKey.object_group_id`.
    pub group: u32,
    /// One id per `cache_salt`: [`IsolatedLru`](crate::IsolatedLru)'s bucket.
    pub salt: u32,
}

impl KeyMeta {
    /// Family id of a key that is its own family: what a slot created
    /// without meta gets.
    pub const NO_FAMILY: u32 = u32::MAX;

    /// A key in `salt` with no chunk family (LMCache's "family of one").
    ///
    /// ```
    /// use tier_state::KeyMeta;
    /// assert_eq!(KeyMeta::single(3).family, KeyMeta::NO_FAMILY);
    /// ```
    pub const fn single(salt: u32) -> KeyMeta {
        KeyMeta { family: KeyMeta::NO_FAMILY, namespace: 0, kv_rank: 0, group: 0, salt }
    }
}

/// LMCache's `_kv_topology`: (`world_size`, `local_world_size`) decoded from
/// a packed `kv_rank` (world size in bits 24–31, global rank 16–23, local
/// world size 8–15, local rank 0–7), or `None` when the fields are not a
/// valid layout (a plain integer rank).
///
/// ```
/// use tier_state::{compute_kv_rank, kv_topology};
/// assert_eq!(kv_topology(compute_kv_rank(4, 3, 2, 1)), Some((4, 2)));
/// assert_eq!(kv_topology(1), None); // world size 0: a plain rank
/// assert_eq!(kv_topology(compute_kv_rank(4, 3, 2, 0)), None); // 3 % 2 != 0
/// ```
pub const fn kv_topology(kv_rank: u32) -> Option<(u8, u8)> {
    let world_size = (kv_rank >> 24) as u8;
    let global_rank = (kv_rank >> 16) as u8;
    let local_world_size = (kv_rank >> 8) as u8;
    let local_rank = kv_rank as u8;
    if world_size > 0
        && local_world_size > 0
        && global_rank < world_size
        && local_rank < local_world_size
        && global_rank % local_world_size == local_rank
    {
        Some((world_size, local_world_size))
    } else {
        None
    }
}

/// LMCache's `ObjectKey.ComputeKVRank`: the packing [`kv_topology`] decodes.
pub const fn compute_kv_rank(world_size: u8, global_rank: u8, local_world_size: u8, local_rank: u8) -> u32 {
    (world_size as u32) << 24 | (global_rank as u32) << 16 | (local_world_size as u32) << 8 | local_rank as u32
}
