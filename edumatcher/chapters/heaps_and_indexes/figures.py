"""Chapter "heaps and indexes": its figures (lazy deletion's costs, compaction's trace and sweep).

Heap entries against live orders over a cancel-heavy run: the saw-tooth of amortised compaction.

Cost per cancel against book size: eager removal grows with depth, lazy deletion does not.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from .heaps import CompactionRow, DeletionCosts, OperationTimes

__all__ = ["compaction_trace_figure", "compaction_sweep_figure", "operation_times_figure", "deletion_curves"]


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


def operation_times_figure(runs: Sequence[OperationTimes], *, ramp: int = 0, min_entries: int = 1_000) -> Figure:
    """One panel per run: every operation's time (µs, log scale), the O(n) ones marked.

    Crosses are operations that rebuilt the heaps; triangles operations that grew
    ``_live``/``_entries`` to ``min_entries`` or more entries; a dashed line ends the
    ramp of the first ``ramp`` operations.
    """
    if not runs:
        raise ValueError("operation_times_figure needs at least one run")
    fig = Figure(figsize=(8.5, 2.6 * len(runs) + 0.4), layout="constrained")
    axes = fig.subplots(len(runs), 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    for ax, run in zip(axes, runs, strict=True):
        us = [t / 1e3 for t in run.ns]
        ax.scatter(range(len(us)), us, s=2, color="#90a4ae", label="one operation", rasterized=True)
        if run.rebuilds:
            ax.scatter(run.rebuilds, [us[i] for i in run.rebuilds], s=22, marker="x", color="#c62828",
                       label=f"rebuilt the heaps ({len(run.rebuilds)})")
        grew = sorted({i for i, _, entries in run.resizes if entries >= min_entries})
        if grew:
            ax.scatter(grew, [us[i] for i in grew], s=40, marker="^", color="#ef6c00",
                       label=f"grew a dict to {min_entries:,}+ entries ({len(grew)})")
        if ramp:
            ax.axvline(ramp, color="#37474f", linestyle="--", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_ylabel("µs (log)")
        ax.set_title(f"compact_factor = {run.factor:g}", fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", markerscale=1.5)
    axes[-1].set_xlabel("operation (dashed line: the ramp ends, the cancel-heavy stream begins)" if ramp else "operation")
    return fig


_SERIES = (
    ("eager", "eager: list.remove + heapify", "#c62828", "o"),
    ("lazy", "lazy: flip the flag", "#2e7d32", "s"),
    ("book", "OrderBook.cancel (lazy, all indexes)", "#1565c0", "^"),
)


def deletion_curves(costs: Sequence[DeletionCosts], *, title: str = "") -> Figure:
    """Median time per cancel (µs, log scale) against heap size (log scale), one line per strategy.

    Error bars run from the fastest to the slowest pass. A dotted guide of slope 1
    through the first eager point shows what "grows linearly with depth" looks like.
    """
    if not costs:
        raise ValueError("deletion_curves needs at least one size")
    sizes = [c.size for c in costs]
    fig = Figure(figsize=(8.5, 4.0), layout="constrained")
    ax = fig.add_subplot()
    for attr, label, colour, marker in _SERIES:
        ms = [getattr(c, attr) for c in costs]
        med = [m.per_op * 1e6 for m in ms]
        lo = [(m.median - m.min) / m.ops_per_call * 1e6 for m in ms]
        hi = [(m.max - m.median) / m.ops_per_call * 1e6 for m in ms]
        ax.errorbar(sizes, med, yerr=[lo, hi], label=label, color=colour, marker=marker, capsize=3)
    first = costs[0].eager.per_op * 1e6
    ax.plot(sizes, [first * s / sizes[0] for s in sizes], linestyle=":", color="#9e9e9e", label="proportional to size")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(sizes, [f"{s:,}" for s in sizes])
    ax.set_xlabel("entries in the heap (log scale)")
    ax.set_ylabel("time per cancel (µs, log scale)")
    ax.set_title(title or "Cancelling from a heap: eager removal against lazy deletion")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig
