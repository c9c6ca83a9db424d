"""Issue #19, item 4: run LMCache's own, unchanged tests of ``Bitmap2D``,
``MapState`` and the grid prefetch policies against bitplan.

``install()`` puts ``sys.modules`` entries for every ``lmcache.*`` module
that the two test files import, each mapped to bitplan's equivalent:

================================================================  =====================================
LMCache                                                           here
================================================================  =====================================
``lmcache.lmcache_native`` (and ``native_storage_ops``)           ``bitplan.lmcache.native``
``lmcache.v1.distributed.bitmap_ops`` (and ``.fold``)             ``bitplan.lmcache.bitmap_ops``
``...storage_controllers.prefetch_policy_v2``                     ``bitplan.lmcache.prefetch_policy``
``...storage_controllers.utils``: Bitmap2D, MapState, descriptors ``bitplan.lmcache.prefetch_policy``
``lmcache.v1.distributed.api``: GroupedObjectKeys, FetchingPolicy, ``bitplan.lmcache.prefetch_policy``
FULL_ATTENTION_WINDOW_CHUNKS
================================================================  =====================================

What bitplan does not have, because it is LMCache's configuration and key
code and no bitmap, is a small stand-in here: ``ObjectKey``,
``MemoryLayoutDesc``, ``L1BackendType``, the L1 and mock-L2 config
classes, and a ``torch`` that has only ``Size`` and the dtypes (the policy
test imports torch for ``MemoryLayoutDesc(shapes=[torch.Size(...)],
dtypes=[torch.float16])`` and nothing else). A real torch is used when it
is installed.

The four ``TestL1ManagerDescriptor`` tests of ``backend_types`` are
deselected: that property reads LMCache's L1 memory configuration
(``get_configured_capacity_bytes``), which is config code, not bitmaps.

Used two ways: as a pytest plugin (``-p lmcache_shim``, what
``scripts/lmcache-upstream-tests`` runs), or from this directory's
conftest when ``LMCACHE_TESTS_DIR`` is set.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib.util
import sys
import types
from typing import Any

# The files, at the commits issue #19 names.
UPSTREAM_FILES = {
    "test_storage_controller_utils.py": "a7e41d39bb0d0abe5feb27b61f924f01b5b497ac",
    "test_prefetch_policy_v2.py": "d2d85ea51c1524f10fe803deb685f53062357071",
}

DESELECTED = {
    "test_storage_controller_utils.py::TestL1ManagerDescriptor::test_dram_backend_by_default",
    "test_storage_controller_utils.py::TestL1ManagerDescriptor::test_pure_devdax_backend",
    "test_storage_controller_utils.py::TestL1ManagerDescriptor::test_hybrid_devdax_spans_two_media",
    "test_storage_controller_utils.py::TestL1ManagerDescriptor::test_gds_backend_from_gds_config",
}
DESELECT_REASON = (
    "L1ManagerDescriptor.backend_types is LMCache's L1 configuration code "
    "(get_configured_capacity_bytes), not bitmaps; issue #19 item 4 lets it be skipped"
)


# ---------------------------------------------------------------------------
# Stand-ins for LMCache's non-bitmap types (only what the two files use)
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ObjectKey:
    chunk_hash: bytes
    model_name: str = ""
    kv_rank: int = 0
    object_group_id: int = 0
    cache_salt: str = ""

    @staticmethod
    def IntHash2Bytes(value: int) -> bytes:  # noqa: N802 - LMCache's name
        return int(value).to_bytes(8, "little", signed=True)


@dataclasses.dataclass(frozen=True)
class MemoryLayoutDesc:
    shapes: list
    dtypes: list


class L1BackendType(enum.Enum):
    DRAM = "dram"
    DEVDAX = "devdax"
    GDS = "gds"


@dataclasses.dataclass
class L1MemoryManagerConfig:
    size_in_bytes: int = 0
    use_lazy: bool = False
    shm_name: str = ""
    devdax_path: str | None = None
    devdax_size_in_bytes: int = 0


@dataclasses.dataclass
class GdsL1Config:
    file_location: str = ""
    size_in_bytes: int = 0


@dataclasses.dataclass
class L1ManagerConfig:
    memory_config: Any = None
    gds_l1_config: Any = None


@dataclasses.dataclass
class MockL2AdapterConfig:
    max_size_gb: float = 0.0
    mock_bandwidth_gb: float = 0.0


def _torch_stand_in() -> types.ModuleType:
    torch = types.ModuleType("torch")
    torch.__doc__ = "bitplan's stand-in: only Size and dtypes, for LMCache's policy tests"

    class Size(tuple):
        pass

    class dtype:  # noqa: N801 - torch's name
        def __init__(self, name: str) -> None:
            self.name = name

        def __repr__(self) -> str:
            return f"torch.{self.name}"

    torch.Size = Size
    torch.dtype = dtype
    for name in ("float16", "bfloat16", "float32", "float64", "uint8", "int8", "int32", "int64"):
        setattr(torch, name, dtype(name))
    torch.half, torch.float = torch.float16, torch.float32
    return torch


# ---------------------------------------------------------------------------
# sys.modules
# ---------------------------------------------------------------------------


def _module(name: str, **attrs: Any) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    mod.__path__ = []  # every entry may be a package parent
    return mod


def install() -> None:
    """Install the ``lmcache.*`` (and, without a real torch, ``torch``) modules."""
    if getattr(sys.modules.get("lmcache"), "__bitplan_shim__", False):
        return
    from bitplan.lmcache import bitmap_ops, native
    from bitplan.lmcache import prefetch_policy as pp

    api = _module(
        "lmcache.v1.distributed.api",
        FULL_ATTENTION_WINDOW_CHUNKS=pp.FULL_ATTENTION_WINDOW_CHUNKS,
        FetchingPolicy=pp.FetchingPolicy,
        GroupedObjectKeys=pp.GroupedObjectKeys,
        MemoryLayoutDesc=MemoryLayoutDesc,
        ObjectKey=ObjectKey,
        L1BackendType=L1BackendType,
    )
    utils = _module(
        "lmcache.v1.distributed.storage_controllers.utils",
        Bitmap=native.Bitmap,
        Bitmap2D=pp.Bitmap2D,
        MapState=pp.MapState,
        L1ManagerDescriptor=pp.L1ManagerDescriptor,
        L2AdapterDescriptor=pp.L2AdapterDescriptor,
    )
    modules = {
        "lmcache": _module("lmcache", __bitplan_shim__=True),
        "lmcache.lmcache_native": native,
        "lmcache.native_storage_ops": native,
        "lmcache.v1": _module("lmcache.v1"),
        "lmcache.v1.distributed": _module("lmcache.v1.distributed"),
        "lmcache.v1.distributed.api": api,
        "lmcache.v1.distributed.bitmap_ops": bitmap_ops,
        "lmcache.v1.distributed.bitmap_ops.fold": bitmap_ops,
        "lmcache.v1.distributed.config": _module(
            "lmcache.v1.distributed.config",
            L1ManagerConfig=L1ManagerConfig,
            L1MemoryManagerConfig=L1MemoryManagerConfig,
            GdsL1Config=GdsL1Config,
        ),
        "lmcache.v1.distributed.l2_adapters": _module("lmcache.v1.distributed.l2_adapters"),
        "lmcache.v1.distributed.l2_adapters.mock_l2_adapter": _module(
            "lmcache.v1.distributed.l2_adapters.mock_l2_adapter", MockL2AdapterConfig=MockL2AdapterConfig
        ),
        "lmcache.v1.distributed.storage_controllers": _module("lmcache.v1.distributed.storage_controllers"),
        "lmcache.v1.distributed.storage_controllers.utils": utils,
        "lmcache.v1.distributed.storage_controllers.prefetch_policy_v2": pp,
    }
    # Parents carry their children as attributes, as a real import would.
    for name, mod in modules.items():
        parent, _, child = name.rpartition(".")
        if parent in modules and modules[parent] is not mod:
            setattr(modules[parent], child, mod)
    sys.modules.update(modules)
    if "torch" not in sys.modules and importlib.util.find_spec("torch") is None:
        sys.modules["torch"] = _torch_stand_in()


# ---------------------------------------------------------------------------
# pytest plugin hooks
# ---------------------------------------------------------------------------


def _deselected(nodeid: str) -> bool:
    # the file's part of the nodeid is a path (plugin use) or a name nested
    # under test_upstream.py (conftest use): match from the file name on
    return any(nodeid == d or nodeid.endswith(("/" + d, "::" + d)) for d in DESELECTED)


def pytest_configure(config) -> None:  # noqa: ANN001
    install()


def pytest_report_header(config) -> str:  # noqa: ANN001
    return "lmcache_shim: lmcache.* -> bitplan.lmcache (" + ", ".join(f"{f}@{c[:8]}" for f, c in UPSTREAM_FILES.items()) + ")"


def pytest_collection_modifyitems(config, items) -> None:  # noqa: ANN001
    keep, drop = [], []
    for item in items:
        (drop if _deselected(item.nodeid) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"lmcache_shim: deselected {len(drop)} test(s): {DESELECT_REASON}")
