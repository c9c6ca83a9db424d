//! The key table behind `bitplan.lmcache.eviction_policy`'s classes: each
//! Python key (any hashable; LMCache's `ObjectKey`) gets a dense slot id
//! once, and the native policy works on slots.
//!
//! A lookup costs one call of the key's `__hash__` (LMCache's
//! `OrderedDict` policies hash a key two or three times per event) and,
//! unless the caller passes the very object the table holds, one `__eq__`,
//! as a `dict` does. The hash is kept per slot, so that letting a key go
//! costs no Python call at all (a `dict` would hash it again to delete it).
//!
//! For the chunk-coherent policies (LMCache's LRU and isolated LRU) a new
//! key's fields are read once, when it gets its slot, into a [`KeyMeta`]:
//! its chunk family, its (model, topology) namespace, its (rank, group)
//! coordinate and its salt, each interned to a small id. A key without
//! `ObjectKey`'s fields is a family of its own in salt `""`.

use std::collections::hash_map::Entry;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use rustc_hash::FxHashMap;
use tier_state::{KeyMeta, kv_topology};

/// No slot: the end of a hash chain.
const NONE: u32 = u32::MAX;

/// What makes two keys one chunk family (LMCache's `_logical_chunk_family`):
/// the chunk hash's bytes, the model, the salt and the decoded topology.
type FamilyKey = (Box<[u8]>, u32, u32, Option<(u8, u8)>);

/// Interned strings, numbered in first-seen order and kept for the table's
/// life (models and salts are few).
#[derive(Debug, Default)]
pub(crate) struct Names {
    ids: FxHashMap<String, u32>,
    names: Vec<String>,
}

impl Names {
    /// The id of `name`, a new one the first time.
    pub(crate) fn id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.ids.insert(name.to_owned(), id);
        self.names.push(name.to_owned());
        id
    }

    /// The id of `name` if it was ever seen.
    pub(crate) fn get(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }

    /// The name of `id`.
    pub(crate) fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
}

/// The ids a [`KeyMeta`] holds.
#[derive(Debug, Default)]
struct MetaIds {
    models: Names,
    pub(crate) salts: Names,
    namespaces: FxHashMap<(u32, Option<(u8, u8)>), u32>,
    families: FxHashMap<FamilyKey, u32>,
    /// By family id: its key (to forget it) and how many slots have it.
    family_of: Vec<Option<(FamilyKey, u32)>>,
    free_families: Vec<u32>,
}

impl MetaIds {
    fn family(&mut self, key: FamilyKey) -> u32 {
        match self.families.entry(key) {
            Entry::Occupied(entry) => {
                let id = *entry.get();
                if let Some((_, count)) = &mut self.family_of[id as usize] {
                    *count += 1;
                }
                id
            }
            Entry::Vacant(entry) => {
                let id = self.free_families.pop().unwrap_or(self.family_of.len() as u32);
                let key = entry.key().clone();
                entry.insert(id);
                if id as usize == self.family_of.len() {
                    self.family_of.push(Some((key, 1)));
                } else {
                    self.family_of[id as usize] = Some((key, 1));
                }
                id
            }
        }
    }

    /// A slot of family `id` let go: the id is free once no slot has it.
    fn release_family(&mut self, id: u32) {
        let Some(entry) = self.family_of.get_mut(id as usize) else { return };
        let Some((_, count)) = entry else { return };
        *count -= 1;
        if *count == 0
            && let Some((key, _)) = entry.take()
        {
            self.families.remove(&key);
            self.free_families.push(id);
        }
    }
}

/// Python keys ↔ dense slots (see the module docs).
#[derive(Debug)]
pub(crate) struct KeyTable {
    /// Hash → the first slot of its chain.
    heads: FxHashMap<isize, u32>,
    /// By slot: the next slot with the same hash, or [`NONE`].
    next: Vec<u32>,
    hashes: Vec<isize>,
    keys: Vec<Option<Py<PyAny>>>,
    metas: Vec<KeyMeta>,
    /// By slot: whether its meta holds an interned family id (an
    /// `ObjectKey`'s), which goes back when the slot does.
    interned: Vec<bool>,
    free: Vec<u32>,
    /// Read each new key's fields into a [`KeyMeta`] (chunk-coherent policies).
    with_meta: bool,
    ids: MetaIds,
    len: usize,
}

impl KeyTable {
    pub(crate) fn new(with_meta: bool) -> KeyTable {
        KeyTable {
            heads: FxHashMap::default(),
            next: Vec::new(),
            hashes: Vec::new(),
            keys: Vec::new(),
            metas: Vec::new(),
            interned: Vec::new(),
            free: Vec::new(),
            with_meta,
            ids: MetaIds::default(),
            len: 0,
        }
    }

    /// How many keys hold a slot.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The slot of `key`, hashed as `hash`, if it has one.
    fn find(&self, key: &Bound<'_, PyAny>, hash: isize) -> PyResult<Option<u32>> {
        let py = key.py();
        let mut slot = self.heads.get(&hash).copied().unwrap_or(NONE);
        while slot != NONE {
            if let Some(held) = &self.keys[slot as usize] {
                let held = held.bind(py);
                if held.is(key) || held.eq(key)? {
                    return Ok(Some(slot));
                }
            }
            slot = self.next[slot as usize];
        }
        Ok(None)
    }

    /// The slot of `key`, if it has one.
    pub(crate) fn lookup(&self, key: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
        let hash = key.hash()?;
        self.find(key, hash)
    }

    /// The slot of `key`, a new one if it had none.
    pub(crate) fn slot(&mut self, key: &Bound<'_, PyAny>) -> PyResult<u32> {
        let hash = key.hash()?;
        if let Some(slot) = self.find(key, hash)? {
            return Ok(slot);
        }
        let (meta, interned) = if self.with_meta { self.read_meta(key)? } else { (KeyMeta::single(0), false) };
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                let slot = u32::try_from(self.keys.len())
                    .ok()
                    .filter(|&slot| slot != NONE)
                    .ok_or_else(|| pyo3::exceptions::PyMemoryError::new_err("more than 2**32 - 1 keys"))?;
                self.next.push(NONE);
                self.hashes.push(0);
                self.keys.push(None);
                self.metas.push(meta);
                self.interned.push(false);
                slot
            }
        };
        let at = slot as usize;
        self.next[at] = self.heads.insert(hash, slot).unwrap_or(NONE);
        self.hashes[at] = hash;
        self.keys[at] = Some(key.clone().unbind());
        self.metas[at] = meta;
        self.interned[at] = interned;
        self.len += 1;
        Ok(slot)
    }

    /// The key that holds `slot`.
    pub(crate) fn key<'py>(&self, py: Python<'py>, slot: u32) -> Option<&Bound<'py, PyAny>> {
        self.keys.get(slot as usize).and_then(Option::as_ref).map(|key| key.bind(py))
    }

    /// The [`KeyMeta`] of a held slot.
    pub(crate) fn meta(&self, slot: u32) -> KeyMeta {
        self.metas[slot as usize]
    }

    /// The id of salt `name`, if any key ever had it.
    pub(crate) fn salt_id(&self, name: &str) -> Option<u32> {
        self.ids.salts.get(name)
    }

    /// The salt named by `id`.
    pub(crate) fn salt_name(&self, id: u32) -> &str {
        self.ids.salts.name(id)
    }

    /// Lets `slot` go; returns its key object, for the caller to drop once
    /// no lock is held (its finalizer may run Python code).
    pub(crate) fn release(&mut self, slot: u32) -> Option<Py<PyAny>> {
        let at = slot as usize;
        let key = self.keys.get_mut(at)?.take()?;
        let hash = self.hashes[at];
        // Unlink from the hash chain.
        let next = self.next[at];
        match self.heads.get(&hash).copied() {
            Some(head) if head == slot => {
                if next == NONE {
                    self.heads.remove(&hash);
                } else {
                    self.heads.insert(hash, next);
                }
            }
            Some(mut prev) => {
                while self.next[prev as usize] != slot {
                    prev = self.next[prev as usize];
                }
                self.next[prev as usize] = next;
            }
            None => {}
        }
        self.next[at] = NONE;
        if self.interned[at] {
            self.interned[at] = false;
            self.ids.release_family(self.metas[at].family);
        }
        self.free.push(slot);
        self.len -= 1;
        Some(key)
    }

    /// A new key's [`KeyMeta`], from `ObjectKey`'s five fields, and whether
    /// it holds an interned family id; a key without them is a family of
    /// its own (`KeyMeta::single`).
    fn read_meta(&mut self, key: &Bound<'_, PyAny>) -> PyResult<(KeyMeta, bool)> {
        let py = key.py();
        let salt = match key.getattr_opt(intern!(py, "cache_salt"))? {
            Some(salt) => match salt.cast::<PyString>() {
                Ok(salt) => self.ids.salts.id(salt.to_str()?),
                Err(_) => self.ids.salts.id(""),
            },
            None => self.ids.salts.id(""),
        };
        let single = Ok((KeyMeta::single(salt), false));
        let (Some(chunk), Some(model), Some(kv_rank), Some(group)) = (
            key.getattr_opt(intern!(py, "chunk_hash"))?,
            key.getattr_opt(intern!(py, "model_name"))?,
            key.getattr_opt(intern!(py, "kv_rank"))?,
            key.getattr_opt(intern!(py, "object_group_id"))?,
        ) else {
            return single;
        };
        let chunk: Box<[u8]> = match chunk.cast::<PyBytes>() {
            Ok(bytes) => bytes.as_bytes().into(),
            Err(_) => match chunk.extract::<i128>() {
                // An int hash: its bytes, tagged so that no bytes value equals it.
                Ok(value) => [&[0xff_u8][..], &value.to_le_bytes()].concat().into(),
                Err(_) => return single,
            },
        };
        let (Ok(model), Ok(kv_rank), Ok(group)) =
            (model.cast::<PyString>(), kv_rank.extract::<u32>(), group.extract::<u32>())
        else {
            return single;
        };
        let model = self.ids.models.id(model.to_str()?);
        let topology = kv_topology(kv_rank);
        let next_namespace = self.ids.namespaces.len() as u32;
        let namespace = *self.ids.namespaces.entry((model, topology)).or_insert(next_namespace);
        let family = self.ids.family((chunk, model, salt, topology));
        Ok((KeyMeta { family, namespace, kv_rank, group, salt }, true))
    }
}
