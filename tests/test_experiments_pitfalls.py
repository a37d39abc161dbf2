"""Chapter 03's pitfalls: single runs against medians, a cold process, a CPU neighbour, the core count."""

from __future__ import annotations

import pytest

from edumatcher.chapters.measuring_honestly import pitfalls
from edumatcher.kit import IsolatedRunError, Measurement
from edumatcher.kit.message_path import encode_workload
from edumatcher.workloads import steady_state


def test_single_vs_median_widths_from_known_samples() -> None:
    m = Measurement.from_samples([1.0, 1.0, 1.0, 1.0, 4.0, 1.0, 1.0, 1.0, 1.0, 1.0], ops_per_call=10)
    result = pitfalls.SingleVsMedian(m, 5)
    assert result.group_medians == [1.0, 1.0]
    assert result.single_range == pytest.approx((10 - 2.5) / 10)
    assert result.median_range == 0.0
    with pytest.raises(ValueError):
        pitfalls.single_vs_median([b"x"], samples=5, group=5)


def test_single_vs_median_verdict_is_figures_only() -> None:
    m = Measurement.from_samples([1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.5, 1.0, 1.0], ops_per_call=10)
    line = pitfalls.SingleVsMedian(m, 5).verdict
    assert line == "verdict: two single passes of the same work differed by up to 2.00x; two medians of 5 by up to 1.00x"


def test_cold_start_runs_in_a_fresh_interpreter() -> None:
    cold = pitfalls.cold_start(200, passes=6, first_k=10)
    assert len(cold.seconds) == len(cold.first_k_seconds) == 6
    assert all(0 < head <= whole for head, whole in zip(cold.first_k_seconds, cold.seconds, strict=True))
    assert cold.warm.repeat == 5 and cold.cold_ratio > 0 and cold.whole_ratio > 0
    with pytest.raises(ValueError):
        pitfalls.cold_start(200, passes=3)
    with pytest.raises(IsolatedRunError, match="clock"):
        pitfalls.cold_start(200, clock="sundial")


def test_cold_worker_times_each_pass_on_the_chosen_clock() -> None:
    whole, head = pitfalls.cold_worker(100, passes=6, first_k=5, clock="wall")
    assert len(whole) == len(head) == 6 and all(0 < h <= w for h, w in zip(head, whole, strict=True))


def _cold(first: float, later: float) -> pitfalls.ColdStart:
    return pitfalls.ColdStart([2 * first] + [2 * later] * 5, [first] + [later] * 5, 100, 10)


def test_cold_comparison_puts_one_cold_sample_per_process_against_the_later_passes() -> None:
    colds = [_cold(3.0 + 0.1 * i, 1.0 + 0.01 * i) for i in range(5)]
    result = pitfalls.cold_comparison(colds)
    assert result.a.repeat == 5 and result.b.repeat == 25
    assert result.outcome == "slower" and result.ratio == pytest.approx(3.2 / 1.02)
    with pytest.raises(ValueError, match="two processes"):
        pitfalls.cold_comparison(colds[:1])


def test_available_cores_respects_a_cgroup_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    assert pitfalls.available_cores() >= 1
    monkeypatch.setattr(pitfalls, "_cgroup_cpus", lambda: 0.5)  # Binder: a share of one CPU
    assert pitfalls.available_cores() == 1
    monkeypatch.setattr(pitfalls, "_cgroup_cpus", lambda: None)
    assert pitfalls.available_cores() >= 1


def test_colocated_stops_its_workers() -> None:
    payloads = encode_workload(steady_state(100, seed=1))
    result = pitfalls.colocated(payloads, hogs=1, repeat=4, blocks=2, max_seconds=10, settle_s=0.1)
    assert result.hogs == 1 and result.running_after == 1
    assert result.alone.ops_per_call == 100 and result.slowdown > 0
    assert result.comparison.a is result.loaded and result.comparison.b is result.alone
