"""Figures of chapters 00-07: each returns a Figure with the expected axes, and refuses empty input."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from edumatcher.chapters.data_representation.figures import slots_panels  # noqa: E402
from edumatcher.chapters.data_representation.slots import SlotsFigures  # noqa: E402
from edumatcher.chapters.heaps_and_indexes.figures import (  # noqa: E402
    compaction_sweep_figure,
    compaction_trace_figure,
    deletion_curves,  # noqa: E402
)
from edumatcher.chapters.heaps_and_indexes.heaps import CompactionRow, DeletionCosts  # noqa: E402
from edumatcher.chapters.where_the_time_goes.figures import profile_bars  # noqa: E402
from edumatcher.chapters.where_the_time_goes.profiling import ProfileReport, ProfileRow  # noqa: E402
from edumatcher.kit import Measurement, compare  # noqa: E402
from edumatcher.kit.plots import (  # noqa: E402  # noqa: E402
    cost_bars,
    depth_chart,
    latency_histogram,  # noqa: E402
    queue_ladder,
    saving_bars,
    time_unit,
)
from edumatcher.model import TIF, Order, OrderType, Side  # noqa: E402


def _m(seconds: float, label: str = "m", ops: int = 1) -> Measurement:
    return Measurement.from_samples([seconds * k for k in (0.9, 1.0, 1.0, 1.1, 1.2)], label=label, ops_per_call=ops)


def _check(fig: Figure, axes: int) -> None:
    assert isinstance(fig, Figure)
    assert len(fig.axes) == axes
    fig.canvas.draw()  # lays out and renders: catches errors that only appear when drawing


def test_depth_chart_draws_both_sides_and_an_empty_book() -> None:
    fig = depth_chart([(9995, 1, 40), (9990, 2, 25)], [(10010, 1, 10)], title="t")
    _check(fig, 1)
    assert fig.axes[0].get_title() == "t"
    assert len(fig.axes[0].patches) == 3  # one bar per level
    _check(depth_chart([], []), 1)


def test_queue_ladder_has_one_row_per_level_and_one_box_per_order() -> None:
    orders = []
    for i, (side, price, qty) in enumerate([(Side.BUY, 99, 5), (Side.BUY, 99, 7), (Side.SELL, 101, 3)], start=1):
        o = Order(f"o{i}", "X", side, OrderType.LIMIT, TIF.GTC, qty, price, owner="a")
        o.visible_qty, o.arrival_seq = qty, i
        orders.append(o)
    fig = queue_ladder(orders, decimals=0)
    _check(fig, 1)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["BUY 99", "SELL 101"]
    assert len(fig.axes[0].patches) == 3


def test_latency_histogram_marks_p50_p99_and_max() -> None:
    fig = latency_histogram(list(range(1_000, 101_000, 100)))
    _check(fig, 1)
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert [label.split()[0] for label in labels] == ["p50", "p99", "max"]
    assert fig.axes[0].get_xscale() == "log"
    _check(latency_histogram([5_000] * 10), 1)  # all equal: still a valid axis
    with pytest.raises(ValueError):
        latency_histogram([])


def test_profile_bars_colour_the_gate() -> None:
    rows = tuple(ProfileRow(f"f{i}", 1, 1.0, s, s, s) for i, s in enumerate((0.5, 0.3, 0.195, 0.005)))
    fig = profile_bars(ProfileReport(rows, 1.0, 1))
    _check(fig, 1)
    colours = [p.get_facecolor() for p in fig.axes[0].patches]
    assert colours[0] != colours[-1]  # the bottom bar (0.5 %) is under the gate, the top one is not
    with pytest.raises(ValueError):
        profile_bars(ProfileReport((), 1.0, 1))


def test_cost_and_saving_bars() -> None:
    _check(cost_bars([_m(2e-6, "slow"), _m(1e-6, "fast")], title="x"), 1)
    _check(cost_bars([_m(2e-3, "pass", ops=1000)], log=True), 1)
    # A Comparison gives its two bars and the ratio with its interval beside the second.
    fig = cost_bars([compare(_m(2e-6, "a"), _m(1e-6, "b")), _m(3e-6, "c")], log=True)
    _check(fig, 1)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["c", "b", "a"]
    assert sum("a/b = 2.00 (95 % CI" in t.get_text() for t in fig.axes[0].texts) == 1
    fig = saving_bars([("a", 3e-6), ("b", -1e-7)], highlight=["a"])
    _check(fig, 1)
    assert fig.axes[0].get_xlim()[0] < 0  # a negative saving is drawn left of zero
    assert time_unit(5.0) == (1.0, "s") and time_unit(5e-3) == (1e3, "ms")
    with pytest.raises(ValueError):
        cost_bars([])
    with pytest.raises(ValueError):
        saving_bars([])


def test_slots_panels_has_three_panels() -> None:
    figures = SlotsFigures(18, 232.0, 176.0, compare(_m(5e-7), _m(4e-7)), compare(_m(2e-8), _m(2e-8)))
    fig = slots_panels(figures)
    _check(fig, 3)
    assert "plain / slots 1.25 (95 % CI" in fig.axes[1].get_title()


def test_deletion_and_compaction_figures() -> None:
    costs = [DeletionCosts(n, _m(n * 1e-7, ops=10), _m(1e-7, ops=10), _m(1e-6, ops=10)) for n in (1_000, 4_000)]
    fig = deletion_curves(costs)
    _check(fig, 1)
    assert fig.axes[0].get_yscale() == "log"
    row = CompactionRow(2, 30, 10, 1, 12, _m(1e-3, ops=100))
    _check(compaction_trace_figure([(1, 1), (30, 10), (12, 10)], row, slack=8), 1)
    _check(compaction_sweep_figure([row, CompactionRow(4, 50, 10, 0, 50, _m(1e-3, ops=100))]), 2)
    with pytest.raises(ValueError):
        deletion_curves([])
    with pytest.raises(ValueError):
        compaction_trace_figure([], row)
