"""Tests of bench_report.py on a synthetic criterion output directory.

Run: python3 scripts/test_bench_report.py
(standard library only; runs no benchmarks; writes no bytecode caches into
the source tree).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import io
import json
import os
import re
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_report as br  # noqa: E402


def write_bench(root: Path, group: str, function: str, value: str, median_ns: float, throughput: int) -> None:
    """One benchmark's files, laid out as criterion writes them."""
    directory = root / group.replace("/", "_") / function / value / "new"
    directory.mkdir(parents=True)
    (directory / "benchmark.json").write_text(
        json.dumps(
            {
                "group_id": group,
                "function_id": function,
                "value_str": value,
                "throughput": {"Bytes": throughput},
                "full_id": f"{group}/{function}/{value}",
            }
        )
    )
    (directory / "estimates.json").write_text(json.dumps({"median": {"point_estimate": median_ns}}))


MACHINE = br.Machine(
    cpu="Test CPU",
    cores=2,
    caches="L1d 32 KiB",
    os="Linux",
    rustc="rustc 1.95.0",
    commit="abc",
    kernels={"available": "scalar portable avx2", "active": "avx2", "best": "avx2", "small_words": "4"},
)


class ReportTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.criterion = self.root / "criterion"
        for value, scale in (("8KiB", 1), ("128KiB", 16)):
            bytes_ = 8192 * scale
            write_bench(self.criterion, "popcount", "avx2", value, 250.0 * scale, bytes_)
            write_bench(self.criterion, "popcount", "scalar", value, 1000.0 * scale, bytes_)
            write_bench(self.criterion, "popcount", "bitmap", value, 260.0 * scale, bytes_)
            write_bench(self.criterion, "popcount", "fixedbitset", value, 1040.0 * scale, bytes_)  # 4.0x
            write_bench(self.criterion, "popcount", "scalar_loop", value, 300.0 * scale, bytes_)  # 1.15x
        for keys in (1024, 262144):
            write_bench(self.criterion, "plan", "default", f"{keys}x3", keys / 10, keys * 3 // 8)
            write_bench(self.criterion, "plan", "seed_literal", f"{keys}x3", keys, keys * 3 // 8)
        write_bench(self.criterion, "cutover/popcount", "dispatched", "4", 3.0, 32)

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def render(self) -> str:
        results = br.Results(br.read_results(self.criterion))
        started = datetime.datetime(2025, 1, 2, 3, 4, tzinfo=datetime.timezone.utc)
        return br.render(results, MACHINE, "cargo bench", started, 60.0, ("0.1", "0.2"), self.root / "charts", "charts")

    def test_reads_every_benchmark(self) -> None:
        results = br.read_results(self.criterion)
        self.assertEqual(len(results), 15)
        r = br.Results(results).get("popcount", "avx2", "8KiB")
        self.assertEqual(r.median_ns, 250.0)
        self.assertAlmostEqual(r.gbps, 8192 / 250.0)

    def test_targets_pass_and_fail_from_the_medians(self) -> None:
        text = self.render()
        self.assertIn("| popcount ≥ 3× fixedbitset `count_ones(..)` | 8 KiB | 4.00× | pass |", text)
        # The `|` of the closure must be escaped inside a table cell.
        self.assertIn("`iter().map(\\|w\\| w.count_ones() as u64).sum()` | 8 KiB | 1.15× | **FAIL** |", text)
        self.assertIn("| 256Ki keys | 10.00× | pass |", text)
        self.assertIn("not measured", text.lower())

    def test_tables_ratios_and_fastest_kernel(self) -> None:
        text = self.render()
        self.assertIn("| `avx2` | **250 ns · 32.8** | **4 µs · 32.8** |", text)
        self.assertIn("| `fixedbitset` | 4.00× | 4.00× |", text)
        self.assertIn("| `popcount` | `avx2` 32.8 | `avx2` 32.8 |", text)

    def test_charts_are_well_formed_svg(self) -> None:
        text = self.render()
        charts = sorted((self.root / "charts").glob("*.svg"))
        self.assertEqual(
            [c.name for c in charts], ["cutover-popcount.svg", "plan-3adapters.svg", "popcount.svg"]
        )
        for chart in charts:
            svg = ET.parse(chart).getroot()
            self.assertTrue(svg.tag.endswith("svg"))
            self.assertIn(f"(charts/{chart.name})", text)

    def test_default_report_and_charts(self) -> None:
        # The report is docs/perf/bench-report.md and its charts stay in docs/charts/, linked as ../charts.
        output, charts = br.report_paths(self.root, None, None)
        self.assertEqual(output, (self.root / "docs" / "perf" / "bench-report.md").resolve())
        self.assertEqual(charts, (self.root / "docs" / "charts").resolve())
        self.assertEqual(br.charts_link_prefix(output, charts), "../charts")
        # An --output of one's own keeps its charts next to it, unless --charts says otherwise.
        output, charts = br.report_paths(self.root, self.root / "elsewhere" / "report.md", None)
        self.assertEqual(charts, (self.root / "elsewhere" / "charts").resolve())
        self.assertEqual(br.charts_link_prefix(output, charts), "charts")
        _, charts = br.report_paths(self.root, self.root / "report.md", self.root / "svg")
        self.assertEqual(charts, (self.root / "svg").resolve())

    def test_charts_linked_relative_to_the_report(self) -> None:
        results = br.Results(br.read_results(self.criterion))
        started = datetime.datetime(2025, 1, 2, 3, 4, tzinfo=datetime.timezone.utc)
        charts = self.root / "docs" / "charts"
        text = br.render(results, MACHINE, "cargo bench", started, 60.0, ("0.1", "0.2"), charts, "../charts")
        self.assertIn("(../charts/popcount.svg)", text)
        self.assertTrue((charts / "popcount.svg").exists())

    def test_no_run_rewrites_the_chosen_report(self) -> None:
        # `--no-run` rebuilds the report from the last run's files without running anything.
        target = self.root / "target"
        (target / "bench-report").mkdir(parents=True)
        self.criterion.rename(target / "bench-report" / "criterion")
        meta = {
            "machine": dataclasses.asdict(MACHINE),
            "started": "2025-01-02T03:04:00+00:00",
            "seconds": 60.0,
            "loads": ["0.1", "0.2"],
            "command": "cargo bench",
        }
        (target / "bench-report" / "run.json").write_text(json.dumps(meta))
        report = self.root / "out" / "report.md"
        report.parent.mkdir()
        report.write_text(f"# Kept\n\n{br.BEGIN_MARKER}\nold\n{br.END_MARKER}\n\nKept too\n")
        old_env = os.environ.get("CARGO_TARGET_DIR")
        os.environ["CARGO_TARGET_DIR"] = str(target)
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(br.main(["--no-run", "--output", str(report)]), 0)
        finally:
            if old_env is None:
                del os.environ["CARGO_TARGET_DIR"]
            else:
                os.environ["CARGO_TARGET_DIR"] = old_env
        text = report.read_text()
        self.assertTrue(text.startswith("# Kept\n\n" + br.BEGIN_MARKER))
        self.assertTrue(text.endswith(br.END_MARKER + "\n\nKept too\n"))
        self.assertIn("(charts/popcount.svg)", text)
        self.assertTrue((report.parent / "charts" / "popcount.svg").exists())

    def test_the_repository_report_keeps_its_markers_and_charts(self) -> None:
        # What `scripts/bench-report` rewrites by default must hold both markers once, and every chart
        # it links must exist.
        repo = Path(__file__).resolve().parent.parent
        output, charts = br.report_paths(repo, None, None)
        text = output.read_text()
        self.assertEqual(text.count(br.BEGIN_MARKER), 1)
        self.assertEqual(text.count(br.END_MARKER), 1)
        self.assertLess(text.index(br.BEGIN_MARKER), text.index(br.END_MARKER))
        prefix = br.charts_link_prefix(output, charts)
        linked = re.findall(r"\]\(" + re.escape(prefix) + r"/([^)]+\.svg)\)", text)
        self.assertTrue(linked)
        for name in linked:
            self.assertTrue((charts / name).exists(), name)

    def test_section_replaced_between_markers(self) -> None:
        doc = self.root / "PERFORMANCE.md"
        doc.write_text(f"# Intro\n\n{br.BEGIN_MARKER}\nold\n{br.END_MARKER}\n\nOutro\n")
        br.write_report(doc, f"{br.BEGIN_MARKER}\nnew\n{br.END_MARKER}\n")
        self.assertEqual(doc.read_text(), f"# Intro\n\n{br.BEGIN_MARKER}\nnew\n{br.END_MARKER}\n\nOutro\n")


if __name__ == "__main__":
    unittest.main()
