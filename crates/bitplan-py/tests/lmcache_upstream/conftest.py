"""Runs LMCache's own tests (see lmcache_shim.py) from the directory named by
``LMCACHE_TESTS_DIR`` (``scripts/lmcache-upstream-tests DIR`` sets it). The
files are not in this repository: they are LMCache's (Apache-2.0), read
from wherever the user keeps a checkout or a copy. Without the variable
this directory holds one skipped test that says so. The directory may hold
one group of files or several (``lmcache_shim.UPSTREAM_GROUPS``)."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import lmcache_shim  # noqa: E402

UPSTREAM_DIR = os.environ.get("LMCACHE_TESTS_DIR")


class _Upstream(pytest.File):
    """Stands for test_upstream.py when LMCACHE_TESTS_DIR is set: yields
    LMCache's files as modules instead."""

    def collect(self):
        base = Path(UPSTREAM_DIR)
        try:
            groups = lmcache_shim.present_groups(base)
        except ValueError as error:
            raise pytest.UsageError(f"LMCACHE_TESTS_DIR: {error}") from None
        for group in groups:
            for name in lmcache_shim.UPSTREAM_GROUPS[group]:
                yield pytest.Module.from_parent(self, path=base / name, name=name)


if UPSTREAM_DIR:
    lmcache_shim.install()

    def pytest_collect_file(parent, file_path):
        if file_path.name == "test_upstream.py" and file_path.parent == Path(__file__).parent:
            return _Upstream.from_parent(parent, path=file_path)
        return None

    def pytest_collection_modifyitems(config, items):
        lmcache_shim.pytest_collection_modifyitems(config, items)

    def pytest_report_header(config):
        return lmcache_shim.pytest_report_header(config) + f" from {UPSTREAM_DIR}"
