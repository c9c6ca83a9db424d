"""Every method of the Pythonic ``bitplan.Bitmap``, case by case."""

import copy
import pickle
import sys

import numpy
import pytest

import bitplan
from bitplan import Bitmap

from _models import bitstring, int_of, lm_bytes

SIZES = [0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 129, 200, 1000]


def bm(n, *indices):
    return Bitmap.from_indices(n, indices)


# ---------------------------------------------------------------------------
# Constructors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", SIZES)
def test_new_bitmap_is_clear(n):
    b = Bitmap(n)
    assert len(b) == n
    assert b.popcount() == 0
    assert b.get_indices_list() == []
    assert not b.any()
    assert repr(b) == "0" * n


@pytest.mark.parametrize("n", SIZES)
def test_prefix_constructor(n):
    for prefix in sorted({0, 1, n // 2, n - 1, n}):
        if not 0 <= prefix <= n:
            continue
        b = Bitmap(n, prefix)
        assert len(b) == n
        assert b.get_indices_list() == list(range(prefix))
        assert b.count_leading_ones() == prefix
        assert b.popcount() == prefix


def test_prefix_keyword_and_zero():
    assert Bitmap(0, 0).get_indices_list() == []
    assert len(Bitmap(0, 0)) == 0
    assert Bitmap(10, prefix=3).get_indices_list() == [0, 1, 2]
    assert Bitmap(size=5, prefix=2).get_indices_list() == [0, 1]


def test_prefix_out_of_range_is_value_error():
    with pytest.raises(ValueError, match="6"):
        Bitmap(5, 6)
    with pytest.raises(ValueError):
        Bitmap(5, 100)
    with pytest.raises((ValueError, OverflowError)):
        Bitmap(5, -1)


def test_from_indices():
    b = Bitmap.from_indices(10, [1, 5, 9, 5])
    assert b.get_indices_list() == [1, 5, 9]
    assert Bitmap.from_indices(10, iter([0, 2])).get_indices_list() == [0, 2]
    assert Bitmap.from_indices(10, (i for i in range(3))).get_indices_list() == [0, 1, 2]
    assert Bitmap.from_indices(10, []).popcount() == 0
    assert Bitmap.from_indices(0, []).get_indices_list() == []
    # negative indices count from the end, like a list
    assert Bitmap.from_indices(10, [-1, -10]).get_indices_list() == [0, 9]
    # numpy integers are indices
    assert Bitmap.from_indices(10, numpy.array([3, 4], dtype=numpy.int64)).get_indices_list() == [3, 4]


@pytest.mark.parametrize("bad", [[10], [-11], [0, 1, 100]])
def test_from_indices_out_of_range(bad):
    with pytest.raises(IndexError):
        Bitmap.from_indices(10, bad)


def test_from_bitstring_and_bools():
    b = Bitmap.from_bitstring("0110")
    assert b.get_indices_list() == [1, 2]
    assert len(b) == 4
    assert len(Bitmap.from_bitstring("")) == 0
    assert repr(Bitmap.from_bitstring("1000000001" * 20)) == "1000000001" * 20
    assert Bitmap.from_bools([True, False, True]).get_indices_list() == [0, 2]
    assert Bitmap.from_bools(iter([False] * 70 + [True])).get_indices_list() == [70]
    assert len(Bitmap.from_bools([])) == 0
    with pytest.raises(ValueError):
        Bitmap.from_bitstring("0120")


# ---------------------------------------------------------------------------
# Single bits
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 7, 8, 9, 64, 65, 130])
def test_set_clear_test_every_bit(n):
    b = Bitmap(n)
    for i in range(n):
        b.set(i)
        assert b.test(i)
        assert b[i]
        assert b.popcount() == i + 1
    assert b.popcount() == n
    for i in range(n):
        b.clear(i)
        assert not b.test(i)
        assert not b[i]
    assert b.popcount() == 0


def test_negative_indices_count_from_the_end():
    b = Bitmap(10)
    b.set(-1)
    assert b.get_indices_list() == [9]
    assert b.test(-1) and b[-1] and b[9]
    b.set(-10)
    assert b.get_indices_list() == [0, 9]
    b.clear(-1)
    assert b.get_indices_list() == [0]
    b[-2] = True
    assert b.get_indices_list() == [0, 8]
    b[-10] = False
    assert b.get_indices_list() == [8]


@pytest.mark.parametrize("index", [10, 11, 1000, -11, -1000])
def test_out_of_range_single_bit_is_index_error(index):
    b = Bitmap(10, 3)
    for call in (b.set, b.clear, b.test, b.__getitem__):
        with pytest.raises(IndexError):
            call(index)
    with pytest.raises(IndexError):
        b[index] = True
    assert b.get_indices_list() == [0, 1, 2]


def test_empty_bitmap_has_no_bits():
    b = Bitmap(0)
    for call in (b.set, b.clear, b.test, b.__getitem__):
        with pytest.raises(IndexError):
            call(0)
        with pytest.raises(IndexError):
            call(-1)


def test_setitem():
    b = Bitmap(4)
    b[0] = True
    b[1] = True
    b[2] = False
    b[3] = True
    assert b.get_indices_list() == [0, 1, 3]
    b[3] = False
    b[0] = True
    assert b.get_indices_list() == [0, 1]


def test_numpy_integer_indices():
    b = Bitmap(10)
    b.set(numpy.int64(4))
    b.set(numpy.uint8(5))
    assert b.test(numpy.int32(4))
    assert b[numpy.int64(-5)]
    assert b.get_indices_list() == [4, 5]


# ---------------------------------------------------------------------------
# Ranges and batches
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n,start,end",
    [(16, 3, 3), (16, 0, 0), (16, 2, 5), (16, 0, 8), (16, 0, 16), (24, 3, 20), (24, 8, 16), (10, 9, 10), (200, 1, 199),
     (200, 63, 129), (10, 10, 10), (0, 0, 0)],
)
def test_set_range_clear_range_count_range(n, start, end):
    b = Bitmap(n)
    b.set_range(start, end)
    assert b.get_indices_list() == list(range(start, end))
    assert b.count_range(start, end) == end - start
    assert b.count_range(0, n) == end - start
    full = Bitmap(n, n)
    full.clear_range(start, end)
    assert full.get_indices_list() == [i for i in range(n) if not start <= i < end]
    assert full.count_range(start, end) == 0


@pytest.mark.parametrize("start,end", [(0, 11), (5, 100), (100, 200), (6, 5), (11, 11)])
def test_bad_ranges_are_index_errors_and_change_nothing(start, end):
    b = Bitmap(10, 2)
    for call in (b.set_range, b.clear_range, b.count_range):
        with pytest.raises(IndexError):
            call(start, end)
    assert b.get_indices_list() == [0, 1]


def test_negative_range_start_is_index_error():
    b = Bitmap(10, 2)
    with pytest.raises(IndexError):
        b.set_range(-1, 3)
    assert b.get_indices_list() == [0, 1]


def test_set_all_clear_all():
    for n in SIZES:
        b = Bitmap(n)
        b.set_all()
        assert b.popcount() == n and b.all()
        assert b.get_indices_list() == list(range(n))
        b.clear_all()
        assert b.popcount() == 0 and not b.any()


def test_batched_set():
    b = Bitmap(100)
    b.batched_set([1, 5, 5, 99, 64])
    assert b.get_indices_list() == [1, 5, 64, 99]
    b.batched_set((2, 3))
    b.batched_set(i for i in [7])
    b.batched_set(range(10, 12))
    b.batched_set([-1, -100])
    b.batched_set(numpy.array([50], dtype=numpy.int64))
    b.batched_set([])
    assert b.get_indices_list() == [0, 1, 2, 3, 5, 7, 10, 11, 50, 64, 99]


@pytest.mark.parametrize("bad", [[1, 2, 100], [100, 1, 2], [3, -101], [4, "x"], [5, 1.5], [6, None]])
def test_batched_set_is_atomic(bad):
    b = Bitmap(100, 1)
    with pytest.raises((IndexError, TypeError)):
        b.batched_set(bad)
    assert b.get_indices_list() == [0]


def test_batched_set_failure_in_generator_changes_nothing():
    b = Bitmap(10)

    def gen():
        yield 1
        yield 2
        raise KeyError("boom")

    with pytest.raises(KeyError):
        b.batched_set(gen())
    assert b.get_indices_list() == []


# ---------------------------------------------------------------------------
# Counts and queries
# ---------------------------------------------------------------------------


def test_counts_and_extremes():
    b = bm(130, 3, 64, 65, 129)
    assert b.popcount() == 4
    assert b.count_leading_zeros() == 3
    assert b.count_leading_ones() == 0
    assert b.highest_set_bit() == 129
    assert b.first_set() == 3
    assert b.last_set() == 129
    assert b.any() and not b.all()

    e = Bitmap(130)
    assert e.count_leading_zeros() == 130
    assert e.count_leading_ones() == 0
    assert e.highest_set_bit() == -1
    assert e.first_set() is None and e.last_set() is None

    f = Bitmap(130, 130)
    assert f.count_leading_ones() == 130 and f.count_leading_zeros() == 0
    assert f.all() and f.highest_set_bit() == 129

    z = Bitmap(0)
    assert z.count_leading_zeros() == 0 and z.count_leading_ones() == 0
    assert z.highest_set_bit() == -1 and z.first_set() is None and z.last_set() is None
    assert not z.any() and z.all()

    nine = bm(9, 8)
    assert nine.count_leading_zeros() == 8 and nine.count_leading_ones() == 0
    three = Bitmap(9, 3)
    assert three.count_leading_ones() == 3 and three.count_leading_zeros() == 0


def test_pairwise_counts_and_relations():
    a = bm(70, 0, 1, 2, 65)
    b = bm(70, 2, 3, 65, 69)
    assert a.and_popcount(b) == 2
    assert a.or_popcount(b) == 6
    assert a.xor_popcount(b) == 4
    assert a.and_not_popcount(b) == 2
    assert b.and_not_popcount(a) == 2
    assert not a.is_subset(b) and not a.is_disjoint(b)
    assert bm(70, 2, 65).is_subset(a)
    assert Bitmap(70).is_subset(a) and Bitmap(70).is_disjoint(a)
    assert bm(70, 5).is_disjoint(a)
    assert a.is_subset(a)


@pytest.mark.parametrize("name", ["and_popcount", "or_popcount", "xor_popcount", "and_not_popcount", "is_subset", "is_disjoint"])
def test_pairwise_counts_length_mismatch(name):
    with pytest.raises(ValueError) as info:
        getattr(Bitmap(70), name)(Bitmap(71))
    assert "70" in str(info.value) and "71" in str(info.value)


# ---------------------------------------------------------------------------
# Iteration and conversion
# ---------------------------------------------------------------------------


def test_iteration_and_lists():
    idx = [0, 5, 63, 64, 127, 128, 299]
    b = Bitmap.from_indices(300, idx)
    assert list(b) == idx
    assert list(iter(b)) == idx
    assert b.get_indices_list() == idx
    assert list(Bitmap(0)) == []
    assert sorted(set(b)) == idx


def test_indices_array():
    idx = [0, 5, 63, 64, 127, 128, 299]
    b = Bitmap.from_indices(300, idx)
    arr = b.indices_array()
    assert isinstance(arr, numpy.ndarray)
    assert arr.dtype == numpy.int64
    assert arr.ndim == 1
    assert arr.tolist() == idx
    # a new array: changing it does not touch the bitmap, later sets do not change it
    if arr.flags.writeable:
        arr[0] = 17
    b.set(1)
    assert b.get_indices_list() == [0, 1, 5, 63, 64, 127, 128, 299]
    assert len(arr) == len(idx)
    empty = Bitmap(10).indices_array()
    assert empty.dtype == numpy.int64 and empty.shape == (0,)


def test_gather():
    b = bm(5, 0, 2, 4)
    assert b.gather(["a", "b", "c", "d", "e"]) == ["a", "c", "e"]
    assert b.gather(("a", "b", "c", "d", "e")) == ["a", "c", "e"]
    assert b.gather(range(10, 15)) == [10, 12, 14]
    objs = [object() for _ in range(5)]
    got = b.gather(objs)
    assert got[0] is objs[0] and got[2] is objs[4]
    assert Bitmap(0).gather([]) == []


@pytest.mark.parametrize("items", [[1, 2, 3, 4], [1, 2, 3, 4, 5, 6], []])
def test_gather_length_mismatch(items):
    with pytest.raises(ValueError) as info:
        bm(5, 0).gather(items)
    assert "5" in str(info.value) and str(len(items)) in str(info.value)


@pytest.mark.parametrize("n", SIZES)
def test_to_bytes_layout_and_round_trip(n):
    idx = [i for i in range(n) if i % 3 == 0 or i == n - 1]
    b = Bitmap.from_indices(n, idx)
    data = b.to_bytes()
    assert isinstance(data, bytes)
    assert len(data) == (n + 7) // 8
    assert data == lm_bytes(int_of(idx), n)
    for i in idx:
        assert data[i // 8] >> (i % 8) & 1
    for form in (data, bytearray(data), memoryview(data)):
        assert Bitmap.from_bytes(n, form) == b


def test_to_bytes_exact_values():
    b = Bitmap(10)
    b.set(0)
    b.set(9)
    assert b.to_bytes() == bytes([0b0000_0001, 0b0000_0010])
    assert repr(b) == "1000000001"
    assert Bitmap(0).to_bytes() == b""
    assert Bitmap.from_bytes(0, b"") == Bitmap(0)


def test_from_bytes_errors():
    with pytest.raises(ValueError) as info:
        Bitmap.from_bytes(10, b"\x00")
    assert "10" in str(info.value) or "2" in str(info.value)
    with pytest.raises(ValueError):
        Bitmap.from_bytes(10, b"\x00\x00\x00")
    with pytest.raises(ValueError):
        Bitmap.from_bytes(0, b"\x00")
    # a set bit past the size
    with pytest.raises(ValueError):
        Bitmap.from_bytes(10, b"\x00\x04")
    with pytest.raises(ValueError):
        Bitmap.from_bytes(1, b"\x02")
    assert Bitmap.from_bytes(10, b"\x00\x02").get_indices_list() == [9]
    with pytest.raises(TypeError):
        Bitmap.from_bytes(8, "a")


# ---------------------------------------------------------------------------
# The buffer
# ---------------------------------------------------------------------------


def test_memoryview_of_the_words():
    b = bm(130, 0, 63, 64, 129)
    view = memoryview(b)
    assert view.readonly
    assert view.format == "Q"
    assert view.itemsize == 8
    assert view.nbytes == 8 * 3
    assert view.tolist() == [1 | 1 << 63, 1, 2]
    with pytest.raises(TypeError):
        view[0] = 0
    assert b.get_indices_list() == [0, 63, 64, 129]


def test_numpy_frombuffer_is_zero_copy_and_read_only():
    b = Bitmap(200)
    arr = numpy.frombuffer(b, dtype=numpy.uint64)
    assert arr.shape == (4,)
    assert not arr.flags.writeable
    assert arr.tolist() == [0, 0, 0, 0]
    b.set(65)
    b.set(199)
    assert arr[1] == 2
    assert arr[3] == 1 << (199 - 192)
    b.set_all()
    assert arr[0] == 2**64 - 1
    assert arr[3] == (1 << 8) - 1  # the tail stays clear
    with pytest.raises(ValueError):
        arr[0] = 0
    v = memoryview(b)
    b.clear_all()
    assert v.tolist() == [0, 0, 0, 0]


def test_buffer_of_empty_and_tail_masking():
    assert memoryview(Bitmap(0)).nbytes == 0
    inv = ~Bitmap(5)
    assert numpy.frombuffer(inv, dtype=numpy.uint64).tolist() == [31]
    assert numpy.frombuffer(Bitmap(70, 70), dtype=numpy.uint64).tolist() == [2**64 - 1, 63]


def test_buffer_keeps_the_bitmap_alive():
    arr = numpy.frombuffer(Bitmap(64, 3), dtype=numpy.uint64)
    import gc

    gc.collect()
    assert arr.tolist() == [7]


# ---------------------------------------------------------------------------
# Operators
# ---------------------------------------------------------------------------

A = [0, 1, 2, 64, 65, 99]
B = [1, 2, 3, 65, 98]


def test_binary_operators():
    a, b = Bitmap.from_indices(100, A), Bitmap.from_indices(100, B)
    assert (a & b).get_indices_list() == sorted(set(A) & set(B))
    assert (a | b).get_indices_list() == sorted(set(A) | set(B))
    assert (a ^ b).get_indices_list() == sorted(set(A) ^ set(B))
    assert (a - b).get_indices_list() == sorted(set(A) - set(B))
    assert (~a).get_indices_list() == sorted(set(range(100)) - set(A))
    assert len(~a) == 100
    # the operands are unchanged and the results are new
    assert a.get_indices_list() == A and b.get_indices_list() == B
    for r in (a & b, a | b, a ^ b, a - b, ~a):
        assert r is not a and r is not b


@pytest.mark.parametrize("op", ["__iand__", "__ior__", "__ixor__", "__isub__"])
def test_in_place_operators_change_the_left_operand(op):
    a, b = Bitmap.from_indices(100, A), Bitmap.from_indices(100, B)
    expected = {
        "__iand__": set(A) & set(B),
        "__ior__": set(A) | set(B),
        "__ixor__": set(A) ^ set(B),
        "__isub__": set(A) - set(B),
    }[op]
    before = a
    alias = a
    if op == "__iand__":
        a &= b
    elif op == "__ior__":
        a |= b
    elif op == "__ixor__":
        a ^= b
    else:
        a -= b
    assert a is before
    assert alias.get_indices_list() == sorted(expected)
    assert b.get_indices_list() == B


@pytest.mark.parametrize("op", ["&", "|", "^", "-", "&=", "|=", "^=", "-="])
def test_operator_length_mismatch_names_both_sizes(op):
    a, b = Bitmap(100, 5), Bitmap(37, 5)
    with pytest.raises(ValueError) as info:
        exec(f"a {op} b", {}, {"a": a, "b": b})
    msg = str(info.value)
    assert "100" in msg and "37" in msg
    assert a.get_indices_list() == [0, 1, 2, 3, 4]
    assert b.get_indices_list() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("other", [3, "x", None, [1, 0], 1.0])
def test_operators_with_non_bitmaps_are_type_errors(other):
    a = Bitmap(4, 2)
    for op in ("&", "|", "^", "-"):
        with pytest.raises(TypeError):
            eval(f"a {op} other", {}, {"a": a, "other": other})
        with pytest.raises(TypeError):
            eval(f"other {op} a", {}, {"a": a, "other": other})
    assert a.get_indices_list() == [0, 1]


def test_self_operators():
    a = Bitmap.from_indices(100, A)
    assert (a & a) == a
    assert (a ^ a) == Bitmap(100)
    a |= a
    assert a.get_indices_list() == A
    a ^= a
    assert a.popcount() == 0


# ---------------------------------------------------------------------------
# Equality, hashing, copying, pickling, repr
# ---------------------------------------------------------------------------


def test_equality():
    a = Bitmap.from_indices(100, A)
    assert a == Bitmap.from_indices(100, A)
    assert not (a != Bitmap.from_indices(100, A))
    assert a != Bitmap.from_indices(100, B)
    assert Bitmap(5) != Bitmap(6)
    assert Bitmap(0) == Bitmap(0)
    assert Bitmap(64, 3) != Bitmap(65, 3)
    assert a != 5 and a != "0" and a != None  # noqa: E711
    assert not (a == A)


def test_unhashable():
    with pytest.raises(TypeError):
        hash(Bitmap(3))
    with pytest.raises(TypeError):
        {Bitmap(3)}


@pytest.mark.parametrize("how", ["copy", "__copy__", "copy.copy", "copy.deepcopy"])
def test_copies_are_independent(how):
    a = Bitmap.from_indices(100, A)
    c = {
        "copy": lambda: a.copy(),
        "__copy__": lambda: a.__copy__(),
        "copy.copy": lambda: copy.copy(a),
        "copy.deepcopy": lambda: copy.deepcopy(a),
    }[how]()
    assert c == a and c is not a
    c.set(50)
    assert not a.test(50)
    a.clear(0)
    assert c.test(0)


def test_deepcopy_inside_containers():
    a = Bitmap(10, 3)
    d = copy.deepcopy({"x": [a, a]})
    assert d["x"][0] == a and d["x"][0] is not a
    assert d["x"][0] is d["x"][1]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 1000])
def test_pickle_round_trip(protocol, n):
    a = Bitmap.from_indices(n, [i for i in range(n) if i % 7 in (0, 3)])
    b = pickle.loads(pickle.dumps(a, protocol=protocol))
    assert type(b) is Bitmap
    assert b == a and b is not a
    assert len(b) == n
    assert b.to_bytes() == a.to_bytes()


def test_reduce_is_callable():
    a = Bitmap(12, 5)
    fn, args, *rest = a.__reduce__()
    rebuilt = fn(*args)
    if rest and rest[0] is not None:
        rebuilt.__setstate__(rest[0])
    assert rebuilt == a


@pytest.mark.parametrize("n", [0, 1, 4, 9, 64, 65, 300])
def test_repr_is_bit_zero_first(n):
    idx = [i for i in range(n) if i % 3 == 1]
    b = Bitmap.from_indices(n, idx)
    assert repr(b) == bitstring(int_of(idx), n)
    assert Bitmap.from_bitstring(repr(b)) == b


def test_repr_examples():
    assert repr(bm(4, 1, 3)) == "0101"
    assert repr(Bitmap(0)) == ""
    assert repr(Bitmap(5, 5)) == "11111"


def test_repr_abbreviates_past_1000_bits_as_numpy_does():
    # Up to 1000 bits (numpy's threshold): every bit, as before.
    assert repr(bm(1000, 1, 999)) == "0" + "1" + "0" * 997 + "1"
    # Past it: the length, the popcount, the first and last 32 bits.
    assert repr(bm(262144, 1, 5, 262143)) == (
        "Bitmap(len=262144, popcount=3, bits=01000100000000000000000000000000"
        "...00000000000000000000000000000001)"
    )
    assert repr(Bitmap(1001, 1001)) == "Bitmap(len=1001, popcount=1001, bits=" + "1" * 32 + "..." + "1" * 32 + ")"
    # `str` is still every bit, and `from_bitstring` its inverse.
    long = bm(262144, 1, 5, 262143)
    assert len(str(long)) == 262144
    assert Bitmap.from_bitstring(str(long)) == long


def test_lmcache_bitmap_repr_is_unchanged():
    from bitplan.lmcache.native import Bitmap as LmBitmap

    lm = LmBitmap(2000)
    lm.set(3)
    # LMCache's own repr, which its tests pin: every bit, however long.
    assert repr(lm) == "0001" + "0" * 1996
    assert str(lm) == repr(lm)


def test_type_stubs_are_shipped():
    import importlib.resources as resources

    files = resources.files("bitplan")
    assert files.joinpath("py.typed").is_file()
    assert files.joinpath("_native.pyi").is_file()


def test_module_metadata():
    assert isinstance(bitplan.__version__, str) and bitplan.__version__
    assert bitplan.active_kernel() in bitplan.available_kernels()
    assert set(bitplan.available_kernels()) <= {"avx512", "avx2", "neon", "portable", "scalar"}
    assert bitplan.FULL_ATTENTION_WINDOW == -1
    for name in bitplan.__all__:
        assert hasattr(bitplan, name), name


def test_buffer_refuses_writable_requests():
    import ctypes
    import struct

    b = Bitmap(64, 3)
    with pytest.raises(TypeError):
        ctypes.c_uint64.from_buffer(b)
    assert struct.unpack_from("Q", b) == (7,)
    assert bytes(memoryview(b)) == (7).to_bytes(8, sys.byteorder)
    assert b.get_indices_list() == [0, 1, 2]


def test_iterating_while_changing_the_bitmap_does_not_crash():
    b = Bitmap(200, 10)
    seen = []
    for i in b:
        seen.append(i)
        if i + 1 < 200:
            b.clear(i + 1)
        b.set(150)
    assert seen[0] == 0
    assert all(0 <= i < 200 for i in seen)
    assert seen == sorted(set(seen))


@pytest.mark.parametrize("op", ["|=", "&=", "^=", "-="])
def test_a_live_view_follows_in_place_operators(op):
    """The storage cannot move while a view is alive: an in-place operator
    writes into it, so the view shows the new bits (and never freed memory)."""
    a = Bitmap(200, 5)
    b = Bitmap(200, 100)
    arr = numpy.frombuffer(a, dtype=numpy.uint64)
    ns = {"a": a, "b": b}
    exec(f"a {op} b", {}, ns)
    assert ns["a"] is a
    assert arr.tolist() == numpy.frombuffer(a, dtype=numpy.uint64).tolist()
    assert sum(w << (64 * k) for k, w in enumerate(arr.tolist())) == sum(1 << i for i in a)


def test_a_live_view_follows_range_and_batch_writes():
    a = Bitmap(300)
    view = memoryview(a)
    a.set_range(10, 250)
    a.clear_range(64, 128)
    a.batched_set([299, 1])
    assert sum(w << (64 * k) for k, w in enumerate(view.tolist())) == sum(1 << i for i in a)


def test_setstate_checks_its_input_and_changes_nothing_on_failure():
    a = Bitmap(10, 3)
    view = memoryview(a)
    for bad in (b"\x01", b"\x01" * 3, b"\xff\xff"):  # too short, too long, bits 10..15 past the end
        with pytest.raises(ValueError):
            a.__setstate__(bad)
        assert a.get_indices_list() == [0, 1, 2]
    with pytest.raises(TypeError):
        a.__setstate__((1, 2))
    a.__setstate__(b"\x00\x02")
    assert a.get_indices_list() == [9]
    assert view.tolist() == [1 << 9]
