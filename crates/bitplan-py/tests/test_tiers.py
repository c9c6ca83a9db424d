"""``bitplan.lmcache.tiers`` (issue #28): the positional fast path
(``ChunkTier``) against the LMCache-shaped face (``L1Bookkeeper``), its
answers in the controller's layout, bad input refused with nothing changed,
and one object shared between threads."""

import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _capped import run_capped
from bitplan.lmcache.native import Bitmap
from bitplan.lmcache.prefetch_policy import Bitmap2D
from bitplan.lmcache.tiers import ChunkTier, L1Bookkeeper, L1Error, ManualClock, RequestKeys

ROWS, COLS = 3, 5
HASHES = np.array([11, 12, 2**64 - 1, 0, 12345678901234567], dtype=np.uint64)
ROW_IDS = [0, 7, 3]
KEYS = RequestKeys(HASHES, ROW_IDS)
CELL_KEYS = [[(int(h), r) for h in HASHES] for r in ROW_IDS]  # the face's key of each cell
# Row ids 0, 1, 2: a chunk's rows in block order, so the tier (rows=8) works
# each chunk's rows as one word (its word-at-a-time path).
BLOCK_ROW_IDS = [0, 1, 2]
BLOCK_KEYS = RequestKeys(HASHES, BLOCK_ROW_IDS)
BLOCK_CELL_KEYS = [[(int(h), r) for h in HASHES] for r in BLOCK_ROW_IDS]


def grid_of(cells):
    return Bitmap2D([Bitmap(COLS, [c for c in range(COLS) if (r, c) in cells]) for r in range(ROWS)])


def cells_of(grid):
    return {(r, c) for r, row in enumerate(grid) for c in row.get_indices_list()}


def face_keys(cells, cell_keys=CELL_KEYS):
    return [cell_keys[r][c] for r, c in sorted(cells)]


ALL = {(r, c) for r in range(ROWS) for c in range(COLS)}
cell_sets = st.sets(st.sampled_from(sorted(ALL)))
ops = st.one_of(
    st.tuples(st.just("reserve_read"), cell_sets, st.integers(-1, 130)),
    st.tuples(st.just("unsafe_read"), cell_sets),
    st.tuples(st.just("finish_read"), cell_sets, st.integers(-1, 130)),
    st.tuples(st.just("reserve_write"), cell_sets, cell_sets, st.sampled_from(["", "p"])),
    st.tuples(st.just("finish_write"), cell_sets, st.sampled_from(["", "p"])),
    st.tuples(st.just("finish_prefetch"), cell_sets, st.sampled_from(["", "p"])),
    st.tuples(st.just("finish_write_and_reserve_read"), cell_sets, st.integers(1, 3), st.sampled_from(["", "p"])),
    st.tuples(st.just("finish_write_and_delete"), cell_sets, st.sampled_from(["", "p"])),
    st.tuples(st.just("delete"), cell_sets, st.booleans()),
    st.tuples(st.just("touch"), cell_sets),
    st.tuples(st.just("advance"), st.sampled_from([0, 400, 1_000, 3_000])),
)


def run_both(tier, books, op, whole, keys=KEYS, cell_keys=CELL_KEYS):
    """One operation on both faces: the fast path's mask and failures, and
    the face's dict turned into the same two things."""
    name, cells, *args = op
    kwargs = {} if whole else {"cells": grid_of(cells)}
    face = face_keys(ALL if whole else cells, cell_keys)
    if name == "reserve_write":
        temporary, tag = args
        got = tier.reserve_write(keys, grid_of(temporary), tag, failures=True, **kwargs)
        flags = [(r, c) in temporary for r, c in sorted(ALL if whole else cells)]
        want = books.reserve_write(face, flags, None, tag)
    elif name == "touch":
        got = (tier.touch(keys, **kwargs), None)
        books.touch_keys(face)
        want = None
    else:
        got = getattr(tier, name)(keys, *args, failures=True, **kwargs)
        want = getattr(books, name)(face, *args)
    return got, want


@settings(max_examples=150, deadline=None)
@given(st.lists(ops, max_size=25), st.booleans(), st.integers(0, 20), st.booleans())
def test_fast_path_answers_as_the_lmcache_face(sequence, whole, capacity, block_rows):
    keys, cell_keys = (BLOCK_KEYS, BLOCK_CELL_KEYS) if block_rows else (KEYS, CELL_KEYS)
    clock = ManualClock(0)
    tier = ChunkTier(capacity, read_ttl_seconds=2, write_ttl_seconds=1, rows=8, clock=clock)
    books = L1Bookkeeper(capacity, read_ttl_seconds=2, write_ttl_seconds=1, clock=clock)
    for op in sequence:
        if op[0] == "advance":
            clock.advance(op[1])
            continue
        (mask, failed), want = run_both(tier, books, op, whole, keys, cell_keys)
        assert mask.size() == (ROWS, COLS)
        if want is None:  # touch: the mask is the keys the tier has
            continue
        codes = {key: (value[0] if isinstance(value, tuple) else value) for key, value in want.items()}
        assert {cell_keys[r][c] for r, c in cells_of(mask)} == {k for k, v in codes.items() if v == L1Error.SUCCESS}
        assert {(cell_keys[r][c], code) for r, c, code in failed} == {
            (k, v) for k, v in codes.items() if v != L1Error.SUCCESS
        }
        assert all(type(code) is L1Error for _, _, code in failed)
        assert tier.num_objects() == books.used()
        assert len(tier) == len(books)


def test_the_masks_are_in_the_controllers_layout():
    tier = ChunkTier(100)
    held = grid_of({(0, 0), (0, 1), (2, 4)})
    assert cells_of(tier.reserve_write(KEYS, False, "w", cells=held)) == {(0, 0), (0, 1), (2, 4)}
    tier.finish_write(KEYS, "w", cells=held)
    found = tier.reserve_read(KEYS)
    assert type(found) is Bitmap2D and found.size() == (ROWS, COLS)
    assert cells_of(found) == {(0, 0), (0, 1), (2, 4)}
    # the cells given are the only keys asked about
    assert cells_of(tier.unsafe_read(KEYS, cells=grid_of({(0, 0), (1, 1)}))) == {(0, 0)}
    mask, failed = tier.finish_read(KEYS, cells=grid_of({(0, 1), (1, 1)}), failures=True)
    assert cells_of(mask) == {(0, 1)} and failed == [(1, 1, L1Error.KEY_NOT_EXIST)]


def test_tags_may_be_ints_and_request_keys_read_back():
    tier = ChunkTier(15)
    assert tier.reserve_write(KEYS, True, 7).popcount() == 15
    assert tier.finish_write(KEYS, "7").popcount() == 0  # the str "7" is another writer
    assert tier.finish_write(KEYS, 7).popcount() == 15
    assert KEYS.shape() == (3, 5) and len(KEYS) == 15
    assert KEYS.hashes.dtype == np.uint64 and list(KEYS.hashes) == list(HASHES)
    assert list(KEYS.rows) == ROW_IDS and KEYS.key(1, 2) == (2**64 - 1, 7)


# -- bad input: a clear error, and nothing changed ---------------------------------


def snapshot(tier):
    return tier.num_objects(), tier.num_resident(), tier.num_staging(), len(tier), cells_of(tier.unsafe_read(KEYS))


def held_tier():
    tier = ChunkTier(20, rows=8)
    tier.reserve_write(KEYS, False, "w", cells=grid_of({(0, 0), (1, 1)}))
    tier.finish_write(KEYS, "w")
    tier.reserve_read(KEYS)
    tier.reserve_write(KEYS, True, "x", cells=grid_of({(2, 2)}))
    return tier


def test_keys_and_flags_of_different_lengths():
    books = L1Bookkeeper(10)
    books.reserve_write(["a"], [False])
    with pytest.raises(ValueError, match=r"3 keys but 2 is_temporary flags"):
        books.reserve_write(["x", "y", "z"], [True, False])
    with pytest.raises(ValueError, match=r"2 keys but 1 objects"):
        books.reserve_write(["x", "y"], [True, False], objects=["X"])
    assert len(books) == 1 and books.used() == 1 and books.state_of("x")["staged"] == {}


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.reserve_write(KEYS, Bitmap2D.zeros(ROWS, COLS + 1), "w"),
        lambda t: t.reserve_read(KEYS, cells=Bitmap2D.zeros(ROWS + 1, COLS)),
        lambda t: t.finish_read(KEYS, cells=Bitmap2D.zeros(ROWS, 4)),
    ],
)
def test_flags_or_cells_of_another_shape(call):
    tier = held_tier()
    before = snapshot(tier)
    with pytest.raises(ValueError, match=r"the keys are 3 x 5 but"):
        call(tier)
    assert snapshot(tier) == before


def test_rows_out_of_range():
    tier = held_tier()
    before = snapshot(tier)
    far = RequestKeys(HASHES, [0, 8, 1])
    for call in (
        lambda: tier.reserve_read(far),
        lambda: tier.reserve_write(far, False, "w"),
        lambda: tier.delete(far, True),
        lambda: tier.finish_read(far, cells=grid_of({(0, 0)})),
    ):
        with pytest.raises(ValueError, match=r"row id 8 \(row 1 of the request\) is out of range: the tier has 8 rows"):
            call()
        assert snapshot(tier) == before
    with pytest.raises(ValueError, match="rows: -1 is not an int in 0..2"):
        RequestKeys(HASHES, [0, -1])
    with pytest.raises(ValueError, match="rows: 4294967296 is not in 0..2"):
        RequestKeys(HASHES, np.array([2**32], dtype=np.int64))


@pytest.mark.parametrize("dtype", [np.int64, np.uint32, np.float64, np.int8])
def test_hashes_must_be_uint64(dtype):
    with pytest.raises(TypeError, match=r"hashes: expected a numpy uint64 array, got dtype"):
        RequestKeys(np.arange(4, dtype=dtype), [0])


def test_other_bad_keys():
    with pytest.raises(ValueError, match="1-d array, got 2 dimensions"):
        RequestKeys(np.zeros((2, 2), dtype=np.uint64), [0])
    with pytest.raises(ValueError, match=r"hashes: -1 is not an int in 0..2\*\*64"):
        RequestKeys([1, -1], [0])
    with pytest.raises(TypeError, match="expected a numpy uint64 array or a list of ints, got str"):
        RequestKeys("abc", [0])
    with pytest.raises(TypeError, match="rows: expected an integer array"):
        RequestKeys(HASHES, np.zeros(2))
    with pytest.raises(TypeError, match="cells must be a Bitmap2D"):
        ChunkTier(4).reserve_read(KEYS, cells=[[1]])
    with pytest.raises(TypeError, match="is_temporary must be a bool or a Bitmap2D"):
        ChunkTier(4).reserve_write(KEYS, 1)
    with pytest.raises(TypeError, match="a tag is a str or an int"):
        ChunkTier(4).finish_write(KEYS, 1.5)
    with pytest.raises(ValueError, match="capacity must be >= 0"):
        ChunkTier(-1)
    with pytest.raises(TypeError, match="capacity must be an int"):
        L1Bookkeeper(2.0)


@pytest.mark.skipif(sys.platform != "linux", reason="uses RLIMIT_AS and /proc/self/status")
@pytest.mark.parametrize(
    "call",
    [
        "ChunkTier(2**40)",
        "ChunkTier(10**30)",
        "L1Bookkeeper(2**33)",
        "L1Bookkeeper(10**30, clock=ManualClock(0))",
    ],
)
def test_an_impossible_capacity_is_a_memory_error_before_anything_is_allocated(call):
    child = run_capped("from bitplan.lmcache.tiers import ChunkTier, L1Bookkeeper, ManualClock", "", call)
    assert child.returncode == 0, child.stderr
    assert child.outcome == "MemoryError"
    assert child.grown_mib < 8


@pytest.mark.skipif(sys.platform != "linux", reason="uses RLIMIT_AS and /proc/self/status")
def test_a_large_possible_capacity_allocates_as_keys_come():
    child = run_capped(
        "import numpy as np\nfrom bitplan.lmcache.tiers import ChunkTier, RequestKeys",
        "keys = RequestKeys(np.arange(64, dtype=np.uint64), [0])",
        "ChunkTier(2**32 - 3).reserve_write(keys, False)",
    )
    assert child.returncode == 0, child.stderr
    assert child.outcome == "OK" and child.grown_mib < 8


# -- threads ---------------------------------------------------------------------


def test_one_tier_shared_between_threads():
    """Threads lock and release the same keys through one tier, batches
    large enough to run without the GIL: every lock taken is released, and
    nothing is lost or doubled."""
    hashes = np.arange(64 * 64, dtype=np.uint64)
    keys = RequestKeys(hashes, range(8))
    tier = ChunkTier(len(keys))
    tier.reserve_write(keys, False, "seed")
    tier.finish_write(keys, "seed")
    rounds, workers = 30, 4
    errors = []

    def work():
        try:
            for _ in range(rounds):
                assert tier.reserve_read(keys, 2).popcount() == len(keys)
                assert tier.finish_read(keys, 2).popcount() == len(keys)
        except AssertionError as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert tier.unsafe_read(keys).popcount() == 0  # no read lock left
    assert tier.num_resident() == len(keys) and tier.num_objects() == len(keys)


def test_chunk_tier_evicts_with_the_policy_lmcache_names():
    keys = RequestKeys(np.array([1, 2], dtype=np.uint64), [0, 1])
    for name in ["LRU", "IsolatedLRU", "S3FIFO", "ARC", "noop"]:
        assert ChunkTier(10, rows=2, eviction_policy=name).eviction_policy == name
    with pytest.raises(ValueError, match="known: LRU, IsolatedLRU, S3FIFO, ARC, noop"):
        ChunkTier(10, eviction_policy="lru")
    tier = ChunkTier(10, rows=2)
    assert tier.eviction_policy == "LRU"
    tier.reserve_write(keys, False, "w")
    tier.finish_write(keys, "w")
    # LMCache's LRU walks a created batch in reverse: the request's first
    # cell ends as the most recent, the last as the oldest.
    locked = tier.reserve_read(keys, 1, cells=Bitmap2D([Bitmap(2, [1]), Bitmap(2)]))
    assert locked.popcount() == 1
    hashes, rows = tier.evict(1.0)  # int(4 x 1.0) = 4, the read-locked (2, 0) stays
    assert hashes.dtype == np.uint64 and rows.dtype == np.uint32
    assert list(zip(hashes.tolist(), rows.tolist())) == [(2, 1), (1, 1), (1, 0)]
    assert len(tier) == 1
    for ratio in [-0.1, 1.5, float("nan")]:
        with pytest.raises(ValueError, match="ratio must be in"):
            tier.evict(ratio)
    assert len(tier) == 1
