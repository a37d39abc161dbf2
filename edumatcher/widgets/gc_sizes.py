"""Chapter 07's control: choose how many resting orders to keep alive and see what a full collection costs."""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets

from ..experiments.gc_pauses import PauseRow, collection_pauses
from ..figures.gc import pause_curve
from .figure_control import FigureControl

__all__ = ["PRESETS", "draw_pauses", "gc_size_explorer"]

PRESETS: dict[str, tuple[int, ...]] = {
    "small: up to 20,000 resting": (0, 5_000, 10_000, 20_000),
    "medium: up to 40,000 resting": (0, 20_000, 40_000),
    "large: up to 200,000 resting (about 10 s)": (0, 50_000, 100_000, 200_000),
}
"""Book sizes offered, by name. Building a book of n orders and collecting it five times takes roughly n / 20,000 s."""


def draw_pauses(sizes: Sequence[int], rows: Sequence[PauseRow] | None = None) -> tuple[object, ...]:
    """The pause curve for ``sizes`` (measured now unless ``rows`` are given) and a line of figures under it."""
    rows = list(rows) if rows is not None else collection_pauses(sizes)
    per_object = [
        (b.full.median - a.full.median) / (b.tracked - a.tracked) * 1e9
        for a, b in zip(rows, rows[1:], strict=False) if b.tracked > a.tracked
    ]
    text = ", ".join(f"{r.resting:,} resting: {r.full.median * 1e3:,.1f} ms" for r in rows)
    slope = f" Each extra tracked object added about {sorted(per_object)[len(per_object) // 2]:,.0f} ns (median over steps)." if per_object else ""
    return pause_curve(rows), widgets.HTML(f"<p>Full collection, median of 5: {text}.{slope}</p>")


def gc_size_explorer(*, initial: Sequence[PauseRow] | None = None, preset: str = "medium: up to 40,000 resting") -> FigureControl:
    """A dropdown of book sizes; each choice builds the books and times full collections.

    ``initial``: rows already measured for ``preset``, drawn on creation without
    measuring again (the notebook measured them a cell earlier).
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {list(PRESETS)}, not {preset!r}")
    reuse = {preset: list(initial)} if initial is not None else {}

    def draw(preset: str) -> tuple[object, ...]:
        return draw_pauses(PRESETS[preset], reuse.pop(preset, None))

    control = widgets.Dropdown(options=list(PRESETS), value=preset, description="books", layout={"width": "420px"})
    return FigureControl(draw, {"preset": control},
                         caption="Does the pause grow with the book, or with everything the process keeps alive?")
