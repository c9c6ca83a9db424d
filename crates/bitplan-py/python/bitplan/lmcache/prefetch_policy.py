"""A drop-in for LMCache's prefetch-policy module: the flat
``select_load_plan`` API of the original policy file and the grid
``plan_load`` API of the v2 controller, with LMCache's ``Bitmap2D`` and
``MapState`` containers.

The plans are computed by bitplan's Rust engine; these classes only adapt
LMCache's argument types to it.
"""

from __future__ import annotations

import dataclasses
import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from bitplan import _native
from bitplan._registry import PolicyRegistry
from bitplan.lmcache.grids import Bitmap2D, MapState
from bitplan.lmcache.native import Bitmap

_lm = _native.lmcache
logger = logging.getLogger(__name__)

FetchingPolicy = Literal["prefix", "full"]
FULL_ATTENTION_WINDOW_CHUNKS: int = _native.FULL_ATTENTION_WINDOW


# ---------------------------------------------------------------------------
# Descriptors and key groups
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class AdapterDescriptor:
    """An L2 adapter as the flat ``select_load_plan`` sees it."""

    index: int
    name: str = ""
    weight: float = 1.0


@dataclasses.dataclass(frozen=True)
class _TierDescriptor:
    index: int
    config: Any = None

    @property
    def type_name(self) -> str:
        """The name of the tier's config class."""
        return type(self.config).__name__


@dataclasses.dataclass(frozen=True)
class L1ManagerDescriptor(_TierDescriptor):
    """An L1 manager of the grid ``plan_load``."""


@dataclasses.dataclass(frozen=True)
class L2AdapterDescriptor(_TierDescriptor):
    """An L2 adapter of the grid ``plan_load``."""


@dataclasses.dataclass
class GroupedObjectKeys:
    """One row of a request: the keys of one object group (and rank), in
    chunk order, and the group's sliding window (``-1``: full attention)."""

    keys: list[Any]
    object_group_id: int = 0
    layout_desc: Any = None
    sliding_window_size: int = -1

    def __post_init__(self) -> None:
        if self.sliding_window_size != -1 and self.sliding_window_size < 1:
            raise ValueError(
                f"sliding_window_size must be -1 (full attention) or >= 1, got {self.sliding_window_size}"
            )


# ---------------------------------------------------------------------------
# Bitmap2D and MapState
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class PrefetchPlan:
    """What each L1 manager and each L2 adapter loads."""

    l1_planned_keys: MapState = dataclasses.field(default_factory=MapState)
    l2_planned_keys: MapState = dataclasses.field(default_factory=MapState)


# ---------------------------------------------------------------------------
# Policies
# ---------------------------------------------------------------------------


class PrefetchPolicy(ABC):
    """LMCache's policy interface: the flat ``select_load_plan`` (v1) and
    the grid ``plan_load`` (v2), with their L1 retention decisions."""

    @abstractmethod
    def select_load_plan(
        self,
        keys: Sequence[Any],
        lookup_results: dict[int, Bitmap],
        adapters: Sequence[Any],
    ) -> dict[int, Bitmap]:
        """Adapter index -> the keys it loads: disjoint, within the lookups."""

    def select_l1_retentions(self, keys: Sequence[Any]) -> list[bool]:
        """One flag per key: ``True`` keeps it in L1. Default: none."""
        return [False] * len(keys)

    def plan_load(
        self,
        key_groups: Sequence[GroupedObjectKeys],
        l1_locked_keys: MapState,
        l2_locked_keys: MapState,
        l1_manager_descs: Mapping[int, L1ManagerDescriptor],
        l2_adapter_descs: Mapping[int, L2AdapterDescriptor],
        fetching_policy: FetchingPolicy = "prefix",
    ) -> PrefetchPlan:
        """The grid plan (first tier wins, L1 before L2, lower index first).
        Pure and total: bad input gives an empty plan and an error log."""
        return _plan_load(key_groups, l1_locked_keys, l2_locked_keys, l1_manager_descs, l2_adapter_descs, fetching_policy)

    def plan_l1_retention(
        self,
        keys: Sequence[Any],
        l1_manager_desc: L1ManagerDescriptor | None = None,
        l2_adapter_desc: L2AdapterDescriptor | None = None,
    ) -> list[bool]:
        """One flag per key loaded from ``l2_adapter_desc``: ``True`` keeps it in L1."""
        return [False] * len(keys)


class DefaultPrefetchPolicy(PrefetchPolicy):
    """Each key from the lowest-indexed adapter that has it; nothing retained."""

    def select_load_plan(
        self,
        keys: Sequence[Any],
        lookup_results: dict[int, Bitmap],
        adapters: Sequence[Any],
    ) -> dict[int, Bitmap]:
        return _select_first_wins(keys, lookup_results, adapters)


class RetainPrefetchPolicy(DefaultPrefetchPolicy):
    """As ``default``; every prefetched key is retained in L1."""

    def select_l1_retentions(self, keys: Sequence[Any]) -> list[bool]:
        return [True] * len(keys)

    def plan_l1_retention(
        self,
        keys: Sequence[Any],
        l1_manager_desc: L1ManagerDescriptor | None = None,
        l2_adapter_desc: L2AdapterDescriptor | None = None,
    ) -> list[bool]:
        return [True] * len(keys)


_select_first_wins = _lm.select_first_wins


def _empty_plan(reason: str) -> PrefetchPlan:
    logger.error("plan_load: %s; returning an empty plan", reason)
    return PrefetchPlan()


def _plan_load(
    key_groups: Sequence[GroupedObjectKeys],
    l1_locked_keys: MapState,
    l2_locked_keys: MapState,
    l1_manager_descs: Mapping[int, L1ManagerDescriptor],
    l2_adapter_descs: Mapping[int, L2AdapterDescriptor],
    fetching_policy: str,
) -> PrefetchPlan:
    # One native call reads the windows, the locked maps and the
    # descriptors, plans, and makes the planned maps.
    try:
        l1, l2, _hit = _lm.plan_load_state(
            key_groups, l1_locked_keys, l2_locked_keys, l1_manager_descs, l2_adapter_descs, fetching_policy
        )
    except (ValueError, TypeError, AttributeError) as error:
        return _empty_plan(str(error))
    return PrefetchPlan(l1, l2)


# ---------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------

# LMCache's registry: no type checks (any callable that makes a policy
# will do), and only its two built-ins.
_PREFETCH_POLICY_REGISTRY: PolicyRegistry[PrefetchPolicy] = PolicyRegistry()


def register_prefetch_policy(name: str, policy_cls: type[PrefetchPolicy]) -> None:
    """Registers a policy class under a name (``ValueError`` if taken)."""
    _PREFETCH_POLICY_REGISTRY.register(name, policy_cls)


def get_registered_prefetch_policies() -> list[str]:
    """The registered policy names."""
    return _PREFETCH_POLICY_REGISTRY.names()


def create_prefetch_policy(name: str) -> PrefetchPolicy:
    """A new instance of the named policy (``ValueError`` if unknown)."""
    return _PREFETCH_POLICY_REGISTRY.create(name)


register_prefetch_policy("default", DefaultPrefetchPolicy)
register_prefetch_policy("retain", RetainPrefetchPolicy)

__all__ = [
    "FULL_ATTENTION_WINDOW_CHUNKS",
    "AdapterDescriptor",
    "Bitmap",
    "Bitmap2D",
    "DefaultPrefetchPolicy",
    "FetchingPolicy",
    "GroupedObjectKeys",
    "L1ManagerDescriptor",
    "L2AdapterDescriptor",
    "MapState",
    "PrefetchPlan",
    "PrefetchPolicy",
    "RetainPrefetchPolicy",
    "create_prefetch_policy",
    "get_registered_prefetch_policies",
    "register_prefetch_policy",
]
