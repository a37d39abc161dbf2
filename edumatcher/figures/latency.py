"""The distribution of per-message handling latencies, with its tail marked.

A latency distribution is skewed: most messages take about the same time and a
few take far longer (a collection, a big sweep). A histogram on a logarithmic
time axis shows both the body and the tail in one picture; the p50, p99 and max
lines say where "typical" ends and "unlucky" begins.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.figure import Figure

from ..metrics import nearest_rank

__all__ = ["latency_histogram"]

_MARKS = (("p50", 50.0, "#2e7d32"), ("p99", 99.0, "#ef6c00"), ("max", 100.0, "#c62828"))


def latency_histogram(latencies_ns: Sequence[int], *, title: str = "", bins: int = 60, log_count: bool = True) -> Figure:
    """Histogram of ``latencies_ns`` on a log time axis (µs), with p50, p99 and max drawn as lines.

    ``log_count`` puts the counts on a log scale too, so a handful of slow
    messages stays visible beside thousands of fast ones. O(n log n).
    """
    if not latencies_ns:
        raise ValueError("latency_histogram needs at least one latency")
    xs = sorted(max(int(x), 1) for x in latencies_ns)
    us = [x / 1e3 for x in xs]
    lo, hi = math.log10(us[0]), math.log10(us[-1])
    if hi - lo < 1e-9:  # all equal: give the single bar some width around the value
        lo, hi = lo - 0.05, hi + 0.05
    edges = [10 ** (lo + (hi - lo) * i / bins) for i in range(bins + 1)]
    fig = Figure(figsize=(8.5, 3.6), layout="constrained")
    ax = fig.add_subplot()
    ax.hist(us, bins=edges, color="#90a4ae", edgecolor="#607d8b", linewidth=0.4)
    ax.set_xscale("log")
    if log_count:
        ax.set_yscale("log")
    for name, p, colour in _MARKS:
        value = nearest_rank(xs, p) / 1e3
        ax.axvline(value, color=colour, linewidth=1.6, linestyle="--")
        ax.annotate(f"{name} {value:,.1f} µs", xy=(value, 1), xycoords=("data", "axes fraction"),
                    xytext=(3, -4), textcoords="offset points", va="top", fontsize=9, color=colour,
                    rotation=90, bbox={"facecolor": "white", "alpha": 0.75, "edgecolor": "none", "pad": 1})
    ax.set_xlabel("handling time per message (µs, log scale)")
    ax.set_ylabel("messages" + (" (log scale)" if log_count else ""))
    ax.set_title(title or f"Per-message handling latency, {len(xs):,} messages")
    ax.grid(True, which="major", axis="both", alpha=0.3)
    return fig
