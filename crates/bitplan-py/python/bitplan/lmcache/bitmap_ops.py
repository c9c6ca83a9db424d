"""A drop-in for ``lmcache.v1.distributed.bitmap_ops``: prefix hits for
hybrid models over LMCache bitmaps (the old and the new exports both).

The flat layout is chunk-major: bit ``j*G*R + g*R + r`` is chunk ``j`` of
group ``g``, rank ``r``. Group ``g`` with window ``w`` serves a prefix of
``L`` chunks iff chunks ``[0, L)`` (``w <= 0``, full attention) or
``[max(0, L - w), L)`` (``w >= 1``) are present on every rank.
"""

from __future__ import annotations

from collections.abc import Iterable

from bitplan import _native
from bitplan._trim import TrimPolicy, select_retained
from bitplan.lmcache.native import Bitmap, fold, fold_grouped, unfold, unfold_grouped

_lm = _native.lmcache

FULL_ATTENTION_WINDOW: int = _native.FULL_ATTENTION_WINDOW
unfold_range = _native.unfold_range
fold_unfold_ranked = _lm.fold_unfold_ranked
fold_unfold = _lm.fold_unfold
fold_unfold_grouped = _lm.fold_unfold_grouped


def highest_set_bit(servable: Bitmap) -> int:
    """The largest set index of ``servable``, ``-1`` if none is set."""
    return servable.highest_set_bit()


def merge_bitmaps(bitmaps: Iterable[Bitmap], num_keys: int) -> Bitmap:
    """``Bitmap(num_keys)`` ORed with each input in turn. As LMCache's ``|``
    keeps the shorter size, a shorter input shrinks the result."""
    return _lm.merge_bitmaps(bitmaps, num_keys)


__all__ = [
    "FULL_ATTENTION_WINDOW",
    "TrimPolicy",
    "fold",
    "fold_grouped",
    "fold_unfold",
    "fold_unfold_grouped",
    "fold_unfold_ranked",
    "highest_set_bit",
    "merge_bitmaps",
    "select_retained",
    "unfold",
    "unfold_grouped",
    "unfold_range",
]
