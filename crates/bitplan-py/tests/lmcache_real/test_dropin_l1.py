"""``L1Manager``'s books in bitplan against the release's own
``L1Manager`` (issue #37, item 3): the same random sequences of calls, on
two managers with the same memory, give the same answers (codes, and the
same memory object for the same key where LMCache hands one out), the same
listener calls with the same keys in the same order, the same memory and
staging usage, and the same evictable keys."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from lmcache.v1.distributed.api import MemoryLayoutDesc, ObjectKey
from lmcache.v1.distributed.config import L1ManagerConfig, L1MemoryManagerConfig
from lmcache.v1.distributed.internal_api import L1ManagerListener
from lmcache.v1.distributed.l1_manager import L1Manager

from bitplan.lmcache.integration import listeners
from bitplan.lmcache.integration.l1_manager import BitplanL1Manager

KEYS = [ObjectKey(ObjectKey.IntHash2Bytes(i), "m", i % 2) for i in range(8)]
LAYOUT = MemoryLayoutDesc(shapes=[torch.Size([64])], dtypes=[torch.float16])
TAGS = ["", "a", "b"]
# The listener interface, read from LMCache's own class (not from bitplan's
# copy of it, which test_listener_events_are_lmcaches checks).
EVENTS = tuple(name for name in vars(L1ManagerListener) if name.startswith("on_"))


class Recorder:
    """A listener that records every call (none of its methods is a no-op,
    so bitplan calls them all, as LMCache does)."""

    def __init__(self) -> None:
        self.log: list = []

    def __getattr__(self, name):
        if name not in EVENTS:
            raise AttributeError(name)

        def record(keys):
            self.log.append((name, list(keys)))

        return record


class Labels:
    """Each memory object a manager hands out, named by the first key and
    call that handed it out: two managers must hand out objects the same
    way, though they are different objects."""

    def __init__(self) -> None:
        self.names: dict[int, tuple] = {}
        self.keep: list = []

    def __call__(self, obj, key, step):
        if obj is None:
            return None
        if id(obj) not in self.names:
            self.names[id(obj)] = (KEYS.index(key), step)
            self.keep.append(obj)
        return self.names[id(obj)]


def manager(cls):
    config = L1ManagerConfig(
        memory_config=L1MemoryManagerConfig(size_in_bytes=64 << 10, use_lazy=False, shm_name="")
    )
    m = cls(config)
    recorder = Recorder()
    m.register_listener(recorder)
    return m, recorder


def normalize(answer, labels, step):
    out = {}
    for key, value in answer.items():
        if isinstance(value, tuple):
            code, obj = value
            out[KEYS.index(key)] = (code, labels(obj, key, step))
        else:
            out[KEYS.index(key)] = value
    return out


keys = st.lists(st.integers(0, len(KEYS) - 1), max_size=6)
unique_keys = st.lists(st.integers(0, len(KEYS) - 1), max_size=6, unique=True)
calls = st.lists(
    st.one_of(
        st.tuples(st.just("reserve_write"), unique_keys, st.lists(st.booleans(), min_size=6, max_size=6), st.sampled_from(TAGS)),
        st.tuples(st.just("finish_write"), keys, st.sampled_from(TAGS)),
        st.tuples(st.just("finish_write_and_reserve_read"), keys, st.integers(0, 3), st.sampled_from(TAGS)),
        st.tuples(st.just("finish_write_and_delete"), keys, st.sampled_from(TAGS)),
        st.tuples(st.just("reserve_read"), keys, st.integers(-1, 3)),
        st.tuples(st.just("unsafe_read"), keys),
        st.tuples(st.just("finish_read"), keys, st.integers(0, 3)),
        st.tuples(st.just("delete"), keys, st.booleans()),
        st.tuples(st.just("touch_keys"), keys),
        st.tuples(st.just("clear"), st.booleans()),
    ),
    max_size=30,
)


def call(m, op):
    kind = op[0]
    if kind == "reserve_write":
        ks = [KEYS[i] for i in op[1]]
        return m.reserve_write(ks, op[2][: len(ks)], LAYOUT, op[3])
    if kind == "clear":
        return m.clear(force=op[1])
    ks = [KEYS[i] for i in op[1]]
    if kind in ("finish_write", "finish_write_and_delete"):
        return getattr(m, kind)(ks, tag=op[2])
    if kind == "finish_write_and_reserve_read":
        return m.finish_write_and_reserve_read(ks, read_locks=op[2], tag=op[3])
    if kind in ("reserve_read", "finish_read"):
        return getattr(m, kind)(ks, op[2])
    if kind == "delete":
        return m.delete(ks, force=op[2])
    return getattr(m, kind)(ks)


@given(sequence=calls)
def test_the_same_answers_events_and_usage(sequence):
    (theirs, their_log), (mine, my_log) = manager(L1Manager), manager(BitplanL1Manager)
    their_labels, my_labels = Labels(), Labels()
    try:
        for step, op in enumerate(sequence):
            expected = call(theirs, op)
            got = call(mine, op)
            if isinstance(expected, dict):
                assert normalize(got, my_labels, step) == normalize(expected, their_labels, step), op
            else:
                assert got == expected, op
            assert my_log.log == their_log.log, op
            assert mine.get_memory_usage() == theirs.get_memory_usage(), op
            assert mine.get_staging_memory_usage() == theirs.get_staging_memory_usage(), op
            assert [mine.is_key_evictable(k) for k in KEYS] == [theirs.is_key_evictable(k) for k in KEYS], op
            mine_status, their_status = mine.report_status(), theirs.report_status()
            for field in (
                "total_object_count",
                "write_locked_count",
                "read_locked_count",
                "temporary_count",
                "staging_object_count",
                "staging_bytes",
                "memory_used_bytes",
            ):
                assert mine_status[field] == their_status[field], (op, field)
            for k in KEYS:
                a, b = mine.get_object_state(k), theirs.get_object_state(k)
                assert (a is None) == (b is None), op
                if a is not None:
                    assert (a.is_temporary, a.read_lock.is_locked()) == (b.is_temporary, b.read_lock.is_locked())
        assert mine.memcheck() == theirs.memcheck()
    finally:
        theirs.close()
        mine.close()



def test_listener_events_are_lmcaches():
    assert listeners.EVENTS == EVENTS
    assert len(EVENTS) == 7

def test_a_length_mismatch_raises_what_lmcache_raises_and_changes_nothing():
    (theirs, _), (mine, my_log) = manager(L1Manager), manager(BitplanL1Manager)
    try:
        for m in (theirs, mine):
            with pytest.raises(ValueError, match="2 keys but 1 is_temporary flags"):
                m.reserve_write(KEYS[:2], [False], LAYOUT)
        assert my_log.log == []
        assert mine.get_memory_usage() == theirs.get_memory_usage()
        assert mine.report_status()["total_object_count"] == 0
    finally:
        theirs.close()
        mine.close()
