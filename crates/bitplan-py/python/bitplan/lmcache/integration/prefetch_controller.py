"""LMCache's prefetch controller with its per-key work in bitplan.

:class:`BitplanPrefetchController` subclasses LMCache 0.5.6's
``PrefetchController`` (``storage_controllers/prefetch_controller.py``)
and keeps its threads, its event loop, its adapters' task protocol, its
phases and its results. What changes is how each phase touches the keys:

* a request's keys are resolved once per L1 manager
  (:meth:`BitplanL1Manager.request_keys`), and every L1 call of a phase
  (lock, release, reserve, admit, discard) is one native call over a
  ``Bitmap2D`` of cells, where LMCache builds a list of keys, gets a dict
  back and loops over it in Python;
* the flat answers of the L2 adapters are deposited into the request's
  grid natively (LMCache sets one bit per key), and key lists are gathered
  natively, only for the calls that take keys (the adapters' ``submit_*``,
  the policy's retention, the listeners);
* LMCache's TODO in ``_start_lookup_phase`` is taken: the L2 adapters are
  asked only about the cells no L1 manager locked (LMCache asks about all
  and unlocks the rest right after planning: the L1 wins every cell it
  holds, so the plan and the result are the same), and a request that L1
  serves whole asks no adapter. The P2P adapter, which forwards the keys
  to another server as a grid, is still asked about every key.

The stock controller runs when any L1 manager is not bitplan's (a
``StorageManager`` given its managers): the switch's replacement makes
LMCache's own class then.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from lmcache.v1.distributed.api import PrefetchLockMode, PrefetchResult
from lmcache.v1.distributed.bitmap_ops.fold import all_grouped
from lmcache.v1.distributed.storage_controllers import prefetch_controller as _pc
from lmcache.v1.mp_observability.event import Event, EventType

from bitplan.lmcache.bitmap_ops import fold_unfold_grouped
from bitplan.lmcache.grids import Bitmap2D, MapState
from bitplan.lmcache.integration.l1_manager import BitplanL1Manager
from bitplan.lmcache.integration.policies import DefaultPrefetchPolicy, RetainPrefetchPolicy, merged_or_zeros
from bitplan.lmcache.integration.requests import PrefetchKeyState, build_request
from bitplan.lmcache.native import Bitmap

logger = _pc.logger
_write_tag = _pc._get_prefetch_write_tag

#: Retention answers that need no key list: the policy's class -> the flag.
_CONSTANT_RETENTION = {
    DefaultPrefetchPolicy.plan_l1_retention: False,
    RetainPrefetchPolicy.plan_l1_retention: True,
}


def _p2p_adapter_type() -> type | None:
    try:
        from lmcache.v1.distributed.l2_adapters.p2p_l2_adapter import P2PL2Adapter
    except Exception:  # noqa: BLE001 - its optional dependencies may be missing
        return None
    return P2PL2Adapter


def _ours(bitmap: Any) -> Any:
    """An adapter's answer as bitplan's bitmap (an adapter bitplan did not
    reach answers with LMCache's)."""
    if isinstance(bitmap, Bitmap):
        return bitmap
    return Bitmap(len(bitmap), bitmap.get_indices_list())


class _Keys:
    """A request's keys as bitplan holds them: per L1 manager its resolved
    handle, and the keys by row for gathering."""

    __slots__ = ("by_l1", "by_row", "lookup")

    def __init__(self, by_row: list) -> None:
        self.by_l1: dict[int, Any] = {}
        self.by_row = by_row
        # Adapter index -> the cells it was asked about (None: all).
        self.lookup: dict[int, Any] = {}


class BitplanPrefetchController(_pc.PrefetchController):
    """LMCache's ``PrefetchController`` with its per-key loops native (see
    the module docs). Built with L1 managers that are not all
    :class:`BitplanL1Manager`, it is LMCache's own class."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        managers = kwargs.get("l1_managers", args[0] if args else ())
        if all(isinstance(manager, BitplanL1Manager) for manager in managers):
            return super().__new__(cls)
        stock = _pc.PrefetchController.__new__(_pc.PrefetchController)
        stock.__init__(*args, **kwargs)
        return stock

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._p2p_type = _p2p_adapter_type()

    # -- helpers ------------------------------------------------------------

    @staticmethod
    def _keys(request: Any) -> _Keys:
        keys = getattr(request, "_bitplan", None)
        if keys is None:
            keys = _Keys([group.keys for group in request.key_groups])
            request._bitplan = keys
        return keys

    def _gather(self, request: Any, cells: Any) -> list:
        return cells.gather_rows(self._keys(request).by_row)

    def _release_keys(self, request: Any) -> None:
        keys = getattr(request, "_bitplan", None)
        if keys is None:
            return
        for l1_idx, handle in keys.by_l1.items():
            self._l1_managers[l1_idx].release_keys(handle)
        keys.by_l1.clear()

    def _handle(self, request: Any, l1_idx: int) -> Any:
        return self._keys(request).by_l1[l1_idx]

    # -- lookup phase -------------------------------------------------------

    def _start_lookup_phase(self, request_id: int, spec: Any) -> None:
        request = build_request(request_id, spec)
        self._in_flight_requests[request_id] = request
        self._lock_l1_keys(request)

        active_adapters = {
            adapter_idx: adapter
            for adapter_idx, adapter in self._l2_adapters.items()
            if adapter_idx not in self._draining
        }
        keys = self._keys(request)
        flattened_keys = request.get_flattened_keys()
        missing = None
        if active_adapters:
            held = request.key_states.l1_locked_keys.merge()
            missing = held.ones_like() - held if len(held) > 0 else None
        if missing is not None and missing.popcount() == 0 and not self._any_p2p(active_adapters):
            # L1 holds every cell: no adapter can add one.
            active_adapters = {}
        if not active_adapters:
            self._plan_load(request, {})
            self._finish_request(request)
            self._retire_request(request)
            return

        missing_keys = None if missing is None else self._gather(request, missing)
        for adapter_idx, adapter in active_adapters.items():
            if missing is None or (self._p2p_type is not None and isinstance(adapter, self._p2p_type)):
                task_id = adapter.submit_lookup_and_lock_task(flattened_keys, spec.group_layout_descs)
                keys.lookup[adapter_idx] = None
            else:
                task_id = adapter.submit_lookup_and_lock_task(missing_keys, spec.group_layout_descs)
                keys.lookup[adapter_idx] = missing
            request.inflight_lookup_tasks[adapter_idx] = task_id

        if self._event_bus.enabled:
            self._event_bus.publish(
                Event(
                    event_type=EventType.L2_PREFETCH_LOOKUP_SUBMITTED,
                    metadata={
                        "request_id": request_id,
                        "key_count": len(flattened_keys),
                        "adapter_count": len(request.inflight_lookup_tasks),
                        "key_count_per_salt": Counter(k.cache_salt for k in flattened_keys),
                    },
                )
            )

    def _any_p2p(self, adapters: dict) -> bool:
        return self._p2p_type is not None and any(isinstance(a, self._p2p_type) for a in adapters.values())

    def _lock_l1_keys(self, request: Any) -> None:
        keys = self._keys(request)
        flattened_keys = request.get_flattened_keys()
        num_rows = len(request.key_groups)
        completed = False
        try:
            for l1_idx, l1_manager in self._l1_managers.items():
                handle = l1_manager.request_keys(flattened_keys, num_rows)
                keys.by_l1[l1_idx] = handle
                request.key_states.l1_locked_keys[l1_idx] = l1_manager.reserve_read_cells(
                    handle, request.num_kv_readers
                )
            completed = True
        finally:
            if not completed:
                self._release_all_locks(request)

    def _plan_load(self, request: Any, active_l2_descs: dict) -> Any:
        states = request.key_states
        load_plan = self._policy.plan_load(
            key_groups=request.key_groups,
            l1_locked_keys=states.l1_locked_keys,
            l2_locked_keys=states.l2_locked_keys,
            l1_manager_descs=self._l1_manager_descriptors,
            l2_adapter_descs=active_l2_descs,
            fetching_policy=request.fetching_policy,
        )
        l1_dropped = states.l1_locked_keys - load_plan.l1_planned_keys
        l2_dropped = states.l2_locked_keys - load_plan.l2_planned_keys
        for l1_idx, cells in l1_dropped.items():
            self._l1_managers[l1_idx].finish_read_cells(
                self._handle(request, l1_idx), request.num_kv_readers, cells
            )
        for l2_idx, cells in l2_dropped.items():
            keys = self._gather(request, cells)
            if keys:
                self._l2_adapters[l2_idx].submit_unlock(keys)
        states.l1_locked_keys = load_plan.l1_planned_keys.copy()
        states.l2_locked_keys = load_plan.l2_planned_keys.copy()
        return l2_dropped

    def _poll_lookup_results(self, request: Any, signaled_adapters: set) -> None:
        num_rows = len(request.key_groups)
        lookup = self._keys(request).lookup
        for adapter_idx in list(request.inflight_lookup_tasks):
            if adapter_idx not in signaled_adapters:
                continue
            task_id = request.inflight_lookup_tasks[adapter_idx]
            result = self._l2_adapters[adapter_idx].query_lookup_and_lock_result(task_id)
            if result is None:
                continue
            asked = lookup.get(adapter_idx)
            result = _ours(result)
            if asked is None:
                num_cols = len(request.key_groups[0].keys)
                if len(result) != num_rows * num_cols:
                    raise ValueError(
                        "Length of local_bitmap does not match the total number of bits in the global bitmap"
                    )
                found = Bitmap2D.from_flat(result, num_rows, order="row")
            else:
                found = asked.deposit(result)
            request.key_states.l2_locked_keys[adapter_idx] = found
            if request.fetching_policy == "full":
                if request.l2_found_cells is None:
                    request.l2_found_cells = found.copy()
                else:
                    request.l2_found_cells += found
            del request.inflight_lookup_tasks[adapter_idx]

    # -- load phase ---------------------------------------------------------

    def _transition_to_load_phase(self, request: Any) -> None:
        states = request.key_states
        active_l2_descs = {
            l2_idx: desc for l2_idx, desc in self._adapter_descriptors.items() if l2_idx not in self._draining
        }
        self._plan_load(request, active_l2_descs)

        tag = _write_tag(request.request_id)
        l1_reserved_keys = MapState()
        num_failed_reservations = 0
        cells_by_l1, temporary_by_l1 = self._build_l1_allocation_plans(request)
        for l1_idx, cells in cells_by_l1.items():
            success, failed = self._reserve_l1_cells(request, l1_idx, cells, temporary_by_l1[l1_idx], tag)
            l1_reserved_keys[l1_idx] = success
            num_failed_reservations += failed

        if request.fetching_policy == "full" and num_failed_reservations > 0:
            merged = l1_reserved_keys.merge()
            if len(merged) > 0:
                kept = Bitmap2D(all_grouped(merged.to_list()))
                for l1_idx, grid in l1_reserved_keys.items():
                    self._l1_managers[l1_idx].finish_write_and_delete_cells(
                        self._handle(request, l1_idx), grid - kept, tag
                    )
                    l1_reserved_keys[l1_idx] = grid & kept
        states.l1_reserved_keys = l1_reserved_keys

        if num_failed_reservations > 0:
            l2_locked_keys_new = MapState()
            for l2_idx, grid in states.l2_locked_keys.items():
                l1_idx = self._get_l2_affinity_manager(l2_idx)
                l2_locked_keys_new[l2_idx] = grid & l1_reserved_keys[l1_idx]
            l2_keys_to_unlock = states.l2_locked_keys - l2_locked_keys_new
            for l2_idx, grid in l2_keys_to_unlock.items():
                keys = self._gather(request, grid)
                if keys:
                    self._l2_adapters[l2_idx].submit_unlock(keys)
            states.l2_locked_keys = l2_locked_keys_new

            l2_dropped = self._plan_load(request, active_l2_descs)
            for l2_idx, grid in l2_dropped.items():
                if grid.popcount() == 0:
                    continue
                l1_idx = self._get_l2_affinity_manager(l2_idx)
                self._l1_managers[l1_idx].finish_write_and_delete_cells(self._handle(request, l1_idx), grid, tag)
                states.l1_reserved_keys[l1_idx] -= grid

        self._submit_load_tasks(request, {})

    def _build_l1_allocation_plans(self, request: Any) -> tuple[dict, dict]:
        """Per L1 manager: the cells to reserve, and those of them that are
        temporary (not retained after the read)."""
        cells_by_l1: dict[int, Any] = {}
        temporary_by_l1: dict[int, Any] = {}
        retention_method = getattr(type(self._policy), "plan_l1_retention", None)
        constant = _CONSTANT_RETENTION.get(retention_method)
        for l2_idx, planned in request.key_states.l2_locked_keys.items():
            l1_idx = self._get_l2_affinity_manager(l2_idx)
            if request.lock_mode == PrefetchLockMode.NO_LOCK or constant is True:
                temporary = planned.zeros_like()
            elif constant is False:
                temporary = planned.copy()
            else:
                keys = self._gather(request, planned)
                retention = self._policy.plan_l1_retention(
                    keys, self._l1_manager_descriptors[l1_idx], self._adapter_descriptors[l2_idx]
                )
                if len(retention) != len(keys):
                    raise ValueError(f"plan_l1_retention: {len(retention)} flags for {len(keys)} keys")
                temporary = planned.deposit(Bitmap(len(keys), [i for i, keep in enumerate(retention) if not keep]))
            if l1_idx in cells_by_l1:
                cells_by_l1[l1_idx] += planned
                temporary_by_l1[l1_idx] += temporary
            else:
                cells_by_l1[l1_idx] = planned.copy()
                temporary_by_l1[l1_idx] = temporary
        return cells_by_l1, temporary_by_l1

    def _reserve_l1_cells(self, request: Any, l1_idx: int, cells: Any, temporary: Any, tag: str) -> tuple[Any, int]:
        """LMCache's ``_reserve_l1_cells``: one ``reserve_write`` per row (the
        row's layout), and its events; the grid of reserved cells and how
        many failed."""
        want_keys = self._event_bus.enabled
        layouts = [group.layout_desc for group in request.key_groups]
        success, failed_count, oom_count, oom_keys, contended_keys = self._l1_managers[l1_idx].reserve_write_cells(
            self._handle(request, l1_idx), cells, temporary, layouts, tag, want_keys
        )
        if oom_count:
            logger.warning(
                "%s: %d L1 reservations failed with out-of-memory; L1 may be under memory pressure", tag, oom_count
            )
            if want_keys:
                self._event_bus.publish(
                    Event(event_type=EventType.L2_PREFETCH_FAILED, metadata={"reason": "l1_oom", "keys": oom_keys})
                )
        if contended_keys:
            self._event_bus.publish(
                Event(
                    event_type=EventType.L2_PREFETCH_FAILED,
                    metadata={"reason": "l1_contended", "keys": contended_keys},
                )
            )
        return success, failed_count

    def _submit_load_tasks(self, request: Any, reserved_objs: dict) -> None:
        tag = _write_tag(request.request_id)
        plan_key_count = 0
        per_salt: Counter = Counter()
        for l2_idx, cells in request.key_states.l2_locked_keys.items():
            keys = self._gather(request, cells)
            if not keys:
                continue
            l1_idx = self._get_l2_affinity_manager(l2_idx)
            objects = self._l1_managers[l1_idx].staged_objects(self._handle(request, l1_idx), cells, tag)
            task_id = self._l2_adapters[l2_idx].submit_load_task(keys, objects)
            request.inflight_load_tasks[l2_idx] = task_id
            plan_key_count += len(keys)
            total_bytes = sum(obj.get_size() for obj in objects)
            request.load_bytes_by_adapter[l2_idx] = total_bytes
            if self._event_bus.enabled:
                per_salt.update(k.cache_salt for k in keys)
                self._event_bus.publish(
                    Event(
                        event_type=EventType.L2_LOAD_TASK_SUBMITTED,
                        metadata={
                            "request_id": request.request_id,
                            "adapter_index": l2_idx,
                            "task_id": task_id,
                            "l2_name": self._adapter_descriptors[l2_idx].type_name,
                            "key_count": len(keys),
                            "total_bytes": total_bytes,
                        },
                    )
                )
        if not plan_key_count:
            return
        if self._event_bus.enabled:
            self._event_bus.publish(
                Event(
                    event_type=EventType.L2_PREFETCH_LOAD_SUBMITTED,
                    metadata={
                        "request_id": request.request_id,
                        "key_count": plan_key_count,
                        "adapter_count": len(request.inflight_load_tasks),
                        "key_count_per_salt": per_salt,
                    },
                )
            )

    def _poll_load_results(self, request: Any, signaled_adapters: set) -> None:
        states = request.key_states
        tag = _write_tag(request.request_id)
        for adapter_idx in list(request.inflight_load_tasks):
            if adapter_idx not in signaled_adapters:
                continue
            task_id = request.inflight_load_tasks[adapter_idx]
            result = self._l2_adapters[adapter_idx].query_load_result(task_id)
            if result is None:
                continue
            planned = states.l2_locked_keys[adapter_idx]
            loaded = planned.deposit(_ours(result))
            failed = planned - loaded
            l1_idx = self._get_l2_affinity_manager(adapter_idx)
            l1_manager = self._l1_managers[l1_idx]
            handle = self._handle(request, l1_idx)
            l1_manager.finish_write_and_reserve_read_cells(handle, loaded, request.num_kv_readers, tag)
            l1_manager.finish_write_and_delete_cells(handle, failed, tag)
            self._l2_adapters[adapter_idx].submit_unlock(self._gather(request, planned))

            if l1_idx in states.l1_locked_keys:
                states.l1_locked_keys[l1_idx] += loaded
            else:
                states.l1_locked_keys[l1_idx] = loaded
            if len(request.l2_loaded_cells) == 0:
                request.l2_loaded_cells = loaded.copy()
            else:
                request.l2_loaded_cells += loaded
            states.l1_reserved_keys[l1_idx] -= planned
            del states.l2_locked_keys[adapter_idx]
            del request.inflight_load_tasks[adapter_idx]
            request.load_bytes_by_adapter.pop(adapter_idx, None)

            if self._event_bus.enabled:
                self._publish_load_done(request, adapter_idx, task_id, loaded, failed)

    def _publish_load_done(self, request: Any, adapter_idx: int, task_id: int, loaded: Any, failed: Any) -> None:
        loaded_keys = self._gather(request, loaded)
        failed_keys = self._gather(request, failed)
        self._event_bus.publish(
            Event(
                event_type=EventType.L2_LOAD_TASK_COMPLETED,
                metadata={
                    "request_id": request.request_id,
                    "adapter_index": adapter_idx,
                    "task_id": task_id,
                    "l2_name": self._adapter_descriptors[adapter_idx].type_name,
                },
            )
        )
        self._event_bus.publish(
            Event(
                event_type=EventType.L2_PREFETCH_LOAD_COMPLETED,
                metadata={
                    "request_id": request.request_id,
                    "loaded_count": len(loaded_keys),
                    "failed_count": len(failed_keys),
                    "key_count_per_salt": Counter(k.cache_salt for k in loaded_keys),
                },
            )
        )
        if failed_keys:
            self._event_bus.publish(
                Event(event_type=EventType.L2_PREFETCH_FAILED, metadata={"reason": "not_found", "keys": failed_keys})
            )

    # -- completion ---------------------------------------------------------

    def _finish_request(self, request: Any) -> None:
        states = request.key_states
        num_rows, num_cols = len(request.key_groups), len(request.key_groups[0].keys)
        found = merged_or_zeros(states.l1_locked_keys, num_rows, num_cols)

        if request.fetching_policy == "prefix":
            windows = [group.sliding_window_size for group in request.key_groups]
            _hit_length, retain = fold_unfold_grouped(found, windows)
            hit_cells = retain & found
        elif request.fetching_policy == "full":
            hit_cells = Bitmap2D(all_grouped(found.to_list()))
        else:
            hit_cells = found

        lock = request.lock_mode == PrefetchLockMode.LOCK
        owners: dict = {}
        for l1_idx, locked in states.l1_locked_keys.items():
            l1_manager = self._l1_managers[l1_idx]
            release = locked - hit_cells if lock else locked
            l1_manager.finish_read_cells(self._handle(request, l1_idx), request.num_kv_readers, release)
            hit_keys = self._gather(request, locked & hit_cells)
            if hit_keys:
                l1_manager.touch_keys(hit_keys)
                if lock:
                    owners.update(dict.fromkeys(hit_keys, l1_manager.l1_manager_id))

        if len(request.l2_loaded_cells) > 0:
            l2_hit_cells = hit_cells & request.l2_loaded_cells
        else:
            l2_hit_cells = hit_cells.zeros_like()
        l1_hit_cells = hit_cells - l2_hit_cells

        found_cells = None
        if request.fetching_policy == "full":
            found_cells = found
            if request.l2_found_cells is not None:
                found_cells = found_cells + request.l2_found_cells

        self._release_keys(request)
        self._publish_result(
            request,
            PrefetchResult(
                hit_cells=hit_cells.to_list(),
                l1_hit_cells=l1_hit_cells.to_list(),
                l2_hit_cells=l2_hit_cells.to_list(),
                found_cells=None if found_cells is None else found_cells.to_list(),
                l1_owners=owners,
            ),
        )

    def _retire_request(self, request: Any) -> None:
        self._release_keys(request)
        super()._retire_request(request)

    def _release_all_locks(self, request: Any) -> None:
        states = request.key_states
        tag = _write_tag(request.request_id)
        for l2_idx, cells in states.l2_locked_keys.items():
            keys = self._gather(request, cells)
            if keys and l2_idx in self._l2_adapters:
                self._l2_adapters[l2_idx].submit_unlock(keys)
        by_l1 = self._keys(request).by_l1
        for l1_idx, cells in states.l1_reserved_keys.items():
            if l1_idx in by_l1:
                self._l1_managers[l1_idx].finish_write_and_delete_cells(by_l1[l1_idx], cells, tag)
        for l1_idx, cells in states.l1_locked_keys.items():
            if l1_idx in by_l1:
                self._l1_managers[l1_idx].finish_read_cells(by_l1[l1_idx], request.num_kv_readers, cells)
        request.key_states = PrefetchKeyState()
        self._release_keys(request)


__all__ = ["BitplanPrefetchController"]
