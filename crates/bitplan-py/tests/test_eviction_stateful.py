"""Hypothesis state machines: every rule of LMCache's eviction policies,
native (``bitplan.lmcache.eviction_policy``) against the plain-Python
transcription in ``_eviction_model.py``.

Each machine sends both the same batches of created, touched and removed
keys, asks both for victims (with and without a filter, at ratios from 0
past 1, in a salt for the isolated LRU), sometimes confirms the victims with
a removal as LMCache's controller does, and after every step compares what
LMCache's test helpers show: the tracked count, LRU's order, ARC's lists and
target, the isolated LRU's salts. The keys are ``ObjectKey``\\ s from two
namespaces: plain ranks with two object groups (families of four), and
packed ranks of a two-worker topology (families of two), in two salts, so
that the chunk-coherent rules (incomplete families, refused members, salts)
come up often.
"""

from __future__ import annotations

from _eviction_model import MODELS
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from bitplan.lmcache.eviction_policy import (
    ARCEvictionPolicy,
    EvictionDestination,
    IsolatedLRUEvictionPolicy,
    LRUEvictionPolicy,
    NoOpEvictionPolicy,
    ObjectKey,
    S3FIFOEvictionPolicy,
)

SALTS = ("", "tenant")


def _universe() -> list[ObjectKey]:
    keys = []
    for salt in SALTS:
        for chunk in range(4):
            for rank in range(2):
                for group in range(2):
                    keys.append(ObjectKey(ObjectKey.IntHash2Bytes(chunk), "plain", rank, group, salt))
        for chunk in range(3):
            for rank in range(2):
                packed = ObjectKey.ComputeKVRank(world_size=2, global_rank=rank, local_world_size=2, local_rank=rank)
                keys.append(ObjectKey(ObjectKey.IntHash2Bytes(chunk), "packed", packed, 0, salt))
    return keys


KEYS = _universe()
# Equal keys built anew, so that the native table compares with __eq__ and
# not only by identity.
twins = st.sampled_from(range(len(KEYS))).map(lambda i: ObjectKey(**KEYS[i].__dict__))
batches = st.lists(st.one_of(st.sampled_from(KEYS), twins), max_size=12)
ratios = st.one_of(st.sampled_from([0.0, 0.01, 0.1, 0.25, 0.5, 1.0, 1.5, -0.5]), st.floats(0.0, 1.0))

NATIVE = {
    "LRU": LRUEvictionPolicy,
    "IsolatedLRU": IsolatedLRUEvictionPolicy,
    "S3FIFO": S3FIFOEvictionPolicy,
    "ARC": ARCEvictionPolicy,
    "noop": NoOpEvictionPolicy,
}


class PolicyMachine(RuleBasedStateMachine):
    name = "LRU"

    @initialize(small=st.sampled_from([None, 0, 2, 5]))
    def make(self, small):
        if self.name == "S3FIFO":
            self.model = MODELS[self.name](small_max_size=small)
            self.native = S3FIFOEvictionPolicy(EvictionDestination.L2_CACHE, small_max_size=small)
        else:
            self.model = MODELS[self.name]()
            self.native = NATIVE[self.name](default_destination=EvictionDestination.L2_CACHE)

    @rule(keys=batches)
    def created(self, keys):
        self.model.on_keys_created(keys)
        self.native.on_keys_created(keys)

    @rule(keys=batches)
    def touched(self, keys):
        self.model.on_keys_touched(keys)
        self.native.on_keys_touched(keys)

    @rule(keys=batches)
    def removed(self, keys):
        self.model.on_keys_removed(keys)
        self.native.on_keys_removed(keys)

    @rule(
        ratio=ratios,
        refused=st.none() | st.sets(st.sampled_from(KEYS), max_size=10),
        salt=st.sampled_from(SALTS),
        confirm=st.booleans(),
    )
    def evict(self, ratio, refused, salt, confirm):
        key_filter = None if refused is None else (lambda key: key not in refused)
        salt_arg = salt if self.model.support_isolation else None
        expected = self.model.victims(ratio, key_filter, salt_arg)
        actions = self.native.get_eviction_actions(ratio, key_eligible_filter=key_filter, cache_salt=salt_arg)
        if not expected:
            assert actions == []
            return
        assert len(actions) == 1
        assert actions[0].destination is EvictionDestination.L2_CACHE
        assert actions[0].keys == expected
        if confirm:
            self.model.on_keys_removed(expected)
            self.native.on_keys_removed(actions[0].keys)

    @invariant()
    def same_state(self):
        if not hasattr(self, "model"):
            return
        if self.name == "noop":
            assert self.native.get_eviction_actions(1.0) == []
            assert self.native._held_keys() == 0
            return
        assert self.native.get_num_tracked_keys() == self.model.get_num_tracked_keys()
        if self.name == "LRU":
            everything = self.model.get_num_tracked_keys() + 1
            assert self.native.get_eviction_candidates(everything) == self.model.get_eviction_candidates(everything)
            assert self.native._held_keys() == self.model.get_num_tracked_keys()
        elif self.name == "IsolatedLRU":
            assert self.native.get_tracked_salts() == self.model.get_tracked_salts()
            for salt in SALTS:
                assert self.native.get_num_tracked_keys(salt) == self.model.get_num_tracked_keys(salt)
            assert self.native._held_keys() == self.model.get_num_tracked_keys()
        elif self.name == "ARC":
            state = self.model.get_debug_state()
            assert self.native.get_debug_state() == state
            assert self.native._held_keys() == sum(len(state[name]) for name in ("t1", "t2", "b1", "b2"))
        elif self.name == "S3FIFO":
            state = self.model.state()
            assert self.native._held_keys() == len(state["small"]) + len(state["main"]) + len(state["ghost"])


def _machine(policy: str) -> type[PolicyMachine]:
    return type(f"{policy}Machine", (PolicyMachine,), {"name": policy})


TestLRU = _machine("LRU").TestCase
TestIsolatedLRU = _machine("IsolatedLRU").TestCase
TestS3FIFO = _machine("S3FIFO").TestCase
TestARC = _machine("ARC").TestCase
TestNoOp = _machine("noop").TestCase
