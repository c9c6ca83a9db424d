"""bitplan's prefetch policies in LMCache's registry: ``default`` and
``retain`` (LMCache's own rules, planned natively) and ``balanced``.

They subclass LMCache's ``PrefetchPolicy`` and answer with its
``PrefetchPlan``, over bitplan's ``Bitmap2D``/``MapState``. The rules are
those of ``DefaultPrefetchPolicy.plan_load`` in LMCache 0.5.6
(``storage_controllers/prefetch_policy.py``): the cells every index of
either map locked are *found*; ``"prefix"`` keeps the cells of the longest
prefix every row can serve under its window, ``"full"`` keeps every found
cell and refuses sliding windows; the kept cells then go to the L1
managers, then to the L2 adapters, each in index order, first come first
served, but only to indices that have a descriptor. Bad input gives an
empty plan and an error log line, never an exception.
"""

from __future__ import annotations

from typing import Any

from lmcache.v1.distributed.storage_controllers.prefetch_policy import (
    PrefetchPlan,
    PrefetchPolicy,
)
from lmcache.v1.distributed.storage_controllers.prefetch_policy import (
    logger as _lmcache_logger,
)

from bitplan import AdapterDescriptor, _native
from bitplan import BalancedPrefetchPolicy as _Balanced
from bitplan.lmcache.bitmap_ops import FULL_ATTENTION_WINDOW, fold_unfold_grouped
from bitplan.lmcache.grids import Bitmap2D, MapState

_lm = _native.lmcache
#: LMCache's own logger: a refused plan is logged as LMCache logs it.
logger = _lmcache_logger

def _empty() -> PrefetchPlan:
    return PrefetchPlan(MapState(), MapState())


def _all_described(locked: Any, descs: Any) -> bool:
    return all(index in descs for index, _ in locked.items())


def merged_or_zeros(state: Any, rows: int, cols: int) -> Any:
    """The union of a map's grids, or an empty grid of the request's shape
    for an empty map (LMCache's ``merge()`` then its zeros fallback)."""
    merged = state.merge()
    return merged if len(merged) > 0 else Bitmap2D.zeros(rows, cols)


def _needed(key_groups: Any, l1_locked: Any, l2_locked: Any, fetching_policy: str) -> Any:
    """The cells the plan serves (LMCache's steps before the tiers), or
    None for an empty plan (logged)."""
    if not key_groups:
        logger.error("plan_load: request has no key groups")
        return None
    windows = [group.sliding_window_size for group in key_groups]
    shape = (len(key_groups), len(key_groups[0].keys))
    l1_found = merged_or_zeros(l1_locked, *shape)
    l2_found = merged_or_zeros(l2_locked, *shape)
    if l1_found.size() != shape or l2_found.size() != shape:
        logger.error("plan_load: locked-key layout does not match key groups")
        return None
    found = l1_found + l2_found
    if fetching_policy == "full":
        if any(w > FULL_ATTENTION_WINDOW for w in windows):
            logger.error(
                "plan_load: 'full' fetching does not support sliding-window key groups (windows=%s)", windows
            )
            return None
        return found
    try:
        _hit, retain = fold_unfold_grouped(found, windows)
    except ValueError:
        logger.exception("plan_load: prefix fold failed")
        return None
    return retain & found


def _plan_tier(needed: Any, locked: Any, indices: list[int]) -> tuple[Any, Any]:
    """First index wins over ``indices``; an index that adds no cell is
    left out (LMCache's ``_plan_tier``)."""
    plan = MapState()
    remaining = needed
    for index in indices:
        if index not in locked:
            continue
        local = remaining & locked[index]
        if local.popcount() == 0:
            continue
        plan[index] = local
        remaining = remaining - local
    return plan, remaining


class DefaultPrefetchPolicy(PrefetchPolicy):
    """LMCache's ``default`` policy, planned natively: every needed cell
    from the lowest-indexed tier that holds it, L1 before L2; nothing loaded
    from L2 stays in L1."""

    def plan_load(
        self,
        key_groups: Any,
        l1_locked_keys: Any,
        l2_locked_keys: Any,
        l1_manager_descs: Any,
        l2_adapter_descs: Any,
        fetching_policy: Any,
    ) -> PrefetchPlan:
        if key_groups and _all_described(l1_locked_keys, l1_manager_descs) and _all_described(
            l2_locked_keys, l2_adapter_descs
        ):
            # One native call reads the key groups' windows and the maps.
            try:
                l1, l2, _hit = _lm.plan_load_state(
                    key_groups, l1_locked_keys, l2_locked_keys, l1_manager_descs, l2_adapter_descs, fetching_policy
                )
                return PrefetchPlan(l1, l2)
            except (ValueError, TypeError, AttributeError):
                # Refused: the steps below refuse it again, and log why in
                # LMCache's words.
                pass
        # An index without a descriptor (an L2 adapter draining): its cells
        # count as found, but nothing is planned from it.
        needed = _needed(key_groups, l1_locked_keys, l2_locked_keys, fetching_policy)
        if needed is None:
            return _empty()
        l1_plan, needed = _plan_tier(needed, l1_locked_keys, sorted(l1_manager_descs))
        l2_plan, _ = _plan_tier(needed, l2_locked_keys, sorted(l2_adapter_descs))
        return PrefetchPlan(l1_plan, l2_plan)

    def plan_l1_retention(self, keys: list, l1_manager_desc: Any, l2_adapter_desc: Any) -> list[bool]:
        return [False] * len(keys)


class RetainPrefetchPolicy(DefaultPrefetchPolicy):
    """LMCache's ``retain`` policy: ``default``'s plan; every key loaded
    from L2 stays in L1."""

    def plan_l1_retention(self, keys: list, l1_manager_desc: Any, l2_adapter_desc: Any) -> list[bool]:
        return [True] * len(keys)


def adapter_weight(desc: Any) -> float:
    """An L2 adapter's share of replicated cells under ``balanced``: its
    config's ``weight`` attribute when it has one (a plugin adapter's config
    may), else 1."""
    weight = getattr(getattr(desc, "config", None), "weight", None)
    return 1.0 if weight is None else float(weight)


class BalancedPrefetchPolicy(DefaultPrefetchPolicy):
    """bitplan's ``balanced``: L1 as ``default``; a needed cell that several
    L2 adapters hold goes to one of them so that each adapter's load is as
    close as possible to its share by weight (:func:`adapter_weight`), not
    always to the lowest index. Nothing loaded stays in L1."""

    def plan_load(
        self,
        key_groups: Any,
        l1_locked_keys: Any,
        l2_locked_keys: Any,
        l1_manager_descs: Any,
        l2_adapter_descs: Any,
        fetching_policy: Any,
    ) -> PrefetchPlan:
        try:
            needed = _needed(key_groups, l1_locked_keys, l2_locked_keys, fetching_policy)
        except (ValueError, TypeError, AttributeError) as error:
            logger.error("plan_load: %s; returning an empty plan", error)
            return _empty()
        if needed is None:
            return _empty()
        l1_plan, needed = _plan_tier(needed, l1_locked_keys, sorted(l1_manager_descs))
        rows, cols = needed.size()
        indices = [index for index in sorted(l2_adapter_descs) if index in l2_locked_keys]
        if not indices or needed.popcount() == 0:
            return PrefetchPlan(l1_plan, MapState())
        # The cells row-major as one flat key space, for the flat solver
        # (it reads either bitmap class, and from_flat takes its answer).
        lookup = {index: (needed & l2_locked_keys[index]).to_flat(order="row") for index in indices}
        adapters = [AdapterDescriptor(index, weight=adapter_weight(l2_adapter_descs[index])) for index in indices]
        flat_plan = _Balanced().select_load_plan(rows * cols, lookup, adapters)
        l2_plan = MapState()
        for index in indices:
            cells = flat_plan.get(index)
            if cells is None or cells.popcount() == 0:
                continue
            l2_plan[index] = Bitmap2D.from_flat(cells, rows, order="row")
        return PrefetchPlan(l1_plan, l2_plan)


__all__ = ["BalancedPrefetchPolicy", "DefaultPrefetchPolicy", "RetainPrefetchPolicy", "adapter_weight"]
