"""The implementation of scripts/bench-report (entry: scripts/bench_report.py).

- `suite`: what the report knows of the criterion suite: the markers, the
  baselines, the order of kernels, implementations and groups, the group notes.
- `results`: benchmark values (sizes, words, keys x adapters) and reading
  criterion's output.
- `machine`: describing the machine the suite ran on.
- `targets`: the performance requirements, checked from a run's medians.
- `tables`: the Markdown tables (medians, ratios, fastest kernel, parallel
  crossover) and their number formats.
- `charts`: the hand-written SVG charts.
- `report`: the report's section, and writing it between the markers.
- `cli`: the command line: run the suite (or reuse the last run) and write the report.

Python 3.11 standard library only.
"""
