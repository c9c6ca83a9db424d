"""LMCache compatibility: swap LMCache's imports for these and change nothing else.

=================================================  ======================================
LMCache                                            bitplan
=================================================  ======================================
``lmcache.lmcache_native``                         :mod:`bitplan.lmcache.native`
``lmcache.v1.distributed.bitmap_ops``              :mod:`bitplan.lmcache.bitmap_ops`
LMCache's prefetch-policy module                   :mod:`bitplan.lmcache.prefetch_policy`
``L1Manager``'s bookkeeping (``l1_manager.py``)    :mod:`bitplan.lmcache.tiers`
``lmcache.v1.distributed.eviction_policy``         :mod:`bitplan.lmcache.eviction_policy`
=================================================  ======================================

Everything here does what LMCache does, including where that differs from
the Pythonic :class:`bitplan.Bitmap`:

* ``set``/``clear`` past the end do nothing, ``test`` past the end is ``False``;
  a negative index (or size) is a ``TypeError``, as pybind11's ``size_t``;
* ``batched_set`` ignores out-of-range indices; ``set_range`` clamps its end;
* ``a & b`` and ``a | b`` of different sizes have the shorter size. As in
  LMCache 0.5.6, whose byte loop runs over whole bytes, the bits of the
  result's last byte past its size are the operands' bits there: nothing
  counts, lists or prints them, but ``highest_set_bit`` may return an
  index past the end (as LMCache's does), ``copy`` keeps them and ``~``
  clears them.
* ``highest_set_bit`` of an empty bitmap is ``-1``; equality is identity
  (no ``__eq__``), and there are no in-place operators: ``a |= b`` rebinds
  ``a`` to a new bitmap, as LMCache's callers expect;
* ``get_indices_set``, ``gather(seq)`` (items past the sequence's end are
  skipped), ``size()``, ``copy()`` and ``__len__`` exist;
* ``bitmap_ops.select_retained`` returns its input object unless the policy
  is ``PREFIX``; ``merge_bitmaps`` shrinks to its shortest input;
* the grid ``plan_load`` returns an empty plan and logs, never raises, on
  bad input; the ``bitmap_ops`` wrappers raise ``ValueError`` for fewer than
  one rank, no windows, a negative chunk count, and ragged or miscounted rows.

* ``Bitmap2D`` and ``MapState`` (:mod:`bitplan.lmcache.grids`, also in
  :mod:`bitplan.lmcache.prefetch_policy`) are native, with the rules of
  LMCache's ``storage_controllers/utils.py``: the ``MapState`` layout is
  fixed by the first store and kept after ``del`` of the last index, and
  ``ms[i] = grid`` checks it also when it overwrites. ``grid[i]``,
  iteration and ``to_list()`` give LMCache ``Bitmap`` objects that view the
  rows: their writes reach the grid, as ``ret[row].set(col)`` expects. An
  in-place operator (``+=``, ``-=``, ``&=``) leaves a row handed out before
  it unchanged, as LMCache's rebinding of rows does (the grid copies its
  cells first while such a view is alive).

Aliasing that differs from LMCache's list of row objects: ``g[i]`` is the
same object each time (``g[0] is g[0]``, and ``Bitmap2D(rows)[0] is
rows[0]``), as in LMCache, but a row that cannot become a view of the new
grid is copied: one that is a view of some other grid, one given twice
(its second place), or a :class:`bitplan.Bitmap`; a later write to it does
not reach the new grid.

Differences that remain, on purpose:

* the flat ``select_load_plan`` raises ``ValueError`` for a lookup bitmap
  whose size is not ``len(keys)`` (LMCache's ``|`` would silently shrink
  the plan) and for two adapters with the same index;
* the grid ``plan_load`` ignores locked grids of indices that have no
  descriptor (LMCache counts their cells as found without planning them).
"""

import importlib

from bitplan.lmcache import bitmap_ops, grids, native, tiers

__all__ = [
    "bitmap_ops",
    "eviction_policy",
    "grids",
    "install",
    "installed",
    "integration",
    "native",
    "prefetch_policy",
    "tiers",
    "uninstall",
]

#: The switch (``bitplan.lmcache.integration``), by name.
_SWITCH = ("install", "uninstall", "installed")


def __getattr__(name: str):  # noqa: ANN202 - PEP 562
    # ``prefetch_policy`` is imported on first use: it defines LMCache's
    # dataclasses and logs through ``logging``, and importing those two was
    # most of ``import bitplan.lmcache`` (issue #21: under 30 ms).
    # ``eviction_policy`` likewise (its dataclasses and enums), and the
    # switch.
    if name in ("prefetch_policy", "eviction_policy", "integration"):
        return importlib.import_module(f"bitplan.lmcache.{name}")
    if name in _SWITCH:
        return getattr(importlib.import_module("bitplan.lmcache.integration"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
