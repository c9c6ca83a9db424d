"""The flat prefetch policies of ``bitplan``: default, retain, balanced, the
registry, Python subclasses, duck-typed adapters, and ``LoadPlan``'s
controller helpers; hypothesis against the seed's algorithm over ints."""

import collections
import types
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bitplan
from bitplan import (
    AdapterDescriptor,
    BalancedPrefetchPolicy,
    Bitmap,
    DefaultPrefetchPolicy,
    LoadPlan,
    PrefetchPolicy,
    RetainPrefetchPolicy,
)

from _models import indices_of, int_of, leading_ones, mask, optimal_max_weighted_load, seed_first_wins


def lookup_of(n, entries):
    return {a: Bitmap.from_indices(n, keys) for a, keys in entries.items()}


def as_lists(plan):
    return {a: b.get_indices_list() for a, b in sorted(plan.items())}


def descs(*indices):
    return [AdapterDescriptor(i, f"adapter-{i}") for i in indices]


FIRST_WINS_CASES = [
    # (num_keys, lookup, listed adapters, expected plan) - the seed's v1 cases (lmcache_cases.rs)
    (3, {0: [0, 1, 2]}, [0], {0: [0, 1, 2]}),
    (4, {0: [0, 2]}, [0], {0: [0, 2]}),
    (3, {0: [0, 1], 1: [1, 2]}, [0, 1], {0: [0, 1], 1: [2]}),
    (4, {0: [0, 1], 1: [2, 3]}, [0, 1], {0: [0, 1], 1: [2, 3]}),
    (3, {0: [], 1: []}, [0, 1], {}),
    (3, {}, [], {}),
    (0, {}, [], {}),
    (0, {0: []}, [0], {}),
    (1, {0: [0], 1: [0]}, [1, 0], {0: [0]}),
    (5, {0: [0, 3], 1: [1, 2, 3], 2: [2, 3, 4]}, [0, 1, 2], {0: [0, 3], 1: [1, 2], 2: [4]}),
    (2, {1: [0, 1]}, [0, 1], {1: [0, 1]}),
    (3, {0: [0, 1, 2], 1: [0, 1, 2], 2: [0, 1, 2]}, [0, 1, 2], {0: [0, 1, 2]}),
    (3, {0: [0, 1], 1: [0], 5: [2]}, [1, 2], {1: [0]}),
    (200, {7: list(range(60, 200)), 40: list(range(130))}, [40, 7], {7: list(range(60, 200)), 40: list(range(60))}),
]


@pytest.mark.parametrize("name", ["default", "retain"])
@pytest.mark.parametrize("case", FIRST_WINS_CASES, ids=lambda c: f"{c[0]}keys-{sorted(c[1])}-{c[2]}")
def test_first_wins_cases(name, case):
    n, entries, listed, expected = case
    lookup = lookup_of(n, entries)
    for policy in (bitplan.create_prefetch_policy(name), {"default": DefaultPrefetchPolicy, "retain": RetainPrefetchPolicy}[name]()):
        for keys in (n, [f"key{i}" for i in range(n)], tuple(range(n))):
            plan = policy.select_load_plan(keys, lookup, descs(*listed))
            assert isinstance(plan, dict)
            assert as_lists(plan) == expected
            for b in plan.values():
                assert isinstance(b, Bitmap) and len(b) == n
                assert all(b is not v for v in lookup.values())
            lp = policy.load_plan(keys, lookup, descs(*listed))
            assert isinstance(lp, LoadPlan)
            assert as_lists(lp.to_dict()) == expected
            assert lp.num_keys == n
            lp.validate(lookup)
    # the lookups are not changed
    assert {a: b.get_indices_list() for a, b in lookup.items()} == {a: sorted(set(k)) for a, k in entries.items()}


def test_retentions():
    for n in [0, 1, 5, 100]:
        keys = [object() for _ in range(n)]
        for k in (n, keys):
            assert DefaultPrefetchPolicy().select_l1_retentions(k) == [False] * n
            assert RetainPrefetchPolicy().select_l1_retentions(k) == [True] * n
            assert BalancedPrefetchPolicy().select_l1_retentions(k) == [False] * n
            assert bitplan.create_prefetch_policy("retain").select_l1_retentions(k) == [True] * n


def test_names_and_hierarchy():
    assert DefaultPrefetchPolicy().name == "default"
    assert RetainPrefetchPolicy().name == "retain"
    assert BalancedPrefetchPolicy().name == "balanced"
    assert issubclass(RetainPrefetchPolicy, DefaultPrefetchPolicy)
    assert issubclass(DefaultPrefetchPolicy, PrefetchPolicy)
    assert issubclass(BalancedPrefetchPolicy, PrefetchPolicy)


# ---------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------


def test_registry_builtins_and_new_instances():
    names = bitplan.get_registered_prefetch_policies()
    assert names[:3] == ["default", "retain", "balanced"]
    for name, cls in [("default", DefaultPrefetchPolicy), ("retain", RetainPrefetchPolicy), ("balanced", BalancedPrefetchPolicy)]:
        a, b = bitplan.create_prefetch_policy(name), bitplan.create_prefetch_policy(name)
        assert type(a) is cls
        assert a is not b


def test_registry_duplicate_and_unknown():
    with pytest.raises(ValueError):
        bitplan.register_prefetch_policy("retain", DefaultPrefetchPolicy)
    with pytest.raises(ValueError) as info:
        bitplan.create_prefetch_policy("fastest")
    assert "fastest" in str(info.value)
    assert "default" in str(info.value)


class EverythingFromHighest(PrefetchPolicy):
    """Every key any adapter holds, from the highest-indexed one holding it."""

    def select_load_plan(self, keys, lookup_results, adapters):
        n = keys if isinstance(keys, int) else len(keys)
        remaining = Bitmap(n, n)
        plan = {}
        for a in sorted(adapters, key=lambda a: -a.index):
            got = lookup_results.get(a.index)
            if got is None:
                continue
            local = got & remaining
            remaining -= local
            if local.any():
                plan[a.index] = local
        return plan


class RetainEven(DefaultPrefetchPolicy):
    stride = 2

    def select_l1_retentions(self, keys):
        n = keys if isinstance(keys, int) else len(keys)
        return [i % self.stride == 0 for i in range(n)]


def test_python_subclass_overriding_select_load_plan():
    name = "test-everything-from-highest"
    if name not in bitplan.get_registered_prefetch_policies():
        bitplan.register_prefetch_policy(name, EverythingFromHighest)
    assert bitplan.get_registered_prefetch_policies()[-1] == name or name in bitplan.get_registered_prefetch_policies()
    policy = bitplan.create_prefetch_policy(name)
    assert isinstance(policy, EverythingFromHighest) and isinstance(policy, PrefetchPolicy)
    lookup = lookup_of(4, {0: [0, 1, 2], 1: [1, 2, 3]})
    assert as_lists(policy.select_load_plan(4, lookup, descs(0, 1))) == {0: [0], 1: [1, 2, 3]}
    assert policy.select_l1_retentions(3) == [False] * 3
    with pytest.raises(ValueError):
        bitplan.register_prefetch_policy(name, EverythingFromHighest)


def test_python_subclass_of_default_overriding_retentions():
    policy = RetainEven()
    policy.stride = 3
    assert isinstance(policy, DefaultPrefetchPolicy)
    assert policy.name == "default" or isinstance(policy.name, str)
    assert policy.select_l1_retentions(7) == [True, False, False, True, False, False, True]
    assert policy.select_l1_retentions(["a", "b"]) == [True, False]
    # select_load_plan is inherited
    lookup = lookup_of(3, {0: [0, 1], 1: [1, 2]})
    assert as_lists(policy.select_load_plan(3, lookup, descs(0, 1))) == {0: [0, 1], 1: [2]}
    name = "test-retain-even"
    if name not in bitplan.get_registered_prefetch_policies():
        bitplan.register_prefetch_policy(name, RetainEven)
    assert bitplan.create_prefetch_policy(name).select_l1_retentions(4) == [True, False, True, False]


def test_subclass_with_its_own_init_arguments():
    """A controller's policy takes its configuration in __init__ (as LMCache's
    Python policies can): the native base must not refuse the arguments."""

    class Strided(DefaultPrefetchPolicy):
        def __init__(self, stride, *, offset=0):
            super().__init__()
            self.stride = stride
            self.offset = offset

        def select_l1_retentions(self, keys):
            n = keys if isinstance(keys, int) else len(keys)
            return [(i + self.offset) % self.stride == 0 for i in range(n)]

    policy = Strided(3, offset=1)
    assert policy.select_l1_retentions(4) == [False, False, True, False]
    lookup = lookup_of(2, {0: [0, 1]})
    assert as_lists(policy.select_load_plan(2, lookup, descs(0))) == {0: [0, 1]}


def test_subclass_can_call_super():
    class Logged(DefaultPrefetchPolicy):
        calls = 0

        def select_load_plan(self, keys, lookup_results, adapters):
            type(self).calls += 1
            return super().select_load_plan(keys, lookup_results, adapters)

    policy = Logged()
    lookup = lookup_of(3, {0: [0], 1: [0, 2]})
    assert as_lists(policy.select_load_plan(3, lookup, descs(0, 1))) == {0: [0], 1: [2]}
    assert Logged.calls == 1


# ---------------------------------------------------------------------------
# Adapters as any object with .index
# ---------------------------------------------------------------------------


def test_duck_typed_adapters():
    Named = collections.namedtuple("Named", "index name")
    lookup = lookup_of(3, {0: [0, 1], 2: [1, 2]})
    expected = {0: [0, 1], 2: [2]}
    for adapters in (
        [types.SimpleNamespace(index=2), types.SimpleNamespace(index=0)],
        [Named(0, "a"), Named(2, "b")],
        (AdapterDescriptor(2), AdapterDescriptor(0)),
        iter([AdapterDescriptor(0), AdapterDescriptor(2)]),
        (types.SimpleNamespace(index=i) for i in (0, 2)),
    ):
        assert as_lists(DefaultPrefetchPolicy().select_load_plan(3, lookup, adapters)) == expected

    class Prop:
        @property
        def index(self):
            return 2

    assert as_lists(DefaultPrefetchPolicy().select_load_plan(3, lookup, [Prop()])) == {2: [1, 2]}


def test_adapter_descriptor():
    d = AdapterDescriptor(3, "nvme", 2.5)
    assert (d.index, d.name, d.weight) == (3, "nvme", 2.5)
    d = AdapterDescriptor(1)
    assert (d.index, d.name, d.weight) == (1, "", 1.0)


def test_balanced_shares_replicas_by_weight():
    n = 3000
    lookup = {a: Bitmap(n, n) for a in range(3)}
    W = collections.namedtuple("W", "index weight")
    plan = BalancedPrefetchPolicy().select_load_plan(n, lookup, [W(0, 2.0), W(1, 1.0), W(2, 1.0)])
    assert [plan[a].popcount() for a in sorted(plan)] == [1500, 750, 750]
    merged = Bitmap(n)
    for b in plan.values():
        assert merged.is_disjoint(b)
        merged |= b
    assert merged == Bitmap(n, n)
    plan = BalancedPrefetchPolicy().select_load_plan(n, lookup, [AdapterDescriptor(a, weight=1.0) for a in range(3)])
    assert [plan[a].popcount() for a in sorted(plan)] == [1000, 1000, 1000]


def test_balanced_single_holders_and_unlisted():
    lookup = lookup_of(6, {0: [0, 1, 2], 1: [3, 4], 9: [5]})
    plan = BalancedPrefetchPolicy().select_load_plan(6, lookup, [AdapterDescriptor(0), AdapterDescriptor(1)])
    assert as_lists(plan) == {0: [0, 1, 2], 1: [3, 4]}


# ---------------------------------------------------------------------------
# LoadPlan helpers
# ---------------------------------------------------------------------------


def test_load_plan_basics():
    plan = LoadPlan(6, {1: Bitmap.from_bitstring("001010"), 0: Bitmap.from_bitstring("110100")})
    assert plan.num_keys == 6
    assert len(plan) == 2
    assert plan.adapters() == [0, 1]
    assert 0 in plan and 1 in plan and 2 not in plan
    assert plan[0].get_indices_list() == [0, 1, 3]
    assert plan.planned_count() == 5
    assert plan.merged().get_indices_list() == [0, 1, 2, 3, 4]
    assert plan.prefix_len() == 5
    assert as_lists(plan.to_dict()) == {0: [0, 1, 3], 1: [2, 4]}
    # a copy of the row: changing it leaves the plan alone
    row = plan[0]
    row.set(5)
    assert plan[0].get_indices_list() == [0, 1, 3]
    empty = LoadPlan(4)
    assert len(empty) == 0 and empty.prefix_len() == 0 and empty.planned_count() == 0
    assert empty.merged() == Bitmap(4)


def test_load_plan_trim():
    plan = LoadPlan(5, {0: Bitmap.from_bitstring("11010"), 1: Bitmap.from_bitstring("00001")})
    assert plan.trim_to_loadable_prefix() == 2
    assert as_lists(plan.to_dict()) == {0: [0, 1]}
    assert 1 not in plan
    assert plan.num_keys == 5
    assert len(plan[0]) == 5

    plan = LoadPlan(6, {0: Bitmap.from_bitstring("110100"), 1: Bitmap.from_bitstring("001011")})
    plan.trim_to_prefix(4)
    assert as_lists(plan.to_dict()) == {0: [0, 1, 3], 1: [2]}
    plan.trim_to_prefix(100)
    assert as_lists(plan.to_dict()) == {0: [0, 1, 3], 1: [2]}
    plan.trim_to_prefix(2)
    assert as_lists(plan.to_dict()) == {0: [0, 1]}
    plan.trim_to_prefix(0)
    assert len(plan) == 0


def test_load_plan_unlock_masks():
    lookup = {0: Bitmap.from_bitstring("1101"), 1: Bitmap.from_bitstring("0111"), 5: Bitmap.from_bitstring("1000")}
    plan = LoadPlan(4, {0: Bitmap.from_bitstring("1100"), 1: Bitmap.from_bitstring("0010")})
    unlock = plan.unlock_masks(lookup)
    assert {a: repr(b) for a, b in sorted(unlock.items())} == {0: "0001", 1: "0101", 5: "1000"}
    assert all(unlock[a] is not lookup[a] for a in lookup)
    assert repr(lookup[5]) == "1000"


def test_load_plan_gather():
    plan = LoadPlan(3, {0: Bitmap.from_bitstring("101"), 2: Bitmap.from_bitstring("010")})
    got = plan.gather(["k0", "k1", "k2"])
    assert got == {0: ["k0", "k2"], 2: ["k1"]}
    objs = [object(), object(), object()]
    assert plan.gather(objs)[0][1] is objs[2]
    assert plan.gather(("a", "b", "c")) == {0: ["a", "c"], 2: ["b"]}


def test_load_plan_validate():
    lookup = {0: Bitmap.from_bitstring("1100"), 1: Bitmap.from_bitstring("0111")}
    LoadPlan(4, {0: Bitmap.from_bitstring("1100"), 1: Bitmap.from_bitstring("0011")}).validate(lookup)
    with pytest.raises(ValueError):  # key 1 twice
        LoadPlan(4, {0: Bitmap.from_bitstring("1100"), 1: Bitmap.from_bitstring("0110")}).validate(lookup)
    with pytest.raises(ValueError):  # adapter 0 does not hold key 2
        LoadPlan(4, {0: Bitmap.from_bitstring("1110")}).validate(lookup)
    with pytest.raises(ValueError):  # adapter 3 has no lookup
        LoadPlan(4, {3: Bitmap.from_bitstring("1000")}).validate(lookup)


# ---------------------------------------------------------------------------
# Hypothesis: the policies against the seed's algorithm over ints
# ---------------------------------------------------------------------------


@st.composite
def flat_case(draw, max_keys=300):
    n = draw(st.one_of(st.integers(0, 8), st.integers(0, max_keys)))
    indices = draw(st.lists(st.integers(0, 9), max_size=5, unique=True))
    lookup = {}
    for a in draw(st.lists(st.integers(0, 9), max_size=6, unique=True)):
        kind = draw(st.sampled_from(["random", "full", "prefix", "empty"]))
        if kind == "random":
            lookup[a] = draw(st.integers(0, mask(n))) if n else 0
        elif kind == "full":
            lookup[a] = mask(n)
        elif kind == "prefix":
            lookup[a] = mask(draw(st.integers(0, n)))
        else:
            lookup[a] = 0
    weights = {a: draw(st.integers(1, 3)) for a in indices}
    return n, lookup, indices, weights


def bitmaps(n, lookup):
    return {a: Bitmap.from_indices(n, indices_of(v)) for a, v in lookup.items()}


def int_plan(plan):
    return {a: int_of(b.get_indices_list()) for a, b in plan.items()}


@given(flat_case(), st.booleans())
def test_first_wins_equals_the_seed(case, as_list):
    n, lookup, listed, _ = case
    keys = [None] * n if as_list else n
    expected = seed_first_wins(n, lookup, listed)
    for policy in (DefaultPrefetchPolicy(), RetainPrefetchPolicy()):
        got = int_plan(policy.select_load_plan(keys, bitmaps(n, lookup), [AdapterDescriptor(i) for i in listed]))
        assert got == expected
        # the plan contract
        seen = 0
        for a, v in got.items():
            assert v and v & ~lookup[a] == 0 and v & seen == 0
            seen |= v
        lp = policy.load_plan(keys, bitmaps(n, lookup), [AdapterDescriptor(i) for i in listed])
        assert lp.prefix_len() == leading_ones(seen, n)
        assert lp.planned_count() == bin(seen).count("1")


@given(flat_case())
def test_balanced_is_disjoint_complete_and_within_lookups(case):
    n, lookup, listed, weights = case
    adapters = [AdapterDescriptor(i, weight=float(weights[i])) for i in listed]
    plan = int_plan(BalancedPrefetchPolicy().select_load_plan(n, bitmaps(n, lookup), adapters))
    union = 0
    for a in listed:
        union |= lookup.get(a, 0)
    seen = 0
    for a, v in plan.items():
        assert a in listed
        assert v != 0
        assert v & ~lookup[a] == 0, f"adapter {a} loads keys it does not hold"
        assert v & seen == 0, "a key planned twice"
        seen |= v
    assert seen == union
    # the same coverage as default
    assert seen == sum(seed_first_wins(n, lookup, listed).values())


@settings(max_examples=40)
@given(flat_case(max_keys=7))
def test_balanced_is_optimal_on_small_cases(case):
    n, lookup, listed, weights = case
    n = min(n, 7)
    listed = listed[:3]
    weights = {a: weights[a] for a in listed}
    lookup = {a: v & mask(n) for a, v in lookup.items()}
    W = collections.namedtuple("W", "index weight")
    plan = int_plan(BalancedPrefetchPolicy().select_load_plan(n, bitmaps(n, lookup), [W(i, float(weights[i])) for i in listed]))
    worst = max((Fraction(bin(plan.get(a, 0)).count("1"), weights[a]) for a in listed), default=Fraction(0))
    assert worst == optimal_max_weighted_load(n, lookup, weights)


@given(flat_case())
def test_balanced_is_deterministic(case):
    n, lookup, listed, weights = case
    adapters = [AdapterDescriptor(i, weight=float(weights[i])) for i in listed]
    first = int_plan(BalancedPrefetchPolicy().select_load_plan(n, bitmaps(n, lookup), adapters))
    second = int_plan(BalancedPrefetchPolicy().select_load_plan(n, bitmaps(n, lookup), list(reversed(adapters))))
    assert first == second


@given(flat_case(), st.data())
def test_load_plan_helpers_match_the_model(case, data):
    n, lookup, listed, _ = case
    expected = seed_first_wins(n, lookup, listed)
    plan = DefaultPrefetchPolicy().load_plan(n, bitmaps(n, lookup), [AdapterDescriptor(i) for i in listed])
    merged = 0
    for v in expected.values():
        merged |= v
    assert plan.merged().get_indices_list() == indices_of(merged)
    assert plan.adapters() == sorted(expected)
    items = [f"k{i}" for i in range(n)]
    assert plan.gather(items) == {a: [items[i] for i in indices_of(v)] for a, v in expected.items()}
    unlock = plan.unlock_masks(bitmaps(n, lookup))
    assert int_plan(unlock) == {a: v & ~expected.get(a, 0) for a, v in lookup.items()}
    plan.validate(bitmaps(n, lookup))
    cut = data.draw(st.integers(0, n + 2))
    plan.trim_to_prefix(cut)
    trimmed = {a: v & mask(cut) for a, v in expected.items() if v & mask(cut)}
    assert int_plan(plan.to_dict()) == trimmed
    p = plan.trim_to_loadable_prefix()
    m = 0
    for v in trimmed.values():
        m |= v
    assert p == leading_ones(m, n)
    assert int_plan(plan.to_dict()) == {a: v & mask(p) for a, v in trimmed.items() if v & mask(p)}


def test_registered_names_are_a_copy():
    names = bitplan.get_registered_prefetch_policies()
    names.append("not-registered")
    assert "not-registered" not in bitplan.get_registered_prefetch_policies()
    with pytest.raises(ValueError):
        bitplan.create_prefetch_policy("not-registered")


def test_registering_from_threads_registers_each_name_once():
    import threading

    errors = []
    ok = []

    def register():
        try:
            bitplan.register_prefetch_policy("test-threaded-name", DefaultPrefetchPolicy)
            ok.append(1)
        except ValueError as e:
            errors.append(e)

    threads = [threading.Thread(target=register) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ok) == 1 and len(errors) == 7
    assert bitplan.get_registered_prefetch_policies().count("test-threaded-name") == 1


def test_base_policy_must_be_overridden():
    with pytest.raises(NotImplementedError):
        PrefetchPolicy().select_load_plan(3, {0: Bitmap(3, 1)}, [AdapterDescriptor(0)])


def test_load_plan_of_a_python_subclass_uses_its_override():
    class Mine(PrefetchPolicy):
        def select_load_plan(self, keys, lookup_results, adapters):
            return {7: Bitmap(3, 3)}

    lp = Mine().load_plan(3, {0: Bitmap(3, 1)}, [AdapterDescriptor(0)])
    assert as_lists(lp.to_dict()) == {7: [0, 1, 2]}


def test_keys_as_other_sequences():
    import numpy

    lookup = lookup_of(3, {0: [0], 1: [0, 2]})
    for keys in (numpy.arange(3), range(3), "abc", (None, None, None)):
        assert as_lists(DefaultPrefetchPolicy().select_load_plan(keys, lookup, descs(0, 1))) == {0: [0], 1: [2]}
    with pytest.raises(ValueError):
        DefaultPrefetchPolicy().select_load_plan(range(4), lookup, descs(0, 1))


def test_plan_results_are_copies():
    lp = LoadPlan(3, {0: Bitmap(3, 2)})
    lp.to_dict()[0].set(2)
    lp[0].set(2)
    assert lp[0].get_indices_list() == [0, 1]
    assert lp.merged().get_indices_list() == [0, 1]


def test_bad_adapters_and_weights():
    W = collections.namedtuple("W", "index weight")
    with pytest.raises(ValueError, match="-1"):
        DefaultPrefetchPolicy().select_load_plan(4, {0: Bitmap(4, 4)}, [types.SimpleNamespace(index=-1)])
    with pytest.raises(ValueError, match="-1"):
        DefaultPrefetchPolicy().select_load_plan(4, {-1: Bitmap(4, 4)}, [])
    with pytest.raises(ValueError, match="-1"):
        BalancedPrefetchPolicy().select_load_plan(4, {0: Bitmap(4, 4)}, [W(0, -1)])
    with pytest.raises(TypeError):
        BalancedPrefetchPolicy().select_load_plan(4, {0: Bitmap(4, 4)}, [W(0, "x")])
    plan = BalancedPrefetchPolicy().select_load_plan(4, {0: Bitmap(4, 4), 1: Bitmap(4, 4)}, [W(0, 3), W(1, 1)])
    assert [plan[a].popcount() for a in sorted(plan)] == [3, 1]
