"""Picture for the Java question: what the collector tracks.

``tracked_bars``: per way of holding n values, the tracked objects it adds at
creation and after a collection (log axis: 1 and n side by side). What each adds
to a full collection's pause is drawn by ``figures.held_values``.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from ..experiments.pooling import TrackedRow

__all__ = ["tracked_bars"]


def tracked_bars(rows: Sequence[TrackedRow]) -> Figure:
    """Grouped horizontal bars: tracked objects added right after building, and after one collection."""
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
    ax.legend(fontsize=8, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
    return fig
