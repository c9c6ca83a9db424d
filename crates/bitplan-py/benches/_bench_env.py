"""What every benchmark script here prints above its figures: the machine,
its load, the date, the Python and bitplan that ran, and the command, so a
figure in docs/PERFORMANCE.md can be tied to where it was measured."""

from __future__ import annotations

import datetime
import os
import platform
import sys

import bitplan


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what platform knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, or "n/a"."""
    try:
        return "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "n/a"


def environment_lines(load_note: str = "(at the start)") -> list[str]:
    """The header's lines on the machine, date, versions and command."""
    command = " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:])
    return [
        f"- machine: {cpu_model()}, {os.cpu_count()} cores, load average {load_average()} {load_note}".rstrip(),
        f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- Python {platform.python_version()}, bitplan {bitplan.__version__}, kernel {bitplan.active_kernel()}",
        f"- command: `{command}`",
    ]
