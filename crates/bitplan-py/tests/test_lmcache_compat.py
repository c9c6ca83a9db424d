"""``bitplan.lmcache``: LMCache's semantics one by one (the package
docstring, lmcache-notes §1-§3), and LMCache's own test cases (notes §4)
through the compat modules."""

import logging
import random

import pytest

import bitplan
from bitplan.lmcache import bitmap_ops, native, prefetch_policy
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

from _models import indices_of, int_of, naive_fold_unfold_ranked


def lm(n, *indices):
    b = Bitmap(n)
    for i in indices:
        b.set(i)
    return b


def from_str(s):
    b = Bitmap(len(s))
    for i, c in enumerate(s):
        if c == "1":
            b.set(i)
    return b


# ===========================================================================
# §1 native Bitmap (tests/v1/lmcache_native/test_bitmap.py)
# ===========================================================================


def test_module_names():
    assert set(native.__all__) >= {"Bitmap", "fold", "unfold", "fold_grouped", "unfold_grouped"}
    for name in native.__all__:
        assert callable(getattr(native, name))
    assert bitplan.lmcache.native is native


@pytest.mark.parametrize("size", [1, 7, 8, 9, 10, 15, 16, 17, 24, 25])
def test_set_clear_test(size):
    b = Bitmap(size)
    assert b.popcount() == 0
    assert all(not b.test(i) for i in range(size))
    for i in range(size):
        b.set(i)
        assert b.test(i)
        assert b.popcount() == i + 1
    for i in range(size):
        b.clear(i)
        assert not b.test(i)
    assert b.popcount() == 0


def test_out_of_range_is_a_no_op():
    b = Bitmap(10, 3)
    b.set(10)
    b.set(1000)
    b.clear(10)
    b.clear(2**40)
    assert not b.test(10)
    assert not b.test(2**40)
    assert b.get_indices_list() == [0, 1, 2]
    z = Bitmap(0)
    z.set(0)
    z.clear(0)
    assert not z.test(0)
    assert z.popcount() == 0


@pytest.mark.parametrize("call", ["set", "clear", "test"])
def test_negative_index_is_type_error(call):
    b = Bitmap(10, 3)
    with pytest.raises(TypeError):
        getattr(b, call)(-1)
    assert b.get_indices_list() == [0, 1, 2]


def test_negative_size_and_ranges_are_type_errors():
    with pytest.raises(TypeError):
        Bitmap(-1)
    with pytest.raises(TypeError):
        Bitmap(4, -1)
    b = Bitmap(10)
    with pytest.raises(TypeError):
        b.set_range(-1, 3)
    with pytest.raises(TypeError):
        b.set_range(0, -3)
    with pytest.raises(TypeError):
        b.batched_set([1, -2])
    assert b.popcount() == 0


def test_set_range_matches_per_bit_set_500_random_cases():
    rnd = random.Random(2563)
    for _ in range(500):
        size = rnd.randint(0, 200)
        start = rnd.randint(0, size + 20)
        end = rnd.randint(0, size + 20)
        a = Bitmap(size)
        a.set_range(start, end)
        b = Bitmap(size)
        for i in range(start, end):
            b.set(i)
        assert a.get_indices_list() == b.get_indices_list(), (size, start, end)
        expected = list(range(min(start, size), min(end, size))) if start < end else []
        assert a.get_indices_list() == expected, (size, start, end)


@pytest.mark.parametrize(
    "n,start,end,expected",
    [(16, 3, 3, []), (16, 0, 0, []), (16, 2, 5, [2, 3, 4]), (16, 0, 8, list(range(8))), (16, 0, 16, list(range(16))),
     (24, 3, 20, list(range(3, 20))), (24, 8, 16, list(range(8, 16))), (10, 5, 100, list(range(5, 10))), (10, 9, 10, [9]),
     (10, 100, 200, []), (10, 7, 3, [])],
)
def test_set_range_clamps(n, start, end, expected):
    b = Bitmap(n)
    b.set_range(start, end)
    assert b.get_indices_list() == expected
    assert b.popcount() == len(expected)


def test_popcount_clz_clo():
    b = Bitmap(9)
    b.set(8)
    assert b.count_leading_zeros() == 8 and b.count_leading_ones() == 0
    b = Bitmap(9)
    b.set_range(0, 3)
    assert b.count_leading_ones() == 3 and b.count_leading_zeros() == 0
    b = Bitmap(9)
    assert b.count_leading_zeros() == 9 and b.count_leading_ones() == 0
    b = Bitmap(9, 9)
    assert b.count_leading_ones() == 9 and b.count_leading_zeros() == 0
    assert Bitmap(0).count_leading_zeros() == 0 and Bitmap(0).count_leading_ones() == 0
    assert Bitmap(130, 70).popcount() == 70


@pytest.mark.parametrize("sa,sb", [(10, 20), (20, 10), (13, 64), (64, 65), (7, 9), (100, 100)])
def test_and_or_truncate_to_the_shorter_size(sa, sb):
    a = Bitmap(sa, sa)
    b = Bitmap(sb, sb)
    m = min(sa, sb)
    for r, op in ((a & b, "and"), (a | b, "or")):
        assert r.size() == m and len(r) == m
        assert r.popcount() == m
        assert r.get_indices_list() == list(range(m))
        # LMCache 0.5.6's byte loop: `|` keeps the longer operand's bits in
        # the rest of the last byte, which its highest_set_bit finds.
        stray = op == "or" and sa != sb
        assert r.highest_set_bit() == (min((m + 7) // 8 * 8, max(sa, sb)) - 1 if stray else m - 1)
        assert r.count_leading_ones() == m
        assert repr(r) == "1" * m
        assert r is not a and r is not b
    x = lm(sa, *range(0, sa, 3))
    y = lm(sb, *range(0, sb, 2))
    assert (x & y).get_indices_list() == [i for i in range(m) if i % 6 == 0]
    assert (x | y).get_indices_list() == [i for i in range(m) if i % 3 == 0 or i % 2 == 0]


def test_or_leaves_lmcache_stray_bits():
    # LMCache 0.5.6 ORs whole bytes: the longer operand's bits past the
    # shorter size stay in the last byte, seen only by highest_set_bit and
    # kept by copy; `~` masks them.
    a = Bitmap(10)
    b = Bitmap(16, 16)
    r = a | b
    assert r.size() == 10
    assert r.highest_set_bit() == 15
    assert r.copy().highest_set_bit() == 15
    assert r.popcount() == 10 and r.get_indices_list() == list(range(10))
    assert (~r).popcount() == 0 and (~r).highest_set_bit() == -1
    r2 = b | a
    assert r2.highest_set_bit() == 15 and r2.popcount() == 10
    assert (Bitmap(10) & b).highest_set_bit() == -1


def test_invert_masks_the_tail():
    for n in [0, 1, 5, 8, 9, 63, 64, 65, 100]:
        b = lm(n, *range(0, n, 4))
        inv = ~b
        assert inv.size() == n
        assert inv.get_indices_list() == [i for i in range(n) if i % 4]
        assert inv.popcount() == n - len(range(0, n, 4))
        assert (~Bitmap(n)).popcount() == n
        assert (~Bitmap(n)).highest_set_bit() == n - 1


def test_repr_and_str():
    b = Bitmap(10)
    b.set(0)
    b.set(9)
    assert repr(b) == "1000000001"
    assert str(b) == "1000000001"
    assert repr(Bitmap(0)) == "" and str(Bitmap(0)) == ""
    assert str(Bitmap(5, 2)) == "11000"


def test_get_indices_list_and_set():
    b = lm(100, 3, 64, 99, 0)
    assert b.get_indices_list() == [0, 3, 64, 99]
    assert b.get_indices_set() == {0, 3, 64, 99}
    assert isinstance(b.get_indices_set(), set)
    assert Bitmap(5).get_indices_set() == set()


def test_gather():
    b = lm(5, 0, 2, 4)
    assert b.gather(["a", "b", "c", "d", "e"]) == ["a", "c", "e"]
    assert b.gather(("a", "b", "c", "d", "e")) == ["a", "c", "e"]
    # items past the sequence's end are skipped
    assert b.gather(["a", "b", "c"]) == ["a", "c"]
    assert b.gather([]) == []
    assert Bitmap(3).gather([1, 2, 3]) == []
    assert lm(3, 0, 1, 2).gather([1, 2, 3, 4, 5]) == [1, 2, 3]


def test_prefix_constructor_clamps():
    assert Bitmap(5, 100).popcount() == 5
    assert repr(Bitmap(5, 100)) == "11111"
    assert Bitmap(0, 0).popcount() == 0
    assert Bitmap(0, 0).size() == 0
    assert repr(Bitmap(10, 3)) == "1110000000"
    assert Bitmap(10, 0).popcount() == 0


@pytest.mark.parametrize("size", [3, 7, 9, 13, 17, 23, 100])
def test_sizes_not_a_multiple_of_8(size):
    b = Bitmap(size, size)
    assert b.popcount() == size
    assert (~b).popcount() == 0
    assert b.highest_set_bit() == size - 1


def test_batched_set():
    b = Bitmap(10)
    b.batched_set([1, 3, 100, 10, 3, 3])
    assert b.get_indices_list() == [1, 3]
    b.batched_set((5, 6))
    assert b.get_indices_list() == [1, 3, 5, 6]
    b.batched_set([])
    b.batched_set([2**40])
    assert b.get_indices_list() == [1, 3, 5, 6]


def test_size_copy_len_highest_set_bit():
    b = lm(70, 1, 69)
    assert b.size() == 70 and len(b) == 70
    c = b.copy()
    assert c is not b
    assert c.get_indices_list() == [1, 69]
    c.set(5)
    assert not b.test(5)
    assert b.highest_set_bit() == 69
    assert Bitmap(70).highest_set_bit() == -1
    assert Bitmap(0).highest_set_bit() == -1


def test_equality_is_identity():
    a = Bitmap(4, 2)
    b = Bitmap(4, 2)
    assert a == a
    assert not (a == b)
    assert a != b
    assert len({a, b}) == 2  # hashable by identity, as a pybind11 object
    assert hash(a) == hash(a)


def test_or_assign_rebinds_and_leaves_the_original_unchanged():
    a = Bitmap(8, 2)
    original = a
    b = lm(8, 5)
    a |= b
    assert a is not original
    assert a.get_indices_list() == [0, 1, 5]
    assert original.get_indices_list() == [0, 1]
    a &= lm(8, 5)
    assert a.get_indices_list() == [5]
    assert original.get_indices_list() == [0, 1]


# ===========================================================================
# §2 bitmap_ops (tests/v1/distributed/test_bitmap_ops.py)
# ===========================================================================

OLD_AND_NEW_EXPORTS = [
    "FULL_ATTENTION_WINDOW", "fold", "fold_grouped", "fold_unfold_grouped", "highest_set_bit", "merge_bitmaps",
    "unfold", "unfold_grouped", "unfold_range", "fold_unfold", "fold_unfold_ranked", "select_retained", "TrimPolicy",
]


def test_exports():
    for name in OLD_AND_NEW_EXPORTS:
        assert hasattr(bitmap_ops, name), name
    from bitplan.lmcache.bitmap_ops import (  # noqa: F401
        FULL_ATTENTION_WINDOW,
        TrimPolicy,
        fold,
        fold_grouped,
        fold_unfold,
        fold_unfold_grouped,
        fold_unfold_ranked,
        highest_set_bit,
        merge_bitmaps,
        select_retained,
        unfold,
        unfold_grouped,
        unfold_range,
    )

    assert FULL_ATTENTION_WINDOW == -1
    assert prefetch_policy.FULL_ATTENTION_WINDOW_CHUNKS == -1
    assert {m.name for m in TrimPolicy} == {"PREFIX", "SEGMENTED_PREFIX", "SPARSE"}
    assert TrimPolicy.PREFIX is bitplan.TrimPolicy.PREFIX


def flat(chunks, groups, ranks, present):
    b = Bitmap(chunks * groups * ranks)
    for i in range(chunks * groups * ranks):
        if present(i // (groups * ranks), i % (groups * ranks) // ranks, i % ranks):
            b.set(i)
    return b


def test_results_are_lmcache_bitmaps():
    found = flat(5, 2, 1, lambda j, g, _: j <= 3 if g == 0 else j >= 2)
    assert type(bitmap_ops.fold(found, 5, 1, [-1, 2])) is Bitmap
    hit, mask = bitmap_ops.fold_unfold(found, 5, [-1, 2])
    assert type(mask) is Bitmap
    assert (hit, mask.get_indices_list()) == (4, [0, 2, 4, 5, 6, 7])
    assert type(bitmap_ops.unfold(4, 5, 1, [-1, 2])) is Bitmap
    rows = bitmap_ops.unfold_grouped(4, 5, [-1, 2])
    assert all(type(r) is Bitmap for r in rows)
    assert type(bitmap_ops.merge_bitmaps([found], found.size())) is Bitmap
    assert type(bitmap_ops.select_retained(found, 10)) is Bitmap


def test_unfold_range():
    assert bitmap_ops.unfold_range(0, -1) == (0, 0)
    assert bitmap_ops.unfold_range(-3, 2) == (0, 0)
    assert bitmap_ops.unfold_range(5, -1) == (0, 5)
    assert bitmap_ops.unfold_range(5, 2) == (3, 5)
    assert bitmap_ops.unfold_range(5, 9) == (0, 5)


def test_single_full_group_equals_leading_ones():
    for prefix in [0, 1, 17, 50]:
        found = Bitmap(50, prefix)
        found.set(prefix + 2) if prefix + 2 < 50 else None
        hit, mask = bitmap_ops.fold_unfold(found, 50, [-1])
        assert hit == found.count_leading_ones()
        assert mask.get_indices_list() == list(range(hit))


def test_all_full_intersection():
    leading = [12, 30, 7]
    found = flat(40, 3, 1, lambda j, g, _: j < leading[g])
    hit, mask = bitmap_ops.fold_unfold(found, 40, [-1, -1, -1])
    assert hit == 7
    assert mask.get_indices_list() == list(range(21))


def test_worked_examples():
    found = flat(6, 2, 1, lambda j, g, _: g == 0 or j >= 4)
    assert bitmap_ops.fold_unfold(found, 6, [-1, 2])[0] == 6
    for last in range(8):
        f = Bitmap(8)
        f.set(last)
        assert bitmap_ops.fold_unfold(f, 8, [1])[0] == last + 1
    found = Bitmap(5)
    for i in (0, 1, 3, 4):
        found.set(i)
    assert bitmap_ops.fold(found, 5, 1, [2]).get_indices_list() == [0, 1, 4]
    assert bitmap_ops.unfold(99, 3, 1, [-1]).get_indices_list() == [0, 1, 2]


def test_ranked_rule():
    found = flat(6, 1, 4, lambda j, _, r: not (j == 3 and r == 2))
    hit, mask = bitmap_ops.fold_unfold_ranked(found, 6, 4, [-1])
    assert hit == 3
    assert mask.get_indices_list() == list(range(12))


def test_zero_chunks():
    hit, mask = bitmap_ops.fold_unfold(Bitmap(0), 0, [-1, 2])
    assert hit == 0
    assert mask.size() == 0 and mask.get_indices_list() == []
    hit, rows = bitmap_ops.fold_unfold_grouped([Bitmap(0), Bitmap(0)], [-1, 2])
    assert hit == 0 and [r.size() for r in rows] == [0, 0]


_FOUND = Bitmap(8, 8)
BITMAP_OPS_VALUE_ERRORS = {
    "fold R=0": lambda: bitmap_ops.fold(_FOUND, 4, 0, [-1]),
    "fold R=-1": lambda: bitmap_ops.fold(_FOUND, 4, -1, [-1]),
    "unfold R=0": lambda: bitmap_ops.unfold(2, 4, 0, [-1]),
    "unfold R=-1": lambda: bitmap_ops.unfold(2, 4, -1, [-1]),
    "fold no windows": lambda: bitmap_ops.fold(_FOUND, 4, 1, []),
    "unfold no windows": lambda: bitmap_ops.unfold(2, 4, 1, []),
    "fold C<0": lambda: bitmap_ops.fold(_FOUND, -1, 1, [-1]),
    "unfold C<0": lambda: bitmap_ops.unfold(2, -1, 1, [-1]),
    "fold_unfold no windows": lambda: bitmap_ops.fold_unfold(_FOUND, 4, []),
    "fold_unfold C<0": lambda: bitmap_ops.fold_unfold(_FOUND, -1, [-1]),
    "fold_unfold_ranked R=0": lambda: bitmap_ops.fold_unfold_ranked(_FOUND, 4, 0, [-1]),
    "fold_unfold_ranked R=-1": lambda: bitmap_ops.fold_unfold_ranked(_FOUND, 4, -1, [-1]),
    "fold_unfold_ranked C<0": lambda: bitmap_ops.fold_unfold_ranked(_FOUND, -1, 1, [-1]),
    "fold_grouped empty": lambda: bitmap_ops.fold_grouped([], []),
    "fold_grouped no windows": lambda: bitmap_ops.fold_grouped([Bitmap(4)], []),
    "fold_grouped ragged": lambda: bitmap_ops.fold_grouped([Bitmap(4), Bitmap(5)], [-1, -1]),
    "fold_grouped miscounted": lambda: bitmap_ops.fold_grouped([Bitmap(4), Bitmap(4)], [-1]),
    "fold_unfold_grouped ragged": lambda: bitmap_ops.fold_unfold_grouped([Bitmap(4), Bitmap(5)], [-1, -1]),
    "fold_unfold_grouped empty": lambda: bitmap_ops.fold_unfold_grouped([], []),
    "unfold_grouped no windows": lambda: bitmap_ops.unfold_grouped(2, 4, []),
    "unfold_grouped C<0": lambda: bitmap_ops.unfold_grouped(2, -1, [-1]),
    "native fold_grouped ragged": lambda: native.fold_grouped([Bitmap(4), Bitmap(5)], [-1, -1]),
    "native fold_grouped empty": lambda: native.fold_grouped([], []),
}


@pytest.mark.parametrize("case", sorted(BITMAP_OPS_VALUE_ERRORS))
def test_value_errors(case):
    """LMCache's bitmap_ops wrappers check R < 1, empty windows and C < 0
    before the native call, so each is a ValueError (not pybind's TypeError)."""
    with pytest.raises(ValueError):
        BITMAP_OPS_VALUE_ERRORS[case]()


def test_native_functions_refuse_negative_sizes_as_pybind_does():
    """lmcache_native's functions take size_t: a negative count is pybind11's
    TypeError there (only the bitmap_ops wrappers turn R < 1 and C < 0 into
    ValueError before calling them)."""
    with pytest.raises(TypeError):
        native.fold(Bitmap(8, 8), -1, 1, [-1])
    with pytest.raises(TypeError):
        native.unfold(-1, 3, 1, [-1])
    with pytest.raises(TypeError):
        native.unfold_grouped(-1, 3, [-1])


def test_negative_hit_length_is_type_error():
    with pytest.raises(TypeError):
        bitmap_ops.unfold(-1, 3, 1, [-1])


def test_select_retained():
    found = from_str("1101")
    r = bitmap_ops.select_retained(found, 4)
    assert repr(r) == "1100" and r is not found
    assert repr(bitmap_ops.select_retained(found, 9, bitmap_ops.TrimPolicy.PREFIX)) == "110000000"
    assert bitmap_ops.select_retained(found, 4, bitmap_ops.TrimPolicy.SEGMENTED_PREFIX) is found
    assert bitmap_ops.select_retained(found, 4, bitmap_ops.TrimPolicy.SPARSE) is found
    assert bitmap_ops.select_retained(found, 99, bitmap_ops.TrimPolicy.SPARSE) is found


def test_merge_bitmaps_shrinks_to_the_shortest():
    a = from_str("1000001")
    b = from_str("0110")
    m = bitmap_ops.merge_bitmaps([a, b], 7)
    assert m.size() == 4 and repr(m) == "1110"
    assert repr(bitmap_ops.merge_bitmaps([a, b], 5)) == "1110"
    assert repr(bitmap_ops.merge_bitmaps([a], 5)) == "10000"
    assert bitmap_ops.merge_bitmaps([a], 70).get_indices_list() == [0, 6]
    assert bitmap_ops.merge_bitmaps([a], 70).size() == 7
    e = bitmap_ops.merge_bitmaps([], 4)
    assert e.size() == 4 and e.popcount() == 0
    assert bitmap_ops.merge_bitmaps(iter([a, a]), 7).get_indices_list() == [0, 6]
    assert a.get_indices_list() == [0, 6]


def test_highest_set_bit():
    assert bitmap_ops.highest_set_bit(Bitmap(9)) == -1
    assert bitmap_ops.highest_set_bit(lm(9, 0, 4)) == 4
    assert bitmap_ops.highest_set_bit(bitmap_ops.fold(Bitmap(12, 12), 12, 1, [-1])) == 11


def test_native_matches_the_oracle_on_deterministic_patterns():
    for chunks in [0, 1, 7, 64, 65, 300]:
        for ranks in range(1, 5):
            for windows in ([-1], [-1, 2], [3, 1, -1, 0, 17]):
                groups = len(windows)
                found = flat(chunks, groups, ranks, lambda j, g, r: (j * 7 + g * 3 + r) % 23 != 0)
                hit, mask = bitmap_ops.fold_unfold_ranked(found, chunks, ranks, windows)
                ehit, emask = naive_fold_unfold_ranked(set(found.get_indices_list()), chunks, ranks, windows)
                assert (hit, mask.get_indices_list()) == (ehit, emask), (chunks, ranks, windows)


def test_single_gap_sweeps():
    for chunks, ranks, windows in [(20, 2, [0, -7]), (17, 3, [-1, 3, 1])]:
        width = len(windows) * ranks
        n = chunks * width
        for gap in range(n):
            found = Bitmap(n, n)
            found.clear(gap)
            hit, mask = bitmap_ops.fold_unfold_ranked(found, chunks, ranks, windows)
            ehit, emask = naive_fold_unfold_ranked(set(found.get_indices_list()), chunks, ranks, windows)
            assert (hit, mask.get_indices_list()) == (ehit, emask)
            if all(w <= 0 for w in windows):
                assert hit == gap // width
                assert mask.get_indices_list() == list(range(hit * width))


def test_adversarial_case():
    def present(j, g, r):
        return not ((j == 150 and g == 0) or (j == 220 and g == 1 and r == 2) or (10 <= j <= 12 and g == 2) or (j == 130 and g == 3))

    found = flat(300, 5, 4, present)
    assert bitmap_ops.fold_unfold_ranked(found, 300, 4, [-1, -1, 8, 32, 1])[0] == 130


def test_grouped_matches_flat():
    rnd = random.Random(5244)
    for _ in range(30):
        chunks, ranks = rnd.randint(0, 60), rnd.randint(1, 4)
        windows = [rnd.choice([-1, 1, 2, 5, 17]) for _ in range(rnd.randint(1, 4))]
        width = len(windows) * ranks
        found = flat(chunks, len(windows), ranks, lambda j, g, r: rnd.random() < 0.9)
        rows = []
        for k in range(width):
            row = Bitmap(chunks)
            for j in range(chunks):
                if found.test(j * width + k):
                    row.set(j)
            rows.append(row)
        row_windows = [windows[k // ranks] for k in range(width)]
        hit, mask = bitmap_ops.fold_unfold_ranked(found, chunks, ranks, windows)
        ghit, grows = bitmap_ops.fold_unfold_grouped(rows, row_windows)
        assert hit == ghit
        assert [r.get_indices_list() for r in grows] == [
            [j for j in range(chunks) if mask.test(j * width + k)] for k in range(width)
        ]
        assert bitmap_ops.fold_grouped(rows, row_windows).get_indices_list() == bitmap_ops.fold(found, chunks, ranks, windows).get_indices_list()


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


def test_int_model_helpers_sanity():
    assert indices_of(int_of([0, 5, 64])) == [0, 5, 64]


# ===========================================================================
# Hypothesis: LMCache's Bitmap against an int model of LMCache's semantics
# ===========================================================================

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from _models import mask as _mask  # noqa: E402


@st.composite
def lm_ops(draw):
    n = draw(st.one_of(st.integers(0, 200), st.integers(0, 2000)))
    prefix = draw(st.integers(0, n + 50))
    ops = []
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["set", "clear", "set_range", "batched_set", "and", "or", "invert", "test"]))
        if kind in ("set", "clear", "test"):
            ops.append((kind, draw(st.integers(0, n + 70))))
        elif kind == "set_range":
            ops.append((kind, (draw(st.integers(0, n + 70)), draw(st.integers(0, n + 70)))))
        elif kind == "batched_set":
            ops.append((kind, draw(st.lists(st.integers(0, n + 70), max_size=20))))
        elif kind in ("and", "or"):
            m = draw(st.one_of(st.just(n), st.integers(0, n + 70)))
            ops.append((kind, (m, draw(st.integers(0, _mask(m))) if m else 0)))
        else:
            ops.append((kind, None))
    return n, prefix, ops


@settings(max_examples=80)
@given(lm_ops())
def test_lmcache_bitmap_matches_the_lmcache_model(case):
    # `u` is LMCache's byte array: the bits within the size, and past it the
    # stray bits its `&`/`|` byte loop leaves in the last byte.
    n, prefix, ops = case
    b = Bitmap(n, prefix)
    u = _mask(min(prefix, n))
    for kind, p in ops:
        if kind == "set":
            b.set(p)
            if p < n:
                u |= 1 << p
        elif kind == "clear":
            b.clear(p)
            if p < n:
                u &= ~(1 << p)
        elif kind == "test":
            assert b.test(p) == (p < n and bool(u >> p & 1))
        elif kind == "set_range":
            s, e = p
            b.set_range(s, e)
            e = min(e, n)
            if s < e:
                u |= _mask(e) & ~_mask(s)
        elif kind == "batched_set":
            b.batched_set(p)
            for i in p:
                if i < n:
                    u |= 1 << i
        elif kind == "invert":
            b = ~b
            u = ~u & _mask(n)
        else:
            m, w = p
            other = Bitmap(m)
            other.batched_set(indices_of(w))
            before = b
            b = (b & other) if kind == "and" else (b | other)
            assert b is not before
            n = min(n, m)
            u = ((u & w) if kind == "and" else (u | w)) & _mask((n + 7) // 8 * 8)
        v = u & _mask(n)
        assert b.size() == n and len(b) == n
        assert b.get_indices_list() == indices_of(v)
        assert b.get_indices_set() == set(indices_of(v))
        assert b.popcount() == bin(v).count("1")
        assert b.highest_set_bit() == u.bit_length() - 1
        assert repr(b) == "".join("1" if v >> i & 1 else "0" for i in range(n))
    v = u & _mask(n)
    lead = 0
    while lead < n and v >> lead & 1:
        lead += 1
    assert b.count_leading_ones() == lead
    zeros = 0
    while zeros < n and not v >> zeros & 1:
        zeros += 1
    assert b.count_leading_zeros() == zeros
    items = list(range(n + 3))
    assert b.gather(items) == indices_of(v)
    assert b.gather(items[: n // 2]) == [i for i in indices_of(v) if i < n // 2]


def test_set_range_to_maxsize_clamps():
    import sys

    b = Bitmap(10)
    b.set_range(3, sys.maxsize)
    assert b.get_indices_list() == list(range(3, 10))
    b = Bitmap(10)
    b.set_range(sys.maxsize, sys.maxsize)
    assert b.popcount() == 0


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
