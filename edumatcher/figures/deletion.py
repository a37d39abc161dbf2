"""Cost per cancel against book size: eager removal grows with depth, lazy deletion does not."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from ..experiments.heaps import DeletionCosts

__all__ = ["deletion_curves"]

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
