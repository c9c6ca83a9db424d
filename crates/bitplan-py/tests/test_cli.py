"""``python -m bitplan`` (issue #21, item 3), the one version (item 5) and
``BITMAP_CORE_KERNEL`` from Python, each in a subprocess: the kernel is
chosen once per process, so only a fresh interpreter can be told another.

No test here depends on the machine's speed: ``--bench`` runs with 1 ms a
row and is checked for its shape, not its figures."""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

import bitplan

REPO = pathlib.Path(__file__).resolve().parents[3]


def run(*args, kernel=None, check=True):
    env = dict(os.environ)
    env.pop("BITMAP_CORE_KERNEL", None)
    if kernel is not None:
        env["BITMAP_CORE_KERNEL"] = kernel
    done = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def test_report_in_the_words_of_prefetch_plan_features():
    out = run("-m", "bitplan").stdout
    lines = out.splitlines()
    assert lines[0] == f"bitplan:  {bitplan.__version__}"
    assert [line.split(":")[0] for line in lines] == [
        "bitplan", "arch", "features", "kernels", "active", "build", "python"
    ]
    kernels = ", ".join(bitplan.available_kernels())
    assert f"kernels:  {kernels}\n" in out
    assert f"active:   {bitplan.active_kernel()} (the fastest available; set BITMAP_CORE_KERNEL to force one)" in out
    assert re.search(r"^build:    .*; rustc \d+\.\d+\.\d+", out, re.M), out
    # The same text as the CLI's `features`, which shares the code.
    assert bitplan._native._features_report()[0] in out


def test_json_report():
    report = json.loads(run("-m", "bitplan", "--json").stdout)
    assert report["version"] == bitplan.__version__
    assert report["kernels"] == bitplan.available_kernels()
    assert report["active"] == bitplan.active_kernel()
    assert report["forced_by_env"] is None
    assert set(report["features"]) >= ({"popcnt", "avx2"} if report["arch"] == "x86_64" else {"neon"})
    assert report["build"]["rustc"].startswith("rustc ")
    assert report["build"]["profile"] == "release"
    assert report["build"]["target"].startswith(report["arch"])


def test_wheel_tag_when_installed_from_a_wheel():
    from bitplan.__main__ import wheel_tags

    tags = wheel_tags()
    # Empty for a source tree or an editable install (`maturin develop`);
    # an installed wheel names its interpreter and platform.
    for tag in tags:
        interpreter, abi, platform = tag.split("-")
        assert interpreter.startswith("cp") and platform.endswith(os.uname().machine), tag


def test_bench_rows_cover_every_kernel():
    report = json.loads(run("-m", "bitplan", "--bench", "--measure-ms", "1", "--json").stdout)
    rows = report["bench"]["rows"]
    assert {row["kernel"] for row in rows} == set(bitplan.available_kernels())
    assert {row["operation"] for row in rows} == {"popcount", "or_assign", "first_wins", "plan"}
    assert all(row["ns_per_call"] > 0 and row["copy_ns_per_call"] > 0 for row in rows)
    table = run("-m", "bitplan", "--bench", "--measure-ms", "1").stdout
    assert "x copy" in table and "scalar    popcount" in table


def test_bench_rejects_a_bad_measure():
    done = run("-m", "bitplan", "--bench", "--measure-ms", "0", check=False)
    assert done.returncode == 2 and "--measure-ms" in done.stderr


@pytest.mark.parametrize("kernel", bitplan.available_kernels())
def test_bitmap_core_kernel_forces_the_kernel(kernel):
    code = (
        "import bitplan\n"
        "lookup = {0: bitplan.Bitmap(1 << 18, 300), 1: bitplan.Bitmap(1 << 18, 900)}\n"
        "adapters = [bitplan.AdapterDescriptor(0), bitplan.AdapterDescriptor(1)]\n"
        "plan = bitplan.create_prefetch_policy('default').select_load_plan(1 << 18, lookup, adapters)\n"
        "print(bitplan.active_kernel(), plan[1].popcount())\n"
    )
    assert run("-c", code, kernel=kernel).stdout.split() == [kernel, "600"]
    report = json.loads(run("-m", "bitplan", "--json", kernel=kernel).stdout)
    assert (report["active"], report["forced_by_env"]) == (kernel, kernel)


def test_an_unavailable_kernel_is_an_error_not_a_fallback():
    missing = "neon" if os.uname().machine == "x86_64" else "avx2"
    done = run("-m", "bitplan", kernel=missing, check=False)
    assert done.returncode == 2
    assert f"active:   none (BITMAP_CORE_KERNEL={missing} cannot be used)" in done.stdout
    assert f"kernel `{missing}` is not available on this CPU" in done.stderr
    done = run("-c", "import bitplan; bitplan.active_kernel()", kernel=missing, check=False)
    assert done.returncode != 0 and "is not available on this CPU" in done.stderr


def workspace_version():
    """`[workspace.package] version` of the root Cargo.toml, the one place
    the version is written; None outside a checkout (an sdist's tests)."""
    cargo_toml = REPO / "Cargo.toml"
    if not cargo_toml.is_file():
        return None
    section = re.search(r"^\[workspace\.package\]\n(.*?)(?=^\[)", cargo_toml.read_text(), re.M | re.S)
    assert section, "no [workspace.package] in Cargo.toml"
    return re.search(r'^version = "([^"]+)"', section.group(1), re.M).group(1)


def test_one_version():
    from importlib import metadata

    expected = workspace_version()
    if expected is None:
        pytest.skip("not in a checkout: no workspace Cargo.toml")
    assert bitplan.__version__ == expected
    assert metadata.version("bitplan") == expected
    assert json.loads(run("-m", "bitplan", "--json").stdout)["version"] == expected
