"""The report's Markdown tables: per group the medians and the ratios to each
baseline, the fastest kernel per operation and size, the parallel crossover;
and the number formats they share."""

from __future__ import annotations

import math
from collections import defaultdict

from .machine import Machine
from .results import Result, Results, parse_value, short_bytes, short_count
from .suite import BASELINES, GROUP_ORDER, HEADLINE_ORDER, KERNEL_ORDER, OURS_ORDER


def group_sort_key(group: str) -> tuple[int, str]:
    return (GROUP_ORDER.index(group) if group in GROUP_ORDER else len(GROUP_ORDER), group)


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
