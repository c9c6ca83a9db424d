"""The pure-Python baseline of ``bench.py``: a bitmap backed by one Python
``int`` (bit i = key i), the seed's first-adapter-wins ``select_load_plan``
verbatim over it, and the hybrid-model fold/unfold written over it.

Kept apart from the benchmark so that the model a figure is compared with
can be read on its own.
"""

from __future__ import annotations


class IntBitmap:
    """``n`` bits in one ``int``: ``&``, ``|``, ``~``, popcount by
    ``int.bit_count()``, ``set`` by ``|= 1 << i``, and the set indices."""

    __slots__ = ("n", "v")

    def __init__(self, n: int, v: int = 0) -> None:
        self.n = n
        self.v = v

    def __and__(self, other: IntBitmap) -> IntBitmap:
        return IntBitmap(min(self.n, other.n), self.v & other.v)

    def __or__(self, other: IntBitmap) -> IntBitmap:
        return IntBitmap(min(self.n, other.n), self.v | other.v)

    def __invert__(self) -> IntBitmap:
        return IntBitmap(self.n, ~self.v & ((1 << self.n) - 1))

    def popcount(self) -> int:
        return self.v.bit_count()

    def set(self, i: int) -> None:
        self.v |= 1 << i

    def get_indices_list(self) -> list[int]:
        # bin() is LSB last; reversed, character i is bit i.
        return [i for i, c in enumerate(bin(self.v)[:1:-1]) if c == "1"]


def int_select_load_plan(keys, lookup_results, adapters):
    """The seed's ``DefaultPrefetchPolicy.select_load_plan``
    (``/work/shared/seeds/prefetch_policy.py``), verbatim, over IntBitmap."""
    plan = {}
    global_bitmap = IntBitmap(len(keys))
    for bitmap in lookup_results.values():
        global_bitmap |= bitmap

    for ad in sorted(adapters, key=lambda a: a.index):
        curr_bitmap = lookup_results.get(ad.index)
        if curr_bitmap is None:
            continue

        local_bitmap = global_bitmap & curr_bitmap
        global_bitmap &= ~local_bitmap
        if local_bitmap.popcount() == 0:
            continue

        plan[ad.index] = local_bitmap

    return plan


def _int_servable(present: int, n: int, window: int) -> int:
    """Bit ``j`` set iff a group whose present chunks are ``present`` serves
    a prefix of ``j + 1`` chunks under ``window`` (<= 0: full attention)."""
    if window <= 0 or window >= n:
        ones = (~present & (present + 1)).bit_length() - 1  # trailing ones
        return (1 << ones) - 1
    # AND over d < window of (present << d), with the bits shifted in below
    # chunk 0 counting as present: binary doubling over the window's bits.
    acc, span = -1, 0  # acc: span chunks ending at j all present
    run, length, w = present, 1, window
    while w:
        if w & 1:
            acc &= (run << span) | ((1 << span) - 1)
            span += length
        w >>= 1
        if w:
            run &= (run << length) | ((1 << length) - 1)
            length *= 2
    return acc & ((1 << n) - 1)


def _int_repeat(width: int, count: int) -> int:
    """Bit ``j * width`` set for ``j < count``."""
    return ((1 << (width * count)) - 1) // ((1 << width) - 1)


def int_fold_unfold_ranked(found: IntBitmap, num_chunks: int, num_ranks: int, windows: list[int]):
    """``(hit, mask)`` over the chunk-major flat layout (bit ``j*G*R + g*R + r``)."""
    groups = len(windows)
    width = groups * num_ranks
    bits = format(found.v, f"0{num_chunks * width}b")[::-1]  # character i is bit i
    rank_mask = (1 << num_ranks) - 1
    servable = (1 << num_chunks) - 1
    for g, w in enumerate(windows):
        present = -1
        for r in range(num_ranks):
            present &= int(bits[g * num_ranks + r :: width][::-1], 2)
        servable &= _int_servable(present, num_chunks, w)
    hit = servable.bit_length()
    mask = 0
    for g, w in enumerate(windows):
        lo = max(0, hit - w) if w >= 1 else 0
        if hit > lo:
            mask |= (rank_mask << (g * num_ranks)) * _int_repeat(width, hit - lo) << (lo * width)
    return hit, IntBitmap(num_chunks * width, mask)


def int_fold_unfold_grouped(rows: list[IntBitmap], windows: list[int]):
    """``(hit, mask rows)``: each row is one group under its own window."""
    n = rows[0].n
    servable = (1 << n) - 1
    for row, w in zip(rows, windows):
        servable &= _int_servable(row.v, n, w)
    hit = servable.bit_length()
    out = []
    for w in windows:
        lo = max(0, hit - w) if w >= 1 else 0
        out.append(IntBitmap(n, ((1 << (hit - lo)) - 1) << lo if hit > lo else 0))
    return hit, out
