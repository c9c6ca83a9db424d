"""A cache tier's bookkeeping as bitmaps over dense slots (issue #28): the
lifecycle of LMCache's ``L1Manager`` (``lmcache/v1/distributed/l1_manager.py``)
over the ``tier-state`` crate, with two faces.

* :class:`L1Bookkeeper`, **LMCache's shape**: ``L1Manager``'s bookkeeping
  methods with its names, arguments and results. Keys are any hashable
  Python objects; each call answers with a dict from key to
  ``(L1Error, object)`` or to ``L1Error``. Where LMCache hands back a memory
  object, this hands back the object the caller attached at
  ``reserve_write`` (``objects=``), or else the slot number. A controller or
  an ``L1Manager`` can delegate its books to it and keep its memory.
* :class:`ChunkTier`, **the positional fast path**: keys are a
  :class:`RequestKeys` (a request's chunk hashes, a ``numpy.uint64`` array,
  times its row ids), each call may take a ``Bitmap2D`` of the cells it is
  about, and every answer is a ``Bitmap2D`` success mask in the
  controller's layout (rows x chunks). No per-key Python object is made.

Both hold one lock inside and may be shared between threads; ``ChunkTier``
releases the GIL around large batches.

The codes are :class:`L1Error`, an ``IntEnum`` with LMCache's names and
values (``enum.auto()`` from 1), so ``code == L1Error.SUCCESS`` and
``code.name`` read as in LMCache.

Time: locks expire after their time-to-live (LMCache's ``TTLLock``), on a
monotonic clock in milliseconds; pass ``clock=ManualClock(0)`` and move it
by hand to decide when (tests).
"""

import enum

from bitplan import _native

_lm = _native.lmcache


class L1Error(enum.IntEnum):
    """LMCache's ``L1Error`` (``lmcache/v1/distributed/error.py``): the same
    names, and the values its ``enum.auto()`` gives."""

    SUCCESS = 1
    KEY_NOT_EXIST = 2
    KEY_NOT_READABLE = 3
    KEY_NOT_WRITABLE = 4
    KEY_IN_WRONG_STATE = 5
    KEY_IS_LOCKED = 6
    OUT_OF_MEMORY = 7


# LMCache's `L1Manager` clamps a call's read locks into [1, 128].
MAX_READ_LOCK_COUNT = 128

# The native faces answer with these members (in code order).
_lm._register_l1_errors(tuple(L1Error))

ChunkTier = _lm.ChunkTier
RequestKeys = _lm.RequestKeys
L1Bookkeeper = _lm.L1Bookkeeper
ManualClock = _lm.ManualClock

__all__ = ["MAX_READ_LOCK_COUNT", "ChunkTier", "L1Bookkeeper", "L1Error", "ManualClock", "RequestKeys"]
