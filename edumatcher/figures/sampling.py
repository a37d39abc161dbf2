"""Percentiles from every message against percentiles from the 1-in-N sample the run loop keeps.

Grouped bars on a log scale: for each percentile, the figure from all messages
and the one from the sample, with how many sampled messages lie at or beyond that
percentile written above the sample's bar: a tail percentile resting on a handful
of samples is a guess, however the sampling was done.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.figure import Figure

from ..experiments.instrumentation import PERCENTILES, sampled, sampled_percentiles

__all__ = ["percentile_comparison"]


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
