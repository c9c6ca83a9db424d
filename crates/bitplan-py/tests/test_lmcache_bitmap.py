"""``bitplan.lmcache.native.Bitmap``: LMCache's bitmap semantics one by one
(the package docstring, lmcache-notes §1), LMCache's own test cases (notes §4)
and a hypothesis model of LMCache's byte array.

LMCache's bitmap operations are in test_lmcache_bitmap_ops.py, its prefetch
policies and their containers in test_lmcache_policies.py."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bitplan
from bitplan.lmcache import native
from bitplan.lmcache.native import Bitmap

from _lmcache_helpers import lm
from _models import indices_of, int_of
from _models import mask as _mask


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


def test_int_model_helpers_sanity():
    assert indices_of(int_of([0, 5, 64])) == [0, 5, 64]


# ===========================================================================
# Hypothesis: LMCache's Bitmap against an int model of LMCache's semantics
# ===========================================================================


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
