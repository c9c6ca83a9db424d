"""The SVG charts, written by hand: one log-log line chart per group (and
adapter count), our implementations solid, baselines dashed."""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

from .machine import Machine
from .results import Result, parse_value, short_bytes, short_count
from .suite import BASELINES
from .tables import implementation_key


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
