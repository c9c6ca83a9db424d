"""Issue #19, items 2, 5 and 6: the one-call "fast path" of
``bitplan.lmcache``'s native ``Bitmap2D``/``MapState`` and LMCache ``Bitmap``,
the GIL on large grids, and impossible shapes. Each call is checked against
the list-of-rows model (rows as lists of bools) and against the slow
LMCache-style code it replaces in the controller
(``prefetch_controller_v2.py`` at d2d85ea5), written out here over the rows.

Most of this file fails until the native containers land: it is the spec
the lead implements against, not a description of today's Python classes.
The spec's names: ``Bitmap2D.from_flat(flat, num_rows, order="chunk"|"row")``,
``to_flat(order)``, ``gather_rows``, ``to_index_lists``, ``deposit``,
``extract``; ``Bitmap(size, list|tuple|range|ndarray)`` and ``batched_set``
of the same; ``MapState.gather_keys``, ``intersect_each``, ``subtract_each``,
``popcount``; ``bitmap_ops.fold_unfold_grouped(grid, windows)``."""

from __future__ import annotations

import sys
import threading

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from _capped import run_capped

from bitplan.lmcache import bitmap_ops
from bitplan.lmcache.native import Bitmap
from bitplan.lmcache.prefetch_policy import Bitmap2D, MapState

# ---------------------------------------------------------------------------
# Model and helpers (rows as lists of bools)
# ---------------------------------------------------------------------------


def bm(row):
    out = Bitmap(len(row))
    out.batched_set([c for c, bit in enumerate(row) if bit])
    return out


def grid(rows):
    return Bitmap2D([bm(r) for r in rows])


def bits(g):
    out = []
    for row in g:
        assert type(row) is Bitmap
        on = set(row.get_indices_list())
        out.append([c in on for c in range(row.size())])
    return out


def flat_bits(b):
    on = set(b.get_indices_list())
    return [i in on for i in range(b.size())]


WIDTHS = st.sampled_from([0, 1, 5, 63, 64, 65, 129])


def rows_of(num_rows, num_cols):
    return st.lists(st.lists(st.booleans(), min_size=num_cols, max_size=num_cols), min_size=num_rows, max_size=num_rows)


@st.composite
def shaped(draw, min_rows=1):
    r, c = draw(st.integers(min_rows, 6)), draw(WIDTHS)
    return draw(rows_of(r, c))


def keys_for(num_rows, num_cols):
    # distinct objects, so that the tests can check identity
    return [[object() for _ in range(num_cols)] for _ in range(num_rows)]


# ---------------------------------------------------------------------------
# The controller's slow code, over LMCache's API (rows of Bitmap)
# ---------------------------------------------------------------------------


def slow_scatter_full_global(flat, num_rows, num_cols):
    """``_scatter_bitmaps_full_global``: the flat form is row-major (the
    controller chains the key groups), one ``set`` per bit."""
    if len(flat) != num_rows * num_cols:
        raise ValueError("length")
    out = Bitmap2D.zeros(num_rows, num_cols)
    for index in flat.get_indices_list():
        out[index // num_cols].set(index % num_cols)
    return out


def slow_gather_keys(keys_by_row, cells):
    """``_gather_keys``: row by row, ``len`` checks and ``gather``."""
    if len(keys_by_row) != len(cells):
        raise ValueError("rows")
    out = []
    for keys, row in zip(keys_by_row, cells):
        if len(row) != len(keys):
            raise ValueError("row length")
        out.extend(row.gather(keys))
    return out


def slow_scatter(planned, result):
    """``_scatter_bitmaps``: the i-th set cell of ``planned`` (row-major)
    takes bit i of ``result``."""
    rows, cols = planned.size()
    if rows == 0:
        return Bitmap2D([])
    positions = []
    for r, row in enumerate(planned):
        positions.extend(r * cols + c for c in row.get_indices_list())
    if len(positions) != len(result):
        raise ValueError("length")
    out = Bitmap2D.zeros(rows, cols)
    for index in result.gather(positions):
        out[index // cols].set(index % cols)
    return out


# ===========================================================================
# Bitmap2D.from_flat / to_flat
# ===========================================================================


def model_from_flat(flat, num_rows, order):
    cols = len(flat) // num_rows
    if order == "chunk":
        return [[flat[j * num_rows + r] for j in range(cols)] for r in range(num_rows)]
    return [[flat[r * cols + c] for c in range(cols)] for r in range(num_rows)]


@pytest.mark.parametrize("order", ["chunk", "row"])
@given(rows=shaped())
def test_from_flat_and_to_flat_match_the_model(order, rows):
    num_rows, num_cols = len(rows), len(rows[0])
    if order == "chunk":
        flat = [rows[k % num_rows][k // num_rows] for k in range(num_rows * num_cols)]
    else:
        flat = [rows[k // num_cols][k % num_cols] for k in range(num_rows * num_cols)]
    b = bm(flat)
    g = Bitmap2D.from_flat(b, num_rows, order=order)
    assert type(g) is Bitmap2D
    assert len(g) == num_rows and all(r.size() == num_cols for r in g)
    assert bits(g) == model_from_flat(flat, num_rows, order) == rows
    back = g.to_flat(order=order)
    assert type(back) is Bitmap and flat_bits(back) == flat
    assert flat_bits(b) == flat  # the input is not changed


@given(rows=shaped())
def test_from_flat_defaults_to_chunk_major_as_bitplan_grid(rows):
    num_rows, num_cols = len(rows), len(rows[0])
    flat = bm([rows[k % num_rows][k // num_rows] for k in range(num_rows * num_cols)])
    assert bits(Bitmap2D.from_flat(flat, num_rows)) == rows
    assert flat_bits(grid(rows).to_flat()) == flat_bits(flat)


@given(rows=shaped())
def test_from_flat_row_order_is_the_controllers_full_global_scatter(rows):
    num_rows, num_cols = len(rows), len(rows[0])
    flat = bm([bit for row in rows for bit in row])
    slow = slow_scatter_full_global(flat, num_rows, num_cols)
    assert bits(Bitmap2D.from_flat(flat, num_rows, order="row")) == bits(slow)


def test_from_flat_of_zero_bits_gives_rows_of_zero_columns():
    for order in ("chunk", "row"):
        g = Bitmap2D.from_flat(Bitmap(0), 3, order=order)
        assert g.size() == (3, 0) and len(g) == 3 and g.popcount() == 0


@pytest.mark.parametrize("order", ["chunk", "row"])
@pytest.mark.parametrize("size,num_rows", [(7, 2), (10, 3), (1, 2), (5, 0), (0, 0), (4, -1)])
def test_from_flat_refuses_a_size_that_is_not_a_multiple_or_no_rows(order, size, num_rows):
    with pytest.raises(ValueError):
        Bitmap2D.from_flat(Bitmap(size, size), num_rows, order=order)


# ===========================================================================
# gather_rows, to_index_lists, MapState.gather_keys
# ===========================================================================


@given(rows=shaped(min_rows=0))
def test_gather_rows_is_the_controllers_gather_keys(rows):
    num_rows, num_cols = (len(rows), len(rows[0])) if rows else (0, 0)
    keys = keys_for(num_rows, num_cols)
    g = grid(rows)
    got = g.gather_rows(keys)
    want = [keys[r][c] for r in range(num_rows) for c in range(num_cols) if rows[r][c]]
    assert type(got) is list and len(got) == len(want)
    assert all(a is b for a, b in zip(got, want))  # the key objects themselves
    assert all(a is b for a, b in zip(got, slow_gather_keys(keys, g)))
    # tuples of keys, as GroupedObjectKeys may hold
    assert all(a is b for a, b in zip(g.gather_rows([tuple(k) for k in keys]), want))


@given(rows=shaped())
def test_to_index_lists(rows):
    g = grid(rows)
    got = g.to_index_lists()
    assert got == [[c for c, bit in enumerate(r) if bit] for r in rows]
    assert got == [row.get_indices_list() for row in g]


def test_gather_rows_refuses_a_row_count_or_row_length_mismatch():
    g = grid([[True, False, True], [False, True, False]])
    keys = keys_for(2, 3)
    for bad in (keys[:1], keys + [keys[0]], [keys[0], keys[1][:2]], [keys[0] + [1], keys[1]], []):
        with pytest.raises(ValueError):
            slow_gather_keys(bad, g)  # what the controller does
        with pytest.raises(ValueError):
            g.gather_rows(bad)


@given(data=st.data())
@settings(max_examples=30)
def test_mapstate_gather_keys_is_one_call_for_every_index(data):
    num_rows, num_cols = data.draw(st.integers(1, 4)), data.draw(WIDTHS)
    ms = MapState()
    for index in data.draw(st.lists(st.integers(0, 6), max_size=4, unique=True)):
        ms[index] = grid(data.draw(rows_of(num_rows, num_cols)))
    keys = keys_for(num_rows, num_cols)
    got = ms.gather_keys(keys)
    assert type(got) is dict
    assert list(got) == [i for i, _ in ms.items()]  # insertion order
    for index, g in ms.items():
        assert all(a is b for a, b in zip(got[index], slow_gather_keys(keys, g)))
        assert len(got[index]) == g.popcount()
    if list(got):
        with pytest.raises(ValueError):
            ms.gather_keys(keys[:-1] if num_rows > 1 else keys + keys)


# ===========================================================================
# deposit / extract
# ===========================================================================


@given(data=st.data())
def test_deposit_is_the_controllers_scatter_bitmaps(data):
    rows = data.draw(shaped())
    planned = grid(rows)
    result_bits = data.draw(st.lists(st.booleans(), min_size=planned.popcount(), max_size=planned.popcount()))
    result = bm(result_bits)
    loaded = planned.deposit(result)
    assert type(loaded) is Bitmap2D and loaded.size() == planned.size()
    # model: the i-th set cell, row-major, takes bit i
    it = iter(result_bits)
    want = [[next(it) if bit else False for bit in row] for row in rows]
    assert bits(loaded) == want == bits(slow_scatter(planned, result))
    assert bits(planned) == rows  # the mask is not changed
    # extract is the inverse: the bits of the set cells, row-major
    assert flat_bits(planned.extract(loaded)) == result_bits
    assert type(planned.extract(loaded)) is Bitmap


@given(data=st.data())
def test_extract_reads_the_set_cells_in_row_major_order(data):
    rows = data.draw(shaped())
    values_rows = data.draw(rows_of(len(rows), len(rows[0])))
    mask, values = grid(rows), grid(values_rows)
    got = mask.extract(values)
    assert flat_bits(got) == [v for mrow, vrow in zip(rows, values_rows) for m, v in zip(mrow, vrow) if m]
    assert bits(mask.deposit(got)) == bits(mask & values)  # deposit undoes it


def test_deposit_refuses_a_flat_of_another_length():
    planned = grid([[True, False, True], [False, True, False]])
    for size in (0, 2, 4, 6):
        with pytest.raises(ValueError):
            slow_scatter(planned, Bitmap(size))  # what the controller does
        with pytest.raises(ValueError):
            planned.deposit(Bitmap(size))


def test_extract_refuses_a_shape_mismatch():
    mask = grid([[True, False, True], [False, True, False]])
    for shape in ((2, 4), (1, 3), (3, 3)):
        with pytest.raises(ValueError):
            mask.extract(Bitmap2D.zeros(*shape))


# ===========================================================================
# Bitmap(size, x) and batched_set in one call
# ===========================================================================

INDEX_FORMS = {
    "list": list,
    "tuple": tuple,
    "range": None,  # built from the indices' own range below
    "int64": lambda xs: numpy.array(xs, dtype=numpy.int64),
    "uint32": lambda xs: numpy.array(xs, dtype=numpy.uint32),
    "intp": lambda xs: numpy.array(xs, dtype=numpy.intp),
}


@pytest.mark.parametrize("form", sorted(INDEX_FORMS))
@given(size=st.integers(0, 200), data=st.data())
def test_constructor_and_batched_set_take_indices_in_one_call(form, size, data):
    if form == "range":
        start, stop, step = data.draw(st.integers(0, 250)), data.draw(st.integers(0, 300)), data.draw(st.integers(1, 7))
        xs = range(start, stop, step)
        expected = sorted({i for i in xs if i < size})
    else:
        indices = data.draw(st.lists(st.integers(0, 260), max_size=40))  # past the end: ignored
        xs = INDEX_FORMS[form](indices)
        expected = sorted({i for i in indices if i < size})
    b = Bitmap(size, xs)
    assert type(b) is Bitmap and b.size() == size and b.get_indices_list() == expected
    c = Bitmap(size)
    c.batched_set(xs)
    assert c.get_indices_list() == expected
    # what LMCache's code does: one set per index
    slow = Bitmap(size)
    for i in (xs.tolist() if hasattr(xs, "tolist") else xs):
        slow.set(i)
    assert slow.get_indices_list() == expected


@given(mask=st.lists(st.booleans(), max_size=200))
def test_constructor_and_batched_set_take_a_bool_mask(mask):
    arr = numpy.array(mask, dtype=bool)
    b = Bitmap(len(mask), arr)
    assert b.size() == len(mask) and flat_bits(b) == mask
    c = Bitmap(len(mask), 0)
    c.batched_set(arr)
    assert flat_bits(c) == mask
    # batched_set adds to what is set already
    d = Bitmap(len(mask), 1)
    d.batched_set(arr)
    assert flat_bits(d) == [m or i == 0 for i, m in enumerate(mask)]


def test_the_int_second_argument_is_still_lmcaches_prefix():
    assert Bitmap(10, 3).get_indices_list() == [0, 1, 2]
    assert Bitmap(5, 100).popcount() == 5
    assert Bitmap(0, 0).size() == 0
    assert Bitmap(10, [4]).get_indices_list() == [4]  # a one-element list is an index, not a prefix


# ===========================================================================
# MapState one-call loops
# ===========================================================================


@pytest.mark.parametrize("op", ["intersect_each", "subtract_each"])
@given(data=st.data())
@settings(max_examples=30)
def test_intersect_each_and_subtract_each_are_the_finish_loops(op, data):
    num_rows, num_cols = data.draw(st.integers(1, 4)), data.draw(WIDTHS)
    ms = MapState()
    for index in data.draw(st.lists(st.integers(0, 6), max_size=4, unique=True)):
        ms[index] = grid(data.draw(rows_of(num_rows, num_cols)))
    hit = grid(data.draw(rows_of(num_rows, num_cols)))
    before, hit_before = [(i, bits(g)) for i, g in ms.items()], bits(hit)
    out = getattr(ms, op)(hit)
    assert type(out) is MapState and out is not ms
    # _finish_request: ``locked & hit_cells`` and ``locked - hit_cells`` per index
    want = [(i, bits(g & hit if op == "intersect_each" else g - hit)) for i, g in ms.items()]
    assert [(i, bits(g)) for i, g in out.items()] == want
    assert [(i, bits(g)) for i, g in ms.items()] == before and bits(hit) == hit_before
    # the result's grids are new
    for _, g in out.items():
        for row in g:
            row.set_range(0, row.size())
    assert [(i, bits(g)) for i, g in ms.items()] == before


@pytest.mark.parametrize("op", ["intersect_each", "subtract_each"])
def test_intersect_each_and_subtract_each_refuse_a_layout_mismatch(op):
    ms = MapState()
    ms[0] = Bitmap2D.zeros(2, 4)
    for shape in ((2, 5), (1, 4)):
        with pytest.raises(ValueError):
            getattr(ms, op)(Bitmap2D.zeros(*shape))
    assert [(i, _) for i, _ in getattr(MapState(), op)(Bitmap2D.zeros(1, 1)).items()] == []


@given(data=st.data())
@settings(max_examples=30)
def test_mapstate_popcount_sums_the_entries(data):
    num_rows, num_cols = data.draw(st.integers(1, 4)), data.draw(WIDTHS)
    ms = MapState()
    for index in data.draw(st.lists(st.integers(0, 6), max_size=4, unique=True)):
        ms[index] = grid(data.draw(rows_of(num_rows, num_cols)))
    assert ms.popcount() == sum(g.popcount() for _, g in ms.items())
    assert MapState().popcount() == 0


# ===========================================================================
# Consumers and aliasing of the native grid
# ===========================================================================


@given(data=st.data())
def test_fold_unfold_grouped_takes_a_grid(data):
    num_rows, num_cols = data.draw(st.integers(1, 4)), data.draw(WIDTHS)
    rows = data.draw(rows_of(num_rows, num_cols))
    windows = data.draw(st.lists(st.sampled_from([-1, 1, 2, 5]), min_size=num_rows, max_size=num_rows))
    g = grid(rows)
    hit, out = bitmap_ops.fold_unfold_grouped(g, windows)
    want_hit, want_rows = bitmap_ops.fold_unfold_grouped(g.to_list(), windows)
    assert hit == want_hit
    assert [r.get_indices_list() for r in out] == [r.get_indices_list() for r in want_rows]
    assert bits(g) == rows


def test_a_row_view_writes_through_both_ways():
    # grid[i] hands out a view of row i: LMCache fills grids with
    # ``ret[row].set(col)``, and a write on the grid shows in the view.
    g = Bitmap2D.zeros(3, 70)
    view = g[1]
    view.set(65)
    assert g.to_index_lists() == [[], [65], []]
    g[1].set(3)
    assert view.get_indices_list() == [3, 65]


def test_a_row_view_taken_before_an_in_place_operator_keeps_the_old_bits():
    # LMCache's in-place operators rebind the rows: a row object handed out
    # before keeps the old bits, and so does a native view (the grid copies
    # its cells first while a view is alive). A write through that old view
    # no longer reaches the grid, as a write to LMCache's old row object
    # does not.
    g = grid([[True, False, False, False]])
    view = g[0]
    g += grid([[False, True, False, False]])
    assert view.get_indices_list() == [0]
    assert g[0].get_indices_list() == [0, 1]
    view.set(3)
    assert g[0].get_indices_list() == [0, 1]
    fresh = g[0]
    fresh.set(2)
    assert g[0].get_indices_list() == [0, 1, 2]
    # with no view alive, the in-place operator works in place
    del view, fresh
    g -= grid([[True, False, False, False]])
    assert g[0].get_indices_list() == [1, 2]


# ===========================================================================
# Threads: grid operations of >= 262,144 cells release the GIL
# ===========================================================================

# Whether a call released the GIL is read from the extension itself:
# ``_native._detached_calls()`` counts the entries into its GIL-released
# section (every release goes through one function, which increments the
# count inside the released section). Asking a second thread whether it ran
# during the call measured the scheduler instead, and failed on a loaded
# machine (issue #27); the threaded test below only checks that a second
# thread and a large call both finish correctly.
from bitplan import _native  # noqa: E402 - beside the tests that use it

# 1 Mi cells, four times the 262,144-cell (4,096-word) threshold.
BIG = (64, 1 << 14)
# 2,048 cells: far below it.
SMALL = (8, 256)


def _released_during(call):
    """How many GIL-released sections ``call()`` entered."""
    before = _native._detached_calls()
    call()
    return _native._detached_calls() - before


def _pair(shape):
    r, c = shape
    a = Bitmap2D.zeros(r, c)
    b = Bitmap2D.zeros(r, c)
    for i in range(r):
        a[i].set_range(0, c // 2)
        b[i].set_range(c // 4, c)
    return a, b


def _iadd(a, b):
    a += b


def _map(a, b):
    ms = MapState()
    ms[0], ms[1] = a, b
    return ms


# name -> (setup from a pair of grids, the call): the setup runs outside
# the counted call (and makes the copy that an in-place call changes).
GRID_CALLS = {
    "a + b": (lambda a, b: (a, b), lambda a, b: a + b),
    "a - b": (lambda a, b: (a, b), lambda a, b: a - b),
    "a & b": (lambda a, b: (a, b), lambda a, b: a & b),
    "a += b": (lambda a, b: (a.copy(), b), _iadd),
    "a.copy()": (lambda a, b: (a, b), lambda a, b: a.copy()),
    "a.popcount()": (lambda a, b: (a, b), lambda a, b: a.popcount()),
    "ms.merge()": (lambda a, b: (_map(a, b), None), lambda ms, _: ms.merge()),
    "Bitmap2D.from_flat": (lambda a, b: (a.to_flat(), len(a)), lambda flat, rows: Bitmap2D.from_flat(flat, rows)),
    "a.to_flat()": (lambda a, b: (a, b), lambda a, b: a.to_flat()),
    "b.deposit": (lambda a, b: (b, b.extract(a)), lambda b, flat: b.deposit(flat)),
    "b.extract": (lambda a, b: (b, a), lambda b, a: b.extract(a)),
    "ms.intersect_each": (lambda a, b: (_map(a, b), a), lambda ms, a: ms.intersect_each(a)),
    "ms.subtract_each": (lambda a, b: (_map(a, b), a), lambda ms, a: ms.subtract_each(a)),
    "ms + other": (lambda a, b: (_map(a, b), _map(b, a)), lambda ms, other: ms + other),
    "ms - other": (lambda a, b: (_map(a, b), _map(b, a)), lambda ms, other: ms - other),
    "ms += other": (lambda a, b: (_map(a, b), _map(b, a)), _iadd),
    "ms.copy()": (lambda a, b: (_map(a, b), None), lambda ms, _: ms.copy()),
    "ms.popcount()": (lambda a, b: (_map(a, b), None), lambda ms, _: ms.popcount()),
}


@pytest.mark.parametrize("name", list(GRID_CALLS))
def test_large_grid_operations_release_the_gil(name):
    setup, call = GRID_CALLS[name]
    x, y = setup(*_pair(BIG))
    assert _released_during(lambda: call(x, y)) >= 1


@pytest.mark.parametrize("name", list(GRID_CALLS))
def test_small_grid_operations_keep_the_gil(name):
    # Releasing and retaking the GIL costs more than the work below the
    # threshold: a request-sized call must not pay it.
    setup, call = GRID_CALLS[name]
    x, y = setup(*_pair(SMALL))
    assert _released_during(lambda: call(x, y)) == 0


def test_another_thread_runs_beside_a_large_operation():
    """A smoke test, whatever the scheduler does: a thread that counts
    while the main thread combines large grids, and both finish with the
    right results. (How often the counter moved during the calls depends on
    the machine's load, so it is not asserted; the tests above check the
    release itself.)"""
    a, b = _pair(BIG)
    expected = (a & b).popcount()
    stop = threading.Event()
    ticks = [0]

    def counter():
        while True:  # counts once before it looks at `stop`
            ticks[0] += 1
            if stop.is_set():
                return

    t = threading.Thread(target=counter)
    t.start()
    try:
        results = [(a & b).popcount() for _ in range(5)]
    finally:
        stop.set()
        t.join()
    assert results == [expected] * 5
    assert ticks[0] >= 1 and not t.is_alive()


def test_concurrent_grid_operations_are_correct():
    a, b = _pair(BIG)
    expected = {"or": (a + b).popcount(), "sub": (a - b).popcount(), "and": (a & b).popcount()}
    errors = []

    def worker():
        try:
            for _ in range(3):
                assert (a + b).popcount() == expected["or"]
                assert (a - b).popcount() == expected["sub"]
                assert (a & b).popcount() == expected["and"]
                x = a.copy()
                x += b
                assert x.popcount() == expected["or"]
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# ===========================================================================
# Impossible shapes: MemoryError before anything is allocated
# ===========================================================================

PRELUDE = """
from bitplan.lmcache.native import Bitmap
from bitplan.lmcache.prefetch_policy import Bitmap2D, MapState
"""

IMPOSSIBLE_GRIDS = [
    ("", "Bitmap2D.zeros(10**8, 10**8)"),
    ("", "Bitmap2D.zeros(2, 10**15)"),
    ("", "Bitmap2D.zeros(10**12, 64)"),
    ("", "Bitmap2D.zeros(10**18, 10**18)"),  # the cell count overflows 64 bits
    ("", "Bitmap(10**15, [1, 2])"),
    ("", "Bitmap(10**15, range(3))"),
]


@pytest.mark.skipif(sys.platform != "linux", reason="uses RLIMIT_AS and /proc/self/status")
@pytest.mark.parametrize("setup,call", IMPOSSIBLE_GRIDS, ids=[c for _, c in IMPOSSIBLE_GRIDS])
def test_impossible_grid_shapes_are_memory_errors_before_any_allocation(setup, call):
    child = run_capped(PRELUDE, setup, call)
    assert child.returncode == 0, f"the interpreter died (return code {child.returncode}): {child.stderr}"
    assert child.outcome == "MemoryError"
    # "before anything is allocated": the address space grew by less than
    # 16 MiB (today's row-by-row zeros maps rows until the 512 MiB cap)
    assert 0 <= child.grown_mib < 16, f"{child.grown_mib} MiB mapped before the MemoryError"
