//! A plain model of LMCache's `L1Manager` bookkeeping, written the obvious
//! way (a `HashMap` of per-key structs, `TTLLock` as LMCache's C++ has it,
//! an LRU as a `Vec` oldest first), for the property tests and the fuzz
//! target to check [`Tier`](crate::Tier) against. Not for production:
//! every call allocates, and the LRU is O(n) a key.

use std::collections::{BTreeMap, HashMap};

use crate::config::TierConfig;
use crate::eviction::target_count;
use crate::key::TierKey;
use crate::outcome::Outcome;
use crate::tier::clamp_read_locks;

/// LMCache's `TTLLock` (`csrc/storage_manager/ttl_lock.cpp`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TtlLock {
    /// The count.
    pub counter: u64,
    /// The expiry, in clock ms.
    pub expiration: u64,
}

impl TtlLock {
    /// `lock_count(n)`.
    pub fn lock(&mut self, n: u64, now: u64, ttl: u64) {
        if now >= self.expiration {
            self.counter = n;
        } else {
            self.counter += n;
        }
        self.expiration = now + ttl;
    }
    /// `unlock_count(n)`.
    pub fn unlock(&mut self, n: u64) {
        self.counter = self.counter.saturating_sub(n);
    }
    /// `is_locked()`.
    pub fn is_locked(&self, now: u64) -> bool {
        self.counter > 0 && now < self.expiration
    }
}

/// `L1ObjectState` without the memory object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObjectState {
    /// The writer's reservation.
    pub write_lock: TtlLock,
    /// The readers' lock.
    pub read_lock: TtlLock,
    /// Deleted after its last read.
    pub is_temporary: bool,
}

/// The model: `_objects`, `_staging`, and an LRU listener.
#[derive(Clone, Debug)]
pub struct Model {
    /// Capacity and TTLs.
    pub config: TierConfig,
    /// Resident objects.
    pub objects: HashMap<TierKey, ObjectState>,
    /// Staging objects by key and tag.
    pub staging: HashMap<TierKey, BTreeMap<u32, ObjectState>>,
    /// LMCache's LRU `OrderedDict`, oldest first.
    pub lru: Vec<TierKey>,
}

impl Model {
    /// An empty model.
    pub fn new(config: TierConfig) -> Model {
        Model { config, objects: HashMap::new(), staging: HashMap::new(), lru: Vec::new() }
    }

    /// Objects held: resident plus staging.
    pub fn num_objects(&self) -> usize {
        self.objects.len() + self.staging.values().map(BTreeMap::len).sum::<usize>()
    }

    fn created(&mut self, keys: &[TierKey]) {
        for key in keys.iter().rev() {
            self.lru.retain(|k| k != key);
            self.lru.push(*key);
        }
    }

    fn touched(&mut self, keys: &[TierKey]) {
        for key in keys.iter().rev() {
            if let Some(at) = self.lru.iter().position(|k| k == key) {
                self.lru.remove(at);
                self.lru.push(*key);
            }
        }
    }

    fn removed(&mut self, keys: &[TierKey]) {
        self.lru.retain(|k| !keys.contains(k));
    }

    /// `reserve_read`.
    pub fn reserve_read(&mut self, keys: &[TierKey], read_locks: i64, now: u64) -> Vec<Outcome> {
        let n = u64::from(clamp_read_locks(read_locks));
        let ttl = self.config.read_ttl_ms;
        keys.iter()
            .map(|key| match self.objects.get_mut(key) {
                None => Outcome::KeyNotExist,
                Some(entry) => {
                    entry.read_lock.lock(n, now, ttl);
                    Outcome::Success
                }
            })
            .collect()
    }

    /// `unsafe_read`.
    pub fn unsafe_read(&mut self, keys: &[TierKey], now: u64) -> Vec<Outcome> {
        keys.iter()
            .map(|key| match self.objects.get(key) {
                None => Outcome::KeyNotExist,
                Some(entry) if !entry.read_lock.is_locked(now) => Outcome::KeyNotReadable,
                Some(_) => Outcome::Success,
            })
            .collect()
    }

    /// `finish_read`.
    pub fn finish_read(&mut self, keys: &[TierKey], read_locks: i64, now: u64) -> Vec<Outcome> {
        let n = u64::from(clamp_read_locks(read_locks));
        let mut out = Vec::new();
        let mut freed = Vec::new();
        for key in keys {
            let Some(entry) = self.objects.get_mut(key) else {
                out.push(Outcome::KeyNotExist);
                continue;
            };
            if !entry.read_lock.is_locked(now) {
                out.push(Outcome::KeyInWrongState);
                continue;
            }
            entry.read_lock.unlock(n);
            if entry.is_temporary && !entry.read_lock.is_locked(now) {
                self.objects.remove(key);
                freed.push(*key);
            }
            out.push(Outcome::Success);
        }
        self.removed(&freed);
        out
    }

    /// `reserve_write`.
    pub fn reserve_write(&mut self, keys: &[TierKey], temporary: &[bool], tag: u32, now: u64) -> Vec<Outcome> {
        let mut out = vec![Outcome::Success; keys.len()];
        let mut need = Vec::new();
        let mut successful = Vec::new();
        let write_ttl = self.config.write_ttl_ms;
        for (i, (key, &is_temp)) in keys.iter().zip(temporary).enumerate() {
            if self.objects.contains_key(key) {
                out[i] = Outcome::KeyNotWritable;
                continue;
            }
            if let Some(staged) = self.staging.get_mut(key).and_then(|tags| tags.get_mut(&tag)) {
                if staged.write_lock.is_locked(now) {
                    out[i] = Outcome::KeyNotWritable;
                    continue;
                }
                staged.write_lock.lock(1, now, write_ttl);
                staged.is_temporary = is_temp;
                successful.push(*key);
                continue;
            }
            need.push((i, *key, is_temp));
        }
        if need.is_empty() {
            return out;
        }
        if self.num_objects() + need.len() > self.config.capacity {
            for &(i, _, _) in &need {
                out[i] = Outcome::OutOfMemory;
            }
        } else {
            for (i, key, is_temp) in need {
                let tags = self.staging.entry(key).or_default();
                if tags.contains_key(&tag) {
                    // The same key earlier in this batch (see Tier::reserve_write).
                    out[i] = Outcome::KeyNotWritable;
                    continue;
                }
                let mut entry = ObjectState { is_temporary: is_temp, ..ObjectState::default() };
                entry.write_lock.lock(1, now, write_ttl);
                tags.insert(tag, entry);
                successful.push(key);
            }
        }
        self.created(&successful);
        out
    }

    fn take_staging(&mut self, key: &TierKey, tag: u32, now: u64) -> Result<ObjectState, Outcome> {
        let Some(staged) = self.staging.get(key).and_then(|tags| tags.get(&tag)) else {
            return Err(Outcome::KeyNotExist);
        };
        if !staged.write_lock.is_locked(now) {
            return Err(Outcome::KeyInWrongState);
        }
        let tags = self.staging.get_mut(key).expect("found");
        let mut entry = tags.remove(&tag).expect("found");
        if tags.is_empty() {
            self.staging.remove(key);
        }
        entry.write_lock.unlock(1);
        Ok(entry)
    }

    /// `finish_write` (and `finish_prefetch`, the same here).
    pub fn finish_write(&mut self, keys: &[TierKey], tag: u32, now: u64) -> Vec<Outcome> {
        let mut out = Vec::new();
        let mut notify = Vec::new();
        for key in keys {
            match self.take_staging(key, tag, now) {
                Err(outcome) => out.push(outcome),
                Ok(entry) => {
                    if !self.objects.contains_key(key) {
                        self.objects.insert(*key, entry);
                        if !entry.is_temporary {
                            notify.push(*key);
                        }
                    }
                    out.push(Outcome::Success);
                }
            }
        }
        self.created(&notify);
        out
    }

    /// `finish_write_and_reserve_read`.
    pub fn finish_write_and_reserve_read(
        &mut self,
        keys: &[TierKey],
        read_locks: i64,
        tag: u32,
        now: u64,
    ) -> Vec<Outcome> {
        let n = u64::from(clamp_read_locks(read_locks));
        let read_ttl = self.config.read_ttl_ms;
        let mut out = Vec::new();
        let mut successful = Vec::new();
        for key in keys {
            match self.take_staging(key, tag, now) {
                Err(outcome) => out.push(outcome),
                Ok(entry) => {
                    if !self.objects.contains_key(key) {
                        self.objects.insert(*key, entry);
                        successful.push(*key);
                    }
                    self.objects.get_mut(key).expect("resident").read_lock.lock(n, now, read_ttl);
                    out.push(Outcome::Success);
                }
            }
        }
        self.created(&successful);
        out
    }

    fn reclaim_staging(&mut self, key: &TierKey, force: bool, now: u64) -> usize {
        let Some(tags) = self.staging.get_mut(key) else { return 0 };
        let before = tags.len();
        tags.retain(|_, staged| staged.write_lock.is_locked(now) && !force);
        let freed = before - tags.len();
        if tags.is_empty() {
            self.staging.remove(key);
        }
        freed
    }

    /// `delete`.
    pub fn delete(&mut self, keys: &[TierKey], force: bool, now: u64) -> Vec<Outcome> {
        let mut out = Vec::new();
        let mut successful = Vec::new();
        let mut gone = Vec::new();
        for key in keys {
            let resident = self.objects.get(key).copied();
            if resident.is_none() && !self.staging.contains_key(key) {
                out.push(Outcome::KeyNotExist);
                continue;
            }
            self.reclaim_staging(key, force, now);
            if self.staging.contains_key(key) {
                out.push(Outcome::KeyIsLocked);
                continue;
            }
            let Some(entry) = resident else {
                out.push(Outcome::Success);
                gone.push(*key);
                continue;
            };
            if entry.read_lock.is_locked(now) && !force {
                out.push(Outcome::KeyIsLocked);
                continue;
            }
            self.objects.remove(key);
            out.push(Outcome::Success);
            successful.push(*key);
        }
        self.removed(&successful);
        self.removed(&gone);
        out
    }

    /// `finish_write_and_delete`.
    pub fn finish_write_and_delete(&mut self, keys: &[TierKey], tag: u32, now: u64) -> Vec<Outcome> {
        let mut out = Vec::new();
        let mut gone = Vec::new();
        for key in keys {
            match self.take_staging(key, tag, now) {
                Err(outcome) => out.push(outcome),
                Ok(_) => {
                    if !self.objects.contains_key(key) && !self.staging.contains_key(key) {
                        gone.push(*key);
                    }
                    out.push(Outcome::Success);
                }
            }
        }
        self.removed(&gone);
        out
    }

    /// `touch_keys`, answering which keys the model has.
    pub fn touch(&mut self, keys: &[TierKey]) -> Vec<Outcome> {
        self.touched(keys);
        keys.iter()
            .map(|key| {
                if self.objects.contains_key(key) || self.staging.contains_key(key) {
                    Outcome::Success
                } else {
                    Outcome::KeyNotExist
                }
            })
            .collect()
    }

    /// `clear`.
    pub fn clear(&mut self, force: bool, now: u64) {
        if force {
            let all: Vec<TierKey> = self.objects.keys().chain(self.staging.keys()).copied().collect();
            self.objects.clear();
            self.staging.clear();
            self.removed(&all);
            return;
        }
        let to_clear: Vec<TierKey> =
            self.objects.iter().filter(|(_, entry)| !entry.read_lock.is_locked(now)).map(|(key, _)| *key).collect();
        for key in &to_clear {
            self.objects.remove(key);
        }
        self.removed(&to_clear);
        let mut gone = Vec::new();
        let staged: Vec<TierKey> = self.staging.keys().copied().collect();
        for key in staged {
            let freed = self.reclaim_staging(&key, false, now);
            if freed > 0 && !self.staging.contains_key(&key) && !self.objects.contains_key(&key) {
                gone.push(key);
            }
        }
        self.removed(&gone);
    }

    /// LMCache's `is_key_evictable`.
    pub fn is_evictable(&self, key: &TierKey, now: u64) -> bool {
        if self.objects.get(key).is_some_and(|entry| !entry.read_lock.is_locked(now)) {
            return true;
        }
        self.staging.get(key).is_some_and(|tags| tags.values().any(|staged| !staged.write_lock.is_locked(now)))
    }

    /// The eviction controller's step: LRU victims among the evictable,
    /// deleted (not forced); returns the keys deleted.
    pub fn evict(&mut self, ratio: f64, now: u64) -> Vec<TierKey> {
        let target = target_count(self.lru.len(), ratio);
        let victims: Vec<TierKey> =
            self.lru.iter().filter(|key| self.is_evictable(key, now)).take(target).copied().collect();
        let outcomes = self.delete(&victims, false, now);
        victims.into_iter().zip(outcomes).filter(|(_, outcome)| outcome.is_success()).map(|(key, _)| key).collect()
    }
}
