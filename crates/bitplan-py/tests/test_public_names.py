"""A smoke test of every public name (issue #21, item 2): what an installed
wheel must provide, checked by ``scripts/check-wheels`` in a fresh venv.

It runs under pytest with the rest of the suite, and also alone, without
pytest or hypothesis (``python tests/test_public_names.py``), which is how
the aarch64 wheels are checked under qemu, where only the interpreter, numpy
and the wheel are installed. So: plain asserts, no fixtures."""

import importlib
import pickle
import sys

import bitplan
import bitplan.lmcache
from bitplan import AdapterDescriptor, Bitmap, Grid

# bitplan, and each module bitplan.lmcache lists (native, bitmap_ops,
# prefetch_policy, and any added later); its other names are the switch.
SWITCH = ("install", "installed", "uninstall")
MODULES = ["bitplan"] + [f"bitplan.lmcache.{name}" for name in bitplan.lmcache.__all__ if name not in SWITCH]


def test_every_public_name_resolves():
    assert {"bitmap_ops", "native", "prefetch_policy", "integration"} <= set(bitplan.lmcache.__all__)
    for name in SWITCH:
        assert callable(getattr(bitplan.lmcache, name)), name
    for name in MODULES:
        module = importlib.import_module(name)
        assert module.__all__, name
        for public in module.__all__:
            assert getattr(module, public) is not None, f"{name}.{public}"
    assert isinstance(bitplan.__version__, str) and bitplan.__version__[0].isdigit()
    assert bitplan.active_kernel() in bitplan.available_kernels()


def test_a_plan():
    lookup = {0: Bitmap(1024, 300), 1: Bitmap(1024, 900)}
    adapters = [AdapterDescriptor(0), AdapterDescriptor(1)]
    for name in bitplan.get_registered_prefetch_policies():
        policy = bitplan.create_prefetch_policy(name)
        plan = policy.select_load_plan(1024, lookup, adapters)
        assert sum(bitmap.popcount() for bitmap in plan.values()) == 900, name
        bitplan.LoadPlan(1024, plan).validate(lookup)
    plan = bitplan.LoadPlan(1024, bitplan.DefaultPrefetchPolicy().select_load_plan(1024, lookup, adapters))
    assert plan[1].popcount() == 600 and plan.prefix_len() == 900


def test_a_plan_through_lmcache():
    from bitplan.lmcache.native import Bitmap as LmBitmap
    from bitplan.lmcache.prefetch_policy import AdapterDescriptor as LmAdapter
    from bitplan.lmcache.prefetch_policy import DefaultPrefetchPolicy as LmDefault

    lookup = {0: LmBitmap(1024, 300), 1: LmBitmap(1024, 900)}
    plan = LmDefault().select_load_plan(list(range(1024)), lookup, [LmAdapter(0), LmAdapter(1)])
    assert plan[1].popcount() == 600


def test_a_fold():
    found = Bitmap(8 * 2 * 1, 16)  # 8 chunks x 2 groups x 1 rank, all present
    hit, mask = bitplan.fold_unfold_ranked(found, 8, 1, [-1, 2])
    assert hit == 8 and len(mask) == 16
    assert bitplan.fold(found, 8, 1, [-1, 2]).popcount() == 8
    from bitplan.lmcache import bitmap_ops

    assert bitmap_ops.fold_unfold(Bitmap(16, 16), 8, [-1, 2])[0] == 8


def test_a_grid_plan():
    windows = [bitplan.FULL_ATTENTION_WINDOW, bitplan.FULL_ATTENTION_WINDOW]
    l1 = {0: Grid([Bitmap(8, 3), Bitmap(8, 3)])}
    l2 = {0: Grid([Bitmap(8, 8), Bitmap(8, 8)])}
    plan = bitplan.plan_load(windows, 8, l1, l2)
    assert plan.hit == 8
    assert plan.merged().popcount() == 16 and plan.planned_count() == 16
    assert plan.l1[0].popcount() == 6 and plan.l2[0].popcount() == 10
    assert bitplan.DefaultGridPolicy().plan_load(windows, 8, l1, l2).hit == 8


def test_pickling_round_trips():
    bitmap = Bitmap.from_bytes(128, bytes(range(16)))
    grid = Grid([Bitmap(100, 33), Bitmap(100, 99)])
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(bitmap, protocol)) == bitmap
        assert pickle.loads(pickle.dumps(grid, protocol)) == grid
    # A plan as select_load_plan returns it: a dict of bitmaps.
    lookup = {0: Bitmap(1000, 300), 1: Bitmap(1000, 900)}
    plan = bitplan.create_prefetch_policy("default").select_load_plan(1000, lookup, [AdapterDescriptor(0), AdapterDescriptor(1)])
    assert pickle.loads(pickle.dumps(plan)) == plan
    for trim in bitplan.TrimPolicy:
        assert pickle.loads(pickle.dumps(trim)) is trim


def test_numpy_paths():
    import numpy

    bitmap = Bitmap(200, 130)
    assert numpy.frombuffer(bitmap, dtype=numpy.uint64).size == 4
    assert bitmap.indices_array().tolist() == list(range(130))


if __name__ == "__main__":
    tests = [value for name, value in sorted(globals().items()) if name.startswith("test_")]
    for test in tests:
        test()
        print(f"ok {test.__name__}")
    print(
        f"{len(tests)} passed, 0 failed: bitplan {bitplan.__version__} on {bitplan.active_kernel()}, "
        f"Python {sys.version.split()[0]}"
    )
