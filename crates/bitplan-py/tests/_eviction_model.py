"""Plain-Python models of LMCache's eviction policies, transcribed rule for
rule from LMCache's sources (``lmcache/v1/distributed/eviction_policy/``):
``lru.py`` with the chunk-coherent victims of ``_selection.py`` at d18cdadc,
``isolated_lru.py`` (0a353d63) with the same victims per salt,
``s3fifo.py`` (604f3ae3), ``arc.py`` (58b31084) and ``noop.py``.

The hypothesis tests (``test_eviction_stateful.py``) drive these and
``bitplan.lmcache.eviction_policy`` with the same events and compare every
answer; ``benches/eviction_policy.py`` times them as LMCache's classes.
Each model keeps LMCache's data structures (``OrderedDict``\\ s and sets
under one lock) so that it also costs what LMCache's classes cost: the
same hashes per key, the same passes.

The models return plain lists of keys (``victims``) rather than
``EvictionAction``\\ s, and take no destination: the comparison is of the
keys, their order, and the state.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable
from typing import Optional

# (`Optional`, not `| None`: a runtime alias, and Python 3.9 is supported.)
Filter = Optional[Callable[[object], bool]]


def target_count(tracked: int, expected_ratio: float) -> int:
    """LMCache's rounding: clamp, ``int(tracked * ratio)``, at least 1."""
    expected_ratio = max(0.0, min(1.0, expected_ratio))
    target = int(tracked * expected_ratio)
    if expected_ratio > 0 and target == 0 and tracked > 0:
        target = 1
    return target


# ---------------------------------------------------------------------------
# _selection.py at d18cdadc: chunk-coherent victims
# ---------------------------------------------------------------------------


def kv_topology(kv_rank: int):
    world_size = (kv_rank >> 24) & 0xFF
    global_rank = (kv_rank >> 16) & 0xFF
    local_world_size = (kv_rank >> 8) & 0xFF
    local_rank = kv_rank & 0xFF
    if (
        world_size > 0
        and local_world_size > 0
        and global_rank < world_size
        and local_rank < local_world_size
        and global_rank % local_world_size == local_rank
    ):
        return world_size, local_world_size
    return None


def compute_kv_rank(world_size: int, global_rank: int, local_world_size: int, local_rank: int) -> int:
    return (world_size << 24) | (global_rank << 16) | (local_world_size << 8) | local_rank


def _namespace(key):
    return key.model_name, kv_topology(key.kv_rank)


def _family(key):
    return key.chunk_hash, key.model_name, key.cache_salt, kv_topology(key.kv_rank)


class FamilyTopology:
    """``ChunkFamilyTopology``: the (rank, group) coordinates seen per
    (model, topology) namespace; never forgotten."""

    def __init__(self) -> None:
        self._coordinates: dict = {}
        self._ordered: dict = {}

    def observe(self, keys: Iterable) -> None:
        changed = set()
        for key in keys:
            namespace = _namespace(key)
            coordinates = self._coordinates.setdefault(namespace, set())
            before = len(coordinates)
            coordinates.add((key.kv_rank, key.object_group_id))
            if len(coordinates) != before:
                changed.add(namespace)
        for namespace in changed:
            observed = self._coordinates[namespace]
            topology = namespace[1]
            if topology is None:
                expected = observed
            else:
                world_size, local_world_size = topology
                groups = {group for _, group in observed}
                expected = {
                    (compute_kv_rank(world_size, rank, local_world_size, rank % local_world_size), group)
                    for rank in range(world_size)
                    for group in groups
                }
            self._ordered[namespace] = tuple(sorted(expected))

    def members(self, key, tracked: Collection) -> tuple:
        coordinates = self._ordered.get(_namespace(key), ())
        if coordinates == ((key.kv_rank, key.object_group_id),):
            return (key,)
        members = []
        for kv_rank, group in coordinates:
            candidate = type(key)(
                chunk_hash=key.chunk_hash,
                model_name=key.model_name,
                kv_rank=kv_rank,
                object_group_id=group,
                cache_salt=key.cache_salt,
            )
            if candidate not in tracked:
                return ()
            members.append(candidate)
        return tuple(members)


def select_chunk_coherent_victims(ordered: Collection, target: int, topology: FamilyTopology, key_filter: Filter) -> list:
    if target <= 0:
        return []
    selected: list = []
    visited: set = set()
    for key in ordered:
        family = _family(key)
        if family in visited:
            continue
        visited.add(family)
        members = topology.members(key, ordered)
        if not members:
            continue
        if key_filter is not None and any(not key_filter(member) for member in members):
            continue
        selected.extend(members)
        if len(selected) >= target:
            break
    return selected


# ---------------------------------------------------------------------------
# The policies
# ---------------------------------------------------------------------------


class LRUModel:
    """``LRUEvictionPolicy`` (chunk-coherent victims)."""

    support_isolation = False

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._order: OrderedDict = OrderedDict()
        self._topology = FamilyTopology()

    def on_keys_created(self, keys: list) -> None:
        if not keys:
            return
        with self._lock:
            self._topology.observe(keys)
            for key in reversed(keys):
                if key in self._order:
                    self._order.move_to_end(key)
                else:
                    self._order[key] = None

    def on_keys_touched(self, keys: list) -> None:
        if not keys:
            return
        with self._lock:
            for key in reversed(keys):
                if key in self._order:
                    self._order.move_to_end(key)

    def on_keys_removed(self, keys: list) -> None:
        if not keys:
            return
        with self._lock:
            for key in keys:
                if key in self._order:
                    del self._order[key]

    def victims(self, expected_ratio: float, key_filter: Filter = None, cache_salt=None) -> list:
        with self._lock:
            if not self._order:
                return []
            target = target_count(len(self._order), expected_ratio)
            if target == 0:
                return []
            return select_chunk_coherent_victims(self._order, target, self._topology, key_filter)

    def get_num_tracked_keys(self) -> int:
        with self._lock:
            return len(self._order)

    def get_eviction_candidates(self, count: int) -> list:
        with self._lock:
            out = []
            for key in self._order:
                out.append(key)
                if len(out) >= count:
                    break
            return out


class IsolatedLRUModel:
    """``IsolatedLRUEvictionPolicy``: one LRU per ``cache_salt``, chunk-coherent."""

    support_isolation = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._per_salt: dict[str, OrderedDict] = {}
        self._topology = FamilyTopology()

    def on_keys_created(self, keys: list) -> None:
        if not keys:
            return
        with self._lock:
            self._topology.observe(keys)
            for key in reversed(keys):
                order = self._per_salt.get(key.cache_salt)
                if order is None:
                    order = self._per_salt[key.cache_salt] = OrderedDict()
                if key in order:
                    order.move_to_end(key)
                else:
                    order[key] = None

    def on_keys_touched(self, keys: list) -> None:
        if not keys:
            return
        with self._lock:
            for key in reversed(keys):
                order = self._per_salt.get(key.cache_salt)
                if order is not None and key in order:
                    order.move_to_end(key)

    def on_keys_removed(self, keys: list) -> None:
        if not keys:
            return
        with self._lock:
            for key in keys:
                order = self._per_salt.get(key.cache_salt)
                if order is None:
                    continue
                order.pop(key, None)
                if not order:
                    del self._per_salt[key.cache_salt]

    def victims(self, expected_ratio: float, key_filter: Filter = None, cache_salt=None) -> list:
        if cache_salt is None:
            raise ValueError("IsolatedLRUEvictionPolicy.get_eviction_actions requires cache_salt")
        with self._lock:
            order = self._per_salt.get(cache_salt)
            if not order:
                return []
            target = target_count(len(order), expected_ratio)
            if target == 0:
                return []
            return select_chunk_coherent_victims(order, target, self._topology, key_filter)

    def get_num_tracked_keys(self, cache_salt=None) -> int:
        with self._lock:
            if cache_salt is not None:
                order = self._per_salt.get(cache_salt)
                return len(order) if order is not None else 0
            return sum(len(order) for order in self._per_salt.values())

    def get_tracked_salts(self) -> list:
        with self._lock:
            return list(self._per_salt)


class S3FIFOModel:
    """``S3FIFOEvictionPolicy``: small and main FIFOs and a ghost set; the
    victims leave small/main when chosen and enter the ghost set."""

    support_isolation = False

    def __init__(self, small_max_size: int | None = None) -> None:
        self._lock = threading.Lock()
        self._small: OrderedDict = OrderedDict()
        self._main: OrderedDict = OrderedDict()
        self._ghost: set = set()
        self._small_max_size = small_max_size

    def on_keys_created(self, keys: list) -> None:
        if not keys:
            return
        with self._lock:
            for key in keys:
                if key in self._small or key in self._main:
                    continue
                if key in self._ghost:
                    self._main[key] = None
                    self._ghost.remove(key)
                else:
                    self._small[key] = None
            if self._small_max_size is not None:
                while len(self._small) > self._small_max_size:
                    key, _ = self._small.popitem(last=False)
                    self._ghost.add(key)

    def on_keys_touched(self, keys: list) -> None:
        if not keys:
            return
        with self._lock:
            for key in keys:
                if key in self._small:
                    del self._small[key]
                    self._main[key] = None
                elif key in self._main:
                    self._main.move_to_end(key)

    def on_keys_removed(self, keys: list) -> None:
        if not keys:
            return
        with self._lock:
            for key in keys:
                self._small.pop(key, None)
                self._main.pop(key, None)
                self._ghost.discard(key)

    def victims(self, expected_ratio: float, key_filter: Filter = None, cache_salt=None) -> list:
        with self._lock:
            if not self._small and not self._main:
                return []
            target = target_count(len(self._small) + len(self._main), expected_ratio)
            if target == 0:
                return []
            evicted: list = []
            for queue in (self._small, self._main):
                for key in list(queue.keys()):
                    if len(evicted) >= target:
                        break
                    if key_filter and not key_filter(key):
                        continue
                    queue.pop(key, None)
                    evicted.append(key)
                    self._ghost.add(key)
            return evicted

    def get_num_tracked_keys(self) -> int:
        with self._lock:
            return len(self._small) + len(self._main)

    def state(self) -> dict:
        with self._lock:
            return {"small": list(self._small), "main": list(self._main), "ghost": set(self._ghost)}


class ARCModel:
    """``ARCEvictionPolicy``: T1/T2/B1/B2, the adaptive target, pending victims."""

    support_isolation = False

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._t1: OrderedDict = OrderedDict()
        self._t2: OrderedDict = OrderedDict()
        self._b1: OrderedDict = OrderedDict()
        self._b2: OrderedDict = OrderedDict()
        self._pending: set = set()
        self._p = 0.0
        self._capacity = 0

    def on_keys_created(self, keys: list) -> None:
        if not keys:
            return
        with self._lock:
            for key in reversed(keys):
                self._pending.discard(key)
                if key in self._t1:
                    del self._t1[key]
                    self._t2[key] = None
                elif key in self._t2:
                    self._t2.move_to_end(key)
                elif key in self._b1:
                    self._p = min(self._capacity, self._p + max(1.0, len(self._b2) / len(self._b1)))
                    del self._b1[key]
                    self._t2[key] = None
                elif key in self._b2:
                    self._p = max(0.0, self._p - max(1.0, len(self._b1) / len(self._b2)))
                    del self._b2[key]
                    self._t2[key] = None
                else:
                    self._forget(key)
                    self._t1[key] = None
                self._capacity = max(self._capacity, len(self._t1) + len(self._t2))
                self._trim()

    def on_keys_touched(self, keys: list) -> None:
        if not keys:
            return
        with self._lock:
            for key in reversed(keys):
                if key in self._t1:
                    del self._t1[key]
                    self._t2[key] = None
                elif key in self._t2:
                    self._t2.move_to_end(key)

    def on_keys_removed(self, keys: list) -> None:
        if not keys:
            return
        with self._lock:
            for key in keys:
                if key in self._pending:
                    if key in self._t1:
                        del self._t1[key]
                        self._b1[key] = None
                    elif key in self._t2:
                        del self._t2[key]
                        self._b2[key] = None
                else:
                    self._forget(key)
                self._pending.discard(key)
            self._trim()

    def victims(self, expected_ratio: float, key_filter: Filter = None, cache_salt=None) -> list:
        with self._lock:
            resident = len(self._t1) + len(self._t2)
            if resident == 0:
                return []
            target = target_count(resident, expected_ratio)
            if target == 0:
                return []
            self._capacity = max(self._capacity, resident)
            self._p = min(self._p, self._capacity)
            self._trim()
            selected: set = set()
            victims: list = []
            virtual_t1 = len(self._t1)
            t1 = iter(tuple(self._t1))
            t2 = iter(tuple(self._t2))

            def next_eligible(entries):
                for key in entries:
                    if key in selected:
                        continue
                    if key_filter is not None and not key_filter(key):
                        continue
                    return key
                return None

            while len(victims) < target:
                candidate = None
                if virtual_t1 >= int(self._p):
                    candidate = next_eligible(t1)
                    if candidate is not None:
                        virtual_t1 -= 1
                if candidate is None:
                    candidate = next_eligible(t2)
                if candidate is None:
                    candidate = next_eligible(t1)
                    if candidate is not None:
                        virtual_t1 -= 1
                if candidate is None:
                    break
                selected.add(candidate)
                victims.append(candidate)
            self._pending.update(victims)
            return victims

    def get_num_tracked_keys(self) -> int:
        with self._lock:
            return len(self._t1) + len(self._t2)

    def get_debug_state(self) -> dict:
        with self._lock:
            return {
                "t1": list(self._t1),
                "t2": list(self._t2),
                "b1": list(self._b1),
                "b2": list(self._b2),
                "capacity": self._capacity,
                "target_t1_size": self._p,
            }

    def _forget(self, key) -> None:
        for queue in (self._t1, self._t2, self._b1, self._b2):
            queue.pop(key, None)

    def _trim(self) -> None:
        if self._capacity <= 0:
            return
        while len(self._t1) + len(self._b1) > self._capacity and self._b1:
            self._b1.popitem(last=False)
        while len(self._t1) + len(self._t2) + len(self._b1) + len(self._b2) > 2 * self._capacity:
            ghosts = self._b2 if self._b2 else self._b1
            if not ghosts:
                break
            ghosts.popitem(last=False)


class NoOpModel:
    """``NoOpEvictionPolicy``: tracks nothing, never evicts."""

    support_isolation = False

    def on_keys_created(self, keys: list) -> None:
        pass

    def on_keys_touched(self, keys: list) -> None:
        pass

    def on_keys_removed(self, keys: list) -> None:
        pass

    def victims(self, expected_ratio: float, key_filter: Filter = None, cache_salt=None) -> list:
        return []


MODELS = {"LRU": LRUModel, "IsolatedLRU": IsolatedLRUModel, "S3FIFO": S3FIFOModel, "ARC": ARCModel, "noop": NoOpModel}
