"""Pictures of latency: the distribution of handling times, and response time over a run.

* ``latency_histogram``: a latency distribution is skewed: most messages take
  about the same time and a few take far longer (a collection, a big sweep). A
  histogram on a logarithmic time axis shows both the body and the tail in one
  picture; the p50, p99 and max lines say where "typical" ends and "unlucky" begins.
* ``response_timeline``: each message's response time (completion - intended
  send time) and service time against when it was due, one panel per open-loop
  run. A pause between messages shows as a spike in response time that falls off
  in a straight line while the queue drains, with no trace in service time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.figure import Figure

from ..metrics import nearest_rank
from ..open_loop import OpenLoopRun

__all__ = ["latency_histogram", "response_timeline"]

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


def response_timeline(
    runs: Sequence[OpenLoopRun], *, windows: Sequence[tuple[int, int] | None] = (), window_label: str = "freeze",
) -> Figure:
    """Response and service time (µs, log axis) of every message against its intended send time (ms), a panel per run.

    ``windows``: for each run, an optional ``(start_ns, end_ns)`` span to shade
    (e.g. the policy's freeze), labelled ``window_label``. O(n).
    """
    if not runs or not all(r.completed_ns for r in runs):
        raise ValueError("response_timeline needs runs with messages")
    fig = Figure(figsize=(8.5, 2.4 + 2.0 * len(runs)), layout="constrained")
    axes = fig.subplots(len(runs), 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    spans = list(windows) + [None] * (len(runs) - len(windows))
    for ax, run, span in zip(axes, runs, spans, strict=True):
        due_ms = [t / 1e6 for t in run.intended_ns]
        ax.scatter(due_ms, [max(x, 1) / 1e3 for x in run.service_ns], s=3, color="#b0bec5", label="service time", rasterized=True)
        ax.scatter(due_ms, [max(x, 1) / 1e3 for x in run.response_ns], s=3, color="#c62828", label="response time", rasterized=True)
        if span is not None:
            ax.axvspan(span[0] / 1e6, span[1] / 1e6, color="#1565c0", alpha=0.2, label=f"{window_label} ({(span[1] - span[0]) / 1e6:,.1f} ms)")
        ax.set_yscale("log")
        ax.set_ylabel("µs (log)")
        ax.set_title(f"{run.label}: {len(run.completed_ns):,} messages offered at {run.offered_rate:,.0f}/s", fontsize=9)
        ax.legend(fontsize=8, loc="upper right", markerscale=3)
        ax.grid(True, which="major", alpha=0.3)
    axes[-1].set_xlabel("intended send time (ms from the start of the stream)")
    return fig
