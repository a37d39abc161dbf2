"""Chapter 02's control, ``profile_explorer``: one cProfile, read three ways (sort key, rows, icicle root).
"""

from __future__ import annotations

import html
import os
import pstats
from collections.abc import Sequence

import ipywidgets as widgets

from edumatcher.kit.figure_control import FigureControl

from .figures import flame_graph, tree_from_pstats
from .tools import pstats_text

__all__ = ["SORT_KEYS", "root_choices", "draw_profile_view", "profile_explorer"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
"""The ``edumatcher`` package's folder (this file is ``edumatcher/chapters/the_standard_tools/widget.py``)."""

SORT_KEYS: tuple[tuple[str, str], ...] = (
    ("own time (tottime)", "tottime"),
    ("cumulative time (cumtime)", "cumulative"),
    ("calls (ncalls)", "ncalls"),
)
"""The sort keys offered, as (label, ``pstats`` key)."""


def root_choices(stats: pstats.Stats, n: int = 8) -> list[tuple[str, tuple[str, int, str]]]:
    """The ``n`` functions of this package's files with the most cumulative time, as (label, pstats key).

    Built-ins, the generated message builders and the caller's own code (a notebook's
    driver loop) are left out: the icicle starts from the engine's code.
    """
    table = stats.stats  # type: ignore[attr-defined]
    keys = [k for k in table if os.path.abspath(k[0]).startswith(_PACKAGE)]
    keys.sort(key=lambda k: table[k][3], reverse=True)
    return [(f"{k[2]} ({k[0].replace(chr(92), '/').rsplit('/', 1)[-1]}:{k[1]})", k) for k in keys[:n]]


def draw_profile_view(stats: pstats.Stats, sort: str, rows: int, root: tuple[str, int, str]) -> tuple[object, ...]:
    """The pstats table sorted by ``sort`` (``rows`` lines), and the icicle below ``root``."""
    text = widgets.HTML(f"<pre style='font-size:11px;line-height:1.25'>{html.escape(pstats_text(stats, sort, rows))}</pre>")
    tree = tree_from_pstats(stats.stats, root)  # type: ignore[attr-defined]
    return text, flame_graph(tree, unit="s (under cProfile)", title=f"Icicle below {root[2]}")


def profile_explorer(stats: pstats.Stats, *, sort: str = "tottime", rows: int = 8,
                     roots: Sequence[tuple[str, tuple[str, int, str]]] | None = None) -> FigureControl:
    """Dropdowns for the sort key and the icicle's root, a slider for the rows; redraws on every change."""
    choices = list(roots) if roots is not None else root_choices(stats)
    if not choices:
        raise ValueError("the profile holds no function of this package to draw an icicle from")
    if sort not in {key for _, key in SORT_KEYS}:
        raise ValueError(f"sort must be one of {[key for _, key in SORT_KEYS]}, not {sort!r}")
    controls = {
        "sort": widgets.Dropdown(options=list(SORT_KEYS), value=sort, description="sort by"),
        "rows": widgets.IntSlider(value=rows, min=3, max=25, description="rows"),
        "root": widgets.Dropdown(options=choices, value=choices[0][1], description="icicle of"),
    }
    return FigureControl(lambda sort, rows, root: draw_profile_view(stats, sort, rows, root), controls,
                         caption="Sort by own time, then by cumulative time: which functions change places, and why?")
