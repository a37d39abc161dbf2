"""Chapter "beyond heaps": its figures (compiled sweeps, level memory, egress queues).

Time per sweep against the levels an order sweeps: Python, NumPy and compiled forms on log-log axes.

Each point is a form's median time per sweep; its bar spans the middle half of
its samples (25th to 75th percentile), so the reader sees the spread behind the
median. The lines cross where one form's fixed cost per call stops mattering.

Memory of two level stores: against the configured price range, and against the resting orders.

Left panel: bytes held against the price range the store must cover, for a
fixed set of resting orders. Right panel: bytes held against the number of
resting orders, for a fixed range. Log-log axes, since both quantities span
decades; the array store is a line in one panel and flat in the other.

Bytes held by two egress queues over an overload: one capped by entries, one by bytes.

``egress_figure`` draws one overload over time; ``egress_scaling_figure`` adds a
second panel, each queue's peak memory (``tracemalloc``) against the largest
frame offered, which is where an entry cap shows it bounds nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from edumatcher.kit import Comparison, interpreter

from .array_book import LevelMemory
from .egress import EgressTrace

__all__ = ["sweep_figure", "level_memory_figure", "egress_figure", "egress_scaling_figure"]


_STYLE = {0: ("#455a64", "o"), 1: ("#ef6c00", "s"), 2: ("#1565c0", "^"), 3: ("#6a1b9a", "v")}


def _series(points: list[tuple[int, object]]) -> tuple[list[int], np.ndarray, np.ndarray]:
    xs = [k for k, _ in points]
    medians, quartiles = [], []
    for _, m in points:
        samples = np.asarray(m.samples) * 1e6  # type: ignore[attr-defined]
        medians.append(np.median(samples))
        quartiles.append(np.percentile(samples, [25, 75]))
    med = np.asarray(medians)
    q = np.asarray(quartiles)
    return xs, med, np.vstack([med - q[:, 0], q[:, 1] - med])


def sweep_figure(results: Mapping[int, Mapping[str, Comparison]], *, baseline: str = "Python loop over a list") -> Figure:
    """µs per sweep against levels swept, for the baseline (``b`` of every comparison) and each form (``a``)."""
    if not results:
        raise ValueError("sweep_figure needs at least one size")
    sizes = sorted(results)
    forms = list(results[sizes[0]])
    fig = Figure(figsize=(8.5, 4.2), layout="constrained")
    ax = fig.add_subplot()
    lines = [(baseline, [(k, next(iter(results[k].values())).b) for k in sizes])]
    lines += [(form, [(k, results[k][form].a) for k in sizes]) for form in forms]
    for i, (name, points) in enumerate(lines):
        color, marker = _STYLE[i % len(_STYLE)]
        xs, med, err = _series(points)
        ax.errorbar(xs, med, yerr=err, marker=marker, color=color, capsize=3, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("levels the order sweeps (log scale)")
    ax.set_ylabel("µs per sweep (log scale; bars: middle half of samples)")
    info = interpreter()
    ax.set_title(f"One sweep over price levels, four ways ({info.implementation} {info.version})", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def _panel(ax: object, xs: list[int], rows: Sequence[LevelMemory], xlabel: str, title: str) -> None:
    ax.plot(xs, [r.array_bytes / 1024 for r in rows], marker="o", color="#6a1b9a", label="TickColumns: arrays, one slot per tick")  # type: ignore[attr-defined]
    ax.plot(xs, [r.dict_bytes / 1024 for r in rows], marker="s", color="#00838f", label="dict of levels (occupied only)")  # type: ignore[attr-defined]
    ax.set_xscale("log")  # type: ignore[attr-defined]
    ax.set_yscale("log")  # type: ignore[attr-defined]
    ax.set_xlabel(xlabel)  # type: ignore[attr-defined]
    ax.set_title(title, fontsize=10)  # type: ignore[attr-defined]
    ax.grid(True, which="both", alpha=0.3)  # type: ignore[attr-defined]


def level_memory_figure(by_range: Sequence[LevelMemory], by_orders: Sequence[LevelMemory]) -> Figure:
    """Two panels of KiB held (tracemalloc): against ``price_range`` and against ``orders``.

    Both panels have their own y label; one legend for both sits under them, off the lines.
    """
    if not by_range or not by_orders:
        raise ValueError("level_memory_figure needs rows for both panels")
    fig = Figure(figsize=(10, 3.9), layout="constrained")
    left, right = fig.subplots(1, 2)
    _panel(left, [r.price_range for r in by_range], by_range, "price range covered (ticks, log scale)",
           f"{by_range[0].orders:,} resting orders near the touch")
    _panel(right, [r.orders for r in by_orders], by_orders, "resting orders (log scale)",
           f"a range of {by_orders[0].price_range:,} ticks, orders spread across it")
    for ax in (left, right):
        ax.set_ylabel("KiB held, tracemalloc (log scale)")
    fig.legend(*left.get_legend_handles_labels(), fontsize=8, loc="outside lower center", ncols=2, frameon=False)
    fig.suptitle("Memory of two level stores: the arrays grow with the range, the dict with the orders", fontsize=11)
    return fig


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
