"""One prefetch request through the real LMCache 0.5.6 ``StorageManager``,
stock and with bitplan installed, alternated in one run (issue #37).

The request has 64 rows (8 object groups x 8 kv ranks, all full
attention), 128-byte objects and 2 ``MockL2Adapter``\\ s; its keys are
``ObjectKey``\\ s made once. Two shapes of request at 24 and 512 chunks:

- ``L1``: every key in L1 (stored first, so the adapters hold them too);
- ``L2``: three quarters of the chunks (the last ones) deleted from L1
  before each request, so that the request loads them from the adapters.

Each request is timed from ``submit_prefetch_task`` to the return of
``wait_prefetch_status`` (wall clock, ``time.perf_counter``); reading the
result and releasing its locks, and the deletes that prepare an ``L2``
request, are not timed. Each manager lives in a process of its own, as a
server has it (one process's threads share a GIL, so the other manager's
threads would take turns with the request's); bitplan's process installs
the switch before it builds its manager, and the requests alternate stock,
bitplan, stock, ... so that both see the same moments of a noisy machine.

``--profile`` instead runs each manager's requests under yappi (CPU time,
every thread) and prints where the CPU goes, by component (``pip install
yappi``).

    .venv-lmcache/bin/python crates/bitplan-py/benches/lmcache_real.py
    .venv-lmcache/bin/python crates/bitplan-py/benches/lmcache_real.py --chunks 24 --runs 41 --json out.json
    .venv-lmcache/bin/python crates/bitplan-py/benches/lmcache_real.py --profile --chunks 24
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from collections import defaultdict
from typing import Any

os.environ.setdefault("LMCACHE_LOG_LEVEL", "WARNING")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from _bench_env import environment_lines  # noqa: E402
from lmcache.v1.distributed.api import (  # noqa: E402
    GroupedObjectKeys,
    MemoryLayoutDesc,
    ObjectKey,
    PrefetchTaskSpec,
)
from lmcache.v1.distributed.config import (  # noqa: E402
    EvictionConfig,
    L1ManagerConfig,
    L1MemoryManagerConfig,
    StorageManagerConfig,
)
from lmcache.v1.distributed.l2_adapters.config import L2AdaptersConfig  # noqa: E402
from lmcache.v1.distributed.l2_adapters.mock_l2_adapter import MockL2AdapterConfig  # noqa: E402
from lmcache.v1.distributed.storage_manager import StorageManager  # noqa: E402

import bitplan.lmcache.integration as integration  # noqa: E402

GROUPS, RANKS = 8, 8
LAYOUT = MemoryLayoutDesc(shapes=[torch.Size([64])], dtypes=[torch.float16])  # 128 bytes


def manager(chunks: int) -> StorageManager:
    objects = chunks * GROUPS * RANKS
    return StorageManager(
        StorageManagerConfig(
            l1_manager_config=L1ManagerConfig(
                memory_config=L1MemoryManagerConfig(
                    size_in_bytes=max(64 << 20, objects * 4096 * 2), use_lazy=False, shm_name=""
                )
            ),
            eviction_config=EvictionConfig(eviction_policy="LRU"),
            l2_adapter_config=L2AdaptersConfig(
                [MockL2AdapterConfig(max_size_gb=2, mock_bandwidth_gb=10) for _ in range(2)]
            ),
        )
    )


class World:
    """One manager and its request: its keys stored in L1 and both
    adapters."""

    def __init__(self, label: str, chunks: int, seed: int) -> None:
        self.label = label
        self.chunks = chunks
        self.rows = [
            [
                ObjectKey(
                    chunk_hash=(seed * 1_000_003 + j).to_bytes(8, "big"),
                    model_name="bench",
                    kv_rank=ObjectKey.ComputeKVRank(RANKS, r, RANKS, r),
                    object_group_id=g,
                )
                for j in range(chunks)
            ]
            for g in range(GROUPS)
            for r in range(RANKS)
        ]
        self.spec = PrefetchTaskSpec(
            key_groups=[
                GroupedObjectKeys(keys=row, object_group_id=i // RANKS, layout_desc=LAYOUT)
                for i, row in enumerate(self.rows)
            ]
        )
        self.dropped = [k for row in self.rows for k in row[chunks // 4 :]]
        self.sm = manager(chunks)
        keys = [k for row in self.rows for k in row]
        objs = self.sm.reserve_write(keys, LAYOUT)
        for obj in objs.values():
            obj.tensor.fill_(1)
        self.sm.finish_write(list(objs))
        adapters = [adapter for _, adapter in self.sm.l2_adapters()]
        deadline = time.monotonic() + 300
        while any(a.debug_get_stored_object_count() < len(keys) for a in adapters):
            if time.monotonic() > deadline:
                raise TimeoutError("the adapters did not store the keys")
            time.sleep(0.02)

    def request(self, shape: str) -> tuple[float, Any]:
        if shape == "L2":
            self.sm.delete_l1_keys(self.dropped)
        start = time.perf_counter()
        handle = self.sm.submit_prefetch_task(self.spec)
        assert self.sm.wait_prefetch_status(handle, 120.0), "the request did not finish"
        took = time.perf_counter() - start
        result = self.sm.query_prefetch_status(handle)
        hits = [k for row, bits in zip(self.rows, result.hit_cells) for k in bits.gather(row)]
        self.sm.finish_read_prefetched(hits, 1, result.l1_owners)
        return took, (result.l1_hit_count, result.l2_hit_count)

    def close(self) -> None:
        self.sm.close()


def worlds(chunks: int) -> dict[str, World]:
    integration.uninstall()
    stock = World("stock", chunks, seed=1)
    integration.install()
    ours = World("bitplan", chunks, seed=2)
    integration.uninstall()
    assert type(stock.sm._l1_manager).__name__ == "L1Manager"
    assert type(ours.sm._l1_manager).__name__ == "BitplanL1Manager"
    return {"stock": stock, "bitplan": ours}


def switch(label: str) -> None:
    if label == "bitplan":
        integration.install()
    else:
        integration.uninstall()


def child(label: str, chunks: int) -> None:
    """One manager in a process of its own: builds it (with bitplan
    installed first, for ``bitplan``), says ``ready``, then runs one request
    of the shape each line names and prints its time and hits."""
    if label == "bitplan":
        integration.install()
    world = World(label, chunks, seed=1 if label == "stock" else 2)
    print("ready", type(world.sm._l1_manager).__name__, flush=True)
    for line in sys.stdin:
        shape = line.strip()
        if not shape:
            break
        took, hits = world.request(shape)
        print(json.dumps([took, list(hits)]), flush=True)
    world.close()


def measure(chunks: int, shape: str, runs: int, warmup: int) -> dict[str, Any]:
    """Each manager in a process of its own, as a server has it (a process's
    threads share one GIL: the other manager's would take turns with the
    request's), the requests alternated between them."""
    import subprocess

    procs = {}
    for label in ("stock", "bitplan"):
        proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--child", label, str(chunks)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline().split()
        assert line[:1] == ["ready"], line
        assert line[1] == ("L1Manager" if label == "stock" else "BitplanL1Manager"), line
        procs[label] = proc
    times: dict[str, list[float]] = {"stock": [], "bitplan": []}
    hits: dict[str, Any] = {}
    try:
        for i in range(warmup + runs):
            for label in ("stock", "bitplan") if i % 2 == 0 else ("bitplan", "stock"):
                proc = procs[label]
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(shape + "\n")
                proc.stdin.flush()
                took, counts = json.loads(proc.stdout.readline())
                if i >= warmup:
                    times[label].append(took)
                hits[label] = counts
    finally:
        for proc in procs.values():
            assert proc.stdin is not None
            proc.stdin.write("\n")
            proc.stdin.flush()
            proc.wait()
    assert hits["stock"] == hits["bitplan"], hits
    stock, ours = statistics.median(times["stock"]), statistics.median(times["bitplan"])
    return {
        "chunks": chunks,
        "shape": shape,
        "runs": runs,
        "hits": hits["stock"],
        "stock_ms": stock * 1e3,
        "bitplan_ms": ours * 1e3,
        "ratio": stock / ours,
        "stock_all_ms": [t * 1e3 for t in times["stock"]],
        "bitplan_all_ms": [t * 1e3 for t in times["bitplan"]],
    }


# -- the profile ------------------------------------------------------------

#: A profiled function's component, by its file (or, for a dataclass's
#: generated method, its name), first match wins.
COMPONENTS = (
    ("bitplan (its Python and native calls)", ("/bitplan/",)),
    ("L1Manager (books, TTL locks, listeners)", ("distributed/l1_manager.py",)),
    ("prefetch controller (loops, gather, scatter)", ("storage_controllers/prefetch_controller.py",)),
    ("Bitmap2D/MapState (storage_controllers/utils.py)", ("storage_controllers/utils.py",)),
    ("prefetch policy and bitmap_ops", ("storage_controllers/prefetch_policy.py", "bitmap_ops/")),
    ("MockL2Adapter (lookups, locks, copies)", ("l2_adapters/mock_l2_adapter.py",)),
    ("eviction policy", ("eviction_policy/", "distributed/eviction.py", "eviction_controller.py")),
    ("memory manager and memory objects", ("memory_allocators/", "memory_manager/", "v1/memory_management.py")),
    ("StorageManager calls", ("distributed/storage_manager.py", "trace/decorator.py")),
    ("torch", ("torch/",)),
    ("threads, event loops, queues", ("asyncio/", "threading.py", "selectors.py", "queue.py", "platform/")),
)


def component(path: str, name: str) -> str:
    if path == "<string>" and name.startswith("ObjectKey."):
        # The frozen dataclass's generated methods: LMCache's ObjectKey.
        return "ObjectKey.__hash__/__eq__"
    for label, needles in COMPONENTS:
        if any(needle in path for needle in needles):
            return label
    return "other"


def profile(chunks: int, shape: str, runs: int) -> dict[str, dict[str, float]]:
    """Each manager's requests, with the release of their locks, under yappi
    (CPU time, every thread). A C
    function's time counts for the Python function that called it (a
    native call of bitplan's for bitplan's caller, a dict look-up for the
    code doing it), so the shares say whose code the CPU ran; yappi's own
    cost per Python call swells the figures, most for code that makes many
    small calls."""
    import yappi

    both = worlds(chunks)
    out: dict[str, dict[str, float]] = {}
    try:
        for label in ("stock", "bitplan"):
            switch(label)
            both[label].request(shape)
            yappi.clear_stats()
            yappi.set_clock_type("cpu")
            yappi.start(builtins=False)
            for _ in range(runs):
                both[label].request(shape)
            yappi.stop()
            by: dict[str, float] = defaultdict(float)
            for stat in yappi.get_func_stats():
                by[component(stat.module, stat.name)] += stat.tsub
            total = sum(by.values()) or 1.0
            out[label] = {name: seconds / total for name, seconds in sorted(by.items(), key=lambda x: -x[1])}
            out[label]["(CPU ms per request, under yappi)"] = total / runs * 1e3
    finally:
        integration.uninstall()
        for world in both.values():
            world.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, nargs="*", default=[24, 512])
    parser.add_argument("--shapes", nargs="*", default=["L1", "L2"], choices=["L1", "L2"])
    parser.add_argument("--runs", type=int, default=0, help="requests of each (default: 41 at 24 chunks, 11 at 512)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="where the busy CPU goes, by component (yappi)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--json", help="write every figure to this file")
    args = parser.parse_args()
    logging.getLogger("lmcache").setLevel(logging.WARNING)
    if args.child:
        child(args.child[0], int(args.child[1]))
        return

    print("## One prefetch request through LMCache 0.5.6, stock and with bitplan\n")
    for line in environment_lines():
        print(line)
    print()
    results = []
    if args.profile:
        for chunks in args.chunks:
            for shape in args.shapes:
                runs = args.runs or (20 if chunks <= 64 else 4)
                table = profile(chunks, shape, runs)
                results.append({"chunks": chunks, "shape": shape, "profile": table})
                print(f"### {chunks} chunks, {shape}: CPU by component (yappi, all threads, {runs} requests)\n")
                print("| component | stock | bitplan |\n|---|---:|---:|")
                names = [n for n in table["stock"] if not n.startswith("(")]
                names += [n for n in table["bitplan"] if n not in names and not n.startswith("(")]
                for name in names:
                    row = [table[label].get(name, 0.0) for label in ("stock", "bitplan")]
                    print(f"| {name} | {row[0] * 100:.0f} % | {row[1] * 100:.0f} % |")
                cpu = [table[label]["(CPU ms per request, under yappi)"] for label in ("stock", "bitplan")]
                print(f"| **CPU per request, under yappi** | {cpu[0]:.1f} ms | {cpu[1]:.1f} ms |\n")
    else:
        print("| request | stock ms | bitplan ms | stock / bitplan | hits (L1, L2) |\n|---|---:|---:|---:|---|")
        for chunks in args.chunks:
            for shape in args.shapes:
                runs = args.runs or (41 if chunks <= 64 else 11)
                row = measure(chunks, shape, runs, args.warmup)
                results.append(row)
                what = "all in L1" if shape == "L1" else "3/4 from L2"
                print(
                    f"| {chunks} chunks x 64 rows, {what} | {row['stock_ms']:.2f} | {row['bitplan_ms']:.2f} "
                    f"| x{row['ratio']:.1f} | {row['hits']} |",
                    flush=True,
                )
        print(f"\nmedian of each manager's requests, alternated; load average after: {os.getloadavg()}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)


if __name__ == "__main__":
    main()
