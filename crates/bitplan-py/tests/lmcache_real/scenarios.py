"""Seeded scenarios against a real LMCache ``StorageManager``: stores,
prefetches (hybrid windows, several ranks and adapters, lock modes, both
fetching policies) and deletes, each recorded as what a caller sees: the
hit cells, the hit counts, the bytes read back and the L1 usage.

The same seed gives the same operations; run once on a stock manager and
once with bitplan installed, the two records must be equal
(``test_differential.py``). The L2 adapters store in the background, so
after every store the scenario waits until they settle; the eviction
controller's own thread never fires (its watermark is above 1) and the
scenario evicts with explicit ticks instead, so that every run makes the
same calls in the same order.
"""

from __future__ import annotations

import logging
import random
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

import torch
from lmcache.v1.distributed.api import (
    GroupedObjectKeys,
    MemoryLayoutDesc,
    ObjectKey,
    PrefetchLockMode,
    PrefetchTaskSpec,
)
from lmcache.v1.distributed.config import (
    EvictionConfig,
    L1ManagerConfig,
    L1MemoryManagerConfig,
    StorageManagerConfig,
)
from lmcache.v1.distributed.l2_adapters.config import L2AdaptersConfig
from lmcache.v1.distributed.l2_adapters.mock_l2_adapter import MockL2AdapterConfig
from lmcache.v1.distributed.storage_manager import StorageManager

MODEL = "bitplan-test"


@dataclass
class Shape:
    """A model's rows: object groups (each with a window and an object
    size) times KV ranks."""

    windows: list[int]
    ranks: int
    elements: list[int]  # per group: float16 elements of one object

    @property
    def rows(self) -> list[tuple[int, int]]:
        return [(g, r) for g in range(len(self.windows)) for r in range(self.ranks)]

    def layout(self, group: int) -> MemoryLayoutDesc:
        return MemoryLayoutDesc(shapes=[torch.Size([self.elements[group]])], dtypes=[torch.float16])

    def key_groups(self, seq: int, chunks: int) -> list[GroupedObjectKeys]:
        """A prefetch's rows for sequence ``seq``: one per (group, rank),
        its first ``chunks`` chunks."""
        return [
            GroupedObjectKeys(
                keys=[key(seq, j, g, r, self.ranks) for j in range(chunks)],
                object_group_id=g,
                layout_desc=self.layout(g),
                sliding_window_size=self.windows[g],
            )
            for g, r in self.rows
        ]


def key(seq: int, chunk: int, group: int, rank: int, ranks: int, salt: str = "") -> ObjectKey:
    return ObjectKey(
        chunk_hash=(seq * 1_000_003 + chunk).to_bytes(8, "big"),
        model_name=MODEL,
        kv_rank=ObjectKey.ComputeKVRank(ranks, rank, ranks, rank),
        object_group_id=group,
        cache_salt=salt,
    )


def payload(k: ObjectKey, elements: int) -> torch.Tensor:
    """The bytes stored for a key: a function of the key alone."""
    seed = zlib.crc32(k.chunk_hash + bytes([k.object_group_id]) + k.kv_rank.to_bytes(4, "big"))
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(-1000, 1000, (elements,), generator=gen, dtype=torch.int32).to(torch.float16)


@dataclass
class Config:
    l1_bytes: int = 8 << 20
    adapters: int = 2
    adapter_gb: float = 0.01
    eviction: str = "LRU"
    prefetch_policy: str = "default"


def make_manager(config: Config) -> StorageManager:
    adapters = [MockL2AdapterConfig(max_size_gb=config.adapter_gb, mock_bandwidth_gb=50) for _ in range(config.adapters)]
    return StorageManager(
        StorageManagerConfig(
            l1_manager_config=L1ManagerConfig(
                memory_config=L1MemoryManagerConfig(size_in_bytes=config.l1_bytes, use_lazy=False, shm_name="")
            ),
            # The controller's own thread never evicts (usage never reaches
            # 1.5): the scenario's ticks do, at fixed points.
            eviction_config=EvictionConfig(eviction_policy=config.eviction, trigger_watermark=1.5),
            l2_adapter_config=L2AdaptersConfig(adapters),
            prefetch_policy=config.prefetch_policy,
        )
    )


def adapters_of(manager: StorageManager) -> list[Any]:
    return [adapter for _, adapter in manager.l2_adapters()]


def settle(manager: StorageManager, timeout: float = 20.0) -> None:
    """Waits until the L2 adapters' stored counts stop changing and the
    store controller has nothing pending."""
    adapters = adapters_of(manager)
    deadline = time.monotonic() + timeout
    last = None
    stable = 0
    while time.monotonic() < deadline:
        counts = tuple(a.debug_get_stored_object_count() for a in adapters)
        pending = sum(c._listener.pending_count() for c in manager._store_controllers.values())
        if counts == last and pending == 0:
            stable += 1
            if stable >= 4:
                return
        else:
            stable = 0
        last = counts
        time.sleep(0.02)
    raise TimeoutError("the L2 adapters did not settle")


@dataclass
class Record:
    """What a caller saw, op by op, and every error LMCache logged (an
    exception in the prefetch controller's thread aborts a request and only
    logs it: the caller sees a miss)."""

    events: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)

    def add(self, *item: Any) -> None:
        self.events.append(item)


class _Errors(logging.Handler):
    def __init__(self, record: Record) -> None:
        super().__init__(level=logging.ERROR)
        self.record = record

    def emit(self, entry: logging.LogRecord) -> None:
        if entry.exc_info:
            self.record.exceptions.append(self.format(entry))
        else:
            self.record.errors.append(entry.getMessage())


def _loggers() -> list[logging.Logger]:
    """LMCache's loggers (each has its own handler and does not propagate)
    and bitplan's."""
    names = [name for name in logging.root.manager.loggerDict if name.split(".")[0] in ("lmcache", "bitplan")]
    return [logging.getLogger(name) for name in names + ["lmcache", "bitplan"]]


def store(manager: StorageManager, shape: Shape, keys_by_group: dict[int, list[ObjectKey]], record: Record) -> None:
    for group, keys in keys_by_group.items():
        if not keys:
            continue
        objs = manager.reserve_write(keys, shape.layout(group))
        stored = [k for k in keys if k in objs]
        for k in stored:
            objs[k].tensor.view(-1).copy_(payload(k, shape.elements[group]))
        manager.finish_write(stored)
        record.add("store", group, len(keys), len(stored))
    settle(manager)
    record.add("usage", manager.get_l1_usage()[0])


def prefetch(
    manager: StorageManager,
    shape: Shape,
    seq: int,
    chunks: int,
    *,
    lock: bool,
    readers: int,
    fetching: str,
    skip_l2: bool,
    record: Record,
) -> None:
    groups = shape.key_groups(seq, chunks)
    spec = PrefetchTaskSpec(
        key_groups=groups,
        num_kv_readers=readers,
        fetching_policy=fetching,
        lock_mode=PrefetchLockMode.LOCK if lock else PrefetchLockMode.NO_LOCK,
    )
    handle = manager.submit_prefetch_task(spec, skip_l2=skip_l2)
    assert manager.wait_prefetch_status(handle, 30.0), "prefetch did not finish"
    result = manager.query_prefetch_status(handle)
    hits = [row.get_indices_list() for row in result.hit_cells]
    record.add(
        "prefetch",
        hits,
        [row.get_indices_list() for row in result.l1_hit_cells],
        [row.get_indices_list() for row in result.l2_hit_cells],
        None if result.found_cells is None else [row.get_indices_list() for row in result.found_cells],
        result.l1_hit_count,
        result.l2_hit_count,
        sorted((k.chunk_hash, k.object_group_id, k.kv_rank) for k in result.l1_owners),
    )
    hit_keys = [group.keys[j] for group, row in zip(groups, hits) for j in row]
    if lock and hit_keys:
        with manager.read_prefetched_results(hit_keys, result.l1_owners) as objs:
            assert objs is not None, "a hit key could not be read"
            good = 0
            for k, obj in zip(hit_keys, objs):
                expected = payload(k, shape.elements[k.object_group_id])
                if torch.equal(obj.tensor.view(-1)[: expected.numel()], expected):
                    good += 1
            record.add("read", len(hit_keys), good, sum(obj.get_size() for obj in objs))
        manager.finish_read_prefetched(hit_keys, readers, result.l1_owners)
    settle(manager)
    record.add("usage", manager.get_l1_usage()[0])


def delete(manager: StorageManager, keys: list[ObjectKey], record: Record) -> None:
    record.add("delete", manager.delete_l1_keys(keys))
    record.add("usage", manager.get_l1_usage()[0])


def evict_tick(manager: StorageManager, ratio: float, record: Record) -> None:
    """One step of the eviction controller's loop, now (a per-salt policy,
    as the L2 controller asks it, in the keys' salt)."""
    controller = manager._eviction_controller
    l1 = manager._l1_manager
    policy = controller._eviction_policy
    salt = "" if policy.support_isolation else None
    actions = policy.get_eviction_actions(ratio, key_eligible_filter=l1.is_key_evictable, cache_salt=salt)
    victims = [k for action in actions for k in action.keys]
    for action in actions:
        controller.execute_eviction_action(action)
    record.add("evict", sorted((k.chunk_hash, k.object_group_id, k.kv_rank) for k in victims))
    record.add("usage", manager.get_l1_usage()[0])


def script(seed: int, steps: int = 14) -> tuple[Config, Shape, list[tuple]]:
    """A seeded scenario: its configuration, its model's rows and its
    operations (plain data, run by :func:`run_script`)."""
    rng = random.Random(seed)
    shape = Shape(
        windows=rng.choice([[-1], [-1, 2], [-1, 1, 3], [-1, -1]]),
        ranks=rng.choice([1, 2, 4]),
        elements=[],
    )
    shape.elements = [rng.choice([32, 64, 96]) for _ in shape.windows]
    config = Config(
        l1_bytes=rng.choice([256 << 10, 1 << 20, 4 << 20]),
        adapters=rng.choice([1, 2, 3]),
        eviction=rng.choice(["LRU", "ARC", "IsolatedLRU", "noop"]),
        prefetch_policy=rng.choice(["default", "retain"]),
    )
    full_ok = all(w == -1 for w in shape.windows)

    def fetch(seq: int, chunks: int, skip_l2: bool) -> tuple:
        return (
            "prefetch",
            seq,
            chunks,
            rng.random() < 0.8,
            rng.choice([1, 1, 2]),
            "full" if (full_ok and rng.random() < 0.2) else "prefix",
            skip_l2,
        )

    ops: list[tuple] = []
    sequences = [rng.randrange(1, 4) for _ in range(3)]
    for _ in range(steps):
        op = rng.choice(["store", "store", "prefetch", "prefetch", "reload", "reload", "delete", "tick"])
        seq = rng.choice(sequences)
        chunks = rng.randrange(1, 20)
        if op == "store":
            # Whole prefixes most of the time (a hit needs every row), with
            # holes and missing rows the rest.
            whole = rng.random() < 0.6
            first = 0 if whole or rng.random() < 0.5 else rng.randrange(0, chunks)
            cells = [
                (g, r, j)
                for g, r in shape.rows
                if whole or rng.random() < 0.85
                for j in range(first, chunks)
                if whole or rng.random() < 0.9
            ]
            ops.append(("store", seq, cells))
        elif op == "prefetch":
            ops.append(fetch(seq, chunks, rng.random() < 0.15))
        elif op == "reload":
            # Drop part of L1, so that the prefetch loads it from L2.
            cells = [(g, r, j) for g, r in shape.rows for j in range(chunks) if rng.random() < 0.7]
            ops.append(("delete", seq, cells))
            ops.append(fetch(seq, chunks, False))
        elif op == "delete":
            cells = [(g, r, j) for g, r in shape.rows for j in range(chunks) if rng.random() < 0.5]
            ops.append(("delete", seq, cells))
        else:
            ops.append(("tick", rng.choice([0.1, 0.3])))
    return config, shape, ops


def run_script(config: Config, shape: Shape, ops: list[tuple], label: Any = None) -> Record:
    """Runs ``ops`` on a new manager; returns the record."""
    record = Record()
    record.add("config", label, config, shape)
    handler = _Errors(record)
    manager = make_manager(config)
    loggers = _loggers()
    for logger in loggers:
        logger.addHandler(handler)
    try:
        for op in ops:
            kind = op[0]
            if kind == "store":
                _, seq, cells = op
                keys_by_group: dict[int, list[ObjectKey]] = {}
                for g, r, j in cells:
                    keys_by_group.setdefault(g, []).append(key(seq, j, g, r, shape.ranks))
                store(manager, shape, keys_by_group, record)
            elif kind == "prefetch":
                _, seq, chunks, lock, readers, fetching, skip_l2 = op
                prefetch(
                    manager,
                    shape,
                    seq,
                    chunks,
                    lock=lock,
                    readers=readers,
                    fetching=fetching,
                    skip_l2=skip_l2,
                    record=record,
                )
            elif kind == "delete":
                _, seq, cells = op
                delete(manager, [key(seq, j, g, r, shape.ranks) for g, r, j in cells], record)
            elif kind == "tick":
                evict_tick(manager, op[1], record)
            else:
                raise ValueError(f"unknown op {kind!r}")
        record.add("memcheck", manager.memcheck())
    finally:
        manager.close()
        for logger in loggers:
            logger.removeHandler(handler)
    return record


def run(seed: int, steps: int = 14) -> Record:
    """One seeded scenario on a new manager; returns its record."""
    config, shape, ops = script(seed, steps)
    return run_script(config, shape, ops, label=seed)
