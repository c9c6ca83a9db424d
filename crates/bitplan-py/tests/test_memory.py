"""Issue #14, item 5: an impossible size is a MemoryError, "never a crash or
an abort of the interpreter". Each case runs in a child interpreter whose
address space is capped (RLIMIT_AS: what it already maps plus 512 MiB), so
that an allocation that cannot succeed fails at once and cheaply; the child
must survive and report MemoryError. (A Rust allocation that fails without
a fallible path aborts the process: SIGABRT, return code -6.)"""

import sys

import pytest
from _capped import run_capped

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="uses RLIMIT_AS and /proc/self/status")

PRELUDE = """
import numpy
import bitplan
from bitplan import *
from bitplan.lmcache import native as lmnative, bitmap_ops, prefetch_policy as lmpolicy
"""


def outcome(setup, call):
    child = run_capped(PRELUDE, setup, call)
    return child.returncode, child.outcome, child.stderr


IMPOSSIBLE = [
    # (setup, call): sizes that can never be allocated; each must be a MemoryError
    ("", "Bitmap(10**15)"),
    ("", "Bitmap(10**15, 10**15)"),
    ("", "Bitmap.from_indices(10**15, [])"),
    ("", "Grid.zeros(2, 10**15)"),
    ("", "Grid.zeros(10**6, 10**9)"),
    ("", "bitplan.unfold(1, 10**15, 1, [-1])"),
    ("", "bitplan.unfold_grouped(1, 10**15, [-1])"),
    ("", "bitplan.unfold_grouped(1, 10**12, [-1] * 1000)"),
    ("", "bitplan.fold(Bitmap(8), 10**15, 1, [-1])"),
    ("", "bitplan.fold_unfold(Bitmap(8), 10**15, [-1])"),
    ("", "bitplan.fold_unfold_ranked(Bitmap(8), 10**13, 100, [-1])"),
    ("", "bitplan.merge_bitmaps([], 10**15)"),
    ("", "LoadPlan(10**15).merged()"),
    ("", "lmnative.Bitmap(10**15)"),
    ("", "bitmap_ops.unfold(1, 10**15, 1, [-1])"),
    ("", "bitmap_ops.unfold_grouped(1, 10**15, [-1])"),
    ("", "bitmap_ops.merge_bitmaps([], 10**15)"),
    ("", "lmpolicy.Bitmap2D.zeros(10**6, 10**9)"),
]

TOO_BIG_FOR_THE_BUDGET = [
    # valid calls whose result does not fit in the 512 MiB left: Python's own
    # objects would raise MemoryError here, and so must these
    ("b = Bitmap(10**9, 10**9)", "b.indices_array()"),
    ("b = Bitmap(10**9, 10**9)", "b.get_indices_list()"),
    # (`str`: `repr` abbreviates a long bitmap, and needs no room.)
    ("b = Bitmap(10**9)", "str(b)"),
]


@pytest.mark.parametrize("setup,call", IMPOSSIBLE, ids=[c for _, c in IMPOSSIBLE])
def test_impossible_sizes_are_memory_errors_not_aborts(setup, call):
    code, out, err = outcome(setup, call)
    assert code == 0, f"the interpreter died (return code {code}): {err}"
    assert out == "MemoryError"


@pytest.mark.parametrize("setup,call", TOO_BIG_FOR_THE_BUDGET, ids=[c for _, c in TOO_BIG_FOR_THE_BUDGET])
def test_results_too_big_for_memory_are_memory_errors_not_aborts(setup, call):
    code, out, err = outcome(setup, call)
    assert code == 0, f"the interpreter died (return code {code}): {err}"
    assert out == "MemoryError"


def test_the_child_harness_works():
    assert outcome("", "Bitmap(64, 3).popcount()")[:2] == (0, "OK")
    assert outcome("", "Bitmap(-1)")[1].startswith("ValueError")
