"""fold/unfold and every form (ranked, grouped, fold_unfold*) against a
brute-force model written straight from the definitions (issue #13, "The
semantics"), LMCache's worked cases, and the error rules."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bitplan
from bitplan import FULL_ATTENTION_WINDOW as FULL
from bitplan import Bitmap

from _models import (
    naive_fold,
    naive_fold_grouped,
    naive_fold_unfold_grouped,
    naive_fold_unfold_ranked,
    naive_unfold,
    naive_unfold_grouped,
    rows_of_flat,
    unfold_range,
)


def flat(chunks, groups, ranks, present):
    return Bitmap.from_indices(
        chunks * groups * ranks,
        [i for i in range(chunks * groups * ranks) if present(i // (groups * ranks), i % (groups * ranks) // ranks, i % ranks)],
    )


def rows_bitmaps(found, chunks, ranks, windows):
    rows, row_windows = rows_of_flat(set(found.get_indices_list()), chunks, ranks, windows)
    return [Bitmap.from_indices(chunks, sorted(r)) for r in rows], row_windows


# ---------------------------------------------------------------------------
# Worked cases
# ---------------------------------------------------------------------------


def test_worked_case_full_beside_window_2():
    found = flat(5, 2, 1, lambda j, g, _: j <= 3 if g == 0 else j >= 2)
    hit, mask = bitplan.fold_unfold(found, 5, [FULL, 2])
    assert hit == 4
    assert mask.get_indices_list() == [0, 2, 4, 5, 6, 7]
    assert len(mask) == 10
    assert bitplan.fold_unfold_ranked(found, 5, 1, [FULL, 2]) == (4, mask)


def test_window_group_holding_only_the_tail():
    found = flat(6, 2, 1, lambda j, g, _: g == 0 or j >= 4)
    hit, mask = bitplan.fold_unfold(found, 6, [FULL, 2])
    assert hit == 6
    assert mask == found


def test_mamba_needs_only_the_last_chunk():
    for last in range(8):
        found = Bitmap.from_indices(8, [last])
        assert bitplan.fold(found, 8, 1, [1]).get_indices_list() == [last]
        hit, mask = bitplan.fold_unfold(found, 8, [1])
        assert (hit, mask.get_indices_list()) == (last + 1, [last])
    found = flat(8, 2, 1, lambda j, g, _: g == 0 or j in (2, 5))
    assert bitplan.fold_unfold(found, 8, [FULL, 1])[0] == 6


def test_a_chunk_missing_one_rank_is_absent():
    for missing in range(4):
        found = flat(6, 1, 4, lambda j, _, r: not (j == 3 and r == missing))
        assert repr(bitplan.fold(found, 6, 4, [FULL])) == "111000"
        assert repr(bitplan.fold(found, 6, 4, [1])) == "111011"
        assert bitplan.fold_unfold_ranked(found, 6, 4, [FULL]) == (3, Bitmap(24, 12))


def test_adversarial_hybrid_case_hits_130():
    windows = [FULL, FULL, 8, 32, 1]

    def present(j, g, r):
        return not ((j == 150 and g == 0) or (j == 220 and g == 1 and r == 2) or (10 <= j <= 12 and g == 2) or (j == 130 and g == 3))

    found = flat(300, 5, 4, present)
    hit, mask = bitplan.fold_unfold_ranked(found, 300, 4, windows)
    assert hit == 130
    expected_hit, expected_mask = naive_fold_unfold_ranked(set(found.get_indices_list()), 300, 4, windows)
    assert (hit, mask.get_indices_list()) == (expected_hit, expected_mask)
    assert bitplan.unfold(130, 300, 4, windows) == mask
    rows, row_windows = rows_bitmaps(found, 300, 4, windows)
    ghit, grows = bitplan.fold_unfold_grouped(rows, row_windows)
    assert ghit == 130
    assert [r.get_indices_list() for r in grows] == naive_unfold_grouped(130, 300, row_windows)


def test_zero_chunks_gappy_windows_and_clamping():
    hit, mask = bitplan.fold_unfold(Bitmap(0), 0, [FULL, 2])
    assert hit == 0 and len(mask) == 0
    assert bitplan.fold(Bitmap.from_indices(5, [0, 1, 3, 4]), 5, 1, [2]).get_indices_list() == [0, 1, 4]
    assert bitplan.unfold(99, 3, 1, [FULL]).get_indices_list() == [0, 1, 2]
    assert bitplan.unfold(0, 3, 2, [FULL, 1]) == Bitmap(12)
    hit, rows = bitplan.fold_unfold_grouped([Bitmap(0), Bitmap(0)], [FULL, 2])
    assert hit == 0 and [len(r) for r in rows] == [0, 0]


def test_single_full_group_and_all_full():
    found = Bitmap(50, 37)
    assert bitplan.fold_unfold(found, 50, [FULL]) == (37, Bitmap(50, 37))
    leading = [12, 30, 7]
    found = flat(40, 3, 2, lambda j, g, _: j < leading[g])
    assert bitplan.fold_unfold_ranked(found, 40, 2, [FULL, 0, -7]) == (7, Bitmap(240, 42))


@pytest.mark.parametrize("chunks,ranks,windows", [(20, 2, [0, -7]), (17, 3, [FULL, 3, 1]), (9, 1, [5, FULL])])
def test_single_gap_sweep(chunks, ranks, windows):
    width = len(windows) * ranks
    n = chunks * width
    for gap in range(n):
        found = Bitmap(n, n)
        found.clear(gap)
        got = bitplan.fold_unfold_ranked(found, chunks, ranks, windows)
        ehit, emask = naive_fold_unfold_ranked(set(found.get_indices_list()), chunks, ranks, windows)
        assert (got[0], got[1].get_indices_list()) == (ehit, emask), f"gap {gap}"
        if all(w <= 0 for w in windows):
            assert got == (gap // width, Bitmap(n, gap // width * width))


def test_bits_past_the_end_of_found():
    found = Bitmap(5, 5)
    assert repr(bitplan.fold(found, 4, 1, [FULL, FULL])) == "1100"
    assert repr(bitplan.fold(found, 4, 1, [1, 1])) == "1100"
    found = Bitmap(100, 100)
    assert repr(bitplan.fold(found, 4, 1, [FULL, 2])) == "1111"
    assert len(bitplan.fold_unfold(found, 4, [FULL, 2])[1]) == 8
    assert bitplan.fold(Bitmap(8, 8), 1 << 20, 1, [FULL]).popcount() == 8


def test_unfold_range():
    assert bitplan.unfold_range(0, FULL) == (0, 0)
    assert bitplan.unfold_range(-3, 2) == (0, 0)
    assert bitplan.unfold_range(5, FULL) == (0, 5)
    assert bitplan.unfold_range(5, 0) == (0, 5)
    assert bitplan.unfold_range(5, 2) == (3, 5)
    assert bitplan.unfold_range(5, 9) == (0, 5)
    assert bitplan.unfold_range(2**63 - 1, 1) == (2**63 - 2, 2**63 - 1)
    for length in range(-2, 12):
        for w in range(-2, 12):
            assert bitplan.unfold_range(length, w) == unfold_range(length, w)


def test_merge_and_select_retained():
    a = Bitmap.from_bitstring("1000001")
    b = Bitmap.from_bitstring("0110000")
    assert repr(bitplan.merge_bitmaps([a, b], 7)) == "1110001"
    assert bitplan.merge_bitmaps([], 4) == Bitmap(4)
    assert bitplan.merge_bitmaps(iter([a]), 7) == a
    assert bitplan.merge_bitmaps([a], 7) is not a
    found = Bitmap.from_bitstring("1101")
    r = bitplan.select_retained(found, 4)
    assert repr(r) == "1100" and r is not found
    assert repr(bitplan.select_retained(found, 9, bitplan.TrimPolicy.PREFIX)) == "110000000"
    assert bitplan.select_retained(found, 4, bitplan.TrimPolicy.SEGMENTED_PREFIX) is found
    assert bitplan.select_retained(found, 4, bitplan.TrimPolicy.SPARSE) is found
    assert bitplan.highest_set_bit(found) == 3
    assert bitplan.highest_set_bit(Bitmap(4)) == -1


def test_inputs_are_not_changed():
    found = flat(10, 2, 2, lambda j, g, r: j < 7)
    before = found.get_indices_list()
    bitplan.fold_unfold_ranked(found, 10, 2, [FULL, 3])
    bitplan.fold(found, 10, 2, [FULL, 3])
    rows, row_windows = rows_bitmaps(found, 10, 2, [FULL, 3])
    rows_before = [r.get_indices_list() for r in rows]
    _, out = bitplan.fold_unfold_grouped(rows, row_windows)
    assert found.get_indices_list() == before
    assert [r.get_indices_list() for r in rows] == rows_before
    assert all(o is not r for o in out for r in rows)


def test_windows_accept_any_sequence():
    found = flat(5, 2, 1, lambda j, g, _: j <= 3 if g == 0 else j >= 2)
    for windows in ([FULL, 2], (FULL, 2), range(-1, 3, 3)):
        assert bitplan.fold_unfold(found, 5, windows)[0] == 4


def test_errors():
    found = Bitmap(8, 8)
    for call in (
        lambda: bitplan.fold(found, 4, 0, [FULL]),
        lambda: bitplan.unfold(2, 4, 0, [FULL]),
        lambda: bitplan.fold_unfold_ranked(found, 4, 0, [FULL]),
        lambda: bitplan.fold(found, 4, 1, []),
        lambda: bitplan.unfold(2, 4, 1, []),
        lambda: bitplan.fold_unfold(found, 4, []),
        lambda: bitplan.unfold_grouped(2, 4, []),
        lambda: bitplan.fold_grouped([], []),
        lambda: bitplan.fold_grouped([Bitmap(4), Bitmap(4)], []),
        lambda: bitplan.fold_grouped([Bitmap(4), Bitmap(5), Bitmap(4)], [FULL, 1]),
        lambda: bitplan.fold_grouped([], [FULL]),
        lambda: bitplan.fold_grouped([Bitmap(4), Bitmap(5), Bitmap(4)], [FULL, 1, 2]),
        lambda: bitplan.fold_unfold_grouped([Bitmap(4), Bitmap(5), Bitmap(4)], [FULL, 1, 2]),
    ):
        with pytest.raises(ValueError):
            call()
    with pytest.raises(ValueError) as info:
        bitplan.fold_grouped([Bitmap(4), Bitmap(5), Bitmap(4)], [FULL, 1, 2])
    assert "5" in str(info.value) and "4" in str(info.value)
    with pytest.raises(ValueError) as info:
        bitplan.fold_grouped([Bitmap(4)] * 3, [FULL, 1])
    assert "3" in str(info.value) and "2" in str(info.value)
    with pytest.raises(TypeError):
        bitplan.fold("1111", 4, 1, [FULL])
    with pytest.raises(TypeError):
        bitplan.fold_grouped(["1111"], [FULL])


# ---------------------------------------------------------------------------
# Hypothesis against the brute-force model
# ---------------------------------------------------------------------------


@st.composite
def hybrid_case(draw):
    chunks = draw(st.integers(0, 300))
    ranks = draw(st.integers(1, 8))
    windows = draw(st.lists(st.one_of(st.just(FULL), st.integers(-2, 40)), min_size=1, max_size=6))
    n = chunks * ranks * len(windows)
    length = draw(st.one_of(st.just(n), st.just(n), st.just(n), st.integers(0, n), st.integers(n, n + 130)))
    kind = draw(st.sampled_from(["density", "dense", "gap"]))
    rnd = draw(st.randoms(use_true_random=False))
    if kind == "gap":
        found = set(range(length))
        if length:
            found.discard(rnd.randrange(length))
    else:
        density = rnd.uniform(0.5, 1.0) if kind == "density" else rnd.uniform(0.97, 1.0)
        found = {i for i in range(length) if rnd.random() < density}
    return chunks, ranks, windows, length, found


@settings(max_examples=50)
@given(hybrid_case())
def test_fold_and_unfold_match_the_model(case):
    chunks, ranks, windows, length, found = case
    bm = Bitmap.from_indices(length, sorted(found))
    servable = bitplan.fold(bm, chunks, ranks, windows)
    assert len(servable) == chunks
    assert servable.get_indices_list() == naive_fold(found, chunks, ranks, windows)
    hit, mask = bitplan.fold_unfold_ranked(bm, chunks, ranks, windows)
    ehit, emask = naive_fold_unfold_ranked(found, chunks, ranks, windows)
    assert hit == ehit
    assert len(mask) == chunks * ranks * len(windows)
    assert mask.get_indices_list() == emask
    if ranks == 1:
        h1, m1 = bitplan.fold_unfold(bm, chunks, windows)
        assert (h1, m1.get_indices_list()) == (ehit, emask)
    for other in sorted({0, 1, chunks // 2, chunks, chunks + 3}):
        assert bitplan.unfold(other, chunks, ranks, windows).get_indices_list() == naive_unfold(other, chunks, ranks, windows)


@settings(max_examples=50)
@given(hybrid_case())
def test_grouped_matches_the_model_and_the_flat_form(case):
    chunks, ranks, windows, length, found = case
    bm = Bitmap.from_indices(length, sorted(found))
    rows, row_windows = rows_of_flat(found, chunks, ranks, windows)
    row_bms = [Bitmap.from_indices(chunks, sorted(r)) for r in rows]
    servable = bitplan.fold_grouped(row_bms, row_windows)
    assert servable.get_indices_list() == naive_fold_grouped(rows, chunks, row_windows)
    assert servable == bitplan.fold(bm, chunks, ranks, windows)
    hit, out = bitplan.fold_unfold_grouped(row_bms, row_windows)
    ehit, erows = naive_fold_unfold_grouped(rows, chunks, row_windows)
    assert hit == ehit
    assert isinstance(out, list) and len(out) == len(row_bms)
    assert [r.get_indices_list() for r in out] == erows
    assert all(len(r) == chunks for r in out)
    assert hit == bitplan.fold_unfold_ranked(bm, chunks, ranks, windows)[0]
    for other in sorted({0, hit // 2, hit, chunks + 1}):
        got = bitplan.unfold_grouped(other, chunks, row_windows)
        assert [r.get_indices_list() for r in got] == naive_unfold_grouped(other, chunks, row_windows)


@given(st.integers(0, 40), st.lists(st.integers(-2, 12), min_size=1, max_size=4), st.data())
def test_grouped_rows_in_any_order(chunks, windows, data):
    rnd = data.draw(st.randoms(use_true_random=False))
    rows = [{c for c in range(chunks) if rnd.random() < 0.8} for _ in windows]
    order = data.draw(st.permutations(range(len(windows))))
    bms = [Bitmap.from_indices(chunks, sorted(r)) for r in rows]
    a = bitplan.fold_unfold_grouped(bms, windows)
    b = bitplan.fold_unfold_grouped([bms[i] for i in order], [windows[i] for i in order])
    assert a[0] == b[0]
    assert [a[1][i] for i in order] == b[1]


@given(st.integers(0, 30), st.integers(1, 3), st.lists(st.integers(-2, 8), min_size=1, max_size=3), st.data())
def test_the_fast_model_is_the_literal_one(chunks, ranks, windows, data):
    from _models import naive_fold_literal

    rnd = data.draw(st.randoms(use_true_random=False))
    n = chunks * ranks * len(windows)
    found = {i for i in range(n) if rnd.random() < 0.85}
    assert naive_fold(found, chunks, ranks, windows) == naive_fold_literal(found, chunks, ranks, windows)
    bm = Bitmap.from_indices(n, sorted(found))
    assert bitplan.fold(bm, chunks, ranks, windows).get_indices_list() == naive_fold_literal(found, chunks, ranks, windows)
