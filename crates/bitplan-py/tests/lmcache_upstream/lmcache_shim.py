"""Issue #19, item 4: run LMCache's own, unchanged tests of ``Bitmap2D``,
``MapState`` and the grid prefetch policies against bitplan; and issue #29,
item 2: its tests of the eviction policies (LRU, chunk-coherent LRU and
isolated LRU, ARC).

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
``lmcache.v1.distributed.api``: ObjectKey                         ``bitplan.lmcache.eviction_policy``
``lmcache.v1.distributed.eviction`` and ``.eviction_policy``      ``bitplan.lmcache.eviction_policy``
``...internal_api``: EvictionAction, EvictionDestination          ``bitplan.lmcache.eviction_policy``
``...config``: EvictionConfig                                     ``bitplan.lmcache.eviction_policy``
================================================================  =====================================

What bitplan does not have, because it is LMCache's configuration code and
no bitmap, is a small stand-in here: ``MemoryLayoutDesc``, ``L1BackendType``, the L1 and mock-L2 config
classes, and a ``torch`` that has only ``Size`` and the dtypes (the policy
test imports torch for ``MemoryLayoutDesc(shapes=[torch.Size(...)],
dtypes=[torch.float16])`` and nothing else). A real torch is used when it
is installed.

The four ``TestL1ManagerDescriptor`` tests of ``backend_types`` are
deselected: that property reads LMCache's L1 memory configuration
(``get_configured_capacity_bytes``), which is config code, not bitmaps.
So are the ARC file's two command-line tests (``test_l1_cli_accepts_arc``,
``test_l2_adapter_config_accepts_arc``): they exercise LMCache's argument
parsers (``add_storage_manager_args``, ``add_l2_adapters_args``), not a
policy; the shim's parsers are stand-ins that only let the file import.

The files come in groups (:data:`UPSTREAM_GROUPS`); a directory runs every
group whose files it holds, and must hold at least one group whole.

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

# The files, at the commits the issues name. The LRU suite is the version
# with `TestLRUEvictionPolicyKeyEligibleFilter` (16,430 bytes, sha256
# 227c72b6...), the newest stored one; its commit is not recorded.
UPSTREAM_GROUPS = {
    "bitmaps (issue #19)": {
        "test_storage_controller_utils.py": "a7e41d39bb0d0abe5feb27b61f924f01b5b497ac",
        "test_prefetch_policy_v2.py": "d2d85ea51c1524f10fe803deb685f53062357071",
    },
    "eviction (issue #29)": {
        "test_lru_eviction_policy.py": "fafc2861+, with the key-filter class",
        "test_chunk_coherent_lru_eviction.py": "d18cdadcd811f77969d1750cb6d1996cd81bd749",
        "test_arc_eviction_policy.py": "142d02a18b0021fc33012f746a9727d86a959765",
    },
}
UPSTREAM_FILES = {name: commit for group in UPSTREAM_GROUPS.values() for name, commit in group.items()}

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
DESELECTED_CLI = {
    "test_arc_eviction_policy.py::TestARCConfiguration::test_l1_cli_accepts_arc",
    "test_arc_eviction_policy.py::TestARCConfiguration::test_l2_adapter_config_accepts_arc",
}
DESELECT_CLI_REASON = (
    "the ARC file's command-line tests exercise LMCache's config parsers, not a policy; "
    "issue #29's notes let them be deselected"
)


def present_groups(base) -> list[str]:  # noqa: ANN001 - a pathlib.Path
    """The groups whose files are all in ``base``; ``ValueError`` for a
    group only partly there, or for none at all."""
    present = []
    for group, files in UPSTREAM_GROUPS.items():
        there = [name for name in files if (base / name).is_file()]
        if there and len(there) != len(files):
            missing = sorted(set(files) - set(there))
            raise ValueError(f"{base} has part of the {group} files: no {', '.join(missing)}")
        if there:
            present.append(group)
    if not present:
        raise ValueError(f"{base} holds no group of LMCache's test files: {', '.join(UPSTREAM_FILES)}")
    return present


# ---------------------------------------------------------------------------
# Stand-ins for LMCache's non-bitmap types (only what the two files use)
# ---------------------------------------------------------------------------


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


def _config_parsers_stand_in(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError("LMCache's command-line config parsers are not part of bitplan (deselected tests)")


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
    from bitplan.lmcache import eviction_policy as ev
    from bitplan.lmcache import prefetch_policy as pp

    api = _module(
        "lmcache.v1.distributed.api",
        FULL_ATTENTION_WINDOW_CHUNKS=pp.FULL_ATTENTION_WINDOW_CHUNKS,
        FetchingPolicy=pp.FetchingPolicy,
        GroupedObjectKeys=pp.GroupedObjectKeys,
        MemoryLayoutDesc=MemoryLayoutDesc,
        ObjectKey=ev.ObjectKey,
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
            EvictionConfig=ev.EvictionConfig,
            add_storage_manager_args=_config_parsers_stand_in,
            parse_args_to_config=_config_parsers_stand_in,
        ),
        "lmcache.v1.distributed.eviction": _module(
            "lmcache.v1.distributed.eviction",
            EvictionPolicy=ev.EvictionPolicy,
            L1EvictionPolicy=ev.L1EvictionPolicy,
            L2EvictionPolicy=ev.L2EvictionPolicy,
        ),
        "lmcache.v1.distributed.eviction_policy": _module(
            "lmcache.v1.distributed.eviction_policy",
            ARCEvictionPolicy=ev.ARCEvictionPolicy,
            CreateEvictionPolicy=ev.CreateEvictionPolicy,
            IsolatedLRUEvictionPolicy=ev.IsolatedLRUEvictionPolicy,
            LRUEvictionPolicy=ev.LRUEvictionPolicy,
            NoOpEvictionPolicy=ev.NoOpEvictionPolicy,
            S3FIFOEvictionPolicy=ev.S3FIFOEvictionPolicy,
        ),
        "lmcache.v1.distributed.internal_api": _module(
            "lmcache.v1.distributed.internal_api",
            EvictionAction=ev.EvictionAction,
            EvictionDestination=ev.EvictionDestination,
        ),
        "lmcache.v1.distributed.l2_adapters": _module("lmcache.v1.distributed.l2_adapters"),
        "lmcache.v1.distributed.l2_adapters.config": _module(
            "lmcache.v1.distributed.l2_adapters.config",
            add_l2_adapters_args=_config_parsers_stand_in,
            parse_args_to_l2_adapters_config=_config_parsers_stand_in,
        ),
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


def _matches(nodeid: str, names: set[str]) -> bool:
    # the file's part of the nodeid is a path (plugin use) or a name nested
    # under test_upstream.py (conftest use): match from the file name on
    return any(nodeid == d or nodeid.endswith(("/" + d, "::" + d)) for d in names)


def _deselected(nodeid: str) -> bool:
    return _matches(nodeid, DESELECTED | DESELECTED_CLI)


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
            for names, reason in ((DESELECTED, DESELECT_REASON), (DESELECTED_CLI, DESELECT_CLI_REASON)):
                count = sum(_matches(item.nodeid, names) for item in drop)
                if count:
                    reporter.write_line(f"lmcache_shim: deselected {count} test(s): {reason}")
