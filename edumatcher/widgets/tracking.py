"""Chapter 08's control: how you hold a value decides whether the collector has to look at it."""

from __future__ import annotations

import ipywidgets as widgets

from ..experiments.pooling import STRUCTURES, structure_pause
from ..figures.pooling import pause_bars
from .figure_control import FigureControl

__all__ = ["SIZES", "draw_structure_pause", "tracking_explorer"]

SIZES: tuple[int, ...] = (10_000, 50_000, 200_000)
"""Numbers of values offered."""


def draw_structure_pause(name: str, n: int) -> tuple[object, ...]:
    """In one fresh process, time a full collection with nothing kept and with ``STRUCTURES[name]`` of ``n`` items."""
    got = structure_pause(name, n)
    base, with_it = got.baseline.median, got.pause.median
    note = widgets.HTML(
        f"<p>{n:,} values held as <i>{name}</i> add {got.added:,} tracked objects. In a fresh process, a full "
        f"collection took {base * 1e3:,.2f} ms with nothing kept and {with_it * 1e3:,.2f} ms with them alive "
        f"({(with_it - base) * 1e3:+,.2f} ms; medians of {got.pause.repeat} collections).</p>")
    return pause_bars(got.baseline, got.pause, title=f"{n:,} values as {name}"), note


def tracking_explorer(*, name: str = "Order objects, one per item", n: int = 50_000) -> FigureControl:
    """Dropdowns for the structure and the number of values; each choice is measured in a fresh worker process."""
    if name not in STRUCTURES or n not in SIZES:
        raise ValueError(f"name must be one of {list(STRUCTURES)} and n one of {SIZES}")
    controls = {
        "name": widgets.Dropdown(options=list(STRUCTURES), value=name, description="held as", layout={"width": "420px"}),
        "n": widgets.Dropdown(options=list(SIZES), value=n, description="values"),
    }
    return FigureControl(draw_structure_pause, controls,
                         caption="Which ways of holding values cost the collector nothing?")
