#!/usr/bin/env python3
"""Per-key cost of LMCache's eviction policies from Python (issue #29,
speed), three ways, at 1,024 and 65,536 keys:

* **LMCache**: the plain-Python transcription of LMCache's classes in
  ``tests/_eviction_model.py`` (its ``OrderedDict``\\ s and sets under a
  lock, the same hashes per key; LRU with the chunk-coherent victims of
  d18cdadc), with LMCache's ``ObjectKey`` (a frozen dataclass);
* **face**: ``bitplan.lmcache.eviction_policy``'s drop-in classes, with the
  same ``ObjectKey`` objects;
* **slots**: ``SlotEvictionPolicy``, the positional fast path: the same
  keys as slot ids in numpy ``uint32`` arrays, eligibility as a ``Bitmap``
  over slots.

Events come in batches of 256 keys (one request's chunks). *created* adds
every key to an empty policy (one policy for the loop: its tables have
grown once, as a controller's long-lived policy's have), *removed* then
removes them all (the two are
timed apart in one loop, so each repeat does the same work); *touched*
touches every key of a full policy. Touched and removed are timed twice:
with the key objects the policy holds (as the victims of an eviction come
back to ``on_keys_removed``), and with equal keys made anew (as a request's
keys are: LMCache builds new ``ObjectKey``\ s per request), which the face
must hash and compare (``__eq__``) where it finds the held ones by address; *evict 10 %* is one
``get_eviction_actions(0.1)`` on a full policy, without a filter and with
one (``key_eligible_filter=lambda key: key not in locked``, ``locked`` an
empty set: one hash per key, as LMCache's ``is_key_evictable`` looks the key
up), timed alone; the victims are then removed and created again, untimed,
so that the policy is full again. ns per key is per key of the batch, and
for *evict* per victim. Within each repeat the three contenders alternate;
figures are medians over the repeats, the ratios are medians of the
per-repeat ratios.

Usage::

    python benches/eviction_policy.py              # the tables
    python benches/eviction_policy.py --quick      # a smoke run
    python benches/eviction_policy.py --json out.json
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

from bitplan import Bitmap
from bitplan.lmcache.eviction_policy import CreateEvictionPolicy, EvictionConfig, ObjectKey, SlotEvictionPolicy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests"))
from _eviction_model import MODELS  # noqa: E402
from _bench_env import environment_lines, load_average  # noqa: E402

BATCH = 256
POLICIES = ("LRU", "S3FIFO", "ARC")
SIZES = (1024, 65536)
TIMERS = {"wall": time.perf_counter_ns, "cpu": time.thread_time_ns}
CLOCK = TIMERS["wall"]


def make_keys(n: int) -> list[ObjectKey]:
    hashes = np.random.default_rng(29).integers(0, 2**63, n, dtype=np.uint64).tolist()
    return [ObjectKey(h.to_bytes(8, "big"), "model", 0) for h in hashes]


class Keyed:
    """A policy with LMCache's interface (the model or the face)."""

    def __init__(self, make, keys):
        self.make, self.keys = make, keys
        self.batches = [keys[i : i + BATCH] for i in range(0, len(keys), BATCH)]
        # (Copied by attribute: asking a CPython 3.11+ object for its
        # `__dict__` builds one and slows every later attribute load of it,
        # its `__hash__`'s included, which would slow LMCache's side.)
        twins = [dataclasses.replace(key) for key in keys]
        self.twin_batches = [twins[i : i + BATCH] for i in range(0, len(twins), BATCH)]
        self.locked: set = set()

    def fresh(self):
        return self.make()

    def create(self, policy):
        for batch in self.batches:
            policy.on_keys_created(batch)

    def touch(self, policy, twins=False):
        for batch in self.twin_batches if twins else self.batches:
            policy.on_keys_touched(batch)

    def remove(self, policy, twins=False):
        for batch in self.twin_batches if twins else self.batches:
            policy.on_keys_removed(batch)

    def evict(self, policy, filtered: bool):
        if filtered:
            locked = self.locked
            return policy_victims(policy, lambda key: key not in locked)
        return policy_victims(policy, None)

    def refill(self, policy, victims):
        policy.on_keys_removed(victims)
        policy.on_keys_created(victims)


def policy_victims(policy, key_filter):
    if hasattr(policy, "victims"):  # the model answers with the keys
        return policy.victims(0.1, key_filter)
    actions = policy.get_eviction_actions(0.1, key_eligible_filter=key_filter)
    return actions[0].keys if actions else []


class Slotted:
    """``SlotEvictionPolicy`` over slot ids 0..n-1."""

    def __init__(self, name, n):
        self.name = name
        slots = np.arange(n, dtype=np.uint32)
        self.batches = [slots[i : i + BATCH] for i in range(0, n, BATCH)]
        self.eligible = Bitmap(n, n)

    def fresh(self):
        return SlotEvictionPolicy(self.name)

    def create(self, policy):
        for batch in self.batches:
            policy.on_created(batch)

    def touch(self, policy, twins=False):
        for batch in self.batches:
            policy.on_touched(batch)

    def remove(self, policy, twins=False):
        for batch in self.batches:
            policy.on_removed(batch)

    def evict(self, policy, filtered: bool):
        return policy.victims(0.1, self.eligible if filtered else None)

    def refill(self, policy, victims):
        policy.on_removed(victims)
        policy.on_created(victims)


def measure(contender, n: int, min_time: float) -> dict[str, float]:
    """ns per key of each operation, each looped until it took ``min_time``."""
    out = {}
    for twins in (False, True):
        # created and removed, timed apart in one loop, on one long-lived
        # policy (as a controller's is): its tables have grown once.
        created = removed = 0
        loops = 0
        policy = contender.fresh()
        while created + removed < 2 * min_time * 1e9:
            t0 = CLOCK()
            contender.create(policy)
            t1 = CLOCK()
            contender.remove(policy, twins)
            t2 = CLOCK()
            created += t1 - t0
            removed += t2 - t1
            loops += 1
        if not twins:
            out["created"] = created / loops / n
        out["removed, equal keys" if twins else "removed"] = removed / loops / n
    policy = contender.fresh()
    contender.create(policy)
    for twins in (False, True):
        touched, loops = 0, 0
        while touched < min_time * 1e9:
            t0 = CLOCK()
            contender.touch(policy, twins)
            touched += CLOCK() - t0
            loops += 1
        out["touched, equal keys" if twins else "touched"] = touched / loops / n
    for filtered in (False, True):
        spent, victims_total = 0, 0
        while spent < min_time * 1e9:
            t0 = CLOCK()
            victims = contender.evict(policy, filtered)
            spent += CLOCK() - t0
            victims_total += len(victims)
            contender.refill(policy, victims)
        out["evict 10 %, filter" if filtered else "evict 10 %"] = spent / victims_total
    return out


OPS = (
    "created",
    "touched",
    "touched, equal keys",
    "removed",
    "removed, equal keys",
    "evict 10 %",
    "evict 10 %, filter",
)


def header(args) -> str:
    return "\n".join(
        [
            "### LMCache's eviction policies from Python, per key (issue #29): `benches/eviction_policy.py`",
            "",
            *environment_lines(),
            f"- method: {args.timer} clock, {args.repeat} repeats, the three contenders alternating within each; each "
            f"operation looped for >= {args.min_time:g} s; events in batches of {BATCH}; ns per key (evict: per victim); "
            "medians; ratios are medians of the per-repeat ratios",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--policy", action="append", choices=POLICIES)
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--timer", choices=sorted(TIMERS), default="wall")
    args = parser.parse_args()
    global CLOCK
    CLOCK = TIMERS[args.timer]
    if args.quick:
        args.repeat, args.min_time = 3, 0.02
    print(header(args))
    print()
    print("| policy | keys | operation | LMCache ns | face ns | slots ns | LMCache / face | LMCache / slots |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    report = []
    for name in args.policy or POLICIES:
        for n in SIZES:
            keys = make_keys(n)
            contenders = {
                "LMCache": Keyed(MODELS[name], keys),
                "face": Keyed(lambda name=name: CreateEvictionPolicy(EvictionConfig(name)), keys),
                "slots": Slotted(name, n),
            }
            runs = {who: [] for who in contenders}
            for _ in range(args.repeat):
                for who, contender in contenders.items():
                    runs[who].append(measure(contender, n, args.min_time))
            for op in OPS:
                med = {who: statistics.median(run[op] for run in runs[who]) for who in runs}
                face_ratio = statistics.median(m[op] / f[op] for m, f in zip(runs["LMCache"], runs["face"]))
                slot_ratio = statistics.median(m[op] / s[op] for m, s in zip(runs["LMCache"], runs["slots"]))
                report.append(
                    {
                        "policy": name,
                        "keys": n,
                        "op": op,
                        "ns": med,
                        "face_ratio": face_ratio,
                        "slots_ratio": slot_ratio,
                        "repeats": {who: [run[op] for run in runs[who]] for who in runs},
                    }
                )
                print(
                    f"| {name} | {n:,} | {op} | {med['LMCache']:.0f} | {med['face']:.0f} | {med['slots']:.1f} | "
                    f"×{face_ratio:.1f} | ×{slot_ratio:.0f} |",
                    flush=True,
                )
    print(f"\n(load average at the end: {load_average()})")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
