//! Plain models of LMCache's eviction policies, transcribed from its Python
//! the obvious way (`Vec`s oldest first for `OrderedDict`s, `HashSet`s for
//! sets, the full key rebuilt for a family lookup), for the property tests
//! and the fuzz target to check the policies against. Not for production:
//! every event is O(n).
//!
//! Victim requests take eligibility as a slice of bools over slots (a slot
//! past its end is not eligible) or `None` for LMCache's filter `None`.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::eviction::meta::{KeyMeta, compute_kv_rank, kv_topology};
use crate::eviction::policy::target_count;

fn ok(eligible: Option<&[bool]>, slot: u32) -> bool {
    eligible.is_none_or(|e| e.get(slot as usize).copied().unwrap_or(false))
}

fn remove(list: &mut Vec<u32>, slot: u32) -> bool {
    match list.iter().position(|&s| s == slot) {
        Some(at) => {
            list.remove(at);
            true
        }
        None => false,
    }
}

/// `lru.py`.
#[derive(Clone, Debug, Default)]
pub struct LruModel {
    /// Oldest first.
    pub order: Vec<u32>,
}

impl LruModel {
    /// `on_keys_created`.
    pub fn created(&mut self, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            remove(&mut self.order, slot);
            self.order.push(slot);
        }
    }
    /// `on_keys_touched`.
    pub fn touched(&mut self, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            if remove(&mut self.order, slot) {
                self.order.push(slot);
            }
        }
    }
    /// `on_keys_removed`.
    pub fn removed(&mut self, slots: &[u32]) {
        for &slot in slots {
            remove(&mut self.order, slot);
        }
    }
    /// `get_eviction_actions`.
    pub fn victims(&self, ratio: f64, eligible: Option<&[bool]>) -> Vec<u32> {
        let target = target_count(self.order.len(), ratio);
        self.order.iter().copied().filter(|&s| ok(eligible, s)).take(target).collect()
    }
}

/// `s3fifo.py`.
#[derive(Clone, Debug, Default)]
pub struct S3FifoModel {
    /// Small FIFO, oldest first.
    pub small: Vec<u32>,
    /// Main FIFO, oldest first.
    pub main: Vec<u32>,
    /// The ghost set.
    pub ghost: HashSet<u32>,
    /// `small_max_size`.
    pub small_max_size: Option<usize>,
}

impl S3FifoModel {
    /// `on_keys_created`.
    pub fn created(&mut self, slots: &[u32]) {
        for &slot in slots {
            if self.small.contains(&slot) || self.main.contains(&slot) {
                continue;
            }
            if self.ghost.remove(&slot) {
                self.main.push(slot);
            } else {
                self.small.push(slot);
            }
        }
        if let Some(max) = self.small_max_size {
            while self.small.len() > max {
                let slot = self.small.remove(0);
                self.ghost.insert(slot);
            }
        }
    }
    /// `on_keys_touched`.
    pub fn touched(&mut self, slots: &[u32]) {
        for &slot in slots {
            if remove(&mut self.small, slot) || remove(&mut self.main, slot) {
                self.main.push(slot);
            }
        }
    }
    /// `on_keys_removed`.
    pub fn removed(&mut self, slots: &[u32]) {
        for &slot in slots {
            remove(&mut self.small, slot);
            remove(&mut self.main, slot);
            self.ghost.remove(&slot);
        }
    }
    /// `get_eviction_actions`.
    pub fn victims(&mut self, ratio: f64, eligible: Option<&[bool]>) -> Vec<u32> {
        let total = self.small.len() + self.main.len();
        if total == 0 {
            return Vec::new();
        }
        let target = target_count(total, ratio);
        let mut evicted = Vec::new();
        for queue in [&mut self.small, &mut self.main] {
            for slot in queue.clone() {
                if evicted.len() >= target {
                    break;
                }
                if !ok(eligible, slot) {
                    continue;
                }
                remove(queue, slot);
                evicted.push(slot);
                self.ghost.insert(slot);
            }
        }
        evicted
    }
}

/// `arc.py`.
#[derive(Clone, Debug, Default)]
pub struct ArcModel {
    /// T1, oldest first.
    pub t1: Vec<u32>,
    /// T2.
    pub t2: Vec<u32>,
    /// B1.
    pub b1: Vec<u32>,
    /// B2.
    pub b2: Vec<u32>,
    /// `_pending_evictions`.
    pub pending: HashSet<u32>,
    /// `_pending_admissions` (LMCache 0.5.6).
    pub admitting: HashSet<u32>,
    /// `_target_t1_size`.
    pub p: f64,
    /// `_capacity`.
    pub capacity: usize,
}

impl ArcModel {
    fn resident(&self) -> usize {
        self.t1.len() + self.t2.len()
    }
    fn trim(&mut self) {
        if self.capacity == 0 {
            return;
        }
        while self.t1.len() + self.b1.len() > self.capacity && !self.b1.is_empty() {
            self.b1.remove(0);
        }
        while self.resident() + self.b1.len() + self.b2.len() > 2 * self.capacity {
            let ghosts = if !self.b2.is_empty() { &mut self.b2 } else { &mut self.b1 };
            if ghosts.is_empty() {
                break;
            }
            ghosts.remove(0);
        }
    }
    fn delta(hit: usize, other: usize) -> f64 {
        f64::max(1.0, other as f64 / hit as f64)
    }
    /// `on_keys_created`.
    pub fn created(&mut self, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            self.pending.remove(&slot);
            if self.admitting.remove(&slot) {
                continue;
            }
            if remove(&mut self.t1, slot) || remove(&mut self.t2, slot) {
                self.t2.push(slot);
            } else if self.b1.contains(&slot) {
                self.p = f64::min(self.capacity as f64, self.p + Self::delta(self.b1.len(), self.b2.len()));
                remove(&mut self.b1, slot);
                self.t2.push(slot);
            } else if self.b2.contains(&slot) {
                self.p = f64::max(0.0, self.p - Self::delta(self.b2.len(), self.b1.len()));
                remove(&mut self.b2, slot);
                self.t2.push(slot);
            } else {
                self.t1.push(slot);
            }
            self.capacity = self.capacity.max(self.resident());
            self.trim();
        }
    }
    /// `on_keys_reserved` (LMCache 0.5.6).
    pub fn reserved(&mut self, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            self.pending.remove(&slot);
            self.admitting.insert(slot);
            if self.b1.contains(&slot) {
                self.p = f64::min(self.capacity as f64, self.p + Self::delta(self.b1.len(), self.b2.len()));
            } else if self.b2.contains(&slot) {
                self.p = f64::max(0.0, self.p - Self::delta(self.b2.len(), self.b1.len()));
            }
            for list in [&mut self.t1, &mut self.t2, &mut self.b1, &mut self.b2] {
                remove(list, slot);
            }
            self.t1.push(slot);
            self.capacity = self.capacity.max(self.resident());
            self.trim();
        }
    }
    /// `on_keys_touched`.
    pub fn touched(&mut self, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            if remove(&mut self.t1, slot) || remove(&mut self.t2, slot) {
                self.t2.push(slot);
            }
        }
    }
    /// `on_keys_removed`.
    pub fn removed(&mut self, slots: &[u32]) {
        for &slot in slots {
            if self.pending.contains(&slot) {
                if remove(&mut self.t1, slot) {
                    self.b1.push(slot);
                } else if remove(&mut self.t2, slot) {
                    self.b2.push(slot);
                }
            } else {
                for list in [&mut self.t1, &mut self.t2, &mut self.b1, &mut self.b2] {
                    remove(list, slot);
                }
            }
            self.pending.remove(&slot);
            self.admitting.remove(&slot);
        }
        self.trim();
    }
    /// `get_eviction_actions`.
    pub fn victims(&mut self, ratio: f64, eligible: Option<&[bool]>) -> Vec<u32> {
        let resident = self.resident();
        if resident == 0 {
            return Vec::new();
        }
        let target = target_count(resident, ratio);
        if target == 0 {
            return Vec::new();
        }
        self.capacity = self.capacity.max(resident);
        self.p = f64::min(self.p, self.capacity as f64);
        self.trim();
        let mut victims = Vec::new();
        let mut virtual_t1 = self.t1.len() as i64;
        let mut t1 = self.t1.clone().into_iter();
        let mut t2 = self.t2.clone().into_iter();
        let next = |it: &mut std::vec::IntoIter<u32>| it.find(|&s| ok(eligible, s));
        while victims.len() < target {
            let mut candidate = None;
            if virtual_t1 >= self.p.trunc() as i64 {
                candidate = next(&mut t1);
                if candidate.is_some() {
                    virtual_t1 -= 1;
                }
            }
            if candidate.is_none() {
                candidate = next(&mut t2);
            }
            if candidate.is_none() {
                candidate = next(&mut t1);
                if candidate.is_some() {
                    virtual_t1 -= 1;
                }
            }
            match candidate {
                Some(slot) => victims.push(slot),
                None => break,
            }
        }
        self.pending.extend(victims.iter().copied());
        victims
    }
}

/// An `ObjectKey`'s fields that matter to eviction, for the chunk-coherent
/// models: slots are indices into a universe of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModelKey {
    /// `chunk_hash`.
    pub chunk: u32,
    /// `model_name`.
    pub model: u32,
    /// `kv_rank`.
    pub kv_rank: u32,
    /// `object_group_id`.
    pub group: u32,
    /// `cache_salt`.
    pub salt: u32,
}

/// A universe of keys, slot = index, and the [`KeyMeta`] a caller would
/// intern for each.
#[derive(Clone, Debug)]
pub struct Universe {
    /// Slot → key.
    pub keys: Vec<ModelKey>,
    /// Key → slot.
    pub slots: HashMap<ModelKey, u32>,
    /// Slot → meta.
    pub meta: Vec<KeyMeta>,
}

impl Universe {
    /// Every combination of `chunks` × `models` × `kv_ranks` × `groups` ×
    /// `salts`, with family and namespace ids interned in slot order.
    pub fn new(chunks: u32, models: u32, kv_ranks: &[u32], groups: u32, salts: u32) -> Universe {
        let mut keys = Vec::new();
        for chunk in 0..chunks {
            for model in 0..models {
                for &kv_rank in kv_ranks {
                    for group in 0..groups {
                        for salt in 0..salts {
                            keys.push(ModelKey { chunk, model, kv_rank, group, salt });
                        }
                    }
                }
            }
        }
        let mut families = HashMap::new();
        let mut namespaces = HashMap::new();
        let meta = keys
            .iter()
            .map(|k| {
                let topology = kv_topology(k.kv_rank);
                let n = families.len() as u32;
                let family = *families.entry((k.chunk, k.model, k.salt, topology)).or_insert(n);
                let n = namespaces.len() as u32;
                let namespace = *namespaces.entry((k.model, topology)).or_insert(n);
                KeyMeta { family, namespace, kv_rank: k.kv_rank, group: k.group, salt: k.salt }
            })
            .collect();
        let slots = keys.iter().enumerate().map(|(i, &k)| (k, i as u32)).collect();
        Universe { keys, slots, meta }
    }
}

/// `_topology_namespace`: (`model_name`, the topology).
type Namespace = (u32, Option<(u8, u8)>);

/// `_selection.py`'s `ChunkFamilyTopology` and
/// `select_chunk_coherent_victims`, over a [`Universe`].
#[derive(Clone, Debug, Default)]
pub struct FamilyModel {
    coordinates: HashMap<Namespace, BTreeSet<(u32, u32)>>,
}

impl FamilyModel {
    fn namespace(key: &ModelKey) -> Namespace {
        (key.model, kv_topology(key.kv_rank))
    }

    /// `observe`.
    pub fn observe(&mut self, universe: &Universe, slots: &[u32]) {
        for &slot in slots {
            let key = universe.keys[slot as usize];
            self.coordinates.entry(Self::namespace(&key)).or_default().insert((key.kv_rank, key.group));
        }
    }

    fn ordered(&self, key: &ModelKey) -> Vec<(u32, u32)> {
        let Some(observed) = self.coordinates.get(&Self::namespace(key)) else { return Vec::new() };
        match kv_topology(key.kv_rank) {
            None => observed.iter().copied().collect(),
            Some((world, local)) => {
                let groups: BTreeSet<u32> = observed.iter().map(|&(_, g)| g).collect();
                let mut expected = BTreeSet::new();
                for rank in 0..world {
                    for &g in &groups {
                        expected.insert((compute_kv_rank(world, rank, local, rank % local), g));
                    }
                }
                expected.into_iter().collect()
            }
        }
    }

    /// `members`.
    fn members(&self, universe: &Universe, slot: u32, tracked: &[u32]) -> Vec<u32> {
        let key = universe.keys[slot as usize];
        let coordinates = self.ordered(&key);
        if coordinates == [(key.kv_rank, key.group)] {
            return vec![slot];
        }
        let mut members = Vec::new();
        for (kv_rank, group) in coordinates {
            let candidate = ModelKey { kv_rank, group, ..key };
            match universe.slots.get(&candidate) {
                Some(&s) if tracked.contains(&s) => members.push(s),
                _ => return Vec::new(),
            }
        }
        members
    }

    /// `select_chunk_coherent_victims`.
    pub fn select(&self, universe: &Universe, ordered: &[u32], target: usize, eligible: Option<&[bool]>) -> Vec<u32> {
        let mut selected = Vec::new();
        if target == 0 {
            return selected;
        }
        let mut visited = HashSet::new();
        for &slot in ordered {
            let key = universe.keys[slot as usize];
            if !visited.insert((key.chunk, key.model, key.salt, kv_topology(key.kv_rank))) {
                continue;
            }
            let members = self.members(universe, slot, ordered);
            if members.is_empty() {
                continue;
            }
            if members.iter().any(|&m| !ok(eligible, m)) {
                continue;
            }
            selected.extend(members);
            if selected.len() >= target {
                break;
            }
        }
        selected
    }
}

/// LMCache's LRU at d18cdadc (chunk-coherent) over a [`Universe`].
#[derive(Clone, Debug, Default)]
pub struct ChunkLruModel {
    /// The order.
    pub lru: LruModel,
    /// The coordinates seen.
    pub families: FamilyModel,
}

impl ChunkLruModel {
    /// `on_keys_created`.
    pub fn created(&mut self, universe: &Universe, slots: &[u32]) {
        self.families.observe(universe, slots);
        self.lru.created(slots);
    }
    /// `get_eviction_actions`.
    pub fn victims(&self, universe: &Universe, ratio: f64, eligible: Option<&[bool]>) -> Vec<u32> {
        let target = target_count(self.lru.order.len(), ratio);
        self.families.select(universe, &self.lru.order, target, eligible)
    }
}

/// `isolated_lru.py` (chunk-coherent, d18cdadc) over a [`Universe`].
#[derive(Clone, Debug, Default)]
pub struct IsolatedLruModel {
    /// Salt → order, in the dict's order.
    pub buckets: Vec<(u32, Vec<u32>)>,
    /// The coordinates seen.
    pub families: FamilyModel,
}

impl IsolatedLruModel {
    fn bucket(&mut self, salt: u32) -> Option<&mut Vec<u32>> {
        self.buckets.iter_mut().find(|(s, _)| *s == salt).map(|(_, order)| order)
    }
    /// `on_keys_created`.
    pub fn created(&mut self, universe: &Universe, slots: &[u32]) {
        self.families.observe(universe, slots);
        for &slot in slots.iter().rev() {
            let salt = universe.keys[slot as usize].salt;
            if self.bucket(salt).is_none() {
                self.buckets.push((salt, Vec::new()));
            }
            let order = self.bucket(salt).expect("just made");
            remove(order, slot);
            order.push(slot);
        }
    }
    /// `on_keys_touched`.
    pub fn touched(&mut self, universe: &Universe, slots: &[u32]) {
        for &slot in slots.iter().rev() {
            if let Some(order) = self.bucket(universe.keys[slot as usize].salt)
                && remove(order, slot)
            {
                order.push(slot);
            }
        }
    }
    /// `on_keys_removed`.
    pub fn removed(&mut self, universe: &Universe, slots: &[u32]) {
        for &slot in slots {
            let salt = universe.keys[slot as usize].salt;
            if let Some(order) = self.bucket(salt) {
                remove(order, slot);
                if order.is_empty() {
                    self.buckets.retain(|(s, _)| *s != salt);
                }
            }
        }
    }
    /// `get_eviction_actions(..., cache_salt=salt)`.
    pub fn victims(&mut self, universe: &Universe, salt: u32, ratio: f64, eligible: Option<&[bool]>) -> Vec<u32> {
        let Some(order) = self.bucket(salt).cloned() else { return Vec::new() };
        let target = target_count(order.len(), ratio);
        self.families.select(universe, &order, target, eligible)
    }
}
