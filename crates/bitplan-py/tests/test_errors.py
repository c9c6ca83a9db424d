"""Issue #14, item 5: every bad input from Python is a Python exception of
the right type whose message names the value, never a crash, and a failed
call changes nothing."""

import pytest

import bitplan
from bitplan import AdapterDescriptor, Bitmap, Grid, LoadPlan


def snapshot(b):
    return (len(b), b.get_indices_list())


# ---------------------------------------------------------------------------
# Sizes
# ---------------------------------------------------------------------------


def test_negative_size_is_value_error_naming_it():
    with pytest.raises(ValueError, match="-5"):
        Bitmap(-5)
    with pytest.raises(ValueError, match="-1"):
        Bitmap(-1, 0)


def test_size_past_2_64_is_overflow_error():
    with pytest.raises(OverflowError):
        Bitmap(2**70)
    with pytest.raises(OverflowError):
        Bitmap(2**64)


def test_impossible_size_is_memory_error_naming_it():
    with pytest.raises(MemoryError) as info:
        Bitmap(10**15)
    assert "1000000000000000" in str(info.value) or "10**15" in str(info.value) or "1e15" in str(info.value)


def test_impossible_size_through_other_constructors():
    with pytest.raises(MemoryError):
        Bitmap.from_indices(10**15, [])
    with pytest.raises((MemoryError, OverflowError)) as info:
        Bitmap(2**63)
    assert str(2**63) in str(info.value)
    with pytest.raises(MemoryError):
        Bitmap(10**15, 10**15)


@pytest.mark.parametrize("size", ["3", 3.0, None, [3], b"3"])
def test_non_integer_size_is_type_error(size):
    with pytest.raises(TypeError):
        Bitmap(size)


def test_non_integer_prefix_is_type_error():
    with pytest.raises(TypeError):
        Bitmap(4, "2")
    with pytest.raises(TypeError):
        Bitmap(4, 2.0)


# ---------------------------------------------------------------------------
# Indices
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["set", "clear", "test", "__getitem__"])
@pytest.mark.parametrize("index", ["1", 1.0, None, [1], b"\x01"])
def test_non_integer_index_is_type_error(method, index):
    b = Bitmap(8, 3)
    with pytest.raises(TypeError):
        getattr(b, method)(index)
    assert snapshot(b) == (8, [0, 1, 2])


def test_str_setitem_is_type_error():
    b = Bitmap(8, 3)
    with pytest.raises(TypeError):
        b["1"] = True
    assert snapshot(b) == (8, [0, 1, 2])


@pytest.mark.parametrize("method", ["set", "clear", "test", "__getitem__"])
@pytest.mark.parametrize("index", [8, 9, 12345, -9, -12345])
def test_out_of_range_index_names_the_value(method, index):
    b = Bitmap(8, 3)
    with pytest.raises(IndexError) as info:
        getattr(b, method)(index)
    assert str(index) in str(info.value)
    assert snapshot(b) == (8, [0, 1, 2])


@pytest.mark.parametrize("index", [2**64, 2**70, -(2**70)])
def test_huge_index_is_index_or_overflow_error(index):
    b = Bitmap(8, 3)
    for method in ("set", "clear", "test", "__getitem__"):
        with pytest.raises((IndexError, OverflowError)):
            getattr(b, method)(index)
    assert snapshot(b) == (8, [0, 1, 2])


def test_setitem_out_of_range_names_the_value():
    b = Bitmap(8, 3)
    with pytest.raises(IndexError, match="77"):
        b[77] = True
    assert snapshot(b) == (8, [0, 1, 2])


@pytest.mark.parametrize("args", [(0, 9), (9, 9), (5, 3), (-1, 2)])
@pytest.mark.parametrize("method", ["set_range", "clear_range", "count_range"])
def test_bad_range_is_index_error_naming_the_values(method, args):
    b = Bitmap(8, 3)
    with pytest.raises(IndexError) as info:
        getattr(b, method)(*args)
    msg = str(info.value)
    assert str(args[0]) in msg and str(args[1]) in msg
    assert snapshot(b) == (8, [0, 1, 2])


def test_batched_set_failures_change_nothing_and_name_the_index():
    b = Bitmap(100, 1)
    with pytest.raises(IndexError, match="1000"):
        b.batched_set([5, 6, 1000, 7])
    with pytest.raises(TypeError):
        b.batched_set([5, 6, "7"])
    with pytest.raises(TypeError):
        b.batched_set(5)
    with pytest.raises(TypeError):
        b.batched_set(None)
    assert snapshot(b) == (100, [0])


def test_from_indices_errors_name_the_index():
    with pytest.raises(IndexError, match="42"):
        Bitmap.from_indices(10, [1, 42])
    with pytest.raises(TypeError):
        Bitmap.from_indices(10, ["a"])
    with pytest.raises(TypeError):
        Bitmap.from_indices(10, 3)


def test_from_bytes_errors_name_the_sizes():
    with pytest.raises(ValueError) as info:
        Bitmap.from_bytes(20, b"\x00")
    msg = str(info.value)
    assert "20" in msg or "3" in msg
    with pytest.raises(ValueError):
        Bitmap.from_bytes(20, b"\x00\x00\xf0")  # bits 20..23 past the size
    with pytest.raises(ValueError):
        Bitmap.from_bytes(-1, b"")


def test_from_bitstring_names_the_bad_character():
    with pytest.raises(ValueError) as info:
        Bitmap.from_bitstring("01x1")
    assert "x" in str(info.value)


# ---------------------------------------------------------------------------
# Length mismatches
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["&", "|", "^", "-", "&=", "|=", "^=", "-="])
def test_length_mismatch_names_both_sizes_and_changes_nothing(op):
    a, b = Bitmap(13, 4), Bitmap(200, 7)
    ns = {"a": a, "b": b}
    with pytest.raises(ValueError) as info:
        exec(f"a {op} b", {}, ns)
    msg = str(info.value)
    assert "13" in msg and "200" in msg
    assert ns["a"] is a
    assert snapshot(a) == (13, [0, 1, 2, 3])
    assert snapshot(b) == (200, list(range(7)))


def test_gather_mismatch_names_both_lengths():
    with pytest.raises(ValueError) as info:
        Bitmap(13).gather(list(range(12)))
    assert "13" in str(info.value) and "12" in str(info.value)


def test_merge_bitmaps_mismatch():
    with pytest.raises(ValueError) as info:
        bitplan.merge_bitmaps([Bitmap(4), Bitmap(6)], 4)
    assert "6" in str(info.value)


# ---------------------------------------------------------------------------
# Policies and plans
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["default", "retain", "balanced"])
def test_policy_lookup_length_mismatch_names_adapter_and_lengths(name):
    policy = bitplan.create_prefetch_policy(name)
    lookup = {0: Bitmap(4, 1), 3: Bitmap(7, 1)}
    snap = {i: snapshot(b) for i, b in lookup.items()}
    with pytest.raises(ValueError) as info:
        policy.select_load_plan(4, lookup, [AdapterDescriptor(0), AdapterDescriptor(3)])
    msg = str(info.value)
    assert "3" in msg and "7" in msg and "4" in msg
    assert {i: snapshot(b) for i, b in lookup.items()} == snap


@pytest.mark.parametrize("name", ["default", "retain", "balanced"])
def test_policy_duplicate_adapter_names_the_index(name):
    policy = bitplan.create_prefetch_policy(name)
    with pytest.raises(ValueError, match="5"):
        policy.select_load_plan(4, {5: Bitmap(4, 1)}, [AdapterDescriptor(5), AdapterDescriptor(5)])


@pytest.mark.parametrize("name", ["default", "retain", "balanced"])
def test_policy_bad_argument_types(name):
    policy = bitplan.create_prefetch_policy(name)
    with pytest.raises(TypeError):
        policy.select_load_plan(4, {0: "1111"}, [AdapterDescriptor(0)])
    with pytest.raises((TypeError, AttributeError)):
        policy.select_load_plan(4, {0: Bitmap(4)}, [object()])
    with pytest.raises(TypeError):
        policy.select_load_plan(4, {"0": Bitmap(4)}, [AdapterDescriptor(0)])
    with pytest.raises((ValueError, OverflowError)):
        policy.select_load_plan(-1, {}, [])


@pytest.mark.parametrize("name", ["default", "retain", "balanced"])
def test_policy_lookup_that_is_not_a_mapping_is_type_error(name):
    """A list where the lookup mapping belongs: a TypeError naming the type
    (item 5's exception types), not an AttributeError about ``.items``."""
    policy = bitplan.create_prefetch_policy(name)
    with pytest.raises(TypeError):
        policy.select_load_plan(4, [Bitmap(4)], [AdapterDescriptor(0)])


@pytest.mark.parametrize("weight", [0.0, -1.0, float("nan"), float("inf")])
def test_adapter_descriptor_weight_must_be_positive_and_finite(weight):
    with pytest.raises(ValueError):
        AdapterDescriptor(0, "x", weight)


def test_adapter_descriptor_negative_index():
    with pytest.raises((ValueError, OverflowError)):
        AdapterDescriptor(-1)


def test_load_plan_errors():
    with pytest.raises(ValueError) as info:
        LoadPlan(4, {0: Bitmap(3)})
    assert "3" in str(info.value) and "4" in str(info.value)
    plan = LoadPlan(4, {0: Bitmap(4, 2)})
    with pytest.raises(KeyError):
        plan[7]
    with pytest.raises(ValueError):
        plan.gather([1, 2, 3])
    with pytest.raises(ValueError):
        plan.unlock_masks({0: Bitmap(5)})
    with pytest.raises(ValueError):
        plan.validate({0: Bitmap(4, 1)})


# ---------------------------------------------------------------------------
# Hybrid and grids
# ---------------------------------------------------------------------------


def test_hybrid_errors_are_value_errors():
    found = Bitmap(8, 8)
    with pytest.raises(ValueError):
        bitplan.fold(found, 4, 0, [-1])
    with pytest.raises(ValueError):
        bitplan.fold(found, 4, 1, [])
    with pytest.raises(ValueError):
        bitplan.unfold(2, 4, 0, [-1])
    with pytest.raises(ValueError):
        bitplan.unfold(2, 4, 1, [])
    with pytest.raises(ValueError):
        bitplan.fold_unfold(found, 4, [])
    with pytest.raises(ValueError):
        bitplan.fold_unfold_ranked(found, 4, 0, [-1])
    with pytest.raises(ValueError):
        bitplan.fold_grouped([], [])
    with pytest.raises(ValueError) as info:
        bitplan.fold_grouped([Bitmap(4), Bitmap(5)], [-1, -1])
    assert "5" in str(info.value) and "4" in str(info.value)
    with pytest.raises(ValueError) as info:
        bitplan.fold_grouped([Bitmap(4), Bitmap(4), Bitmap(4)], [-1, 1])
    assert "3" in str(info.value) and "2" in str(info.value)
    with pytest.raises(ValueError):
        bitplan.fold_unfold_grouped([Bitmap(4), Bitmap(5)], [-1, 1])
    with pytest.raises(ValueError):
        bitplan.unfold_grouped(2, 4, [])
    with pytest.raises((ValueError, OverflowError)):
        bitplan.fold(found, -1, 1, [-1])


def test_hybrid_huge_shapes_are_errors_not_crashes():
    with pytest.raises((ValueError, OverflowError, MemoryError)):
        bitplan.unfold(1, 2**62, 4, [-1])
    with pytest.raises((ValueError, OverflowError, MemoryError)):
        bitplan.fold(Bitmap(8, 8), 4, 2**63 - 1, [-1, -1, -1])  # G * R overflows
    # G * R fits: no chunk has all its 3 * 2**62 rank bits, so nothing is servable
    assert repr(bitplan.fold(Bitmap(8, 8), 4, 2**62, [-1, -1, -1])) == "0000"


def test_grid_errors():
    with pytest.raises(ValueError) as info:
        Grid([Bitmap(4), Bitmap(5)])
    assert "5" in str(info.value)
    with pytest.raises(ValueError):
        Grid.from_flat(Bitmap(7), 2)
    with pytest.raises((ValueError, ZeroDivisionError)):
        Grid.from_flat(Bitmap(6), 0)
    g = Grid.zeros(2, 3)
    with pytest.raises(IndexError):
        g.set(2, 0)
    with pytest.raises(IndexError):
        g.set(0, 3)
    with pytest.raises(IndexError):
        g.test(5, 0)
    with pytest.raises(IndexError):
        g[2]
    with pytest.raises(ValueError):
        g | Grid.zeros(2, 4)
    with pytest.raises(ValueError):
        Grid([Bitmap(3, 2)]).deposit(Bitmap(1))
    with pytest.raises(ValueError):
        g.gather_rows([[1, 2, 3]])
    assert g.popcount() == 0


def test_plan_load_errors():
    l1 = {0: Grid([Bitmap(4, 2)])}
    with pytest.raises(ValueError):
        bitplan.plan_load([-1, 2], 4, l1, {}, "full")
    with pytest.raises(ValueError):
        bitplan.plan_load([-1], 4, l1, {}, "Full")
    with pytest.raises(ValueError):
        bitplan.plan_load([-1, -1], 4, l1, {}, "prefix")
    with pytest.raises(ValueError):
        bitplan.plan_load([], 0, {}, {}, "prefix")
    with pytest.raises(TypeError):
        bitplan.plan_load([-1], 4, {0: "1111"}, {}, "prefix")
    assert l1[0].to_index_lists() == [[0, 1]]


def test_registry_errors():
    with pytest.raises(ValueError, match="nope"):
        bitplan.create_prefetch_policy("nope")
    with pytest.raises(ValueError, match="default"):
        bitplan.register_prefetch_policy("default", bitplan.DefaultPrefetchPolicy)
    with pytest.raises(TypeError):
        bitplan.register_prefetch_policy(3, bitplan.DefaultPrefetchPolicy)
    with pytest.raises(TypeError):
        bitplan.register_prefetch_policy("an-instance", bitplan.DefaultPrefetchPolicy())
    assert "an-instance" not in bitplan.get_registered_prefetch_policies()


# ---------------------------------------------------------------------------
# Integers too large for 64 bits: the message must name the value
# ---------------------------------------------------------------------------

HUGE = 2**70

HUGE_CASES = {
    "Bitmap(size)": lambda: Bitmap(HUGE),
    "Bitmap(n, prefix)": lambda: Bitmap(4, HUGE),
    "Bitmap.from_indices(size)": lambda: Bitmap.from_indices(HUGE, []),
    "Bitmap.set": lambda: Bitmap(8).set(HUGE),
    "Bitmap.__getitem__": lambda: Bitmap(8)[HUGE],
    "Bitmap.set_range end": lambda: Bitmap(8).set_range(0, HUGE),
    "Bitmap.set_range start": lambda: Bitmap(8).set_range(HUGE, HUGE),
    "Bitmap.clear_range end": lambda: Bitmap(8).clear_range(0, HUGE),
    "Bitmap.count_range end": lambda: Bitmap(8).count_range(0, HUGE),
    "Bitmap.batched_set": lambda: Bitmap(8).batched_set([HUGE]),
    "fold num_chunks": lambda: bitplan.fold(Bitmap(8), HUGE, 1, [-1]),
    "fold num_ranks": lambda: bitplan.fold(Bitmap(8), 4, HUGE, [-1]),
    "fold window": lambda: bitplan.fold(Bitmap(8), 4, 1, [HUGE]),
    "fold_grouped window": lambda: bitplan.fold_grouped([Bitmap(4)], [HUGE]),
    "unfold hit": lambda: bitplan.unfold(HUGE, 4, 1, [-1]),
    "unfold window": lambda: bitplan.unfold(1, 4, 1, [HUGE]),
    "unfold_range length": lambda: bitplan.unfold_range(HUGE, 1),
    "unfold_range window": lambda: bitplan.unfold_range(1, HUGE),
    "merge_bitmaps num_keys": lambda: bitplan.merge_bitmaps([], HUGE),
    "Grid.zeros": lambda: Grid.zeros(1, HUGE),
    "Grid.test row": lambda: Grid([Bitmap(4)]).test(HUGE, 0),
    "Grid.test col": lambda: Grid([Bitmap(4)]).test(0, HUGE),
    "Grid.set col": lambda: Grid([Bitmap(4)]).set(0, HUGE),
    "Grid.__getitem__": lambda: Grid([Bitmap(4)])[HUGE],
    "plan_load num_chunks": lambda: bitplan.plan_load([-1], HUGE, {}, {}),
    "plan_load window": lambda: bitplan.plan_load([HUGE], 4, {}, {}),
    "plan_load index": lambda: bitplan.plan_load([-1], 4, {HUGE: Grid([Bitmap(4)])}, {}),
    "LoadPlan num_keys": lambda: LoadPlan(HUGE),
    "AdapterDescriptor index": lambda: AdapterDescriptor(HUGE),
    "select_load_plan keys": lambda: bitplan.DefaultPrefetchPolicy().select_load_plan(HUGE, {}, []),
}


@pytest.mark.parametrize("case", list(HUGE_CASES))
def test_huge_integers_name_the_value(case):
    with pytest.raises((OverflowError, IndexError, ValueError)) as info:
        HUGE_CASES[case]()
    assert str(HUGE) in str(info.value), f"{type(info.value).__name__}: {info.value}"


@pytest.mark.parametrize("call", [lambda g: g.test(5, 0), lambda g: g.test(0, 4), lambda g: g.test(-2, 0), lambda g: g[1]])
def test_grid_index_out_of_range_is_index_error(call):
    g = Grid([Bitmap(4, 2)])
    with pytest.raises(IndexError):
        call(g)


def test_failed_calls_on_plans_and_grids_change_nothing():
    plan = LoadPlan(4, {0: Bitmap(4, 2), 1: Bitmap.from_indices(4, [3])})
    for bad in (lambda: plan.trim_to_prefix(-1), lambda: plan.gather([1]), lambda: plan.unlock_masks({0: Bitmap(3)})):
        with pytest.raises((ValueError, OverflowError)):
            bad()
        assert {a: b.get_indices_list() for a, b in plan.to_dict().items()} == {0: [0, 1], 1: [3]}
    g = Grid([Bitmap(4, 2), Bitmap(4, 1)])
    for op in ("|=", "&=", "-="):
        ns = {"g": g, "x": Grid([Bitmap(4, 4)])}
        with pytest.raises(ValueError):
            exec(f"g {op} x", {}, ns)
        assert g.to_index_lists() == [[0, 1], [0]]
    with pytest.raises(IndexError):
        g.set(0, 4)
    with pytest.raises(IndexError):
        g.clear(2, 0)
    assert g.to_index_lists() == [[0, 1], [0]]


def test_ordering_is_not_defined():
    with pytest.raises(TypeError):
        Bitmap(3) < Bitmap(3)  # noqa: B015
    with pytest.raises(TypeError):
        Grid([Bitmap(3)]) <= Grid([Bitmap(3)])  # noqa: B015
