"""The machine the suite runs on: CPU model, cores, caches, our kernels (from
`cargo run --example kernels`), compiler, commit, load average."""

from __future__ import annotations

import dataclasses
import os
import platform
import subprocess
import sys
from pathlib import Path

from .suite import BENCH_PACKAGE


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
