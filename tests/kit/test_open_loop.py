"""The open-loop generator on a fake clock: coordinated omission corrected, exactly, with no real timing."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from edumatcher import workloads
from edumatcher.engine import Engine
from edumatcher.kit.open_loop import LatencyReport, Percentiles, arrival_offsets, drive, histogram
from edumatcher.sinks import IterableSource, KeepingSink

MS = 1_000_000
US = 1_000


class FakeClock:
    """Time in ns that moves only when the fake engine works or the driver waits."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now

    def wait_until(self, due: int) -> None:
        self.now = max(self.now, due)

    def handler(self, cost: Callable[[int], int]) -> Callable[[bytes], None]:
        """A fake ``handle`` whose i-th call takes ``cost(i)`` ns of fake time."""
        calls = itertools.count()

        def handle(payload: bytes) -> None:
            self.now += cost(next(calls))

        return handle


def stalled_run(n: int = 2_000, stall_at: int = 100) -> tuple[FakeClock, LatencyReport, list[int], list[int]]:
    # 1 kHz offered, 10 µs per message, one message that takes 50 ms.
    clock = FakeClock()
    handle = clock.handler(lambda i: 50 * MS if i == stall_at else 10 * US)
    run = drive(handle, [b"m"] * n, arrival_offsets(n, 1_000.0, kind="constant"),
                clock=clock, wait_until=clock.wait_until, offered_rate=1_000.0)
    return clock, run.report(), run.response_ns, run.service_ns


def close(a: int, b: int) -> bool:
    """Equal within the histograms' 3 significant digits."""
    return abs(a - b) <= max(a, b) * 1e-3 + 1


def test_a_stall_makes_the_messages_due_during_it_wait() -> None:
    _, report, response, service = stalled_run()
    queued = [i for i, (r, s) in enumerate(zip(response, service, strict=True)) if r > s]
    # Due at 101 ms ... 150 ms, while message 100 ran from 100 ms to 150 ms: 50 messages waited.
    assert queued == list(range(101, 151))
    assert response[101] == 49 * MS + 10 * US  # due at 101 ms, started at 150 ms, done 10 µs later
    assert all(r >= s for r, s in zip(response, service, strict=True))
    assert close(report.worst_queueing_ns, 49 * MS)
    # 51 of 2,000 messages (2.5 %) saw the stall: response p99 shows it, service p99 cannot.
    assert report.response.p99 > 10 * MS
    assert close(report.service.p99, 10 * US)
    assert close(report.service.max, 50 * MS) and close(report.response.max, 50 * MS)


def test_a_closed_loop_would_have_hidden_the_stall() -> None:
    # The same engine, timed the closed-loop way (each message sent when the last is done):
    # one slow sample out of 2,000, invisible below p99.95.
    _, _, _, service = stalled_run()
    assert sorted(service)[-2] == 10 * US


def test_an_idle_maintenance_stall_queues_messages_but_never_shows_in_service_time() -> None:
    clock = FakeClock()
    calls: list[bool] = []

    def maintain(idle: bool) -> None:
        calls.append(idle)
        if idle and calls.count(True) == 1:
            clock.now += 20 * MS  # a freeze at the first idle moment

    n = 500
    run = drive(clock.handler(lambda i: 10 * US), [b"m"] * n, arrival_offsets(n, 1_000.0, kind="constant"),
                maintain=maintain, clock=clock, wait_until=clock.wait_until)
    assert max(run.service_ns) == 10 * US
    assert sum(q > 0 for q in run.queued_ns) == 20  # due at 1 ms ... 20 ms, the freeze ran from 10 µs to 20.01 ms
    assert run.maintenance[0] == (10 * US, 20 * MS + 10 * US, True)
    assert calls.count(False) == n and calls.count(True) == n - 20  # no idle gap while the queue drained
    report = run.report()
    assert report.response.max > 19 * MS and report.service.max == report.service.p50


def test_nobody_waits_below_capacity_on_a_steady_engine() -> None:
    clock = FakeClock()
    run = drive(clock.handler(lambda i: 100 * US), [b"m"] * 1_000, arrival_offsets(1_000, 5_000.0, kind="constant"),
                clock=clock, wait_until=clock.wait_until, offered_rate=5_000.0)
    assert run.response_ns == run.service_ns == [100 * US] * 1_000
    report = run.report()
    assert report.worst_queueing_ns == 0
    assert report.achieved_rate == pytest.approx(5_000.0, rel=1e-3)


def test_arrival_schedules_are_fixed_in_advance() -> None:
    assert arrival_offsets(4, 2_000.0, kind="constant") == [0, 500_000, 1_000_000, 1_500_000]
    poisson = arrival_offsets(20_000, 10_000.0, seed=3)
    assert poisson == arrival_offsets(20_000, 10_000.0, seed=3)
    assert poisson != arrival_offsets(20_000, 10_000.0, seed=4)
    assert poisson[0] == 0 and all(b >= a for a, b in itertools.pairwise(poisson))
    assert poisson[-1] / 1e9 == pytest.approx(2.0, rel=0.05)  # 20,000 arrivals at 10 kHz span about 2 s
    with pytest.raises(ValueError, match="kind"):
        arrival_offsets(3, 1.0, kind="bursty")
    with pytest.raises(ValueError, match="rate"):
        arrival_offsets(3, 0.0)


def test_drive_refuses_mismatched_or_decreasing_schedules() -> None:
    with pytest.raises(ValueError, match="intended times"):
        drive(lambda p: None, [b"a", b"b"], [0])
    with pytest.raises(ValueError, match="decrease"):
        drive(lambda p: None, [b"a", b"b"], [5, 1])


def test_report_percentiles_are_monotone_and_printed() -> None:
    _, report, _, _ = stalled_run()
    for p in (report.response, report.service):
        values = p.as_tuple()
        assert list(values) == sorted(values)
    text = str(report)
    assert "offered 1,000 msg/s" in text and "p99.99" in text and "response" in text and "service" in text
    assert "<table>" in report._repr_html_()
    with pytest.raises(ValueError):
        Percentiles.of(histogram([]))


def test_engine_maintain_is_what_run_does_between_messages() -> None:
    ops = workloads.steady_state(300, seed=4, depth=30)
    items: list[bytes | None] = []
    for i, payload in enumerate(workloads.encode_workload(ops)):
        items.append(payload)
        if i % 7 == 0:
            items.append(None)  # an idle moment

    def engine() -> Engine:
        return Engine([workloads.SYMBOL], clock=itertools.count(0, 1_000).__next__, snapshot_interval_ns=5_000)

    by_run, sink_run = engine(), KeepingSink()
    by_run.run(IterableSource(items), sink_run)
    by_hand, sink_hand = engine(), KeepingSink()
    for item in items:
        if item is not None:
            frames = by_hand.handle(item)
            if frames:
                sink_hand.send_many(frames)
        by_hand.maintain(sink_hand, item is None)
    assert sink_hand.frames == sink_run.frames
    assert any(topic.startswith(b"book.snapshot.") for topic in sink_run.topics())


def test_response_timeline_draws_a_panel_per_run_with_the_window_shaded() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from edumatcher.kit.plots import response_timeline

    _, _, _, _ = stalled_run()
    clock = FakeClock()
    runs = [drive(clock.handler(lambda i: 10 * US), [b"m"] * 50, arrival_offsets(50, 1_000.0, kind="constant"),
                  clock=clock, wait_until=clock.wait_until, label=label) for label in ("a", "b")]
    fig = response_timeline(runs, windows=[None, (1 * MS, 3 * MS)])
    assert len(fig.axes) == 2
    legend = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert "response time" in legend and "freeze (2.0 ms)" in legend
    with pytest.raises(ValueError):
        response_timeline([])


def test_the_sampled_ring_states_its_window_beside_its_percentiles() -> None:
    from edumatcher.metrics import SAMPLE_EVERY, EngineMetrics

    metrics = EngineMetrics(16)
    for i in range(5):
        metrics.ring.add(i * MS, 2 * US, 0)
    s = metrics.summary()
    assert s["sample_every"] == SAMPLE_EVERY and s["window_messages"] == 5 * SAMPLE_EVERY and s["window_s"] == 0.004
    assert s["window"] == f"service time of 1 message in {SAMPLE_EVERY}: the latest 5 samples, about {5 * SAMPLE_EVERY} messages over 0.004 s"
