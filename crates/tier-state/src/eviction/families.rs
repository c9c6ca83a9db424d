//! [`Families`]: LMCache's chunk-coherent victim selection
//! (`eviction_policy/_selection.py` at d18cdadc) over slots, for the LRU
//! policies. One logical chunk is stored as several keys that differ only in
//! `kv_rank` and `object_group_id` (its family); eviction takes a family
//! whole or not at all.
//!
//! Per slot: its family id, its coordinate id and the next member of its
//! family (a singly linked member list: removal walks the family, whose size
//! is bounded by its namespace's coordinates). Per family id: the first
//! member. Per namespace: the coordinates seen, and the coordinates a
//! complete family has. Nothing is allocated until a slot comes with meta.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::eviction::links::{NIL, grow, grow_exact};
use crate::eviction::meta::{KeyMeta, kv_topology};
use crate::eviction::policy::Eligible;

const NO_FAMILY: u32 = KeyMeta::NO_FAMILY;

/// LMCache's per-namespace coordinate record (`ChunkFamilyTopology`).
#[derive(Clone, Debug, Default)]
struct Namespace {
    /// `(kv_rank, group)` seen, sorted.
    observed: Vec<(u32, u32)>,
    /// The coordinates of a complete family, sorted: every global rank of
    /// the topology times every group seen; without a topology, those seen.
    expected: Vec<(u32, u32)>,
}

impl Namespace {
    /// Records a coordinate; recomputes `expected` if it is new.
    fn observe(&mut self, kv_rank: u32, group: u32) {
        let Err(at) = self.observed.binary_search(&(kv_rank, group)) else { return };
        self.observed.insert(at, (kv_rank, group));
        match kv_topology(kv_rank) {
            None => self.expected.clone_from(&self.observed),
            Some((world_size, local_world_size)) => {
                let mut groups: Vec<u32> = self.observed.iter().map(|&(_, group)| group).collect();
                groups.sort_unstable();
                groups.dedup();
                self.expected.clear();
                for global_rank in 0..world_size {
                    let rank = crate::eviction::meta::compute_kv_rank(
                        world_size,
                        global_rank,
                        local_world_size,
                        global_rank % local_world_size,
                    );
                    self.expected.extend(groups.iter().map(|&group| (rank, group)));
                }
                self.expected.sort_unstable();
            }
        }
    }
}

/// Chunk families of the slots created with [`KeyMeta`].
#[derive(Clone, Debug, Default)]
pub(crate) struct Families {
    family: Vec<u32>,
    coord: Vec<u32>,
    member_next: Vec<u32>,
    /// Per family id: its first member slot, or [`NIL`].
    heads: Vec<u32>,
    /// Per coordinate id: (namespace, kv_rank, group).
    coords: Vec<(u32, u32, u32)>,
    coord_ids: FxHashMap<(u32, u32, u32), u32>,
    namespaces: Vec<Namespace>,
    /// Scratch for one selection: the families visited.
    visited: FxHashSet<u32>,
    /// The last coordinate looked up and its id: a store batch is one
    /// (rank, group) row, so consecutive keys share it.
    last: Option<((u32, u32, u32), u32)>,
}

impl Families {
    /// Whether no slot ever came with a family (the plain path).
    #[inline]
    pub(crate) fn is_unused(&self) -> bool {
        self.heads.is_empty()
    }

    #[inline]
    fn family_of(&self, slot: u32) -> u32 {
        self.family.get(slot as usize).copied().unwrap_or(NO_FAMILY)
    }

    /// LMCache's `observe` of one created key.
    fn observe(&mut self, meta: &KeyMeta) -> u32 {
        let key = (meta.namespace, meta.kv_rank, meta.group);
        if let Some((last, id)) = self.last
            && last == key
        {
            return id;
        }
        if let Some(&id) = self.coord_ids.get(&key) {
            self.last = Some((key, id));
            return id;
        }
        let id = self.coords.len() as u32;
        self.coords.push(key);
        self.coord_ids.insert(key, id);
        let ns = meta.namespace as usize;
        if self.namespaces.len() <= ns {
            self.namespaces.resize_with(ns + 1, Namespace::default);
        }
        self.namespaces[ns].observe(meta.kv_rank, meta.group);
        self.last = Some((key, id));
        id
    }

    /// A created slot's meta: observes its coordinate and, if the slot has
    /// no family yet, makes it a member of `meta.family`. (A slot's meta does
    /// not change while it is tracked: it names one key.)
    pub(crate) fn created(&mut self, slot: u32, meta: &KeyMeta) {
        if meta.family == NO_FAMILY {
            return;
        }
        let coord = self.observe(meta);
        let need = slot as usize + 1;
        if self.family.len() < need {
            grow(&mut self.family, need, NO_FAMILY);
            grow(&mut self.coord, need, 0);
            grow(&mut self.member_next, need, NIL);
        }
        grow(&mut self.heads, meta.family as usize + 1, NIL);
        if self.family[slot as usize] != NO_FAMILY {
            return;
        }
        self.family[slot as usize] = meta.family;
        self.coord[slot as usize] = coord;
        let head = &mut self.heads[meta.family as usize];
        self.member_next[slot as usize] = *head;
        *head = slot;
    }

    /// A removed slot leaves its family (O(family size)).
    pub(crate) fn removed(&mut self, slot: u32) {
        let family = self.family_of(slot);
        if family == NO_FAMILY {
            return;
        }
        self.family[slot as usize] = NO_FAMILY;
        let next = self.member_next[slot as usize];
        let mut at = self.heads[family as usize];
        if at == slot {
            self.heads[family as usize] = next;
            return;
        }
        while at != NIL {
            let after = self.member_next[at as usize];
            if after == slot {
                self.member_next[at as usize] = next;
                return;
            }
            at = after;
        }
    }

    /// Appends `family`'s members to `out` in the order of `expected` (its
    /// namespace's complete coordinates, sorted), or nothing and `false` if a
    /// coordinate has no tracked member. One walk of the member list, each
    /// member placed by a binary search of its coordinate.
    fn members_into(&self, family: u32, expected: &[(u32, u32)], out: &mut Vec<u32>) -> bool {
        let start = out.len();
        out.resize(start + expected.len(), NIL);
        let mut found = 0;
        let mut at = self.heads[family as usize];
        while at != NIL {
            let (_, rank, group) = self.coords[self.coord[at as usize] as usize];
            if let Ok(i) = expected.binary_search(&(rank, group))
                && out[start + i] == NIL
            {
                out[start + i] = at;
                found += 1;
            }
            at = self.member_next[at as usize];
        }
        if found < expected.len() {
            out.truncate(start);
            return false;
        }
        true
    }

    /// LMCache's `select_chunk_coherent_victims` over `order` (oldest
    /// first; every slot of it tracked, its families' members among it):
    /// whole families, in coordinate order, skipping a family with a missing
    /// or ineligible member, until `target` victims are reached or passed.
    pub(crate) fn select(
        &mut self,
        order: impl Iterator<Item = u32>,
        target: usize,
        eligible: &mut Eligible<'_>,
        out: &mut Vec<u32>,
    ) {
        if target == 0 {
            return;
        }
        self.visited.clear();
        let start = out.len();
        for slot in order {
            let family = self.family_of(slot);
            if family == NO_FAMILY {
                // A slot created without meta: its own family.
                if eligible.test(slot) {
                    out.push(slot);
                }
            } else {
                if !self.visited.insert(family) {
                    continue;
                }
                let (namespace, own_rank, own_group) = self.coords[self.coord[slot as usize] as usize];
                let expected = &self.namespaces[namespace as usize].expected;
                if expected.len() == 1 && expected[0] == (own_rank, own_group) {
                    if eligible.test(slot) {
                        out.push(slot);
                    }
                } else {
                    let members = out.len();
                    let complete = self.members_into(family, expected, out);
                    // LMCache tests eligibility only of a complete family,
                    // member by member in coordinate order, stopping at the
                    // first refusal.
                    if !complete || !out[members..].iter().all(|&member| eligible.test(member)) {
                        out.truncate(members);
                    }
                }
            }
            if out.len() - start >= target {
                break;
            }
        }
    }

    /// Forgets everything, keeping the arrays' capacity.
    pub(crate) fn clear(&mut self) {
        self.family.clear();
        self.coord.clear();
        self.member_next.clear();
        self.heads.clear();
        self.coords.clear();
        self.coord_ids.clear();
        self.namespaces.clear();
        self.visited.clear();
        self.last = None;
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        let per_slot = (self.family.capacity() + self.coord.capacity() + self.member_next.capacity()) * 4;
        let coords = self.coords.capacity() * 12 + self.coord_ids.capacity() * 16;
        let namespaces: usize =
            self.namespaces.iter().map(|ns| (ns.observed.capacity() + ns.expected.capacity()) * 8).sum::<usize>()
                + self.namespaces.capacity() * core::mem::size_of::<Namespace>();
        per_slot + self.heads.capacity() * 4 + coords + namespaces + self.visited.capacity() * 4
    }

    /// Slots `0..slots` allocated and initialised (once meta is in use).
    pub(crate) fn reserve(&mut self, slots: usize) {
        if !self.is_unused() {
            grow_exact(&mut self.family, slots, NO_FAMILY);
            grow_exact(&mut self.coord, slots, 0);
            grow_exact(&mut self.member_next, slots, NIL);
        }
    }
}
