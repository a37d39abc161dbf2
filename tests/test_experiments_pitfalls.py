"""Chapter 09's pitfalls: single runs against medians, a cold process, a CPU neighbour, the core count."""

from __future__ import annotations

import pytest

from edumatcher.experiments import pitfalls
from edumatcher.experiments.message_path import encode_workload
from edumatcher.measure import Measurement
from edumatcher.workloads import steady_state


def test_single_vs_median_widths_from_known_samples() -> None:
    m = Measurement.from_samples([1.0, 1.0, 1.0, 1.0, 4.0, 1.0, 1.0, 1.0, 1.0, 1.0], ops_per_call=10)
    result = pitfalls.SingleVsMedian(m, 5)
    assert result.group_medians == [1.0, 1.0]
    assert result.single_range == pytest.approx((10 - 2.5) / 10)
    assert result.median_range == 0.0
    with pytest.raises(ValueError):
        pitfalls.single_vs_median([b"x"], samples=5, group=5)


def test_cold_start_runs_in_a_fresh_interpreter() -> None:
    cold = pitfalls.cold_start(200, passes=6, first_k=10)
    assert len(cold.seconds) == len(cold.first_k_seconds) == 6
    assert all(0 < head <= whole for head, whole in zip(cold.first_k_seconds, cold.seconds, strict=True))
    assert cold.warm.repeat == 5 and cold.cold_ratio > 0 and cold.whole_ratio > 0
    with pytest.raises(ValueError):
        pitfalls.cold_start(200, passes=3)


def test_available_cores_respects_a_cgroup_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    assert pitfalls.available_cores() >= 1
    monkeypatch.setattr(pitfalls, "_cgroup_cpus", lambda: 0.5)  # Binder: a share of one CPU
    assert pitfalls.available_cores() == 1
    monkeypatch.setattr(pitfalls, "_cgroup_cpus", lambda: None)
    assert pitfalls.available_cores() >= 1


def test_colocated_stops_its_workers() -> None:
    payloads = encode_workload(steady_state(100, seed=1))
    result = pitfalls.colocated(payloads, hogs=1, repeat=5, max_seconds=10, settle_s=0.1)
    assert result.hogs == 1 and result.running_after == 1
    assert result.alone.ops_per_call == 100 and result.slowdown > 0
