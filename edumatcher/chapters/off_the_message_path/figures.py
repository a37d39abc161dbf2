"""Chapter "off the message path": its figures (the run loop, snapshot costs, sampled percentiles).

The run loop as a picture: the message path in one colour, the work done between messages in another.

Chapter 08 opens with this diagram. It is drawn from ``LOOP_BOXES`` and
``LOOP_ARROWS`` (plain data, so the test can check that every arrow joins two
boxes that exist) with matplotlib patches: no image is fetched from anywhere.

Snapshot costs against book size: one snapshot, and the message path under both publication policies.

Left panel: the time to build one snapshot, against the number of price levels
in the book. Right panel: the time per message of ``Engine.run`` when a snapshot
follows every change and when snapshots are throttled, against the same sizes.
Each point is a median; the bars run from the fastest to the slowest sample.
Both y axes start at 0: a cost that grows by a tenth looks like a tenth.

Percentiles from every message against percentiles from the 1-in-N sample the run loop keeps.

Grouped bars on a log scale: for each percentile, the figure from all messages
and the one from the sample, with how many sampled messages lie at or beyond that
percentile written above the sample's bar: a tail percentile resting on a handful
of samples is a guess, however the sampling was done.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from matplotlib.ticker import NullLocator

from edumatcher.kit import Measurement

from .instrumentation import PERCENTILES, sampled, sampled_percentiles
from .snapshots import PublicationCost, SnapshotCost

__all__ = ["LOOP_BOXES", "LOOP_ARROWS", "run_loop_diagram", "snapshot_cost_figure", "percentile_comparison"]


HOT = "#c62828"
AROUND = "#1565c0"
NEUTRAL = "#455a64"

LOOP_BOXES: dict[str, tuple[float, float, str, str]] = {
    # name: (x centre, y centre, text, colour)
    "poll": (2.0, 5.0, "source.poll()", NEUTRAL),
    "decide": (2.0, 3.3, "a payload?", NEUTRAL),
    "count": (5.6, 5.0, "sampled timing: 1 message in 16;\ncounters: plain ints", HOT),
    "handle": (5.6, 3.3, "Engine.handle(payload)\nto completion\n(the message path)", HOT),
    "idle": (5.6, 1.6, "idle tick:\nnothing waiting", AROUND),
    "snap": (9.2, 3.3, "snapshots of changed books,\nat most one per interval", AROUND),
    "gc": (9.2, 1.6, "collector housekeeping:\nGcPolicy.tick(idle)", AROUND),
}
"""The boxes of the diagram: centre, label and colour (red: on the message path; blue: between messages)."""

LOOP_ARROWS: tuple[tuple[str, str, str], ...] = (
    ("poll", "decide", ""),
    ("decide", "handle", "yes"),
    ("decide", "idle", "no"),
    ("handle", "snap", "then"),
    ("idle", "snap", "then"),
    ("snap", "gc", ""),
    ("handle", "count", "inside"),
)
"""Arrows ``(from, to, label)`` between boxes named in ``LOOP_BOXES``; after ``gc`` the loop returns to ``poll``."""

_W, _H = 2.9, 1.05


def _edge(x: float, y: float, dx: float, dy: float) -> tuple[float, float]:
    """Where the ray from a box's centre in direction (dx, dy) leaves the box."""
    hw, hh = _W / 2 + 0.08, _H / 2 + 0.08
    t = min(hw / abs(dx) if dx else float("inf"), hh / abs(dy) if dy else float("inf"))
    return x + t * dx, y + t * dy


def run_loop_diagram() -> Figure:
    """Draw one iteration of ``Engine.run``: the message path (red) and the maintenance around it (blue)."""
    fig = Figure(figsize=(9.5, 4.8), layout="constrained")
    ax = fig.add_subplot()
    ax.set_xlim(0.4, 11.1)
    ax.set_ylim(0.9, 6.0)
    ax.axis("off")
    for x, y, text, colour in LOOP_BOXES.values():
        ax.add_patch(FancyBboxPatch((x - _W / 2, y - _H / 2), _W, _H, boxstyle="round,pad=0.06",
                                    facecolor=colour, alpha=0.12, edgecolor=colour, linewidth=1.6))
        ax.text(x, y, text, ha="center", va="center", fontsize=9, color="#212121")
    for start, end, label in LOOP_ARROWS:
        (x0, y0, *_), (x1, y1, *_) = LOOP_BOXES[start], LOOP_BOXES[end]
        dx, dy = x1 - x0, y1 - y0
        a, b = _edge(x0, y0, dx, dy), _edge(x1, y1, -dx, -dy)
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=14, color=NEUTRAL, linewidth=1.2))
        if label:
            ax.text((a[0] + b[0]) / 2 + 0.05, (a[1] + b[1]) / 2 + 0.12, label, fontsize=8, color=NEUTRAL, style="italic")
    # Back to poll(): out of the right of the GcPolicy box, over the top, down into poll().
    gx, gy = LOOP_BOXES["gc"][0] + _W / 2 + 0.08, LOOP_BOXES["gc"][1]
    px, py = LOOP_BOXES["poll"][0], LOOP_BOXES["poll"][1] + _H / 2 + 0.08
    top = 5.8
    ax.plot([gx, 10.95, 10.95, px], [gy, gy, top, top], color="#9e9e9e", linewidth=1.0)
    ax.add_patch(FancyArrowPatch((px, top), (px, py), arrowstyle="-|>", mutation_scale=14, color="#9e9e9e", linewidth=1.0))
    ax.text(7.6, top + 0.06, "next iteration", fontsize=8, color="#757575", ha="center", va="bottom")
    ax.set_title("One iteration of Engine.run: red is what a message waits for, blue happens between messages",
                 fontsize=10)
    return fig


def _us(m: Measurement) -> tuple[float, float, float]:
    """Median per operation and its distances to min and max, in µs."""
    per = m.ops_per_call
    med = m.median / per * 1e6
    return med, med - m.min / per * 1e6, m.max / per * 1e6 - med


def _size_axis(ax: Axes, levels: Sequence[int], resting: Sequence[int]) -> None:
    """A log x axis with one tick per measured book: its levels, and its resting orders under them."""
    ax.set_xscale("log")
    ax.set_xticks(list(levels), [f"{lv:,}\n({n:,} orders)" for lv, n in zip(levels, resting, strict=True)])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(min(levels) / 1.5, max(levels) * 1.5)
    ax.set_xlabel("price levels in the book (log scale)")


def snapshot_cost_figure(snapshots: Sequence[SnapshotCost], publication: Sequence[PublicationCost]) -> Figure:
    """Two panels sharing the book-size axis: one snapshot's cost, and the cost per message under both policies.

    Both y axes start at 0, so a change of a tenth looks like a tenth; each point
    is a median with a bar from the fastest to the slowest sample. The policies'
    legend sits under the panels, off the lines.
    """
    if not snapshots or not publication:
        raise ValueError("snapshot_cost_figure needs at least one snapshot cost and one publication cost")
    fig = Figure(figsize=(10, 4.4), layout="constrained")
    left, right = fig.subplots(1, 2)
    xs = [s.levels for s in snapshots]
    meds, lows, highs = zip(*(_us(s.time) for s in snapshots), strict=True)
    left.errorbar(xs, meds, yerr=[lows, highs], marker="o", color="#6a1b9a", capsize=3)
    _size_axis(left, xs, [s.resting for s in snapshots])
    left.set_ylim(0, max(m + h for m, h in zip(meds, highs, strict=True)) * 1.25)
    left.set_ylabel("µs per snapshot (median)")
    left.set_title("Building one snapshot", fontsize=10)
    left.grid(True, alpha=0.3)

    px = [p.levels for p in publication]
    top = 0.0
    for attr, label, colour in (("every_change", "snapshot after every change", "#c62828"),
                                ("throttled", "throttled: at most one per interval", "#1565c0")):
        meds, lows, highs = zip(*(_us(getattr(p, attr)) for p in publication), strict=True)
        right.errorbar(px, meds, yerr=[lows, highs], marker="o", color=colour, capsize=3, label=label)
        top = max(top, max(m + h for m, h in zip(meds, highs, strict=True)))
    _size_axis(right, px, [p.resting for p in publication])
    right.set_ylim(0, top * 1.15)
    right.set_ylabel("µs per message (median)")
    right.set_title("Engine.run over the same trades, two policies", fontsize=10)
    fig.legend(*right.get_legend_handles_labels(), title="right panel, Engine.run with", title_fontsize=8, fontsize=8,
               loc="outside lower center", ncols=2, frameon=False)
    right.grid(True, alpha=0.3)
    fig.suptitle("Snapshots against book size (bars: fastest to slowest sample)", fontsize=11)
    return fig


def percentile_comparison(latencies_ns: Sequence[int], every: int, *, percentiles: Sequence[float] = PERCENTILES) -> Figure:
    """Bars of each percentile from all ``latencies_ns`` and from one in ``every`` of them (µs, log scale)."""
    rows = sampled_percentiles(latencies_ns, every=every, percentiles=percentiles)
    n_sample = len(sampled(latencies_ns, every))
    fig = Figure(figsize=(8.5, 3.6), layout="constrained")
    ax = fig.add_subplot()
    width = 0.38
    for k, (p, full, part) in enumerate(rows):
        ax.bar(k - width / 2, full / 1e3, width, color="#90a4ae", label="all messages" if k == 0 else None)
        ax.bar(k + width / 2, part / 1e3, width, color="#1565c0", label=f"1 in {every} ({n_sample:,} samples)" if k == 0 else None)
        beyond = max(1, math.ceil(n_sample * (100 - p) / 100))
        ax.annotate(f"~{beyond:,} beyond", xy=(k + width / 2, part / 1e3), xytext=(0, 3), textcoords="offset points",
                    ha="center", fontsize=8, color="#1565c0")
    ax.set_xticks(range(len(rows)), [f"p{p:g}" for p, _, _ in rows])
    ax.set_yscale("log")
    top = max(max(full, part) for _, full, part in rows) / 1e3
    ax.set_ylim(top=top * 3)  # room for the labels above the tallest bar
    ax.set_ylabel("handling time (µs, log scale)")
    ax.set_title(f"Percentiles of {len(latencies_ns):,} messages: all of them against one in {every}", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    return fig
