"""``bench latency``: a sweep of offered load with response and service time; structure only, no speed asserted."""

from __future__ import annotations

import re

import pytest

from edumatcher.benchmarks import latency_bench
from edumatcher.cli import main


def test_sweep_rows_are_ordered_repeated_and_response_covers_service() -> None:
    result = latency_bench.sweep(1_500, seed=2, loads=(0.1, 0.5, 1.5), passes=2, repeats=2)
    assert len(result.capacity_passes) == 2 and result.capacity > 0 and result.wall_capacity > 0
    assert len(result.after_passes) == 1
    assert [row.load for row in result.rows] == [0.1, 0.5, 1.5]
    for row in result.rows:
        assert len(row.reports) == 2 and row.report in row.reports
        for r in row.reports:
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
    assert len(result.knee().text()) == 2


def _row(load: float, p99_us: float, achieved_share: float) -> latency_bench.LoadRow:
    from edumatcher.kit.open_loop import LatencyReport, Percentiles, histogram

    p = Percentiles(1, 1, int(p99_us * 1e3), 1, 1, 1)
    h = histogram([1])
    report = LatencyReport("x", 100, 1000.0, 1000.0 * achieved_share, p, p, 0, 1.0, h, h)
    return latency_bench.LoadRow(load, [report])


def test_the_knee_is_read_from_the_data_and_ignores_one_disturbed_light_load() -> None:
    rows = [_row(0.1, 900.0, 1.0), _row(0.3, 10.0, 1.0), _row(0.5, 12.0, 1.0), _row(0.7, 30.0, 1.0),
            _row(0.9, 150.0, 0.99), _row(1.1, 5_000.0, 0.8), _row(1.3, 9_000.0, 0.7)]
    sweep = latency_bench.Sweep([latency_bench.CapacityPass(1000.0, 1000.0)], rows, 100, "poisson")
    knee = sweep.knee()
    assert knee.light_p99_ns == 10_000  # the disturbed 10 % row is not the baseline
    assert knee.p99 is rows[4] and knee.saturation is rows[5]
    assert "stops keeping up at 110%" in knee.text()[0] and "from 90% on" in knee.text()[1]


def test_bench_latency_quick_prints_method_interpreter_and_one_row_per_load(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "latency", "--quick", "--arrivals", "constant"]) == 0
    out = capsys.readouterr().out
    assert out.index("method:") < out.index("interpreter:") < out.index("capacity:")
    assert "CPython" in out or "PyPy" in out
    assert "constant arrivals" in out and "quoted: Open Exchange write-up" in out
    rows = [line.split() for line in out.splitlines() if line.strip().split(" ", 1)[0].endswith("%")]
    assert [row[0] for row in rows] == [f"{x:.0%}" for x in latency_bench.LOADS]
    assert latency_bench.LOADS[-1] == 1.5  # past saturation
    assert all(len(row) == len(latency_bench.HEADER) for row in rows)
    assert out.count("knee: ") == 2 and "of CPU time (the 100 % of the sweep)" in out


def test_bench_latency_refuses_an_unknown_arrival_process(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "latency", "--quick", "--arrivals", "bursty"])
    assert "invalid choice" in capsys.readouterr().err
