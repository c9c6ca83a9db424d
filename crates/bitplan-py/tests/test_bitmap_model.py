"""Hypothesis: ``bitplan.Bitmap`` against a pure-Python model (an ``int``,
bit i = bit i of the bitmap), over random sizes and operation sequences."""

import pickle

import numpy
from hypothesis import given, settings
from hypothesis import strategies as st

from bitplan import Bitmap

from _models import bitstring, indices_of, leading_ones, lm_bytes, mask

sizes = st.one_of(st.integers(0, 300), st.integers(0, 300), st.integers(300, 5000))


@st.composite
def sized_value(draw, n=None):
    if n is None:
        n = draw(sizes)
    kind = draw(st.sampled_from(["random", "sparse", "dense", "prefix", "empty", "full"]))
    if kind == "random":
        value = draw(st.integers(0, mask(n))) if n else 0
    elif kind == "sparse":
        value = 0
        for i in draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=8)) if n else []:
            value |= 1 << i
    elif kind == "dense":
        value = mask(n)
        for i in draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=8)) if n else []:
            value &= ~(1 << i)
    elif kind == "prefix":
        value = mask(draw(st.integers(0, n)))
    elif kind == "empty":
        value = 0
    else:
        value = mask(n)
    return n, value


def make(n, value):
    return Bitmap.from_indices(n, indices_of(value))


def check(b, n, value):
    assert len(b) == n
    assert b.get_indices_list() == indices_of(value)
    assert b.popcount() == bin(value).count("1")


@given(sized_value())
def test_queries_match_the_model(nv):
    n, v = nv
    b = make(n, v)
    check(b, n, v)
    idx = indices_of(v)
    assert list(b) == idx
    assert b.indices_array().tolist() == idx
    assert b.count_leading_ones() == leading_ones(v, n)
    assert b.count_leading_zeros() == leading_ones(~v & mask(n), n)
    assert b.highest_set_bit() == (v.bit_length() - 1)
    assert b.first_set() == (idx[0] if idx else None)
    assert b.last_set() == (idx[-1] if idx else None)
    assert b.any() == (v != 0)
    assert b.all() == (v == mask(n))
    assert str(b) == bitstring(v, n)
    # (`repr` abbreviates past 1000 bits: test_bitmap.py.)
    if n <= 1000:
        assert repr(b) == str(b)
    else:
        assert repr(b).startswith(f"Bitmap(len={n}, popcount={len(idx)}, bits=")
    assert b.to_bytes() == lm_bytes(v, n)
    words = numpy.frombuffer(b, dtype=numpy.uint64).tolist()
    assert len(words) == (n + 63) // 64
    assert sum(w << (64 * k) for k, w in enumerate(words)) == v
    assert Bitmap.from_bytes(n, b.to_bytes()) == b
    assert Bitmap.from_bitstring(str(b)) == b
    assert Bitmap.from_bools([bool(v >> i & 1) for i in range(n)]) == b
    assert pickle.loads(pickle.dumps(b)) == b
    for i in range(0, n, max(1, n // 17)):
        assert b.test(i) == bool(v >> i & 1)
        assert b[i - n] == bool(v >> i & 1)


@given(sized_value(), st.data())
def test_count_range_matches(nv, data):
    n, v = nv
    b = make(n, v)
    start = data.draw(st.integers(0, n))
    end = data.draw(st.integers(start, n))
    assert b.count_range(start, end) == bin(v & mask(end) & ~mask(start)).count("1")


@st.composite
def two_same_size(draw):
    n, a = draw(sized_value())
    _, b = draw(sized_value(n))
    return n, a, b


@given(two_same_size())
def test_binary_operators_match(nab):
    n, a, b = nab
    x, y = make(n, a), make(n, b)
    check(x & y, n, a & b)
    check(x | y, n, a | b)
    check(x ^ y, n, a ^ b)
    check(x - y, n, a & ~b)
    check(~x, n, ~a & mask(n))
    assert x.and_popcount(y) == bin(a & b).count("1")
    assert x.or_popcount(y) == bin(a | b).count("1")
    assert x.xor_popcount(y) == bin(a ^ b).count("1")
    assert x.and_not_popcount(y) == bin(a & ~b).count("1")
    assert x.is_subset(y) == (a & ~b == 0)
    assert x.is_disjoint(y) == (a & b == 0)
    assert (x == y) == (a == b)
    assert (x != y) == (a != b)
    # the operands are unchanged
    check(x, n, a)
    check(y, n, b)


@given(two_same_size(), st.sampled_from(["&=", "|=", "^=", "-="]))
def test_in_place_operators_match(nab, op):
    n, a, b = nab
    x, y = make(n, a), make(n, b)
    before = x
    ns = {"x": x, "y": y}
    exec(f"x {op} y", {}, ns)
    assert ns["x"] is before
    expected = {"&=": a & b, "|=": a | b, "^=": a ^ b, "-=": a & ~b}[op]
    check(x, n, expected)
    check(y, n, b)


@st.composite
def op_sequence(draw):
    n = draw(sizes)
    ops = []
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(
            st.sampled_from(
                ["set", "clear", "setitem", "set_range", "clear_range", "batched_set", "batched_bad", "set_all",
                 "clear_all", "and", "or", "xor", "sub", "invert", "index_error"]
            )
        )
        if kind in ("set", "clear", "setitem"):
            if n == 0:
                continue
            i = draw(st.integers(-n, n - 1))
            ops.append((kind, i, draw(st.booleans())))
        elif kind in ("set_range", "clear_range"):
            s = draw(st.integers(0, n))
            ops.append((kind, s, draw(st.integers(s, n))))
        elif kind == "batched_set":
            ops.append((kind, draw(st.lists(st.integers(-n, n - 1), max_size=20)) if n else [], None))
        elif kind == "batched_bad":
            good = draw(st.lists(st.integers(-n, n - 1), max_size=10)) if n else []
            bad = draw(st.one_of(st.integers(n, n + 1000), st.integers(-n - 1000, -n - 1)))
            pos = draw(st.integers(0, len(good)))
            ops.append((kind, good[:pos] + [bad] + good[pos:], None))
        elif kind in ("and", "or", "xor", "sub"):
            ops.append((kind, draw(sized_value(n))[1], None))
        elif kind == "index_error":
            ops.append((kind, draw(st.one_of(st.integers(n, n + 100), st.integers(-n - 100, -n - 1))), None))
        else:
            ops.append((kind, None, None))
    return n, ops


@settings(max_examples=80)
@given(op_sequence())
def test_operation_sequences_match(seq):
    n, ops = seq
    b = Bitmap(n)
    v = 0
    for kind, p, q in ops:
        if kind == "set":
            b.set(p)
            v |= 1 << (p % n)
        elif kind == "clear":
            b.clear(p)
            v &= ~(1 << (p % n))
        elif kind == "setitem":
            b[p] = q
            v = v | (1 << (p % n)) if q else v & ~(1 << (p % n))
        elif kind == "set_range":
            b.set_range(p, q)
            v |= mask(q) & ~mask(p)
        elif kind == "clear_range":
            b.clear_range(p, q)
            v &= ~(mask(q) & ~mask(p))
        elif kind == "batched_set":
            b.batched_set(p)
            for i in p:
                v |= 1 << (i % n)
        elif kind == "batched_bad":
            try:
                b.batched_set(p)
            except IndexError:
                pass
            else:
                raise AssertionError(f"batched_set({p}) on {n} bits did not raise")
        elif kind == "index_error":
            for call in (b.set, b.clear, b.test):
                try:
                    call(p)
                except IndexError:
                    pass
                else:
                    raise AssertionError(f"{call.__name__}({p}) on {n} bits did not raise")
        elif kind == "set_all":
            b.set_all()
            v = mask(n)
        elif kind == "clear_all":
            b.clear_all()
            v = 0
        elif kind == "invert":
            b = ~b
            v = ~v & mask(n)
        else:
            other = make(n, p)
            if kind == "and":
                b &= other
                v &= p
            elif kind == "or":
                b |= other
                v |= p
            elif kind == "xor":
                b ^= other
                v ^= p
            else:
                b -= other
                v &= ~p
        check(b, n, v)
        assert b.count_leading_ones() == leading_ones(v, n)
        assert b.highest_set_bit() == v.bit_length() - 1
    assert b.to_bytes() == lm_bytes(v, n)
    # the invariant: no bit past the end, as seen through the buffer
    words = numpy.frombuffer(b, dtype=numpy.uint64).tolist()
    assert sum(w << (64 * k) for k, w in enumerate(words)) == v


@given(st.integers(0, 300), st.data())
def test_prefix_constructor_matches(n, data):
    prefix = data.draw(st.integers(0, n))
    check(Bitmap(n, prefix), n, mask(prefix))


@given(sized_value(), st.data())
def test_gather_matches(nv, data):
    n, v = nv
    items = [f"k{i}" for i in range(n)]
    assert make(n, v).gather(items) == [items[i] for i in indices_of(v)]
