#!/usr/bin/env python3
"""The replay model of docs/REPLAY.md in plain Python: dicts and OrderedDicts,
no bitmaps, no numpy. It is the reference the Rust replay is checked against
(crates/replay/tests/reference.rs, crates/bitplan-py/tests/test_replay.py)
and the baseline its speed is measured against (docs/PERFORMANCE.md).

    reference_replay.py TRACE --l1 CAP [--l2 CAP]... [--eviction lru|fifo]
                        [--policy default|retain] [--block-tokens N]

CAP is a number of blocks or "inf". Prints one JSON object: the counts that
the Rust report also has (requests, blocks, tokens, hit_blocks, hit_tokens,
hit ratios, and per tier hit_blocks, evictions, entries).

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


def read_trace(path, block_tokens):
    """Yields (keys, tokens) per non-blank line, Mooncake or plain."""
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
            yield keys, tokens


def replay(requests, l1_capacity, l2_capacities, eviction="lru", block_tokens=512):
    """Replays (keys, tokens) pairs; returns the report as a dict."""
    l1 = Tier(l1_capacity, eviction)
    l2 = [Tier(capacity, eviction) for capacity in l2_capacities]
    served = [0] * len(l2)
    l1_hits = 0
    totals = {"requests": 0, "blocks": 0, "tokens": 0, "hit_blocks": 0, "hit_tokens": 0}
    ratio_sum = 0.0
    for keys, tokens in requests:
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
        # (d) L1 touches every key in order.
        for key in keys:
            l1.touch(key)
        # (e) Each adapter touches the keys it served, then the computed ones.
        for j, tier in enumerate(l2):
            for i in range(hit):
                if owner[i] == j:
                    tier.touch(keys[i])
            for key in keys[hit:]:
                tier.touch(key)

    def ratio(part, whole):
        return part / whole if whole else 0.0

    report = dict(totals)
    report["computed_blocks"] = totals["blocks"] - totals["hit_blocks"]
    report["hit_ratio"] = {
        "block": ratio(totals["hit_blocks"], totals["blocks"]),
        "token": ratio(totals["hit_tokens"], totals["tokens"]),
        "request_mean": ratio(ratio_sum, totals["requests"]),
    }
    report["l1"] = {"hit_blocks": l1_hits, "evictions": l1.evictions, "entries": len(l1.keys)}
    report["l2"] = [
        {"hit_blocks": served[j], "evictions": tier.evictions, "entries": len(tier.keys)} for j, tier in enumerate(l2)
    ]
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
    args = parser.parse_args(argv)
    requests = read_trace(args.trace, args.block_tokens)
    report = replay(requests, args.l1, args.l2, args.eviction, args.block_tokens)
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
