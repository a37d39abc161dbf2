"""Chapter 08's control: how you hold a value decides whether the collector has to look at it."""

from __future__ import annotations

import gc

import ipywidgets as widgets

from ..experiments.pooling import STRUCTURES, structure_pause
from ..figures.pooling import pause_bars
from ..measure import Measurement, measure
from .figure_control import FigureControl

__all__ = ["SIZES", "draw_structure_pause", "tracking_explorer"]

SIZES: tuple[int, ...] = (10_000, 50_000, 200_000)
"""Numbers of values offered."""


def draw_structure_pause(baseline: Measurement, name: str, n: int) -> tuple[object, ...]:
    """Time a full collection with ``STRUCTURES[name]`` of ``n`` items alive; bars against ``baseline``."""
    pause, added = structure_pause(name, n)
    extra = pause.median - baseline.median
    note = widgets.HTML(
        f"<p>{n:,} values held as <i>{name}</i> add {added:,} tracked objects; the full collection went from "
        f"{baseline.median * 1e3:,.1f} ms to {pause.median * 1e3:,.1f} ms ({extra * 1e3:+,.1f} ms).</p>")
    return pause_bars(baseline, pause, title=f"{n:,} values as {name}"), note


def tracking_explorer(*, name: str = "Order objects, one per item", n: int = 50_000) -> FigureControl:
    """Dropdowns for the structure and the number of values; the baseline pause is measured once, at creation."""
    if name not in STRUCTURES or n not in SIZES:
        raise ValueError(f"name must be one of {list(STRUCTURES)} and n one of {SIZES}")
    baseline = measure(gc.collect, number=1, repeat=5, label="process as it is")
    controls = {
        "name": widgets.Dropdown(options=list(STRUCTURES), value=name, description="held as", layout={"width": "420px"}),
        "n": widgets.Dropdown(options=list(SIZES), value=n, description="values"),
    }
    return FigureControl(lambda name, n: draw_structure_pause(baseline, name, n), controls,
                         caption="Which ways of holding values cost the collector nothing?")
