"""bitplan's eviction policies against the release's own classes (issue
#37, item 3): the same random event sequences (created, reserved, touched,
removed, victims asked with a filter and some of them removed) give the
same victims, the same tracked counts and the same state (ARC's lists and
target, LRU's order, the isolated LRU's checkpoint)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lmcache.v1.distributed.api import ObjectKey
from lmcache.v1.distributed.config import EvictionConfig
from lmcache.v1.distributed.eviction_policy import (
    ARCEvictionPolicy,
    IsolatedLRUEvictionPolicy,
    LRUEvictionPolicy,
    NoOpEvictionPolicy,
)
from lmcache.v1.distributed.eviction_policy.factory import CreateEvictionPolicy as lmcache_factory
from lmcache.v1.distributed.internal_api import EvictionAction, EvictionDestination

from bitplan.lmcache.integration import eviction as ours

# Two chunks' families over two ranks and two groups, two salts: the
# release evicts key by key, where bitplan's own face keeps families.
KEYS = [
    ObjectKey(chunk_hash=ObjectKey.IntHash2Bytes(chunk), model_name="m", kv_rank=rank, object_group_id=group, cache_salt=salt)
    for chunk in range(4)
    for rank in range(2)
    for group in range(2)
    for salt in ("", "u1")
]

batch = st.lists(st.integers(0, len(KEYS) - 1), max_size=8)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("created"), batch),
        st.tuples(st.just("reserved"), batch),
        st.tuples(st.just("touched"), batch),
        st.tuples(st.just("removed"), batch),
        st.tuples(
            st.just("victims"),
            st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0, 1.5]),
            st.lists(st.booleans(), min_size=len(KEYS), max_size=len(KEYS)),
            st.lists(st.booleans(), min_size=8, max_size=8),
        ),
    ),
    max_size=40,
)

PAIRS = {
    "LRU": (LRUEvictionPolicy, ours.LRUEvictionPolicy),
    "ARC": (ARCEvictionPolicy, ours.ARCEvictionPolicy),
    "IsolatedLRU": (IsolatedLRUEvictionPolicy, ours.IsolatedLRUEvictionPolicy),
    "noop": (NoOpEvictionPolicy, ours.NoOpEvictionPolicy),
}


def snapshot(policy, name):
    # LMCache's no-op policy has no count (bitplan's says 0).
    out = {} if name == "noop" else {"tracked": policy.get_num_tracked_keys()}
    if name == "LRU":
        out["order"] = policy.get_eviction_candidates(len(KEYS) + 1)
    if name == "ARC":
        out["state"] = policy.get_debug_state()
    if name == "IsolatedLRU":
        out["capture"] = policy.capture()
        out["salts"] = sorted(policy.get_tracked_salts())
    return out


def ask(policy, name, ratio, eligible):
    salt = "u1" if name == "IsolatedLRU" else None
    allowed = {key for key, ok in zip(KEYS, eligible) if ok}
    actions = policy.get_eviction_actions(ratio, key_eligible_filter=lambda key: key in allowed, cache_salt=salt)
    assert all(isinstance(action, EvictionAction) for action in actions)
    return [(action.destination, list(action.keys)) for action in actions]


@pytest.mark.parametrize("name", sorted(PAIRS))
@given(sequence=ops)
def test_the_same_victims_and_state(name, sequence):
    theirs, mine = (cls() for cls in PAIRS[name])
    for op in sequence:
        kind = op[0]
        if kind == "victims":
            _, ratio, eligible, confirm = op
            expected = ask(theirs, name, ratio, eligible)
            assert ask(mine, name, ratio, eligible) == expected
            victims = expected[0][1] if expected else []
            gone = [key for key, ok in zip(victims, confirm) if ok]
            theirs.on_keys_removed(gone)
            mine.on_keys_removed(gone)
        else:
            keys = [KEYS[i] for i in op[1]]
            getattr(theirs, f"on_keys_{kind}")(keys)
            getattr(mine, f"on_keys_{kind}")(keys)
        assert snapshot(mine, name) == snapshot(theirs, name)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_the_interface(name):
    theirs, mine = (cls() for cls in PAIRS[name])
    for attribute in ("support_isolation", "name", "persistence_type"):
        assert getattr(mine, attribute) == getattr(theirs, attribute), attribute
    mine.register_eviction_destination(EvictionDestination.L2_CACHE)
    theirs.register_eviction_destination(EvictionDestination.L2_CACHE)
    mine.on_keys_created(KEYS[:4])
    theirs.on_keys_created(KEYS[:4])
    salt = "" if name == "IsolatedLRU" else None
    assert [(a.destination, a.keys) for a in mine.get_eviction_actions(1.0, cache_salt=salt)] == [
        (a.destination, a.keys) for a in theirs.get_eviction_actions(1.0, cache_salt=salt)
    ]


def test_isolated_lru_refuses_no_salt_and_restores_a_checkpoint():
    theirs, mine = IsolatedLRUEvictionPolicy(), ours.IsolatedLRUEvictionPolicy()
    for policy in (theirs, mine):
        with pytest.raises(ValueError, match="requires cache_salt"):
            policy.get_eviction_actions(0.5)
        policy.on_keys_created(KEYS[:10])
        policy.on_keys_touched(KEYS[3:5])
    state = theirs.capture()
    assert mine.capture() == state
    again = ours.IsolatedLRUEvictionPolicy()
    again.on_keys_created(KEYS[10:])  # replaced, not merged
    again.restore(state)
    assert again.capture() == state
    assert again.get_num_tracked_keys() == 10


@pytest.mark.parametrize("name", ["LRU", "ARC", "IsolatedLRU", "noop"])
def test_the_factory_under_the_switch(name):
    import bitplan.lmcache.integration as integration

    integration.install()
    try:
        from lmcache.v1.distributed.eviction_policy import CreateEvictionPolicy as package_factory
        from lmcache.v1.distributed.storage_controllers import eviction_controller

        policy = eviction_controller.CreateEvictionPolicy(EvictionConfig(eviction_policy=name))
        assert type(policy) is {v[0].__name__: v[1] for v in PAIRS.values()}[type(lmcache_factory(EvictionConfig(eviction_policy=name))).__name__]
        assert package_factory is eviction_controller.CreateEvictionPolicy
        assert isinstance(eviction_controller.CreateEvictionPolicy(EvictionConfig(eviction_policy="S3FIFO")), ours.S3FIFOEvictionPolicy)
        with pytest.raises(ValueError, match="Unsupported eviction policy: FIFO"):
            eviction_controller.CreateEvictionPolicy(EvictionConfig(eviction_policy="FIFO"))
    finally:
        integration.uninstall()
    from lmcache.v1.distributed.storage_controllers import eviction_controller

    assert eviction_controller.CreateEvictionPolicy is lmcache_factory
