"""Bytes held by two egress queues over an overload: one capped by entries, one by bytes."""

from __future__ import annotations

from matplotlib.figure import Figure

from ..experiments.egress import EgressTrace

__all__ = ["egress_figure"]


def egress_figure(trace: EgressTrace, *, title: str = "") -> Figure:
    """MiB held after each tick by the entry-bounded and the byte-bounded queue, the byte cap drawn as a line."""
    fig = Figure(figsize=(8.5, 3.6), layout="constrained")
    ax = fig.add_subplot()
    ticks = range(1, len(trace.entry_bounded) + 1)
    entry, byte = trace.entry_queue, trace.byte_queue
    ax.plot(ticks, [b / 2**20 for b in trace.entry_bounded], color="#ef6c00",
            label=f"capped at {entry.max_entries:,} entries: shed {entry.shed_items:,} of {trace.offered:,}")
    ax.plot(ticks, [b / 2**20 for b in trace.byte_bounded], color="#1565c0",
            label=f"capped at {byte.max_bytes / 2**20:g} MiB: shed {byte.shed_items:,} of {trace.offered:,}")
    ax.axhline(byte.max_bytes / 2**20, color="#1565c0", linestyle=":", linewidth=1)
    ax.set_xlabel("tick (each: the producer offers more than the consumer takes)")
    ax.set_ylabel("MiB held by the queue")
    ax.set_ylim(bottom=0)
    ax.set_title(title or "An overloaded egress queue: what does 'bounded' bound?", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, alpha=0.3)
    return fig
