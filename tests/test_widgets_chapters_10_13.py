"""Widgets of chapters 10 and 13: each draws its default from measurements it is given, and redraws without timing."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from edumatcher.chapters.tail_latency.gc_tail import TailRun  # noqa: E402
from edumatcher.chapters.tail_latency.widget import percentile_explorer  # noqa: E402
from edumatcher.chapters.the_last_nanoseconds.widget import Saving, savings_explorer  # noqa: E402
from edumatcher.kit import Comparison, Measurement, OpenLoopRun  # noqa: E402


def _tail(label: str, pause_at: int | None, pause_ns: int, n: int = 2_000) -> TailRun:
    """A stream of ``n`` messages every 200 µs, each 20 µs, one of them ``pause_ns`` long; the queue behind it drains."""
    due = [i * 200_000 for i in range(n)]
    started, completed, free = [], [], 0
    service = [pause_ns if i == pause_at else 20_000 for i in range(n)]
    for t, s in zip(due, service, strict=True):
        start = max(t, free)
        started.append(start)
        free = start + s
        completed.append(free)
    run = OpenLoopRun(label, 5_000.0, due, started, completed, [0] * n)
    return TailRun(label, service, [0] * n, (0, 0, 1 if pause_at is not None else 0), pause_ns, run=run)


def test_percentile_explorer_starts_at_p99_and_the_max_shows_the_pause() -> None:
    # A 3 ms pause delays 15 messages of 2,000 (under 1 %): p99 cannot see it, the max does.
    default, policy = _tail("default collector", 500, 3_000_000), _tail("GcPolicy", None, 0)
    control = percentile_explorer(default, policy)
    figure, note = control.last
    assert isinstance(figure, Figure) and control.values() == {"percentile": 99.0}
    assert "p99 response 0.02 ms, service 0.02 ms; 20 of 2,000 messages lie beyond it" in note.value
    control.controls["percentile"].value = 100.0
    assert "max response 3.00 ms, service 3.00 ms" in control.last[1].value
    assert "1 full collection inside messages" in control.last[1].value
    with pytest.raises(ValueError):
        percentile_explorer(default, policy, percentile=42.0)
    with pytest.raises(ValueError):
        percentile_explorer(TailRun("no record", [1], [0], (0, 0, 0), 0), policy)


def _comparison(a_ns: float, b_ns: float, rounds: int = 21) -> Comparison:
    """A paired comparison of two constant-ish timings, a second each side, ns per call."""
    wobble = [1 + (i % 3 - 1) * 0.01 for i in range(rounds)]
    return Comparison(Measurement.from_samples([a_ns * 1e-9 * w for w in wobble]),
                      Measurement.from_samples([b_ns * 1e-9 * w for w in wobble]), paired=True)


def test_savings_explorer_reads_each_saving_against_one_message() -> None:
    message = Measurement.from_samples([10e-6] * 7)  # one message: 10 µs
    savings = [
        Saving("read", _comparison(500.0, 400.0), unit=100),  # 1 ns per read: 1 % at 100 per message
        Saving("idea", _comparison(50.0, 150.0), technique_first=True),  # 100 ns each: 1 % at once per message
        Saving("nothing", _comparison(100.0, 100.0)),
        Saving("inside the band", _comparison(103.0, 100.0)),  # 3 % faster: the chapter's verdict names no speed-up
    ]
    assert savings[0].per_op_ns()[0] == pytest.approx(1.0, rel=0.05)
    assert savings[1].per_op_ns()[0] == pytest.approx(100.0, rel=0.05) and savings[1].left_alone
    assert not savings[2].clear() and not savings[3].clear() and savings[0].clear()
    control = savings_explorer(message, savings)
    figure, note = control.last
    assert isinstance(figure, Figure) and control.values() == {"times": 1}
    assert len(figure.axes[0].get_legend().get_texts()) == 4, "two clear savings, the 1 % line, the chosen count"
    assert "<td style='padding:1px 8px;text-align:right'>100</td>" in note.value, "the read reaches 1 % at 100"
    assert "no speed-up beyond ±5 %" in note.value
    control.controls["times"].value = 100
    assert "1.00 %" in control.last[1].value
    control.controls["times"].value = 1_000
    assert "more than the whole message" in control.last[1].value
    with pytest.raises(ValueError):
        savings_explorer(message, savings, times=7)
    with pytest.raises(ValueError):
        savings_explorer(message, [])
