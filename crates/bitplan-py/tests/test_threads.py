"""Issue #14, item 4: several Python threads plan and fold at once (the GIL
is released for large work) and get correct results; a bitmap used from
two threads at once raises a Python exception or completes correctly,
never crashes. No timing is asserted."""

import random
import threading

import pytest

import bitplan
from bitplan import AdapterDescriptor, Bitmap
from bitplan.lmcache import bitmap_ops
from bitplan.lmcache import native as lmnative
from bitplan.lmcache import prefetch_policy as lmpolicy

N = 4 * 1024 * 1024  # 4 Mi bits


def run_threads(targets, *, join=True):
    errors = []

    def wrap(fn):
        def inner():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        return inner

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def big_pair():
    rnd = random.Random(14)
    a = Bitmap(N)
    a.set_range(0, N // 2)
    a.batched_set(rnd.randrange(N) for _ in range(5000))
    b = Bitmap(N)
    b.set_range(N // 4, N)
    b.batched_set(rnd.randrange(N) for _ in range(5000))
    return a, b


def test_concurrent_bitmap_operations_are_correct():
    a, b = big_pair()
    expected = {
        "and": (a & b).popcount(),
        "or": (a | b).popcount(),
        "xor": (a ^ b).popcount(),
        "sub": (a - b).popcount(),
        "pop": a.popcount(),
        "inv": (~a).popcount(),
        "idx": len(a.get_indices_list()),
        "bytes": a.to_bytes(),
    }

    def worker():
        for _ in range(3):
            assert (a & b).popcount() == expected["and"]
            assert (a | b).popcount() == expected["or"]
            assert (a ^ b).popcount() == expected["xor"]
            assert (a - b).popcount() == expected["sub"]
            assert a.and_popcount(b) == expected["and"]
            assert a.popcount() == expected["pop"]
            assert (~a).popcount() == expected["inv"]
            assert len(a.get_indices_list()) == expected["idx"]
            assert a.indices_array().shape == (expected["idx"],)
            assert a.to_bytes() == expected["bytes"]

    assert run_threads([worker] * 4) == []


def test_concurrent_planning_is_correct():
    rnd = random.Random(2658)
    n = N
    lookup = {}
    for a in range(3):
        bm = Bitmap(n)
        bm.set_range(a * n // 8, n - a * n // 8)
        bm.batched_set(rnd.randrange(n) for _ in range(1000))
        lookup[a] = bm
    adapters = [AdapterDescriptor(a) for a in range(3)]
    policies = {name: bitplan.create_prefetch_policy(name) for name in ("default", "retain", "balanced")}
    expected = {name: {a: b.to_bytes() for a, b in p.select_load_plan(n, lookup, adapters).items()} for name, p in policies.items()}

    lm_lookup = {}
    for a, bm in lookup.items():
        x = lmnative.Bitmap(n)
        x.batched_set(bm.get_indices_list())
        lm_lookup[a] = x
    lm_adapters = [lmpolicy.AdapterDescriptor(a) for a in range(3)]
    lm_expected = {a: b.get_indices_list()[:50] + [b.popcount()] for a, b in
                   lmpolicy.DefaultPrefetchPolicy().select_load_plan(range(n), lm_lookup, lm_adapters).items()}

    def worker(name):
        def run():
            for _ in range(3):
                plan = policies[name].select_load_plan(n, lookup, adapters)
                assert {a: b.to_bytes() for a, b in plan.items()} == expected[name]
                merged = bitplan.merge_bitmaps(plan.values(), n)
                assert merged.popcount() == sum(b.popcount() for b in plan.values())

        return run

    def lm_worker():
        for _ in range(3):
            plan = lmpolicy.DefaultPrefetchPolicy().select_load_plan(range(n), lm_lookup, lm_adapters)
            assert {a: b.get_indices_list()[:50] + [b.popcount()] for a, b in plan.items()} == lm_expected

    assert run_threads([worker("default"), worker("retain"), worker("balanced"), lm_worker]) == []


def test_concurrent_folding_is_correct():
    chunks, ranks, windows = 16384, 8, [-1, -1, -1, -1, 128, 128, 1, 1]
    width = ranks * len(windows)
    found = Bitmap(chunks * width, chunks * width)
    for gap in (chunks * width - 5, 9000 * width + 4 * ranks + 3, 12000 * width + 1):
        found.clear(gap)
    expected = bitplan.fold_unfold_ranked(found, chunks, ranks, windows)
    servable = bitplan.fold(found, chunks, ranks, windows)
    rows = bitplan.Grid.from_flat(found, width).rows()
    row_windows = [windows[k // ranks] for k in range(width)]
    expected_grouped = bitplan.fold_unfold_grouped(rows, row_windows)
    assert expected[0] == expected_grouped[0]

    lm_found = lmnative.Bitmap(chunks * width, chunks * width)
    for gap in (chunks * width - 5, 9000 * width + 4 * ranks + 3, 12000 * width + 1):
        lm_found.clear(gap)

    def worker():
        for _ in range(3):
            assert bitplan.fold_unfold_ranked(found, chunks, ranks, windows) == expected
            assert bitplan.fold(found, chunks, ranks, windows) == servable
            hit, out = bitplan.fold_unfold_grouped(rows, row_windows)
            assert hit == expected_grouped[0] and out == expected_grouped[1]
            lhit, lmask = bitmap_ops.fold_unfold_ranked(lm_found, chunks, ranks, windows)
            assert lhit == expected[0] and lmask.popcount() == expected[1].popcount()

    assert run_threads([worker] * 4) == []


def test_concurrent_grid_plans_are_correct():
    rows, cols = 64, 4096
    rnd = random.Random(5266)

    def rand_grid(density):
        return bitplan.Grid([Bitmap.from_indices(cols, [c for c in range(cols) if rnd.random() < density]) for _ in range(rows)])

    l1 = {0: rand_grid(0.5)}
    l2 = {0: rand_grid(0.7), 1: rand_grid(0.9), 2: bitplan.Grid([Bitmap(cols, cols) for _ in range(rows)])}
    windows = [-1] * 32 + [128] * 16 + [1] * 16
    expected = bitplan.plan_load(windows, cols, l1, l2)
    exp = (expected.hit, {i: g.to_flat().to_bytes() for i, g in expected.l1.items()}, {i: g.to_flat().to_bytes() for i, g in expected.l2.items()})

    def worker():
        for _ in range(3):
            p = bitplan.plan_load(windows, cols, l1, l2)
            assert (p.hit, {i: g.to_flat().to_bytes() for i, g in p.l1.items()}, {i: g.to_flat().to_bytes() for i, g in p.l2.items()}) == exp

    assert run_threads([worker] * 3) == []


# ---------------------------------------------------------------------------
# One bitmap, two threads
# ---------------------------------------------------------------------------


def test_mutating_a_bitmap_while_another_thread_reads_it():
    """Readers run long operations on ``a`` while a writer changes it. Each
    call either raises RuntimeError (PyO3's borrow check) or returns a
    result that is consistent with some state of ``a``; the process lives."""
    a = Bitmap(N, N // 2)
    other = Bitmap(N, N)
    stop = threading.Event()
    outcomes = {"ok": 0, "busy": 0}
    lock = threading.Lock()

    def note(key):
        with lock:
            outcomes[key] += 1

    def writer():
        i = 0
        while not stop.is_set() and i < 2000:
            try:
                if i % 2:
                    a.set_range(0, N // 2)
                    a.clear_range(N // 2, N)
                else:
                    a.set(N - 1)
                    a.clear(N - 1)
                note("ok")
            except RuntimeError:
                note("busy")
            i += 1

    def reader():
        for _ in range(20):
            try:
                count = a.popcount()
                assert count in (N // 2, N // 2 + 1)
                both = (a & other).popcount()
                assert both in (N // 2, N // 2 + 1)
                idx = a.indices_array()
                assert len(idx) in (N // 2, N // 2 + 1)
                note("ok")
            except RuntimeError:
                note("busy")
        stop.set()

    errors = run_threads([writer, reader, reader])
    assert errors == []
    assert outcomes["ok"] > 0
    assert a.popcount() in (N // 2, N // 2 + 1)


def test_in_place_operator_racing_with_a_reader():
    a = Bitmap(N, N)
    b = Bitmap(N, N)
    results = []

    def writer():
        for _ in range(20):
            try:
                nonlocal_a = a
                nonlocal_a &= b  # in place, same contents
            except RuntimeError:
                pass

    def reader():
        for _ in range(20):
            try:
                results.append((a | b).popcount())
            except RuntimeError:
                pass

    errors = run_threads([writer, reader, writer, reader])
    assert errors == []
    assert all(r == N for r in results)
    assert a.popcount() == N


def test_same_bitmap_on_both_sides_from_threads():
    a = Bitmap(N, N // 3)

    def worker():
        for _ in range(10):
            try:
                x = a
                x |= a
                x &= a
                assert a.popcount() == N // 3
            except RuntimeError:
                pass

    assert run_threads([worker] * 3) == []
    assert a.popcount() == N // 3


def test_buffer_view_while_another_thread_writes():
    a = Bitmap(N)
    view = memoryview(a)

    def writer():
        for i in range(0, N, N // 64):
            try:
                a.set(i)
            except RuntimeError:
                pass

    def reader():
        for _ in range(50):
            total = sum(view[k] != 0 for k in range(0, len(view), len(view) // 64))
            assert 0 <= total <= 64

    assert run_threads([writer, reader]) == []
    view.release()
    assert a.popcount() == 64


# ---------------------------------------------------------------------------
# A bitmap in use: deterministic. ``batched_set`` holds its bitmap while it
# reads the indices, so a generator that touches the bitmap meanwhile sees
# it "in use", exactly as another thread would during a long operation.
# ---------------------------------------------------------------------------

IN_USE_CALLS = {
    "a | b": lambda a, b: a | b,
    "b | a": lambda a, b: b | a,
    "a & b": lambda a, b: a & b,
    "a ^ b": lambda a, b: a ^ b,
    "a - b": lambda a, b: a - b,
    "~a": lambda a, b: ~a,
    "b |= a": lambda a, b: b.__ior__(a),
    "b &= a": lambda a, b: b.__iand__(a),
    "b -= a": lambda a, b: b.__isub__(a),
    "a.popcount()": lambda a, b: a.popcount(),
    "a.and_popcount(b)": lambda a, b: a.and_popcount(b),
    "a == b": lambda a, b: a == b,
    "a.set(0)": lambda a, b: a.set(0),
    "a.copy()": lambda a, b: a.copy(),
    "list(a)": lambda a, b: list(a),
}


def test_a_bitmap_in_use_is_a_runtime_error_for_every_call():
    """Every call on a bitmap that is in use elsewhere fails the same way:
    RuntimeError (PyO3's borrow check). A binary operator must not report
    "unsupported operand type(s) for |: 'Bitmap' and 'Bitmap'", which sends
    the caller looking for a type bug that is not there."""
    a = Bitmap(100)
    b = Bitmap(100, 10)
    outcomes = {}

    def indices():
        for name, call in IN_USE_CALLS.items():
            try:
                call(a, b)
                outcomes[name] = "ok"
            except Exception as e:  # noqa: BLE001 - classified below
                outcomes[name] = type(e).__name__
        yield 50

    a.batched_set(indices())
    assert a.get_indices_list() == [50]
    assert b.get_indices_list() == list(range(10))
    wrong = {name: kind for name, kind in outcomes.items() if kind != "RuntimeError"}
    assert wrong == {}


def test_an_lmcache_bitmap_in_use_is_a_runtime_error():
    a = lmnative.Bitmap(100)
    b = lmnative.Bitmap(100, 10)
    outcomes = {}

    def indices():
        for name, call in [("a | b", lambda: a | b), ("b & a", lambda: b & a), ("~a", lambda: ~a),
                           ("a.popcount()", lambda: a.popcount()), ("a.set(1)", lambda: a.set(1))]:
            try:
                call()
                outcomes[name] = "ok"
            except Exception as e:  # noqa: BLE001 - classified below
                outcomes[name] = type(e).__name__
        yield 50

    a.batched_set(indices())
    assert a.get_indices_list() == [50]
    # batched_set may read a generator before it takes the bitmap (then every call succeeds)
    assert set(outcomes.values()) <= {"RuntimeError", "ok"}
    assert len(set(outcomes.values())) == 1, outcomes


# ---------------------------------------------------------------------------
# Which calls release the GIL: counted by the extension itself
# (``_native._detached_calls()``, incremented inside every GIL-released
# section), so the verdict does not depend on the scheduler.
# ---------------------------------------------------------------------------

# 262,144 bits (4,096 words) is the threshold: 4 Mi bits is far above it,
# 2,048 bits far below.
LARGE, SMALL = N, 2048


def released_during(call):
    before = bitplan._native._detached_calls()
    call()
    return bitplan._native._detached_calls() - before


def flat_operands(n):
    a, b = Bitmap(n), Bitmap(n)
    a.set_range(0, n // 2)
    b.set_range(n // 4, n)
    lookup = {0: a, 1: b}
    return a, b, lookup, [AdapterDescriptor(0), AdapterDescriptor(1)]


FLAT_CALLS = {
    "a & b": lambda a, b, lookup, adapters: a & b,
    "a | b": lambda a, b, lookup, adapters: a | b,
    "a - b": lambda a, b, lookup, adapters: a - b,
    "~a": lambda a, b, lookup, adapters: ~a,
    "a.popcount()": lambda a, b, lookup, adapters: a.popcount(),
    "a.and_popcount(b)": lambda a, b, lookup, adapters: a.and_popcount(b),
    "a.indices_array()": lambda a, b, lookup, adapters: a.indices_array(),
    "default plan": lambda a, b, lookup, adapters: bitplan.create_prefetch_policy("default").select_load_plan(
        len(a), lookup, adapters
    ),
    "balanced plan": lambda a, b, lookup, adapters: bitplan.create_prefetch_policy("balanced").select_load_plan(
        len(a), lookup, adapters
    ),
}


@pytest.mark.parametrize("name", list(FLAT_CALLS))
def test_large_flat_operations_release_the_gil(name):
    operands = flat_operands(LARGE)
    assert released_during(lambda: FLAT_CALLS[name](*operands)) >= 1


@pytest.mark.parametrize("name", list(FLAT_CALLS))
def test_small_flat_operations_keep_the_gil(name):
    operands = flat_operands(SMALL)
    assert released_during(lambda: FLAT_CALLS[name](*operands)) == 0
