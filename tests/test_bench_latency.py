"""``bench latency``: a sweep of offered load with response and service time; structure only, no speed asserted."""

from __future__ import annotations

import re

import pytest

from edumatcher.benchmarks import latency_bench
from edumatcher.cli import main


def test_sweep_rows_are_ordered_and_response_covers_service() -> None:
    result = latency_bench.sweep(1_500, seed=2, loads=(0.1, 0.5, 0.9), passes=1)
    assert len(result.capacity_rates) == 1 and result.capacity > 0
    assert [row.load for row in result.rows] == [0.1, 0.5, 0.9]
    for row in result.rows:
        r = row.report
        assert r.count == 1_500
        assert r.offered_rate == pytest.approx(row.load * result.capacity)
        for p in (r.response, r.service):
            values = p.as_tuple()
            assert list(values) == sorted(values), values
        # Every message's response time includes its service time; the histograms keep 3 significant digits.
        for resp, serv in zip(r.response.as_tuple(), r.service.as_tuple(), strict=True):
            assert resp >= serv * (1 - 1e-3), (resp, serv)
        assert len(row.cells()) == len(latency_bench.HEADER)
    assert "p99.99" in result.table() and re.search(r"response p50 went [\d,.]+ -> [\d,.]+ µs \(x[\d,.]+\)", result.shape())


def test_bench_latency_quick_prints_method_interpreter_and_one_row_per_load(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "latency", "--quick", "--arrivals", "constant"]) == 0
    out = capsys.readouterr().out
    assert out.index("method:") < out.index("interpreter:") < out.index("capacity:")
    assert "CPython" in out or "PyPy" in out
    assert "constant arrivals" in out and "quoted, seed 002" in out
    rows = [line.split() for line in out.splitlines() if line.strip().split(" ", 1)[0].endswith("%")]
    assert [row[0] for row in rows] == [f"{x:.0%}" for x in latency_bench.LOADS]
    assert all(len(row) == len(latency_bench.HEADER) for row in rows)


def test_bench_latency_refuses_an_unknown_arrival_process(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "latency", "--quick", "--arrivals", "bursty"])
    assert "invalid choice" in capsys.readouterr().err
