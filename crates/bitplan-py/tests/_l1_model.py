"""A reference L1 that keeps its books as LMCache's ``L1Manager`` does
(``lmcache/v1/distributed/l1_manager.py`` at 0101edda; codes from
``error.py``), written again from its rules in plain Python: a dict of
resident objects, a dict of staging objects per key and writer tag, locks
with a time-to-live and a count, and listeners told key by key.

It is two things (issue #28), so that there is one copy:

* the model that ``test_tiers_stateful.py`` runs the native
  ``bitplan.lmcache.tiers.L1Bookkeeper`` against, operation by operation;
* the honest baseline of ``benches/controller_request.py`` (its
  ``reference``, ``native`` and ``fast`` modes), which imports it through
  ``sys.path``.

What it leaves out of LMCache's manager: memory. A "memory object" is the
object the caller attached at ``reserve_write`` (``objects=``), or else the
slot number the reservation took; the capacity counts objects, resident and
staged. Allocation is LMCache's ``allocate(layout, n)``: all the keys of a
call that need a new object get one, or all of them get ``OUT_OF_MEMORY``.
The event bus and the logging are left out too; the listeners stay. One
rule differs on purpose, as tier-state has it: a key twice in one
``reserve_write`` that needs a new object counts twice against the capacity
and gets ``KEY_NOT_WRITABLE`` the second time (LMCache stages it twice and
loses the first object).

The clock is injectable (``clock_ms``, a callable returning milliseconds on a
steady clock), so that tests decide when a lock expires. LMCache's lock
reads the clock at each ``lock()``; this model reads it once per call, which
is the same thing with a clock that stands still during a call.
"""

from __future__ import annotations

import enum
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

MAX_READ_LOCK_COUNT = 128


class L1Error(enum.IntEnum):
    """LMCache's ``L1Error``, with its values (``enum.auto()`` from 1)."""

    SUCCESS = 1
    KEY_NOT_EXIST = 2
    KEY_NOT_READABLE = 3
    KEY_NOT_WRITABLE = 4
    KEY_IN_WRONG_STATE = 5
    KEY_IS_LOCKED = 6
    OUT_OF_MEMORY = 7


def clamp_read_locks(read_locks: int) -> int:
    """LMCache's ``validate_read_locks``: into [1, 128] (it logs; we don't)."""
    return 1 if read_locks < 1 else min(read_locks, MAX_READ_LOCK_COUNT)


def monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class TTLLock:
    """LMCache's ``TTLLock``: a count and an expiry. ``lock`` after the expiry
    starts the count again; an expired lock is not locked, whatever its
    count; ``unlock`` stops at 0."""

    __slots__ = ("ttl_ms", "count", "expires_ms")

    def __init__(self, ttl_ms: int) -> None:
        self.ttl_ms = ttl_ms
        self.count = 0
        self.expires_ms = 0

    def lock(self, now_ms: int, times: int = 1) -> None:
        if now_ms >= self.expires_ms:
            self.count = times
        else:
            self.count += times
        self.expires_ms = now_ms + self.ttl_ms

    def unlock(self, times: int = 1) -> None:
        self.count = max(0, self.count - times)

    def is_locked(self, now_ms: int) -> bool:
        return self.count > 0 and now_ms < self.expires_ms


class ObjectState:
    """One object, resident or staged: what LMCache's ``L1ObjectState`` holds."""

    __slots__ = ("memory_obj", "slot", "write_lock", "read_lock", "is_temporary")

    def __init__(self, memory_obj: Any, slot: int, write_ttl_ms: int, read_ttl_ms: int, is_temporary: bool) -> None:
        self.memory_obj = memory_obj
        self.slot = slot
        self.write_lock = TTLLock(write_ttl_ms)
        self.read_lock = TTLLock(read_ttl_ms)
        self.is_temporary = is_temporary


class L1Listener:
    """LMCache's ``L1ManagerListener``: every hook takes a list of keys."""

    def on_l1_keys_reserved_read(self, keys: list) -> None: ...
    def on_l1_keys_read_finished(self, keys: list) -> None: ...
    def on_l1_keys_reserved_write(self, keys: list) -> None: ...
    def on_l1_keys_write_finished(self, keys: list) -> None: ...
    def on_l1_keys_prefetch_finished(self, keys: list) -> None: ...
    def on_l1_keys_finish_write_and_reserve_read(self, keys: list) -> None: ...
    def on_l1_keys_deleted_by_manager(self, keys: list) -> None: ...
    def on_l1_keys_accessed(self, keys: list) -> None: ...


class LRUListener(L1Listener):
    """LMCache's LRU policy behind its L1 bridge, as an ``OrderedDict``
    (oldest first): a reserved or finished write creates (or refreshes) its
    keys, walking the batch in reverse so that its first key ends the most
    recent; a touch refreshes only keys it tracks; a deletion forgets."""

    def __init__(self) -> None:
        self.order: OrderedDict[Hashable, None] = OrderedDict()
        self._lock = threading.Lock()

    def _created(self, keys: list) -> None:
        with self._lock:
            order = self.order
            for key in reversed(keys):
                if key in order:
                    order.move_to_end(key)
                else:
                    order[key] = None

    def _touched(self, keys: list) -> None:
        with self._lock:
            order = self.order
            for key in reversed(keys):
                if key in order:
                    order.move_to_end(key)

    def _removed(self, keys: list) -> None:
        with self._lock:
            for key in keys:
                self.order.pop(key, None)

    on_l1_keys_reserved_write = _created
    on_l1_keys_write_finished = _created
    on_l1_keys_prefetch_finished = _created
    on_l1_keys_finish_write_and_reserve_read = _created
    on_l1_keys_accessed = _touched
    on_l1_keys_deleted_by_manager = _removed

    def eviction_candidates(self, count: int, eligible: Callable[[Hashable], bool] | None = None) -> list:
        """The ``count`` oldest keys that ``eligible`` accepts."""
        with self._lock:
            out = []
            for key in self.order:
                if len(out) >= count:
                    break
                if eligible is None or eligible(key):
                    out.append(key)
            return out


def _synchronized(method):
    def wrapper(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


class L1Model:
    """``L1Manager``'s bookkeeping, with its method names, results and rules.

    Keys are any hashable objects. Results are dicts from key to
    ``(L1Error, memory object or None)`` or to ``L1Error``, as LMCache's.
    """

    def __init__(
        self,
        capacity: int,
        write_ttl_seconds: float = 600,
        read_ttl_seconds: float = 300,
        clock_ms: Callable[[], int] | None = None,
    ) -> None:
        if capacity < 0:
            raise ValueError(f"capacity {capacity} < 0")
        self.capacity = capacity
        self._write_ttl_ms = int(write_ttl_seconds * 1000)
        self._read_ttl_ms = int(read_ttl_seconds * 1000)
        self._clock = clock_ms or monotonic_ms
        self._lock = threading.Lock()
        self._objects: dict[Hashable, ObjectState] = {}
        self._staging: dict[Hashable, dict[str, ObjectState]] = {}
        self._used = 0  # objects held, resident and staged
        self._next_slot = 0
        self._free_slots: list[int] = []
        self._listeners: list[L1Listener] = []

    # -- the memory stand-in ------------------------------------------------
    def _fits(self, count: int) -> bool:
        return self._used + count <= self.capacity

    def _allocate_one(self) -> int:
        self._used += 1
        if self._free_slots:
            return self._free_slots.pop()
        self._next_slot += 1
        return self._next_slot - 1

    def _free(self, entries: Iterable[ObjectState]) -> None:
        for entry in entries:
            self._used -= 1
            self._free_slots.append(entry.slot)

    def register_listener(self, listener: L1Listener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def _tell(self, hook: str, keys: list) -> None:
        for listener in self._listeners:
            getattr(listener, hook)(keys)

    # -- reads ----------------------------------------------------------------
    @_synchronized
    def reserve_read(self, keys: Sequence[Hashable], read_locks: int = 1) -> dict:
        total = clamp_read_locks(read_locks)
        now = self._clock()
        ret: dict = {}
        locked = []
        for key in keys:
            entry = self._objects.get(key)
            if entry is None:
                ret[key] = (L1Error.KEY_NOT_EXIST, None)
                continue
            entry.read_lock.lock(now, total)
            ret[key] = (L1Error.SUCCESS, entry.memory_obj)
            locked.append(key)
        self._tell("on_l1_keys_reserved_read", locked)
        return ret

    @_synchronized
    def unsafe_read(self, keys: Sequence[Hashable]) -> dict:
        now = self._clock()
        ret: dict = {}
        for key in keys:
            entry = self._objects.get(key)
            if entry is None:
                ret[key] = (L1Error.KEY_NOT_EXIST, None)
            elif not entry.read_lock.is_locked(now):
                ret[key] = (L1Error.KEY_NOT_READABLE, None)
            else:
                ret[key] = (L1Error.SUCCESS, entry.memory_obj)
        return ret

    @_synchronized
    def finish_read(self, keys: Sequence[Hashable], read_locks: int = 1) -> dict:
        total = clamp_read_locks(read_locks)
        now = self._clock()
        ret: dict = {}
        finished, gone, freed = [], [], []
        for key in keys:
            entry = self._objects.get(key)
            if entry is None:
                ret[key] = L1Error.KEY_NOT_EXIST
                continue
            if not entry.read_lock.is_locked(now):
                ret[key] = L1Error.KEY_IN_WRONG_STATE
                continue
            entry.read_lock.unlock(total)
            if entry.is_temporary and not entry.read_lock.is_locked(now):
                del self._objects[key]
                gone.append(key)
                freed.append(entry)
            ret[key] = L1Error.SUCCESS
            finished.append(key)
        self._free(freed)
        self._tell("on_l1_keys_read_finished", finished)
        self._tell("on_l1_keys_deleted_by_manager", gone)
        return ret

    # -- writes ---------------------------------------------------------------
    @_synchronized
    def reserve_write(
        self,
        keys: Sequence[Hashable],
        is_temporary: Sequence[bool],
        layout_desc: Any = None,
        tag: str = "",
        objects: Sequence[Any] | None = None,
    ) -> dict:
        if len(keys) != len(is_temporary):
            raise ValueError(f"reserve_write: {len(keys)} keys but {len(is_temporary)} is_temporary flags")
        if objects is not None and len(objects) != len(keys):
            raise ValueError(f"reserve_write: {len(keys)} keys but {len(objects)} objects")
        now = self._clock()
        ret: dict = {}
        reserved = []
        to_allocate = []
        for i, (key, temporary) in enumerate(zip(keys, is_temporary)):
            if key in self._objects:
                ret[key] = (L1Error.KEY_NOT_WRITABLE, None)
                continue
            staged = self._staging.get(key, {}).get(tag)
            if staged is not None:
                if staged.write_lock.is_locked(now):
                    ret[key] = (L1Error.KEY_NOT_WRITABLE, None)
                    continue
                # an expired reservation: its object goes to the new writer
                staged.write_lock.lock(now)
                staged.is_temporary = bool(temporary)
                ret[key] = (L1Error.SUCCESS, staged.memory_obj)
                reserved.append(key)
                continue
            to_allocate.append((i, key, bool(temporary)))
        if not to_allocate:
            return ret
        if not self._fits(len(to_allocate)):
            for _, key, _ in to_allocate:
                ret[key] = (L1Error.OUT_OF_MEMORY, None)
        else:
            for i, key, temporary in to_allocate:
                if tag in self._staging.get(key, {}):
                    # the same key earlier in this batch: LMCache would stage
                    # it twice and lose the first object; tier-state refuses
                    # the second, and so does the model
                    ret[key] = (L1Error.KEY_NOT_WRITABLE, None)
                    continue
                slot = self._allocate_one()
                memory_obj = objects[i] if objects is not None else slot
                entry = ObjectState(memory_obj, slot, self._write_ttl_ms, self._read_ttl_ms, temporary)
                entry.write_lock.lock(now)
                self._staging.setdefault(key, {})[tag] = entry
                ret[key] = (L1Error.SUCCESS, memory_obj)
                reserved.append(key)
        self._tell("on_l1_keys_reserved_write", reserved)
        return ret

    def _take_staging(self, key: Hashable, tag: str, now: int) -> tuple[L1Error, ObjectState | None]:
        per_tag = self._staging.get(key)
        staged = per_tag.get(tag) if per_tag is not None else None
        if staged is None:
            return L1Error.KEY_NOT_EXIST, None
        if not staged.write_lock.is_locked(now):
            return L1Error.KEY_IN_WRONG_STATE, None  # stays staged, for eviction to reclaim
        staged.write_lock.unlock()
        del per_tag[tag]
        if not per_tag:
            del self._staging[key]
        return L1Error.SUCCESS, staged

    def _finish_write(self, keys: Sequence[Hashable], tag: str, prefetched: bool) -> dict:
        now = self._clock()
        ret: dict = {}
        admitted, discarded = [], []
        for key in keys:
            err, entry = self._take_staging(key, tag, now)
            ret[key] = err
            if entry is None:
                continue
            if key in self._objects:
                discarded.append(entry)
                continue
            self._objects[key] = entry
            if not entry.is_temporary:
                admitted.append(key)
        self._free(discarded)
        if admitted:
            self._tell("on_l1_keys_prefetch_finished" if prefetched else "on_l1_keys_write_finished", admitted)
        return ret

    @_synchronized
    def finish_write(self, keys: Sequence[Hashable], tag: str = "") -> dict:
        return self._finish_write(keys, tag, prefetched=False)

    @_synchronized
    def finish_prefetch(self, keys: Sequence[Hashable], tag: str = "") -> dict:
        return self._finish_write(keys, tag, prefetched=True)

    @_synchronized
    def finish_write_and_reserve_read(self, keys: Sequence[Hashable], read_locks: int = 1, tag: str = "") -> dict:
        total = clamp_read_locks(read_locks)
        now = self._clock()
        ret: dict = {}
        admitted, already, discarded = [], [], []
        for key in keys:
            err, entry = self._take_staging(key, tag, now)
            if entry is None:
                ret[key] = (err, None)
                continue
            resident = self._objects.get(key)
            if resident is None:
                self._objects[key] = entry
                admitted.append(key)
            else:
                discarded.append(entry)
                already.append(key)
                entry = resident
            entry.read_lock.lock(now, total)
            ret[key] = (L1Error.SUCCESS, entry.memory_obj)
        self._free(discarded)
        if already:
            self._tell("on_l1_keys_reserved_read", already)
        self._tell("on_l1_keys_finish_write_and_reserve_read", admitted)
        return ret

    # -- deletes --------------------------------------------------------------
    def _reclaim_staging(self, key: Hashable, force: bool, now: int) -> int:
        per_tag = self._staging.get(key)
        if per_tag is None:
            return 0
        freed = []
        for tag, staged in list(per_tag.items()):
            if staged.write_lock.is_locked(now) and not force:
                continue
            freed.append(per_tag.pop(tag))
        if not per_tag:
            del self._staging[key]
        self._free(freed)
        return len(freed)

    @_synchronized
    def delete(self, keys: Sequence[Hashable], force: bool = False) -> dict:
        now = self._clock()
        ret: dict = {}
        deleted, gone, freed = [], [], []
        for key in keys:
            entry = self._objects.get(key)
            if entry is None and key not in self._staging:
                ret[key] = L1Error.KEY_NOT_EXIST
                continue
            self._reclaim_staging(key, force, now)
            if key in self._staging:
                ret[key] = L1Error.KEY_IS_LOCKED
                continue
            if entry is None:
                ret[key] = L1Error.SUCCESS
                gone.append(key)
                continue
            if entry.read_lock.is_locked(now) and not force:
                ret[key] = L1Error.KEY_IS_LOCKED
                continue
            del self._objects[key]
            freed.append(entry)
            ret[key] = L1Error.SUCCESS
            deleted.append(key)
        self._free(freed)
        self._tell("on_l1_keys_deleted_by_manager", deleted)
        if gone:
            self._tell("on_l1_keys_deleted_by_manager", gone)
        return ret

    @_synchronized
    def finish_write_and_delete(self, keys: Sequence[Hashable], tag: str = "") -> dict:
        now = self._clock()
        ret: dict = {}
        discarded, gone = [], []
        for key in keys:
            err, entry = self._take_staging(key, tag, now)
            ret[key] = err
            if entry is None:
                continue
            discarded.append(entry)
            if key not in self._objects and key not in self._staging:
                gone.append(key)
        self._free(discarded)
        if gone:
            self._tell("on_l1_keys_deleted_by_manager", gone)
        return ret

    def touch_keys(self, keys: Sequence[Hashable]) -> None:
        self._tell("on_l1_keys_accessed", list(keys))

    @_synchronized
    def clear(self, force: bool = False) -> None:
        now = self._clock()
        if force:
            keys = list(self._objects)
            self._free(self._objects.values())
            self._objects.clear()
            self._tell("on_l1_keys_deleted_by_manager", keys)
            cleared = set(keys)
            staged_only = [key for key in self._staging if key not in cleared]
            for key in list(self._staging):
                self._reclaim_staging(key, True, now)
            if staged_only:
                self._tell("on_l1_keys_deleted_by_manager", staged_only)
            return
        keys = [key for key, entry in self._objects.items() if not entry.read_lock.is_locked(now)]
        freed = [self._objects.pop(key) for key in keys]
        if keys:
            self._free(freed)
            self._tell("on_l1_keys_deleted_by_manager", keys)
        gone = []
        for key in list(self._staging):
            if self._reclaim_staging(key, False, now) and key not in self._staging and key not in self._objects:
                gone.append(key)
        if gone:
            self._tell("on_l1_keys_deleted_by_manager", gone)

    # -- inspection -----------------------------------------------------------
    def is_key_evictable(self, key: Hashable) -> bool:
        now = self._clock()
        entry = self._objects.get(key)
        if entry is not None and not entry.read_lock.is_locked(now):
            return True
        per_tag = self._staging.get(key)
        return per_tag is not None and any(not s.write_lock.is_locked(now) for s in list(per_tag.values()))

    @_synchronized
    def used(self) -> int:
        """Objects held, resident and staged."""
        return self._used

    @_synchronized
    def state_of(self, key: Hashable) -> dict:
        """What the model knows of a key, for the tests: resident or not, its
        read count while locked (0 when not), temporary, and its staging
        tags with whether each is still write-locked."""
        now = self._clock()
        entry = self._objects.get(key)
        per_tag = self._staging.get(key, {})
        return {
            "resident": entry is not None,
            "read_locks": entry.read_lock.count if entry is not None and entry.read_lock.is_locked(now) else 0,
            "temporary": entry.is_temporary if entry is not None else None,
            "staged": {tag: staged.write_lock.is_locked(now) for tag, staged in per_tag.items()},
        }
