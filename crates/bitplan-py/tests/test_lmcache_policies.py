"""``bitplan.lmcache.prefetch_policy``: LMCache's prefetch policies
(lmcache-notes §3): the flat ``select_load_plan`` on the seed's cases and the
registry, the containers ``Bitmap2D`` and ``MapState`` (§3.1), and the grid
``plan_load`` (§3.2), with LMCache's own test cases (notes §4).

The native Bitmap is in test_lmcache_bitmap.py, the bitmap operations in
test_lmcache_bitmap_ops.py."""

import logging
import random

import pytest

import bitplan
from bitplan.lmcache import prefetch_policy
from bitplan.lmcache.native import Bitmap
from bitplan.lmcache.prefetch_policy import (
    AdapterDescriptor,
    Bitmap2D,
    GroupedObjectKeys,
    L1ManagerDescriptor,
    L2AdapterDescriptor,
    MapState,
    PrefetchPlan,
)

from _lmcache_helpers import from_str, lm


# ===========================================================================
# §3 prefetch_policy: v1 select_load_plan (the seed's cases)
# ===========================================================================

SEED_CASES = [
    (3, {0: [0, 1, 2]}, [0], {0: [0, 1, 2]}),
    (4, {0: [0, 2]}, [0], {0: [0, 2]}),
    (3, {0: [0, 1], 1: [1, 2]}, [0, 1], {0: [0, 1], 1: [2]}),
    (4, {0: [0, 1], 1: [2, 3]}, [0, 1], {0: [0, 1], 1: [2, 3]}),
    (3, {0: [], 1: []}, [0, 1], {}),
    (3, {}, [], {}),
    (0, {0: []}, [0], {}),
    (1, {0: [0], 1: [0]}, [1, 0], {0: [0]}),
    (5, {0: [0, 3], 1: [1, 2, 3], 2: [2, 3, 4]}, [0, 1, 2], {0: [0, 3], 1: [1, 2], 2: [4]}),
    (2, {1: [0, 1]}, [0, 1], {1: [0, 1]}),
    (3, {0: [0, 1, 2], 1: [0, 1, 2], 2: [0, 1, 2]}, [0, 1, 2], {0: [0, 1, 2]}),
    (3, {0: [0, 1], 1: [0], 5: [2]}, [1, 2], {1: [0]}),
]


@pytest.mark.parametrize("name", ["default", "retain"])
@pytest.mark.parametrize("case", SEED_CASES)
def test_seed_cases(name, case):
    n, entries, listed, expected = case
    keys = [f"key{i}" for i in range(n)]
    lookup = {a: lm(n, *k) for a, k in entries.items()}
    policy = prefetch_policy.create_prefetch_policy(name)
    plan = policy.select_load_plan(keys, lookup, [AdapterDescriptor(i, f"a{i}") for i in listed])
    assert {a: b.get_indices_list() for a, b in plan.items()} == expected
    assert all(type(b) is Bitmap for b in plan.values())
    assert all(b.size() == n for b in plan.values())
    assert policy.select_l1_retentions(keys) == [name == "retain"] * n


def test_seed_cases_with_duck_typed_adapters():
    class A:
        def __init__(self, index):
            self.index = index

    lookup = {0: lm(3, 0, 1), 1: lm(3, 1, 2)}
    plan = prefetch_policy.DefaultPrefetchPolicy().select_load_plan([1, 2, 3], lookup, [A(1), A(0)])
    assert {a: b.get_indices_list() for a, b in plan.items()} == {0: [0, 1], 1: [2]}


def test_select_load_plan_differences_on_purpose():
    p = prefetch_policy.DefaultPrefetchPolicy()
    with pytest.raises(ValueError):
        p.select_load_plan([1, 2, 3, 4], {0: Bitmap(3)}, [AdapterDescriptor(0)])
    with pytest.raises(ValueError):
        p.select_load_plan([1, 2], {0: Bitmap(2, 1)}, [AdapterDescriptor(0), AdapterDescriptor(0)])


def test_registry():
    assert prefetch_policy.get_registered_prefetch_policies()[:2] == ["default", "retain"]
    a = prefetch_policy.create_prefetch_policy("default")
    b = prefetch_policy.create_prefetch_policy("default")
    assert a is not b and type(a) is prefetch_policy.DefaultPrefetchPolicy
    assert type(prefetch_policy.create_prefetch_policy("retain")) is prefetch_policy.RetainPrefetchPolicy
    with pytest.raises(ValueError):
        prefetch_policy.create_prefetch_policy("balanced-nope")
    with pytest.raises(ValueError):
        prefetch_policy.register_prefetch_policy("default", prefetch_policy.DefaultPrefetchPolicy)

    class Mine(prefetch_policy.PrefetchPolicy):
        def select_load_plan(self, keys, lookup_results, adapters):
            return {}

    name = "test-compat-mine"
    if name not in prefetch_policy.get_registered_prefetch_policies():
        prefetch_policy.register_prefetch_policy(name, Mine)
    assert isinstance(prefetch_policy.create_prefetch_policy(name), Mine)
    assert prefetch_policy.create_prefetch_policy(name).select_l1_retentions([1, 2]) == [False, False]
    with pytest.raises(TypeError):
        prefetch_policy.PrefetchPolicy()  # abstract


# ===========================================================================
# §3.1 Bitmap2D and MapState
# ===========================================================================


def g2(*rows):
    return Bitmap2D([from_str(r) for r in rows])


def s2(grid):
    return [repr(r) for r in grid]


def test_bitmap2d_construction():
    with pytest.raises(ValueError):
        Bitmap2D([Bitmap(3), Bitmap(4)])
    with pytest.raises(ValueError):
        Bitmap2D.zeros(-1, 3)
    with pytest.raises(ValueError):
        Bitmap2D.zeros(2, -3)
    z = Bitmap2D.zeros(2, 3)
    assert z.size() == (2, 3) and z.popcount() == 0 and len(z) == 2
    assert Bitmap2D([]).size() == (0, 0)
    o = g2("101", "011").ones_like()
    assert s2(o) == ["111", "111"]
    assert s2(g2("101", "011").zeros_like()) == ["000", "000"]
    g = g2("101", "011")
    assert g.popcount() == 4
    assert repr(g[1]) == "011"
    assert [repr(r) for r in iter(g)] == ["101", "011"]


def test_bitmap2d_to_list_shares_rows_and_copy_does_not():
    # As LMCache's list of rows: the rows given and the rows of to_list()
    # write through to the grid (the native grid makes them views of it).
    rows = [from_str("101"), from_str("011")]
    g = Bitmap2D(rows)
    lst = g.to_list()
    assert lst is not g.to_list()
    lst[0].set(1)
    assert repr(g[0]) == "111" and repr(rows[0]) == "111"
    rows[1].set(0)
    assert repr(g[1]) == "111"
    c = g.copy()
    c[0].clear(0)
    assert repr(g[0]) == "111" and repr(lst[0]) == "111" and repr(c[0]) == "011"


def test_bitmap2d_operators():
    a, b = g2("1100", "0011"), g2("1010", "0110")
    assert s2(a + b) == ["1110", "0111"]
    assert s2(a - b) == ["0100", "0001"]
    assert s2(a & b) == ["1000", "0010"]
    for op in ("+", "-", "&"):
        with pytest.raises(ValueError):
            eval(f"a {op} x", {}, {"a": a, "x": g2("111", "111")})
        with pytest.raises(ValueError):
            eval(f"a {op} x", {}, {"a": a, "x": g2("1111")})


def test_bitmap2d_in_place_rebinds_rows():
    a = g2("1100", "0011")
    row0 = a[0]
    same = a
    a += g2("0010", "0000")
    assert a is same
    assert s2(a) == ["1110", "0011"]
    assert repr(row0) == "1100"  # a row handed out before is not changed
    row0 = a[0]
    a -= g2("1000", "0001")
    assert s2(a) == ["0110", "0010"] and repr(row0) == "1110"
    a &= g2("0100", "1111")
    assert s2(a) == ["0100", "0010"]
    with pytest.raises(ValueError):
        a += g2("1")


def test_mapstate():
    m = MapState()
    with pytest.raises(ValueError):
        m[0] = Bitmap2D([])
    m[0] = g2("1100", "0011")
    with pytest.raises(ValueError):
        m[1] = g2("110", "001")
    with pytest.raises(TypeError):
        m[1] = [from_str("1100")]
    m[1] = g2("0001", "1000")
    assert 0 in m and 1 in m and 2 not in m
    assert len(m) == 2 and sorted(m) == [0, 1]
    assert s2(m.merge()) == ["1101", "1011"]
    assert MapState().merge().size() == (0, 0)
    c = m.copy()
    c[0][0].set(2)
    assert s2(m[0]) == ["1100", "0011"]
    del m[1]
    assert 1 not in m
    assert m.get(5) is None
    assert sorted(dict(m.items())) == [0]


def test_mapstate_union_and_difference():
    a = MapState({0: g2("1100"), 1: g2("0001")})
    b = MapState({1: g2("0010"), 2: g2("1111")})
    u = a + b
    assert {i: s2(g) for i, g in u.items()} == {0: ["1100"], 1: ["0011"], 2: ["1111"]}
    assert u[2] is not b[2] and u[2][0] is not b[2][0]  # adopted grids are copied
    assert {i: s2(g) for i, g in a.items()} == {0: ["1100"], 1: ["0001"]}
    d = u - MapState({1: g2("0001"), 7: g2("1111")})
    assert {i: s2(g) for i, g in d.items()} == {0: ["1100"], 1: ["0010"], 2: ["1111"]}
    same = a
    a += b
    assert a is same and {i: s2(g) for i, g in a.items()} == {0: ["1100"], 1: ["0011"], 2: ["1111"]}
    a -= MapState({0: g2("0100")})
    assert s2(a[0]) == ["1000"]
    with pytest.raises(ValueError):
        a + MapState({0: g2("11")})


def test_descriptors_and_key_groups():
    d = L1ManagerDescriptor(3, config=1.5)
    assert d.index == 3 and d.type_name == "float"
    d2 = L2AdapterDescriptor(0, config={"a": 1})
    assert d2.type_name == "dict"
    with pytest.raises(Exception):
        d.index = 4  # frozen
    GroupedObjectKeys(keys=[1, 2], sliding_window_size=-1)
    GroupedObjectKeys(keys=[1, 2], sliding_window_size=1)
    for bad in (0, -2, -7):
        with pytest.raises(ValueError):
            GroupedObjectKeys(keys=[1, 2], sliding_window_size=bad)


# ===========================================================================
# §3.2 the grid plan_load (test_prefetch_policy.py)
# ===========================================================================


def groups(windows, cols):
    return [GroupedObjectKeys(keys=[f"r{r}c{c}" for c in range(cols)], object_group_id=r, sliding_window_size=w) for r, w in enumerate(windows)]


def ms(entries):
    return MapState({i: g2(*rows) for i, rows in entries.items()})


def plan_of(windows, cols, l1, l2, fetching="prefix", l1_descs=None, l2_descs=None, policy=None):
    l1m, l2m = ms(l1), ms(l2)
    l1d = {i: L1ManagerDescriptor(i) for i in l1} if l1_descs is None else l1_descs
    l2d = {i: L2AdapterDescriptor(i) for i in l2} if l2_descs is None else l2_descs
    policy = policy or prefetch_policy.DefaultPrefetchPolicy()
    plan = policy.plan_load(groups(windows, cols), l1m, l2m, l1d, l2d, fetching)
    assert isinstance(plan, PrefetchPlan)
    return plan


def out(mapstate):
    return {i: s2(g) for i, g in sorted(mapstate.items())}


def test_plan_l1_before_l2():
    plan = plan_of([-1], 4, {5: ["0110"]}, {0: ["1111"]})
    assert out(plan.l1_planned_keys) == {5: ["0110"]}
    assert out(plan.l2_planned_keys) == {0: ["1001"]}
    for g in list(plan.l1_planned_keys.values()) + list(plan.l2_planned_keys.values()):
        assert isinstance(g, Bitmap2D) and all(type(r) is Bitmap for r in g)


def test_plan_lower_index_by_number_not_insertion_order():
    l2 = MapState()
    l2[10] = g2("111")
    l2[2] = g2("011")
    descs = {10: L2AdapterDescriptor(10), 2: L2AdapterDescriptor(2)}
    plan = prefetch_policy.DefaultPrefetchPolicy().plan_load(groups([-1], 3), MapState(), l2, {}, descs, "prefix")
    assert out(plan.l2_planned_keys) == {2: ["011"], 10: ["100"]}
    plan = plan_of([-1], 2, {9: ["11"], 3: ["11"]}, {})
    assert out(plan.l1_planned_keys) == {3: ["11"]}


def test_plan_prefix_stops_at_a_gap_and_shortest_row_bounds():
    plan = plan_of([-1], 6, {}, {0: ["110111"]})
    assert out(plan.l2_planned_keys) == {0: ["110000"]}
    plan = plan_of([-1, -1, -1], 5, {0: ["11111", "11100", "11110"]}, {})
    assert out(plan.l1_planned_keys) == {0: ["11100", "11100", "11100"]}


def test_plan_union_across_tiers():
    plan = plan_of([-1, -1], 4, {0: ["1100", "1000"]}, {0: ["0011", "0000"], 1: ["0000", "0111"]})
    assert out(plan.l1_planned_keys) == {0: ["1100", "1000"]}
    assert out(plan.l2_planned_keys) == {0: ["0011", "0000"], 1: ["0000", "0111"]}


def test_plan_windowed_rows_keep_the_trailing_window():
    plan = plan_of([-1, 2, 2], 6, {}, {0: ["111111", "111111", "000011"]})
    assert out(plan.l2_planned_keys) == {0: ["111111", "000011", "000011"]}
    plan = plan_of([-1, 1], 4, {}, {0: ["1111", "0101"]})
    assert out(plan.l2_planned_keys) == {0: ["1111", "0001"]}


def test_plan_full_keeps_gaps_and_refuses_windows(caplog):
    plan = plan_of([-1, -1], 4, {0: ["1101", "0110"]}, {3: ["0001", "1000"]}, "full")
    assert out(plan.l1_planned_keys) == {0: ["1101", "0110"]}
    assert out(plan.l2_planned_keys) == {3: ["0000", "1000"]}
    with caplog.at_level(logging.ERROR):
        plan = plan_of([-1, 4], 4, {0: ["1101", "0110"]}, {3: ["0001", "1000"]}, "full")
    assert len(plan.l1_planned_keys) == 0 and len(plan.l2_planned_keys) == 0
    assert any(r.levelno >= logging.ERROR for r in caplog.records)


def test_plan_contract_locked_and_unique():
    plan = plan_of([-1, -1], 4, {0: ["1010", "1111"], 1: ["1111", "0000"]}, {0: ["1111", "1111"]}, "full")
    assert out(plan.l1_planned_keys) == {0: ["1010", "1111"], 1: ["0101", "0000"]}
    assert len(plan.l2_planned_keys) == 0


def test_plan_no_mutation_or_aliasing():
    l1 = ms({0: ["1100", "1110"]})
    l2 = ms({1: ["1111", "1111"]})
    l1_rows = [r for g in l1.values() for r in g]
    l2_rows = [r for g in l2.values() for r in g]
    key_groups = groups([-1, 2], 4)
    keys_before = [list(g.keys) for g in key_groups]
    l1d, l2d = {0: L1ManagerDescriptor(0)}, {1: L2AdapterDescriptor(1)}
    plan = prefetch_policy.DefaultPrefetchPolicy().plan_load(key_groups, l1, l2, l1d, l2d, "prefix")
    assert out(l1) == {0: ["1100", "1110"]} and out(l2) == {1: ["1111", "1111"]}
    assert [list(g.keys) for g in key_groups] == keys_before
    assert l1d == {0: L1ManagerDescriptor(0)} and l2d == {1: L2AdapterDescriptor(1)}
    planned = [r for ms_ in (plan.l1_planned_keys, plan.l2_planned_keys) for g in ms_.values() for r in g]
    assert planned
    for r in planned:
        assert all(r is not x for x in l1_rows + l2_rows)
    for ms_ in (plan.l1_planned_keys, plan.l2_planned_keys):
        for g in ms_.values():
            assert all(g is not x for x in list(l1.values()) + list(l2.values()))
    for r in planned:
        r.set(0)
    assert out(l1) == {0: ["1100", "1110"]} and out(l2) == {1: ["1111", "1111"]}


def test_plan_empty_or_mismatched_shape_gives_an_empty_plan(caplog):
    policy = prefetch_policy.DefaultPrefetchPolicy()
    with caplog.at_level(logging.ERROR):
        empty = policy.plan_load([], ms({0: ["11"]}), MapState(), {0: L1ManagerDescriptor(0)}, {}, "prefix")
        assert len(empty.l1_planned_keys) == 0 and len(empty.l2_planned_keys) == 0
        # merged L1 shape (2, 4) but the key groups are (2, 3)
        p = policy.plan_load(groups([-1, -1], 3), ms({0: ["1100", "1110"]}), MapState(), {0: L1ManagerDescriptor(0)}, {}, "prefix")
        assert len(p.l1_planned_keys) == 0 and len(p.l2_planned_keys) == 0
        # L2 shape (1, 4) but the key groups are (2, 4)
        p = policy.plan_load(groups([-1, -1], 4), ms({0: ["1100", "1110"]}), ms({0: ["1111"]}), {0: L1ManagerDescriptor(0)}, {0: L2AdapterDescriptor(0)}, "prefix")
        assert len(p.l1_planned_keys) == 0 and len(p.l2_planned_keys) == 0
        # rows of the key groups of different lengths
        ragged = [GroupedObjectKeys(keys=[1, 2, 3]), GroupedObjectKeys(keys=[1, 2])]
        p = policy.plan_load(ragged, ms({0: ["111", "111"]}), MapState(), {0: L1ManagerDescriptor(0)}, {}, "prefix")
        assert isinstance(p, PrefetchPlan)
    assert sum(r.levelno >= logging.ERROR for r in caplog.records) >= 3


def test_plan_empty_maps_are_zeros():
    plan = plan_of([-1, 2], 5, {}, {})
    assert len(plan.l1_planned_keys) == 0 and len(plan.l2_planned_keys) == 0
    plan = plan_of([-1], 3, {}, {1: ["111"]})
    assert out(plan.l2_planned_keys) == {1: ["111"]}


def test_plan_ignores_locked_grids_without_descriptor():
    plan = plan_of([-1], 4, {0: ["1111"]}, {1: ["1111"]}, l1_descs={}, l2_descs={1: L2AdapterDescriptor(1)})
    assert len(plan.l1_planned_keys) == 0
    assert out(plan.l2_planned_keys) == {1: ["1111"]}


def test_retention_flags():
    keys = ["a", "b", "c"]
    d = prefetch_policy.DefaultPrefetchPolicy()
    r = prefetch_policy.RetainPrefetchPolicy()
    assert d.plan_l1_retention(keys, L1ManagerDescriptor(0), L2AdapterDescriptor(1)) == [False] * 3
    assert r.plan_l1_retention(keys, L1ManagerDescriptor(0), L2AdapterDescriptor(1)) == [True] * 3
    assert r.plan_l1_retention([]) == []
    a = plan_of([-1], 4, {0: ["1100"]}, {0: ["0111"]}, policy=d)
    b = plan_of([-1], 4, {0: ["1100"]}, {0: ["0111"]}, policy=r)
    assert out(a.l1_planned_keys) == out(b.l1_planned_keys) == {0: ["1100"]}
    assert out(a.l2_planned_keys) == out(b.l2_planned_keys) == {0: ["0011"]}


def test_plan_matches_the_pythonic_grid_plan():
    rnd = random.Random(5266)
    for _ in range(40):
        cols = rnd.randint(0, 40)
        windows = [rnd.choice([-1, 1, 2, 3, 9]) for _ in range(rnd.randint(1, 4))]
        def rows():
            return ["".join("1" if rnd.random() < 0.85 else "0" for _ in range(cols)) for _ in windows]
        l1 = {i: rows() for i in rnd.sample(range(4), rnd.randint(0, 2))}
        l2 = {i: rows() for i in rnd.sample(range(4), rnd.randint(0, 3))}
        if cols == 0 and not (l1 or l2):
            continue
        plan = plan_of(windows, cols, l1, l2)
        pl = bitplan.plan_load(
            windows, cols,
            {i: bitplan.Grid([bitplan.Bitmap.from_bitstring(r) for r in rs]) for i, rs in l1.items()},
            {i: bitplan.Grid([bitplan.Bitmap.from_bitstring(r) for r in rs]) for i, rs in l2.items()},
        )
        assert out(plan.l1_planned_keys) == {i: [repr(r) for r in g.rows()] for i, g in sorted(pl.l1.items())}
        assert out(plan.l2_planned_keys) == {i: [repr(r) for r in g.rows()] for i, g in sorted(pl.l2.items())}


@pytest.mark.parametrize(
    "bad",
    [
        dict(key_groups=None),
        dict(fetching_policy="bogus"),
        dict(l1_locked_keys={0: "not a grid"}),
        dict(l2_locked_keys=None),
        dict(l1_manager_descs=None),
    ],
    ids=["no key groups", "bad fetching", "dict of junk", "None map", "None descs"],
)
def test_plan_load_never_raises(bad, caplog):
    args = dict(
        key_groups=groups([-1], 4),
        l1_locked_keys=ms({0: ["1100"]}),
        l2_locked_keys=ms({1: ["1111"]}),
        l1_manager_descs={0: L1ManagerDescriptor(0)},
        l2_adapter_descs={1: L2AdapterDescriptor(1)},
        fetching_policy="prefix",
    )
    args.update(bad)
    with caplog.at_level(logging.ERROR):
        plan = prefetch_policy.DefaultPrefetchPolicy().plan_load(**args)
    assert isinstance(plan, PrefetchPlan)
    assert len(plan.l1_planned_keys) == 0 and len(plan.l2_planned_keys) == 0
    assert any(r.levelno >= logging.ERROR for r in caplog.records)
