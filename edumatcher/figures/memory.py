"""Memory of two level stores: against the configured price range, and against the resting orders.

Left panel: bytes held against the price range the store must cover, for a
fixed set of resting orders. Right panel: bytes held against the number of
resting orders, for a fixed range. Log-log axes, since both quantities span
decades; the array store is a line in one panel and flat in the other.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from ..experiments.array_book import LevelMemory

__all__ = ["level_memory_figure"]


def _panel(ax: object, xs: list[int], rows: Sequence[LevelMemory], xlabel: str, title: str) -> None:
    ax.plot(xs, [r.array_bytes / 1024 for r in rows], marker="o", color="#6a1b9a", label="TickColumns: arrays, one slot per tick")  # type: ignore[attr-defined]
    ax.plot(xs, [r.dict_bytes / 1024 for r in rows], marker="s", color="#00838f", label="dict of levels (occupied only)")  # type: ignore[attr-defined]
    ax.set_xscale("log")  # type: ignore[attr-defined]
    ax.set_yscale("log")  # type: ignore[attr-defined]
    ax.set_xlabel(xlabel)  # type: ignore[attr-defined]
    ax.set_title(title, fontsize=10)  # type: ignore[attr-defined]
    ax.grid(True, which="both", alpha=0.3)  # type: ignore[attr-defined]


def level_memory_figure(by_range: Sequence[LevelMemory], by_orders: Sequence[LevelMemory]) -> Figure:
    """Two panels of KiB held (tracemalloc): against ``price_range`` and against ``orders``."""
    if not by_range or not by_orders:
        raise ValueError("level_memory_figure needs rows for both panels")
    fig = Figure(figsize=(10, 3.9), layout="constrained")
    left, right = fig.subplots(1, 2)
    _panel(left, [r.price_range for r in by_range], by_range, "price range covered (ticks, log scale)",
           f"{by_range[0].orders:,} resting orders near the touch")
    _panel(right, [r.orders for r in by_orders], by_orders, "resting orders (log scale)",
           f"a range of {by_orders[0].price_range:,} ticks, orders spread across it")
    left.set_ylabel("KiB held (log scale)")
    left.legend(fontsize=8, loc="upper left")
    return fig
