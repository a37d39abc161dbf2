"""Chapter 09's picture: a full collection's pause against live objects.

* ``pause_curve``: a full collection's pause (median, min-max bar) against the
  number of objects the collector tracks, with the least-squares line and its fit.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from .gc_pauses import PauseFit, PauseRow, pause_fit

__all__ = ["pause_curve"]


def pause_curve(rows: Sequence[PauseRow], *, fit: PauseFit | None = None, title: str = "") -> Figure:
    """Full-collection pause (ms) against tracked objects: medians with min-max bars, and the fitted line.

    The bars are the clock the fit used (CPU time when the rows have it); wall
    time is drawn beside as hollow markers. ``fit`` defaults to
    ``pause_fit(rows)`` when the rows hold at least three sizes; the legend
    carries its slope, confidence interval and r².
    """
    if not rows:
        raise ValueError("pause_curve needs at least one row")
    has_cpu = all(r.cpu is not None for r in rows)
    if fit is None and len({r.tracked for r in rows}) >= 3:
        fit = pause_fit(rows, clock="cpu" if has_cpu else "wall")
    use_cpu = has_cpu and (fit is None or fit.clock == "cpu")
    shown = [r.cpu if use_cpu else r.full for r in rows]
    xs = [r.tracked for r in rows]
    med = [m.median * 1e3 for m in shown]  # type: ignore[union-attr]
    low = [(m.median - m.min) * 1e3 for m in shown]  # type: ignore[union-attr]
    high = [(m.max - m.median) * 1e3 for m in shown]  # type: ignore[union-attr]
    fig = Figure(figsize=(8.5, 3.8), layout="constrained")
    ax = fig.add_subplot()
    what = "CPU time" if use_cpu else "wall time"
    ax.errorbar(xs, med, yerr=[low, high], marker="o", linestyle="none", color="#ad1457", capsize=3, zorder=3,
                label=f"{what}: median of {rows[0].full.repeat} collections, bar min to max")
    top = max(m + h for m, h in zip(med, high, strict=True))
    if use_cpu:
        wall = [r.full.median * 1e3 for r in rows]
        ax.plot(xs, wall, marker="o", markerfacecolor="none", linestyle="none", color="#78909c", zorder=2,
                label="wall time, median (adds time slices other processes took)")
        top = max(top, max(wall))
    if fit is not None:
        slope, lo, hi = fit.per_100k_ms
        line_x = [0, max(xs) * 1.1]
        ax.plot(line_x, [(fit.intercept + fit.slope * x) * 1e3 for x in line_x], color="#455a64", linewidth=1.3,
                label=f"least-squares fit: {slope:+.1f} ms per 100k objects\n"
                      f"({fit.confidence * 100:.0f} % CI {lo:.1f} to {hi:.1f}), r² = {fit.r2:.2f}")
    unit = "resting" if rows[0].objects == "book" else "objects"
    for r, x, y in zip(rows, xs, med, strict=True):
        ax.annotate(f"{r.resting:,} {unit}" if r.resting else "nothing kept", xy=(x, y), xytext=(6, -12),
                    textcoords="offset points", fontsize=8)
    ax.set_xlim(0, max(xs) * 1.15)
    ax.set_ylim(0, top * 1.15)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel("objects tracked by the collector in the measuring process")
    ax.set_ylabel("full collection pause (ms)")
    ax.set_title(title or "A full collection walks every tracked object (each size in a fresh process)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, alpha=0.3)
    return fig


