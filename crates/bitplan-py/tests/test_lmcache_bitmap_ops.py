"""``bitplan.lmcache.bitmap_ops``: LMCache's bitmap operations (fold, unfold,
their grouped and ranked forms, merge_bitmaps, select_retained; lmcache-notes
§2) one by one, LMCache's own test cases (notes §4), and the native functions
against the Python oracle of _models.py.

The native Bitmap itself is in test_lmcache_bitmap.py, the prefetch policies
in test_lmcache_policies.py."""

import random

import pytest

import bitplan
from bitplan.lmcache import bitmap_ops, native, prefetch_policy
from bitplan.lmcache.native import Bitmap

from _lmcache_helpers import from_str, lm
from _models import naive_fold_unfold_ranked


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
