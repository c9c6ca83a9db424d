"""``bitplan.lmcache.eviction_policy``: LMCache's face (names, constructors,
factory, errors, bridges, keys of any kind), the positional fast path
``SlotEvictionPolicy``, threads and the GIL. The rules themselves are
checked against the plain-Python model in ``test_eviction_stateful.py``."""

import threading

import numpy as np
import pytest

from bitplan import Bitmap, _native
from bitplan.lmcache import eviction_policy as ev
from bitplan.lmcache.eviction_policy import (
    ARCEvictionPolicy,
    CreateEvictionPolicy,
    EvictionAction,
    EvictionConfig,
    EvictionDestination,
    IsolatedLRUEvictionPolicy,
    L1EvictionPolicy,
    L2EvictionPolicy,
    LRUEvictionPolicy,
    NoOpEvictionPolicy,
    ObjectKey,
    S3FIFOEvictionPolicy,
    SlotEvictionPolicy,
)


def key(i: int, salt: str = "") -> ObjectKey:
    return ObjectKey(ObjectKey.IntHash2Bytes(i), "model", 0, 0, salt)


# ---------------------------------------------------------------------------
# LMCache's face
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,cls",
    [
        ("LRU", LRUEvictionPolicy),
        ("IsolatedLRU", IsolatedLRUEvictionPolicy),
        ("S3FIFO", S3FIFOEvictionPolicy),
        ("ARC", ARCEvictionPolicy),
        ("noop", NoOpEvictionPolicy),
    ],
)
def test_factory_makes_each_policy(name, cls):
    policy = CreateEvictionPolicy(EvictionConfig(eviction_policy=name))
    assert type(policy) is cls
    assert isinstance(policy, ev.EvictionPolicy)
    assert policy.support_isolation is (name == "IsolatedLRU")
    assert policy.capture() == {} and policy.restore({}) is None


def test_factory_refuses_unknown_names_and_lists_the_known():
    with pytest.raises(ValueError, match="Unsupported eviction policy: 'lru'.*LRU, IsolatedLRU, S3FIFO, ARC, noop"):
        CreateEvictionPolicy(EvictionConfig(eviction_policy="lru"))
    with pytest.raises(ValueError, match="known: LRU, IsolatedLRU, S3FIFO, ARC, noop"):
        SlotEvictionPolicy("FIFO")


@pytest.mark.parametrize("field", ["trigger_watermark", "eviction_ratio"])
@pytest.mark.parametrize("value", [-0.1, 1.5, float("nan")])
def test_config_refuses_fractions_outside_0_1(field, value):
    with pytest.raises(ValueError, match=field):
        EvictionConfig("LRU", **{field: value})
    config = EvictionConfig("LRU")
    assert (config.trigger_watermark, config.eviction_ratio) == (0.8, 0.2)


def test_object_key_is_lmcaches():
    assert ObjectKey.IntHash2Bytes(258) == b"\x00\x00\x01\x02"
    assert ObjectKey.Bytes2IntHash(b"\x00\x00\x01\x02") == 258
    assert ObjectKey.ComputeKVRank(8, 5, 4, 1) == (8 << 24) | (5 << 16) | (4 << 8) | 1
    assert key(1) == key(1) and hash(key(1)) == hash(key(1)) and key(1) != key(1, "s")
    for bad in (dict(model_name="a@b"), dict(object_group_id=-1), dict(cache_salt="a/b"), dict(cache_salt="x" * 129)):
        fields = dict(chunk_hash=b"\x00", model_name="m", kv_rank=0) | bad
        with pytest.raises(ValueError):
            ObjectKey(**fields)


def test_actions_have_lmcaches_shape_and_destinations():
    policy = LRUEvictionPolicy()
    policy.on_keys_created([key(1), key(2)])
    assert policy.get_eviction_actions(1.0) == [EvictionAction(EvictionDestination.DISCARD, [key(2), key(1)])]
    policy.register_eviction_destination(EvictionDestination.L2_CACHE)
    policy.register_eviction_destination(EvictionDestination.DISCARD)
    assert policy.get_eviction_actions(0.5)[0].destination is EvictionDestination.L2_CACHE
    # Victims stay tracked until removed: asking twice gives the same keys.
    assert policy.get_eviction_actions(0.5)[0].keys == [key(2)]
    assert policy.get_num_tracked_keys() == 2


def test_isolated_lru_needs_a_salt():
    policy = IsolatedLRUEvictionPolicy()
    policy.on_keys_created([key(1, "a"), key(2, "b")])
    with pytest.raises(ValueError, match="requires cache_salt"):
        policy.get_eviction_actions(1.0)
    assert policy.get_eviction_actions(1.0, cache_salt="never") == []
    assert policy.get_eviction_actions(1.0, cache_salt="b")[0].keys == [key(2, "b")]
    # Created in reverse: salt "b" got its bucket first.
    assert policy.get_tracked_salts() == ["b", "a"]
    assert policy.get_num_tracked_keys() == 2 and policy.get_num_tracked_keys("a") == 1
    policy.on_keys_removed([key(1, "a")])
    assert policy.get_tracked_salts() == ["b"]


@pytest.mark.parametrize("cls", [LRUEvictionPolicy, S3FIFOEvictionPolicy, ARCEvictionPolicy])
def test_any_hashable_key(cls):
    policy = cls()
    keys = [1, "two", (3, "three"), b"four", frozenset({5})]
    policy.on_keys_created(keys)
    assert policy.get_num_tracked_keys() == 5
    victims = policy.get_eviction_actions(1.0)[0].keys
    assert sorted(map(repr, victims)) == sorted(map(repr, keys))
    policy.on_keys_removed(victims)
    assert policy.get_num_tracked_keys() == 0


def test_an_unhashable_key_is_a_type_error_and_changes_nothing():
    policy = LRUEvictionPolicy()
    policy.on_keys_created([key(1)])
    with pytest.raises(TypeError):
        policy.on_keys_created([key(2), [3]])
    assert policy.get_num_tracked_keys() == 1 and policy._held_keys() == 1
    assert policy.get_eviction_candidates(5) == [key(1)]


def test_a_filter_that_raises_raises():
    policy = ARCEvictionPolicy()
    policy.on_keys_created([key(1), key(2)])

    def boom(k):
        raise RuntimeError("no")

    with pytest.raises(RuntimeError, match="no"):
        policy.get_eviction_actions(1.0, key_eligible_filter=boom)
    assert policy.get_num_tracked_keys() == 2


def test_keys_are_let_go_when_the_policy_forgets_them():
    policy = ARCEvictionPolicy()
    policy.on_keys_created([key(i) for i in range(4)])
    policy.on_keys_removed(policy.get_eviction_actions(0.5)[0].keys)
    state = policy.get_debug_state()
    assert len(state["b1"]) == 2 and policy._held_keys() == 4
    # Capacity 4: a fifth and sixth key trims B1 (|T1| + |B1| > 4).
    policy.on_keys_created([key(10), key(11)])
    assert policy._held_keys() == len(policy.get_debug_state()["b1"]) + 4
    lru = LRUEvictionPolicy()
    lru.on_keys_created([key(i) for i in range(100)])
    lru.on_keys_removed([key(i) for i in range(100)])
    assert lru._held_keys() == 0
    noop = NoOpEvictionPolicy()
    noop.on_keys_created([key(1)])
    assert noop._held_keys() == 0 and noop.get_eviction_actions(1.0) == []


def test_bridges_map_lmcaches_events():
    calls = []

    class Recorder(ev.EvictionPolicy):
        def on_keys_created(self, keys):
            calls.append(("created", keys))

        def on_keys_touched(self, keys):
            calls.append(("touched", keys))

        def on_keys_removed(self, keys):
            calls.append(("removed", keys))

        def note_key_positions(self, keys, positions):
            calls.append(("positions", keys))

    l1 = L1EvictionPolicy(Recorder())
    l1.on_l1_keys_reserved_read([1])
    l1.on_l1_keys_read_finished([2])
    l1.on_l1_keys_reserved_write([3])
    l1.on_l1_keys_write_finished([4])
    l1.on_l1_keys_finish_write_and_reserve_read([5])
    l1.on_l1_keys_accessed([6])
    l1.on_l1_keys_deleted_by_manager([7])
    l1.note_key_positions([8], [0])
    l2 = L2EvictionPolicy(Recorder())
    l2.on_l2_keys_stored([9], [1])
    l2.on_l2_keys_accessed([10])
    l2.on_l2_keys_deleted([11])
    assert calls == [
        ("created", [3]),
        ("created", [4]),
        ("created", [5]),
        ("touched", [6]),
        ("removed", [7]),
        ("positions", [8]),
        ("created", [9]),
        ("touched", [10]),
        ("removed", [11]),
    ]
    # A policy without note_key_positions is not asked.
    L1EvictionPolicy(LRUEvictionPolicy()).note_key_positions([key(1)], [0])


# ---------------------------------------------------------------------------
# Threads and the GIL
# ---------------------------------------------------------------------------


def test_large_batches_release_the_gil():
    policy = LRUEvictionPolicy()
    keys = [key(i) for i in range(5000)]
    before = _native._detached_calls()
    policy.on_keys_created(keys)
    policy.on_keys_touched(keys)
    policy.get_eviction_actions(0.1)
    policy.on_keys_removed(keys)
    assert _native._detached_calls() - before == 4
    small = LRUEvictionPolicy()
    before = _native._detached_calls()
    small.on_keys_created(keys[:10])
    small.get_eviction_actions(0.1)
    assert _native._detached_calls() == before


@pytest.mark.parametrize("cls", [LRUEvictionPolicy, S3FIFOEvictionPolicy, ARCEvictionPolicy])
def test_threads_share_one_policy(cls):
    policy = cls()
    errors = []

    def worker(base):
        try:
            mine = [key(base + i) for i in range(200)]
            for round_ in range(20):
                policy.on_keys_created(mine)
                policy.on_keys_touched(mine[::3])
                policy.get_eviction_actions(0.05)
                policy.on_keys_removed(mine[round_ % 2 :: 2])
            policy.on_keys_removed(mine)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(1000 * t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert policy.get_num_tracked_keys() == 0


# ---------------------------------------------------------------------------
# The positional fast path
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["LRU", "S3FIFO", "ARC"])
def test_slots_give_the_same_victims_as_keys(name):
    keyed = CreateEvictionPolicy(EvictionConfig(name))
    slots = SlotEvictionPolicy(name)
    rng = np.random.default_rng(7)
    for _ in range(200):
        batch = rng.integers(0, 64, size=rng.integers(1, 9)).astype(np.uint32)
        op = rng.integers(0, 4)
        if op == 0:
            keyed.on_keys_created([key(int(i)) for i in batch])
            slots.on_created(batch)
        elif op == 1:
            keyed.on_keys_touched([key(int(i)) for i in batch])
            slots.on_touched(batch)
        elif op == 2:
            keyed.on_keys_removed([key(int(i)) for i in batch])
            slots.on_removed(batch)
        else:
            ratio = float(rng.random())
            actions = keyed.get_eviction_actions(ratio)
            victims = slots.victims(ratio)
            assert victims.dtype == np.uint32
            expected = [ObjectKey.Bytes2IntHash(k.chunk_hash) for k in actions[0].keys] if actions else []
            assert victims.tolist() == expected
            if rng.random() < 0.5:
                keyed.on_keys_removed(actions[0].keys if actions else [])
                slots.on_removed(victims)
        assert slots.num_tracked() == keyed.get_num_tracked_keys()


def test_slot_eligibility_as_a_bitmap_or_a_callable():
    policy = SlotEvictionPolicy("LRU")
    policy.on_created(np.arange(10, dtype=np.uint32))
    # Created in reverse: slot 9 is the oldest.
    eligible = Bitmap(8)
    for slot in (1, 3, 5, 7):
        eligible.set(slot)
    assert policy.victims(1.0, eligible).tolist() == [7, 5, 3, 1]
    assert policy.victims(0.2, lambda slot: slot % 2 == 0).tolist() == [8, 6]
    from bitplan.lmcache.native import Bitmap as LmBitmap

    assert policy.victims(0.1, LmBitmap(10, 10)).tolist() == [9]
    with pytest.raises(TypeError, match="eligible"):
        policy.victims(0.5, "all")


def test_slot_inputs_are_checked():
    policy = SlotEvictionPolicy("ARC")
    policy.on_created([0, 1, 2])
    policy.on_created(np.array([3, 4], dtype=np.int64))
    assert policy.num_tracked() == 5 and policy.name == "ARC" and not policy.support_isolation
    with pytest.raises(ValueError, match="not a slot"):
        policy.on_created(np.array([-1], dtype=np.int64))
    with pytest.raises(ValueError, match="1-d"):
        policy.on_created(np.zeros((2, 2), dtype=np.uint32))
    with pytest.raises(TypeError, match="integer array"):
        policy.on_created(np.zeros(2, dtype=np.float64))
    with pytest.raises(ValueError, match="small_max_size"):
        SlotEvictionPolicy("ARC", small_max_size=3)
    isolated = SlotEvictionPolicy("IsolatedLRU")
    assert isolated.support_isolation
    with pytest.raises(ValueError, match="cache_salt"):
        isolated.victims(0.5)


def test_slot_families_through_meta():
    policy = SlotEvictionPolicy("LRU")
    # Two families of two (ranks 0 and 1, group 0), namespace 0, salt 0.
    meta = np.array([[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [1, 0, 0, 0, 0], [1, 0, 1, 0, 0]], dtype=np.uint32)
    policy.on_created(np.array([0, 1, 2, 3], dtype=np.uint32), meta=meta)
    victims = policy.victims(0.25)
    assert sorted(victims.tolist()) in ([0, 1], [2, 3])
    with pytest.raises(ValueError, match="shape"):
        policy.on_created(np.array([4], dtype=np.uint32), meta=meta)


def test_arc_ghosts_through_slots():
    policy = SlotEvictionPolicy("ARC")
    policy.on_created(np.arange(4, dtype=np.uint32))
    victims = policy.victims(0.5)
    policy.on_removed(victims)
    assert all(policy.remembers(int(slot)) and not policy.is_tracked(int(slot)) for slot in victims)
    policy.on_created(np.arange(10, 14, dtype=np.uint32))
    released = policy.drain_released()
    assert released.dtype == np.uint32
    assert not any(policy.remembers(int(slot)) for slot in released)
    assert policy.memory_bytes() > 0


@pytest.mark.parametrize("name", ["LRU", "IsolatedLRU"])
def test_family_ids_survive_churn(name):
    """Thousands of chunk families come and go (the key table sweeps the
    dead ones and reuses their ids, from 1,024 on); victims still match the
    model's, families whole."""
    import sys

    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from _eviction_model import MODELS

    def family(chunk, salt=""):
        return [ObjectKey(ObjectKey.IntHash2Bytes(chunk), "m", rank, group, salt) for rank in (0, 1) for group in (0, 1)]

    model, native = MODELS[name](), CreateEvictionPolicy(EvictionConfig(name))
    for op, chunks in (("create", range(0, 3000)), ("remove", range(500, 2500)), ("create", range(4000, 5200))):
        for chunk in chunks:
            keys = family(chunk)
            if op == "remove":
                model.on_keys_removed(keys)
                native.on_keys_removed([ObjectKey(**k.__dict__) for k in keys])
            else:
                # Two store batches per family, as two ranks' would be.
                for half in (keys[::2], keys[1::2]):
                    model.on_keys_created(half)
                    native.on_keys_created(half)
    assert native.get_num_tracked_keys() == model.get_num_tracked_keys() == 4 * (1000 + 1200)
    refused = set(family(100)[:1] + family(4100)[1:2])
    salt = "" if name == "IsolatedLRU" else None
    expected = model.victims(0.3, lambda k: k not in refused, salt)
    actions = native.get_eviction_actions(0.3, key_eligible_filter=lambda k: k not in refused, cache_salt=salt)
    assert actions[0].keys == expected and len(expected) % 4 == 0
