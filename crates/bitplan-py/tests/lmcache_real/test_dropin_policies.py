"""bitplan's prefetch policies against the release's own (issue #37, item
2): on random lookups (several L1 managers and L2 adapters, hybrid windows,
``prefix`` and ``full``), ``default`` and ``retain`` plan exactly what
LMCache 0.5.6's classes plan; bitplan's ``balanced``, which LMCache does not
have, plans L1 as ``default`` does and the same L2 cells, each from one
adapter that holds it, shared out by weight."""

from __future__ import annotations

from types import SimpleNamespace

import torch
from hypothesis import given
from hypothesis import strategies as st
from lmcache.lmcache_native import Bitmap as LmBitmap
from lmcache.v1.distributed.api import GroupedObjectKeys, MemoryLayoutDesc, ObjectKey
from lmcache.v1.distributed.storage_controllers import prefetch_policy as lm_policy
from lmcache.v1.distributed.storage_controllers.utils import Bitmap2D as LmBitmap2D
from lmcache.v1.distributed.storage_controllers.utils import MapState as LmMapState

from bitplan.lmcache.grids import Bitmap2D, MapState
from bitplan.lmcache.integration import policies as ours
from bitplan.lmcache.native import Bitmap

LAYOUT = MemoryLayoutDesc(shapes=[torch.Size([8])], dtypes=[torch.float16])


@st.composite
def lookups(draw):
    """A request's shape and windows, and each tier's locked cells (as
    sets of (row, col)), with every L1 manager and adapter described."""
    rows = draw(st.integers(1, 5))
    cols = draw(st.integers(1, 24))
    windows = draw(st.lists(st.sampled_from([-1, -1, -1, 1, 2, 5]), min_size=rows, max_size=rows))
    # A tier holds a prefix of each row (what caches hold) and a few cells
    # past it, so that prefix fetching has something to serve.
    cell = st.tuples(st.integers(0, rows - 1), st.integers(0, cols - 1))
    cells = st.builds(
        lambda prefixes, extra: {(r, c) for r, n in enumerate(prefixes) for c in range(n)} | extra,
        st.lists(st.integers(0, cols), min_size=rows, max_size=rows),
        st.sets(cell, max_size=cols),
    )
    l1 = draw(st.dictionaries(st.integers(0, 2), cells, max_size=2))
    l2 = draw(st.dictionaries(st.integers(0, 3), cells, max_size=3))
    policy = draw(st.sampled_from(["prefix", "prefix", "full"]))
    return rows, cols, windows, l1, l2, policy


def key_groups(rows: int, cols: int, windows: list[int]) -> list:
    return [
        GroupedObjectKeys(
            keys=[ObjectKey(ObjectKey.IntHash2Bytes(j), "m", row) for j in range(cols)],
            object_group_id=row,
            layout_desc=LAYOUT,
            sliding_window_size=windows[row],
        )
        for row in range(rows)
    ]


def grid(bitmap, bitmap2d, rows: int, cols: int, cells: set) -> object:
    built = []
    for row in range(rows):
        bits = bitmap(cols)
        for r, c in cells:
            if r == row:
                bits.set(c)
        built.append(bits)
    return bitmap2d(built)


def state(mapstate, bitmap, bitmap2d, rows: int, cols: int, tiers: dict) -> object:
    out = mapstate()
    for index, cells in tiers.items():
        out[index] = grid(bitmap, bitmap2d, rows, cols, cells)
    return out


def cells_of(plan_state) -> dict[int, set]:
    return {
        index: {(row, col) for row, bits in enumerate(g.to_list()) for col in bits.get_indices_list()}
        for index, g in plan_state.items()
    }


def plans(policy_ours, policy_lmcache, lookup, weights=None):
    """Each policy's plan of ``lookup``, over its own grids: the cells of
    its L1 plan and of its L2 plan, by index (bitplan's first)."""
    rows, cols, windows, l1, l2, fetching = lookup
    groups = key_groups(rows, cols, windows)
    l1_descs = {index: SimpleNamespace() for index in l1}
    l2_descs = {index: SimpleNamespace(config=SimpleNamespace(weight=(weights or {}).get(index))) for index in l2}

    def planned(policy, mapstate, bitmap, bitmap2d):
        plan = policy.plan_load(
            groups,
            state(mapstate, bitmap, bitmap2d, rows, cols, l1),
            state(mapstate, bitmap, bitmap2d, rows, cols, l2),
            l1_descs,
            l2_descs,
            fetching,
        )
        return cells_of(plan.l1_planned_keys), cells_of(plan.l2_planned_keys)

    return planned(policy_ours, MapState, Bitmap, Bitmap2D), planned(policy_lmcache, LmMapState, LmBitmap, LmBitmap2D)


@given(lookups())
def test_default_plans_what_lmcache_plans(lookup):
    mine, theirs = plans(ours.DefaultPrefetchPolicy(), lm_policy.DefaultPrefetchPolicy(), lookup)
    assert mine == theirs


@given(lookups())
def test_retain_plans_what_lmcache_plans(lookup):
    mine, theirs = plans(ours.RetainPrefetchPolicy(), lm_policy.RetainPrefetchPolicy(), lookup)
    assert mine == theirs
    keys = [ObjectKey(ObjectKey.IntHash2Bytes(j), "m", 0) for j in range(3)]
    assert ours.RetainPrefetchPolicy().plan_l1_retention(keys, None, None) == [True] * 3
    assert ours.DefaultPrefetchPolicy().plan_l1_retention(keys, None, None) == [False] * 3


@given(lookups(), st.dictionaries(st.integers(0, 3), st.sampled_from([0.5, 1.0, 2.0, 3.0])))
def test_balanced_serves_what_default_serves_once(lookup, weights):
    (l1_plan, l2_plan), (l1_default, l2_default) = plans(
        ours.BalancedPrefetchPolicy(), lm_policy.DefaultPrefetchPolicy(), lookup, weights
    )
    _rows, _cols, _windows, _l1, l2, _fetching = lookup
    assert l1_plan == l1_default
    served = [cell for cells in l2_plan.values() for cell in cells]
    assert len(served) == len(set(served)), "a cell planned from two adapters"
    assert set(served) == set().union(*l2_default.values())
    for index, cells in l2_plan.items():
        assert cells and cells <= l2[index]


@given(st.integers(1, 4), st.integers(1, 40), st.integers(2, 4))
def test_balanced_shares_replicated_cells_out_evenly(rows, cols, adapters):
    everything = {(row, col) for row in range(rows) for col in range(cols)}
    lookup = (rows, cols, [-1] * rows, {}, {index: everything for index in range(adapters)}, "full")
    (_l1, l2_plan), _default = plans(ours.BalancedPrefetchPolicy(), lm_policy.DefaultPrefetchPolicy(), lookup)
    loads = [len(l2_plan.get(index, ())) for index in range(adapters)]
    assert sum(loads) == rows * cols
    assert max(loads) - min(loads) <= 1, loads
