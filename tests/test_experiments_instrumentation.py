"""Chapter 08's instrumentation experiments: sampling, the modulo ring, and the loops that time messages."""

from __future__ import annotations

import pytest

from edumatcher.chapters.off_the_message_path.instrumentation import (
    ModuloRing,
    TimingCost,
    instrumentation_cost,
    instrumentation_share,
    ratio_line,
    sampled,
    sampled_percentiles,
    timed_loop,
    timing_overhead,
)
from edumatcher.kit import Measurement, compare
from edumatcher.kit.message_path import encode_workload
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


def test_overhead_comparisons_are_interleaved_against_the_untimed_loop() -> None:
    payloads = encode_workload(steady_state(64, seed=1))
    engine = timing_overhead(payloads, budget=0.05)
    empty = instrumentation_cost(2_000, budget=0.05)
    for cost, n, what in ((engine, 64, "Engine.handle"), (empty, 2_000, "empty handler")):
        for c in (cost.sampled, cost.every_message):
            assert c.paired and c.rounds >= 12 and c.a.repeat == c.b.repeat == c.rounds
            assert c.a.ops_per_call == c.b.ops_per_call == n
            assert c.b.label == f"{what}, no timing"
        assert cost.sampled.a.label == f"{what}, 1 in 16 timed"
        assert cost.every_message.a.label == f"{what}, every message timed"
    share = instrumentation_share(empty, engine)
    assert share.handle_ns > 0 and share.every == 16


def _cost(untimed: float, sampled: float, every: float, ops: int = 1_000) -> TimingCost:
    def m(seconds: float) -> Measurement:
        return Measurement.from_samples([seconds * k for k in (1.0, 1.01, 0.99, 1.0, 1.0)], ops_per_call=ops)

    return TimingCost(compare(m(sampled), m(untimed)), compare(m(every), m(untimed)), 16)


def test_share_takes_the_instrumentation_from_the_empty_loop_and_the_handling_from_the_engine() -> None:
    empty = _cost(untimed=40e-6, sampled=70e-6, every=300e-6)  # per 1,000 messages
    engine = _cost(untimed=10e-3, sampled=10e-3, every=10.3e-3)
    share = instrumentation_share(empty, engine)
    assert round(share.sampled_ns) == 30 and round(share.every_ns) == 260 and round(share.handle_ns) == 10_000
    assert f"{share.every_share:.2%}" == "2.60%" and f"{share.sampled_share:.2%}" == "0.30%"


def test_ratio_line_states_the_ratio_and_interval_and_never_a_verdict() -> None:
    a = Measurement.from_samples([1.03, 1.02, 1.04, 1.03, 1.03], label="timed")
    b = Measurement.from_samples([1.0, 1.01, 0.99, 1.0, 1.0], label="untimed")
    line = ratio_line(compare(a, b))
    assert not line.lower().startswith("verdict") and "timed / untimed = 1.03" in line and "95 % CI" in line
    for word in ("slower", "faster", "same"):
        assert word not in line
