"""Runs bitplan's benchmark suite and writes its results into docs/perf/bench-report.md.

Called by `scripts/bench-report` (see `scripts/bench-report --help`). Python 3.11
standard library only; the charts are SVG written by hand.

Steps:

1. Describe the machine: CPU model, cores, caches, our kernels (from
   `cargo run --example kernels`), compiler, commit, load average.
2. Run `cargo bench -p bitplan-benches -- --quick --noplot [FILTER]` with
   `CRITERION_HOME` pointing at a directory of its own, emptied first, so the
   report only ever holds results from this one run.
3. Read every benchmark's `new/benchmark.json` (group, function, value,
   throughput) and `new/estimates.json` (median time).
4. Write, between `<!-- bench-report:begin -->` and `<!-- bench-report:end -->`
   in the output file: the machine, the date, the exact command, the target
   checks, and per benchmark group a table of medians, a table of ratios to
   each baseline measured in the same run, and a chart (`docs/charts/*.svg`,
   linked relative to the output file).

docs/PERFORMANCE.md quotes the current figures and links this report; it is
not rewritten.

Benchmarks are named `op/implementation/size` (criterion's
`group/function/value`); see benches/src/lib.rs.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from xml.sax.saxutils import escape

BEGIN_MARKER = "<!-- bench-report:begin -->"
END_MARKER = "<!-- bench-report:end -->"

BENCH_PACKAGE = "bitplan-benches"

# Implementations that are not ours: the ratio tables compare our headline
# implementation against each of these. Order is the table order.
BASELINES = [
    "scalar_loop",
    "copy",
    "copy_fresh",
    "bitmap_materialized",
    "fixedbitset",
    "bitvec",
    "roaring",
    "seed_literal",
    "seed_literal_fixedbitset",
    "lmcache_loop",
]

# Kernel names in bitmap-core's order (slowest first).
KERNEL_ORDER = ["scalar", "portable", "avx2", "avx512", "neon"]

# Our implementations that are not kernels, in table order. Anything unknown
# sorts after these (and before the baselines).
OURS_ORDER = ["dispatched", "bitmap", "into", "default", "default_into", "auto", "sequential", "parallel"]

# The implementation a group's ratio table is about, first present wins: the
# API users call, else the plan policy, else the dispatched kernel call, else
# the active kernel (filled in at run time).
HEADLINE_ORDER = ["bitmap", "default", "dispatched"]

# Group descriptions, shown above each group's tables. Groups not listed get
# none (the tables still appear).
GROUP_NOTES = {
    "popcount": "Number of set bits. Throughput: bytes of the bitmap.",
    "and_assign": "In-place `a &= b`. Throughput: bytes of one bitmap.",
    "or_assign": "In-place `a |= b`. Throughput: bytes of one bitmap.",
    "xor_assign": "In-place `a ^= b`. Throughput: bytes of one bitmap.",
    "and_not_assign": "In-place `a &= !b` (set difference). Throughput: bytes of one bitmap.",
    "not_assign": "In-place complement. Throughput: bytes of the bitmap.",
    "and_popcount": "`popcount(a & b)` without materialising `a & b`; `bitmap_materialized` is "
    "`(&a & &b).popcount()`. Throughput: bytes of one bitmap.",
    "union_many": "Union of 8 bitmaps into a ninth. Throughput: bytes of the 8 sources.",
    "ones_1pct": "Iterating over the set bits (summing the indices) at 1% density. Throughput: bytes of the bitmap.",
    "ones_50pct": "Iterating over the set bits at 50% density (up to 4 MiB: beyond, iteration is bound by the "
    "per-index work, not memory).",
    "ones_99pct": "Iterating over the set bits at 99% density (up to 4 MiB).",
    "plan": "The `default` policy (`select_load_plan`, allocating; `default_into`: `select_load_plan_into` a "
    "reused plan; `sequential` and `parallel`: the same with that `Parallelism`) against the seed's algorithm "
    "written literally over our `Bitmap` and over `fixedbitset`, `copy` (the lookups copied into as many "
    "reused output buffers) and `copy_fresh` (into newly allocated ones, as an allocating plan returns). Each adapter holds a random 60% of the keys. Throughput: bytes of all lookup bitmaps.",
    "plan_replicated": "As `plan`, with every adapter holding every key (the first adapter gets everything).",
    "plan_kernel": "The plan's core, `Kernel::first_wins` over word slices into reused outputs, per kernel. "
    "Throughput: bytes of all lookup bitmaps.",
    "balanced_kernel/class_counts": "The `balanced` policy's counting pass: `Kernel::class_counts`, the number "
    "of keys each set of adapters holds (every class of 3 lookups) in one pass, per kernel. Throughput: bytes of "
    "all lookup bitmaps.",
    "balanced_kernel/split_by_tables": "The `balanced` policy's routing pass: `Kernel::split_by_tables`, each "
    "adapter's keys chosen by a truth table over the other adapters' bits, per kernel. Throughput: bytes of all "
    "lookup bitmaps.",
    "fold_unfold": "Prefix hit and its key mask over the flat chunk-major layout, `C x R x G` with the "
    "windows named in the value (`full`: all full attention; `mixed`: [-1 ×4, 128, 128, 1, 1] for G = 8, "
    "[-1, -1, 8, 32, 1] for G = 5; `gap0`: a Mamba group misses chunk 0, so no prefix is skipped): "
    "`fold_unfold_ranked` (`bitmap`, allocating), `fold_unfold_ranked_into` (`into`, reused workspace and mask) "
    "against `lmcache_loop`, LMCache's per-bit loop (for each group, for each length, test R bits). "
    "Throughput: bytes of `found`.",
    "fold_unfold_grouped": "As `fold_unfold`, over the same cells as G·R rows paired with windows "
    "(`fold_unfold_grouped`, `fold_unfold_grouped_into`).",
    "layout/split_rows": "`layout::split_rows_into`: a flat interleaved bitmap of 262,144 bits into its rows "
    "(64 rows: 64×64 transposes; 8 rows: strided gather), against `copy` of the same 32 KiB.",
    "layout/join_rows": "`layout::join_rows_into`, the inverse of `layout/split_rows`.",
    "layout/deposit_rows": "`layout::deposit_rows_into`: PDEP of a flat bitmap into the set positions of 64 "
    "mask rows of 4,096 bits (`64x4096`: random, half set; `-prefix`: each row a prefix, as a prefix plan's "
    "cells are), against `copy` of 32 KiB.",
    "layout/extract_rows": "`layout::extract_rows_into`: PEXT of 64 rows at the set positions of their masks.",
    "grid_plan": "The grid plan (`plan_grid_into` a reused `GridPlan`, LMCache's newer `plan_load`) at 4,096 "
    "chunks × 64 rows × 3 tiers (L1 0 and L2 0 a random 60% of the cells each, L2 1 all of them): `prefix` "
    "(all rows full attention), `prefix_windows` (windows `[-1 ×4, 128, 128, 1, 1]` over the rows) and "
    "`full`; against the flat `default` plan of the same bits as 262,144 keys × 3 adapters (`default_into`: "
    "into a reused plan, sequential; `default`: allocating). Throughput: bytes of the three inputs.",
    "cutover/popcount": "Tiny inputs: the dispatched `kernel::popcount` (scalar loop inline up to `SMALL_WORDS` "
    "words, the active kernel above) against each kernel called directly. Size in words.",
    "cutover/or_assign": "Tiny inputs: the dispatched `kernel::or_assign` against each kernel called directly. "
    "Size in words.",
}


# ---------------------------------------------------------------------------
# Values: sizes, word counts, keys x adapters
# ---------------------------------------------------------------------------

SIZE_RE = re.compile(r"^(\d+)(B|KiB|MiB|GiB)$")
PLAN_RE = re.compile(r"^(\d+)x(\d+)$")
UNIT_BYTES = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def parse_value(value: str) -> tuple[str, float, int | None]:
    """(axis kind, numeric x, adapters or None) of a benchmark value string."""
    if m := SIZE_RE.match(value):
        return "bytes", float(int(m.group(1)) * UNIT_BYTES[m.group(2)]), None
    if m := PLAN_RE.match(value):
        return "keys", float(m.group(1)), int(m.group(2))
    if value.isdigit():
        return "words", float(value), None
    return "other", math.nan, None


def short_count(n: float) -> str:
    """1024 -> 1Ki, 4194304 -> 4Mi, 100 -> 100."""
    n = int(n)
    for unit, scale in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def short_bytes(n: float) -> str:
    n = int(n)
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


# ---------------------------------------------------------------------------
# Reading criterion's output
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class Result:
    group: str
    function: str
    value: str
    median_ns: float
    throughput_bytes: int | None

    @property
    def gbps(self) -> float | None:
        # bytes per nanosecond is GB/s (decimal).
        if self.throughput_bytes is None or self.median_ns <= 0:
            return None
        return self.throughput_bytes / self.median_ns


def read_results(criterion_dir: Path) -> list[Result]:
    results = []
    for bench_json in sorted(criterion_dir.rglob("new/benchmark.json")):
        estimates_json = bench_json.with_name("estimates.json")
        if not estimates_json.exists():
            continue
        bench = json.loads(bench_json.read_text())
        estimates = json.loads(estimates_json.read_text())
        throughput = bench.get("throughput") or {}
        throughput_bytes = throughput.get("Bytes") or throughput.get("BytesDecimal")
        results.append(
            Result(
                group=bench["group_id"],
                function=bench.get("function_id") or "",
                value=bench.get("value_str") or "",
                median_ns=float(estimates["median"]["point_estimate"]),
                throughput_bytes=throughput_bytes,
            )
        )
    return results


class Results:
    """The results of one run, indexed by (group, function, value)."""

    def __init__(self, results: list[Result]):
        self.all = results
        self.by_id = {(r.group, r.function, r.value): r for r in results}
        self.groups: dict[str, list[Result]] = defaultdict(list)
        for r in results:
            self.groups[r.group].append(r)

    def get(self, group: str, function: str, value: str) -> Result | None:
        return self.by_id.get((group, function, value))


# ---------------------------------------------------------------------------
# Machine description
# ---------------------------------------------------------------------------


def run_text(args: list[str], cwd: Path | None = None) -> str | None:
    try:
        return subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def caches() -> str:
    """L1d/L2/L3 sizes, from lscpu or sysfs."""
    text = run_text(["lscpu"])
    found = []
    if text:
        for line in text.splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("L1d cache", "L2 cache", "L3 cache"):
                found.append(f"{key.strip().replace(' cache', '')} {value.strip()}")
    if found:
        return ", ".join(found)
    sysfs = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(sysfs.glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        if kind != "Instruction":
            found.append(f"L{level}{'d' if kind == 'Data' else ''} {size} (per core)")
    return ", ".join(found) or "unknown"


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


@dataclasses.dataclass
class Machine:
    cpu: str
    cores: int
    caches: str
    os: str
    rustc: str
    commit: str
    kernels: dict[str, str]


def describe_machine(root: Path, env: dict[str, str], build: bool) -> Machine:
    kernels: dict[str, str] = {}
    if build:
        # The example prints `key: value` lines: available, best, active, small_words.
        proc = subprocess.run(
            ["cargo", "run", "--quiet", "--release", "-p", BENCH_PACKAGE, "--example", "kernels"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr)
            raise SystemExit("bench-report: could not build or run the `kernels` example")
        for line in proc.stdout.splitlines():
            key, _, value = line.partition(":")
            kernels[key.strip()] = value.strip()
    commit = run_text(["git", "rev-parse", "--short=12", "HEAD"], cwd=root) or "unknown"
    if run_text(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root):
        commit += " (with uncommitted changes)"
    return Machine(
        cpu=cpu_model(),
        cores=cpu_count(),
        caches=caches(),
        os=f"{platform.system()} {platform.release()}",
        rustc=run_text(["rustc", "--version"], cwd=root) or "unknown",
        commit=commit,
        kernels=kernels,
    )


# ---------------------------------------------------------------------------
# Targets: the performance requirements, checked from this run
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class Target:
    """A requirement on this run's medians.

    kind "speedup": baseline / ours >= threshold, at every value.
    kind "within": ours / baseline <= threshold, at every value.
    kind "max_ns": ours <= threshold nanoseconds, at every value.

    `noise` is for requirements that compare code paths which may be
    identical at some sizes ("never slower"): a ratio short of the threshold
    by less than that fraction is reported as "within noise" rather than as
    a failure, since two timings of the same code differ by that much on a
    busy machine. The measured ratio is always shown.
    """

    description: str
    group: str
    ours: str
    values: list[str]
    kind: str
    threshold: float
    baseline: str | None = None
    noise: float = 0.0

    def status(self, ok: bool, close: bool) -> str:
        if ok:
            return "pass"
        return "within noise" if close else "**FAIL**"

    def check(self, results: Results) -> list[tuple[str, str, str]]:
        """(value, measured, status) per value."""
        rows = []
        for value in self.values:
            mine = results.get(self.group, self.ours, value)
            other = results.get(self.group, self.baseline, value) if self.baseline else None
            if mine is None or (self.baseline and other is None):
                missing = [
                    f"`{self.group}/{name}/{value}`"
                    for name, r in ((self.ours, mine), (self.baseline, other))
                    if name and r is None
                ]
                rows.append((value, "not measured: " + ", ".join(missing), "MISSING"))
                continue
            if self.kind == "speedup":
                ratio = other.median_ns / mine.median_ns
                status = self.status(ratio >= self.threshold, ratio >= self.threshold * (1 - self.noise))
                rows.append((value, f"{ratio:.2f}×", status))
            elif self.kind == "within":
                ratio = mine.median_ns / other.median_ns
                status = self.status(ratio <= self.threshold, ratio <= self.threshold * (1 + self.noise))
                rows.append((value, f"{ratio:.2f}× the time", status))
            elif self.kind == "max_ns":
                ns = mine.median_ns
                status = self.status(ns <= self.threshold, ns <= self.threshold * (1 + self.noise))
                rows.append((value, format_time(ns), status))
            else:
                raise ValueError(self.kind)
        return rows


SIZES_L1_L2 = ["8KiB", "128KiB"]
PLAN_KEYS = [1024, 65536, 262144, 1048576, 4194304, 16777216, 67108864]


def targets() -> list[Target]:
    t = [
        Target("popcount ≥ 3× fixedbitset `count_ones(..)`", "popcount", "bitmap", SIZES_L1_L2, "speedup", 3.0,
               "fixedbitset"),
        Target("popcount ≥ 1.5× `iter().map(|w| w.count_ones() as u64).sum()`", "popcount", "bitmap", SIZES_L1_L2,
               "speedup", 1.5, "scalar_loop"),
    ]
    for group, method in [
        ("and_assign", "intersect_with"),
        ("or_assign", "union_with"),
        ("xor_assign", "symmetric_difference_with"),
        ("and_not_assign", "difference_with"),
    ]:
        t.append(Target(f"`{group}` ≥ 1.2× fixedbitset `{method}`", group, "bitmap", SIZES_L1_L2, "speedup", 1.2,
                        "fixedbitset"))
    t += [
        Target("`and_popcount` ≥ 2× `(&a & &b).popcount()`", "and_popcount", "bitmap", SIZES_L1_L2, "speedup", 2.0,
               "bitmap_materialized"),
        Target("in-place OR at 64 MiB within 1.25× of a copy of the same bytes", "or_assign", "bitmap", ["64MiB"],
               "within", 1.25, "copy"),
        Target("plan 262,144 keys × 3 adapters ≥ 5× the seed's algorithm over `Bitmap` (allocating)", "plan",
               "default", ["262144x3"], "speedup", 5.0, "seed_literal"),
        Target("plan 262,144 keys × 3 adapters ≥ 5× the seed's algorithm over `Bitmap` (reused plan)", "plan",
               "default_into", ["262144x3"], "speedup", 5.0, "seed_literal"),
        Target("plan 1,024 × 3 < 250 ns, allocating (`select_load_plan`)", "plan", "default", ["1024x3"], "max_ns",
               250.0),
        Target("plan 1,024 × 3 < 250 ns, reusing the output (`select_load_plan_into`)", "plan", "default_into",
               ["1024x3"], "max_ns", 250.0),
        Target("plan 4,194,304 × 3 within 1.5× of copying the 3 inputs into 3 outputs (reused plan, "
               "like the copy's reused buffers)", "plan", "default_into", ["4194304x3"], "within", 1.5, "copy"),
        Target("plan 4,194,304 × 3 within 1.5× of copying the 3 inputs into 3 new outputs (allocating, like "
               "`copy_fresh`)", "plan", "default", ["4194304x3"], "within", 1.5, "copy_fresh"),
        Target("plan 67,108,864 × 3: parallel ≥ 1.4× sequential", "plan", "parallel", ["67108864x3"], "speedup",
               1.4, "sequential"),
        Target("plan: `Auto` parallelism (`default_into`) never slower than `sequential`, 3 adapters "
               "(5% noise band)", "plan", "default_into", [f"{k}x3" for k in PLAN_KEYS], "speedup", 1.0,
               "sequential", noise=0.05),
        Target("`balanced` policy 262,144 × 3 within 2.5× the default plan", "plan", "balanced", ["262144x3"],
               "within", 2.5, "default"),
        Target("fold_unfold_ranked 4,096 × 8 × 8 all full ≥ 50× LMCache's per-bit loop", "fold_unfold", "bitmap",
               ["4096x8x8-full"], "speedup", 50.0, "lmcache_loop"),
        Target("fold_unfold_ranked 4,096 × 8 × 8 mixed windows ≥ 50× LMCache's per-bit loop", "fold_unfold",
               "bitmap", ["4096x8x8-mixed", "4096x8x8-mixed-gap0"], "speedup", 50.0, "lmcache_loop"),
        Target("fold_unfold_ranked 4,096 × 8 × 8 < 10 µs", "fold_unfold", "bitmap",
               ["4096x8x8-full", "4096x8x8-mixed", "4096x8x8-mixed-gap0"], "max_ns", 10_000.0),
        Target("fold_unfold_ranked 300 × 4 × 5 < 1 µs", "fold_unfold", "bitmap", ["300x4x5-mixed"], "max_ns", 1000.0),
    ]
    for group in ["layout/split_rows", "layout/join_rows"]:
        t.append(Target(f"`{group}` at 262,144 bits within 3× of a copy", group, "bitmap", ["64x4096", "8x32768"],
                        "within", 3.0, "copy"))
    for group in ["layout/deposit_rows", "layout/extract_rows"]:
        t.append(Target(f"`{group}` at 262,144 bits within 3× of a copy", group, "bitmap",
                        ["64x4096", "64x4096-prefix"], "within", 3.0, "copy"))
    for fetching in ["prefix", "prefix_windows", "full"]:
        t.append(Target(f"grid plan (`{fetching}`) 4,096 × 64 × 3 within 3× the flat `default` plan of the same "
                        "262,144 × 3 bits (both into reused plans)", "grid_plan", fetching, ["262144x3"], "within",
                        3.0, "default_into"))
    # Issue #12: the AVX-512 kernel against the AVX2 kernel in the same run.
    # Only a CPU with AVX-512 measures them; elsewhere they are listed as not
    # measured.
    t += [
        Target("`popcount`: `avx512` ≥ 1.8× `avx2`", "popcount", "avx512", ["8KiB"], "speedup", 1.8, "avx2"),
        Target("`popcount`: `avx512` ≥ 1.4× `avx2`", "popcount", "avx512", ["128KiB"], "speedup", 1.4, "avx2"),
        Target("`and_popcount`: `avx512` ≥ 1.25× `avx2`", "and_popcount", "avx512", ["8KiB"], "speedup", 1.25,
               "avx2"),
        Target("`class_counts` of 3 inputs: `avx512` ≥ 1.5× `avx2`", "balanced_kernel/class_counts", "avx512",
               ["262144x3"], "speedup", 1.5, "avx2"),
    ]
    sizes = ["128B", "8KiB", "128KiB", "4MiB", "64MiB"]
    plan_values = [f"{k}x3" for k in (1024, 65536, 262144, 4194304, 67108864)]
    for group, values in [
        ("popcount", sizes), ("and_popcount", sizes), ("and_assign", sizes), ("or_assign", sizes),
        ("xor_assign", sizes), ("and_not_assign", sizes), ("not_assign", sizes), ("union_many", sizes),
        ("plan_kernel", plan_values), ("balanced_kernel/class_counts", plan_values),
        ("balanced_kernel/split_by_tables", plan_values),
    ]:
        t.append(Target(f"`{group}`: `avx512` no more than 3% slower than `avx2`", group, "avx512", values,
                        "within", 1.03, "avx2"))
    return t


# ---------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------


def cell_text(text: str) -> str:
    """Text for a Markdown table cell: a `|`, even inside a code span, would end the cell."""
    return text.replace("|", "\\|")


def format_time(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def format_gbps(gbps: float | None) -> str:
    if gbps is None:
        return "–"
    return f"{gbps:.3g}" if gbps < 1000 else f"{gbps:.0f}"


def implementation_key(name: str, kernels: list[str]) -> tuple[int, int, str]:
    if name in kernels or name in KERNEL_ORDER:
        order = KERNEL_ORDER.index(name) if name in KERNEL_ORDER else len(KERNEL_ORDER)
        return (0, -order, name)  # fastest kernel first
    if name in OURS_ORDER:
        return (1, OURS_ORDER.index(name), name)
    if name in BASELINES:
        return (3, BASELINES.index(name), name)
    return (2, 0, name)


def split_group(results: list[Result]) -> dict[int | None, list[Result]]:
    """Plan groups hold several adapter counts; each gets its own table and chart."""
    parts: dict[int | None, list[Result]] = defaultdict(list)
    for r in results:
        parts[parse_value(r.value)[2]].append(r)
    return dict(sorted(parts.items(), key=lambda kv: kv[0] or 0))


def value_sort_key(value: str) -> tuple[float, str]:
    x = parse_value(value)[1]
    return (x if not math.isnan(x) else math.inf, value)


def value_heading(value: str) -> str:
    kind, x, _ = parse_value(value)
    if kind == "bytes":
        return short_bytes(x)
    if kind == "keys":
        return f"{short_count(x)} keys"
    if kind == "words":
        return f"{int(x)} w"
    return value


def headline(functions: set[str], machine: Machine) -> str | None:
    active = machine.kernels.get("active")
    for name in [*HEADLINE_ORDER, active]:
        if name and name in functions:
            return name
    return None


def fastest_kernels(results: Results, machine: Machine) -> list[str]:
    """A table answering "which kernel is fastest for which operation and size"."""
    kernels = machine.kernels.get("available", "").split()
    rows = []
    for group in sorted(results.groups, key=group_sort_key):
        for adapters, part in split_group(results.groups[group]).items():
            best: dict[str, Result] = {}
            for r in part:
                if r.function in kernels and (r.value not in best or r.median_ns < best[r.value].median_ns):
                    best[r.value] = r
            if not best:
                continue
            label = f"`{group}`" + (f" ({adapters} adapter{'s' if adapters != 1 else ''})" if adapters else "")
            rows.append((label, best))
    if not rows:
        return []
    out = [
        "### Fastest kernel",
        "",
        "The fastest of our kernels for each operation and size (GB/s; time per call for the cut-over groups).",
        "",
    ]
    # One table per kind of axis, so columns line up.
    by_kind: dict[str, list[tuple[str, dict[str, Result]]]] = defaultdict(list)
    for label, best in rows:
        by_kind[parse_value(next(iter(best)))[0]].append((label, best))
    for kind, kind_rows in by_kind.items():
        # Columns by heading ("4Mi keys"), so plans of every adapter count share them.
        headings: dict[str, float] = {}
        for _, best in kind_rows:
            for v in best:
                headings[value_heading(v)] = parse_value(v)[1]
        columns_in_order = sorted(headings, key=headings.__getitem__)
        out.append("| operation | " + " | ".join(columns_in_order) + " |")
        out.append("|---|" + "---|" * len(columns_in_order))
        for label, best in kind_rows:
            by_heading = {value_heading(v): r for v, r in best.items()}
            cells = []
            for heading in columns_in_order:
                r = by_heading.get(heading)
                if r is None:
                    cells.append("")
                elif kind == "words" or r.gbps is None:
                    cells.append(f"`{r.function}` {format_time(r.median_ns)}")
                else:
                    cells.append(f"`{r.function}` {format_gbps(r.gbps)}")
            out.append(f"| {label} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def parallel_crossover(results: list[Result]) -> list[str]:
    """Where forced `parallel` planning starts to beat `sequential`, per adapter count."""
    lines = []
    for adapters, part in split_group(results).items():
        cell = {(r.function, r.value): r for r in part}
        values = sorted({r.value for r in part}, key=value_sort_key)
        ratios = []
        for v in values:
            seq, par = cell.get(("sequential", v)), cell.get(("parallel", v))
            if seq and par:
                ratios.append((v, seq.median_ns / par.median_ns))
        if not ratios:
            continue
        # The smallest size from which parallel is at least as fast at every larger size.
        first = next((v for i, (v, _) in enumerate(ratios) if all(r >= 1.0 for _, r in ratios[i:])), None)
        listed = ", ".join(f"{value_heading(v)} {r:.2f}×" for v, r in ratios)
        where = f"from {value_heading(first)}" if first else "at no measured size"
        lines.append(f"- {adapters} adapter{'s' if adapters != 1 else ''}: parallel pays {where} (sequential ÷ parallel time: {listed})")
    if lines:
        lines = [
            "Parallel crossover (forced `Parallelism::Parallel` against `Sequential`; `Auto` should switch "
            "where parallel starts to pay, `PARALLEL_THRESHOLD_WORDS` × 64 keys):",
            "",
            *lines,
            "",
        ]
    return lines


def group_tables(group: str, results: list[Result], machine: Machine, chart_link: str | None) -> list[str]:
    kernels = machine.kernels.get("available", "").split()
    values = sorted({r.value for r in results}, key=value_sort_key)
    functions = sorted({r.function for r in results}, key=lambda f: implementation_key(f, kernels))
    cell = {(r.function, r.value): r for r in results}
    out = []
    if chart_link:
        out += [f"![{group}: GB/s by size]({chart_link})", ""]

    # Medians. The fastest of our implementations per column is bold.
    ours = [f for f in functions if f not in BASELINES]
    fastest = {}
    for v in values:
        timed = [(cell[(f, v)].median_ns, f) for f in ours if (f, v) in cell]
        if timed:
            fastest[v] = min(timed)[1]
    out.append("| implementation | " + " | ".join(value_heading(v) for v in values) + " |")
    out.append("|---|" + "---:|" * len(values))
    for f in functions:
        row = []
        for v in values:
            r = cell.get((f, v))
            if r is None:
                row.append("")
                continue
            text = f"{format_time(r.median_ns)} · {format_gbps(r.gbps)}"
            row.append(f"**{text}**" if fastest.get(v) == f else text)
        name = f"`{f}`" + (" (baseline)" if f in BASELINES else "")
        out.append(f"| {name} | " + " | ".join(row) + " |")
    out.append("")
    out.append("Cells: median time · GB/s. Bold: the fastest of ours at that size.")
    out.append("")

    # Ratios of the headline implementation to each baseline.
    lead = headline(set(functions), machine)
    baselines = [f for f in functions if f in BASELINES]
    if lead and baselines:
        out.append(f"Speed-up of `{lead}` over each baseline (baseline time ÷ `{lead}` time; above 1 is faster):")
        out.append("")
        out.append("| baseline | " + " | ".join(value_heading(v) for v in values) + " |")
        out.append("|---|" + "---:|" * len(values))
        for b in baselines:
            row = []
            for v in values:
                mine, other = cell.get((lead, v)), cell.get((b, v))
                row.append(f"{other.median_ns / mine.median_ns:.2f}×" if mine and other else "")
            out.append(f"| `{b}` | " + " | ".join(row) + " |")
        out.append("")
    return out


# ---------------------------------------------------------------------------
# SVG charts
# ---------------------------------------------------------------------------

# One colour per implementation in every chart, so a line is recognisable
# from chart to chart: our kernels and APIs in strong colours (Okabe–Ito, which
# stay distinct for colour-blind readers), baselines in the rest (and dashed).
COLOURS = {
    "avx2": "#0072B2",
    "avx512": "#332288",
    "neon": "#0072B2",
    "portable": "#009E73",
    "scalar": "#56B4E9",
    "bitmap": "#D55E00",
    "dispatched": "#D55E00",
    "default": "#D55E00",
    "default_into": "#CC79A7",
    "auto": "#0072B2",
    "sequential": "#009E73",
    "parallel": "#E69F00",
    "balanced": "#56B4E9",
    "scalar_loop": "#E69F00",
    "copy": "#000000",
    "copy_fresh": "#666666",
    "bitmap_materialized": "#CC79A7",
    "fixedbitset": "#882255",
    "bitvec": "#8C6D31",
    "roaring": "#44AA99",
    "seed_literal": "#882255",
    "seed_literal_fixedbitset": "#8C6D31",
}
PALETTE = ["#332288", "#117733", "#999933", "#AA4499", "#661100", "#6699CC", "#888888"]


def colour_of(name: str, taken: set[str]) -> str:
    colour = COLOURS.get(name)
    if colour is None or colour in taken:
        colour = next((c for c in [*COLOURS.values(), *PALETTE] if c not in taken), "#888888")
    taken.add(colour)
    return colour


def nice_log_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 ticks between lo and hi (positive), thinned to at most ~8."""
    ticks: list[float] = []
    for mantissas in ((1, 2, 5), (1, 2, 3, 5, 7)):
        ticks = [
            m * 10.0**exp
            for exp in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
            for m in mantissas
            if lo <= m * 10.0**exp <= hi
        ]
        if len(ticks) >= 4:
            break
    for keep in ((1, 3), (1,)):
        if len(ticks) <= 8:
            break
        ticks = [t for t in ticks if round(t / 10 ** math.floor(math.log10(t))) in keep] or ticks
    return ticks


def tick_label(v: float) -> str:
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 1:
        return f"{v:g}"
    return f"{v:.3g}"


def svg_chart(
    title: str,
    series: dict[str, list[tuple[float, float]]],
    x_labels: dict[float, str],
    x_title: str,
    y_title: str,
    baselines: set[str],
) -> str:
    """A log-log line chart: one line per series, legend on the right."""
    width, height = 820, 460
    left, right, top, bottom = 78, 210, 48, 62
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = sorted({x for pts in series.values() for x, _ in pts})
    ys = [y for pts in series.values() for _, y in pts if y > 0]
    if not xs or not ys:
        return ""
    x_lo, x_hi = math.log2(xs[0]), math.log2(xs[-1])
    if x_hi == x_lo:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    y_lo, y_hi = math.log10(min(ys)), math.log10(max(ys))
    pad = max(0.08 * (y_hi - y_lo), 0.1)
    y_lo, y_hi = y_lo - pad, y_hi + pad

    def px(x: float) -> float:
        return left + (math.log2(x) - x_lo) / (x_hi - x_lo) * plot_w

    def py(y: float) -> float:
        return top + plot_h - (math.log10(y) - y_lo) / (y_hi - y_lo) * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="13">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{left + plot_w / 2:.1f}" y="26" text-anchor="middle" font-size="16" '
        f'font-weight="bold">{escape(title)}</text>',
    ]
    # Grid and y ticks.
    for t in nice_log_ticks(10**y_lo, 10**y_hi):
        y = py(t)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#e3e3e3"/>')
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{tick_label(t)}</text>')
    # x ticks at each measured value.
    for x in xs:
        X = px(x)
        parts.append(f'<line x1="{X:.1f}" y1="{top}" x2="{X:.1f}" y2="{top + plot_h}" stroke="#f0f0f0"/>')
        parts.append(f'<line x1="{X:.1f}" y1="{top + plot_h}" x2="{X:.1f}" y2="{top + plot_h + 5}" stroke="#444"/>')
        parts.append(
            f'<text x="{X:.1f}" y="{top + plot_h + 20}" text-anchor="middle">{escape(x_labels.get(x, str(x)))}</text>'
        )
    # Axes and titles.
    parts.append(
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#444" stroke-width="1"/>'
    )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 16}" text-anchor="middle">{escape(x_title)}</text>'
    )
    parts.append(
        f'<text transform="translate(20 {top + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle">'
        f"{escape(y_title)}</text>"
    )
    # Series, ours solid and thick, baselines dashed.
    legend_y = top + 6
    taken: set[str] = set()
    for name, pts in series.items():
        colour = colour_of(name, taken)
        dashed = name in baselines
        style = f'stroke="{colour}" stroke-width="{1.8 if dashed else 2.6}" fill="none"' + (
            ' stroke-dasharray="7 4"' if dashed else ""
        )
        pts = sorted(p for p in pts if p[1] > 0)
        if len(pts) > 1:
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
            parts.append(f'<polyline points="{path}" {style}/>')
        for x, y in pts:
            if dashed:
                parts.append(
                    f'<rect x="{px(x) - 3.5:.1f}" y="{py(y) - 3.5:.1f}" width="7" height="7" fill="#fff" '
                    f'stroke="{colour}" stroke-width="1.6"/>'
                )
            else:
                parts.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.8" fill="{colour}"/>')
        lx = left + plot_w + 18
        parts.append(f'<line x1="{lx}" y1="{legend_y}" x2="{lx + 28}" y2="{legend_y}" {style}/>')
        parts.append(f'<text x="{lx + 36}" y="{legend_y + 4.5}">{escape(name)}</text>')
        legend_y += 21
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def chart_for(
    group: str, adapters: int | None, results: list[Result], machine: Machine
) -> tuple[str, str] | None:
    """(file name, SVG) of a group's chart, or None if it has nothing to plot."""
    kernels = machine.kernels.get("available", "").split()
    kind = parse_value(results[0].value)[0]
    if kind == "other":
        return None
    by_time = kind == "words"  # cut-over: tiny inputs read better as time per call
    series: dict[str, list[tuple[float, float]]] = {}
    x_labels: dict[float, str] = {}
    for f in sorted({r.function for r in results}, key=lambda f: implementation_key(f, kernels)):
        pts = []
        for r in results:
            if r.function != f:
                continue
            x = parse_value(r.value)[1]
            y = r.median_ns if by_time else r.gbps
            if y is None:
                continue
            pts.append((x, y))
            x_labels[x] = {"bytes": short_bytes(x), "keys": short_count(x), "words": str(int(x))}[kind]
        if pts:
            series[f] = pts
    if not series:
        return None
    name = group.replace("/", "-") + (f"-{adapters}adapters" if adapters else "")
    what = f"{group}" + (f", {adapters} adapter{'s' if adapters != 1 else ''}" if adapters else "")
    if by_time:
        title, y_title = f"{what}: time per call (lower is better)", "median time per call (ns)"
    else:
        title, y_title = f"{what}: throughput (higher is better)", "GB/s"
    x_title = {"bytes": "bitmap size (log scale)", "keys": "keys (log scale)", "words": "words (log scale)"}[kind]
    return f"{name}.svg", svg_chart(title, series, x_labels, x_title, y_title, set(BASELINES))


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------

GROUP_ORDER = [
    "popcount", "and_assign", "or_assign", "xor_assign", "and_not_assign", "not_assign", "and_popcount",
    "union_many", "ones_1pct", "ones_50pct", "ones_99pct", "plan", "plan_replicated", "plan_kernel",
    "balanced_kernel/class_counts", "balanced_kernel/split_by_tables", "fold_unfold", "fold_unfold_grouped",
    "grid_plan", "layout/split_rows", "layout/join_rows", "layout/deposit_rows", "layout/extract_rows",
    "bitmoves/gather_and_r8",
    "bitmoves/gather_stride8", "bitmoves/scatter_stride8", "bitmoves/deposit", "bitmoves/extract",
    "bitmoves/fill_periodic", "bitmoves/and_shifted", "bitmoves/transpose64", "cutover/popcount", "cutover/or_assign",
]


def group_sort_key(group: str) -> tuple[int, str]:
    return (GROUP_ORDER.index(group) if group in GROUP_ORDER else len(GROUP_ORDER), group)


def render(
    results: Results,
    machine: Machine,
    command: str,
    started: datetime.datetime,
    seconds: float | None,
    loads: tuple[str, str],
    charts_dir: Path,
    charts_link_prefix: str,
) -> str:
    lines = [BEGIN_MARKER, "<!-- Generated by scripts/bench-report; edits between these markers are overwritten. -->", ""]
    k = machine.kernels
    lines += [
        "## Measurements",
        "",
        f"- **Date:** {started.strftime('%Y-%m-%d %H:%M UTC')}"
        + (f" (the run took {seconds / 60:.1f} min)" if seconds is not None else ""),
        f"- **CPU:** {machine.cpu}, {machine.cores} cores available; caches: {machine.caches}",
        f"- **Kernels:** available {', '.join(f'`{n}`' for n in k.get('available', '?').split())}; "
        f"active `{k.get('active', '?')}`; inline cut-over `SMALL_WORDS` = {k.get('small_words', '?')}"
        + (f"; forced by `{k['forced_by']}`" if "forced_by" in k else ""),
        f"- **System:** {machine.os}; {machine.rustc}; default release profile (no `target-cpu=native`)",
        f"- **Commit:** `{machine.commit}`",
        f"- **Load average** (1, 5, 15 min) before: {loads[0]}; after: {loads[1]}"
        " (anything near or above the core count means the numbers are noisy)",
        f"- **Command:** `{command}`",
        "",
        "Compare ratios within this run rather than absolute times across machines. "
        "Throughput is decimal GB/s of the bytes named in each group's note; "
        "`copy` is a plain word-copy loop over the same bytes (the memory limit, "
        "independent of libc's `memcpy` strategy).",
        "",
    ]

    # Targets.
    lines += ["### Targets", "", "| requirement | at | measured | status |", "|---|---|---:|---|"]
    unmeasured = []
    for target in targets():
        rows = target.check(results)
        if all(status == "MISSING" for _, _, status in rows):
            unmeasured.append(target.description)
            continue
        for value, measured, status in rows:
            lines.append(f"| {cell_text(target.description)} | {value_heading(value)} | {measured} | {status} |")
    lines.append("")
    if unmeasured:
        lines += ["Not measured in this run: " + "; ".join(unmeasured) + ".", ""]
    lines.append(
        "Measured against the `bitmap` benchmark (the `Bitmap` method users call, on the active kernel) "
        "for bitmap-core and the `default` policy for plans; speed-ups are baseline time ÷ ours."
    )
    lines.append("")

    lines += fastest_kernels(results, machine)

    # Groups.
    charts_dir.mkdir(parents=True, exist_ok=True)
    for old in charts_dir.glob("*.svg"):
        old.unlink()
    for group in sorted(results.groups, key=group_sort_key):
        lines += [f"### `{group}`", ""]
        if note := GROUP_NOTES.get(group):
            lines += [note, ""]
        if group == "plan":
            lines += parallel_crossover(results.groups[group])
        for adapters, part in split_group(results.groups[group]).items():
            if adapters is not None:
                lines += [f"#### {adapters} adapter{'s' if adapters != 1 else ''}", ""]
            chart = chart_for(group, adapters, part, machine)
            link = None
            if chart:
                name, svg = chart
                (charts_dir / name).write_text(svg)
                link = f"{charts_link_prefix}/{name}"
            lines += group_tables(group, part, machine, link)
    lines.append(END_MARKER)
    return "\n".join(lines) + "\n"


DEFAULT_DOC = """# The criterion suite (generated by `scripts/bench-report`)

How fast bitplan's kernels and plans are, how far from the memory limit, and how
they compare with what a Rust user would pick instead (a plain loop over `u64`
words, `fixedbitset`, `bitvec`, `roaring`, and the seed's algorithm written
literally), all measured in one run.

```sh
scripts/bench-report            # quick run of the whole suite (about 10 minutes on 2 cores), rewrites the section below
scripts/bench-report --filter popcount   # only the benchmarks whose name matches
cargo bench -p bitplan-benches -- --quick   # criterion directly, no report
```

"""


def charts_link_prefix(output: Path, charts_dir: Path) -> str:
    """How the report at `output` links the charts in `charts_dir` (a relative URL path)."""
    return Path(os.path.relpath(charts_dir, output.parent)).as_posix()


def report_paths(root: Path, output: Path | None, charts: Path | None) -> tuple[Path, Path]:
    """The report file and the charts directory: docs/perf/bench-report.md and docs/charts/ by
    default; charts/ next to an --output given without --charts."""
    if output is None:
        output, default_charts = root / "docs" / "perf" / "bench-report.md", root / "docs" / "charts"
    else:
        default_charts = output.resolve().parent / "charts"
    return output.resolve(), (charts if charts is not None else default_charts).resolve()


def write_report(path: Path, section: str) -> None:
    text = path.read_text() if path.exists() else DEFAULT_DOC
    if BEGIN_MARKER in text and END_MARKER in text:
        head, _, rest = text.partition(BEGIN_MARKER)
        _, _, tail = rest.partition(END_MARKER)
        text = head + section.rstrip("\n") + tail
        if not text.endswith("\n"):
            text += "\n"
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(
        prog="scripts/bench-report",
        description="Run the benchmark suite quickly and regenerate docs/perf/bench-report.md's tables and "
        "docs/charts/ from criterion's output.",
    )
    parser.add_argument("--filter", help="only run benchmarks whose name matches this regex (criterion's filter)")
    parser.add_argument(
        "--full", action="store_true", help="criterion's full sampling instead of --quick (tens of minutes)"
    )
    parser.add_argument(
        "--no-run", action="store_true", help="do not run the benchmarks; rebuild the report from the last run"
    )
    parser.add_argument(
        "--output", type=Path, help="the report to update (default: docs/perf/bench-report.md)"
    )
    parser.add_argument(
        "--charts",
        type=Path,
        help="the directory the SVG charts are written to, every old chart there removed first "
        "(default: docs/charts/ with the default --output, else charts/ next to the output)",
    )
    args = parser.parse_args(argv)

    target_dir = Path(os.environ.get("CARGO_TARGET_DIR", root / "target"))
    report_dir = target_dir / "bench-report"
    criterion_dir = report_dir / "criterion"
    env = dict(os.environ, CRITERION_HOME=str(criterion_dir))

    bench_args = ["cargo", "bench", "-p", BENCH_PACKAGE, "--", *([] if args.full else ["--quick"]), "--noplot"]
    if args.filter:
        bench_args.append(args.filter)
    command = shlex.join(bench_args)
    if "BITMAP_CORE_KERNEL" in os.environ:
        command = f"BITMAP_CORE_KERNEL={shlex.quote(os.environ['BITMAP_CORE_KERNEL'])} {command}"

    meta_path = report_dir / "run.json"
    if args.no_run:
        if not meta_path.exists():
            print(f"bench-report: no previous run in {report_dir}; run without --no-run first", file=sys.stderr)
            return 2
        meta = json.loads(meta_path.read_text())
        machine = Machine(**meta["machine"])
        started = datetime.datetime.fromisoformat(meta["started"])
        seconds, loads, command = meta["seconds"], tuple(meta["loads"]), meta["command"]
    else:
        machine = describe_machine(root, env, build=True)
        if criterion_dir.exists():
            shutil.rmtree(criterion_dir)
        criterion_dir.mkdir(parents=True)
        started = datetime.datetime.now(datetime.timezone.utc)
        load_before = load_average()
        print(f"bench-report: {command}", file=sys.stderr)
        clock = time.monotonic()
        status = subprocess.run(bench_args, cwd=root, env=env).returncode
        seconds = time.monotonic() - clock
        loads = (load_before, load_average())
        if status != 0:
            print(f"bench-report: the benchmarks failed (exit status {status}); report not updated", file=sys.stderr)
            return status
        meta_path.write_text(
            json.dumps(
                {
                    "machine": dataclasses.asdict(machine),
                    "started": started.isoformat(),
                    "seconds": seconds,
                    "loads": loads,
                    "command": command,
                },
                indent=2,
            )
        )

    results = Results(read_results(criterion_dir))
    if not results.all:
        print(f"bench-report: no criterion results under {criterion_dir}", file=sys.stderr)
        return 1
    output, charts_dir = report_paths(root, args.output, args.charts)
    link_prefix = charts_link_prefix(output, charts_dir)
    section = render(results, machine, command, started, seconds, loads, charts_dir, link_prefix)
    write_report(output, section)
    print(
        f"bench-report: {len(results.all)} benchmarks in {len(results.groups)} groups -> "
        f"{output.relative_to(root) if output.is_relative_to(root) else output}, "
        f"{charts_dir.relative_to(root) if charts_dir.is_relative_to(root) else charts_dir}/*.svg",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
