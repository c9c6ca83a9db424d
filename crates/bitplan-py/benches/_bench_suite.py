"""The timing harness and report of ``bench.py``: statements timed as
:mod:`timeit` times them, rows with their baselines and targets, and the
Markdown table and JSON they are printed as.
"""

from __future__ import annotations

import statistics
import sys
import time
import timeit
from dataclasses import dataclass, field
from typing import Any, Callable


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------


@dataclass
class Timing:
    median_us: float
    min_us: float
    per_call_us: list[float]
    number: int


TIMERS = {
    # timeit's default clock: wall time, so time the process spends
    # descheduled (other jobs on a shared machine) counts.
    "wall": time.perf_counter,
    # This thread's CPU time: the same statements, without the time slices
    # of other processes (cache and TLB pollution by them still counts).
    "cpu": time.thread_time,
}


class Timer:
    def __init__(self, min_time: float, repeat: int, clock: str = "wall") -> None:
        self.min_time = min_time
        self.repeat = repeat
        self.clock = clock

    def autorange(self, t: timeit.Timer) -> int:
        """``timeit.Timer.autorange``'s loop count (1, 2, 5, 10, 20, 50, ...)
        with a configurable minimum total time."""
        i = 1
        while True:
            for j in (1, 2, 5):
                number = i * j
                if t.timeit(number) >= self.min_time:
                    return number
            i *= 10

    def time(self, stmt: str, env: dict[str, Any]) -> Timing:
        # The operands become locals of timeit's inner function.
        setup = "\n".join(f"{name} = __env[{name!r}]" for name in env) or "pass"
        t = timeit.Timer(stmt, setup, timer=TIMERS[self.clock], globals={"__env": env})
        number = self.autorange(t)
        raw = t.repeat(self.repeat, number)
        per = [x / number * 1e6 for x in raw]
        return Timing(statistics.median(per), min(per), per, number)


# ---------------------------------------------------------------------------
# Items, targets, results
# ---------------------------------------------------------------------------


@dataclass
class Target:
    label: str
    check: Callable[[Row], bool]
    # How far the measurement is from the target, for the summary.
    margin: Callable[[Row], str] = lambda row: ""


@dataclass
class Row:
    item: str
    size: str
    impl: str  # which bitplan API is timed
    stmt: str
    bitplan: Timing | None = None
    int_model: Timing | None = None
    bitarray: Timing | None = None
    lmcache_native_us: float | None = None
    targets: list[Target] = field(default_factory=list)
    outcomes: list[bool] = field(default_factory=list)
    note: str = ""


def below(limit_us: float) -> Target:
    return Target(
        f"< {limit_us:g} µs",
        lambda row: row.bitplan.median_us < limit_us,
        lambda row: f"{fmt_us(row.bitplan.median_us)} µs, {row.bitplan.median_us / limit_us:.2f}× the limit",
    )


def vs_bitarray(min_speedup: float) -> Target:
    if min_speedup >= 1:
        label = f"≥ {min_speedup:g}× faster than bitarray"
    else:
        label = f"≤ {1 / min_speedup:g}× slower than bitarray"
    return Target(
        label,
        lambda row: row.bitarray.median_us / row.bitplan.median_us >= min_speedup,
        lambda row: f"bitplan {fmt_us(row.bitplan.median_us)} µs, bitarray {fmt_us(row.bitarray.median_us)} µs:"
        f" ×{row.bitarray.median_us / row.bitplan.median_us:.2f}, needs ×{min_speedup:.2f}",
    )


def vs_lmcache(min_speedup: float) -> Target:
    return Target(
        f"≥ {min_speedup:g}× LMCache",
        lambda row: row.lmcache_native_us / row.bitplan.median_us >= min_speedup,
        lambda row: f"{fmt_us(row.bitplan.median_us)} µs, needs < {fmt_us(row.lmcache_native_us / min_speedup)} µs"
        f" ({row.bitplan.median_us / (row.lmcache_native_us / min_speedup):.2f}× that)",
    )


class Suite:
    def __init__(self, timer: Timer, pattern: str | None, lmcache_us: dict[str, float]) -> None:
        self.timer = timer
        self.pattern = pattern
        # Quoted figures a row may be compared with, by name (not measured).
        self.lmcache_us = lmcache_us
        self.rows: list[Row] = []

    def wanted(self, item: str, size: str, impl: str) -> bool:
        return self.pattern is None or self.pattern.lower() in f"{item} {size} {impl}".lower()

    def add(
        self,
        item: str,
        size: str,
        impl: str,
        stmt: str,
        env: dict[str, Any],
        *,
        int_model: tuple[str, dict[str, Any]] | None = None,
        bitarray_: tuple[str, dict[str, Any]] | None = None,
        lmcache: str | None = None,
        lmcache_real: tuple[str, dict[str, Any]] | None = None,
        targets: tuple[Target, ...] = (),
        note: str = "",
    ) -> None:
        if not self.wanted(item, size, impl):
            return
        row = Row(item, size, impl, stmt, note=note, targets=list(targets))
        print(f"  timing {item} [{size}] {impl} ...", file=sys.stderr, flush=True)
        row.bitplan = self.timer.time(stmt, env)
        if int_model is not None:
            row.int_model = self.timer.time(*int_model)
        if bitarray_ is not None:
            row.bitarray = self.timer.time(*bitarray_)
        if lmcache_real is not None:
            # The release's own module, in this run.
            row.lmcache_native_us = self.timer.time(*lmcache_real).median_us
        elif lmcache is not None:
            row.lmcache_native_us = self.lmcache_us[lmcache]
        row.outcomes = [t.check(row) for t in row.targets]
        self.rows.append(row)


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def fmt_us(us: float) -> str:
    if us >= 1000:
        return f"{us:,.0f}"
    if us >= 100:
        return f"{us:.0f}"
    if us >= 10:
        return f"{us:.1f}"
    if us >= 1:
        return f"{us:.2f}"
    return f"{us:.3f}"


def fmt_ratio(base_us: float | None, ours_us: float) -> str:
    if base_us is None:
        return "—"
    r = base_us / ours_us
    rs = f"{r:,.0f}" if r >= 100 else (f"{r:.1f}" if r >= 10 else f"{r:.2f}")
    return f"{fmt_us(base_us)} (×{rs})"


def table(rows: list[Row]) -> str:
    out = [
        "| item | size | API | bitplan µs | (min) | int model µs | bitarray µs | LMCache native µs | target | result |",
        "|---|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for row in rows:
        ours = row.bitplan.median_us
        targets = "; ".join(t.label for t in row.targets) or "—"
        result = "; ".join("PASS" if ok else "**FAIL**" for ok in row.outcomes) or (row.note or "—")
        if row.outcomes and row.note:
            result += f" ({row.note})"
        cells = (
            row.item,
            row.size,
            row.impl,
            fmt_us(ours),
            fmt_us(row.bitplan.min_us),
            fmt_ratio(row.int_model and row.int_model.median_us, ours),
            fmt_ratio(row.bitarray and row.bitarray.median_us, ours),
            fmt_ratio(row.lmcache_native_us, ours),
            targets,
            result,
        )
        out.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out)


def to_json(rows: list[Row]) -> list[dict[str, Any]]:
    def timing(t: Timing | None) -> dict[str, Any] | None:
        if t is None:
            return None
        return {"median_us": t.median_us, "min_us": t.min_us, "number": t.number, "per_call_us": t.per_call_us}

    return [
        {
            "item": r.item,
            "size": r.size,
            "api": r.impl,
            "stmt": r.stmt,
            "bitplan": timing(r.bitplan),
            "int_model": timing(r.int_model),
            "bitarray": timing(r.bitarray),
            "lmcache_native_us": r.lmcache_native_us,
            "targets": [{"target": t.label, "pass": ok} for t, ok in zip(r.targets, r.outcomes)],
            "note": r.note,
        }
        for r in rows
    ]
