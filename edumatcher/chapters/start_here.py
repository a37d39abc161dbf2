"""Chapter 00's control: feed more or fewer orders to a book and watch its depth chart."""

from __future__ import annotations

import ipywidgets as widgets

from ..book import OrderBook
from ..kit.figure_control import FigureControl
from ..kit.plots import depth_chart
from ..workloads import SYMBOL, apply, standard

__all__ = ["depth_explorer", "draw_depth"]


def draw_depth(operations: int, seed: int) -> tuple[object, ...]:
    """Apply ``standard(operations, seed)`` to a fresh ``OrderBook``; its depth chart and a tally."""
    book = OrderBook(SYMBOL)
    tally = apply(book, standard(operations, seed=seed))
    bids, asks = book.depth()
    note = widgets.HTML(f"<p>{operations:,} operations: {tally.trades:,} trades, {len(book):,} orders resting "
                        f"on {len(bids)} bid and {len(asks)} ask levels.</p>")
    return depth_chart(bids, asks, title=f"Depth after {operations:,} operations (seed {seed})"), note


def depth_explorer() -> FigureControl:
    """A slider for the number of operations (10 to 5 000, default 300) and one for the seed."""
    controls = {
        "operations": widgets.IntSlider(value=300, min=10, max=5_000, step=10, description="operations",
                                        continuous_update=False),
        "seed": widgets.IntSlider(value=1, min=1, max=20, description="seed", continuous_update=False),
    }
    return FigureControl(draw_depth, controls, caption="The same seeded flow, cut at different lengths.")
