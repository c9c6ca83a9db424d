"""``bitplan.Grid`` and the grid plan (``plan_load``, ``DefaultGridPolicy``,
``RetainGridPolicy``) against cell-by-cell Python models."""

import copy
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bitplan
from bitplan import Bitmap, DefaultGridPolicy, Grid, GridPlan, GridPolicy, RetainGridPolicy, plan_load

from _models import model_grid_plan


def grid(*rows):
    return Grid([Bitmap.from_bitstring(r) for r in rows])


def lists(tier):
    return {i: g.to_index_lists() for i, g in sorted(tier.items())}


def strings(tier):
    return {i: [repr(r) for r in g.rows()] for i, g in sorted(tier.items())}


# ---------------------------------------------------------------------------
# Grid
# ---------------------------------------------------------------------------


def test_construction_and_shape():
    g = grid("0110", "1000", "0001")
    assert g.shape == (3, 4)
    assert g.num_rows == 3 and g.num_cols == 4
    assert len(g) == 3
    assert g.popcount() == 4
    assert g.any()
    assert g.to_index_lists() == [[1, 2], [0], [3]]
    assert [repr(r) for r in g] == ["0110", "1000", "0001"]
    assert [repr(r) for r in g.rows()] == ["0110", "1000", "0001"]
    assert repr(g[1]) == "1000"
    assert g.test(0, 1) and not g.test(0, 0)
    z = Grid.zeros(2, 5)
    assert z.shape == (2, 5) and z.popcount() == 0 and not z.any()
    assert Grid.zeros(0, 0).popcount() == 0
    assert Grid((Bitmap(3) for _ in range(2))).shape == (2, 3)


def test_rows_are_copies():
    rows = [Bitmap.from_bitstring("0110"), Bitmap.from_bitstring("1000")]
    g = Grid(rows)
    rows[0].set(0)
    assert g.to_index_lists() == [[1, 2], [0]]
    r = g[0]
    r.set(3)
    assert g.to_index_lists() == [[1, 2], [0]]
    for r in g.rows():
        r.set_all()
    assert g.to_index_lists() == [[1, 2], [0]]


def test_ragged_is_value_error():
    with pytest.raises(ValueError):
        Grid([Bitmap(4), Bitmap(4), Bitmap(3)])


def test_set_clear():
    g = Grid.zeros(2, 70)
    g.set(1, 69)
    g.set(0, 0)
    assert g.to_index_lists() == [[0], [69]]
    g.clear(1, 69)
    assert g.to_index_lists() == [[0], []]
    with pytest.raises(IndexError):
        g.set(2, 0)
    with pytest.raises(IndexError):
        g.clear(0, 70)


def test_operators():
    a = grid("1100", "0011")
    b = grid("1010", "0110")
    assert (a | b).to_index_lists() == [[0, 1, 2], [1, 2, 3]]
    assert (a & b).to_index_lists() == [[0], [2]]
    assert (a - b).to_index_lists() == [[1], [3]]
    assert a.to_index_lists() == [[0, 1], [2, 3]]
    c = a
    c |= b
    assert c is a and a.to_index_lists() == [[0, 1, 2], [1, 2, 3]]
    c &= grid("1111", "0001")
    assert c is a and a.to_index_lists() == [[0, 1, 2], [3]]
    c -= grid("1000", "0000")
    assert c is a and a.to_index_lists() == [[1, 2], [3]]
    for op in ("|", "&", "-"):
        with pytest.raises(ValueError):
            eval(f"a {op} x", {}, {"a": a, "x": Grid.zeros(2, 5)})
        with pytest.raises(ValueError):
            eval(f"a {op} x", {}, {"a": a, "x": Grid.zeros(3, 4)})


def test_equality_copy_pickle():
    a = grid("1100", "0011")
    assert a == grid("1100", "0011")
    assert a != grid("1100", "0010")
    assert a != grid("1100")
    assert a != "1100"
    with pytest.raises(TypeError):
        hash(a)
    c = a.copy()
    c.set(0, 3)
    assert a.to_index_lists() == [[0, 1], [2, 3]]
    assert copy.deepcopy(a) == a
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        b = pickle.loads(pickle.dumps(a, protocol=protocol))
        assert b == a and b is not a and type(b) is Grid


def test_gather_rows():
    g = grid("101", "010")
    keys = [["a0", "a1", "a2"], ["b0", "b1", "b2"]]
    assert g.gather_rows(keys) == [["a0", "a2"], ["b1"]]
    assert g.gather_rows([("x", "y", "z"), range(3)]) == [["x", "z"], [1]]


def test_from_flat_and_to_flat():
    # 3 chunks x 2 rows: bit j*2 + k is chunk j of row k
    flat = Bitmap.from_bitstring("10" "11" "01")
    g = Grid.from_flat(flat, 2)
    assert g.to_index_lists() == [[0, 1], [1, 2]]
    assert g.to_flat() == flat
    assert Grid.from_flat(Bitmap(0), 3).shape == (3, 0)


def test_deposit_and_extract():
    m = grid("0110", "1001")
    bits = Bitmap.from_bitstring("1011")
    d = m.deposit(bits)
    # row-major set cells: (0,1) (0,2) (1,0) (1,3) take bits 1,0,1,1
    assert d.to_index_lists() == [[1], [0, 3]]
    assert m.extract(d) == bits
    assert m.extract(grid("1111", "1111")) == Bitmap(4, 4)
    # extra bits are ignored
    assert m.deposit(Bitmap.from_bitstring("101111")).to_index_lists() == [[1], [0, 3]]
    with pytest.raises(ValueError):
        m.deposit(Bitmap(3))


@st.composite
def grid_rows(draw, rows=None, cols=None):
    rows = draw(st.integers(1, 6)) if rows is None else rows
    cols = draw(st.integers(0, 140)) if cols is None else cols
    return [draw(st.sets(st.integers(0, cols - 1), max_size=cols)) if cols else set() for _ in range(rows)], cols


def to_grid(rows, cols):
    return Grid([Bitmap.from_indices(cols, sorted(r)) for r in rows])


@given(grid_rows())
def test_flat_round_trip_matches_the_model(rc):
    rows, cols = rc
    num_rows = len(rows)
    flat_indices = sorted(j * num_rows + k for k, r in enumerate(rows) for j in r)
    flat = Bitmap.from_indices(cols * num_rows, flat_indices)
    g = Grid.from_flat(flat, num_rows)
    assert g.to_index_lists() == [sorted(r) for r in rows]
    assert g.to_flat() == flat
    assert to_grid(rows, cols).to_flat() == flat


@given(grid_rows(), st.data())
def test_deposit_extract_match_the_model(rc, data):
    rows, cols = rc
    m = to_grid(rows, cols)
    cells = [(k, j) for k, r in enumerate(rows) for j in sorted(r)]
    bits = data.draw(st.lists(st.booleans(), min_size=len(cells), max_size=len(cells) + 5))
    d = m.deposit(Bitmap.from_bools(bits))
    expected = [sorted(j for (k2, j), b in zip(cells, bits) if k2 == k and b) for k in range(len(rows))]
    assert d.to_index_lists() == expected
    values_rows, _ = data.draw(grid_rows(len(rows), cols))
    values = to_grid(values_rows, cols)
    got = m.extract(values)
    assert len(got) == len(cells)
    assert [got[i] for i in range(len(cells))] == [j in values_rows[k] for k, j in cells]


@given(grid_rows(), st.data())
def test_grid_operators_match_the_model(rc, data):
    rows, cols = rc
    other, _ = data.draw(grid_rows(len(rows), cols))
    a, b = to_grid(rows, cols), to_grid(other, cols)
    assert (a | b).to_index_lists() == [sorted(x | y) for x, y in zip(rows, other)]
    assert (a & b).to_index_lists() == [sorted(x & y) for x, y in zip(rows, other)]
    assert (a - b).to_index_lists() == [sorted(x - y) for x, y in zip(rows, other)]
    assert a.popcount() == sum(map(len, rows))
    assert a.any() == any(rows)


# ---------------------------------------------------------------------------
# The grid plan: LMCache's policy test cases
# ---------------------------------------------------------------------------


def test_l1_before_l2():
    plan = plan_load([-1], 4, {5: grid("0110")}, {0: grid("1111")})
    assert isinstance(plan, GridPlan)
    assert strings(plan.l1) == {5: ["0110"]}
    assert strings(plan.l2) == {0: ["1001"]}
    assert plan.hit == 4


def test_lower_index_wins_by_number_not_insertion_order():
    l2 = {}
    l2[10] = grid("111")
    l2[2] = grid("011")
    plan = plan_load([-1], 3, {}, l2)
    assert strings(plan.l2) == {2: ["011"], 10: ["100"]}
    assert list(plan.l2) == sorted(plan.l2) or set(plan.l2) == {2, 10}
    plan = plan_load([-1], 2, {9: grid("11"), 3: grid("11")}, {})
    assert strings(plan.l1) == {3: ["11"]}


def test_prefix_stops_at_a_gap():
    plan = plan_load([-1], 6, {}, {0: grid("110111")})
    assert plan.hit == 2
    assert strings(plan.l2) == {0: ["110000"]}
    nothing = plan_load([-1], 3, {}, {0: grid("011")})
    assert nothing.hit == 0 and len(nothing.l2) == 0 and len(nothing.l1) == 0


def test_the_shortest_row_bounds_the_prefix():
    plan = plan_load([-1, -1, -1], 5, {0: grid("11111", "11100", "11110")}, {})
    assert plan.hit == 3
    assert strings(plan.l1) == {0: ["11100", "11100", "11100"]}


def test_union_across_tiers():
    plan = plan_load([-1, -1], 4, {0: grid("1100", "1000")}, {0: grid("0011", "0000"), 1: grid("0000", "0111")})
    assert plan.hit == 4
    assert strings(plan.l1) == {0: ["1100", "1000"]}
    assert strings(plan.l2) == {0: ["0011", "0000"], 1: ["0000", "0111"]}


def test_windowed_rows_keep_the_trailing_window():
    plan = plan_load([-1, 2, 2], 6, {}, {0: grid("111111", "111111", "000011")})
    assert plan.hit == 6
    assert strings(plan.l2) == {0: ["111111", "000011", "000011"]}
    plan = plan_load([-1, 1], 4, {}, {0: grid("1111", "0101")})
    assert plan.hit == 4
    assert strings(plan.l2) == {0: ["1111", "0001"]}


def test_issue_worked_case_as_a_grid():
    plan = plan_load([-1, 2], 5, {0: grid("11110", "00111")}, {})
    assert plan.hit == 4
    assert strings(plan.l1) == {0: ["11110", "00110"]}


def test_full_keeps_gaps_and_refuses_windows():
    l1 = {0: grid("1101", "0110")}
    l2 = {3: grid("0001", "1000")}
    plan = plan_load([-1, 0], 4, l1, l2, "full")
    assert strings(plan.l1) == {0: ["1101", "0110"]}
    assert strings(plan.l2) == {3: ["0000", "1000"]}
    assert plan.hit == 2
    with pytest.raises(ValueError) as info:
        plan_load([-1, 4], 4, l1, l2, "full")
    assert "4" in str(info.value)
    with pytest.raises(ValueError):
        plan_load([1, -1], 4, l1, l2, "full")


def test_planned_cells_are_locked_and_unique():
    plan = plan_load([-1, -1], 4, {0: grid("1010", "1111"), 1: grid("1111", "0000")}, {0: grid("1111", "1111")}, "full")
    assert strings(plan.l1) == {0: ["1010", "1111"], 1: ["0101", "0000"]}
    assert plan.l2 == {}
    assert plan.planned_count() == 8
    assert plan.merged() == grid("1111", "1111")


def test_inputs_are_not_mutated_or_aliased():
    l1 = {0: grid("1100", "1110")}
    l2 = {1: grid("1111", "1111")}
    windows = [-1, 2]
    plan = plan_load(windows, 4, l1, l2)
    assert windows == [-1, 2]
    assert l1[0] == grid("1100", "1110") and l2[1] == grid("1111", "1111")
    for g in list(plan.l1.values()) + list(plan.l2.values()):
        assert all(g is not x for x in list(l1.values()) + list(l2.values()))
        g.set(0, 3)
    assert l1[0] == grid("1100", "1110") and l2[1] == grid("1111", "1111")


def test_mismatched_shapes_and_no_rows():
    l1 = {0: grid("1100", "1110")}
    l2 = {1: grid("111", "111")}
    with pytest.raises(ValueError):
        plan_load([-1, -1], 4, l1, l2)
    with pytest.raises(ValueError):
        plan_load([-1], 4, l1, {})
    with pytest.raises(ValueError):
        plan_load([], 0, {}, {}, "full")


def test_empty_tiers_and_zero_chunks():
    plan = plan_load([-1, 3], 7, {}, {})
    assert (plan.hit, plan.planned_count(), plan.l1, plan.l2) == (0, 0, {}, {})
    plan = plan_load([-1, 2], 0, {0: Grid([Bitmap(0), Bitmap(0)])}, {})
    assert plan.hit == 0 and plan.l1 == {}


def test_many_tiers():
    l2 = {i: Grid([Bitmap.from_indices(20, sorted({i, 19}))]) for i in range(20)}
    l1 = {0: Grid([Bitmap.from_indices(20, list(range(0, 20, 2)))])}
    plan = plan_load([-1], 20, l1, l2)
    assert plan.hit == 20
    assert lists(plan.l1) == {0: [list(range(0, 20, 2))]}
    expected = {0: [[19]]}
    expected.update({i: [[i]] for i in range(1, 19, 2)})
    assert lists(plan.l2) == expected


def test_grid_policies():
    assert DefaultGridPolicy().name == "default"
    assert RetainGridPolicy().name == "retain"
    assert issubclass(RetainGridPolicy, DefaultGridPolicy) and issubclass(DefaultGridPolicy, GridPolicy)
    assert DefaultGridPolicy().plan_l1_retention(3) == [False] * 3
    assert RetainGridPolicy().plan_l1_retention(["a", "b", "c"]) == [True] * 3
    assert RetainGridPolicy().plan_l1_retention(0) == []
    l1, l2 = {0: grid("1100")}, {0: grid("0111")}
    a = DefaultGridPolicy().plan_load([-1], 4, l1, l2)
    b = RetainGridPolicy().plan_load([-1], 4, l1, l2, "prefix")
    c = plan_load([-1], 4, l1, l2)
    assert lists(a.l1) == lists(b.l1) == lists(c.l1) == {0: [[0, 1]]}
    assert lists(a.l2) == lists(b.l2) == lists(c.l2) == {0: [[2, 3]]}
    assert a.hit == b.hit == 4


def test_grid_policy_python_subclass():
    class NoRetainOdd(DefaultGridPolicy):
        def plan_l1_retention(self, keys):
            n = keys if isinstance(keys, int) else len(keys)
            return [i % 2 == 0 for i in range(n)]

    p = NoRetainOdd()
    assert p.plan_l1_retention(3) == [True, False, True]
    assert lists(p.plan_load([-1], 2, {0: grid("11")}, {}).l1) == {0: [[0, 1]]}


# ---------------------------------------------------------------------------
# Hypothesis: the plan against the cell-by-cell model
# ---------------------------------------------------------------------------


@st.composite
def plan_case(draw):
    windows = draw(st.lists(st.one_of(st.just(-1), st.integers(-2, 40)), min_size=1, max_size=7))
    cols = draw(st.one_of(st.integers(0, 8), st.integers(0, 200)))
    fetching = draw(st.sampled_from(["prefix", "full"]))
    if fetching == "full" and cols % 2 == 0:
        windows = [min(w, 0) for w in windows]
    rnd = draw(st.randoms(use_true_random=False))

    def tier():
        out = {}
        for index in draw(st.lists(st.integers(0, 5), max_size=4, unique=True)):
            density = draw(st.sampled_from([1.0, 0.0, rnd.uniform(0.5, 1.0), rnd.random()]))
            gap = draw(st.one_of(st.none(), st.integers(0, max(cols - 1, 0))))
            out[index] = [{c for c in range(cols) if rnd.random() < density and c != gap} for _ in windows]
        return out

    return windows, cols, tier(), tier(), fetching


@settings(max_examples=80)
@given(plan_case())
def test_plan_is_the_cell_by_cell_model(case):
    windows, cols, l1m, l2m, fetching = case
    l1 = {i: to_grid(rows, cols) for i, rows in l1m.items()}
    l2 = {i: to_grid(rows, cols) for i, rows in l2m.items()}
    expected = model_grid_plan(windows, cols, l1m, l2m, fetching)
    if expected is None:
        with pytest.raises(ValueError):
            plan_load(windows, cols, l1, l2, fetching)
        return
    plan = plan_load(windows, cols, l1, l2, fetching)
    hit, e1, e2 = expected
    assert plan.hit == hit
    assert lists(plan.l1) == e1
    assert lists(plan.l2) == e2
    # the contract: unique cells, each locked by its tier, covering the needed cells
    seen = Grid.zeros(len(windows), cols)
    for tier, planned in ((l1, plan.l1), (l2, plan.l2)):
        for index, g in planned.items():
            assert g.any()
            assert g.shape == (len(windows), cols)
            assert (g - tier[index]).popcount() == 0
            assert (g & seen).popcount() == 0
            seen |= g
    assert seen.popcount() == plan.planned_count()
    assert plan.merged() == seen
    if fetching == "prefix":
        found = Grid.zeros(len(windows), cols)
        for g in list(l1.values()) + list(l2.values()):
            found |= g
        fhit, mask_rows = bitplan.fold_unfold_grouped(found.rows(), windows)
        assert fhit == plan.hit
        assert plan.merged() == (Grid(mask_rows) & found)


def test_plan_results_are_copies():
    p = plan_load([-1], 3, {0: grid("110")}, {})
    p.l1[0].set(0, 2)
    assert p.l1[0].to_index_lists() == [[0, 1]]
    assert p.merged().to_index_lists() == [[0, 1]]


def test_negative_grid_shapes():
    with pytest.raises((ValueError, OverflowError)):
        Grid.zeros(-1, 3)
    with pytest.raises((ValueError, OverflowError)):
        Grid.zeros(3, -1)
