"""pyperf and py-spy run from chapter 02: the command lines, the readers, and one real run of each."""

from __future__ import annotations

import statistics

import pytest

from edumatcher.chapters.the_standard_tools import out_of_process as oop


def test_pyperf_result_separates_spread_within_and_between_workers() -> None:
    r = oop.PyperfResult(("python",), ((1.0, 1.0, 1.0), (3.0, 3.0, 3.0)), 1, "")
    assert r.mean == 2.0 and r.stdev == pytest.approx(statistics.stdev([1, 1, 1, 3, 3, 3]))
    assert r.within_worker_stdev == 0.0, "every worker's values are equal"
    assert r.between_worker_stdev == pytest.approx(2 ** 0.5), "the workers' means differ by 2"
    one = oop.PyperfResult(("python",), ((1.0, 2.0),), 1, "")
    assert one.between_worker_stdev == 0.0 and one.within_worker_stdev == pytest.approx(2 ** -0.5)


def test_pyperf_command_carries_the_options() -> None:
    cmd = oop.pyperf_command("x = 1", ["y = x", "z = y"], "out.json", processes=3, values=2, python="py")
    assert cmd[:4] == ["py", "-m", "pyperf", "timeit"]
    assert cmd[cmd.index("--processes") + 1] == "3" and cmd[cmd.index("--values") + 1] == "2"
    assert cmd[-2:] == ["y = x", "z = y"] and cmd[cmd.index("--setup") + 1] == "x = 1"


def test_pyperf_timeit_runs_workers_and_reads_their_values() -> None:
    pytest.importorskip("pyperf")
    r = oop.pyperf_timeit("xs = list(range(100))", ["sum(xs)"], processes=2, values=2, min_time=0.001)
    assert len(r.runs) == 2 and all(len(run) == 2 for run in r.runs), r.runs
    assert r.mean > 0 and r.loops >= 1 and "Mean" in r.summary, r.summary
    assert r.command[0] == "python" and "bench.json" in r.command


def test_drive_engine_handles_at_least_one_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert oop.drive_engine(0.05) >= 1
    assert "ready" in capsys.readouterr().out


def test_py_spy_records_a_running_engine_or_says_why_not() -> None:
    reason = oop.py_spy_unavailable()
    if reason is not None:
        assert reason.endswith(".") or "skipping" in reason, reason
        pytest.skip(reason)
    try:
        rec = oop.py_spy_record(1.0, rate=100)
    except RuntimeError as exc:  # e.g. ptrace refused in this container
        pytest.skip(str(exc))
    assert rec.samples > 0 and rec.folded, "py-spy wrote stacks"
    assert any("handle" in line for line in rec.folded), "the engine's handler is on the stacks"
    assert rec.command[0] == "py-spy" and "<child pid>" in rec.command


def test_torn_samples_with_no_frame_are_dropped_and_counted() -> None:
    # seen in CI on 3.12: py-spy --nonblocking wrote a sample with an empty stack, which the
    # exercise's parser (rightly) rejects as "not a folded stack"
    text = "main;handle;submit 12\n 1\n\n  main;idle   2\ngarbage\n 3\n"
    folded, dropped = oop.well_formed_stacks(text)
    assert folded == ("main;handle;submit 12", "main;idle   2")
    assert dropped == 4


def test_process_spread_compares_the_means_with_within_over_root_n() -> None:
    alike = oop.PyperfResult(("python",), ((1.0, 2.0, 3.0), (1.5, 2.5, 2.0), (2.0, 3.0, 1.0)), 1, "")
    s = alike.process_spread()
    assert s.expected == pytest.approx(alike.within_worker_stdev / 3 ** 0.5)
    assert s.between == pytest.approx(alike.between_worker_stdev)
    assert s.ratio == pytest.approx(s.between / s.expected) and not s.differ and s.p > 0.5
    apart = oop.PyperfResult(("python",), ((1.0, 1.1, 0.9), (2.0, 2.1, 1.9), (3.0, 3.1, 2.9)), 1, "")
    assert apart.process_spread().differ and apart.process_spread().p < 0.001
    with pytest.raises(ValueError, match="equal size"):
        oop.PyperfResult(("python",), ((1.0, 2.0), (1.0,)), 1, "").process_spread()
