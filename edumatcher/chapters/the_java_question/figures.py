"""Chapter "the Java question": its figures (objects tracked by pooling, the pause held values add).

Picture for the Java question: what the collector tracks.

``tracked_bars``: per way of holding n values, the tracked objects it adds at
creation and after a collection (log axis: 1 and n side by side). What each adds
to a full collection's pause is drawn by ``figures.held_values``.

Picture for chapter 11: what each way of holding n values adds to every full collection.

``added_pause_figure`` draws one row per holding: the pause it adds (median with it
minus median without, a dot) and the 95 % interval of that difference (a line), on a
log axis so that a million references and a hundred thousand objects fit on one
picture. Each row is annotated with the figure and the tracked objects the holding
adds ("tracked"). An added pause at or below ``FLOOR`` (nothing measurable) is drawn at the floor
as a hollow marker, labelled as such.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from .held_values import HeldCost
from .pooling import TrackedRow

__all__ = ["tracked_bars", "FLOOR", "added_pause_figure"]


def tracked_bars(rows: Sequence[TrackedRow], *, title: str = "") -> Figure:
    """Grouped horizontal bars: tracked objects added right after building, and after one collection.

    ``title`` defaults to one naming the number of values held; the legend sits
    under the axis, off the bars.
    """
    if not rows:
        raise ValueError("tracked_bars needs at least one row")
    fig = Figure(figsize=(8.5, 0.55 * len(rows) + 1.4), layout="constrained")
    ax = fig.add_subplot()
    ys = list(range(len(rows)))[::-1]
    h = 0.38
    built = [max(r.after_build, 1) for r in rows]
    kept = [max(r.after_collection, 1) for r in rows]
    ax.barh([y + h / 2 for y in ys], built, h, color="#90a4ae", label="right after building")
    ax.barh([y - h / 2 for y in ys], kept, h, color="#6a1b9a", label="after gc.collect()")
    for y, b, k in zip(ys, built, kept, strict=True):
        ax.annotate(f"{b:,}", xy=(b, y + h / 2), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
        ax.annotate(f"{k:,}", xy=(k, y - h / 2), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set_yticks(ys, [r.structure for r in rows], fontsize=9)
    ax.set_xscale("log")
    ax.set_xlim(0.8, max(built + kept) * 4)
    ax.set_xlabel(f"objects the collector tracks, added by holding {rows[0].n:,} values (log scale)")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title(title or f"Objects the collector must walk, per way of holding {rows[0].n:,} values", fontsize=10)
    return fig


FLOOR = 1e-6
"""Seconds: added pauses below a microsecond are drawn at this floor (a log axis has no zero)."""


def added_pause_figure(rows: Sequence[HeldCost], *, title: str = "") -> Figure:
    """Dot-and-interval rows: the full-collection pause each holding adds, in ms on a log axis."""
    if not rows:
        raise ValueError("added_pause_figure needs at least one row")
    fig = Figure(figsize=(9, 0.5 * len(rows) + 1.5), layout="constrained")
    ax = fig.add_subplot()
    ys = list(range(len(rows)))[::-1]
    floor_ms = FLOOR * 1e3
    biggest = floor_ms
    for y, row in zip(ys, rows, strict=True):
        added = row.added * 1e3
        low, high = (max(v * 1e3, floor_ms) for v in row.added_ci)
        if added > floor_ms:
            ax.plot([low, high], [y, y], color="#ad1457", lw=2.5, solid_capstyle="butt")
            ax.plot([added], [y], "o", color="#ad1457", ms=7)
            text = f"+{added:,.2f} ms"
        else:
            ax.plot([floor_ms], [y], "o", mfc="none", mec="#607d8b", ms=7)
            text = "nothing measurable"
        biggest = max(biggest, high, added)
        ax.annotate(f"{text} · {row.tracked_added:,} tracked",
                    xy=(max(added, floor_ms, high), y), xytext=(6, 0), textcoords="offset points", va="center",
                    fontsize=8)
    ax.set_xscale("log")
    ax.set_xlim(floor_ms / 2, biggest * 400)
    ax.set_yticks(ys, [f"{r.n:,} {r.holding}" for r in rows], fontsize=8)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel("pause added to every full collection (ms, log scale; line: 95 % CI)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title(title or f"What holding values costs a full collection (CPython {rows[0].python}, fresh process)",
                 fontsize=10)
    return fig
