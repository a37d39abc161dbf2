"""Chapter 06's instrumentation experiments: sampling, the modulo ring, and the loops that time messages."""

from __future__ import annotations

import pytest

from edumatcher.experiments.instrumentation import (
    ModuloRing,
    counter_vs_event,
    instrumentation_cost,
    instrumentation_share,
    ring_index_costs,
    sampled,
    sampled_percentiles,
    timed_loop,
    timing_overhead,
)
from edumatcher.experiments.message_path import encode_workload
from edumatcher.metrics import LatencyRing
from edumatcher.workloads import steady_state


def test_sampled_keeps_the_messages_the_run_loop_would_time() -> None:
    assert sampled(list(range(1, 50)), every=16) == [16, 32, 48]
    assert sampled([5, 6, 7], every=1) == [5, 6, 7]
    with pytest.raises(ValueError):
        sampled([1], every=0)


def test_sampled_percentiles_side_by_side() -> None:
    values = list(range(1, 3201))
    rows = sampled_percentiles(values, every=16)
    assert [r[0] for r in rows] == [50.0, 90.0, 99.0, 99.9]
    assert rows[0] == (50.0, 1600, 1600)
    with pytest.raises(ValueError):
        sampled_percentiles([1, 2], every=16)


def test_modulo_ring_behaves_exactly_like_the_masked_one() -> None:
    masked, modulo = LatencyRing(8), ModuloRing(8)
    for k in range(37):
        masked.add(k, 10 * k, k % 3)
        modulo.add(k, 10 * k, k % 3)
    assert masked.durations() == modulo.durations() and masked.durations_ex_gc() == modulo.durations_ex_gc()
    assert not hasattr(modulo, "__dict__")


def test_timed_loop_counts_everything_and_times_one_in_every() -> None:
    ring = LatencyRing(64)
    seen: list[bytes] = []
    assert timed_loop(seen.append, [b"x"] * 100, 16, ring) == 100
    assert len(seen) == 100 and ring.pos == 6  # messages 16, 32, ..., 96
    everything = LatencyRing(128)
    timed_loop(seen.append, [b"x"] * 100, 1, everything)
    assert everything.pos == 100
    nothing = LatencyRing(8)
    timed_loop(seen.append, [b"x"] * 10, 0, nothing)
    assert nothing.pos == 0
    with pytest.raises(ValueError):
        timed_loop(seen.append, [], 3, ring)


def test_overhead_measurements_and_share() -> None:
    payloads = encode_workload(steady_state(64, seed=1))
    engine = timing_overhead(payloads, repeat=5)
    empty = instrumentation_cost(2_000, repeat=5)
    assert [m.ops_per_call for m in engine] == [64] * 3 and [m.ops_per_call for m in empty] == [2_000] * 3
    share = instrumentation_share(empty, engine)
    assert share.handle_ns > 0 and share.every == 16


def test_ring_index_and_counter_measurements_are_labelled() -> None:
    rows = ring_index_costs(repeat=5, target=0.001)
    assert [m.label for m in rows][2:] == ["LatencyRing.add (mask)", "ModuloRing.add (modulo)"]
    counter, event = counter_vs_event(target=0.001)
    assert counter.label.startswith("counter") and event.label.startswith("event")
