"""Chapter 11's control: how you hold n values decides what every full collection pays for them."""

from __future__ import annotations

import ipywidgets as widgets

from edumatcher.kit.figure_control import FigureControl

from .figures import added_pause_figure
from .held_values import HOLDINGS, HeldCost, added_pauses

__all__ = ["SIZES", "DEFAULT_N", "draw_held_values", "tracking_explorer"]

SIZES: tuple[int, ...] = (10_000, 100_000, 300_000)
"""Numbers of values offered. Building 300,000 ``Order`` objects takes a few seconds; more would not be a widget."""

DEFAULT_N = 100_000
"""The default: enough ``Order`` objects for a pause of milliseconds, and a list whose references show too."""


def _note(rows: list[HeldCost]) -> widgets.HTML:
    by_name = {r.holding: r for r in rows}
    n = rows[0].n
    items = "".join(
        f"<li><i>{r.holding}</i>: {r.tracked_added:,} tracked object{'' if r.tracked_added == 1 else 's'}, {r.added_text} "
        f"({r.per_value_ns:,.1f} ns per value)</li>" for r in by_name.values())
    return widgets.HTML(
        f"<p>{n:,} values, each way of holding them built in turn in one fresh process (CPython {rows[0].python}), "
        f"{rows[0].loaded.repeat} full collections timed without and with it ({rows[0].loaded.clock}):</p>"
        f"<ul style='margin-top:0'>{items}</ul>")


def draw_held_values(n: int) -> tuple[object, ...]:
    """Time, in one fresh process, what each of ``HOLDINGS`` with ``n`` values adds to a full collection."""
    rows = added_pauses([(name, n) for name in HOLDINGS])
    return added_pause_figure(rows), _note(rows)


def tracking_explorer(*, n: int = DEFAULT_N) -> FigureControl:
    """A dropdown for the number of values; every choice is measured in a fresh worker process."""
    if n not in SIZES:
        raise ValueError(f"n must be one of {SIZES}, not {n!r}")
    controls = {"n": widgets.Dropdown(options=[(f"{s:,}", s) for s in SIZES], value=n, description="values")}
    return FigureControl(draw_held_values, controls,
                         caption="What does each way of holding values add to every full collection?")
