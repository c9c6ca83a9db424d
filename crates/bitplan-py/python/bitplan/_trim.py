"""``TrimPolicy`` and ``select_retained``, shared by :mod:`bitplan` and
:mod:`bitplan.lmcache.bitmap_ops` (LMCache compares with ``is``, so both
must hand out the same enum members)."""

from __future__ import annotations

import enum

from bitplan._native import Bitmap, retained_prefix


class TrimPolicy(enum.Enum):
    """Which found keys a prefix fetch keeps. Only ``PREFIX`` changes
    anything; the others keep every found key (LMCache's semantics)."""

    PREFIX = enum.auto()
    SEGMENTED_PREFIX = enum.auto()
    SPARSE = enum.auto()


def select_retained(found: Bitmap, num_keys: int, policy: TrimPolicy = TrimPolicy.PREFIX) -> Bitmap:
    """With ``PREFIX``, a new bitmap of ``num_keys`` bits holding the first
    ``found.count_leading_ones()``; otherwise ``found`` itself (the same
    object, not a copy, as LMCache returns it)."""
    if policy is TrimPolicy.PREFIX:
        return retained_prefix(found, num_keys)
    return found
