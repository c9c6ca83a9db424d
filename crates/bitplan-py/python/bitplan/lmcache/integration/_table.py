"""Every name the switch replaces, in one table (``docs/LMCACHE.md`` lists
it; a test holds the two equal).

Order matters for the modules imported before the switch: a module whose
names another module imported comes first, so that the other module's
original is recorded as LMCache's object, not bitplan's.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from bitplan.lmcache.integration._switch import Replacement

_D = "lmcache.v1.distributed"


def _attr(module: str, name: str) -> Callable[[], Any]:
    return lambda: getattr(importlib.import_module(module), name)


_BITMAP = _attr("bitplan.lmcache.native", "Bitmap")
_BITMAP2D = _attr("bitplan.lmcache.grids", "Bitmap2D")
_MAPSTATE = _attr("bitplan.lmcache.grids", "MapState")
_INTEGRATION = "bitplan.lmcache.integration"


def _bitmap_in(module: str, why: str) -> Replacement:
    return Replacement(module, "Bitmap", _BITMAP, why)


# The L2 adapters that import LMCache's Bitmap at module level (their
# lookups answer with it).
_ADAPTERS = (
    "mock_l2_adapter",
    "fs_l2_adapter",
    "native_connector_l2_adapter",
    "s3_l2_adapter",
    "sagemaker_hyperpod_l2_adapter",
    "bigtable_l2_adapter",
    "dax_l2_adapter",
    "serde_wrapper",
    "nixl_store_l2_adapter",
    "nixl_store_dynamic_l2_adapter",
    "valkey_l2_adapter",
    "hfbucket_l2_adapter",
    "p2p_l2_adapter",
)

REPLACEMENTS: tuple[Replacement, ...] = (
    # The bitmap and the fold kernels.
    _bitmap_in(f"{_D}.bitmap_ops.fold", "the bitmap the fold wrappers build (merge_bitmaps) and check"),
    Replacement(f"{_D}.bitmap_ops.fold", "_native_fold", _attr("bitplan.lmcache.native", "fold"), "the flat fold kernel"),
    Replacement(
        f"{_D}.bitmap_ops.fold", "_native_unfold", _attr("bitplan.lmcache.native", "unfold"), "the flat unfold kernel"
    ),
    Replacement(
        f"{_D}.bitmap_ops.fold",
        "_native_fold_grouped",
        _attr("bitplan.lmcache.native", "fold_grouped"),
        "the grouped fold kernel (fold_grouped, fold_unfold_grouped)",
    ),
    Replacement(
        f"{_D}.bitmap_ops.fold",
        "_native_unfold_grouped",
        _attr("bitplan.lmcache.native", "unfold_grouped"),
        "the grouped unfold kernel",
    ),
    # The grids.
    _bitmap_in(f"{_D}.storage_controllers.utils", "the rows of Bitmap2D"),
    Replacement(f"{_D}.storage_controllers.utils", "Bitmap2D", _BITMAP2D, "the request grid: one buffer, native operators"),
    Replacement(f"{_D}.storage_controllers.utils", "MapState", _MAPSTATE, "index -> grid maps, native merge"),
    Replacement(f"{_D}.storage_controllers.prefetch_policy", "Bitmap2D", _BITMAP2D, "the grids LMCache's own policies use"),
    Replacement(f"{_D}.storage_controllers.prefetch_policy", "MapState", _MAPSTATE, "the maps LMCache's own policies use"),
    _bitmap_in(f"{_D}.storage_controllers.prefetch_controller", "the controller's flat bitmaps"),
    Replacement(f"{_D}.storage_controllers.prefetch_controller", "Bitmap2D", _BITMAP2D, "the controller's grids"),
    Replacement(f"{_D}.storage_controllers.prefetch_controller", "MapState", _MAPSTATE, "the controller's maps"),
    Replacement(
        f"{_D}.storage_controllers.prefetch_controller",
        "PrefetchKeyState",
        _attr(f"{_INTEGRATION}.requests", "PrefetchKeyState"),
        "a request's key states, over bitplan's maps",
    ),
    Replacement(
        f"{_D}.storage_controllers.prefetch_controller",
        "_build_request",
        _attr(f"{_INTEGRATION}.requests", "build_request"),
        "makes a request's records over bitplan's maps",
    ),
    # The prefetch policies, in LMCache's registry.
    Replacement(
        f"{_D}.storage_controllers.prefetch_policy",
        "_PREFETCH_POLICY_REGISTRY",
        _attr(f"{_INTEGRATION}.policies", "DefaultPrefetchPolicy"),
        "LMCache's default policy, planned natively",
        item="default",
    ),
    Replacement(
        f"{_D}.storage_controllers.prefetch_policy",
        "_PREFETCH_POLICY_REGISTRY",
        _attr(f"{_INTEGRATION}.policies", "RetainPrefetchPolicy"),
        "LMCache's retain policy, planned natively",
        item="retain",
    ),
    Replacement(
        f"{_D}.storage_controllers.prefetch_policy",
        "_PREFETCH_POLICY_REGISTRY",
        _attr(f"{_INTEGRATION}.policies", "BalancedPrefetchPolicy"),
        "bitplan's balanced policy (new name)",
        item="balanced",
    ),
    # The eviction policies.
    Replacement(
        f"{_D}.eviction_policy.factory",
        "CreateEvictionPolicy",
        _attr(f"{_INTEGRATION}.eviction", "CreateEvictionPolicy"),
        "LRU, ARC, IsolatedLRU, noop native; S3FIFO added",
    ),
    Replacement(
        f"{_D}.eviction_policy",
        "CreateEvictionPolicy",
        _attr(f"{_INTEGRATION}.eviction", "CreateEvictionPolicy"),
        "the package's re-export of the factory",
    ),
    Replacement(
        f"{_D}.storage_controllers.eviction_controller",
        "CreateEvictionPolicy",
        _attr(f"{_INTEGRATION}.eviction", "CreateEvictionPolicy"),
        "the factory the L1 and L2 eviction controllers call",
    ),
    # The L1 manager's books and the prefetch controller's per-key work.
    Replacement(
        f"{_D}.storage_manager",
        "L1Manager",
        _attr(f"{_INTEGRATION}.l1_manager", "BitplanL1Manager"),
        "L1Manager with its books in bitplan (LMCache's memory manager kept)",
    ),
    Replacement(
        f"{_D}.storage_manager",
        "PrefetchController",
        _attr(f"{_INTEGRATION}.prefetch_controller", "BitplanPrefetchController"),
        "the prefetch controller, each phase a native call",
    ),
    # The L2 adapters' lookups.
    *(_bitmap_in(f"{_D}.l2_adapters.{name}", "the adapter's lookup and load answers") for name in _ADAPTERS),
    # The multiprocess server's modules.
    _bitmap_in("lmcache.v1.multiprocess.modules.blend.lookup", "the blend lookup's bitmaps"),
    _bitmap_in("lmcache.v1.multiprocess.modules.p2p_controller", "the P2P controller's bitmaps"),
)
