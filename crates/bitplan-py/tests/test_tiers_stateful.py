"""The LMCache-shaped face, ``bitplan.lmcache.tiers.L1Bookkeeper``, against
the pure-Python model of ``L1Manager``'s rules (``_l1_model.py``), one random
operation sequence at a time (issue #28, item 5): writer tags, read-lock
counts, lock expiry on an injected clock, temporary keys, forced deletes
and the capacity. Every call's answer must be the model's, key by key and
object by object, and so must every key's state after it."""

import dataclasses
import itertools
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from _l1_model import L1Model
from bitplan.lmcache.tiers import L1Bookkeeper, L1Error, ManualClock

@dataclasses.dataclass(frozen=True)
class FieldKey:
    """A frozen dataclass, as LMCache's ``ObjectKey`` is: the books hash and
    compare it by its fields, natively, where they hold exact ``bytes``,
    ``str`` or ``int`` objects, and by its Python code otherwise."""

    chunk: object
    model: str
    rank: object = 0


class FieldKeyTwin:
    """Not a dataclass: equal to the ``FieldKey`` of the same fields, with
    the same hash, so a ``dict`` finds either by the other."""

    def __init__(self, *fields):
        self.fields = fields

    def __hash__(self):
        return hash(self.fields)

    def __eq__(self, other):
        if isinstance(other, FieldKey):
            return dataclasses.astuple(other) == self.fields
        return isinstance(other, FieldKeyTwin) and other.fields == self.fields


class InheritedFieldKey(FieldKey):
    """Inherits ``FieldKey``'s generated ``__eq__``, which requires the same
    class: never equal to a ``FieldKey``."""


@dataclasses.dataclass(frozen=True)
class ChunkOnlyKey:
    """A frozen dataclass with its own ``__eq__`` and ``__hash__``: equal
    whatever its rank, so it must not be compared by its fields."""

    chunk: bytes
    rank: int

    def __eq__(self, other):
        return isinstance(other, ChunkOnlyKey) and self.chunk == other.chunk

    def __hash__(self):
        return hash(self.chunk)


# Keys of several hashable kinds, as an L1Manager's callers may use; equal
# keys that are different objects among them (1, 1.0 and True are equal
# fields, with equal hashes).
KEYS = [
    "a",
    "b",
    ("c", 1),
    ("c", 2),
    7,
    8,
    frozenset({"e"}),
    b"f",
    FieldKey(b"x", "m", 1),
    FieldKey(b"x", "m", 1),
    FieldKey(b"x", "m", 1.0),
    FieldKey(b"x", "m", True),
    FieldKey(b"x", "n", 1),
    FieldKey(b"y", "m"),
    FieldKeyTwin(b"y", "m", 0),
    InheritedFieldKey(b"x", "m", 1),
    ChunkOnlyKey(b"z", 1),
    ChunkOnlyKey(b"z", 2),
]
TAGS = ["", "prefetch:0", "store"]
READ_TTL_MS, WRITE_TTL_MS = 1_000, 500

# unique keys per batch: LMCache's answer is a dict, so a key twice in a
# batch keeps only its last outcome (test_a_key_twice_in_a_batch covers it)
batches = st.lists(st.sampled_from(KEYS), min_size=0, max_size=6, unique=True)
read_locks = st.integers(min_value=-2, max_value=131)
tags = st.sampled_from(TAGS)
_tokens = itertools.count()


class BooksAgainstModel(RuleBasedStateMachine):
    @initialize(capacity=st.integers(min_value=0, max_value=10))
    def build(self, capacity):
        self.clock = ManualClock(0)
        self.books = L1Bookkeeper(
            capacity, read_ttl_seconds=READ_TTL_MS / 1000, write_ttl_seconds=WRITE_TTL_MS / 1000, clock=self.clock
        )
        self.model = L1Model(
            capacity, read_ttl_seconds=READ_TTL_MS / 1000, write_ttl_seconds=WRITE_TTL_MS / 1000, clock_ms=self.clock.now_ms
        )

    def same(self, got, want):
        assert got == want, (got, want)
        # the objects handed back are the very objects attached
        for key, value in want.items():
            if isinstance(value, tuple):
                assert got[key][1] is value[1], (key, got[key], value)
                assert type(got[key][0]) is L1Error

    @rule(keys=batches, n=read_locks)
    def reserve_read(self, keys, n):
        self.same(self.books.reserve_read(keys, n), self.model.reserve_read(keys, n))

    @rule(keys=batches)
    def unsafe_read(self, keys):
        self.same(self.books.unsafe_read(keys), self.model.unsafe_read(keys))

    @rule(keys=batches, n=read_locks)
    def finish_read(self, keys, n):
        self.same(self.books.finish_read(keys, n), self.model.finish_read(keys, n))

    @rule(keys=batches, data=st.data(), tag=tags)
    def reserve_write(self, keys, data, tag):
        temporary = data.draw(st.lists(st.booleans(), min_size=len(keys), max_size=len(keys)))
        objects = [f"buffer-{next(_tokens)}" for _ in keys]
        got = self.books.reserve_write(keys, temporary, None, tag, objects=objects)
        self.same(got, self.model.reserve_write(keys, temporary, None, tag, objects=objects))

    @rule(keys=batches, tag=tags)
    def finish_write(self, keys, tag):
        self.same(self.books.finish_write(keys, tag), self.model.finish_write(keys, tag))

    @rule(keys=batches, tag=tags)
    def finish_prefetch(self, keys, tag):
        self.same(self.books.finish_prefetch(keys, tag), self.model.finish_prefetch(keys, tag))

    @rule(keys=batches, n=read_locks, tag=tags)
    def finish_write_and_reserve_read(self, keys, n, tag):
        got = self.books.finish_write_and_reserve_read(keys, n, tag)
        self.same(got, self.model.finish_write_and_reserve_read(keys, n, tag))

    @rule(keys=batches, force=st.booleans())
    def delete(self, keys, force):
        self.same(self.books.delete(keys, force), self.model.delete(keys, force))

    @rule(keys=batches, tag=tags)
    def finish_write_and_delete(self, keys, tag):
        self.same(self.books.finish_write_and_delete(keys, tag), self.model.finish_write_and_delete(keys, tag))

    @rule(keys=batches)
    def touch_keys(self, keys):
        assert self.books.touch_keys(keys) is None
        self.model.touch_keys(keys)

    @rule(force=st.booleans())
    def clear(self, force):
        self.books.clear(force)
        self.model.clear(force)

    @rule(ms=st.sampled_from([0, 1, 250, 499, 500, 501, 999, 1_000, 1_001, 5_000]))
    def advance(self, ms):
        self.clock.advance(ms)

    @invariant()
    def states_agree(self):
        assert self.books.used() == self.model.used()
        for key in KEYS:
            assert self.books.state_of(key) == self.model.state_of(key), key
            assert self.books.is_key_evictable(key) == self.model.is_key_evictable(key), key


TestBooksAgainstModel = BooksAgainstModel.TestCase
TestBooksAgainstModel.settings = settings(max_examples=300, stateful_step_count=40, deadline=None)


def test_slot_numbers_without_attached_objects():
    """Without ``objects=``, the object handed back is the slot number: an
    int, the same for a key from its reservation to its reads."""
    books = L1Bookkeeper(4)
    reserved = books.reserve_write(["a", "b"], [False, False])
    assert all(code is L1Error.SUCCESS and isinstance(slot, int) for code, slot in reserved.values())
    assert reserved["a"][1] != reserved["b"][1]
    books.finish_write(["a", "b"])
    read = books.reserve_read(["a", "b"])
    assert {key: obj for key, (_, obj) in read.items()} == {key: obj for key, (_, obj) in reserved.items()}


def test_a_key_leaves_and_comes_back():
    """A key that left the tier (its id given back) can come again, and the
    ids of others are not disturbed."""
    books = L1Bookkeeper(2)
    books.reserve_write(["a", "b"], [False, False], None, "", objects=["A", "B"])
    books.finish_write(["a", "b"])
    assert books.delete(["a"]) == {"a": L1Error.SUCCESS}
    assert books.reserve_read(["a", "b"]) == {"a": (L1Error.KEY_NOT_EXIST, None), "b": (L1Error.SUCCESS, "B")}
    assert books.reserve_write(["a"], [False], None, "", objects=["A2"]) == {"a": (L1Error.SUCCESS, "A2")}
    books.finish_write(["a"])
    assert books.reserve_read(["a"]) == {"a": (L1Error.SUCCESS, "A2")}
    assert len(books) == 2


def test_a_key_twice_in_a_batch():
    """Duplicates are processed in order, as by LMCache's loop; the dict
    keeps the last outcome. A reservation's second copy is refused (it
    still counted against the capacity), as the model has it."""
    for make in (L1Bookkeeper, L1Model):
        books = make(3)
        assert books.reserve_write(["a", "a"], [False, False], None, "t", objects=["A1", "A2"]) == {
            "a": (L1Error.KEY_NOT_WRITABLE, None)
        }
        assert books.used() == 1
        assert books.finish_write(["a", "a"], "t") == {"a": L1Error.KEY_NOT_EXIST}
        assert books.reserve_read(["a", "a"], 2) == {"a": (L1Error.SUCCESS, "A1")}
        assert books.state_of("a")["read_locks"] == 4
        # three allocations asked for, two places: none is made
        assert make(2).reserve_write(["b", "b", "c"], [False] * 3, None, "t") == {
            "b": (L1Error.OUT_OF_MEMORY, None),
            "c": (L1Error.OUT_OF_MEMORY, None),
        }


class CountedKey:
    """A key whose ``__hash__`` and ``__eq__`` calls are counted."""

    calls = 0

    def __init__(self, value):
        self.value = value

    def __hash__(self):
        CountedKey.calls += 1
        return hash(self.value)

    def __eq__(self, other):
        CountedKey.calls += 1
        return isinstance(other, CountedKey) and self.value == other.value


def test_the_held_key_object_is_found_without_a_python_call():
    """The object given to ``reserve_write`` is found again by identity;
    an equal new object by ``__hash__`` and ``__eq__``; a key that leaves
    costs no call (its hash is kept). The answer dict hashes each key once."""
    books = L1Bookkeeper(4)
    held = CountedKey(1)
    books.reserve_write([held], [False], None, "t")

    def calls(call, *args):
        CountedKey.calls = 0
        answer = call(*args)
        return CountedKey.calls, answer

    count, answer = calls(books.finish_write, [held], "t")
    assert count == 1  # the answer dict's hash; the lookup makes no call
    assert answer == {held: L1Error.SUCCESS}
    equal = CountedKey(1)
    count, answer = calls(books.reserve_read, [equal])
    assert count == 3  # the lookup's hash and eq, the answer's hash
    assert answer[equal][0] is L1Error.SUCCESS
    books.finish_read([equal])
    count, answer = calls(books.delete, [held])
    assert count == 1  # the answer's hash; letting the key go makes no call
    assert answer == {held: L1Error.SUCCESS}
    assert books.state_of(CountedKey(1))["resident"] is False


def python_calls(call, *args):
    """The answer of ``call(*args)`` and the ``__hash__`` and ``__eq__``
    methods written in Python that it ran, in order."""
    calls = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name in ("__hash__", "__eq__"):
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        answer = call(*args)
    finally:
        sys.setprofile(None)
    return answer, calls


def test_an_equal_dataclass_key_is_found_by_its_fields():
    """An equal new frozen-dataclass key (LMCache's ``ObjectKey`` kind) is
    found without its Python ``__hash__`` or ``__eq__``: only the answer
    dict hashes it. With a field that is not an exact ``bytes``, ``str`` or
    ``int``, its Python code runs, as a ``dict``'s would."""
    books = L1Bookkeeper(4)
    held = FieldKey(b"x", "m", 1)
    books.reserve_write([held], [False], None, "t")
    books.finish_write([held], "t")
    equal = FieldKey(b"x", "m", 1)
    answer, calls = python_calls(books.reserve_read, [equal])
    assert calls == ["__hash__"]
    assert answer[equal][0] is L1Error.SUCCESS
    books.finish_read([equal])
    float_field = FieldKey(b"x", "m", 1.0)
    answer, calls = python_calls(books.reserve_read, [float_field])
    assert sorted(calls) == ["__eq__", "__hash__", "__hash__"]
    assert answer[float_field][0] is L1Error.SUCCESS
    books.finish_read([float_field])
    other = FieldKey(b"x", "m", 2)
    answer, calls = python_calls(books.reserve_read, [other])
    assert calls == ["__hash__"]
    assert answer[other][0] is L1Error.KEY_NOT_EXIST


def test_a_freed_key_objects_address_names_no_key():
    """Once a key leaves, the books let go of its object; a new, different
    object at the same address (CPython reuses it) is a different key."""
    books = L1Bookkeeper(2)
    reused = 0
    for i in range(200):
        key = CountedKey(("gone", i))
        books.reserve_write([key], [False])
        books.finish_write([key])
        assert books.delete([key]) == {key: L1Error.SUCCESS}
        address = id(key)
        del key
        other = CountedKey(("new", i))
        reused += id(other) == address
        assert books.reserve_read([other]) == {other: (L1Error.KEY_NOT_EXIST, None)}
        assert books.state_of(other)["resident"] is False
        del other
    assert len(books) == 0
    # Not a condition of the test's verdict (the allocator decides), only
    # a note that the case it guards was met.
    print(f"an address was reused in {reused} of 200 rounds")


def test_an_unhashable_key_in_a_reservation_changes_nothing():
    """A key whose ``__hash__`` raises fails the call with the error, and
    the keys before it in the batch get no id: the books hold no reference
    to them, and the tier is as it was."""
    import gc
    import weakref

    books = L1Bookkeeper(4)
    books.reserve_write(["kept"], [False], None, "t")
    fresh = CountedKey("fresh")
    alive = weakref.ref(fresh)
    try:
        books.reserve_write(["kept", fresh, ["unhashable"]], [False] * 3, None, "t")
    except TypeError:
        pass
    else:
        raise AssertionError("an unhashable key must raise TypeError")
    assert books.used() == 1
    assert books.state_of("kept")["staged"] == {"t": True}
    assert books.state_of(CountedKey("fresh")) == {"resident": False, "read_locks": 0, "temporary": None, "staged": {}}
    del fresh
    gc.collect()
    assert alive() is None, "the books kept a reference to a key of the failed call"


field_values = st.one_of(st.binary(max_size=12), st.text(max_size=6), st.integers(min_value=-(2**70), max_value=2**70))


@settings(max_examples=300, deadline=None)
@given(chunk=field_values, model=st.text(max_size=6), rank=field_values)
def test_a_key_hashed_by_its_fields_has_its_python_hash(chunk, model, rank):
    """The hash the books compute from a dataclass key's fields is the one
    its ``__hash__`` gives: a key of another class that a ``dict`` finds by
    that hash (``FieldKeyTwin``) finds it too, both ways."""
    key = FieldKey(chunk, model, rank)
    twin = FieldKeyTwin(chunk, model, rank)
    assert hash(key) == hash(twin) and key == twin
    for held, looked_up in ((key, twin), (twin, key)):
        books = L1Bookkeeper(2)
        books.reserve_write([held], [False], None, "t")
        books.finish_write([held], "t")
        assert books.reserve_read([looked_up])[looked_up][0] is L1Error.SUCCESS
