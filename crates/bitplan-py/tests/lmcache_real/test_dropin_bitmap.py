"""bitplan's ``Bitmap`` and fold kernels against the release's own
``lmcache.lmcache_native`` (issue #37, item 3): the same operations on both
give the same answers, the same errors, and the same bits, the stray bits
LMCache's byte loops leave past the size included (only
``highest_set_bit`` and ``copy`` show them)."""

from __future__ import annotations

import lmcache.lmcache_native as theirs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bitplan.lmcache import native as ours

SIZES = st.integers(0, 140)


def state(bitmap):
    return (
        bitmap.size(),
        len(bitmap),
        repr(bitmap),
        str(bitmap),
        bitmap.popcount(),
        bitmap.count_leading_ones(),
        bitmap.count_leading_zeros(),
        bitmap.highest_set_bit(),
        bitmap.get_indices_list(),
        bitmap.get_indices_set(),
    )


@st.composite
def bitmaps(draw, size=SIZES):
    n = draw(size)
    bits = draw(st.lists(st.integers(0, n + 10), max_size=n + 3))
    prefix = draw(st.none() | st.integers(0, n + 5))
    return n, bits, prefix


def build(module, spec):
    n, bits, prefix = spec
    bitmap = module.Bitmap(n) if prefix is None else module.Bitmap(n, prefix)
    bitmap.batched_set(bits)
    return bitmap


@given(bitmaps(), bitmaps(), st.lists(st.sampled_from(["and", "or", "invert", "copy"]), max_size=6))
def test_operations_give_the_same_bits(a, b, chain):
    x, y = build(theirs, a), build(ours, a)
    bx, by = build(theirs, b), build(ours, b)
    assert state(x) == state(y)
    for op in chain:
        if op == "and":
            x, y = x & bx, y & by
        elif op == "or":
            x, y = x | bx, y | by
        elif op == "invert":
            x, y = ~x, ~y
        else:
            x, y = x.copy(), y.copy()
        assert state(x) == state(y), op
    # The stray bits survive an `|` with the other operand again.
    assert state(bx | x) == state(by | y)


@given(bitmaps(), st.integers(0, 150), st.integers(0, 150), st.lists(st.integers(0, 150), max_size=20))
def test_single_bit_and_range_calls(a, start, end, items):
    x, y = build(theirs, a), build(ours, a)
    x.set_range(start, end)
    y.set_range(start, end)
    assert state(x) == state(y)
    for index in (start, end, 0):
        assert x.test(index) == y.test(index)
        x.clear(index)
        y.clear(index)
        assert state(x) == state(y)
        x.set(index)
        y.set(index)
        assert state(x) == state(y)
    assert x.gather(items) == y.gather(items)
    assert x.gather(tuple(items)) == y.gather(tuple(items))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.Bitmap(-1),
        lambda m: m.Bitmap(4, -1),
        lambda m: m.Bitmap(4).set(-1),
        lambda m: m.Bitmap(4).test(-2),
        lambda m: m.Bitmap(4).clear(-1),
        lambda m: m.Bitmap(4).set_range(-1, 2),
        lambda m: m.Bitmap(4).batched_set([1, -1]),
        lambda m: m.Bitmap(4).batched_set(None),
        lambda m: m.Bitmap("4"),
        lambda m: m.Bitmap(4) & 1,
        lambda m: m.fold_grouped([m.Bitmap(2), m.Bitmap(3)], [-1, -1]),
        lambda m: m.fold_grouped([m.Bitmap(2)], [-1, 2]),
        lambda m: m.unfold(-1, 2, 1, [-1]),
        lambda m: m.unfold_grouped(-1, 2, [-1]),
    ],
)
def test_bad_input_raises_what_lmcache_raises(call):
    assert outcome(call, ours) == outcome(call, theirs)


def outcome(call, module):
    """What a call does: the type of what it raised, or its answer."""
    try:
        answer = call(module)
    except Exception as error:  # noqa: BLE001 - compared below
        return ("raised", type(error).__name__)
    if isinstance(answer, list):
        return ("answered", [state(bitmap) for bitmap in answer])
    return ("answered", state(answer) if hasattr(answer, "popcount") else answer)


@given(
    st.integers(0, 12),
    st.integers(1, 4),
    st.lists(st.sampled_from([-1, 0, 1, 2, 3, -5]), min_size=1, max_size=4),
    st.data(),
)
def test_fold_kernels(chunks, ranks, windows, data):
    n = chunks * len(windows) * ranks
    present = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    found = [i for i, bit in enumerate(present) if bit]
    x, y = theirs.Bitmap(n), ours.Bitmap(n)
    x.batched_set(found)
    y.batched_set(found)
    assert state(theirs.fold(x, chunks, ranks, windows)) == state(ours.fold(y, chunks, ranks, windows))
    hit = data.draw(st.integers(0, chunks + 2))
    assert state(theirs.unfold(hit, chunks, ranks, windows)) == state(ours.unfold(hit, chunks, ranks, windows))
    rows = [data.draw(st.lists(st.integers(0, chunks), max_size=chunks)) for _ in windows]
    rx, ry = [theirs.Bitmap(chunks) for _ in windows], [ours.Bitmap(chunks) for _ in windows]
    for bits, a, b in zip(rows, rx, ry):
        a.batched_set(bits)
        b.batched_set(bits)
    assert state(theirs.fold_grouped(rx, windows)) == state(ours.fold_grouped(ry, windows))
    for a, b in zip(theirs.unfold_grouped(hit, chunks, windows), ours.unfold_grouped(hit, chunks, windows)):
        assert state(a) == state(b)


@given(
    st.integers(0, 10),
    st.lists(st.sampled_from([-1, 1, 2, 3]), min_size=1, max_size=5),
    st.lists(st.integers(0, 20), max_size=5),
    st.data(),
)
def test_lmcache_bitmap_ops_through_bitplan(chunks, windows, sizes, data):
    """LMCache's own ``bitmap_ops`` wrappers, before and after the switch
    (after it they call bitplan's kernels and build bitplan's bitmaps)."""
    import importlib

    import bitplan.lmcache.integration as integration

    # The package's name `fold` is the function; the module is its own.
    fold_module = importlib.import_module("lmcache.v1.distributed.bitmap_ops.fold")

    rows = [data.draw(st.lists(st.integers(0, chunks), max_size=chunks + 1)) for _ in windows]
    merged_inputs = [(n, data.draw(st.lists(st.integers(0, n + 2), max_size=n + 1))) for n in sizes]
    num_keys = data.draw(st.integers(0, 24))

    def run():
        bitmap = fold_module.Bitmap
        grid = []
        for bits in rows:
            row = bitmap(chunks)
            row.batched_set(bits)
            grid.append(row)
        hit, retain = fold_module.fold_unfold_grouped(grid, windows)
        inputs = []
        for n, bits in merged_inputs:
            one = bitmap(n)
            one.batched_set(bits)
            inputs.append(one)
        merged = fold_module.merge_bitmaps(inputs, num_keys)
        common = fold_module.all_grouped(grid)
        return hit, [state(r) for r in retain], state(merged), [state(c) for c in common]

    integration.uninstall()
    stock = run()
    integration.install()
    try:
        assert fold_module.Bitmap is ours.Bitmap
        assert run() == stock
    finally:
        integration.uninstall()
