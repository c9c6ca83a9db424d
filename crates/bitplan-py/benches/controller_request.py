#!/usr/bin/env python3
"""One request of LMCache's v2 prefetch controller, its bitmap steps only
(issue #19, item 3).

The steps follow ``prefetch_controller_v2.py`` at d2d85ea5 (LMCache's code is
not copied: it is written again here, step by step, over LMCache's API):

1. ``lock_l1``: the L1 manager's ``reserve_read`` answer turned into a flat
   ``Bitmap(N)`` with one ``set(i)`` per hit, then
   ``_scatter_bitmaps_full_global`` (zeros, then one ``set`` per bit);
2. ``l2_lookup``: each adapter's ``lookup_and_lock``, adapter side (a flat
   ``Bitmap(N)``, one ``set`` per key it holds; the store's own lookup is
   not timed, its answer is precomputed), scattered into ``l2_locked[a]`` in
   the same way;
3. ``plan_load``: ``DefaultPrefetchPolicy().plan_load(...)`` of
   ``bitplan.lmcache.prefetch_policy``;
4. ``drop``: ``_plan_load``'s ``locked - planned`` per tier and
   ``_gather_keys`` of the dropped cells, then the locked maps set to copies
   of the plan;
5. ``reserve``: ``_build_l1_allocation_plans`` (gathers, retention flags,
   ``cells += planned``) and ``_reserve_l1_cells`` (per row
   ``get_indices_list`` + ``gather``, ``success[row].set(col)`` per cell),
   then ``_submit_load_tasks``' gathers;
6. ``load``: ``_poll_load_results`` for each adapter (``_scatter_bitmaps``,
   ``planned - loaded``, gathers, ``l1_locked += loaded``,
   ``l1_reserved -= planned``);
7. ``finish``: ``_finish_request`` (``merge``, ``to_list``,
   ``fold_unfold_grouped``, ``Bitmap2D(retain) & found``, per manager
   ``locked - hit`` and ``locked & hit`` with their gathers, ``popcount``).

The request is written once, against LMCache's API, and run over these sets
of containers and tiers:

* ``reference``: ``RefBitmap2D``/``RefMapState`` below, a plain-Python list
  of ``bitplan.lmcache.native.Bitmap`` rows with LMCache's rules (one native
  call per row and operator, as LMCache's ``utils.py`` makes them);
* ``native``: the same code over ``bitplan.lmcache.prefetch_policy``'s
  ``Bitmap2D``/``MapState`` (issue #19's native grids);
* ``fast``: the same steps with issue #19's one-call fast path in place of
  the per-bit and per-row loops (``Bitmap(N, indices)``,
  ``Bitmap2D.from_flat(flat, R, order="row")``, ``deposit``,
  ``gather_rows``, ``MapState.gather_keys``/``intersect_each``/
  ``subtract_each``, ``fold_unfold_grouped(grid)``);
* ``reference-mock``: ``reference`` with the old mock L1, canned answers
  and no books (what issue #19 measured);
* ``tiers`` (issue #28): the fast path's containers with L1 and the L2
  adapters as native ``bitplan.lmcache.tiers.ChunkTier``s, driven through
  the positional path: one ``RequestKeys``, ``Bitmap2D`` cells in and
  ``Bitmap2D`` masks out, no key list built.

In ``reference``, ``native`` and ``fast`` the L1 is the plain-Python
``L1Manager`` of ``tests/_l1_model.py`` (dicts, TTL locks with counts,
staging per tag, an LRU listener), filled before the clock starts; each
request gets fresh tiers, since a real L1 keeps the locks and objects a
request leaves.

The mock tiers are deterministic: L1 holds a prefix of every row, adapter 0
a longer prefix with holes, adapter 1 a random 70 % of the cells (seeded)
and adapter 0's holes; every L1 reservation and every load succeeds. Before
timing, the script checks that the three modes give the same hit length,
the same hit cells, and the same keys unlocked, released and touched in
each tier: it is a correctness check as well.

Usage::

    python benches/controller_request.py                       # every mode that can run
    python benches/controller_request.py --mode reference --mode tiers
    python benches/controller_request.py --timer cpu --json out.json
    python benches/controller_request.py --quick               # a smoke run

Modes ``native`` and ``fast`` stop with a message (not a traceback) while
``bitplan.lmcache.prefetch_policy`` still has the pure-Python containers.
Figures are medians in µs; the Markdown it prints is ready for
PERFORMANCE.md.
"""

from __future__ import annotations

import argparse
import inspect
import json
import random
import statistics
import sys
import time
import timeit

import bitplan.lmcache.bitmap_ops as lm_ops
import bitplan.lmcache.prefetch_policy as lm_policy
from bitplan.lmcache.native import Bitmap

# The containers, the tiers and the request's inputs live beside this
# script (the script's directory is on sys.path when it runs).
from _controller_world import (  # noqa: E402
    GROUP_WINDOWS, GROUPS, RANKS, SUCCESS, L1Mock, L2Mock, Log, ReferenceL1, World, native_tiers,
)
from _bench_env import environment_lines  # noqa: E402
from _ref_containers import RefBitmap2D, RefMapState  # noqa: E402

SIZES = [(24, 64, 2), (512, 64, 2)]  # chunks x rows x adapters
MODES = ["reference", "reference-mock", "native", "fast", "tiers"]
STEPS = ["lock_l1", "l2_lookup", "plan_load", "drop", "reserve", "load", "finish"]
PREFETCH_TAG = "prefetch:0"


# ---------------------------------------------------------------------------
# Which containers a mode runs on
# ---------------------------------------------------------------------------


class Unavailable(Exception):
    """A mode that cannot run with the installed bitplan."""


def _python_containers() -> bool:
    # the pure-Python classes define their slots as Python functions
    return inspect.isfunction(getattr(lm_policy.MapState, "__setitem__", None))


FAST_NAMES = {
    "Bitmap2D": ["from_flat", "to_flat", "gather_rows", "to_index_lists", "deposit", "extract"],
    "MapState": ["gather_keys", "intersect_each", "subtract_each", "popcount"],
}


def containers(mode: str, force: bool = False):
    """(Bitmap2D, MapState, wrap_plan) for a mode; Unavailable with the reason."""
    if mode in ("reference", "reference-mock"):
        def wrap(ms):  # plan_load answers in bitplan's containers
            out = RefMapState()
            for index, grid in ms.items():
                out[index] = RefBitmap2D(grid.to_list())
            return out
        return RefBitmap2D, RefMapState, wrap
    if _python_containers() and not force:
        raise Unavailable(
            f"mode {mode!r} times issue #19's native Bitmap2D/MapState, but "
            "bitplan.lmcache.prefetch_policy still has the pure-Python list-of-rows classes "
            "(run --mode reference, or --force to run the code over them anyway)"
        )
    if mode == "fast":
        missing = [f"{cls}.{name}" for cls, names in FAST_NAMES.items()
                   for name in names if not hasattr(getattr(lm_policy, cls), name)]
        try:
            Bitmap(4, [1, 2])
        except TypeError:
            missing.append("Bitmap(size, indices)")
        if missing:
            raise Unavailable(f"mode 'fast' needs issue #19's fast path; missing: {', '.join(missing)}")
    if mode == "tiers":
        try:
            import bitplan.lmcache.tiers  # noqa: F401
        except ImportError:
            raise Unavailable("mode 'tiers' needs issue #28's native tiers (bitplan.lmcache.tiers)") from None
    return lm_policy.Bitmap2D, lm_policy.MapState, lambda ms: ms


# ---------------------------------------------------------------------------
# The request, written once against LMCache's API
# ---------------------------------------------------------------------------


def gather_keys(key_groups, cells):
    """The controller's ``_gather_keys``."""
    if len(key_groups) != len(cells):
        raise ValueError("row count")
    out = []
    for group, row in zip(key_groups, cells):
        if len(row) != len(group.keys):
            raise ValueError("row length")
        out.extend(row.gather(group.keys))
    return out


def scatter_full_global(B2, flat, num_rows, num_cols):
    """The controller's ``_scatter_bitmaps_full_global`` (row-major)."""
    if len(flat) != num_rows * num_cols:
        raise ValueError("length")
    out = B2.zeros(num_rows, num_cols)
    for index in flat.get_indices_list():
        out[index // num_cols].set(index % num_cols)
    return out


def scatter(B2, planned, result):
    """The controller's ``_scatter_bitmaps``: the i-th set cell of
    ``planned`` (row-major) takes bit i of ``result``."""
    rows, cols = planned.size()
    if rows == 0:
        return B2([])
    positions = []
    for r, row in enumerate(planned):
        offset = r * cols
        positions.extend([offset + c for c in row.get_indices_list()])
    if len(positions) != len(result):
        raise ValueError("length")
    out = B2.zeros(rows, cols)
    for index in result.gather(positions):
        out[index // cols].set(index % cols)
    return out


class Request:
    """One request's state and steps. ``fast`` swaps the per-bit and per-row
    loops for the fast path; everything else is the same code."""

    def __init__(self, world: World, mode: str, log: Log, force: bool = False) -> None:
        self.w, self.mode, self.fast, self.log = world, mode, mode == "fast", log
        self.B2, self.MS, self.wrap = containers(mode, force)
        self.l1 = {0: L1Mock(world, log) if mode == "reference-mock" else ReferenceL1(world, log)}
        self.l2 = {a: L2Mock(a, world, log, self.fast) for a in range(world.A)}
        self.l1_locked = self.MS()
        self.l2_locked = self.MS()
        self.l1_reserved = self.MS()
        self.gather_ns = 0  # time in the calls that build key lists (fast mode)
        self.result = None

    # -- the key lists handed to the tiers ---------------------------------
    def _gather(self, cells):
        if not self.fast:
            return gather_keys(self.w.key_groups, cells)
        t = time.perf_counter_ns()
        keys = cells.gather_rows(self.w.keys_by_row)
        self.gather_ns += time.perf_counter_ns() - t
        return keys

    def _gather_each(self, ms):
        """index -> keys for every entry of a map."""
        if not self.fast:
            return {i: gather_keys(self.w.key_groups, cells) for i, cells in ms.items()}
        t = time.perf_counter_ns()
        out = ms.gather_keys(self.w.keys_by_row)
        self.gather_ns += time.perf_counter_ns() - t
        return out

    def _to_grid(self, flat):
        w = self.w
        if self.fast:
            return self.B2.from_flat(flat, w.R, order="row")
        return scatter_full_global(self.B2, flat, w.R, w.C)

    # -- 1. _lock_l1_keys ----------------------------------------------------
    def lock_l1(self):
        keys = self.w.flat_keys
        for index, manager in self.l1.items():
            answer = manager.reserve_read(keys, 1)
            if self.fast:
                hits = Bitmap(len(keys), [i for i, key in enumerate(keys) if answer[key][0] == SUCCESS])
            else:
                hits = Bitmap(len(keys))
                for i, key in enumerate(keys):
                    error, _obj = answer[key]
                    if error != SUCCESS:
                        continue
                    hits.set(i)
            self.l1_locked[index] = self._to_grid(hits)

    # -- 2. lookup_and_lock + _poll_lookup_results ---------------------------
    def l2_lookup(self):
        for index, adapter in self.l2.items():
            found = adapter.lookup_and_lock(self.w.flat_keys)
            self.l2_locked[index] = self._to_grid(found)

    # -- 3./4. _plan_load ----------------------------------------------------
    def plan_load(self):
        w = self.w
        self.plan = w.policy.plan_load(w.key_groups, self.l1_locked, self.l2_locked, w.l1_descs, w.l2_descs, "prefix")

    def drop(self):
        planned_l1, planned_l2 = self.wrap(self.plan.l1_planned_keys), self.wrap(self.plan.l2_planned_keys)
        l1_dropped = self.l1_locked - planned_l1
        l2_dropped = self.l2_locked - planned_l2
        for index, keys in self._gather_each(l1_dropped).items():
            if keys:
                self.l1[index].finish_read(keys, 1)
        for index, keys in self._gather_each(l2_dropped).items():
            if keys:
                self.l2[index].submit_unlock(keys)
        self.l1_locked = planned_l1.copy()
        self.l2_locked = planned_l2.copy()

    # -- 5. _build_l1_allocation_plans, _reserve_l1_cells, _submit_load_tasks
    def reserve(self):
        w, l1_desc = self.w, self.w.l1_descs[0]
        cells_by_l1, retain = {}, {}
        for l2_index, planned in self.l2_locked.items():
            keys = self._gather(planned)
            retention = w.policy.plan_l1_retention(keys, l1_desc, w.l2_descs[l2_index])
            retain.update(zip(keys, retention))
            if 0 in cells_by_l1:
                cells_by_l1[0] += planned
            else:
                cells_by_l1[0] = planned.copy()
        reserved = self.MS()
        objs = {}
        for l1_index, cells in cells_by_l1.items():
            manager = self.l1[l1_index]
            if self.fast:
                lists = cells.to_index_lists()
                rows = []
                for group, cols in zip(w.key_groups, lists):
                    if not cols:
                        rows.append(Bitmap(w.C))
                        continue
                    keys = [group.keys[c] for c in cols]
                    answer = manager.reserve_write(keys, [not retain[k] for k in keys], group.layout_desc, "prefetch:0")
                    ok = []
                    for col, key in zip(cols, keys):
                        error, obj = answer[key]
                        if error != SUCCESS or obj is None:
                            continue
                        ok.append(col)
                        objs[key] = obj
                    rows.append(Bitmap(w.C, ok))
                success = self.B2(rows)
            else:
                success = cells.zeros_like()
                for row_id, (group, row) in enumerate(zip(w.key_groups, cells)):
                    cols = row.get_indices_list()
                    if not cols:
                        continue
                    keys = row.gather(group.keys)
                    answer = manager.reserve_write(keys, [not retain[k] for k in keys], group.layout_desc, "prefetch:0")
                    for col, key in zip(cols, keys):
                        error, obj = answer[key]
                        if error != SUCCESS or obj is None:
                            continue
                        success[row_id].set(col)
                        objs[key] = obj
            reserved[l1_index] = success
        self.l1_reserved = reserved
        # every reservation succeeded: no re-plan; _submit_load_tasks
        for index, keys in self._gather_each(self.l2_locked).items():
            if keys:
                self.l2[index].submit_load_task(keys, [objs[k] for k in keys])

    # -- 6. _poll_load_results -----------------------------------------------
    def load(self):
        for index in [i for i, _ in self.l2_locked.items()]:
            adapter = self.l2[index]
            result = adapter.query_load_result()
            planned = self.l2_locked[index]
            loaded = planned.deposit(result) if self.fast else scatter(self.B2, planned, result)
            failed = planned - loaded
            loaded_keys = self._gather(loaded)
            failed_keys = self._gather(failed)
            if loaded_keys:
                self.l1[0].finish_write_and_reserve_read(loaded_keys, 1, "prefetch:0")
            if failed_keys:
                self.l1[0].finish_write_and_delete(failed_keys, "prefetch:0")
            adapter.submit_unlock(self._gather(planned))
            if 0 in self.l1_locked:
                self.l1_locked[0] += loaded
            else:
                self.l1_locked[0] = loaded
            self.l1_reserved[0] -= planned
            del self.l2_locked[index]

    # -- 7. _finish_request --------------------------------------------------
    def finish(self):
        w = self.w
        found = self.l1_locked.merge()
        if len(found) == 0:
            found = self.B2.zeros(w.R, w.C)
        if self.fast:
            hit_length, retain_rows = lm_ops.fold_unfold_grouped(found, w.windows)
            hit_cells = self.B2(retain_rows) & found
            releases = self._gather_each(self.l1_locked.subtract_each(hit_cells))
            touches = self._gather_each(self.l1_locked.intersect_each(hit_cells))
            for index in releases:
                if releases[index]:
                    self.l1[index].finish_read(releases[index], 1)
                if touches[index]:
                    self.l1[index].touch_keys(touches[index])
        else:
            hit_length, retain_rows = lm_ops.fold_unfold_grouped(found.to_list(), w.windows)
            hit_cells = self.B2(retain_rows) & found
            for index, locked in self.l1_locked.items():
                release_keys = self._gather(locked - hit_cells)
                if release_keys:
                    self.l1[index].finish_read(release_keys, 1)
                hit_keys = self._gather(locked & hit_cells)
                if hit_keys:
                    self.l1[index].touch_keys(hit_keys)
        self.result = (hit_length, hit_cells, hit_cells.popcount())


class TiersRequest(Request):
    """Mode ``tiers``: the same request with L1 and the L2 adapters as native
    tiers driven through the positional path: the keys are one
    ``RequestKeys`` (chunk hashes x row ids) built with the tiers, every tier
    call takes a ``Bitmap2D`` of cells and answers with one, and no key list
    is built (the log gathers keys only in the check)."""

    def __init__(self, world: World, mode: str, log: Log, force: bool = False) -> None:
        self.w, self.mode, self.fast, self.log = world, mode, True, log
        self.B2, self.MS, self.wrap = containers(mode, force)
        self.keys, self.l1, self.l2 = native_tiers(world)
        self.l1_locked = self.MS()
        self.l2_locked = self.MS()
        self.l1_reserved = self.MS()
        self.loaded = {}
        self.gather_ns = 0
        self.result = None

    def lock_l1(self):
        for index, tier in self.l1.items():
            self.l1_locked[index] = tier.reserve_read(self.keys, 1)

    def l2_lookup(self):
        for index, tier in self.l2.items():
            self.l2_locked[index] = tier.reserve_read(self.keys, 1)

    def drop(self):
        rows = self.w.keys_by_row
        planned_l1, planned_l2 = self.plan.l1_planned_keys, self.plan.l2_planned_keys
        for index, cells in (self.l1_locked - planned_l1).items():
            if cells.popcount():
                self.log.cells("l1.finish_read", cells, rows)
                self.l1[index].finish_read(self.keys, 1, cells=cells)
        for index, cells in (self.l2_locked - planned_l2).items():
            if cells.popcount():
                self.log.cells(f"l2[{index}].submit_unlock", cells, rows)
                self.l2[index].finish_read(self.keys, 1, cells=cells)
        self.l1_locked = planned_l1.copy()
        self.l2_locked = planned_l2.copy()

    def reserve(self):
        rows = self.w.keys_by_row
        policy = self.w.policy
        # the stock policies' retention is one flag for every key (Default:
        # none retained, so temporary; Retain: all); a policy that looks at
        # its keys would need them gathered (gather_rows) here
        if isinstance(policy, lm_policy.RetainPrefetchPolicy):
            temporary = False
        elif type(policy) is lm_policy.DefaultPrefetchPolicy:
            temporary = True
        else:
            raise NotImplementedError(f"retention of {type(policy).__name__} by cells")
        cells = self.l2_locked.merge()
        reserved = self.MS()
        if len(cells):
            reserved[0] = self.l1[0].reserve_write(self.keys, temporary, PREFETCH_TAG, cells=cells)
        self.l1_reserved = reserved
        # every reservation succeeded (no re-plan); _submit_load_tasks: each
        # adapter loads its planned cells, and every load succeeds, as with
        # the mocks (the adapter's transfer is not timed in any mode)
        for index, planned in self.l2_locked.items():
            if planned.popcount():
                self.log.cells(f"l2[{index}].submit_load_task", planned, rows)
                self.loaded[index] = planned

    def load(self):
        rows = self.w.keys_by_row
        l1 = self.l1[0]
        for index in self.l2_locked.keys():
            planned = self.l2_locked[index]
            loaded = self.loaded.get(index)
            if loaded is None:
                loaded = planned.zeros_like()
            failed = planned - loaded
            if loaded.popcount():
                self.log.cells("l1.finish_write_and_reserve_read", loaded, rows)
                l1.finish_write_and_reserve_read(self.keys, 1, PREFETCH_TAG, cells=loaded)
            if failed.popcount():
                self.log.cells("l1.finish_write_and_delete", failed, rows)
                l1.finish_write_and_delete(self.keys, PREFETCH_TAG, cells=failed)
            self.log.cells(f"l2[{index}].submit_unlock", planned, rows)
            self.l2[index].finish_read(self.keys, 1, cells=planned)
            if 0 in self.l1_locked:
                self.l1_locked[0] += loaded
            else:
                self.l1_locked[0] = loaded
            self.l1_reserved[0] -= planned
            del self.l2_locked[index]

    def finish(self):
        w, rows = self.w, self.w.keys_by_row
        found = self.l1_locked.merge()
        if len(found) == 0:
            found = self.B2.zeros(w.R, w.C)
        hit_length, retain_rows = lm_ops.fold_unfold_grouped(found, w.windows)
        hit_cells = self.B2(retain_rows) & found
        releases = self.l1_locked.subtract_each(hit_cells)
        touches = self.l1_locked.intersect_each(hit_cells)
        for index, cells in releases.items():
            if cells.popcount():
                self.log.cells("l1.finish_read", cells, rows)
                self.l1[index].finish_read(self.keys, 1, cells=cells)
            touched = touches[index]
            if touched.popcount():
                self.log.cells("l1.touch_keys", touched, rows)
                self.l1[index].touch(self.keys, cells=touched)
        self.result = (hit_length, hit_cells, hit_cells.popcount())


def new_request(world: World, mode: str, log: Log, force: bool = False) -> Request:
    """A request ready to run: its tiers built and filled (not timed)."""
    return (TiersRequest if mode == "tiers" else Request)(world, mode, log, force)


def run_request(world: World, mode: str, log: Log, force: bool = False, clock=None):
    """One request. With ``clock``, returns the ns of each step."""
    req = new_request(world, mode, log, force)
    if clock is None:
        for step in STEPS:
            getattr(req, step)()
        return req, None
    marks = []
    t = clock()
    for step in STEPS:
        getattr(req, step)()
        now = clock()
        marks.append(now - t)
        t = now
    return req, marks


def outcome(world: World, mode: str, force: bool):
    """What a mode computes: hit length, hit cells, and every key list
    handed to a tier (sorted per call, as a set of cells)."""
    log = Log(keep=True)
    req, _ = run_request(world, mode, log, force)
    hit_length, hit_cells, popcount = req.result
    cells = [row.get_indices_list() for row in hit_cells]
    calls = sorted((what, sorted(keys)) for what, keys in log.calls)
    return {"hit_length": hit_length, "hit_cells": cells, "hit_popcount": popcount, "calls": calls}


# ---------------------------------------------------------------------------
# Timing (bench.py's style: timeit, loop count as autorange, medians)
# ---------------------------------------------------------------------------

TIMERS = {"wall": (time.perf_counter, time.perf_counter_ns), "cpu": (time.thread_time, time.thread_time_ns)}


def median_us(stmt: str, env: dict, clock: str, min_time: float, repeat: int) -> tuple[float, list[float]]:
    setup = "; ".join(f"{name} = __env[{name!r}]" for name in env) or "pass"
    timer = timeit.Timer(stmt, setup, timer=TIMERS[clock][0], globals={"__env": env})
    number = 1
    while True:
        if timer.timeit(number) >= min_time / 5:
            break
        number *= 2
    per_call = [t / number * 1e6 for t in timer.repeat(repeat, number)]
    return statistics.median(per_call), per_call


def request_median_us(world: World, mode: str, clock: str, min_time: float, repeat: int, force: bool):
    """The whole request: per repeat, the median of requests run for
    >= ``min_time`` s (a median, not a mean: on a shared machine one
    preempted request would weigh as much as hundreds); then the median of
    the repeats. Each request gets fresh tiers (a real L1 keeps the locks
    and objects a request leaves), built before its clock starts."""
    import gc

    ns = TIMERS[clock][1]
    reps = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            total, times = 0, []
            while total < min_time * 1e9:
                req = new_request(world, mode, Log(keep=False), force)
                t = ns()
                for step in STEPS:
                    getattr(req, step)()
                elapsed = ns() - t
                total += elapsed
                times.append(elapsed)
                del req
                gc.collect(0)
            reps.append(statistics.median(times) / 1000)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(reps), reps


def step_medians(world: World, mode: str, clock: str, runs: int, force: bool):
    import gc

    ns = TIMERS[clock][1]
    per_step = {s: [] for s in STEPS}
    gather = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(runs):
            req, marks = run_request(world, mode, Log(keep=False), force, clock=ns)
            for step, m in zip(STEPS, marks):
                per_step[step].append(m / 1000)
            gather.append(req.gather_ns / 1000)
    finally:
        if enabled:
            gc.enable()
    return {s: statistics.median(v) for s, v in per_step.items()}, statistics.median(gather)


def micro_envs(num_rows: int, num_cols: int, mode: str, force: bool):
    B2, MS, _ = containers(mode, force)
    rnd = random.Random(num_cols)
    def half():
        row = Bitmap(num_cols)
        row.batched_set([c for c in range(num_cols) if rnd.random() < 0.5])
        return row

    a, b = B2([half() for _ in range(num_rows)]), B2([half() for _ in range(num_rows)])
    ms = MS()
    ms[0], ms[1] = a.copy(), b.copy()
    return {"a": a, "b": b, "ms": ms, "B2": B2, "R": num_rows, "C": num_cols}


MICRO = {
    "a + b": "a + b",
    "a - b": "a - b",
    "a & b": "a & b",
    "a.copy()": "a.copy()",
    "zeros(R, C)": "B2.zeros(R, C)",
    "MapState.merge() of 2": "ms.merge()",
}


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def header(args, modes_run, skipped) -> str:
    lines = [
        "### One controller request (issue #19): `benches/controller_request.py`",
        "",
        *environment_lines(load_note=""),
        f"- method: whole request: each request on fresh tiers built before its clock starts ({args.timer} clock), "
        f"requests run for ≥ {args.min_time:g} s per repeat, {args.repeat} repeats, median of the repeats' medians, µs; "
        f"steps: {args.runs} instrumented requests, median µs per step "
        "(`perf_counter_ns` or `thread_time_ns` between steps)",
        f"- rows = {GROUPS} groups × {RANKS} ranks, windows per group {GROUP_WINDOWS}; L1 a prefix of each row, "
        "adapter 0 a longer prefix with holes, adapter 1 a random 70 % and the holes; every load succeeds",
        "- L1: `reference`, `native`, `fast`: the plain-Python L1Manager books of `tests/_l1_model.py`; "
        "`reference-mock`: the old canned answers; `tiers`: `ChunkTier`s for L1 and the adapters",
        f"- modes run: {', '.join(modes_run) or 'none'}",
    ]
    for mode, why in skipped.items():
        lines.append(f"- mode `{mode}` not run: {why}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", action="append", choices=MODES, help="a mode to run (repeatable; default: all that can)")
    parser.add_argument("--timer", choices=sorted(TIMERS), default="wall",
                        help="wall: time.perf_counter, timeit's default; cpu: time.thread_time, for a shared machine")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per repeat")
    parser.add_argument("--runs", type=int, default=201, help="instrumented requests for the step medians")
    parser.add_argument("--quick", action="store_true", help="3 repeats of >= 0.02 s, 21 instrumented runs")
    parser.add_argument("--no-micro", action="store_true", help="skip the per-operator table")
    parser.add_argument("--force", action="store_true",
                        help="run native/fast over whatever containers bitplan has (native --force before #19: today's Python ones)")
    parser.add_argument("--json", metavar="FILE", help="also write every figure to FILE")
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.min_time, args.runs = 3, 0.02, 21

    wanted = args.mode or MODES
    modes, skipped = [], {}
    for mode in wanted:
        try:
            containers(mode, args.force)
            modes.append(mode)
        except Unavailable as why:
            skipped[mode] = str(why)
    if not modes:
        for mode, why in skipped.items():
            print(f"controller_request.py: {why}", file=sys.stderr)
        return 2
    if args.mode:  # a mode asked for by name that cannot run is an error
        for mode, why in skipped.items():
            print(f"controller_request.py: {why}", file=sys.stderr)
        if skipped:
            return 2

    print(header(args, modes, skipped))
    report = {"modes": modes, "skipped": skipped, "timer": args.timer, "sizes": {}, "micro": {}}

    # the correctness check: every mode computes the same thing
    for chunks, rows, adapters in SIZES:
        world = World(chunks, adapters)
        results = {mode: outcome(world, mode, args.force) for mode in modes}
        first = modes[0]
        for mode in modes[1:]:
            for field in ("hit_length", "hit_cells", "hit_popcount", "calls"):
                if results[mode][field] != results[first][field]:
                    print(f"\nMISMATCH at {chunks}x{rows}x{adapters}: mode {mode} differs from {first} in {field}",
                          file=sys.stderr)
                    return 1
        r = results[first]
        unlocked = {what: sum(len(k) for w, k in r["calls"] if w == what) for what in sorted({w for w, _ in r["calls"]})}
        report["sizes"][f"{chunks}x{rows}x{adapters}"] = {"check": {"hit_length": r["hit_length"],
                                                                     "hit_cells": r["hit_popcount"], "keys": unlocked}}

    print("\nCheck: every mode run gives the same hit length, hit cells and key lists to the tiers:")
    for size, data in report["sizes"].items():
        c = data["check"]
        keys = ", ".join(f"{what} {n}" for what, n in c["keys"].items())
        print(f"- {size}: hit length {c['hit_length']}, {c['hit_cells']} hit cells; keys handed over: {keys}")

    # whole request and steps
    for chunks, rows, adapters in SIZES:
        world = World(chunks, adapters)
        size = f"{chunks}x{rows}x{adapters}"
        for mode in modes:
            med, reps = request_median_us(world, mode, args.timer, args.min_time, args.repeat, args.force)
            steps, gather = step_medians(world, mode, args.timer, args.runs, args.force)
            report["sizes"][size][mode] = {"request_us": med, "repeats_us": reps, "steps_us": steps,
                                           "gather_us": gather}

    print("\n| request (chunks × rows × adapters) | " + " | ".join(f"{m} µs" for m in modes) + " |")
    print("|---|" + "---:|" * len(modes))
    for size, data in report["sizes"].items():
        ref = data.get("reference", {}).get("request_us")
        cells = []
        for mode in modes:
            v = data[mode]["request_us"]
            cells.append(f"{v:,.1f}" + (f" (×{ref / v:.1f})" if ref and mode != "reference" else ""))
        print(f"| {size.replace('x', ' × ')} | " + " | ".join(cells) + " |")
    print("\n(×N): reference / mode; above 1, faster than the Python-list reference.")

    print("\n| step | " + " | ".join(f"{size.replace('x', '×')} {m}" for size in report["sizes"] for m in modes) + " |")
    print("|---|" + "---:|" * (len(modes) * len(report["sizes"])))
    for step in STEPS + ["sum of steps"]:
        cells = []
        for size, data in report["sizes"].items():
            for mode in modes:
                st = data[mode]["steps_us"]
                cells.append(f"{(sum(st.values()) if step == 'sum of steps' else st[step]):,.1f}")
        print(f"| {step} | " + " | ".join(cells) + " |")
    if "fast" in modes:
        big = report["sizes"][f"{SIZES[-1][0]}x{SIZES[-1][1]}x{SIZES[-1][2]}"]["fast"]
        total = sum(big["steps_us"].values())
        print(f"\nAt {SIZES[-1][0]} × {SIZES[-1][1]} × {SIZES[-1][2]}, the fast request spends {big['gather_us']:,.1f} µs "
              f"of its {total:,.1f} µs ({100 * big['gather_us'] / total:.0f} %) in the calls that build the Python key "
              "lists handed to the tiers (gather_rows, MapState.gather_keys).")

    if not args.no_micro:
        micro_modes = [m for m in modes if m in ("reference", "native")]
        print("\n| operator | " + " | ".join(f"{r}×{c} {m} µs" for r, c in ((64, 24), (64, 4096)) for m in micro_modes) + " |")
        print("|---|" + "---:|" * (2 * len(micro_modes)))
        for name, stmt in MICRO.items():
            cells = []
            for r, c in ((64, 24), (64, 4096)):
                for mode in micro_modes:
                    env = micro_envs(r, c, mode, args.force)
                    med, reps = median_us(stmt, env, args.timer, args.min_time, args.repeat)
                    report["micro"].setdefault(name, {})[f"{r}x{c} {mode}"] = {"median_us": med, "repeats_us": reps}
                    cells.append(f"{med:,.2f}")
            print(f"| `{stmt}` | " + " | ".join(cells) + " |")

    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=1)
        print(f"\n(every figure in {args.json})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
