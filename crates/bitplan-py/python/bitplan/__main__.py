"""``python -m bitplan``: what a user pastes into a bug report.

Prints the version, the CPU features that matter to the kernels, the kernels
this CPU runs and the active one (in the words of ``prefetch-plan
features``, which this shares its code with), and how the package was
built: the wheel tag it was installed from, the Rust compiler and target.

``python -m bitplan --bench`` adds a comparison of this CPU's kernels against
a plain copy of the same bytes (``prefetch-plan bench``'s table), about five
seconds. ``--json`` prints one JSON object instead of text.

The exit status is 2 when ``BITMAP_CORE_KERNEL`` names a kernel that cannot
run here (the report says ``active: none``), as for ``prefetch-plan
features``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

from bitplan import __version__, _native


def wheel_tags() -> list[str]:
    """The tags of the wheel this package was installed from (its
    ``*.dist-info/WHEEL``), or an empty list when there is none: a source
    tree on ``sys.path`` or an installer that kept no metadata."""
    from importlib import metadata

    try:
        dist = metadata.distribution("bitplan")
    except metadata.PackageNotFoundError:
        return []
    # Only the metadata of the copy that is imported: another bitplan
    # installed elsewhere on sys.path would name the wrong wheel.
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        located = os.path.abspath(str(dist.locate_file("bitplan")))
    except Exception:  # noqa: BLE001 - old importlib.metadata backends
        located = here
    if located != here:
        return []
    text = dist.read_text("WHEEL") or ""
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:")]


def build_info() -> dict[str, object]:
    info: dict[str, object] = dict(_native._build_info())
    info["wheel"] = wheel_tags()
    return info


def build_line(info: dict[str, object]) -> str:
    tags = info["wheel"]
    wheel = "wheel " + ".".join(tags) if tags else "not from a wheel (a source tree or an editable install)"
    return f"build:    {wheel}; {info['rustc']}, {info['target']}, {info['profile']} profile"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bitplan",
        description="Report bitplan's version, kernels, CPU features and build (for bug reports).",
    )
    parser.add_argument(
        "--bench",
        action="store_true",
        help="also time this CPU's kernels against a plain copy (about five seconds)",
    )
    parser.add_argument(
        "--measure-ms",
        type=int,
        default=100,
        metavar="MS",
        help="milliseconds to spend measuring each row of --bench (default: 100)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = parser.parse_args(argv)
    if not 1 <= args.measure_ms <= 60_000:
        parser.error(f"--measure-ms: {args.measure_ms}: expected 1 to 60000")

    features_text, kernel_error = _native._features_report(json=args.json)
    info = build_info()
    python = f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})"
    bench = None
    if args.bench and kernel_error is None:
        bench = _native._bench_report(args.measure_ms, json=args.json)

    if args.json:
        report = {
            "version": __version__,
            **json.loads(features_text),
            "build": info,
            "python": python,
        }
        if bench is not None:
            report["bench"] = json.loads(bench)
        print(json.dumps(report))
    else:
        print(f"bitplan:  {__version__}")
        print(features_text, end="")
        print(build_line(info))
        print(f"python:   {python}")
        if bench is not None:
            print()
            print(bench, end="")
    if kernel_error is not None:
        print(f"error: {kernel_error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
