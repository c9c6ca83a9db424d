"""Pure-Python models, written straight from the definitions (issue #13's
"The semantics", lmcache-notes §2-§3 and the seed policy), that the tests
compare the package against. Nothing here calls bitplan."""

from __future__ import annotations

import itertools
from fractions import Fraction

# ---------------------------------------------------------------------------
# Bitmaps as Python ints (bit i of the int is bit i of the bitmap)
# ---------------------------------------------------------------------------


def mask(n: int) -> int:
    return (1 << n) - 1


def int_of(indices) -> int:
    value = 0
    for i in indices:
        value |= 1 << i
    return value


def indices_of(value: int) -> list[int]:
    out = []
    i = 0
    while value:
        if value & 1:
            out.append(i)
        value >>= 1
        i += 1
    return out


def leading_ones(value: int, n: int) -> int:
    count = 0
    while count < n and (value >> count) & 1:
        count += 1
    return count


def bitstring(value: int, n: int) -> str:
    return "".join("1" if (value >> i) & 1 else "0" for i in range(n))


def lm_bytes(value: int, n: int) -> bytes:
    """LMCache's byte layout: bit i in byte i // 8 at bit i % 8."""
    return value.to_bytes((n + 7) // 8, "little")


# ---------------------------------------------------------------------------
# Hybrid fold/unfold, from the definitions
# ---------------------------------------------------------------------------


def present_flat(found: set[int], j: int, g: int, num_groups: int, num_ranks: int) -> bool:
    """Chunk j of group g is present iff every rank bit is (bits past the end read as absent)."""
    base = j * num_groups * num_ranks + g * num_ranks
    return all(base + r in found for r in range(num_ranks))


def serves(present, window: int, length: int) -> bool:
    """Whether a group with ``window`` can serve a prefix of ``length`` chunks,
    chunk by chunk: chunks ``[0, L)`` (full) or ``[max(0, L - w), L)`` all present."""
    lo = 0 if window <= 0 else max(0, length - window)
    return all(present(c) for c in range(lo, length))


class _Row:
    """A row's presence, with prefix counts so that "every chunk of [lo, hi)
    is present" is one subtraction (the same test as ``serves``, faster)."""

    def __init__(self, present: list[bool]):
        self.counts = [0]
        for p in present:
            self.counts.append(self.counts[-1] + (1 if p else 0))

    def serves(self, window: int, length: int) -> bool:
        lo = 0 if window <= 0 else max(0, length - window)
        return self.counts[length] - self.counts[lo] == length - lo


def naive_fold(found: set[int], num_chunks: int, num_ranks: int, windows) -> list[int]:
    groups = len(windows)
    rows = [_Row([present_flat(found, j, g, groups, num_ranks) for j in range(num_chunks)]) for g in range(groups)]
    return [length - 1 for length in range(1, num_chunks + 1) if all(rows[g].serves(windows[g], length) for g in range(groups))]


def naive_fold_literal(found: set[int], num_chunks: int, num_ranks: int, windows) -> list[int]:
    """The same, chunk by chunk for every length (slow; for small cases)."""
    groups = len(windows)
    out = []
    for length in range(1, num_chunks + 1):
        if all(
            serves(lambda c, g=g: present_flat(found, c, g, groups, num_ranks), windows[g], length) for g in range(groups)
        ):
            out.append(length - 1)
    return out


def unfold_range(length: int, window: int) -> tuple[int, int]:
    if length <= 0:
        return (0, 0)
    return (0 if window <= 0 else max(0, length - window), length)


def naive_unfold(hit: int, num_chunks: int, num_ranks: int, windows) -> list[int]:
    hit = min(hit, num_chunks)
    groups = len(windows)
    out = []
    for g, w in enumerate(windows):
        lo, hi = unfold_range(hit, w)
        for j in range(lo, hi):
            for r in range(num_ranks):
                out.append(j * groups * num_ranks + g * num_ranks + r)
    return sorted(out)


def naive_fold_unfold_ranked(found: set[int], num_chunks: int, num_ranks: int, windows):
    servable = naive_fold(found, num_chunks, num_ranks, windows)
    hit = servable[-1] + 1 if servable else 0
    return hit, naive_unfold(hit, num_chunks, num_ranks, windows)


def naive_fold_grouped(rows: list[set[int]], num_chunks: int, windows) -> list[int]:
    models = [_Row([c in row for c in range(num_chunks)]) for row in rows]
    return [length - 1 for length in range(1, num_chunks + 1) if all(m.serves(w, length) for m, w in zip(models, windows))]


def naive_unfold_grouped(hit: int, num_chunks: int, windows) -> list[list[int]]:
    hit = min(hit, num_chunks)
    return [list(range(*unfold_range(hit, w))) for w in windows]


def naive_fold_unfold_grouped(rows: list[set[int]], num_chunks: int, windows):
    servable = naive_fold_grouped(rows, num_chunks, windows)
    hit = servable[-1] + 1 if servable else 0
    return hit, naive_unfold_grouped(hit, num_chunks, windows)


def rows_of_flat(found: set[int], num_chunks: int, num_ranks: int, windows):
    """Row g*R + r of a chunk-major flat layout, with each row's window."""
    width = len(windows) * num_ranks
    rows = [{j for j in range(num_chunks) if j * width + k in found} for k in range(width)]
    row_windows = [windows[k // num_ranks] for k in range(width)]
    return rows, row_windows


# ---------------------------------------------------------------------------
# Flat policies
# ---------------------------------------------------------------------------


def seed_first_wins(num_keys: int, lookup: dict[int, int], adapter_indices) -> dict[int, int]:
    """The seed's DefaultPrefetchPolicy.select_load_plan over int bitmaps."""
    plan = {}
    everything = 0
    for value in lookup.values():
        everything |= value
    everything &= mask(num_keys)
    for index in sorted(adapter_indices):
        current = lookup.get(index)
        if current is None:
            continue
        local = everything & current
        everything &= ~local
        if local == 0:
            continue
        plan[index] = local
    return plan


def optimal_max_weighted_load(num_keys, lookup: dict[int, int], weights: dict[int, int]) -> Fraction:
    """Brute force: the smallest max_a(load_a / weight_a) over assignments of
    every key some listed adapter holds to one listed adapter holding it."""
    listed = sorted(weights)
    choices = []
    for k in range(num_keys):
        holders = [a for a in listed if a in lookup and (lookup[a] >> k) & 1]
        if holders:
            choices.append(holders)
    best = None
    for assignment in itertools.product(*choices):
        loads = {a: 0 for a in listed}
        for a in assignment:
            loads[a] += 1
        worst = max((Fraction(loads[a], weights[a]) for a in listed), default=Fraction(0))
        if best is None or worst < best:
            best = worst
    return best if best is not None else Fraction(0)


# ---------------------------------------------------------------------------
# Grid plan, cell by cell
# ---------------------------------------------------------------------------


def model_grid_plan(windows, cols, l1: dict[int, list[set[int]]], l2: dict[int, list[set[int]]], fetching: str):
    """Returns (hit, {index: rows}, {index: rows}) with rows as sorted lists,
    or None where the plan is an error (no rows, full with a window row,
    a shape mismatch)."""
    rows = len(windows)
    if rows == 0 or (fetching == "full" and any(w >= 1 for w in windows)):
        return None
    tiers = [(1, i, g) for i, g in sorted(l1.items())] + [(2, i, g) for i, g in sorted(l2.items())]
    for _, _, g in tiers:
        if len(g) != rows:
            return None
    found = [set() for _ in range(rows)]
    for _, _, g in tiers:
        for r in range(rows):
            found[r] |= g[r]
    hit = 0
    for length in range(cols, 0, -1):
        if all(serves(lambda c, r=r: c in found[r], windows[r], length) for r in range(rows)):
            hit = length
            break

    def needed(r, c):
        if c not in found[r]:
            return False
        if fetching == "full":
            return True
        w = windows[r]
        return c < hit and (w <= 0 or c + w >= hit)

    plans = {(t, i): [[] for _ in range(rows)] for t, i, _ in tiers}
    for r in range(rows):
        for c in range(cols):
            if needed(r, c):
                t, i, _ = next(x for x in tiers if c in x[2][r])
                plans[(t, i)][r].append(c)
    out1 = {i: p for (t, i), p in plans.items() if t == 1 and any(p)}
    out2 = {i: p for (t, i), p in plans.items() if t == 2 and any(p)}
    return hit, out1, out2
