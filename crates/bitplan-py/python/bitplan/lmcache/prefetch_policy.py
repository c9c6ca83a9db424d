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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal

from bitplan import _native
from bitplan._registry import PolicyRegistry
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


class Bitmap2D:
    """Rows of LMCache bitmaps of one width. The operators return new
    grids; their in-place forms rebind the rows to new bitmaps, so a row
    object handed out before is never changed by them."""

    __slots__ = ("_rows",)

    def __init__(self, rows: Iterable[Bitmap]) -> None:
        rows = list(rows)
        if rows:
            width = rows[0].size()
            for i, row in enumerate(rows):
                if row.size() != width:
                    raise ValueError(f"row {i} has {row.size()} bits, but row 0 has {width}")
        self._rows: list[Bitmap] = rows

    @classmethod
    def zeros(cls, num_rows: int, num_cols: int) -> Bitmap2D:
        if num_rows < 0 or num_cols < 0:
            raise ValueError(f"a grid shape must not be negative, got ({num_rows}, {num_cols})")
        return cls(Bitmap(num_cols) for _ in range(num_rows))

    def copy(self) -> Bitmap2D:
        return Bitmap2D(row.copy() for row in self._rows)

    def zeros_like(self) -> Bitmap2D:
        return Bitmap2D.zeros(*self.size())

    def ones_like(self) -> Bitmap2D:
        rows, cols = self.size()
        return Bitmap2D(Bitmap(cols, cols) for _ in range(rows))

    def size(self) -> tuple[int, int]:
        """``(rows, columns)``; ``(0, 0)`` for no rows."""
        if not self._rows:
            return (0, 0)
        return (len(self._rows), self._rows[0].size())

    def popcount(self) -> int:
        return _lm.rows_popcount(self._rows)

    def to_list(self) -> list[Bitmap]:
        """A new list of the same row objects."""
        return list(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[Bitmap]:
        return iter(self._rows)

    def __getitem__(self, row: int) -> Bitmap:
        return self._rows[row]

    def __repr__(self) -> str:
        return f"Bitmap2D({self._rows!r})"

    def _check(self, other: Bitmap2D) -> None:
        if not isinstance(other, Bitmap2D):
            raise TypeError(f"expected a Bitmap2D, got {type(other).__name__}")
        if self.size() != other.size():
            raise ValueError(f"shape mismatch: {self.size()} and {other.size()}")

    def __add__(self, other: Bitmap2D) -> Bitmap2D:
        self._check(other)
        return Bitmap2D(_lm.rows_or(self._rows, other._rows))

    def __sub__(self, other: Bitmap2D) -> Bitmap2D:
        self._check(other)
        return Bitmap2D(_lm.rows_and_not(self._rows, other._rows))

    def __and__(self, other: Bitmap2D) -> Bitmap2D:
        self._check(other)
        return Bitmap2D(_lm.rows_and(self._rows, other._rows))

    def __iadd__(self, other: Bitmap2D) -> Bitmap2D:
        self._check(other)
        self._rows = _lm.rows_or(self._rows, other._rows)
        return self

    def __isub__(self, other: Bitmap2D) -> Bitmap2D:
        self._check(other)
        self._rows = _lm.rows_and_not(self._rows, other._rows)
        return self

    def __iand__(self, other: Bitmap2D) -> Bitmap2D:
        self._check(other)
        self._rows = _lm.rows_and(self._rows, other._rows)
        return self


class MapState:
    """Index (L1 manager or L2 adapter) -> ``Bitmap2D``, all of one shape."""

    __slots__ = ("_grids",)

    def __init__(self, grids: Mapping[int, Bitmap2D] | None = None) -> None:
        self._grids: dict[int, Bitmap2D] = {}
        for index, grid in (grids or {}).items():
            self[index] = grid

    def _shape(self) -> tuple[int, int] | None:
        for grid in self._grids.values():
            return grid.size()
        return None

    def __setitem__(self, index: int, grid: Bitmap2D) -> None:
        if not isinstance(grid, Bitmap2D):
            raise TypeError(f"expected a Bitmap2D, got {type(grid).__name__}")
        if len(grid) == 0:
            raise ValueError("a MapState entry must not be an empty grid")
        shape = self._shape()
        if shape is not None and grid.size() != shape and not (len(self._grids) == 1 and index in self._grids):
            raise ValueError(f"shape mismatch: entry {index} is {grid.size()}, the map's grids are {shape}")
        self._grids[index] = grid

    def __getitem__(self, index: int) -> Bitmap2D:
        return self._grids[index]

    def get(self, index: int, default: Bitmap2D | None = None) -> Bitmap2D | None:
        return self._grids.get(index, default)

    def __delitem__(self, index: int) -> None:
        del self._grids[index]

    def __contains__(self, index: object) -> bool:
        return index in self._grids

    def __len__(self) -> int:
        return len(self._grids)

    def __iter__(self) -> Iterator[int]:
        return iter(self._grids)

    def keys(self):  # noqa: ANN201 - a dict view
        return self._grids.keys()

    def items(self):  # noqa: ANN201 - a dict view
        return self._grids.items()

    def values(self):  # noqa: ANN201 - a dict view
        return self._grids.values()

    def __repr__(self) -> str:
        return f"MapState({self._grids!r})"

    def copy(self) -> MapState:
        out = MapState()
        out._grids = {index: grid.copy() for index, grid in self._grids.items()}
        return out

    def merge(self) -> Bitmap2D:
        """The union of every entry; ``Bitmap2D([])`` for an empty map."""
        if not self._grids:
            return Bitmap2D([])
        return Bitmap2D(_lm.merge_grids([grid._rows for grid in self._grids.values()]))

    def _check(self, other: MapState) -> None:
        if not isinstance(other, MapState):
            raise TypeError(f"expected a MapState, got {type(other).__name__}")
        mine, theirs = self._shape(), other._shape()
        if mine is not None and theirs is not None and mine != theirs:
            raise ValueError(f"shape mismatch: {mine} and {theirs}")

    def __add__(self, other: MapState) -> MapState:
        out = self.copy()
        out += other
        return out

    def __iadd__(self, other: MapState) -> MapState:
        self._check(other)
        for index, grid in other._grids.items():
            mine = self._grids.get(index)
            self._grids[index] = grid.copy() if mine is None else mine + grid
        return self

    def __sub__(self, other: MapState) -> MapState:
        out = self.copy()
        out -= other
        return out

    def __isub__(self, other: MapState) -> MapState:
        self._check(other)
        for index, grid in self._grids.items():
            theirs = other._grids.get(index)
            if theirs is not None:
                self._grids[index] = grid - theirs
        return self


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
    try:
        if not key_groups:
            return _empty_plan("no key groups")
        shape = (len(key_groups), len(key_groups[0].keys))
        windows = [group.sliding_window_size for group in key_groups]
        tiers = []
        for name, locked, descs in (
            ("L1", l1_locked_keys, l1_manager_descs),
            ("L2", l2_locked_keys, l2_adapter_descs),
        ):
            # Every entry of a MapState has its shape; an empty map is all zeros.
            merged_shape = locked._shape() or shape
            if merged_shape != shape:
                return _empty_plan(f"the {name} grids have shape {merged_shape}, the key groups {shape}")
            tiers.append({index: locked[index].to_list() for index in sorted(descs) if index in locked})
        l1, l2, _hit = _lm.plan_load_rows(windows, shape[1], tiers[0], tiers[1], fetching_policy)
    except (ValueError, TypeError, AttributeError) as error:
        return _empty_plan(str(error))
    plan = PrefetchPlan()
    for index, rows in l1.items():
        plan.l1_planned_keys[index] = Bitmap2D(rows)
    for index, rows in l2.items():
        plan.l2_planned_keys[index] = Bitmap2D(rows)
    return plan


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
