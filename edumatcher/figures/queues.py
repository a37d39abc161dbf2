"""Bytes held by two egress queues over an overload: one capped by entries, one by bytes.

``egress_figure`` draws one overload over time; ``egress_scaling_figure`` adds a
second panel, each queue's peak memory (``tracemalloc``) against the largest
frame offered, which is where an entry cap shows it bounds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..experiments.egress import EgressTrace

__all__ = ["egress_figure", "egress_scaling_figure"]

_ENTRY, _BYTE = "#ef6c00", "#1565c0"


def _trace_panel(ax: Axes, trace: EgressTrace) -> None:
    ticks = range(1, len(trace.entry_bounded) + 1)
    entry, byte = trace.entry_queue, trace.byte_queue
    ax.plot(ticks, [b / 2**20 for b in trace.entry_bounded], color=_ENTRY,
            label=f"capped at {entry.max_entries:,} entries: shed {entry.shed_items:,} of {trace.offered:,}")
    ax.plot(ticks, [b / 2**20 for b in trace.byte_bounded], color=_BYTE,
            label=f"capped at {byte.max_bytes / 2**20:g} MiB: shed {byte.shed_items:,} of {trace.offered:,}")
    ax.axhline(byte.max_bytes / 2**20, color=_BYTE, linestyle=":", linewidth=1)
    ax.set_xlabel("tick (each: the producer offers more than the consumer takes)")
    ax.set_ylabel("MiB of frames held by the queue")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, alpha=0.3)


def egress_figure(trace: EgressTrace, *, title: str = "") -> Figure:
    """MiB held after each tick by the entry-bounded and the byte-bounded queue, the byte cap drawn as a line."""
    fig = Figure(figsize=(8.5, 3.6), layout="constrained")
    ax = fig.add_subplot()
    _trace_panel(ax, trace)
    ax.set_title(title or "An overloaded egress queue: what does 'bounded' bound?", fontsize=10)
    return fig


def egress_scaling_figure(traces: Sequence[EgressTrace]) -> Figure:
    """Left: the last trace over time. Right: each queue's traced peak MiB against the largest frame (log x).

    ``traces`` come from ``simulate(traced=True)`` (``frame_scaling``), in order of
    growing ``max_payload``.
    """
    if not traces or not all(t.entry_traced_peak for t in traces):
        raise ValueError("egress_scaling_figure needs traces from simulate(traced=True)")
    fig = Figure(figsize=(11, 3.9), layout="constrained")
    left, right = fig.subplots(1, 2)
    last = traces[-1]
    _trace_panel(left, last)
    left.set_title(f"Frames up to {last.max_payload:,} bytes, over time", fontsize=10)
    xs = [t.max_payload for t in traces]
    right.plot(xs, [t.entry_traced_peak / 2**20 for t in traces], marker="o", color=_ENTRY,
               label=f"capped at {last.entry_queue.max_entries:,} entries")
    right.plot(xs, [t.byte_traced_peak / 2**20 for t in traces], marker="s", color=_BYTE,
               label=f"capped at {last.byte_queue.max_bytes / 2**20:g} MiB")
    right.axhline(last.byte_queue.max_bytes / 2**20, color=_BYTE, linestyle=":", linewidth=1)
    right.set_xscale("log")
    right.set_xlabel("largest frame offered (bytes, log scale)")
    right.set_ylabel("peak MiB allocated (tracemalloc)")
    right.set_ylim(bottom=0)
    right.set_title("Peak memory against frame size: same caps, same traffic count", fontsize=10)
    right.legend(fontsize=8, loc="upper left")
    right.grid(True, which="both", alpha=0.3)
    return fig
