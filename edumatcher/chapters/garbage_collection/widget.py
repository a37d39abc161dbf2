"""Chapter 09's control, ``gc_size_explorer``: choose how many resting orders to keep alive and see what
a full collection costs (each choice measured in fresh processes).
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets

from edumatcher.kit.figure_control import FigureControl

from .figures import pause_curve
from .gc_pauses import PAUSE_SIZES, PauseRow, collection_pauses, pause_fit

__all__ = ["PRESETS", "draw_pauses", "gc_size_explorer"]

PRESETS: dict[str, tuple[int, ...]] = {
    "small: up to 20,000 resting": (0, 5_000, 10_000, 20_000),
    "medium: up to 40,000 resting": (0, 20_000, 40_000),
    "chapter: up to 200,000 resting (about 5 s)": PAUSE_SIZES,
    "large: up to 400,000 resting (about 10 s)": (0, 100_000, 200_000, 400_000),
}
"""Book sizes offered, by name; each size is built and collected in a fresh process (``collection_pauses``)."""


def draw_pauses(sizes: Sequence[int], rows: Sequence[PauseRow] | None = None) -> tuple[object, ...]:
    """The pause curve for ``sizes`` (measured now unless ``rows`` are given) and a line of figures under it."""
    rows = list(rows) if rows is not None else collection_pauses(sizes)
    text = ", ".join(f"{r.resting:,} resting: {(r.cpu or r.full).median * 1e3:,.1f} ms" for r in rows)
    clock = "cpu" if all(r.cpu is not None for r in rows) else "wall"
    fit = pause_fit(rows, clock=clock) if len({r.tracked for r in rows}) >= 3 else None
    return pause_curve(rows, fit=fit), widgets.HTML(
        f"<p>Full collection, {'CPU' if clock == 'cpu' else 'wall'} time, median of {rows[0].full.repeat}: {text}.</p>"
        + (f"<p>Fit: {fit.verdict.removeprefix('verdict: ')}</p>" if fit else ""))


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
