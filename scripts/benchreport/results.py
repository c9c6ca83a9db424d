"""A run's results: benchmark values (sizes, word counts, keys x adapters) and
criterion's output files read into `Result`s."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections import defaultdict
from pathlib import Path


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
