"""LMCache's controller containers, native: ``Bitmap2D`` (a grid of rows,
one per object group and rank, one column per chunk) and ``MapState``
(tier index -> ``Bitmap2D``), the classes of LMCache's
``storage_controllers/utils.py``, with its semantics.

Each is one native object over one contiguous buffer, so every operator is
one call into bitmap-core's kernels rather than a Python loop over rows.
The "fast path" methods replace the controller's per-bit and per-row loops
with one call each (see ``crates/bitplan-py/README.md``). The aliasing of
rows differs from a list of row objects in two documented ways (see
:mod:`bitplan.lmcache`).
"""

from bitplan import _native

Bitmap2D = _native.lmcache.Bitmap2D
MapState = _native.lmcache.MapState

__all__ = ["Bitmap2D", "MapState"]
