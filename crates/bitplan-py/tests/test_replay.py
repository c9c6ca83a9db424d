"""``bitplan.replay`` against the plain-Python reference model
(crates/replay/tests/reference_replay.py, dicts and OrderedDicts), on
generated traces; and its inputs, options and errors."""

import importlib.util
import json
import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bitplan

_REFERENCE = pathlib.Path(__file__).resolve().parents[2] / "replay" / "tests" / "reference_replay.py"
_spec = importlib.util.spec_from_file_location("reference_replay", _REFERENCE)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


def comparable(report):
    """The fields the reference model also reports."""
    keys = ["requests", "blocks", "tokens", "hit_blocks", "hit_tokens", "computed_blocks"]
    out = {key: report[key] for key in keys}
    out["hit_ratio"] = {kind: pytest.approx(value, rel=1e-12) for kind, value in report["hit_ratio"].items()}
    fields = ["hit_blocks", "evictions", "entries", "peak_entries", "checks_fired", "evicted_by_checks", "dropped_full"]
    tier = lambda t: {field: t[field] for field in fields}
    out["l1"] = tier(report["l1"])
    out["l2"] = [tier(t) for t in report["l2"]]
    return out


capacities = st.one_of(st.none(), st.integers(0, 40))


@given(
    requests=st.lists(st.lists(st.integers(0, 60), min_size=0, max_size=12), max_size=60),
    l1=capacities,
    l2=st.lists(capacities, max_size=3),
    eviction=st.sampled_from(["lru", "fifo", "lfu"]),
)
def test_agrees_with_the_reference_model(requests, l1, l2, eviction):
    report = bitplan.replay(requests, l1, l2, eviction=eviction)
    expected = reference.replay([(keys, len(keys) * 512) for keys in requests], l1, l2, eviction)
    assert comparable(report) == comparable(expected)


def test_a_mooncake_file(tmp_path):
    lines = [
        {"timestamp": 0, "input_length": 1000, "output_length": 3, "hash_ids": [0, 1]},
        {"timestamp": 5, "input_length": 1500, "output_length": 3, "hash_ids": [0, 1, 2]},
    ]
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for trace in (path, str(path)):
        report = bitplan.replay(trace, "inf", [None], kv_bytes_per_token=2)
        assert (report["requests"], report["blocks"], report["tokens"]) == (2, 5, 2500)
        assert (report["hit_blocks"], report["hit_tokens"]) == (2, 1024)
        assert report["l1"]["hit_bytes"] == 2 * 1024
        assert report["l1"]["capacity_blocks"] is None


def test_a_bad_line_names_the_line_and_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"hash_ids": [0]}\n{"hash_ids": [0, "x"]}\n')
    with pytest.raises(ValueError, match=r"^line 2: hash_ids\[1\]: expected a non-negative integer id"):
        bitplan.replay(path, 10)
    path.write_text('{"input_length": 0, "hash_ids": []}\n')
    with pytest.raises(ValueError, match="line 1: input_length: must be at least 1"):
        bitplan.replay(path, 10)
    with pytest.raises(ValueError, match="cannot open"):
        bitplan.replay(tmp_path / "missing.jsonl", 10)


def test_capacities_weights_and_bandwidths():
    keys = list(range(30))
    report = bitplan.replay([keys, keys], "0", ["inf", "inf:weight=2:bw=1e6"], policy="balanced", kv_bytes_per_token=1)
    assert [t["hit_blocks"] for t in report["l2"]] == [10, 20]
    assert report["l2"][1]["load_seconds"] == pytest.approx(20 * 512 / 1e6)
    # 64 KiB at 1 byte a token: 128 blocks of 512 tokens.
    assert bitplan.replay([[1]], "64KiB", kv_bytes_per_token=1)["l1"]["capacity_blocks"] == 128
    assert bitplan.replay([[1]], "1e4tok")["l1"]["capacity_blocks"] == 19


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"l1": "lots"}, ValueError, "not a capacity"),
        ({"l1": "10,20"}, ValueError, "one capacity per tier"),
        ({"l1": "64GiB"}, ValueError, "kv-bytes-per-token"),
        ({"l1": 1.5}, TypeError, "a capacity is an int"),
        ({"l1": 10, "policy": "nope"}, ValueError, "nope"),
        ({"l1": 10, "eviction": "random"}, ValueError, "expected one of lru, fifo, lfu, s3fifo, arc, noop"),
        ({"l1": 10, "l1_watermark": 1.5}, ValueError, r"l1_watermark: 1.5 is outside \[0, 1\]"),
        ({"l1": 10, "l1_watermark": -0.1}, ValueError, r"l1_watermark: -0.1 is outside \[0, 1\]"),
        ({"l1": 10, "l1_watermark": 0.8, "evict_ratio": 2.0}, ValueError, r"evict_ratio: 2.0 is outside \[0, 1\]"),
        ({"l1": 10, "evict_ratio": 0.5}, ValueError, "evict_ratio needs l1_watermark"),
        ({"l1": 10, "l2": [5], "l2_watermark": 1.2}, ValueError, r"l2_watermark: 1.2 is outside \[0, 1\]"),
        ({"l1": 10, "l2": [5], "l2_watermark": 0.5, "l2_evict_ratio": [-1.0]}, ValueError, "l2_evict_ratio: -1.0"),
        ({"l1": 10, "l2": [5], "l2_watermark": [0.5, 0.6]}, ValueError, "2 values for 1 adapters"),
        ({"l1": 10, "l2": [5], "l2_evict_ratio": 0.5}, ValueError, "l2_evict_ratio needs l2_watermark"),
        ({"l1": 10, "l1_watermark": 0.8, "evict_interval_ms": 0}, ValueError, "evict_interval_ms"),
        ({"l1": 10, "timestamps": [0, 1]}, ValueError, "2 timestamps for 1 requests"),
        ({"l1": 10, "eviction": "arc", "windows": [-1]}, ValueError, "hybrid replay keeps lru, fifo or lfu"),
        ({"l1": 10, "block_tokens": 0}, ValueError, "block_tokens"),
    ],
)
def test_bad_options(kwargs, error, message):
    with pytest.raises(error, match=message):
        bitplan.replay([[1, 2]], **kwargs)


LIMIT = "more than a tier can hold: at most 4294967294 blocks (use inf)"


@pytest.mark.parametrize(
    "capacity, message",
    [
        # The CLI's words exactly (prefetch-plan replay --l1 ...).
        ("99999999999999999999", f'"99999999999999999999" is {LIMIT}'),
        (10**20, f'"100000000000000000000" is {LIMIT}'),
        ("5000000000", f'"5000000000" is 5000000000 blocks, {LIMIT}'),
        (2**32 - 1, f'"4294967295" is 4294967295 blocks, {LIMIT}'),
        ("1e15tok", f'"1000000000000000tok" is 1953125000000 blocks, {LIMIT}'),
        ("1e30tok", f'"1000000000000000000000000000000tok" is {LIMIT}'),
    ],
)
def test_a_capacity_too_large_names_the_limit(capacity, message):
    with pytest.raises(ValueError) as raised:
        bitplan.replay([[1, 2]], capacity)
    assert str(raised.value) == message


def test_a_request_must_be_a_sequence_of_ints():
    with pytest.raises(TypeError, match="request 1"):
        bitplan.replay([[1], ["a"]], 10)


def test_hybrid_models():
    # The doc example: a full-attention group and a Mamba group.
    report = bitplan.replay([[1, 2, 3], [1, 2, 3]], None, windows=[-1, 1])
    assert (report["hit_blocks"], report["cells_dropped_by_retain"], report["cells_per_chunk"]) == (3, 2, 2)
    assert report["capacity_saving"] == pytest.approx(1 - 4 / 6)
    # One full-attention group is the flat replay.
    requests = [[1, 2], [1, 2, 3], [4, 1], [1, 2, 3, 5]]
    flat = bitplan.replay(requests, 2, [3])
    cells = bitplan.replay(requests, 2, [3], windows=[-1])
    assert cells["hit_ratio"] == flat["hit_ratio"]
    with pytest.raises(ValueError, match="window list is empty"):
        bitplan.replay(requests, 2, windows=[])


fractions = st.floats(0, 1)
triggers = st.one_of(st.none(), st.tuples(fractions, fractions))


@given(
    requests=st.lists(
        st.tuples(st.lists(st.integers(0, 60), min_size=0, max_size=12), st.integers(0, 1500)), max_size=60
    ),
    l1=capacities,
    l2=st.lists(st.tuples(capacities, st.tuples(fractions, fractions)), max_size=3),
    l2_triggered=st.booleans(),
    eviction=st.sampled_from(["lru", "fifo", "lfu"]),
    l1_trigger=triggers,
    interval=st.integers(1, 2000),
)
def test_agrees_with_the_reference_model_under_lmcaches_trigger(
    requests, l1, l2, l2_triggered, eviction, l1_trigger, interval
):
    # Times go up by 0-1.5 s a request.
    timestamps, now = [], 0
    for _, gap in requests:
        now += gap
        timestamps.append(now)
    keys = [request for request, _ in requests]
    l2_capacities = [capacity for capacity, _ in l2]
    l2_triggers = [trigger for _, trigger in l2] if l2_triggered and l2 else None
    kwargs = {"eviction": eviction, "timestamps": timestamps, "evict_interval_ms": interval}
    if l1_trigger is not None:
        kwargs.update(l1_watermark=l1_trigger[0], evict_ratio=l1_trigger[1])
    if l2_triggers is not None:
        kwargs.update(l2_watermark=[t[0] for t in l2_triggers], l2_evict_ratio=[t[1] for t in l2_triggers])
    report = bitplan.replay(keys, l1, l2_capacities, **kwargs)
    expected = reference.replay(
        [(k, len(k) * 512, t) for k, t in zip(keys, timestamps)],
        l1,
        l2_capacities,
        eviction,
        l1_trigger=l1_trigger,
        l2_triggers=l2_triggers,
        evict_interval_ms=interval,
    )
    assert comparable(report) == comparable(expected)


@pytest.mark.parametrize("eviction", ["lru", "fifo", "lfu", "s3fifo", "arc", "noop"])
def test_every_policy_replays_under_the_trigger_and_at_strict_capacity(eviction):
    requests = [[i % 7, i % 11, 100 + i] for i in range(300)]
    timestamps = [100 * i for i in range(300)]
    strict = bitplan.replay(requests, 20, [60], eviction=eviction)
    assert strict["eviction"] == eviction and strict["evict_interval_ms"] is None
    assert strict["l1"]["watermark"] is None and strict["l1"]["checks_fired"] == 0
    triggered = bitplan.replay(requests, 20, [60], eviction=eviction, l1_watermark=0.8, timestamps=timestamps)
    l1 = triggered["l1"]
    assert (l1["watermark"], l1["evict_ratio"], triggered["evict_interval_ms"]) == (0.8, 0.2, 1000)
    assert l1["peak_entries"] <= 20 and l1["index_bytes"] > 0
    if eviction == "noop":
        # Never evicts: full after the first requests, it drops the rest.
        assert l1["evicted_by_checks"] == 0 and l1["dropped_full"] > 0
    else:
        assert l1["checks_fired"] > 0 and l1["evicted_by_checks"] > 0
