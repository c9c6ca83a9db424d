"""``L1Manager`` with its books in bitplan: LMCache 0.5.6's L1 lifecycle
(``lmcache/v1/distributed/l1_manager.py``) over the ``tier-state`` crate.

:class:`BitplanL1Manager` subclasses LMCache's ``L1Manager`` and keeps all
of it but the books: the memory manager (LMCache's own allocator, which
still allocates and frees every buffer), the configuration, the gauges,
the listeners and the event bus. What LMCache keeps in two dicts of
per-key objects with two ``TTLLock``\\ s each (the resident objects, and
the staging objects per writer tag) lives in :class:`L1Books`: a key table
that maps each key to a dense id once, by its fields for LMCache's
``ObjectKey``, and the tier's state as bitmaps over slots. Every method
answers what LMCache's answers, with the same codes (LMCache's
``L1Error``), objects, listener calls (in the same order, with the same
key lists), event-bus events and memory-manager calls.

The prefetch controller (:mod:`.prefetch_controller`) calls the ``*_cells``
methods: a request's keys are resolved once (:meth:`request_keys`), and
each phase is one native call over a ``Bitmap2D`` of cells, answering with
a grid instead of a dict.

Differences, on purpose: a key given twice in one ``reserve_write`` that
needs a new object gets ``KEY_NOT_WRITABLE`` the second time and its buffer
is freed at once (LMCache stages it twice over and loses the first
buffer); ``get_object_state`` reports a state whose ``TTLLock``\\ s hold
the counts but not the expiry times.
"""

from __future__ import annotations

from typing import Any

from lmcache.lmcache_native import TTLLock
from lmcache.v1.distributed.error import L1Error
from lmcache.v1.distributed.l1_manager import (
    L1Manager,
    L1ObjectState,
    logger,
    validate_read_locks,
)
from lmcache.v1.mp_observability.event import Event, EventType

from bitplan import _native
from bitplan.lmcache.integration.listeners import Listeners

L1Books = _native.lmcache.L1Books


def _sizes(objs: list) -> int:
    return sum(obj.get_size() for obj in objs)


class BitplanL1Manager(L1Manager):
    """LMCache's ``L1Manager`` with bitplan's books (see the module docs)."""

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self._books = L1Books(tuple(L1Error), float(config.read_ttl_seconds), float(config.write_ttl_seconds))
        self._listeners = Listeners(self._registered_listeners)
        # LMCache's ``_staging_bytes``: the sizes of staging objects, each
        # counted at staging and at leaving, as LMCache counts them.
        self._staging_bytes = 0

    # -- events -----------------------------------------------------------

    def _bus(self) -> bool:
        return self._event_bus.enabled

    def _publish(self, event_type: EventType, **metadata: Any) -> None:
        self._event_bus.publish(Event(event_type=event_type, metadata={"l1_tag": self._config.tag, **metadata}))

    def _wants(self, event: str) -> bool:
        return self._bus() or self._listeners.wants(event)

    def _report_read_reserved(self, keys: list | None) -> None:
        self._listeners.emit("on_l1_keys_reserved_read", keys)
        if self._bus():
            self._publish(EventType.L1_READ_RESERVED, keys=keys)

    def _free_and_report_deleted(self, keys: list | None, objs: list) -> None:
        freed_meta = [self._object_meta(obj) for obj in objs] if self._bus() else None
        self._memory_manager.free(objs)
        self._listeners.emit("on_l1_keys_deleted_by_manager", keys)
        if self._bus():
            self._publish(EventType.L1_KEYS_EVICTED, keys=keys, meta=freed_meta)

    def _report_staging_gone(self, keys: list) -> None:
        if keys:
            self._listeners.emit("on_l1_keys_deleted_by_manager", keys)

    def _free_staging(self, objs: list) -> None:
        """Objects that left staging and are freed."""
        if objs:
            self._staging_bytes -= _sizes(objs)
        self._memory_manager.free(objs)

    # -- reads --------------------------------------------------------------

    def reserve_read(self, keys: list, read_locks: int = 1) -> dict:
        total = validate_read_locks(read_locks)
        with self._lock:
            ret, successful = self._books.reserve_read(keys, total, self._wants("on_l1_keys_reserved_read"))
            self._report_read_reserved(successful)
            return ret

    def unsafe_read(self, keys: list) -> dict:
        with self._lock:
            return self._books.unsafe_read(keys)

    def _finished_reads(self, successful: list, freed_keys: list, freed_objs: list, warned: list) -> None:
        """After a ``finish_read`` (under the lock): the warnings, the
        objects of keys deleted once their last reader left back to the
        memory manager, and the listeners and the bus told, in LMCache's
        order."""
        self._warn_finish_read(warned)
        freed_meta = [self._object_meta(obj) for obj in freed_objs] if self._bus() else None
        self._memory_manager.free(freed_objs)
        self._listeners.emit_pairs("on_l1_keys_read_finished", successful, "on_l1_keys_deleted_by_manager", freed_keys)
        if self._bus():
            self._publish(EventType.L1_READ_FINISHED, keys=successful)
            self._publish(EventType.L1_KEYS_EVICTED, keys=freed_keys, meta=freed_meta)

    def finish_read(self, keys: list, read_locks: int = 1) -> dict:
        total = validate_read_locks(read_locks)
        with self._lock:
            ret, successful, freed_keys, freed_objs, warned = self._books.finish_read(
                keys, total, self._wants("on_l1_keys_read_finished")
            )
            self._finished_reads(successful, freed_keys, freed_objs, warned)
            return ret

    def _warn_finish_read(self, warned: list) -> None:
        for key, error in warned:
            logger.warning(
                "L1Manager: finish read on %s key %s, potential inconsistent data might be read",
                "non-existing" if error is L1Error.KEY_NOT_EXIST else "non-read-locked",
                key,
            )

    # -- writes -------------------------------------------------------------

    def _allocate(self, layout_desc: Any, count: int) -> list | None:
        """``count`` new buffers from the memory manager, or None when it
        cannot give them all (a partial allocation is freed at once)."""
        if count == 0:
            return []
        err, allocated = self._memory_manager.allocate(layout_desc, count)
        if err != L1Error.SUCCESS:
            if allocated:
                self._memory_manager.free(allocated)
            return None
        for obj in allocated:
            obj.set_l1_manager(self._l1_manager_id)
        return allocated

    def reserve_write(self, keys: list, is_temporary: list, layout_desc: Any, tag: str = "") -> dict:
        if len(keys) != len(is_temporary):
            raise ValueError(f"L1Manager.reserve_write: {len(keys)} keys but {len(is_temporary)} is_temporary flags")
        with self._lock:
            need = self._books.count_new(keys, tag)
            if need == 0:
                # LMCache returns before reporting when nothing is allocated.
                ret, _, _, _ = self._books.reserve_write(keys, is_temporary, tag, [], False)
                return ret
            allocated = self._allocate(layout_desc, need)
            ret, successful, staged, unused = self._books.reserve_write(
                keys, is_temporary, tag, allocated, self._wants("on_l1_keys_reserved_write")
            )
            self._reserved_writes(staged, unused, [successful], tag)
            return ret

    def finish_write(self, keys: list, tag: str = "") -> dict:
        with self._lock:
            ret, notified, notified_objs, left, discarded, expired = self._books.finish_write(
                keys, tag, self._wants("on_l1_keys_write_finished")
            )
            self._warn_expired("finish write", tag, expired)
            self._staging_bytes -= _sizes(left)
            self._free_staging(discarded)
            if notified:
                self._listeners.emit("on_l1_keys_write_finished", notified)
                if self._bus():
                    meta = [self._object_meta(obj) for obj in notified_objs]
                    self._publish(EventType.L1_WRITE_FINISHED, keys=notified, meta=meta)
            return ret

    def finish_write_and_reserve_read(self, keys: list, read_locks: int = 1, tag: str = "") -> dict:
        total = validate_read_locks(read_locks)
        with self._lock:
            ret, successful, successful_objs, resident_keys, left, discarded, expired = (
                self._books.finish_write_and_reserve_read(
                    keys, total, tag, self._wants("on_l1_keys_finish_write_and_reserve_read")
                )
            )
            self._finished_writes_and_reads(tag, successful, successful_objs, resident_keys, left, discarded, expired)
            return ret

    def _reserved_writes(self, staged: list, unused: list, key_lists: list, tag: str) -> None:
        """After a ``reserve_write`` (under the lock): the staging counted,
        the objects not needed freed, and each list of keys reserved
        reported (one per row for a request's cells, as LMCache reports
        them)."""
        self._staging_bytes += _sizes(staged)
        self._memory_manager.free(unused)
        for keys in key_lists:
            self._listeners.emit("on_l1_keys_reserved_write", keys)
            if self._bus():
                self._publish(EventType.L1_WRITE_RESERVED, keys=keys, tag=tag)

    def _finished_writes_and_reads(
        self,
        tag: str,
        successful: list | None,
        successful_objs: list,
        resident_keys: list,
        left: list,
        discarded: list,
        expired: list,
    ) -> None:
        """After a ``finish_write_and_reserve_read`` (under the lock)."""
        self._warn_expired("finish_write_and_reserve_read", tag, expired)
        self._staging_bytes -= _sizes(left)
        self._free_staging(discarded)
        if resident_keys:
            self._report_read_reserved(resident_keys)
        self._listeners.emit("on_l1_keys_finish_write_and_reserve_read", successful)
        if self._bus():
            meta = [self._object_meta(obj) for obj in successful_objs]
            self._publish(EventType.L1_WRITE_FINISHED_AND_READ_RESERVED, keys=successful, meta=meta)

    def _finished_writes_and_deletes(self, tag: str, gone: list, discarded: list, expired: list) -> None:
        """After a ``finish_write_and_delete`` (under the lock)."""
        self._warn_expired("finish_write_and_delete", tag, expired)
        self._free_staging(discarded)
        self._report_staging_gone(gone)

    def _warn_expired(self, op: str, tag: str, keys: list) -> None:
        for key in keys:
            logger.warning(
                "L1Manager: %s on key %s (tag %r) whose write reservation expired, "
                "potential inconsistent data might be written",
                op,
                key,
                tag,
            )

    def delete(self, keys: list, force: bool = False) -> dict:
        with self._lock:
            ret, successful, freed, gone, reclaimed = self._books.delete(keys, force)
            self._free_staging(reclaimed)
            self._free_and_report_deleted(successful, freed)
            self._report_staging_gone(gone)
            return ret

    def finish_write_and_delete(self, keys: list, tag: str = "") -> dict:
        with self._lock:
            ret, gone, discarded, expired = self._books.finish_write_and_delete(keys, tag)
            self._finished_writes_and_deletes(tag, gone, discarded, expired)
            return ret

    def touch_keys(self, keys: list) -> None:
        self._listeners.emit("on_l1_keys_accessed", keys)
        if self._event_bus.has_subscribers(EventType.L1_KEYS_ACCESSED):
            self._publish(EventType.L1_KEYS_ACCESSED, keys=keys)

    def clear(self, force: bool = False) -> None:
        with self._lock:
            cleared_keys, cleared_objs, gone_keys, reclaimed, locked_count, staging_left = self._books.clear(force)
            if force:
                logger.warning(
                    "L1Manager: force-clearing all %d objects and %d staging objects (including locked ones). "
                    "This may corrupt in-flight store/prefetch operations — use with caution.",
                    len(cleared_keys),
                    len(reclaimed),
                )
                self._free_and_report_deleted(cleared_keys, cleared_objs)
            elif cleared_keys:
                self._free_and_report_deleted(cleared_keys, cleared_objs)
            self._free_staging(reclaimed)
            self._report_staging_gone(gone_keys)
            logger.info(
                "L1Manager: cleared %d objects and %d staging objects, %d locked objects and %d staging objects "
                "remaining.",
                len(cleared_keys),
                len(reclaimed),
                locked_count,
                staging_left,
            )

    def is_key_evictable(self, key: Any) -> bool:
        return self._books.is_key_evictable(key)

    # -- reports ------------------------------------------------------------

    def get_staging_memory_usage(self) -> int:
        with self._lock:
            return self._staging_bytes

    def report_status(self) -> dict:
        with self._lock:
            counts = self._books.counts()
            used, total = self._memory_manager.get_memory_usage()
            capacities = self.get_capacity_bytes_by_backend()
            return {
                "is_healthy": self._memory_manager.memcheck(),
                "total_object_count": counts["resident"] + counts["staging"],
                "write_locked_count": counts["write_locked"],
                "read_locked_count": counts["read_locked"],
                "temporary_count": counts["temporary"],
                "staging_object_count": counts["staging"],
                "staging_bytes": self._staging_bytes,
                "memory_used_bytes": used,
                "memory_total_bytes": total,
                "memory_configured_bytes": sum(capacities.values()),
                "capacity_bytes_by_backend": {backend.value: size for backend, size in capacities.items()},
                "memory_usage_ratio": used / total if total > 0 else 0.0,
                "write_ttl_seconds": self._write_ttl_seconds,
                "read_ttl_seconds": self._read_ttl_seconds,
            }

    def get_object_state(self, key: Any) -> L1ObjectState | None:
        """The resident object's state. Its ``TTLLock``\\ s hold the read
        count and the write lock's state, with fresh expiry times."""
        with self._lock:
            state = self._books.object_state(key)
        if state is None:
            return None
        memory_obj, read_count, is_temporary = state
        read_lock = TTLLock(self._read_ttl_seconds)
        for _ in range(read_count):
            read_lock.lock()
        return L1ObjectState(
            memory_obj=memory_obj,
            write_lock=TTLLock(self._write_ttl_seconds),
            read_lock=read_lock,
            is_temporary=is_temporary,
        )

    def memcheck(self) -> bool:
        with self._lock:
            result = self._memory_manager.memcheck()
            counts = self._books.counts()
            logger.info(
                "L1Manager memcheck: total objects = %d, read-locked = %d, staging = %d (%d bytes)",
                counts["resident"],
                counts["read_locked"],
                counts["staging"],
                self._staging_bytes,
            )
            return result

    def close(self) -> None:
        with self._lock:
            objs = self._books.take_all()
            self._staging_bytes = 0
        # LMCache's close: the GDS context, the memory, the gauges.
        self._objects = {}
        self._staging = {}
        self._memory_manager.free(objs)
        super().close()


    # -- the controller's calls: a request's cells --------------------------

    def request_keys(self, flat_keys: list, num_rows: int) -> Any:
        """The request's keys resolved once (row-major, ``num_rows`` rows),
        held by the books until :meth:`release_keys`."""
        return self._books.request(flat_keys, num_rows)

    def release_keys(self, request: Any) -> None:
        with self._lock:
            self._books.release(request)

    def reserve_read_cells(self, request: Any, read_locks: int, cells: Any = None) -> Any:
        """``reserve_read`` of the request's keys (of ``cells`` only, if
        given): the grid of the keys locked."""
        total = validate_read_locks(read_locks)
        with self._lock:
            locked, successful = self._books.reserve_read_cells(
                request, total, cells, self._wants("on_l1_keys_reserved_read")
            )
            self._report_read_reserved(successful)
            return locked

    def finish_read_cells(self, request: Any, read_locks: int, cells: Any) -> None:
        """``finish_read`` of the keys of ``cells``, if any."""
        total = validate_read_locks(read_locks)
        with self._lock:
            answer = self._books.finish_read_cells(request, total, cells, self._wants("on_l1_keys_read_finished"))
            if answer is None:
                return
            successful, freed_keys, freed_objs, warned = answer
            self._finished_reads(successful, freed_keys, freed_objs, warned)

    def reserve_write_cells(
        self, request: Any, cells: Any, temporary: Any, layouts: list, tag: str, want_failures: bool
    ) -> tuple[Any, int, int, list, list]:
        """LMCache's controller's ``reserve_write`` of each row of ``cells``
        with cells, in row order, each with its row's layout
        (``layouts[row]``) and one allocation, temporary where
        ``temporary`` is set: the grid of the cells reserved, how many
        failed, how many of them for memory, and (with ``want_failures``)
        those keys and the contended ones, for the controller's events.

        The rows are allocated one by one, as LMCache allocates them, and
        then filed in one native call; each row that needed a new object is
        reported to the listeners in row order, as LMCache reports it."""
        with self._lock:
            needs = self._books.count_new_cells(request, cells, tag)
            allocated = [self._allocate(layouts[row], need) for row, need in enumerate(needs)]
            want = self._wants("on_l1_keys_reserved_write")
            success, reported, staged, unused, failed, num_oom, oom, contended = self._books.reserve_write_cells(
                request, cells, temporary, tag, allocated, want, want_failures
            )
            self._reserved_writes(staged, unused, [keys for _row, keys in reported], tag)
            return success, failed, num_oom, oom, contended

    def staged_objects(self, request: Any, cells: Any, tag: str) -> list:
        """The staging objects of ``tag`` for the keys of ``cells``,
        row-major (what a load task fills)."""
        with self._lock:
            return self._books.staged_objects(request, cells, tag)

    def finish_write_and_reserve_read_cells(self, request: Any, cells: Any, read_locks: int, tag: str) -> None:
        total = validate_read_locks(read_locks)
        with self._lock:
            answer = self._books.finish_write_and_reserve_read_cells(
                request, cells, total, tag, self._wants("on_l1_keys_finish_write_and_reserve_read")
            )
            if answer is None:
                return
            successful, successful_objs, resident_keys, left, discarded, expired = answer
            self._finished_writes_and_reads(tag, successful, successful_objs, resident_keys, left, discarded, expired)

    def finish_write_and_delete_cells(self, request: Any, cells: Any, tag: str) -> None:
        with self._lock:
            answer = self._books.finish_write_and_delete_cells(request, cells, tag)
            if answer is None:
                return
            gone, discarded, expired = answer
            self._finished_writes_and_deletes(tag, gone, discarded, expired)


__all__ = ["BitplanL1Manager", "L1Books"]
