"""The reference containers of ``controller_request.py``: LMCache's
``Bitmap2D`` and ``MapState`` as its ``utils.py`` makes them, a plain-Python
list of ``bitplan.lmcache.native.Bitmap`` rows with one native call per row
and operator."""

from __future__ import annotations

from collections.abc import Iterable

from bitplan.lmcache.native import Bitmap


# ---------------------------------------------------------------------------
# The reference containers: a plain-Python list of LMCache Bitmap rows
# ---------------------------------------------------------------------------


class RefBitmap2D:
    """LMCache's ``Bitmap2D``: one ``Bitmap`` per row; every operator loops
    over the rows in Python and makes a new ``Bitmap`` per row."""

    __slots__ = ("_rows",)

    def __init__(self, rows: Iterable[Bitmap]) -> None:
        rows = list(rows)
        if len({row.size() for row in rows}) > 1:
            raise ValueError("rows of different widths")
        self._rows = rows

    @classmethod
    def zeros(cls, num_rows: int, num_cols: int) -> RefBitmap2D:
        if num_rows < 0 or num_cols < 0:
            raise ValueError("negative shape")
        return cls([Bitmap(num_cols) for _ in range(num_rows)])

    def size(self) -> tuple[int, int]:
        return (len(self._rows), self._rows[0].size()) if self._rows else (0, 0)

    def popcount(self) -> int:
        return sum(row.popcount() for row in self._rows)

    def to_list(self) -> list[Bitmap]:
        return list(self._rows)

    def copy(self) -> RefBitmap2D:
        return RefBitmap2D([row.copy() for row in self._rows])

    def zeros_like(self) -> RefBitmap2D:
        return RefBitmap2D([Bitmap(row.size()) for row in self._rows])

    def ones_like(self) -> RefBitmap2D:
        return RefBitmap2D([Bitmap(row.size(), row.size()) for row in self._rows])

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self):
        return iter(self._rows)

    def __getitem__(self, index: int) -> Bitmap:
        return self._rows[index]

    def _same(self, other: RefBitmap2D) -> None:
        if self.size() != other.size():
            raise ValueError(f"shape mismatch: {self.size()} and {other.size()}")

    def __add__(self, other):
        self._same(other)
        return RefBitmap2D([a | b for a, b in zip(self._rows, other._rows)])

    def __sub__(self, other):
        self._same(other)
        return RefBitmap2D([a & ~b for a, b in zip(self._rows, other._rows)])

    def __and__(self, other):
        self._same(other)
        return RefBitmap2D([a & b for a, b in zip(self._rows, other._rows)])

    def __iadd__(self, other):
        self._same(other)
        self._rows = [a | b for a, b in zip(self._rows, other._rows)]
        return self

    def __isub__(self, other):
        self._same(other)
        self._rows = [a & ~b for a, b in zip(self._rows, other._rows)]
        return self

    def __iand__(self, other):
        self._same(other)
        self._rows = [a & b for a, b in zip(self._rows, other._rows)]
        return self


class RefMapState:
    """LMCache's ``MapState``: index -> grid, the layout fixed by the first
    store and kept after ``del``."""

    __slots__ = ("_state", "_layout")

    def __init__(self) -> None:
        self._state: dict[int, RefBitmap2D] = {}
        self._layout: tuple[int, int] | None = None

    def _shape(self):
        # what bitplan's plan_load reads from a map: its entries' shape
        for grid in self._state.values():
            return grid.size()
        return None

    def __setitem__(self, index: int, grid: RefBitmap2D) -> None:
        shape = grid.size()
        if shape[0] == 0:
            raise ValueError("a grid with no rows")
        if self._layout is None:
            self._layout = shape
        elif shape != self._layout:
            raise ValueError(f"shape {shape}, layout {self._layout}")
        self._state[index] = grid

    def __getitem__(self, index: int) -> RefBitmap2D:
        return self._state[index]

    def __contains__(self, index: object) -> bool:
        return index in self._state

    def __delitem__(self, index: int) -> None:
        del self._state[index]

    def items(self):
        return self._state.items()

    def _compatible(self, other: RefMapState) -> None:
        if self._layout is not None and other._layout is not None and self._layout != other._layout:
            raise ValueError("layout mismatch")

    def merge(self) -> RefBitmap2D:
        if self._layout is None:
            return RefBitmap2D([])
        merged = RefBitmap2D.zeros(*self._layout)
        for grid in self._state.values():
            merged += grid
        return merged

    def copy(self) -> RefMapState:
        out = RefMapState()
        for index, grid in self._state.items():
            out[index] = grid.copy()
        return out

    def __add__(self, other):
        self._compatible(other)
        out = RefMapState()
        for index, grid in self._state.items():
            theirs = other._state.get(index)
            out[index] = grid + theirs if theirs is not None else grid.copy()
        for index, grid in other._state.items():
            if index not in self._state:
                out[index] = grid.copy()
        return out

    def __iadd__(self, other):
        self._compatible(other)
        for index, grid in other._state.items():
            self[index] = self._state[index] + grid if index in self._state else grid.copy()
        return self

    def __sub__(self, other):
        self._compatible(other)
        out = RefMapState()
        for index, grid in self._state.items():
            theirs = other._state.get(index)
            out[index] = grid - theirs if theirs is not None else grid.copy()
        return out

    def __isub__(self, other):
        self._compatible(other)
        for index, grid in other._state.items():
            if index in self._state:
                self[index] = self._state[index] - grid
        return self
