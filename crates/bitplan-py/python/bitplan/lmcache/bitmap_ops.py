"""A drop-in for ``lmcache.v1.distributed.bitmap_ops``: prefix hits for
hybrid models over LMCache bitmaps (the old and the new exports both).

The flat layout is chunk-major: bit ``j*G*R + g*R + r`` is chunk ``j`` of
group ``g``, rank ``r``. Group ``g`` with window ``w`` serves a prefix of
``L`` chunks iff chunks ``[0, L)`` (``w <= 0``, full attention) or
``[max(0, L - w), L)`` (``w >= 1``) are present on every rank.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bitplan import _native
from bitplan._trim import TrimPolicy, select_retained
from bitplan.lmcache.native import Bitmap, fold_grouped

_lm = _native.lmcache

FULL_ATTENTION_WINDOW: int = _native.FULL_ATTENTION_WINDOW
unfold_range = _native.unfold_range
fold_unfold_grouped = _lm.fold_unfold_grouped


def _validate(num_chunks: int, num_ranks: int, group_windows: Sequence[int]) -> None:
    # LMCache's wrappers check these before the native call (whose size_t
    # arguments would raise TypeError for a negative value instead).
    if num_ranks < 1:
        raise ValueError(f"num_ranks must be >= 1, got {num_ranks}")
    if not group_windows:
        raise ValueError("group_windows must not be empty")
    if num_chunks < 0:
        raise ValueError(f"num_chunks must be >= 0, got {num_chunks}")


def fold(found: Bitmap, num_chunks: int, num_ranks: int, group_windows: Sequence[int]) -> Bitmap:
    """``num_chunks`` bits: bit ``j`` is set iff every group can serve a
    prefix of ``j + 1`` chunks. Bits past the end of ``found`` read as absent."""
    _validate(num_chunks, num_ranks, group_windows)
    return _lm.fold(found, num_chunks, num_ranks, group_windows)


def unfold(hit_length: int, num_chunks: int, num_ranks: int, group_windows: Sequence[int]) -> Bitmap:
    """``num_chunks * G * R`` bits: for each group, all rank bits of the
    chunks it needs for a hit of ``min(hit_length, num_chunks)``."""
    _validate(num_chunks, num_ranks, group_windows)
    return _lm.unfold(hit_length, num_chunks, num_ranks, group_windows)


def fold_unfold_ranked(
    found: Bitmap, num_chunks: int, num_ranks: int, group_windows: Sequence[int]
) -> tuple[int, Bitmap]:
    """``(hit, mask)``: ``hit = highest_set_bit(fold(...)) + 1``, ``mask = unfold(hit, ...)``."""
    _validate(num_chunks, num_ranks, group_windows)
    return _lm.fold_unfold_ranked(found, num_chunks, num_ranks, group_windows)


def unfold_grouped(hit_length: int, num_chunks: int, windows: Sequence[int]) -> list[Bitmap]:
    """One ``num_chunks``-bit row per window: row ``i`` holds the chunks
    its group needs for a hit of ``min(hit_length, num_chunks)``."""
    if not windows:
        raise ValueError("windows must not be empty")
    if num_chunks < 0:
        raise ValueError(f"num_chunks must be >= 0, got {num_chunks}")
    return _lm.unfold_grouped(hit_length, num_chunks, windows)


def fold_unfold(found: Bitmap, num_chunks: int, group_windows: Sequence[int]) -> tuple[int, Bitmap]:
    """``fold_unfold_ranked`` with one rank."""
    _validate(num_chunks, 1, group_windows)
    return _lm.fold_unfold(found, num_chunks, group_windows)


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
