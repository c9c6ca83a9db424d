"""LMCache's own eviction under load, with bitplan installed (issue #37,
item 3): a writer, a prefetcher and a deleter thread over a small L1 whose
eviction controller (LMCache's thread, its watermark trigger: 0.8 of the
memory, 0.2 of the keys) evicts with each policy while they run. Every
byte read back must be what was written, ``memcheck()`` must stay clean,
and nothing may raise or log an exception.

The threads run a fixed number of operations, not for a time, and the test
then waits until the controller has evicted at least once; the verdict
does not depend on how fast the machine is. How many of the prefetcher's
keys hit does depend on how the threads interleave (on a loaded machine
the prefetcher may run before the writer has written anything, or after
the deleter took it), so the test does not require hits there: it reads a
sequence back once before the threads start, with L1 a quarter full and
below the watermark, where every cell must hit."""

from __future__ import annotations

import random
import threading
import time

import pytest
import scenarios
import torch
from lmcache.v1.distributed.api import PrefetchLockMode, PrefetchTaskSpec
from lmcache.v1.distributed.config import EvictionConfig, L1ManagerConfig, L1MemoryManagerConfig, StorageManagerConfig
from lmcache.v1.distributed.l2_adapters.config import L2AdaptersConfig
from lmcache.v1.distributed.l2_adapters.mock_l2_adapter import MockL2AdapterConfig
from lmcache.v1.distributed.storage_manager import StorageManager
from scenarios import Shape, key, payload

import bitplan.lmcache.integration as integration

SHAPE = Shape(windows=[-1, 2], ranks=2, elements=[64, 64])
CHUNKS = 16
SEQUENCES = 12
OPERATIONS = 40


@pytest.fixture
def installed():
    integration.install()
    yield
    integration.uninstall()


def manager(policy: str) -> StorageManager:
    # 1 MiB of 4 KiB blocks: 256 objects, against 12 sequences of 64.
    return StorageManager(
        StorageManagerConfig(
            l1_manager_config=L1ManagerConfig(
                memory_config=L1MemoryManagerConfig(size_in_bytes=1 << 20, use_lazy=False, shm_name="")
            ),
            eviction_config=EvictionConfig(eviction_policy=policy),
            l2_adapter_config=L2AdaptersConfig([MockL2AdapterConfig(max_size_gb=0.01, mock_bandwidth_gb=50)]),
        )
    )


def keys_of(seq: int) -> dict[int, list]:
    return {g: [key(seq, j, g, r, SHAPE.ranks) for r in range(SHAPE.ranks) for j in range(CHUNKS)] for g in (0, 1)}


@pytest.mark.parametrize("policy", ["LRU", "ARC", "noop", "S3FIFO"])
def test_threads_over_a_small_l1(installed, policy):
    sm = manager(policy)
    assert type(sm._l1_manager).__name__ == "BitplanL1Manager"
    record = scenarios.Record()
    handler = scenarios._Errors(record)
    loggers = scenarios._loggers()
    for logger in loggers:
        logger.addHandler(handler)
    failures: list[BaseException] = []
    reads = {"keys": 0, "good": 0}
    evicted: list = []
    controller = sm._eviction_controller
    execute = controller.execute_eviction_action

    def counted(action):
        evicted.extend(action.keys)
        execute(action)

    # The controller's loop calls it through the instance.
    controller.execute_eviction_action = counted

    def guard(work):
        def run():
            try:
                work()
            except BaseException as error:  # noqa: BLE001 - reported below
                failures.append(error)

        return run

    def write(seq: int) -> None:
        for group, keys in keys_of(seq).items():
            objs = sm.reserve_write(keys, SHAPE.layout(group))
            written = [k for k in keys if k in objs]
            for k in written:
                objs[k].tensor.view(-1).copy_(payload(k, SHAPE.elements[group]))
            sm.finish_write(written)

    def prefetch_and_read(seq: int) -> None:
        groups = SHAPE.key_groups(seq, CHUNKS)
        spec = PrefetchTaskSpec(key_groups=groups, lock_mode=PrefetchLockMode.LOCK)
        handle = sm.submit_prefetch_task(spec)
        assert sm.wait_prefetch_status(handle, 60.0)
        result = sm.query_prefetch_status(handle)
        hit = [g.keys[j] for g, row in zip(groups, result.hit_cells) for j in row.get_indices_list()]
        if not hit:
            return
        with sm.read_prefetched_results(hit, result.l1_owners) as objs:
            assert objs is not None, "a hit key could not be read"
            for k, obj in zip(hit, objs):
                expected = payload(k, SHAPE.elements[k.object_group_id])
                reads["keys"] += 1
                reads["good"] += torch.equal(obj.tensor.view(-1)[: expected.numel()], expected)
        sm.finish_read_prefetched(hit, 1, result.l1_owners)

    # The prefetcher starts once the writer has written once: an order,
    # not a time, so that the threads' reads are likely, not guaranteed.
    first_write = threading.Event()

    def writer():
        rng = random.Random(1)
        try:
            for _ in range(OPERATIONS):
                write(rng.randrange(SEQUENCES))
                first_write.set()
        finally:
            first_write.set()

    def prefetcher():
        rng = random.Random(2)
        first_write.wait()
        for _ in range(OPERATIONS):
            prefetch_and_read(rng.randrange(SEQUENCES))

    def deleter():
        rng = random.Random(3)
        for _ in range(OPERATIONS):
            keys = [k for ks in keys_of(rng.randrange(SEQUENCES)).values() for k in ks if rng.random() < 0.3]
            sm.delete_l1_keys(keys)

    try:
        # A freshly written sequence hits in full while L1 is a quarter full
        # (64 of 256 objects, under the 0.8 watermark: nothing is evicted):
        # every chunk of the full-attention group, the last window of the
        # sliding one (LMCache keeps only those), on every rank.
        write(0)
        prefetch_and_read(0)
        full = SHAPE.ranks * (CHUNKS + SHAPE.windows[1])
        assert reads == {"keys": full, "good": full}, reads

        threads = [threading.Thread(target=guard(work)) for work in (writer, prefetcher, deleter)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # Fill L1 past the watermark, and wait for the controller's thread
        # (it wakes once a second) to evict: "noop" never does.
        for seq in range(SEQUENCES):
            for group, keys in keys_of(100 + seq).items():
                objs = sm.reserve_write(keys, SHAPE.layout(group))
                sm.finish_write([k for k in keys if k in objs])
        deadline = time.monotonic() + 120
        while policy != "noop" and not evicted and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not failures, failures[0]
        assert reads["good"] == reads["keys"], reads
        assert sm.memcheck()
        used, total = sm.get_l1_usage()
        assert used <= total
        if policy != "noop":
            assert evicted, "the eviction controller never evicted"
        assert record.exceptions == [], record.exceptions[:1]
    finally:
        sm.close()
        for logger in loggers:
            logger.removeHandler(handler)
