"""Chapter 10's control, ``percentile_explorer``: slide along the percentiles of the stream the chapter
already ran, and see where the default collector and ``GcPolicy`` part, in response time and in service
time (nothing is measured again).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import ipywidgets as widgets
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from edumatcher.kit.figure_control import FigureControl
from edumatcher.metrics import nearest_rank

from .gc_tail import TailRun

__all__ = ["PERCENTILES", "percentile_figure", "draw_percentile", "percentile_explorer"]


PERCENTILES: tuple[tuple[str, float], ...] = (
    ("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99.9", 99.9), ("p99.99", 99.99), ("max", 100.0),
)
"""The percentiles ``percentile_explorer`` offers, as (label, percentile); 100 is the slowest message."""


_CONTENDER_COLOURS = ("#8d6e63", "#1565c0")


def _nines(p: float, n: int) -> float:
    """Where percentile ``p`` of ``n`` values sits on the "nines" axis: -log10(1 - p/100); the max at log10(n)."""
    return math.log10(n) if p >= 100 or 1 - p / 100 <= 1 / n else -math.log10(1 - p / 100)


def _spectrum(values_ns: Sequence[int]) -> tuple[list[float], list[float]]:
    """The sorted values (ms) against the nines position where each rank begins: a step curve of every percentile. O(n log n)."""
    xs = sorted(values_ns)
    n = len(xs)
    return [-math.log10(1 - r / n) for r in range(n)], [max(v, 1_000) / 1e6 for v in xs]


def percentile_figure(default: TailRun, policy: TailRun, percentile: float) -> Figure:
    """Response (solid) and service time (dashed), ms on a log axis, against the percentile on a "nines" axis.

    One curve per contender and kind of time over the same stream; a vertical
    line marks ``percentile``. The x axis stretches the tail: p90, p99, p99.9 and
    p99.99 are equally spaced, so the last messages get as much room as the first
    half. O(n log n).
    """
    runs = [t for t in (default, policy) if t.run is not None and t.response_ns]
    if len(runs) != 2:
        raise ValueError("percentile_figure needs two runs with open-loop records")
    n = min(len(t.response_ns) for t in runs)
    fig = Figure(figsize=(8.5, 4.4), layout="constrained")
    ax = fig.subplots()
    for t, colour in zip(runs, _CONTENDER_COLOURS, strict=True):
        for values, style, kind in ((t.response_ns, "-", "response"), (t.latencies_ns, "--", "service")):
            xs, ms = _spectrum(values)
            ax.step(xs, ms, where="post", color=colour, linestyle=style, linewidth=1.6, label=f"{t.label}: {kind} time")
    ticks = [(label, _nines(p, n)) for label, p in PERCENTILES if p >= 100 or _nines(p, n) < math.log10(n)]
    ax.set_xticks([x for _, x in ticks], [label for label, _ in ticks])
    ax.set_xlim(0, math.log10(n) + 0.25)
    ax.axvline(_nines(percentile, n), color="#c62828", linewidth=1.2, alpha=0.8)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("percentile of the stream's messages (each step right: ten times rarer)")
    ax.set_ylabel("time per message (ms, log scale)")
    ax.set_title(f"Every percentile of the stream, {n:,} messages: response time (solid) and service time (dashed)",
                 fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def draw_percentile(default: TailRun, policy: TailRun, percentile: float) -> tuple[object, ...]:
    """The percentile figure with ``percentile`` marked, and a line per contender: its times there, and how many messages lie beyond."""
    lines = []
    for t in (default, policy):
        response, service = sorted(t.response_ns), sorted(t.latencies_ns)
        n = len(response)
        rank = n if percentile >= 100 else max(1, math.ceil(percentile / 100 * n))
        label = dict((p, name) for name, p in PERCENTILES).get(percentile, f"p{percentile:g}")
        lines.append(
            f"<b>{html.escape(t.label)}</b>: {label} response {nearest_rank(response, percentile) / 1e6:,.2f} ms, "
            f"service {nearest_rank(service, percentile) / 1e6:,.2f} ms; {n - rank:,} of {n:,} messages lie beyond it")
    full, queued = default.collections[2], policy.queued_behind_freeze()
    pauses = (f"Pauses in this stream: the default collector ran {full} full collection{'s' * (full != 1)} inside "
              f"messages; {queued:,} message{'s were' if queued != 1 else ' was'} due while the policy's freeze ran.")
    return percentile_figure(default, policy, percentile), widgets.HTML(
        "<p>" + "<br>".join(lines) + "</p><p>" + pauses + "</p>")


def percentile_explorer(default: TailRun, policy: TailRun, *, percentile: float = 99.0) -> FigureControl:
    """A slider over ``PERCENTILES`` for the two stream runs the chapter measured; redraws on every change, measures nothing."""
    options = list(PERCENTILES)
    if percentile not in {p for _, p in options}:
        raise ValueError(f"percentile must be one of {[p for _, p in options]}, not {percentile!r}")
    if any(t.run is None or not t.response_ns for t in (default, policy)):
        raise ValueError("percentile_explorer needs two runs with open-loop records")
    control = widgets.SelectionSlider(options=options, value=percentile, description="percentile")
    return FigureControl(lambda percentile: draw_percentile(default, policy, percentile), {"percentile": control},
                         caption="Slide from p99 to the max: at which percentile do the two collectors part, "
                                 "and in response time or in service time?")
