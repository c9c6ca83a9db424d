"""Placeholder: with ``LMCACHE_TESTS_DIR`` set, the conftest collects
LMCache's test files in its place (see lmcache_shim.py); without it, this
one skipped test says how to run them."""

import os

import pytest
from lmcache_shim import UPSTREAM_GROUPS

if not os.environ.get("LMCACHE_TESTS_DIR"):

    def test_lmcache_upstream_tests():
        pytest.skip(
            "LMCache's own tests are not run: set LMCACHE_TESTS_DIR to a directory holding one or more of "
            + "; ".join(
                f"{group}: " + " and ".join(f"{f} (@{c[:8]})" for f, c in files.items())
                for group, files in UPSTREAM_GROUPS.items()
            )
            + ", or run scripts/lmcache-upstream-tests DIR"
        )
