"""The command line: run the suite with `CRITERION_HOME` a directory of its
own (emptied first), or with `--no-run` reuse the last run, then write the
report."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .machine import Machine, describe_machine, load_average
from .report import charts_link_prefix, render, report_paths, write_report
from .results import Results, read_results
from .suite import BENCH_PACKAGE


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parents[2]  # scripts/benchreport/cli.py
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
