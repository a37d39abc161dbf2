"""Tests for ``bench gc``: it runs end to end, restores the collector, and its pieces do what they say.

No speed is asserted anywhere (a shared machine makes timings noise); the
benchmark prints figures and these tests check the figures are there and sane.
"""

from __future__ import annotations

import gc
import re

import pytest

from edumatcher import workloads
from edumatcher.benchmarks import gc_bench
from edumatcher.cli import main
from edumatcher.engine import Engine
from edumatcher.metrics import GcMonitor


def collector_state() -> tuple[tuple[int, ...], bool, int, int]:
    return gc.get_threshold(), gc.isenabled(), gc.get_freeze_count(), len(gc.callbacks)


@pytest.fixture(autouse=True)
def restore_collector():
    """Whatever happens, leave the collector as found (the assertions below check the bench did it itself)."""
    thresholds, enabled, _, _ = collector_state()
    callbacks = list(gc.callbacks)
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)
    (gc.enable if enabled else gc.disable)()
    gc.callbacks[:] = callbacks


@pytest.fixture
def small(monkeypatch):
    """Shrink --quick further: these tests check behaviour, not figures."""
    monkeypatch.setattr(gc_bench, "QUICK_RAMP_RESTING", 3_000)
    monkeypatch.setattr(gc_bench, "QUICK_STEADY_MESSAGES", 3_000)
    monkeypatch.setattr(gc_bench, "LULL_EVERY", 500)
    monkeypatch.setattr(gc_bench, "QUICK_OPEN_MESSAGES", 1_000)


def test_bench_gc_quick_runs_prints_figures_and_restores_the_collector(small, capsys):
    before = collector_state()
    assert main(["bench", "gc", "--quick"]) == 0
    assert collector_state() == before
    out = capsys.readouterr().out
    # Method and interpreter come first, before any figure.
    assert out.index("method:") < out.index("interpreter:") < out.index("[1/4]")
    table = out[out.index("[4/4]"):]
    for contender in (gc_bench.DEFAULT, gc_bench.POLICY):
        for phase in gc_bench.PHASES:
            assert re.search(rf"{contender}\s+{phase}\s+[\d,.]+ \([\d,.]+–[\d,.]+\)", table), (contender, phase)
    assert out.count("pass 5/5") == 2 and out.count("warm-up") >= 2
    assert "GcPolicy's freeze" in out
    # Each policy pass shows its longest collection at a lull beside the control job's longest.
    assert out.count("longest at a lull") == 6 and out.count("beside a control job's") == 6
    assert "collector after the run: restored as found" in out
    assert "1. with GcPolicy, longest collection pause after the freeze" in out
    assert "2. max response time after the open (open loop" in out
    assert out.count(" -> met") + out.count(" -> NOT met") == 2
    assert out.count("run 1/2 GcPolicy") == 1 and "messages arrived while it ran and waited up to" in out
    assert "off the message path" not in out  # the freeze is between messages, and messages wait for it


def test_bench_gc_refuses_too_few_repeats(capsys):
    assert main(["bench", "gc", "--quick", "--repeat", "2"]) == 1
    assert "Error: --repeat 2 is too few" in capsys.readouterr().err


def test_bench_gc_lull_every_spaces_the_idle_ticks_and_refuses_nonsense(small, capsys):
    assert main(["bench", "gc", "--quick", "--lull-every", "750"]) == 0
    assert "every 750 steady messages" in capsys.readouterr().out
    assert main(["bench", "gc", "--quick", "--lull-every", "0"]) == 1
    err = capsys.readouterr().err
    assert "Error: --lull-every must be a whole number of messages, at least 1" in err and len(err.strip().splitlines()) == 1


def test_one_pass_takes_its_lull_interval_from_the_caller(small):
    ramp = workloads.encode_workload(workloads.opening_ramp(500, 3))
    steady = workloads.encode_workload(gc_bench.steady_ops(1_200, 3))
    result = gc_bench.one_pass(Engine([workloads.SYMBOL]), ramp, steady, use_policy=True, lull_every=300)
    assert result.actions.count("young") == len(steady) // 300 == 4


def test_one_pass_measures_every_message_and_freezes_once(small):
    ramp = workloads.encode_workload(workloads.opening_ramp(2_000, 3))
    steady = workloads.encode_workload(gc_bench.steady_ops(1_500, 3))
    before = collector_state()
    result = gc_bench.one_pass(Engine([workloads.SYMBOL]), ramp, steady, use_policy=True)
    assert collector_state() == before
    assert result.phases["ramp"].messages == len(ramp) and result.phases["steady"].messages == len(steady)
    assert result.phases["ramp"].live_orders == 2_000  # the ramp never crosses: everything rests
    assert result.freeze_ns is not None and result.freeze_ns > 0
    assert result.actions.count("freeze") == 1 and result.actions[:2] == ["start", "arm"]
    # A lull every LULL_EVERY steady messages, each a young collection (the full one is minutes away).
    assert gc_bench.LULL_EVERY == 500
    assert result.actions.count("young") == len(steady) // 500 == 2
    assert result.phases["steady"].lull_collections >= 2
    for stats in result.phases.values():
        assert 0 < stats.p50 <= stats.p99 <= stats.p999 <= stats.max
        assert stats.max_ex_gc <= stats.max

    plain = gc_bench.one_pass(Engine([workloads.SYMBOL]), ramp, steady, use_policy=False)
    assert plain.freeze_ns is None and plain.actions == []
    assert plain.phases["steady"].lull_collections == 0
    assert collector_state() == before


def test_one_pass_restores_the_collector_when_the_engine_fails():
    class Exploding:
        books = {workloads.SYMBOL: []}

        def handle(self, payload: bytes) -> None:
            raise RuntimeError("boom")

    before = collector_state()
    with pytest.raises(RuntimeError, match="boom"):
        gc_bench.one_pass(Exploding(), [b"x"], [b"y"], use_policy=True)
    assert collector_state() == before


def test_phase_stats_pairs_the_longest_collection_at_a_lull_with_its_tick():
    ends = iter([10, 110, 1_000, 1_500, 2_000, 2_300])  # three collections: 100, 500 and 300 ns
    monitor = GcMonitor(8, clock_ns=lambda: next(ends))
    for _ in range(3):
        monitor._on_gc("start", {})
        monitor._on_gc("stop", {"generation": 1})
    # The first on the message path; the others at two lulls, ticks of 600 and 400 ns wall, 550 and 380 CPU.
    lulls = [(1, 2, 600, 550), (2, 3, 400, 380)]
    stats = gc_bench._phase_stats([5, 7], [0, 100], monitor, 0, 3, lulls, controls=[9, 11])
    assert (stats.longest_pause, stats.collections) == (100, (0, 1, 0))
    assert (stats.lull_collections, stats.longest_lull_pause, stats.median_lull_pause) == (2, 500, 400)
    assert (stats.wall_at_longest_lull, stats.cpu_at_longest_lull) == (600, 550)
    assert (stats.control_median, stats.control_longest) == (10, 11)


def test_steady_ops_rename_ids_and_drop_cancel_owner():
    ops = gc_bench.steady_ops(5_000, seed=2)
    original = workloads.steady_state(5_000, 2, depth=gc_bench.STEADY_DEPTH)
    kept = [op for op in original if op[0] != workloads.CANCEL_OWNER]
    assert len(ops) == len(kept) < len(original)  # 5,000 steps make a few cancel_owner
    for mine, theirs in zip(ops, kept, strict=True):
        assert mine[0] == theirs[0] and mine[1] == "s" + theirs[1][1:] and mine[2:] == theirs[2:]


def _pass(label: str, steady_max: int, pause: int = 0, lull_pause: int = 0) -> gc_bench.PassResult:
    stats = gc_bench.PhaseStats(
        messages=10, p50=1, p99=2, p999=3, max=steady_max, max_ex_gc=steady_max, longest_pause=pause,
        collections=(0, 0, 0), longest_lull_pause=lull_pause,
    )
    return gc_bench.PassResult(label, {"ramp": stats, "steady": stats})


def test_open_pass_times_response_and_who_waited_for_the_freeze():
    ramp = workloads.encode_workload(workloads.opening_ramp(3_000, 3))
    steady = workloads.encode_workload(gc_bench.steady_ops(1_000, 3))
    before = collector_state()
    policy = gc_bench.open_pass(ramp, steady, use_policy=True, rate=20_000.0)
    assert collector_state() == before
    assert policy.report.count == len(steady) and policy.freeze_ns is not None and policy.freeze_window is not None
    assert policy.report.response.max >= policy.report.service.max * (1 - 1e-3)
    assert policy.waited == 0 or policy.longest_wait_ns > 0
    plain = gc_bench.open_pass(ramp, steady, use_policy=False, rate=20_000.0)
    assert plain.freeze_ns is None and plain.waited == 0 and collector_state() == before


def _open(label: str, response_max_ns: int) -> gc_bench.OpenRun:
    from edumatcher.kit.open_loop import LatencyReport, Percentiles, histogram

    p = Percentiles(1, 1, 1, 1, 1, response_max_ns)
    h = histogram([1])
    return gc_bench.OpenRun(label, LatencyReport(label, 10, 1.0, 1.0, p, p, 0, 1.0, h, h))


def test_target_two_is_judged_on_open_loop_response_time():
    closed = [_pass("d", 50_000_000)]
    policy = [_pass("p", 1_000, pause=1, lull_pause=1)]  # closed loop would say 50,000x
    targets = gc_bench.evaluate_targets(closed, policy, [_open("d", 20_000_000)], [_open("p", 60_000_000)])
    assert "response time" in targets[1].text and not targets[1].met and "0.3x" in targets[1].text


def test_targets_are_judged_on_the_figures_and_can_fail():
    default = [_pass("d", 50_000_000), _pass("d", 60_000_000), _pass("d", 1_000)]
    good = [_pass("p", 2_000_000, pause=200_000, lull_pause=900_000) for _ in range(3)]
    assert [t.met for t in gc_bench.evaluate_targets(default, good)] == [True, True]  # 50 ms / 2 ms = 25x
    slow_lull = good[:2] + [_pass("p", 2_000_000, lull_pause=1_000_000)]
    targets = gc_bench.evaluate_targets(default, slow_lull)
    assert [t.met for t in targets] == [False, True]  # one pass at 1 ms is enough to miss target 1
    assert "on the message path 200.0 µs, at lulls 1,000.0 µs; median pass 900.0 µs" in targets[0].text
    close = [_pass("p", 6_000_000) for _ in range(3)]  # 50 ms / 6 ms < 10x
    targets = gc_bench.evaluate_targets(default, close)
    assert [t.met for t in targets] == [True, False]
    assert "8.3x" in targets[1].text
