"""Under bitplan, an LMCache call with bad input raises what LMCache raises
and changes nothing (issue #37, "Bad input"): the same calls on a stock
``StorageManager`` and on one with bitplan installed."""

from __future__ import annotations

import pytest
import scenarios
import torch
from lmcache.v1.distributed.api import MemoryLayoutDesc
from scenarios import Config, Shape, key

import bitplan.lmcache.integration as integration

SHAPE = Shape(windows=[-1], ranks=1, elements=[64])
LAYOUT = SHAPE.layout(0)
KEYS = [key(1, j, 0, 0, 1) for j in range(4)]

BAD = {
    "reserve_write of no list": lambda sm: sm.reserve_write(None, LAYOUT),
    "reserve_write of an unhashable key": lambda sm: sm.reserve_write([KEYS[0], ["not", "hashable"]], LAYOUT),
    "a negative layout": lambda sm: sm.reserve_write(KEYS, MemoryLayoutDesc(shapes=[torch.Size([-4])], dtypes=[torch.float16])),
    "delete of no list": lambda sm: sm.delete_l1_keys(None),
    "delete of an unhashable key": lambda sm: sm.delete_l1_keys([{}]),
    "finish_read of a string count": lambda sm: sm.finish_read_prefetched(KEYS, "1"),
    "reserve_read of no list": lambda sm: sm._l1_manager.reserve_read(None),
    "reserve_read of a float count": lambda sm: sm._l1_manager.reserve_read(KEYS, 1.5),
    "reserve_write with too few flags": lambda sm: sm._l1_manager.reserve_write(KEYS, [False], LAYOUT),
    "finish_write with the tag None": lambda sm: sm._l1_manager.finish_write(KEYS, tag=None),
    "reserve_write with the tag None": lambda sm: sm._l1_manager.reserve_write(KEYS[2:], [False, True], LAYOUT, None),
}


def state(sm):
    status = sm._l1_manager.report_status()
    return (
        sm.get_l1_usage(),
        status["total_object_count"],
        status["read_locked_count"],
        status["staging_object_count"],
        [sm._l1_manager.is_key_evictable(k) for k in KEYS],
    )


def attempt(bad):
    sm = scenarios.make_manager(Config(l1_bytes=1 << 20, adapters=1, eviction="LRU"))
    try:
        objs = sm.reserve_write(KEYS[:2], LAYOUT)
        sm.finish_write(list(objs))
        sm._l1_manager.reserve_read(KEYS[:1])
        # The store controller read-locks what it copies to L2: let it end.
        scenarios.settle(sm)
        before = state(sm)
        try:
            bad(sm)
            raised = None
        except Exception as error:  # noqa: BLE001 - compared below
            raised = type(error)
        scenarios.settle(sm)
        return raised, before, state(sm)
    finally:
        sm.close()


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input(name):
    integration.uninstall()
    stock = attempt(BAD[name])
    integration.install()
    try:
        ours = attempt(BAD[name])
    finally:
        integration.uninstall()
    assert ours[0] == stock[0], name
    assert ours[1] == stock[1]
    if stock[0] is not None:
        assert ours[2] == ours[1], f"{name}: a refused call changed the state"
    assert ours[2] == stock[2]
