"""Helpers shared by the tests of LMCache's semantics through
``bitplan.lmcache`` (test_lmcache_bitmap.py, test_lmcache_bitmap_ops.py,
test_lmcache_policies.py): LMCache bitmaps built from indices or from a bit
string."""

from bitplan.lmcache.native import Bitmap


def lm(n, *indices):
    b = Bitmap(n)
    for i in indices:
        b.set(i)
    return b


def from_str(s):
    b = Bitmap(len(s))
    for i, c in enumerate(s):
        if c == "1":
            b.set(i)
    return b
