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

The code lives in the `benchreport` package next to this file, one module
per concern (see its `__init__`); this module is the entry point and
re-exports the package's names, so `import bench_report` keeps working.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    # As when this was one file run as a script: no bytecode caches in the source tree.
    sys.dont_write_bytecode = True

from benchreport.charts import (  # noqa: E402
    COLOURS,
    PALETTE,
    chart_for,
    colour_of,
    nice_log_ticks,
    svg_chart,
    tick_label,
)
from benchreport.cli import main  # noqa: E402
from benchreport.machine import (  # noqa: E402
    Machine,
    caches,
    cpu_count,
    cpu_model,
    describe_machine,
    load_average,
    run_text,
)
from benchreport.report import DEFAULT_DOC, charts_link_prefix, render, report_paths, write_report  # noqa: E402
from benchreport.results import (  # noqa: E402
    PLAN_RE,
    SIZE_RE,
    UNIT_BYTES,
    Result,
    Results,
    parse_value,
    read_results,
    short_bytes,
    short_count,
)
from benchreport.suite import (  # noqa: E402
    BASELINES,
    BEGIN_MARKER,
    BENCH_PACKAGE,
    END_MARKER,
    GROUP_NOTES,
    GROUP_ORDER,
    HEADLINE_ORDER,
    KERNEL_ORDER,
    OURS_ORDER,
)
from benchreport.tables import (  # noqa: E402
    cell_text,
    fastest_kernels,
    format_gbps,
    format_time,
    group_sort_key,
    group_tables,
    headline,
    implementation_key,
    parallel_crossover,
    split_group,
    value_heading,
    value_sort_key,
)
from benchreport.targets import PLAN_KEYS, SIZES_L1_L2, Target, targets  # noqa: E402

# Everything the single-file bench_report.py defined, for `import bench_report`
# (scripts/test_bench_report.py).
__all__ = [
    "BASELINES", "BEGIN_MARKER", "BENCH_PACKAGE", "COLOURS", "DEFAULT_DOC", "END_MARKER", "GROUP_NOTES",
    "GROUP_ORDER", "HEADLINE_ORDER", "KERNEL_ORDER", "Machine", "OURS_ORDER", "PALETTE", "PLAN_KEYS", "PLAN_RE",
    "Result", "Results", "SIZES_L1_L2", "SIZE_RE", "Target", "UNIT_BYTES", "caches", "cell_text", "chart_for",
    "charts_link_prefix", "colour_of", "cpu_count", "cpu_model", "describe_machine", "fastest_kernels",
    "format_gbps", "format_time", "group_sort_key", "group_tables", "headline", "implementation_key",
    "load_average", "main", "nice_log_ticks", "parallel_crossover", "parse_value", "read_results", "render",
    "report_paths", "run_text", "short_bytes", "short_count", "split_group", "svg_chart", "targets",
    "tick_label", "value_heading", "value_sort_key", "write_report",
]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
