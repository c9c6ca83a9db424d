#!/usr/bin/env python3
"""The replay model of docs/REPLAY.md in plain Python: dicts and OrderedDicts,
no bitmaps, no numpy. It is the reference the Rust replay is checked against
(crates/replay/tests/reference.rs, crates/bitplan-py/tests/test_replay.py)
and the baseline its speed is measured against (docs/PERFORMANCE.md).

    reference_replay.py TRACE --l1 CAP [--l2 CAP]... [--eviction lru|fifo|lfu]
                        [--policy default|retain] [--block-tokens N]
                        [--l1-watermark F [--evict-ratio F]]
                        [--l2-watermark F [--l2-evict-ratio F]] [--evict-interval-ms N]

CAP is a number of blocks or "inf". Prints one JSON object: the counts that
the Rust report also has (requests, blocks, tokens, hit_blocks, hit_tokens,
hit ratios, and per tier hit_blocks, evictions, entries, peak_entries,
checks_fired, evicted_by_checks, dropped_full).

With a watermark, a tier follows LMCache's timed trigger (docs/REPLAY.md):
a check every interval of the trace's time, from the first interval on, one
for each interval passed, before the request; touched and created batches;
blocks past capacity dropped. Its policy is then LMCache's LRU (lru.py: an
OrderedDict, batches walked in reverse) or the replay's own FIFO or LFU
(batches walked in order).

Only the first-wins plan is modelled ("default"; "retain" plans the same
keys): each key not in L1 is loaded by the lowest-indexed adapter holding it.
"""

import argparse
import json
import math
import sys
from collections import OrderedDict


class Tier:
    """A cache level: an OrderedDict in eviction order, oldest first (LRU,
    FIFO); for LFU, each key's [touches, last touch] and a linear search
    for the victim (slow, but obviously right)."""

    def __init__(self, capacity, eviction):
        self.capacity = capacity  # None: unbounded
        self.eviction = eviction
        self.keys = OrderedDict()
        self.evictions = 0
        self.clock = 0
        self.peak = 0

    def touch(self, key):
        keys = self.keys
        self.clock += 1
        if key in keys:
            if self.eviction == "lru":
                keys.move_to_end(key)
            elif self.eviction == "lfu":
                keys[key][0] += 1
                keys[key][1] = self.clock
            return
        if self.capacity == 0:
            self.evictions += 1
            return
        if self.capacity is not None and len(keys) >= self.capacity:
            # A full tier evicts, then inserts: the new key is never the victim.
            if self.eviction == "lfu":
                del keys[min(keys, key=lambda k: keys[k])]
            else:
                keys.popitem(last=False)
            self.evictions += 1
        keys[key] = [1, self.clock]
        self.peak = max(self.peak, len(keys))


def target_count(tracked, ratio):
    """LMCache's rounding of an eviction ratio to a number of keys."""
    ratio = max(0.0, min(1.0, ratio))
    target = int(tracked * ratio)
    if ratio > 0 and target == 0 and tracked > 0:
        target = 1
    return target


class LmcacheLru:
    """LMCache's LRUEvictionPolicy: oldest first; a batch walked in reverse."""

    def __init__(self):
        self.order = OrderedDict()

    def created(self, keys):
        for key in reversed(keys):
            if key in self.order:
                self.order.move_to_end(key)
            else:
                self.order[key] = None

    def touched(self, keys):
        for key in reversed(keys):
            if key in self.order:
                self.order.move_to_end(key)

    def removed(self, keys):
        for key in keys:
            self.order.pop(key, None)

    def victims(self, ratio):
        return list(self.order)[: target_count(len(self.order), ratio)]


class Fifo:
    """The replay's FIFO as a policy: insertion order; touches change nothing."""

    def __init__(self):
        self.order = OrderedDict()

    def created(self, keys):
        for key in keys:
            self.order.setdefault(key, None)

    def touched(self, keys):
        pass

    def removed(self, keys):
        for key in keys:
            self.order.pop(key, None)

    def victims(self, ratio):
        return list(self.order)[: target_count(len(self.order), ratio)]


class Lfu:
    """The replay's LFU as a policy: fewest touches first, then least recent."""

    def __init__(self):
        self.state = {}  # key: [touches, last touch]
        self.clock = 0

    def _count(self, key):
        self.clock += 1
        entry = self.state.setdefault(key, [0, 0])
        entry[0] += 1
        entry[1] = self.clock

    def created(self, keys):
        for key in keys:
            self._count(key)

    def touched(self, keys):
        for key in keys:
            if key in self.state:
                self._count(key)

    def removed(self, keys):
        for key in keys:
            self.state.pop(key, None)

    def victims(self, ratio):
        order = sorted(self.state, key=lambda key: self.state[key])
        return order[: target_count(len(order), ratio)]


POLICIES = {"lru": LmcacheLru, "fifo": Fifo, "lfu": Lfu}


class TriggeredTier:
    """A tier under LMCache's trigger: a set of held keys and a policy."""

    def __init__(self, capacity, eviction, watermark, ratio):
        self.capacity = capacity
        self.policy = POLICIES[eviction]()
        self.watermark = watermark
        self.ratio = ratio
        self.keys = set()
        self.evictions = 0
        self.peak = 0
        self.checks_fired = 0
        self.evicted_by_checks = 0
        self.dropped_full = 0

    def check(self):
        if self.capacity is None:
            return
        usage = len(self.keys) / self.capacity if self.capacity else 0.0
        if usage < self.watermark:
            return
        victims = self.policy.victims(self.ratio)
        for key in victims:
            self.keys.remove(key)
        self.policy.removed(victims)
        self.checks_fired += 1
        self.evicted_by_checks += len(victims)
        self.evictions += len(victims)

    def touch_batch(self, keys):
        self.policy.touched([key for key in keys if key in self.keys])

    def write_batch(self, keys, rewrite):
        batch = []
        for key in keys:
            if key in self.keys:
                if rewrite:
                    batch.append(key)
            elif self.capacity is None or len(self.keys) < self.capacity:
                self.keys.add(key)
                self.peak = max(self.peak, len(self.keys))
                batch.append(key)
            else:
                self.dropped_full += 1
        self.policy.created(batch)


def tier_report(tier, hit_blocks):
    return {
        "hit_blocks": hit_blocks,
        "evictions": tier.evictions,
        "entries": len(tier.keys),
        "peak_entries": tier.peak,
        "checks_fired": getattr(tier, "checks_fired", 0),
        "evicted_by_checks": getattr(tier, "evicted_by_checks", 0),
        "dropped_full": getattr(tier, "dropped_full", 0),
    }


def read_trace(path, block_tokens):
    """Yields (keys, tokens, timestamp) per non-blank line, Mooncake or
    plain; a line without a timestamp has the previous line's."""
    timestamp = 0
    with open(path) as lines:
        for line in lines:
            if not line.strip():
                continue
            record = json.loads(line)
            keys = record.get("hash_ids")
            if keys is None:
                keys = record["keys"]
            tokens = record.get("input_length")
            if tokens is None:
                tokens = record.get("tokens")
            if tokens is None:
                tokens = len(keys) * block_tokens
            assert len(keys) == math.ceil(tokens / block_tokens), line
            if record.get("timestamp") is not None:
                timestamp = int(record["timestamp"])
            yield keys, tokens, timestamp


def replay(
    requests,
    l1_capacity,
    l2_capacities,
    eviction="lru",
    block_tokens=512,
    l1_trigger=None,
    l2_triggers=None,
    evict_interval_ms=1000,
):
    """Replays (keys, tokens) or (keys, tokens, timestamp) tuples; returns
    the report as a dict. A trigger is a (watermark, ratio) pair; l2_triggers
    has one (or None) per adapter."""
    l2_triggers = l2_triggers or [None] * len(l2_capacities)

    def tier(capacity, trigger):
        if trigger is None:
            return Tier(capacity, eviction)
        return TriggeredTier(capacity, eviction, *trigger)

    l1 = tier(l1_capacity, l1_trigger)
    l2 = [tier(capacity, trigger) for capacity, trigger in zip(l2_capacities, l2_triggers)]
    triggered = [t for t in [l1, *l2] if isinstance(t, TriggeredTier)]
    next_check = evict_interval_ms
    timestamp = 0
    served = [0] * len(l2)
    l1_hits = 0
    totals = {"requests": 0, "blocks": 0, "tokens": 0, "hit_blocks": 0, "hit_tokens": 0}
    ratio_sum = 0.0
    for request in requests:
        keys, tokens = request[0], request[1]
        if len(request) > 2:
            timestamp = request[2]
        # LMCache's checks: one per interval passed, every tier each time.
        while triggered and timestamp >= next_check:
            for t in triggered:
                t.check()
            next_check += evict_interval_ms
        n = len(keys)
        # (a), (b): who serves each key: -1 for L1, j for adapter j, None for nobody.
        owner = []
        for key in keys:
            if key in l1.keys:
                owner.append(-1)
                continue
            for j, tier in enumerate(l2):
                if key in tier.keys:
                    owner.append(j)
                    break
            else:
                owner.append(None)
        # (c) The hit: the longest prefix with an owner.
        hit = n
        for i, who in enumerate(owner):
            if who is None:
                hit = i
                break
        for who in owner[:hit]:
            if who == -1:
                l1_hits += 1
            else:
                served[who] += 1
        totals["requests"] += 1
        totals["blocks"] += n
        totals["tokens"] += tokens
        totals["hit_blocks"] += hit
        totals["hit_tokens"] += min(hit * block_tokens, tokens)
        if n:
            ratio_sum += hit / n
        # (d) L1 touches every key in order; under a trigger, its hits are
        # touched and the keys it lacked written, one batch each.
        if isinstance(l1, TriggeredTier):
            l1.touch_batch([keys[i] for i in range(hit) if owner[i] == -1])
            l1.write_batch([key for i, key in enumerate(keys) if owner[i] != -1], rewrite=False)
        else:
            for key in keys:
                l1.touch(key)
        # (e) Each adapter touches the keys it served, then the computed ones.
        for j, t in enumerate(l2):
            served_keys = [keys[i] for i in range(hit) if owner[i] == j]
            if isinstance(t, TriggeredTier):
                t.touch_batch(served_keys)
                t.write_batch(keys[hit:], rewrite=True)
            else:
                for key in served_keys + keys[hit:]:
                    t.touch(key)

    def ratio(part, whole):
        return part / whole if whole else 0.0

    report = dict(totals)
    report["computed_blocks"] = totals["blocks"] - totals["hit_blocks"]
    report["hit_ratio"] = {
        "block": ratio(totals["hit_blocks"], totals["blocks"]),
        "token": ratio(totals["hit_tokens"], totals["tokens"]),
        "request_mean": ratio(ratio_sum, totals["requests"]),
    }
    report["l1"] = tier_report(l1, l1_hits)
    report["l2"] = [tier_report(t, served[j]) for j, t in enumerate(l2)]
    return report


def capacity(text):
    if text == "inf":
        return None
    value = float(text)
    if value < 0 or value != int(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of blocks or inf")
    return int(value)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--l1", type=capacity, required=True)
    parser.add_argument("--l2", type=capacity, action="append", default=[])
    parser.add_argument("--eviction", choices=["lru", "fifo", "lfu"], default="lru")
    parser.add_argument("--policy", choices=["default", "retain"], default="default")
    parser.add_argument("--block-tokens", type=int, default=512)
    parser.add_argument("--l1-watermark", type=float)
    parser.add_argument("--evict-ratio", type=float, default=0.2)
    parser.add_argument("--l2-watermark", type=float, action="append", default=[])
    parser.add_argument("--l2-evict-ratio", type=float, action="append", default=[])
    parser.add_argument("--evict-interval-ms", type=int, default=1000)
    args = parser.parse_args(argv)
    requests = read_trace(args.trace, args.block_tokens)
    l1_trigger = None if args.l1_watermark is None else (args.l1_watermark, args.evict_ratio)
    l2_triggers = [None] * len(args.l2)
    if args.l2_watermark:
        watermarks = args.l2_watermark * len(args.l2) if len(args.l2_watermark) == 1 else args.l2_watermark
        ratios = args.l2_evict_ratio or [0.2]
        ratios = ratios * len(args.l2) if len(ratios) == 1 else ratios
        l2_triggers = list(zip(watermarks, ratios))
    report = replay(
        requests,
        args.l1,
        args.l2,
        args.eviction,
        args.block_tokens,
        l1_trigger,
        l2_triggers,
        args.evict_interval_ms,
    )
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
