"""Type stubs for ``bitplan._native``, the compiled core of :mod:`bitplan`.

Import from :mod:`bitplan` (the Pythonic API) or :mod:`bitplan.lmcache`
(LMCache's API and semantics), not from this module.
"""

import os
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, SupportsIndex, TypeVar, final

import numpy
import numpy.typing

_T = TypeVar("_T")

__version__: str
FULL_ATTENTION_WINDOW: int

#: LMCache's classes and signatures; use them through :mod:`bitplan.lmcache`.
lmcache: types.ModuleType

def active_kernel() -> str:
    """The bitmap-core kernel in use (``"avx512"``, ``"avx2"``, ``"neon"``, ``"portable"``, ``"scalar"``)."""

def available_kernels() -> list[str]:
    """The kernels this CPU can run, slowest first."""

# ---------------------------------------------------------------------------
# The Pythonic bitmap
# ---------------------------------------------------------------------------

class Bitmap:
    """A fixed-length bitmap: ``len(bm)`` bits, each 0 or 1.

    Indices are like a list's: ``-1`` is the last bit, and an index out of
    range raises :class:`IndexError`. Binary operators need equal lengths
    and raise :class:`ValueError` naming both otherwise. The in-place forms
    (``&=``, ``|=``, ``^=``, ``-=``) change the left operand.
    """

    def __init__(self, size: int, prefix: int = 0) -> None:
        """``size`` bits, the first ``prefix`` set. ``ValueError`` if
        ``size < 0`` or ``prefix`` is not in ``[0, size]``; ``MemoryError``
        if the bits cannot be allocated; ``OverflowError`` past 2**64."""
    @staticmethod
    def from_indices(size: int, indices: Iterable[SupportsIndex]) -> Bitmap:
        """``size`` bits with the given indices set (``IndexError`` if one is out of range; negative ones count from the end)."""
    @staticmethod
    def from_bytes(size: int, data: bytes | bytearray | memoryview) -> Bitmap:
        """LMCache's byte layout: ``ceil(size / 8)`` bytes, bit ``i`` in byte ``i // 8`` at bit ``i % 8``.
        ``ValueError`` on another length or a set bit past ``size``."""
    @staticmethod
    def from_bitstring(bits: str) -> Bitmap:
        """The inverse of ``str`` (and of ``repr`` up to 1000 bits): ``"0110"`` has bits 1 and 2 set."""
    @staticmethod
    def from_bools(bools: Iterable[bool]) -> Bitmap: ...

    def __len__(self) -> int: ...
    def set(self, index: SupportsIndex) -> None: ...
    def clear(self, index: SupportsIndex) -> None: ...
    def test(self, index: SupportsIndex) -> bool: ...
    def __getitem__(self, index: SupportsIndex) -> bool: ...
    def __setitem__(self, index: SupportsIndex, value: bool) -> None: ...
    def set_range(self, start: int, end: int) -> None:
        """Sets ``[start, end)``; ``IndexError`` unless ``0 <= start <= end <= len(self)``."""
    def clear_range(self, start: int, end: int) -> None: ...
    def batched_set(self, indices: Iterable[SupportsIndex]) -> None:
        """Sets every index; if one is out of range, raises ``IndexError`` and sets none."""
    def set_all(self) -> None: ...
    def clear_all(self) -> None: ...

    def popcount(self) -> int: ...
    def count_range(self, start: int, end: int) -> int: ...
    def count_leading_zeros(self) -> int:
        """Zeros from bit 0 up; ``len(self)`` if every bit is clear."""
    def count_leading_ones(self) -> int:
        """Ones from bit 0 up: the longest set prefix."""
    def highest_set_bit(self) -> int:
        """The largest set index, ``-1`` if none (as LMCache)."""
    def first_set(self) -> int | None: ...
    def last_set(self) -> int | None: ...
    def any(self) -> bool: ...
    def all(self) -> bool: ...
    def and_popcount(self, other: Bitmap) -> int: ...
    def or_popcount(self, other: Bitmap) -> int: ...
    def xor_popcount(self, other: Bitmap) -> int: ...
    def and_not_popcount(self, other: Bitmap) -> int: ...
    def is_subset(self, other: Bitmap) -> bool: ...
    def is_disjoint(self, other: Bitmap) -> bool: ...

    def __iter__(self) -> Iterator[int]:
        """The set indices, ascending."""
    def get_indices_list(self) -> list[int]: ...
    def indices_array(self) -> numpy.typing.NDArray[numpy.int64]:
        """The set indices as a new int64 numpy array."""
    def gather(self, items: Sequence[_T]) -> list[_T]:
        """``[items[i] for i in self]``; ``ValueError`` unless ``len(items) == len(self)``."""
    def to_bytes(self) -> bytes:
        """LMCache's byte layout (see :meth:`from_bytes`)."""
    def __buffer__(self, flags: int, /) -> memoryview:
        """A read-only view of the 64-bit words (format ``"Q"``, native
        order; bit ``i`` is bit ``i % 64`` of word ``i // 64``), no copy:
        ``numpy.frombuffer(bm, dtype=numpy.uint64)``. While a view is alive
        the bits can still change, but the storage cannot move."""

    def __and__(self, other: Bitmap) -> Bitmap: ...
    def __or__(self, other: Bitmap) -> Bitmap: ...
    def __xor__(self, other: Bitmap) -> Bitmap: ...
    def __sub__(self, other: Bitmap) -> Bitmap:
        """And-not: the bits of ``self`` not in ``other``."""
    def __invert__(self) -> Bitmap: ...
    def __iand__(self, other: Bitmap) -> Bitmap: ...
    def __ior__(self, other: Bitmap) -> Bitmap: ...
    def __ixor__(self, other: Bitmap) -> Bitmap: ...
    def __isub__(self, other: Bitmap) -> Bitmap: ...
    def __eq__(self, other: object) -> bool: ...
    def __ne__(self, other: object) -> bool: ...
    __hash__: None  # type: ignore[assignment]

    def copy(self) -> Bitmap: ...
    def __copy__(self) -> Bitmap: ...
    def __deepcopy__(self, memo: dict[int, Any], /) -> Bitmap: ...
    def __reduce__(self) -> tuple[Any, ...]: ...
    def __repr__(self) -> str:
        """LMCache's form up to 1000 bits: one ``'0'``/``'1'`` per bit, bit 0 first.
        Longer bitmaps are abbreviated as numpy abbreviates a long array: the
        length, the popcount and the first and last 32 bits,
        ``Bitmap(len=262144, popcount=3, bits=0100…0000...0000…0001)``.
        ``str`` is always every bit."""
    def __str__(self) -> str:
        """One ``'0'``/``'1'`` per bit, bit 0 first (LMCache's ``repr``)."""

# ---------------------------------------------------------------------------
# Flat prefetch policies (the seed's select_load_plan API)
# ---------------------------------------------------------------------------

class HasIndex(Protocol):
    @property
    def index(self) -> int: ...

@final
class AdapterDescriptor:
    """An L2 adapter: its ``index``, a ``name`` and a load ``weight`` (> 0, finite; for ``balanced``)."""

    index: int
    name: str
    weight: float
    def __init__(self, index: int, name: str = "", weight: float = 1.0) -> None: ...

@final
class LoadPlan:
    """A plan: adapter index -> the keys it loads, disjoint, with the controller's helpers."""

    def __init__(self, num_keys: int, entries: Mapping[int, Bitmap] = ...) -> None: ...
    @property
    def num_keys(self) -> int: ...
    def __len__(self) -> int: ...
    def __contains__(self, adapter: int) -> bool: ...
    def __getitem__(self, adapter: int) -> Bitmap: ...
    def adapters(self) -> list[int]: ...
    def to_dict(self) -> dict[int, Bitmap]: ...
    def planned_count(self) -> int: ...
    def merged(self) -> Bitmap: ...
    def prefix_len(self) -> int:
        """Keys ``0..n`` are all planned: the loadable prefix."""
    def trim_to_prefix(self, n: int) -> None: ...
    def trim_to_loadable_prefix(self) -> int: ...
    def unlock_masks(self, lookup_results: Mapping[int, Bitmap]) -> dict[int, Bitmap]:
        """Per lookup entry, the keys it locked that the plan does not load."""
    def gather(self, items: Sequence[_T]) -> dict[int, list[_T]]: ...
    def validate(self, lookup_results: Mapping[int, Bitmap]) -> None:
        """``ValueError`` if the plan loads a key twice or a key its adapter does not hold."""

class PrefetchPolicy:
    """Base class of the flat policies; a Python subclass overrides
    :meth:`select_load_plan` (and, optionally, :meth:`select_l1_retentions`)."""

    def __init__(self) -> None: ...
    @property
    def name(self) -> str: ...
    def select_load_plan(
        self,
        keys: Sequence[object] | int,
        lookup_results: Mapping[int, Bitmap],
        adapters: Iterable[HasIndex],
    ) -> dict[int, Bitmap]:
        """Adapter index -> the keys it loads (each key once, only from an adapter holding it).
        ``keys`` is the key list (only its length is used) or the key count."""
    def select_l1_retentions(self, keys: Sequence[object] | int) -> list[bool]: ...
    def load_plan(
        self,
        keys: Sequence[object] | int,
        lookup_results: Mapping[int, Bitmap],
        adapters: Iterable[HasIndex],
    ) -> LoadPlan: ...

class DefaultPrefetchPolicy(PrefetchPolicy):
    """The lowest-indexed adapter that has a key loads it; nothing is retained."""

class RetainPrefetchPolicy(DefaultPrefetchPolicy):
    """As ``default``; every key is retained in L1."""

class BalancedPrefetchPolicy(PrefetchPolicy):
    """Keys held by several adapters are shared out by ``weight`` (the largest weighted load is minimal)."""

# ---------------------------------------------------------------------------
# Prefix hits for hybrid models
# ---------------------------------------------------------------------------

def fold(found: Bitmap, num_chunks: int, num_ranks: int, windows: Sequence[int]) -> Bitmap: ...
def unfold(hit_length: int, num_chunks: int, num_ranks: int, windows: Sequence[int]) -> Bitmap: ...
def fold_grouped(rows: Sequence[Bitmap], windows: Sequence[int]) -> Bitmap: ...
def unfold_grouped(hit_length: int, num_chunks: int, windows: Sequence[int]) -> list[Bitmap]: ...
def fold_unfold(found: Bitmap, num_chunks: int, windows: Sequence[int]) -> tuple[int, Bitmap]: ...
def fold_unfold_ranked(
    found: Bitmap, num_chunks: int, num_ranks: int, windows: Sequence[int]
) -> tuple[int, Bitmap]: ...
def fold_unfold_grouped(rows: Sequence[Bitmap], windows: Sequence[int]) -> tuple[int, list[Bitmap]]: ...
def unfold_range(prefix_len: int, window: int) -> tuple[int, int]: ...
def highest_set_bit(bitmap: Bitmap) -> int: ...
def merge_bitmaps(bitmaps: Iterable[Bitmap], num_keys: int) -> Bitmap:
    """The union; every input must have ``num_keys`` bits (``ValueError``)."""
def retained_prefix(found: Bitmap, num_keys: int) -> Bitmap:
    """``Bitmap(num_keys, found.count_leading_ones())`` (``select_retained`` with ``PREFIX``)."""

# ---------------------------------------------------------------------------
# Grids and the grid plan
# ---------------------------------------------------------------------------

class Grid:
    """Rows of equal width (one per object group and rank), LMCache's ``Bitmap2D``."""

    def __init__(self, rows: Iterable[Bitmap]) -> None:
        """``ValueError`` if the rows differ in length."""
    @staticmethod
    def zeros(num_rows: int, num_cols: int) -> Grid: ...
    @staticmethod
    def from_flat(flat: Bitmap, num_rows: int) -> Grid:
        """Splits a chunk-major flat bitmap (bit ``j * num_rows + k`` is
        chunk ``j`` of row ``k``) into its rows. ``ValueError`` unless
        ``len(flat)`` is a multiple of ``num_rows``."""
    def to_flat(self) -> Bitmap:
        """The inverse of :meth:`from_flat`."""
    @property
    def shape(self) -> tuple[int, int]: ...
    @property
    def num_rows(self) -> int: ...
    @property
    def num_cols(self) -> int: ...
    def __len__(self) -> int: ...
    def __getitem__(self, row: SupportsIndex) -> Bitmap:
        """A copy of the row."""
    def __iter__(self) -> Iterator[Bitmap]: ...
    def rows(self) -> list[Bitmap]: ...
    def test(self, row: SupportsIndex, col: SupportsIndex) -> bool: ...
    def set(self, row: SupportsIndex, col: SupportsIndex) -> None: ...
    def clear(self, row: SupportsIndex, col: SupportsIndex) -> None: ...
    def popcount(self) -> int: ...
    def any(self) -> bool: ...
    def to_index_lists(self) -> list[list[int]]: ...
    def gather_rows(self, keys: Sequence[Sequence[_T]]) -> list[list[_T]]: ...
    def deposit(self, bits: Bitmap) -> Grid:
        """``self`` as a mask: its set cells, row-major, take ``bits``' bits
        in order (a PDEP). ``ValueError`` if ``bits`` has fewer than
        ``self.popcount()`` bits."""
    def extract(self, values: Grid) -> Bitmap:
        """The cells of ``values`` at ``self``'s set cells, row-major, as a
        flat bitmap of ``self.popcount()`` bits (a PEXT)."""
    def __or__(self, other: Grid) -> Grid: ...
    def __and__(self, other: Grid) -> Grid: ...
    def __sub__(self, other: Grid) -> Grid: ...
    def __ior__(self, other: Grid) -> Grid: ...
    def __iand__(self, other: Grid) -> Grid: ...
    def __isub__(self, other: Grid) -> Grid: ...
    def __eq__(self, other: object) -> bool: ...
    __hash__: None  # type: ignore[assignment]
    def copy(self) -> Grid: ...
    def __reduce__(self) -> tuple[Any, ...]: ...

@final
class GridPlan:
    """Which cells each L1 manager and each L2 adapter loads, and the hit length."""

    @property
    def l1(self) -> dict[int, Grid]: ...
    @property
    def l2(self) -> dict[int, Grid]: ...
    @property
    def hit(self) -> int: ...
    def planned_count(self) -> int: ...
    def merged(self) -> Grid: ...

def plan_load(
    windows: Sequence[int],
    num_chunks: int,
    l1: Mapping[int, Grid],
    l2: Mapping[int, Grid],
    fetching: str = "prefix",
) -> GridPlan:
    """LMCache's grid ``plan_load``: ``found`` is the union of every grid;
    ``"prefix"`` needs the unfolded prefix of ``found``, ``"full"`` all of
    it (``ValueError`` on a sliding-window row); L1 indices ascending, then
    L2 indices ascending, each takes what it locked of what remains."""

class GridPolicy:
    """Base class of the grid policies."""

    def __init__(self) -> None: ...
    @property
    def name(self) -> str: ...
    def plan_load(
        self,
        windows: Sequence[int],
        num_chunks: int,
        l1: Mapping[int, Grid],
        l2: Mapping[int, Grid],
        fetching: str = "prefix",
    ) -> GridPlan: ...
    def plan_l1_retention(self, keys: Sequence[object] | int) -> list[bool]: ...

class DefaultGridPolicy(GridPolicy): ...
class RetainGridPolicy(DefaultGridPolicy): ...

def replay(
    trace: str | os.PathLike[str] | Iterable[Sequence[int]],
    l1: int | str | None,
    l2: Sequence[int | str | None] = (),
    *,
    policy: str = "default",
    eviction: str = "lru",
    block_tokens: int = 512,
    kv_bytes_per_token: int | None = None,
    windows: Sequence[int] | None = None,
    ranks: int = 1,
    l1_watermark: float | None = None,
    evict_ratio: float | None = None,
    l2_watermark: float | Sequence[float] | None = None,
    l2_evict_ratio: float | Sequence[float] | None = None,
    evict_interval_ms: int = 1000,
    timestamps: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Replays a request trace through L1 and L2 adapters (docs/REPLAY.md):
    ``trace`` is a path to NDJSON (Mooncake's ``hash_ids`` lines or
    ``{"keys": [...]}``) or an iterable of key lists; a capacity is blocks
    (int), ``None`` (unbounded) or a str (``"1e7tok"``, ``"64GiB"``,
    ``"inf:weight=2:bw=12GB/s"``). Returns the report of ``prefetch-plan
    replay --json`` as a dict; ``ValueError`` for a bad trace line (naming
    the line and field), capacity or policy. ``policy`` names a policy of
    the Rust registry (``default``, ``balanced``, ``retain``), not one
    registered from Python; ``eviction`` is ``lru``, ``fifo``, ``lfu``,
    ``s3fifo``, ``arc`` or ``noop`` (``ValueError`` listing them for another).
    ``l1_watermark`` (with ``evict_ratio``, default 0.2) replays LMCache's
    timed trigger for L1, ``l2_watermark``/``l2_evict_ratio`` (one value for
    all adapters or one each) for the adapters, a check every
    ``evict_interval_ms`` of the trace's time; ``timestamps`` gives a list's
    requests their times (a file has its own). A watermark or ratio outside
    [0, 1] is a ``ValueError`` naming it. With ``windows`` (one per layer
    group: <= 0 full attention, >= 1 sliding, 1 Mamba), a hybrid replay of
    ``len(windows) * ranks`` cells a chunk, capacities in cells (a block's
    worth each), strict capacity and ``lru``/``fifo``/``lfu`` only. Runs
    without the GIL."""
