#!/usr/bin/env python3
"""Speed of the ``bitplan`` Python package (issue #14, section "Speed").

Every figure is the median, over several repeats, of the time per call of a
*statement* timed the way :mod:`timeit` does it (``timeit.Timer(stmt, setup,
globals=...)``, a loop count found as ``Timer.autorange`` finds it, then
``Timer.repeat``); the operands are bound as locals in the setup, so the
statement pays for the call itself and nothing else (no lambda, no global
look-ups). In the same run, each item is also timed

* in pure Python over an ``int``-backed bitmap (:class:`IntBitmap` in ``_int_model.py``,
  with the seed's first-adapter-wins ``select_load_plan`` and a fold/unfold
  written over it), and
* where there is one, through ``bitarray.bitarray`` (the C-extension bit
  array from PyPI),

and through LMCache's own native module: the release's ``lmcache.lmcache_native``
(its ``Bitmap``, and its fold kernels behind ``bitmap_ops``' wrappers) when
LMCache is installed, measured in the same run; without it, the figures
issue #14 quoted are shown for scale, and the header says which. A ratio
``(×N)`` after a baseline is ``baseline / bitplan``: above 1, bitplan is
faster.

Usage::

    python benches/bench.py              # full run (9 repeats of >= 0.2 s)
    python benches/bench.py --quick      # CI smoke run (3 short repeats)
    python benches/bench.py --timer cpu  # on a shared machine: CPU time, not wall
    python benches/bench.py --filter fold --json out.json

The exit status is 0 even when a target fails (this is a benchmark, not a
test); the last line says how many targets passed.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
from bitarray import __version__ as bitarray_version
from bitarray import bitarray

try:
    # LMCache's release (0.5.6), when installed: its own C++ bitmap and fold
    # kernels are the baseline, measured in this run. (The package's name
    # `fold` is the function; the module is imported by its full name.)
    import lmcache.lmcache_native as real_native

    real_ops = importlib.import_module("lmcache.v1.distributed.bitmap_ops.fold")
except ImportError:
    real_native = None
    real_ops = None

import bitplan
import bitplan.lmcache.bitmap_ops as lm_ops
import bitplan.lmcache.native as lm_native
import bitplan.lmcache.prefetch_policy as lm_policy

# The script's directory is on sys.path when it runs.
from _bench_env import cpu_model, load_average  # noqa: E402
from _bench_suite import (  # noqa: E402
    TIMERS,
    Suite,
    Target,
    Timer,
    below,
    table,
    to_json,
    vs_bitarray,
    vs_lmcache,
)
from _int_model import (  # noqa: E402
    IntBitmap,
    int_fold_unfold_grouped,
    int_fold_unfold_ranked,
    int_select_load_plan,
)

SEED = 14

# ---------------------------------------------------------------------------
# LMCache native figures, from issue #14 (µs per call, CPython 3.11, this
# machine). Constants: they are not measured by this script.
# ---------------------------------------------------------------------------

LMCACHE_NATIVE_US = {
    "select_load_plan 1024x3": 6.7,
    "select_load_plan 262144x3": 536.0,
    "select_load_plan 4194304x3": 8500.0,
    "and 1024": 0.33,
    "and 262144": 26.0,
    "popcount 262144": 90.0,
    "fold_unfold_ranked 4096x8x8": 245.0,
    "fold_unfold_grouped 4096x64": 300.0,
    "get_indices_list 131072": 3600.0,
}


# ---------------------------------------------------------------------------
# Operands: one random bit pattern in every representation
# ---------------------------------------------------------------------------


@dataclass
class Bits:
    """The same ``n`` bits as an int, a bitplan.Bitmap, an LMCache-compat
    Bitmap and a bitarray."""

    n: int
    data: bytes  # LMCache's byte layout: bit i in byte i // 8 at bit i % 8

    @property
    def as_int(self) -> IntBitmap:
        return IntBitmap(self.n, int.from_bytes(self.data, "little"))

    @property
    def as_bitplan(self) -> bitplan.Bitmap:
        return bitplan.Bitmap.from_bytes(self.n, self.data)

    @property
    def as_lmcache(self) -> lm_native.Bitmap:
        bm = lm_native.Bitmap(self.n)
        bm.batched_set(self.indices())
        return bm

    @property
    def as_real(self) -> Any:
        """LMCache's own ``lmcache_native.Bitmap`` (None without LMCache)."""
        if real_native is None:
            return None
        bm = real_native.Bitmap(self.n)
        bm.batched_set(self.indices())
        return bm

    @property
    def as_bitarray(self) -> bitarray:
        ba = bitarray(endian="little")
        ba.frombytes(self.data)
        del ba[self.n :]
        return ba

    def indices(self) -> list[int]:
        arr = np.unpackbits(np.frombuffer(self.data, np.uint8), bitorder="little")[: self.n]
        return np.flatnonzero(arr).tolist()


def bits_from_mask(mask: np.ndarray) -> Bits:
    return Bits(int(mask.size), np.packbits(mask.astype(np.uint8), bitorder="little").tobytes())


def random_bits(rng: np.random.Generator, n: int, density: float) -> Bits:
    return bits_from_mask(rng.random(n) < density)


def lm_to_int(bm: Any) -> int:
    """Any bitmap (bitplan, LMCache-compat, IntBitmap) as an int."""
    if isinstance(bm, IntBitmap):
        return bm.v
    if isinstance(bm, bitplan.Bitmap):
        # Its repr abbreviates long bitmaps (issue #27); its bytes are
        # LMCache's layout, bit i in byte i // 8 at bit i % 8.
        return int.from_bytes(bm.to_bytes(), "little")
    bits = repr(bm)  # LMCache's form: one '0'/'1' per bit, bit 0 first
    assert set(bits) <= {"0", "1"}, bits[:40]
    return int(bits[::-1], 2) if bits else 0


# ---------------------------------------------------------------------------
# The benchmarks
# ---------------------------------------------------------------------------


def rng_for(*key: int) -> np.random.Generator:
    """A generator per data set, so that --filter does not change the data."""
    return np.random.default_rng([SEED, *key])


def bench_select_load_plan(suite: Suite) -> None:
    densities = (0.3, 0.6, 0.9)
    for n, key, target in (
        (1024, "select_load_plan 1024x3", 1.5),
        (262_144, "select_load_plan 262144x3", 10.0),
        (4_194_304, "select_load_plan 4194304x3", None),
    ):
        size = f"{n:,} keys × 3"
        if not any(suite.wanted("select_load_plan", size, impl) for impl in ("bitplan.lmcache", "bitplan")):
            continue
        rng = rng_for(1, n)
        bits = [random_bits(rng, n, d) for d in densities]
        # The policies read only len(keys); one shared key object per slot
        # keeps 4M keys at 32 MB.
        keys = ["key"] * n
        lm_adapters = [lm_policy.AdapterDescriptor(i) for i in range(3)]
        bp_adapters = [bitplan.AdapterDescriptor(i) for i in range(3)]
        lm_lookup = {i: b.as_lmcache for i, b in enumerate(bits)}
        bp_lookup = {i: b.as_bitplan for i, b in enumerate(bits)}
        int_lookup = {i: b.as_int for i, b in enumerate(bits)}

        # All three give the same plan.
        expected = {i: bm.v for i, bm in int_select_load_plan(keys, int_lookup, lm_adapters).items()}
        lm_plan = lm_policy.DefaultPrefetchPolicy().select_load_plan(keys, lm_lookup, lm_adapters)
        bp_plan = bitplan.DefaultPrefetchPolicy().select_load_plan(keys, bp_lookup, bp_adapters)
        if n <= 262_144:
            assert {i: lm_to_int(bm) for i, bm in lm_plan.items()} == expected
        assert {i: int.from_bytes(bm.to_bytes(), "little") for i, bm in bp_plan.items()} == expected

        int_env = {
            "select_load_plan": int_select_load_plan,
            "keys": keys,
            "lookup": int_lookup,
            "adapters": lm_adapters,
        }
        int_case = ("select_load_plan(keys, lookup, adapters)", int_env)
        suite.add(
            "select_load_plan",
            size,
            "bitplan.lmcache",
            "policy.select_load_plan(keys, lookup, adapters)",
            {
                "policy": lm_policy.DefaultPrefetchPolicy(),
                "keys": keys,
                "lookup": lm_lookup,
                "adapters": lm_adapters,
            },
            int_model=int_case,
            lmcache=key,
            targets=(below(target),) if target else (),
            note="" if target else "no target (issue #14 quotes LMCache only)",
        )
        suite.add(
            "select_load_plan",
            size,
            "bitplan",
            "policy.select_load_plan(keys, lookup, adapters)",
            {
                "policy": bitplan.DefaultPrefetchPolicy(),
                "keys": keys,
                "lookup": bp_lookup,
                "adapters": bp_adapters,
            },
            int_model=int_case,
            lmcache=key,
            note="info (the target is on bitplan.lmcache)",
        )


def bench_binary_ops(suite: Suite) -> None:
    for n in (1024, 262_144):
        rng = rng_for(2, n)
        size = f"{n:,} bits"
        big = n == 262_144
        a, b = random_bits(rng, n, 0.5), random_bits(rng, n, 0.5)
        A, B = a.as_bitplan, b.as_bitplan
        LA, LB = a.as_lmcache, b.as_lmcache
        RA, RB = a.as_real, b.as_real
        IA, IB = a.as_int, b.as_int
        BA, BB = a.as_bitarray, b.as_bitarray
        assert (A & B).popcount() == (LA & LB).popcount() == (IA & IB).popcount() == (BA & BB).count()
        assert (A | B).popcount() == (LA | LB).popcount() == (IA | IB).popcount() == (BA | BB).count()
        assert A.get_indices_list() == LA.get_indices_list() == IA.get_indices_list() == list(BA.search(1))

        for op, name in (("&", "a & b"), ("|", "a | b")):
            targets: tuple[Target, ...] = (vs_bitarray(1.5 if big else 1 / 1.5),)
            if op == "&":
                targets = (below(4.0 if big else 0.2),) + targets
            lm_key = f"and {n}" if op == "&" else None
            real = (f"a {op} b", {"a": RA, "b": RB}) if RA is not None else None
            suite.add(
                name,
                size,
                "bitplan",
                f"a {op} b",
                {"a": A, "b": B},
                int_model=(f"a {op} b", {"a": IA, "b": IB}),
                bitarray_=(f"a {op} b", {"a": BA, "b": BB}),
                lmcache=lm_key,
                lmcache_real=real,
                targets=targets,
            )
            suite.add(
                name,
                size,
                "bitplan.lmcache",
                f"a {op} b",
                {"a": LA, "b": LB},
                int_model=(f"a {op} b", {"a": IA, "b": IB}),
                bitarray_=(f"a {op} b", {"a": BA, "b": BB}),
                lmcache=lm_key,
                lmcache_real=real,
                note="info",
            )

        targets = (vs_bitarray(1.5 if big else 1 / 1.5),)
        if big:
            targets = (below(1.5),) + targets
        suite.add(
            "popcount",
            size,
            "bitplan",
            "a.popcount()",
            {"a": A},
            int_model=("a.popcount()", {"a": IA}),
            bitarray_=("a.count()", {"a": BA}),
            lmcache="popcount 262144" if big else None,
            lmcache_real=("a.popcount()", {"a": RA}) if RA is not None else None,
            targets=targets,
        )
        suite.add(
            "popcount",
            size,
            "bitplan.lmcache",
            "a.popcount()",
            {"a": LA},
            int_model=("a.popcount()", {"a": IA}),
            bitarray_=("a.count()", {"a": BA}),
            lmcache="popcount 262144" if big else None,
            lmcache_real=("a.popcount()", {"a": RA}) if RA is not None else None,
            note="info",
        )

        suite.add(
            "list set indices (50% set)",
            size,
            "bitplan",
            "a.get_indices_list()",
            {"a": A},
            int_model=("a.get_indices_list()", {"a": IA}),
            bitarray_=("list(a.search(1))", {"a": BA}),
            targets=(vs_bitarray(1.5 if big else 1 / 1.5),),
        )

        i = n // 2 + 3
        suite.add(
            "set(i)",
            size,
            "bitplan",
            "a.set(i)",
            {"a": A.copy(), "i": i},
            int_model=("a.set(i)", {"a": IntBitmap(IA.n, IA.v), "i": i}),
            bitarray_=("a[i] = 1", {"a": bitarray(BA), "i": i}),
            targets=(below(0.07),),
        )
        suite.add(
            "set(i)",
            size,
            "bitplan.lmcache",
            "a.set(i)",
            {"a": LA.copy(), "i": i},
            int_model=("a.set(i)", {"a": IntBitmap(IA.n, IA.v), "i": i}),
            bitarray_=("a[i] = 1", {"a": bitarray(BA), "i": i}),
            note="info",
        )


def bench_indices(suite: Suite) -> None:
    n = 262_144
    size = "131,072 of 262,144 set"
    mask = np.zeros(n, dtype=bool)
    mask[::2] = True
    bits = bits_from_mask(mask)
    A, LA, IA, BA = bits.as_bitplan, bits.as_lmcache, bits.as_int, bits.as_bitarray
    assert A.popcount() == 131_072
    expected = list(range(0, n, 2))
    assert A.get_indices_list() == LA.get_indices_list() == IA.get_indices_list() == list(BA.search(1)) == expected
    assert A.indices_array().dtype == np.int64 and A.indices_array().tolist() == expected

    int_case = ("a.get_indices_list()", {"a": IA})
    ba_case = ("list(a.search(1))", {"a": BA})
    lm_key = "get_indices_list 131072"
    RA = bits.as_real
    real = ("a.get_indices_list()", {"a": RA}) if RA is not None else None
    suite.add(
        "get_indices_list",
        size,
        "bitplan",
        "a.get_indices_list()",
        {"a": A},
        int_model=int_case,
        bitarray_=ba_case,
        lmcache=lm_key,
        lmcache_real=real,
        targets=(vs_lmcache(2),),
    )
    suite.add(
        "get_indices_list",
        size,
        "bitplan.lmcache",
        "a.get_indices_list()",
        {"a": LA},
        int_model=int_case,
        bitarray_=ba_case,
        lmcache=lm_key,
        lmcache_real=real,
        targets=(vs_lmcache(2),),
    )
    suite.add(
        "indices_array (int64)",
        size,
        "bitplan",
        "a.indices_array()",
        {"a": A},
        int_model=int_case,
        bitarray_=ba_case,
        lmcache=lm_key,
        lmcache_real=real,
        targets=(vs_lmcache(20),),
        note="baselines build a list",
    )


def real_fold_unfold_ranked(found: Any, chunks: int, ranks: int, windows: list[int]) -> tuple[int, Any]:
    """LMCache 0.5.6's flat fold and unfold (its ``bitmap_ops`` wrappers
    over its native kernels), composed as ``fold_unfold_ranked`` is."""
    hit = real_ops.highest_set_bit(real_ops.fold(found, chunks, ranks, windows)) + 1
    return hit, real_ops.unfold(hit, chunks, ranks, windows)


def bench_fold_unfold(suite: Suite) -> None:
    rng = rng_for(3)
    chunks, ranks, groups = 4096, 8, 8
    width = ranks * groups
    n = chunks * width
    size = f"{chunks:,} × {ranks} × {groups}"
    # (chunk, group, rank) of a missing key in the windowed case: group 1
    # (full) caps the hit at 3900, group 4 (window 128) at 3850, group 6
    # (window 1) rules out 3850 itself, group 7's gap is out of every window.
    window_gaps = [(3900, 1, 3), (3850, 4, 0), (3849, 6, 5), (1000, 7, 2)]
    for label, windows in (
        ("full attention", [-1] * groups),
        ("windows [-1×4, 128, 128, 1, 1]", [-1, -1, -1, -1, 128, 128, 1, 1]),
    ):
        # Dense: all ones but a few gaps in the second half, so the hit is long.
        mask = np.ones(n, dtype=bool)
        if label == "full attention":
            gaps = [(int(rng.integers(chunks // 2, chunks)), int(rng.integers(groups)), int(rng.integers(ranks)))
                    for _ in range(4)]
        else:
            gaps = window_gaps
        for chunk, group, rank in gaps:
            mask[chunk * width + group * ranks + rank] = False
        flat = bits_from_mask(mask)
        rows = [bits_from_mask(mask[k::width]) for k in range(width)]
        row_windows = [windows[k // ranks] for k in range(width)]

        F, LF, IF = flat.as_bitplan, flat.as_lmcache, flat.as_int
        R = [r.as_bitplan for r in rows]
        LR = [r.as_lmcache for r in rows]
        IR = [r.as_int for r in rows]

        # Every implementation gives the same hit and mask.
        hit, imask = int_fold_unfold_ranked(IF, chunks, ranks, windows)
        bp_hit, bp_mask = bitplan.fold_unfold_ranked(F, chunks, ranks, windows)
        lm_hit, lm_mask = lm_ops.fold_unfold_ranked(LF, chunks, ranks, windows)
        assert hit == bp_hit == lm_hit, (hit, bp_hit, lm_hit)
        assert lm_to_int(bp_mask) == lm_to_int(lm_mask) == imask.v
        ghit, gmask = int_fold_unfold_grouped(IR, row_windows)
        bp_ghit, bp_gmask = bitplan.fold_unfold_grouped(R, row_windows)
        lm_ghit, lm_gmask = lm_ops.fold_unfold_grouped(LR, row_windows)
        assert ghit == hit == bp_ghit == lm_ghit
        assert [m.v for m in gmask] == [lm_to_int(m) for m in bp_gmask] == [lm_to_int(m) for m in lm_gmask]

        ranked_int = (
            "fold_unfold_ranked(found, chunks, ranks, windows)",
            {
                "fold_unfold_ranked": int_fold_unfold_ranked,
                "found": IF,
                "chunks": chunks,
                "ranks": ranks,
                "windows": windows,
            },
        )
        real_ranked = real_grouped = None
        if real_ops is not None:
            RF, RR = flat.as_real, [r.as_real for r in rows]
            assert real_fold_unfold_ranked(RF, chunks, ranks, windows)[0] == hit
            assert real_ops.fold_unfold_grouped(RR, row_windows)[0] == hit
            real_ranked = (
                "fold_unfold_ranked(found, chunks, ranks, windows)",
                {
                    "fold_unfold_ranked": real_fold_unfold_ranked,
                    "found": RF,
                    "chunks": chunks,
                    "ranks": ranks,
                    "windows": windows,
                },
            )
            real_grouped = (
                "fold_unfold_grouped(rows, windows)",
                {"fold_unfold_grouped": real_ops.fold_unfold_grouped, "rows": RR, "windows": row_windows},
            )
        for impl, fn, found in (
            ("bitplan.lmcache", lm_ops.fold_unfold_ranked, LF),
            ("bitplan", bitplan.fold_unfold_ranked, F),
        ):
            suite.add(
                f"fold_unfold_ranked, {label}",
                size,
                impl,
                "fold_unfold_ranked(found, chunks, ranks, windows)",
                {"fold_unfold_ranked": fn, "found": found, "chunks": chunks, "ranks": ranks, "windows": windows},
                int_model=ranked_int,
                lmcache="fold_unfold_ranked 4096x8x8",
                lmcache_real=real_ranked,
                targets=(below(15.0),),
                note=f"hit {hit} of {chunks}",
            )
        grouped_int = (
            "fold_unfold_grouped(rows, windows)",
            {"fold_unfold_grouped": int_fold_unfold_grouped, "rows": IR, "windows": row_windows},
        )
        for impl, fn, rws in (
            ("bitplan.lmcache", lm_ops.fold_unfold_grouped, LR),
            ("bitplan", bitplan.fold_unfold_grouped, R),
        ):
            suite.add(
                f"fold_unfold_grouped, {label}",
                f"{width} rows × {chunks:,}",
                impl,
                "fold_unfold_grouped(rows, windows)",
                {"fold_unfold_grouped": fn, "rows": rws, "windows": row_windows},
                int_model=grouped_int,
                lmcache="fold_unfold_grouped 4096x64",
                lmcache_real=real_grouped,
                targets=(below(20.0),),
                note=f"hit {hit} of {chunks}",
            )


def bench_diagnostics(suite: Suite) -> None:
    """Floors of the call machinery and of CPython itself, to read the
    figures above against (no targets)."""
    rng = rng_for(4)
    small_a, small_b = random_bits(rng, 1024, 0.5), random_bits(rng, 1024, 0.5)
    big_a, big_b = random_bits(rng, 262_144, 0.5), random_bits(rng, 262_144, 0.5)
    bits = [random_bits(rng, 1024, d) for d in (0.3, 0.6, 0.9)]
    lookup = {i: b.as_lmcache for i, b in enumerate(bits)}
    keys = [f"key-{i}" for i in range(1024)]
    adapters = [lm_policy.AdapterDescriptor(i) for i in range(3)]
    a, b = small_a.as_bitplan, small_b.as_bitplan
    rows = [
        ("empty statement (timeit loop)", "—", "pass", {}),
        ("len(a), bitplan.Bitmap", "1,024 bits", "len(a)", {"a": a}),
        ("a.test(i), bitplan.Bitmap", "1,024 bits", "a.test(i)", {"a": a, "i": 5}),
        ("a.test(i), bitplan.lmcache", "1,024 bits", "a.test(i)", {"a": small_a.as_lmcache, "i": 5}),
        ("a[i], bitplan.Bitmap", "1,024 bits", "a[i]", {"a": a, "i": 5}),
        ("a.copy(), bitplan.Bitmap (allocation floor)", "1,024 bits", "a.copy()", {"a": a}),
        ("Bitmap(n), bitplan.Bitmap", "1,024 bits", "Bitmap(n)", {"Bitmap": bitplan.Bitmap, "n": 1024}),
        ("a &= b, bitplan.Bitmap (in place)", "1,024 bits", "a &= b", {"a": a.copy(), "b": b}),
        ("a.and_popcount(b), bitplan.Bitmap", "1,024 bits", "a.and_popcount(b)", {"a": a, "b": b}),
        ("a.copy(), bitplan.Bitmap", "262,144 bits", "a.copy()", {"a": big_a.as_bitplan}),
        ("a &= b, bitplan.Bitmap (in place)", "262,144 bits", "a &= b",
         {"a": big_a.as_bitplan, "b": big_b.as_bitplan}),
        ("a.and_popcount(b), bitplan.Bitmap", "262,144 bits", "a.and_popcount(b)",
         {"a": big_a.as_bitplan, "b": big_b.as_bitplan}),
        ("_native.lmcache.select_first_wins (no Python method)", "1,024 keys × 3",
         "select_first_wins(keys, lookup, adapters)",
         {"select_first_wins": bitplan._native.lmcache.select_first_wins, "keys": keys, "lookup": lookup,
          "adapters": adapters}),
        ("the same, keys as an int", "1,024 keys × 3", "select_first_wins(n, lookup, adapters)",
         {"select_first_wins": bitplan._native.lmcache.select_first_wins, "n": 1024, "lookup": lookup,
          "adapters": adapters}),
        ("list(range(0, n, 2)): CPython's floor for 131,072 new ints", "131,072 ints", "list(range(0, n, 2))",
         {"n": 262_144}),
        ("numpy int64 array .tolist()", "131,072 ints", "arr.tolist()",
         {"arr": np.arange(0, 262_144, 2, dtype=np.int64)}),
    ]
    # select_load_plan with the cheapest arguments: the key count as an int,
    # native descriptors, Pythonic bitmaps.
    bp_lookup = {i: b.as_bitplan for i, b in enumerate(bits)}
    rows.append((
        "bitplan.DefaultPrefetchPolicy, keys as an int, native descriptors", "1,024 keys × 3",
        "policy.select_load_plan(n, lookup, adapters)",
        {"policy": bitplan.DefaultPrefetchPolicy(), "n": 1024, "lookup": bp_lookup,
         "adapters": [bitplan.AdapterDescriptor(i) for i in range(3)]},
    ))
    rows.append((
        "3 × a.copy() into a dict (the plan's output objects)", "1,024 bits × 3",
        "{0: a.copy(), 1: b.copy(), 2: c.copy()}",
        {"a": bp_lookup[0], "b": bp_lookup[1], "c": bp_lookup[2]},
    ))
    # fold_unfold_grouped split into its input side (fold_grouped: 64 rows
    # borrowed, one bitmap out) and its output side (unfold_grouped: 64 new
    # row objects).
    chunks, width = 4096, 64
    row_windows = [[-1, -1, -1, -1, 128, 128, 1, 1][k // 8] for k in range(width)]
    grows = [bitplan.Bitmap(chunks, chunks) for _ in range(width)]
    rows += [
        ("fold_grouped(rows, windows), bitplan (input side)", "64 rows × 4,096", "fold_grouped(rows, windows)",
         {"fold_grouped": bitplan.fold_grouped, "rows": grows, "windows": row_windows}),
        ("unfold_grouped(hit, chunks, windows), bitplan (output side)", "64 rows × 4,096",
         "unfold_grouped(hit, chunks, windows)",
         {"unfold_grouped": bitplan.unfold_grouped, "hit": 3849, "chunks": chunks, "windows": row_windows}),
        ("[a.copy() for a in rows]: 64 new row objects", "64 rows × 4,096", "[a.copy() for a in rows]",
         {"rows": grows}),
    ]
    for item, size, stmt, env in rows:
        suite.add("diagnostic: " + item, size, "—", stmt, env, note="no target")


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def build_info() -> str:
    """The commit of the checkout and the age of the compiled module, so
    that a figure can be tied to the Rust code it measured."""
    so = bitplan._native.__file__
    mtime = datetime.datetime.fromtimestamp(os.path.getmtime(so), datetime.timezone.utc)
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        head = subprocess.run(
            ["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", here, "status", "--porcelain", "--", "../src", "../../bitmap-core", "../../prefetch-policy"],
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
        commit = f"{head}{' + uncommitted Rust changes' if dirty else ''}" if head else "unknown"
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    return f"checkout {commit}; `{os.path.basename(so)}` built {mtime:%Y-%m-%d %H:%M:%S} UTC"


def real_version() -> str:
    from importlib import metadata

    return metadata.version("lmcache")


def header(args: argparse.Namespace, timer: Timer) -> str:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    load = load_average()
    cmd = " ".join([os.path.basename(sys.executable)] + sys.argv)
    lines = [
        "# bitplan Python benchmarks (issue #14, \"Speed\")",
        "",
        f"- machine: {platform.platform()}, {cpu_model()}, {os.cpu_count()} logical CPUs, load average at start {load}",
        f"- date: {now}",
        f"- Python: {platform.python_implementation()} {sys.version.split()[0]}",
        f"- bitplan {bitplan.__version__}, kernel `{bitplan.active_kernel()}` (available: {', '.join(bitplan.available_kernels())});"
        f" bitarray {bitarray_version}; numpy {np.__version__}",
        f"- build: {build_info()}",
        f"- command: `{cmd}`",
        f"- method: `timeit.Timer(stmt, setup, timer={TIMERS[timer.clock].__module__}.{TIMERS[timer.clock].__name__},"
        f" globals=...)` ({timer.clock} clock), operands bound as locals in setup, loop count as `autorange`"
        f" (≥ {timer.min_time:g} s per repeat), {timer.repeat} repeats, **median** µs per call",
        "- `(×N)` after a baseline = baseline / bitplan (N > 1: bitplan faster). \"int model\" = pure Python over an"
        " `int`-backed bitmap (this script's `IntBitmap`, the seed's `select_load_plan` over it)."
        + (
            f" \"LMCache native\" = LMCache {real_version()}'s own `lmcache_native`, measured in this run"
            " (select_load_plan, which the release no longer has: issue #14's constants)."
            if real_native is not None
            else " \"LMCache native\" = constants from issue #14, not measured here (LMCache is not installed)."
        )
        + " \"(min)\" = bitplan's fastest repeat,"
        " for reading the noise; targets use the median.",
    ]
    return "\n".join(lines)




def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="CI smoke run: 3 repeats of >= 0.02 s")
    parser.add_argument("--repeat", type=int, help="repeats per statement (default 9, --quick 3)")
    parser.add_argument("--min-time", type=float, help="seconds per repeat at least (default 0.2, --quick 0.02)")
    parser.add_argument(
        "--timer",
        choices=sorted(TIMERS),
        default="wall",
        help="wall: time.perf_counter, timeit's default; cpu: time.thread_time, for a shared machine",
    )
    parser.add_argument("--filter", help="only items whose 'item size API' contains this (case-insensitive)")
    parser.add_argument("--json", metavar="FILE", help="also write every repeat's figures to FILE")
    parser.add_argument("--no-diagnostics", action="store_true", help="skip the call-floor rows")
    args = parser.parse_args()

    repeat = args.repeat or (3 if args.quick else 9)
    min_time = args.min_time or (0.02 if args.quick else 0.2)
    timer = Timer(min_time, repeat, args.timer)
    suite = Suite(timer, args.filter, LMCACHE_NATIVE_US)
    head = header(args, timer)
    bench_select_load_plan(suite)
    bench_binary_ops(suite)
    bench_indices(suite)
    bench_fold_unfold(suite)
    if not args.no_diagnostics:
        bench_diagnostics(suite)

    print(head)
    print()
    print(table(suite.rows))
    print()
    outcomes = [ok for row in suite.rows for ok in row.outcomes]
    failed = [
        f"{row.item} [{row.size}, {row.impl}] {t.label}: {t.margin(row)}"
        for row in suite.rows
        for t, ok in zip(row.targets, row.outcomes)
        if not ok
    ]
    for line in failed:
        print(f"- FAIL: {line}")
    print(f"\n**{sum(outcomes)} of {len(outcomes)} targets passed.**")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": head, "rows": to_json(suite.rows)}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
