"""The same scenarios through a stock LMCache ``StorageManager`` and through
one with bitplan installed: what a caller sees must be equal (issue #37,
item 3). Each scenario mixes stores, prefetches (hybrid windows, several
ranks and adapters, both lock modes, both fetching policies, L1-only
requests), deletes and eviction ticks; its record holds every hit cell,
hit count, owner, byte read back and the L1 usage after each step, and
every error LMCache logged (a request that fails in the controller's
thread only logs: it would look like a miss)."""

from __future__ import annotations

import pytest
import scenarios
from scenarios import Config, Shape

import bitplan.lmcache.integration as integration


def both(run):
    """``run()`` on stock LMCache, then with bitplan installed."""
    integration.uninstall()
    stock = run()
    integration.install()
    try:
        ours = run()
        assert integration.installed()["lmcache.v1.distributed.storage_manager.L1Manager"] == "replaced"
    finally:
        integration.uninstall()
    return stock, ours


def assert_same(stock, ours):
    assert stock.exceptions == [], stock.exceptions[:1]
    assert ours.exceptions == [], ours.exceptions[:1]
    # The errors LMCache logs and goes on (a plan refused): the same ones.
    assert ours.errors == stock.errors
    for at, (theirs, mine) in enumerate(zip(stock.events, ours.events)):
        assert mine == theirs, f"step {at} differs"
    assert len(ours.events) == len(stock.events)


def prefetches(record):
    return [event for event in record.events if event[0] == "prefetch"]


@pytest.mark.parametrize("seed", range(10))
def test_seeded_scenarios_give_the_same_results(seed):
    stock, ours = both(lambda: scenarios.run(seed))
    assert_same(stock, ours)


def whole(seq, shape, chunks):
    return ("store", seq, [(g, r, j) for g, r in shape.rows for j in range(chunks)])


def test_hybrid_loads_from_three_adapters_with_retention():
    shape = Shape(windows=[-1, 2, 1], ranks=2, elements=[64, 32, 96])
    config = Config(l1_bytes=4 << 20, adapters=3, eviction="ARC", prefetch_policy="retain")
    ops = [
        whole(1, shape, 12),
        ("delete", 1, [(g, r, j) for g, r in shape.rows for j in range(12) if (j + g + r) % 3]),
        ("prefetch", 1, 12, True, 2, "prefix", False),
        # Retained: the same request now hits L1 alone.
        ("prefetch", 1, 12, True, 1, "prefix", False),
        ("tick", 0.3),
        ("prefetch", 1, 12, False, 1, "prefix", False),
        ("delete", 1, [(0, 0, 5)]),
        ("prefetch", 1, 12, True, 1, "prefix", True),
        ("prefetch", 1, 12, True, 1, "prefix", False),
    ]
    stock, ours = both(lambda: scenarios.run_script(config, shape, ops, "hybrid"))
    assert_same(stock, ours)
    fetched = prefetches(stock)
    assert fetched[0][6] > 0, "the first prefetch loads from L2"
    assert fetched[1][6] == 0 and fetched[1][5] > 0, "the second is served by L1"


def test_reservations_out_of_memory_replan():
    # 1 MiB of L1 holds 256 objects (4 KiB blocks): the load of the first
    # sequence (120) cannot reserve every row once the second (160) is in.
    shape = Shape(windows=[-1, 2], ranks=2, elements=[64, 64])
    config = Config(l1_bytes=1 << 20, adapters=2, eviction="LRU", prefetch_policy="default")
    ops = [
        whole(1, shape, 30),
        ("delete", 1, [(g, r, j) for g, r in shape.rows for j in range(30)]),
        whole(2, shape, 40),
        ("prefetch", 1, 30, True, 1, "prefix", False),
        ("tick", 0.5),
        ("prefetch", 1, 30, True, 1, "full", False),
        ("prefetch", 2, 40, False, 1, "prefix", False),
    ]
    stock, ours = both(lambda: scenarios.run_script(config, shape, ops, "oom"))
    assert_same(stock, ours)
    first = prefetches(stock)[0]
    assert 0 < first[6] < 4 * 30, "some L2 loads fit, not all"


def test_whole_columns_with_l2_loads():
    shape = Shape(windows=[-1, -1], ranks=2, elements=[32, 32])
    config = Config(l1_bytes=1 << 20, adapters=2, eviction="noop", prefetch_policy="default")
    ops = [
        ("store", 1, [(g, r, j) for g, r in shape.rows for j in range(16) if (g, r, j) != (1, 1, 3)]),
        ("delete", 1, [(g, r, j) for g, r in shape.rows for j in range(0, 16, 2)]),
        ("prefetch", 1, 16, True, 1, "full", False),
        ("prefetch", 1, 16, True, 2, "prefix", False),
    ]
    stock, ours = both(lambda: scenarios.run_script(config, shape, ops, "full"))
    assert_same(stock, ours)
    assert prefetches(stock)[0][4] is not None, "'full' reports its found cells"


def test_the_books_let_go_of_finished_requests():
    """After requests that load from L2 and requests that miss, the books
    hold only the keys L1 holds, and no writer tag: a request's ids and
    its tag go back when it finishes."""
    shape = Shape(windows=[-1, 2], ranks=2, elements=[64, 64])
    config = Config(l1_bytes=4 << 20, adapters=2, eviction="LRU", prefetch_policy="default")
    integration.install()
    try:
        manager = scenarios.make_manager(config)
        try:
            record = scenarios.Record()
            scenarios.store(manager, shape, {g: [scenarios.key(1, j, g, r, 2) for r in range(2) for j in range(10)] for g in range(2)}, record)
            for seq in (1, 2, 3):
                keys = [scenarios.key(1, j, g, r, 2) for g in range(2) for r in range(2) for j in range(0, 10, 3)]
                scenarios.delete(manager, keys, record)
                scenarios.prefetch(manager, shape, seq, 10, lock=True, readers=1, fetching="prefix", skip_l2=False, record=record)
            books = manager._l1_manager._books
            assert books._tags_in_use() == 0
            status = manager._l1_manager.report_status()
            assert len(books) == status["total_object_count"]
            assert any(event[0] == "prefetch" and event[6] > 0 for event in record.events)
        finally:
            manager.close()
    finally:
        integration.uninstall()
