"""A drop-in for ``lmcache.lmcache_native`` (formerly ``native_storage_ops``):
LMCache's ``Bitmap`` and its native ``fold``/``unfold`` functions.

See :mod:`bitplan.lmcache` for the semantics that differ from :class:`bitplan.Bitmap`.
"""

from bitplan import _native

_lm = _native.lmcache

Bitmap = _lm.Bitmap
fold = _lm.fold
unfold = _lm.unfold
fold_grouped = _lm.fold_grouped
unfold_grouped = _lm.unfold_grouped

__all__ = ["Bitmap", "fold", "fold_grouped", "unfold", "unfold_grouped"]
