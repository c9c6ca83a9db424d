//! The table of Python keys behind `bitplan.lmcache.eviction_policy`'s
//! classes and `bitplan.lmcache.tiers.L1Bookkeeper`: each Python key (any
//! hashable; LMCache's `ObjectKey`) gets a dense slot id once, and the
//! native policy or tier works on slots.
//!
//! A lookup of the very object the table holds (the victims a policy
//! returned, a key object the caller keeps) is found by its address and
//! costs no Python call: the table holds a reference to it, so no other
//! object can have that address meanwhile. Any other lookup costs one
//! hash of the key (LMCache's `OrderedDict` policies hash a key two or
//! three times per event) and one comparison with the held key of that
//! hash, as a `dict` does: by the key's fields, natively, for a frozen
//! dataclass such as LMCache's `ObjectKey` (see [`super::fields`]),
//! else by its `__hash__` and `__eq__`. The hash is kept per slot, so that
//! letting a key go costs no Python call at all (a `dict` would hash it
//! again to delete it).
//!
//! For the chunk-coherent policies (LMCache's LRU and isolated LRU) a new
//! key's fields are read once, when it gets its slot, into a [`KeyMeta`]:
//! its chunk family, its (model, topology) namespace, its (rank, group)
//! coordinate and its salt, each interned to a small id. A key without
//! `ObjectKey`'s fields is a family of its own in salt `""`.

use core::hash::BuildHasher;

use hashbrown::HashTable;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyFrozenSet, PyInt, PyString, PyTuple};
use rustc_hash::{FxBuildHasher, FxHashMap};
use tier_state::{KeyMeta, kv_topology};

use crate::key_table::fields::{FieldClasses, KeyFields};

/// The most slots: `u32::MAX` is never one.
const NONE: u32 = u32::MAX;

/// The table hash of a key object's address.
#[inline]
fn address_hash(address: usize) -> u64 {
    FxBuildHasher.hash_one(address)
}

/// The table hash of a key's Python hash (already mixed by Python).
#[inline]
const fn key_hash(hash: isize) -> u64 {
    hash as u64
}

/// The address of a held slot's key object (0 for a free slot).
#[inline]
fn held_address(keys: &[Option<Py<PyAny>>], slot: u32) -> usize {
    keys.get(slot as usize).and_then(Option::as_ref).map_or(0, |key| key.as_ptr() as usize)
}

/// A chunk hash's bytes: up to 16 inline (LMCache's are 4 or 8; no
/// allocation, one word to hash), longer ones on the heap.
#[derive(Debug)]
enum ChunkBytes {
    Inline(u8, [u8; 16]),
    Heap(Box<[u8]>),
}

impl ChunkBytes {
    fn new(bytes: &[u8]) -> ChunkBytes {
        match u8::try_from(bytes.len()) {
            Ok(len) if len <= 16 => {
                let mut inline = [0_u8; 16];
                inline[..bytes.len()].copy_from_slice(bytes);
                ChunkBytes::Inline(len, inline)
            }
            _ => ChunkBytes::Heap(bytes.into()),
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            ChunkBytes::Inline(len, inline) => &inline[..*len as usize],
            ChunkBytes::Heap(bytes) => bytes,
        }
    }
}

/// Where a chunk family is filed: the chunk hash's Python hash (cached by
/// the `bytes` object, and already computed by the key's own `__hash__`),
/// whether the chunk hash is an int (not LMCache's), the model, the salt
/// and the decoded topology. Families that share it (the chunk hashes'
/// Python hashes collide) are told apart by their bytes.
type FamilyBucket = (isize, bool, u32, u32, Option<(u8, u8)>);

/// Interned strings, numbered in first-seen order and kept for the table's
/// life (models and salts are few).
#[derive(Debug, Default)]
pub(crate) struct Names {
    ids: FxHashMap<String, u32>,
    names: Vec<String>,
    /// The last string object looked up and its id: a model's or salt's
    /// name is usually one `str` object shared by every key, found by its
    /// address (held, so that no other object can take the address).
    last: Option<(Py<PyString>, u32)>,
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

    /// The id of the string object `name`.
    fn id_of(&mut self, name: &Bound<'_, PyString>) -> PyResult<u32> {
        if let Some((last, id)) = &self.last
            && last.as_ptr() == name.as_ptr()
        {
            return Ok(*id);
        }
        let id = self.id(name.to_str()?);
        self.last = Some((name.clone().unbind(), id));
        Ok(id)
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
    salts: Names,
    namespaces: FxHashMap<(u32, Option<(u8, u8)>), u32>,
    /// The living families' ids, by bucket and chunk bytes (LMCache's
    /// `_logical_chunk_family`: chunk hash, model, salt, topology): 5 bytes
    /// a bucket, the keys in `buckets` and `chunks` (an `FxHashMap` keyed by
    /// the bucket took 33, and at 65,536 keys its misses were most of a
    /// new key's cost).
    families: HashTable<u32>,
    /// By family id: its bucket, its chunk bytes, and how many slots have
    /// it. A family whose count falls to 0
    /// stays filed (dead) until [`MetaIds::collect`] refiles the living in
    /// one pass: removing them one by one cost ~0.5 µs a key at 65,536 keys
    /// (a random probe and a pointer chase each), and a family that comes
    /// back before the sweep keeps its id.
    buckets: Vec<FamilyBucket>,
    chunks: Vec<ChunkBytes>,
    counts: Vec<u32>,
    dead: usize,
    free_families: Vec<u32>,
}

/// The table hash of a family's bucket (its chunk hash's Python hash,
/// mixed with the rest; bytes that share it are told apart on lookup).
#[inline]
fn family_hash(bucket: &FamilyBucket) -> u64 {
    FxBuildHasher.hash_one(bucket)
}

impl MetaIds {
    fn family(&mut self, bucket: FamilyBucket, chunk: &[u8]) -> u32 {
        let hash = family_hash(&bucket);
        let (buckets, chunks) = (&self.buckets, &self.chunks);
        let found = self
            .families
            .find(hash, |&id| buckets[id as usize] == bucket && chunks[id as usize].bytes() == chunk)
            .copied();
        if let Some(id) = found {
            let count = &mut self.counts[id as usize];
            if *count == 0 {
                self.dead -= 1;
            }
            *count += 1;
            return id;
        }
        let id = match self.free_families.pop() {
            Some(id) => {
                let at = id as usize;
                self.buckets[at] = bucket;
                self.chunks[at] = ChunkBytes::new(chunk);
                self.counts[at] = 1;
                id
            }
            None => {
                self.buckets.push(bucket);
                self.chunks.push(ChunkBytes::new(chunk));
                self.counts.push(1);
                (self.counts.len() - 1) as u32
            }
        };
        let buckets = &self.buckets;
        self.families.insert_unique(hash, id, |&id| family_hash(&buckets[id as usize]));
        id
    }

    /// A slot of family `id` let go; once more families are dead than
    /// alive (and at least 1,024), the living are refiled and the dead ids
    /// reused.
    fn release_family(&mut self, id: u32) {
        let count = &mut self.counts[id as usize];
        *count -= 1;
        if *count == 0 {
            self.dead += 1;
            if self.dead >= 1024 && 2 * self.dead > self.counts.len() - self.free_families.len() {
                self.collect();
            }
        }
    }

    /// Refiles the living families; the dead ids go back.
    fn collect(&mut self) {
        self.families.clear();
        self.free_families.clear();
        for id in 0..self.counts.len() {
            if self.counts[id] == 0 {
                self.free_families.push(id as u32);
                self.chunks[id] = ChunkBytes::Inline(0, [0; 16]);
                continue;
            }
            let buckets = &self.buckets;
            self.families.insert_unique(family_hash(&buckets[id]), id as u32, |&id| family_hash(&buckets[id as usize]));
        }
        self.dead = 0;
    }
}

/// Python keys ↔ dense slots (see the module docs).
#[derive(Debug)]
pub(crate) struct KeyTable {
    /// The held slots by their key object's address, and by their key's
    /// hash: slot ids only (5 bytes a bucket), the address and the hash
    /// read from `keys` and `hashes`. `FxHashMap`s of address → slot and
    /// hash → chain head took 17 bytes a bucket each, and at 65,536 keys
    /// their cache misses were a new key's largest cost.
    by_address: HashTable<u32>,
    by_hash: HashTable<u32>,
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
    /// The classes of keys hashed and compared by their fields.
    classes: FieldClasses,
    len: usize,
}

impl KeyTable {
    pub(crate) fn new(with_meta: bool) -> KeyTable {
        KeyTable {
            by_address: HashTable::new(),
            by_hash: HashTable::new(),
            hashes: Vec::new(),
            keys: Vec::new(),
            metas: Vec::new(),
            interned: Vec::new(),
            free: Vec::new(),
            with_meta,
            ids: MetaIds::default(),
            classes: FieldClasses::default(),
            len: 0,
        }
    }

    /// How many keys hold a slot.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The slot of `key`, hashed as `hash` (from `fields`, if it was read
    /// by them), if it has one.
    fn find(&self, key: &Bound<'_, PyAny>, hash: isize, fields: Option<&KeyFields<'_>>) -> PyResult<Option<u32>> {
        let py = key.py();
        let mut failed = None;
        let found = self.by_hash.find(key_hash(hash), |&slot| {
            if failed.is_some() || self.hashes[slot as usize] != hash {
                return false;
            }
            let Some(held) = &self.keys[slot as usize] else { return false };
            let held = held.bind(py);
            if held.is(key) {
                return true;
            }
            let equal = match fields.map(|fields| self.classes.equal(held, fields)) {
                Some(Ok(Some(equal))) => Ok(equal),
                Some(Err(error)) => Err(error),
                Some(Ok(None)) | None => held.eq(key),
            };
            equal.unwrap_or_else(|error| {
                failed = Some(error);
                false
            })
        });
        match failed {
            Some(error) => Err(error),
            None => Ok(found.copied()),
        }
    }

    /// The slot of the very object `key`, if the table holds it.
    #[inline]
    fn by_address(&self, key: &Bound<'_, PyAny>) -> Option<u32> {
        let address = key.as_ptr() as usize;
        self.by_address.find(address_hash(address), |&slot| held_address(&self.keys, slot) == address).copied()
    }

    /// The hash of `key` and its fields, if its class is hashed by them.
    fn hash<'py>(&mut self, key: &Bound<'py, PyAny>) -> PyResult<(isize, Option<KeyFields<'py>>)> {
        match self.classes.read(key)? {
            Some(fields) => Ok((fields.hash, Some(fields))),
            None => Ok((key.hash()?, None)),
        }
    }

    /// The slot of `key`, if it has one.
    pub(crate) fn lookup(&mut self, key: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
        if let Some(slot) = self.by_address(key) {
            return Ok(Some(slot));
        }
        let (hash, fields) = self.hash(key)?;
        self.find(key, hash, fields.as_ref())
    }

    /// The slot of `key`, a new one if it had none.
    pub(crate) fn slot(&mut self, key: &Bound<'_, PyAny>) -> PyResult<u32> {
        if let Some(slot) = self.by_address(key) {
            return Ok(slot);
        }
        let (hash, fields) = self.hash(key)?;
        if let Some(slot) = self.find(key, hash, fields.as_ref())? {
            return Ok(slot);
        }
        let (meta, interned) =
            if self.with_meta { self.read_meta(key, fields.as_ref())? } else { (KeyMeta::single(0), false) };
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                let slot = u32::try_from(self.keys.len())
                    .ok()
                    .filter(|&slot| slot != NONE)
                    .ok_or_else(|| pyo3::exceptions::PyMemoryError::new_err("more than 2**32 - 1 keys"))?;
                self.hashes.push(0);
                self.keys.push(None);
                // Without metas (a tier's books) the 21 bytes a slot are
                // not spent.
                if self.with_meta {
                    self.metas.push(meta);
                    self.interned.push(false);
                }
                slot
            }
        };
        let at = slot as usize;
        self.hashes[at] = hash;
        self.keys[at] = Some(key.clone().unbind());
        let hashes = &self.hashes;
        self.by_hash.insert_unique(key_hash(hash), slot, |&slot| key_hash(hashes[slot as usize]));
        let keys = &self.keys;
        self.by_address
            .insert_unique(address_hash(key.as_ptr() as usize), slot, |&slot| address_hash(held_address(keys, slot)));
        if self.with_meta {
            self.metas[at] = meta;
            self.interned[at] = interned;
        }
        self.len += 1;
        Ok(slot)
    }

    /// The key that holds `slot`.
    pub(crate) fn key<'py>(&self, py: Python<'py>, slot: u32) -> Option<&Bound<'py, PyAny>> {
        self.keys.get(slot as usize).and_then(Option::as_ref).map(|key| key.bind(py))
    }

    /// Every held slot and its key, in slot order.
    pub(crate) fn held<'a, 'py>(&'a self, py: Python<'py>) -> impl Iterator<Item = (u32, &'a Bound<'py, PyAny>)> + 'a
    where
        'py: 'a,
    {
        self.keys.iter().enumerate().filter_map(move |(slot, key)| Some((slot as u32, key.as_ref()?.bind(py))))
    }

    /// The [`KeyMeta`] of a held slot (a table made `with_meta`).
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
        let address = held_address(&self.keys, slot);
        if address == 0 {
            return None;
        }
        if let Ok(entry) = self.by_address.find_entry(address_hash(address), |&s| s == slot) {
            entry.remove();
        }
        if let Ok(entry) = self.by_hash.find_entry(key_hash(self.hashes[at]), |&s| s == slot) {
            entry.remove();
        }
        let key = self.keys[at].take()?;
        if self.with_meta && self.interned[at] {
            self.interned[at] = false;
            self.ids.release_family(self.metas[at].family);
        }
        self.free.push(slot);
        self.len -= 1;
        Some(key)
    }

    /// A new key's [`KeyMeta`], from `ObjectKey`'s five fields (among
    /// `fields`, if the lookup read them, else by attribute), and whether
    /// it holds an interned family id; a key without them is a family of
    /// its own (`KeyMeta::single`).
    fn read_meta<'py>(
        &mut self,
        key: &Bound<'py, PyAny>,
        fields: Option<&KeyFields<'py>>,
    ) -> PyResult<(KeyMeta, bool)> {
        let py = key.py();
        // An object of a builtin type takes no attributes: no fields to
        // look for (each lookup that fails raises and clears an
        // AttributeError, ~0.5 µs: LRU's `on_keys_created` of tuple keys
        // took 2.7 µs a key).
        if key.is_exact_instance_of::<PyTuple>()
            || key.is_exact_instance_of::<PyString>()
            || key.is_exact_instance_of::<PyInt>()
            || key.is_exact_instance_of::<PyBytes>()
            || key.is_exact_instance_of::<PyFrozenSet>()
        {
            return Ok((KeyMeta::single(self.ids.salts.id("")), false));
        }
        // (Not from the instance's `__dict__`: asking a CPython 3.11+
        // object for it builds one, and slows every later attribute load
        // of the key, its own `__hash__`'s included.)
        let classes = &self.classes;
        let field = |name: &Bound<'py, PyString>| -> PyResult<Option<Bound<'py, PyAny>>> {
            if let Some(value) = fields.and_then(|fields| classes.value(fields, name)) {
                return Ok(Some(value.clone()));
            }
            key.getattr_opt(name)
        };
        let salt = match field(intern!(py, "cache_salt"))? {
            Some(salt) => match salt.cast::<PyString>() {
                Ok(salt) => self.ids.salts.id_of(salt)?,
                Err(_) => self.ids.salts.id(""),
            },
            None => self.ids.salts.id(""),
        };
        let single = Ok((KeyMeta::single(salt), false));
        let (Some(chunk), Some(model), Some(kv_rank), Some(group)) = (
            field(intern!(py, "chunk_hash"))?,
            field(intern!(py, "model_name"))?,
            field(intern!(py, "kv_rank"))?,
            field(intern!(py, "object_group_id"))?,
        ) else {
            return single;
        };
        // The chunk hash's bytes: LMCache's are bytes; an int (a key that
        // is not LMCache's) is filed apart, by its 16 little-endian bytes.
        let int_bytes;
        let (chunk_hash, is_int, chunk) = match chunk.cast::<PyBytes>() {
            Ok(bytes) => (bytes.hash()?, false, bytes.as_bytes()),
            Err(_) => match chunk.extract::<i128>() {
                Ok(value) => {
                    int_bytes = value.to_le_bytes();
                    (chunk.hash()?, true, &int_bytes[..])
                }
                Err(_) => return single,
            },
        };
        let (Ok(model), Ok(kv_rank), Ok(group)) =
            (model.cast::<PyString>(), kv_rank.extract::<u32>(), group.extract::<u32>())
        else {
            return single;
        };
        let model = self.ids.models.id_of(model)?;
        let topology = kv_topology(kv_rank);
        let next_namespace = self.ids.namespaces.len() as u32;
        let namespace = *self.ids.namespaces.entry((model, topology)).or_insert(next_namespace);
        let family = self.ids.family((chunk_hash, is_int, model, salt, topology), chunk);
        Ok((KeyMeta { family, namespace, kv_rank, group, salt }, true))
    }
}
