"""The request's fixed inputs and its tiers for ``controller_request.py``:
the keys and windows (``World``), the log of what each tier was handed,
the mock tiers, the reference L1 kept as LMCache's ``L1Manager`` keeps its
books, and the native tiers of the ``tiers`` mode."""

from __future__ import annotations

import os
import random
import sys

import bitplan.lmcache.prefetch_policy as lm_policy
from bitplan.lmcache.native import Bitmap

# The reference L1 (LMCache's L1Manager's books in plain Python) is the model
# of the tests' stateful test: one copy, in tests/.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests"))
from _l1_model import L1Error, L1Model  # noqa: E402

GROUPS, RANKS = 8, 8  # 64 rows: 8 object groups x 8 kv ranks
GROUP_WINDOWS = [-1, -1, -1, -1, -1, -1, 4, 1]  # six full-attention groups, a window of 4, a mamba-like 1
SUCCESS, MISS = L1Error.SUCCESS, L1Error.KEY_NOT_EXIST


# ---------------------------------------------------------------------------
# The mock tiers and the request's fixed inputs
# ---------------------------------------------------------------------------


class World:
    """Everything a request starts from: keys, windows, what each tier holds."""

    def __init__(self, num_chunks: int, num_adapters: int) -> None:
        self.C, self.R, self.A = num_chunks, GROUPS * RANKS, num_adapters
        self.N = self.R * self.C
        self.windows = [GROUP_WINDOWS[r // RANKS] for r in range(self.R)]
        self.key_groups = [
            lm_policy.GroupedObjectKeys(keys=[(r, c) for c in range(self.C)], object_group_id=r // RANKS,
                                        sliding_window_size=w)
            for r, w in enumerate(self.windows)
        ]
        self.keys_by_row = [g.keys for g in self.key_groups]
        self.flat_keys = [k for g in self.key_groups for k in g.keys]  # row-major, as the controller chains them
        rnd = random.Random(19)
        l1_len = [max(0, self.C // 4 - (r % 3)) for r in range(self.R)]
        held = [set(), set()]
        # adapter 0: a prefix of 3/4 of the row, with holes (c = r mod 7) past
        # L1's quarter; adapter 1: a random 70 % and those holes, so that both
        # adapters get planned cells
        holes = {(r, c) for r in range(self.R) for c in range(self.C // 4, self.C * 3 // 4) if c % 7 == r % 7}
        held[0] = {(r, c) for r in range(self.R) for c in range(min(self.C, self.C * 3 // 4 + (r % 2)))} - holes
        held[1] = {(r, c) for r in range(self.R) for c in range(self.C) if rnd.random() < 0.7} | holes
        self.l1_len = l1_len
        self.l1_keys = [k for k in self.flat_keys if k[1] < l1_len[k[0]]]
        # the old mock L1's canned answers (mode reference-mock)
        self.l1_answer = {k: ((SUCCESS, object()) if k[1] < l1_len[k[0]] else (MISS, None)) for k in self.flat_keys}
        self.reserve_answer = {k: (SUCCESS, ("buffer", k)) for k in self.flat_keys}
        self.adapter_store = [held[a % 2] for a in range(self.A)]
        self.adapter_hits = [[i for i, k in enumerate(self.flat_keys) if k in store] for store in self.adapter_store]
        self.adapter_cols = [[[c for c in range(self.C) if (r, c) in store] for r in range(self.R)]
                             for store in self.adapter_store]
        # an L1 that holds the L1 prefix and has room for every cell once more
        self.l1_capacity = 2 * self.N
        # the tiers mode's keys: chunk hashes (any 64-bit values) x row ids
        rnd_hash = random.Random(28)
        self.chunk_hashes = [rnd_hash.getrandbits(64) for _ in range(self.C)]
        self.row_ids = list(range(self.R))
        self.l1_descs = {0: lm_policy.L1ManagerDescriptor(0)}
        self.l2_descs = {a: lm_policy.L2AdapterDescriptor(a) for a in range(self.A)}
        self.policy = lm_policy.DefaultPrefetchPolicy()


class Log:
    """What the request hands to the tiers; ``keep`` records the keys
    (the check), otherwise only the counts (the timed runs)."""

    __slots__ = ("keep", "calls")

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.calls: list = []

    def __call__(self, what: str, keys) -> None:
        self.calls.append((what, list(keys)) if self.keep else (what, len(keys)))

    def cells(self, what: str, grid, keys_by_row) -> None:
        """Mode ``tiers`` hands a tier cells, not keys: the check records
        the keys of those cells (out of the timed runs, only their count)."""
        self.calls.append((what, grid.gather_rows(keys_by_row)) if self.keep else (what, grid.popcount()))


class L1Mock:
    """The old mock L1 (mode ``reference-mock``): canned answers, no books."""

    def __init__(self, world: World, log: Log) -> None:
        self.world, self.log = world, log

    def reserve_read(self, keys, num_readers):
        return self.world.l1_answer

    def reserve_write(self, keys, is_temporary, layout_desc, tag):
        return self.world.reserve_answer

    def finish_read(self, keys, read_locks=1):
        self.log("l1.finish_read", keys)

    def finish_write_and_reserve_read(self, keys, read_locks, tag):
        self.log("l1.finish_write_and_reserve_read", keys)

    def finish_write_and_delete(self, keys, tag):
        self.log("l1.finish_write_and_delete", keys)

    def touch_keys(self, keys):
        self.log("l1.touch_keys", keys)


class ReferenceL1(L1Model):
    """The reference L1: LMCache's ``L1Manager`` books (``tests/_l1_model.py``),
    logging the keys the request hands to it as the mock does."""

    def __init__(self, world: World, log: Log) -> None:
        super().__init__(world.l1_capacity)
        self.log = None
        # warm, as a long-lived L1 is: every key of the request staged once
        # and discarded, so that its dicts have grown to the request
        everything = world.flat_keys
        self.reserve_write(everything, [False] * len(everything), None, "warm")
        super().finish_write_and_delete(everything, "warm")  # not logged
        keys = world.l1_keys
        self.reserve_write(keys, [False] * len(keys), None, "seed")
        self.finish_write(keys, "seed")
        self.log = log

    def finish_read(self, keys, read_locks=1):
        self.log("l1.finish_read", keys)
        return super().finish_read(keys, read_locks)

    def finish_write_and_reserve_read(self, keys, read_locks=1, tag=""):
        self.log("l1.finish_write_and_reserve_read", keys)
        return super().finish_write_and_reserve_read(keys, read_locks, tag)

    def finish_write_and_delete(self, keys, tag=""):
        self.log("l1.finish_write_and_delete", keys)
        return super().finish_write_and_delete(keys, tag)

    def touch_keys(self, keys):
        self.log("l1.touch_keys", keys)
        return super().touch_keys(keys)


def native_tiers(world: World):
    """Mode ``tiers``: the request's keys, L1 and the L2 adapters as native
    tiers (``bitplan.lmcache.tiers.ChunkTier``), filled as the mocks are."""
    import numpy as np
    from bitplan.lmcache.tiers import ChunkTier, RequestKeys

    B2 = lm_policy.Bitmap2D
    keys = RequestKeys(np.array(world.chunk_hashes, dtype=np.uint64), np.array(world.row_ids, dtype=np.uint32))
    # rows=: a tier of at most 64 rows files each chunk's rows in one block
    # of slots (one table probe a chunk for a request's grid).
    rows = len(world.row_ids)
    l1 = ChunkTier(world.l1_capacity, rows=rows)
    # warm, as a long-lived L1 is (and as the reference L1 is)
    l1.reserve_write(keys, False, "warm")
    l1.finish_write_and_delete(keys, "warm")
    held = B2([Bitmap(world.C, n) for n in world.l1_len])
    l1.reserve_write(keys, False, "seed", cells=held)
    l1.finish_write(keys, "seed", cells=held)
    l2 = {}
    for a in range(world.A):
        tier = ChunkTier(world.N, rows=rows)
        held = B2([Bitmap(world.C, cols) for cols in world.adapter_cols[a]])
        tier.reserve_write(keys, False, "seed", cells=held)
        tier.finish_write(keys, "seed", cells=held)
        l2[a] = tier
    return keys, {0: l1}, l2


class L2Mock:
    def __init__(self, index: int, world: World, log: Log, fast: bool) -> None:
        self.index, self.world, self.log, self.fast = index, world, log, fast
        self.store = world.adapter_store[index]
        self.load_result = None

    def lookup_and_lock(self, keys):
        # the store's own lookup is the adapter's business, not bitmap work:
        # its answer (the indices it holds) is precomputed; what is timed is
        # the flat Bitmap the adapter builds from it
        hits = self.world.adapter_hits[self.index]
        if self.fast:
            return Bitmap(len(keys), hits)
        found = Bitmap(len(keys))
        for i in hits:
            found.set(i)
        return found

    def submit_unlock(self, keys):
        self.log(f"l2[{self.index}].submit_unlock", keys)

    def submit_load_task(self, keys, objects):
        # every key loads: a failed cell inside the prefix cuts the final
        # hit, and with a window-1 group cuts it to 0 (that group keeps only
        # the plan's last chunk), which would leave nothing to finish
        n = len(keys)
        result = Bitmap(n, n)
        self.load_result = result
        self.log(f"l2[{self.index}].submit_load_task", keys)

    def query_load_result(self):
        return self.load_result
