#!/usr/bin/env python3
"""Per-key cost of a tier's batch calls from Python (issue #28, speed):

* the positional fast path (``ChunkTier`` with a ``RequestKeys``) at 4,096
  keys (64 rows x 64 chunks), whole requests and half of the cells;
* the LMCache-shaped face (``L1Bookkeeper``) against the plain-Python
  ``L1Manager`` model (``tests/_l1_model.py``) at the same keys, with three
  kinds of Python key: a tuple ``(chunk hash, row)``, a ``str``, and a frozen
  dataclass with LMCache's ``ObjectKey`` fields (its ``__hash__`` and
  ``__eq__`` are Python code).

The reads are timed twice: with the key objects the books hold (those first
given to ``reserve_write``, found by identity) and with equal key objects
made anew (a later request's, found by ``__hash__`` and ``__eq__``).

Each figure is a cycle of two calls that leaves the tier as it found it
(``reserve_read`` + ``finish_read``; ``reserve_write`` +
``finish_write_and_delete``), so every repeat times the same work; ns per
key per call is the cycle's time / (2 x keys). The measurements alternate
between the contenders within each repeat, and the figures are medians of
the repeats; the ratio is taken per repeat, then its median.

Usage::

    python benches/tier_keys.py              # the tables
    python benches/tier_keys.py --quick      # a smoke run
    python benches/tier_keys.py --json out.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time

import numpy as np

from bitplan.lmcache.prefetch_policy import Bitmap2D
from bitplan.lmcache.native import Bitmap
from bitplan.lmcache.tiers import ChunkTier, L1Bookkeeper, RequestKeys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests"))
from _l1_model import L1Model  # noqa: E402
from _bench_env import environment_lines, load_average  # noqa: E402

ROWS, CHUNKS = 64, 64  # 4,096 keys


@dataclasses.dataclass(frozen=True)
class ObjectKey:
    """LMCache's ``ObjectKey`` fields, as a frozen dataclass (its hash and
    equality are generated Python code, as LMCache's are)."""

    chunk_hash: bytes
    model_name: str
    kv_rank: int
    object_group_id: int
    cache_salt: str = ""


TIMERS = {"wall": time.perf_counter_ns, "cpu": time.thread_time_ns}
CLOCK = TIMERS["wall"]


def per_key_ns(cycle, keys: int, min_time: float) -> float:
    """ns per key per call of a two-call cycle, its loop count grown until
    one run takes ``min_time``."""
    number = 1
    while True:
        t = CLOCK()
        for _ in range(number):
            cycle()
        elapsed = CLOCK() - t
        if elapsed >= min_time * 1e9:
            return elapsed / number / (2 * keys)
        number *= 2


def positional_cycles():
    hashes = np.random.default_rng(28).integers(0, 2**63, CHUNKS, dtype=np.uint64)
    keys = RequestKeys(hashes, np.arange(ROWS, dtype=np.uint32))
    n = len(keys)
    tier = ChunkTier(2 * n, rows=ROWS)
    tier.reserve_write(keys, False, "seed")
    tier.finish_write(keys, "seed")
    empty = ChunkTier(2 * n, rows=ROWS)
    half = Bitmap2D([Bitmap(CHUNKS, list(range(r % 2, CHUNKS, 2))) for r in range(ROWS)])

    def read_cycle():
        tier.reserve_read(keys, 1)
        tier.finish_read(keys, 1)

    def read_half():
        tier.reserve_read(keys, 1, cells=half)
        tier.finish_read(keys, 1, cells=half)

    def write_cycle():
        empty.reserve_write(keys, True, "w")
        empty.finish_write_and_delete(keys, "w")

    return n, {
        "reserve_read + finish_read, whole request": (read_cycle, n),
        "the same, half of the cells (`cells=`)": (read_half, n // 2),
        "reserve_write + finish_write_and_delete": (write_cycle, n),
    }


def python_keys(kind: str) -> list:
    hashes = np.random.default_rng(28).integers(0, 2**63, CHUNKS, dtype=np.uint64).tolist()
    if kind == "tuple":
        return [(h, r) for r in range(ROWS) for h in hashes]
    if kind == "str":
        return [f"{h:016x}@{r}" for r in range(ROWS) for h in hashes]
    return [ObjectKey(h.to_bytes(8, "big"), "model", r % 8, r // 8) for r in range(ROWS) for h in hashes]


def face_cycles(kind: str):
    keys = python_keys(kind)
    # Equal keys made anew, as a later request's are: the books hold the
    # objects first given to reserve_write, and find these by hash and eq.
    equal = python_keys(kind)
    n = len(keys)
    flags = [True] * n
    out = {}
    for name, make in (("model", lambda: L1Model(2 * n)), ("face", lambda: L1Bookkeeper(2 * n))):
        held, empty = make(), make()
        held.reserve_write(keys, [False] * n, None, "seed")
        held.finish_write(keys, "seed")

        def read_cycle(held=held):
            held.reserve_read(keys, 1)
            held.finish_read(keys, 1)

        def read_equal_cycle(held=held):
            held.reserve_read(equal, 1)
            held.finish_read(equal, 1)

        def write_cycle(empty=empty):
            empty.reserve_write(keys, flags, None, "w")
            empty.finish_write_and_delete(keys, "w")

        out[name] = {
            "reserve_read + finish_read, the held key objects": read_cycle,
            "reserve_read + finish_read, equal new key objects": read_equal_cycle,
            "reserve_write + finish_write_and_delete": write_cycle,
        }
    return n, out


def header(args) -> str:
    return "\n".join(
        [
            "### A tier's batch calls from Python, per key (issue #28): `benches/tier_keys.py`",
            "",
            *environment_lines(),
            f"- method: {args.timer} clock, {args.repeat} repeats, contenders alternating within each; per repeat, a two-call cycle "
            f"looped for >= {args.min_time:g} s; ns per key per call = cycle / (2 x keys); medians",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--timer", choices=sorted(TIMERS), default="wall",
                        help="wall: time.perf_counter_ns; cpu: time.thread_time_ns, for a shared machine "
                        "(the calls that release the GIL still run on the calling thread)")
    args = parser.parse_args()
    global CLOCK
    CLOCK = TIMERS[args.timer]
    if args.quick:
        args.repeat, args.min_time = 3, 0.02
    print(header(args))
    report = {"positional": {}, "face": {}}

    n, cycles = positional_cycles()
    runs = {name: [] for name in cycles}
    for _ in range(args.repeat):
        for name, (cycle, keys) in cycles.items():
            runs[name].append(per_key_ns(cycle, keys, args.min_time))
    print(f"\nPositional path (`ChunkTier`), {ROWS} rows x {CHUNKS} chunks = {n:,} keys:\n")
    print("| cycle | keys | ns per key per call (median) | repeats |")
    print("|---|---:|---:|---|")
    for name, (_, keys) in cycles.items():
        med = statistics.median(runs[name])
        report["positional"][name] = {"keys": keys, "ns_per_key": med, "repeats": runs[name]}
        print(f"| {name} | {keys:,} | {med:.1f} | {', '.join(f'{v:.1f}' for v in runs[name])} |")

    print(f"\nLMCache-shaped face (`L1Bookkeeper`) against the plain-Python model, {n:,} keys:\n")
    print("| key | cycle | model ns/key | face ns/key | model / face |")
    print("|---|---|---:|---:|---:|")
    for kind in ("tuple", "str", "ObjectKey dataclass"):
        n, both = face_cycles(kind.split()[0])
        for cycle_name in both["model"]:
            model, face = [], []
            for _ in range(args.repeat):
                model.append(per_key_ns(both["model"][cycle_name], n, args.min_time))
                face.append(per_key_ns(both["face"][cycle_name], n, args.min_time))
            ratio = statistics.median(m / f for m, f in zip(model, face))
            report["face"][f"{kind}: {cycle_name}"] = {
                "model_ns_per_key": statistics.median(model),
                "face_ns_per_key": statistics.median(face),
                "ratio": ratio,
                "model_repeats": model,
                "face_repeats": face,
            }
            print(
                f"| {kind} | {cycle_name} | {statistics.median(model):.0f} | {statistics.median(face):.0f} | "
                f"×{ratio:.1f} |"
            )
    print(f"\n(load average at the end: {load_average()})")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
