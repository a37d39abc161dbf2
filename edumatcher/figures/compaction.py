"""Heap entries against live orders over a cancel-heavy run: the saw-tooth of amortised compaction."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from ..experiments.heaps import CompactionRow

__all__ = ["compaction_trace_figure", "compaction_sweep_figure"]


def compaction_trace_figure(trace: Sequence[tuple[int, int]], row: CompactionRow, *, slack: int | None = None) -> Figure:
    """Entries held by the heaps (dead ones included) and live orders, after every operation.

    The gap between the two lines is dead entries waiting; each vertical drop of
    the upper line is a rebuild. With ``slack`` the compaction bound
    ``factor * live + slack`` is drawn too.
    """
    if not trace:
        raise ValueError("compaction_trace_figure needs a non-empty trace")
    xs = range(1, len(trace) + 1)
    entries = [e for e, _ in trace]
    live = [n for _, n in trace]
    fig = Figure(figsize=(8.5, 3.6), layout="constrained")
    ax = fig.add_subplot()
    ax.plot(xs, entries, color="#c62828", linewidth=1.0, label="heap entries (live + dead)")
    ax.plot(xs, live, color="#2e7d32", linewidth=1.0, label="live orders")
    if slack is not None:
        ax.plot(xs, [row.factor * n + slack for n in live], color="#9e9e9e", linewidth=0.8, linestyle=":",
                label=f"bound: {row.factor:g} × live + {slack}")
    ax.set_xlabel("operation")
    ax.set_ylabel("count")
    ax.set_title(f"compact_factor = {row.factor:g}: peak {row.peak_entries:,} entries for at most "
                 f"{row.peak_live:,} live orders, {row.rebuilds} rebuild(s)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def compaction_sweep_figure(rows: Sequence[CompactionRow]) -> Figure:
    """Two panels against ``compact_factor``: peak heap entries, and median time per operation (with range)."""
    if not rows:
        raise ValueError("compaction_sweep_figure needs at least one row")
    labels = [f"{r.factor:g}" for r in rows]
    fig = Figure(figsize=(8.5, 3.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    left.bar(labels, [r.peak_entries for r in rows], color="#ef9a9a", label="peak heap entries")
    left.plot(labels, [r.peak_live for r in rows], color="#2e7d32", marker="o", label="peak live orders")
    left.set_xlabel("compact_factor")
    left.set_ylabel("entries")
    left.legend(fontsize=8)
    med = [r.time.per_op * 1e6 for r in rows]
    lo = [(r.time.median - r.time.min) / r.time.ops_per_call * 1e6 for r in rows]
    hi = [(r.time.max - r.time.median) / r.time.ops_per_call * 1e6 for r in rows]
    right.bar(labels, med, yerr=[lo, hi], color="#90caf9", capsize=3)
    right.set_xlabel("compact_factor")
    right.set_ylabel("µs per operation")
    right.set_title("median, whisker: min to max", fontsize=9)
    fig.suptitle("Compaction factor: memory held against time spent")
    return fig
