"""Tests for edumatcher.metrics: the sampling mask, the rings, GcMonitor and EngineMetrics.summary."""

from __future__ import annotations

import gc

import pytest

from edumatcher.metrics import (
    SAMPLE_EVERY,
    SAMPLE_MASK,
    EngineMetrics,
    GcMonitor,
    LatencyRing,
    nearest_rank,
)


@pytest.fixture(autouse=True)
def no_leftover_gc_callbacks():
    """Every test must leave gc.callbacks exactly as it found it."""
    before = list(gc.callbacks)
    yield
    assert gc.callbacks == before


def test_sample_mask_selects_one_message_in_sample_every():
    assert SAMPLE_EVERY & SAMPLE_MASK == 0, "SAMPLE_EVERY must be a power of two"
    sampled = [n for n in range(1, 1 + 10 * SAMPLE_EVERY) if not n & SAMPLE_MASK]
    assert sampled == [SAMPLE_EVERY * k for k in range(1, 11)]


@pytest.mark.parametrize("size", [0, -4, 3, 1000, 1023, 2.0, True])
def test_ring_size_must_be_a_power_of_two(size):
    with pytest.raises(ValueError, match="power of two"):
        LatencyRing(size)
    with pytest.raises(ValueError, match="power of two"):
        GcMonitor(size)


def test_ring_wraps_by_mask_and_keeps_the_latest_samples_oldest_first():
    ring = LatencyRing(8)
    for k in range(1, 21):  # 20 samples into 8 slots
        ring.add(started_ns=k * 100, duration_ns=k, gc_ns=k // 2)
    assert ring.pos == 20 and ring.count == 8
    assert ring.durations() == list(range(13, 21))
    assert ring.started() == [k * 100 for k in range(13, 21)]
    # Slot of sample number k (0-based) is k & 7: sample 19 (duration 20) sits in slot 3.
    assert ring.duration_ns[19 & 7] == 20
    assert ring.durations_ex_gc() == [k - k // 2 for k in range(13, 21)]


def test_ring_partially_filled_reports_only_valid_samples():
    ring = LatencyRing(1024)
    assert ring.count == 0 and ring.durations() == []
    with pytest.raises(ValueError, match="no samples"):
        ring.percentile(50)
    ring.add(0, 7, 0)
    ring.add(0, 3, 0)
    assert ring.count == 2 and ring.durations() == [7, 3]


def test_ring_never_grows_nor_replaces_its_lists():
    ring = LatencyRing(16)
    lists = (ring.started_ns, ring.duration_ns, ring.gc_ns)
    ids = [id(x) for x in lists]
    for k in range(10_000):
        ring.add(k, k, 0)
    assert [id(x) for x in (ring.started_ns, ring.duration_ns, ring.gc_ns)] == ids
    assert all(len(x) == 16 for x in lists)
    assert ring.pos == 10_000 and ring.count == 16


def test_nearest_rank_on_known_data():
    values = list(range(1, 101))  # 1..100
    assert nearest_rank(values, 0) == 1
    assert nearest_rank(values, 50) == 50
    assert nearest_rank(values, 99) == 99
    assert nearest_rank(values, 99.9) == 100
    assert nearest_rank(values, 100) == 100
    thousand = list(range(1, 1001))
    assert nearest_rank(thousand, 99.9) == 999  # no float drift to rank 1000
    assert nearest_rank([5], 99.9) == 5
    with pytest.raises(ValueError, match="within"):
        nearest_rank(values, 101)



def test_p99_9_is_the_maximum_below_1000_samples_and_leaves_n_over_1000_above_it():
    """What nearest_rank's docstring says about p99.9, checked by counting, not by its formula."""
    for n in (1, 7, 500, 999, 1_000, 1_250, 2_000, 5_000):
        values = list(range(n))
        got = nearest_rank(values, 99.9)
        above = sum(v > got for v in values)
        # The definition, by brute force: the smallest sample with at least 99.9 % of them <= it.
        smallest = min(v for v in values if 1000 * sum(x <= v for x in values[: v + 1]) >= 999 * n)
        assert got == smallest, f"n={n}: nearest_rank gave {got}, the definition gives {smallest}"
        if n < 1_000:
            assert got == values[-1], f"n={n}: below 1,000 samples a p99.9 is the maximum"
        if n % 1_000 == 0:
            assert above == n // 1_000, f"n={n}: {above} samples above p99.9, expected n / 1000"
    assert nearest_rank(list(range(1, 1001)), 99.9) == 999, "1,000 samples: the second largest, not the maximum"

def test_ring_percentile_with_and_without_gc():
    ring = LatencyRing(128)
    # 100 samples of 10 us; the last five each contain a 1 ms collection.
    for k in range(95):
        ring.add(k, 10_000, 0)
    for k in range(95, 100):
        ring.add(k, 1_010_000, 1_000_000)
    assert ring.percentile(50) == 10_000
    assert ring.percentile(99) == 1_010_000
    assert ring.percentile(99, ex_gc=True) == 10_000
    assert ring.percentile(100, ex_gc=True) == 10_000


def test_gc_monitor_records_a_forced_full_collection():
    monitor = GcMonitor(64)
    with monitor:
        assert monitor.installed
        gc.collect()
        gc.collect(0)
    assert not monitor.installed
    generations = monitor.generations()
    assert generations[-2:] == [2, 0]
    assert monitor.count >= 2 and monitor.count_by_generation[2] >= 1 and monitor.count_by_generation[0] >= 1
    assert all(d >= 0 for d in monitor.durations())
    assert monitor.total_ns == sum(monitor.durations())
    assert monitor.max_ns == max(monitor.durations())
    gen, duration, ended = monitor.records()[-1]
    assert gen == 0 and duration >= 0 and ended > 0
    # Uninstalled: a further collection is not seen.
    count = monitor.count
    gc.collect()
    assert monitor.count == count


def test_gc_monitor_install_and_uninstall_are_idempotent():
    monitor = GcMonitor()
    monitor.install()
    monitor.install()
    assert sum(cb is monitor._callback for cb in gc.callbacks) == 1
    monitor.uninstall()
    monitor.uninstall()
    assert not monitor.installed


def test_gc_monitor_is_removed_even_when_the_block_raises():
    monitor = GcMonitor()
    with pytest.raises(RuntimeError), monitor:
        raise RuntimeError("boom")
    assert not monitor.installed


def test_gc_monitor_ignores_a_stop_without_its_start():
    monitor = GcMonitor()
    monitor._on_gc("stop", {"generation": 2})  # installed mid-collection
    assert monitor.count == 0 and monitor.total_ns == 0


def test_gc_monitor_with_a_fake_clock():
    ticks = iter([100, 350, 1_000, 1_900])
    monitor = GcMonitor(4, clock_ns=lambda: next(ticks))
    monitor._on_gc("start", {"generation": 1})
    monitor._on_gc("stop", {"generation": 1})
    monitor._on_gc("start", {"generation": 2})
    monitor._on_gc("stop", {"generation": 2})
    assert monitor.records() == [(1, 250, 350), (2, 900, 1_900)]
    assert (monitor.count, monitor.total_ns, monitor.max_ns) == (2, 1_150, 900)
    assert monitor.count_by_generation == [0, 1, 1]


def test_engine_metrics_summary_on_synthetic_data():
    clock = [0]
    metrics = EngineMetrics(ring_size=256, clock_ns=lambda: clock[0])
    # 200 samples: 196 of 20 us, 4 of 3 ms of which 2.9 ms was a collection.
    for k in range(196):
        metrics.ring.add(k, 20_000, 0)
    for k in range(4):
        metrics.ring.add(k, 3_000_000, 2_900_000)
    metrics.messages = 200 * 16
    for owner in ("bob", "alice", "bob"):
        metrics.per_owner[owner] = metrics.per_owner.get(owner, 0) + 1
    # Two collections seen by the monitor: 2.9 ms (gen 2) and 0.1 ms (gen 0), over 1 s of wall time.
    stamps = iter([10, 2_900_010, 20, 100_020])
    metrics.gc_monitor._clock_ns = lambda: next(stamps)
    for gen in (2, 0):
        metrics.gc_monitor._on_gc("start", {"generation": gen})
        metrics.gc_monitor._on_gc("stop", {"generation": gen})
    clock[0] = 1_000_000_000

    s = metrics.summary()
    assert s["messages"] == 3200 and s["samples"] == 200
    assert s["handle_us_p50"] == 20.0
    assert s["handle_us_p99"] == 3000.0  # ranks 197..200 are the slow ones
    assert s["handle_us_p99_ex_gc"] == 100.0  # the collector, not our code, made the tail
    assert s["handle_us_p999"] == 3000.0
    assert s["handle_us_max"] == 3000.0
    assert s["gc_pause_us_max"] == 2900.0
    assert s["gc_collections"] == 2
    assert s["gc_collections_by_generation"] == [1, 0, 1]
    assert s["gc_time_pct"] == pytest.approx(0.3)
    assert s["wall_s"] == 1.0
    assert s["per_owner"] == {"alice": 1, "bob": 2}
    assert list(s["per_owner"]) == ["alice", "bob"]


def test_engine_metrics_summary_with_no_samples_says_none():
    s = EngineMetrics().summary()
    assert s["samples"] == 0 and s["messages"] == 0
    assert s["handle_us_p50"] is None and s["handle_us_max"] is None
    assert s["gc_collections"] == 0
