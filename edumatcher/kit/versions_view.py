"""Chapter 00's control over ``edumatcher.kit.versions``: pick interpreters, run the suite on each, see one table and
one figure (``versions.ratio_bars``: the headline ratios on every interpreter found, with their confidence intervals).

The table comes first, then the figure; the candidates discovery skipped (an old
``python2.7``, a duplicate) are one folded line under the table, opened on a click.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

import ipywidgets as widgets

from .figure_control import FigureControl
from .versions import (
    QUICK_BUDGET,
    QUOTED_COLOUR,
    RATIO_KEYS,
    Discovery,
    Found,
    Skipped,
    SuiteRun,
    analyse,
    changes,
    discover,
    ratio_bars,
    render_table,
    run_one,
    skipped_summary,
)

__all__ = ["versions_explorer", "default_selection", "skipped_details", "ratio_bars", "RATIO_KEYS", "QUOTED_COLOUR"]


def default_selection(found: Sequence[Found]) -> tuple[str, ...]:
    """The kernel's own interpreter (one run of a few seconds), or the first found."""
    own = [f.path for f in found if f.source == "this interpreter"]
    return tuple(own[:1] or [f.path for f in found[:1]])


def skipped_details(skipped: Sequence[Skipped]) -> str:
    """The skipped candidates as a folded HTML ``<details>``: one summary line, one line each when opened."""
    if not skipped:
        return ""
    lines = html.escape("\n".join(str(s) for s in skipped))
    return (f"<details><summary style='font-size:12px'>{html.escape(skipped_summary(skipped))} "
            f"(click for the list)</summary><pre style='font-size:11px'>{lines}</pre></details>")


def versions_explorer(
    discovery: Discovery | None = None, *, budget: float = QUICK_BUDGET, quick: bool = True,
    runner: Callable[..., SuiteRun] = run_one,
) -> FigureControl:
    """A multiple choice of the interpreters ``discover()`` found; the suite runs on each one picked.

    Each interpreter runs once (``budget`` seconds per comparison, quick sizes by
    default) and its result is kept, so picking another only runs that one. It
    draws once on creation with the kernel's own interpreter picked, so a notebook
    run by nobody shows a table and a figure: the table first, with the skipped
    candidates folded under it (``skipped_details``). ``runner`` replaces ``run_one`` in tests.
    """
    found = discover().found if discovery is None else discovery.found
    skipped = [] if discovery is None else discovery.skipped
    by_path = {f.path: f for f in found}
    cache: dict[str, SuiteRun] = {}
    picker = widgets.SelectMultiple(
        options=[(f"{f.name} ({f.source})", f.path) for f in found], value=default_selection(found),
        rows=min(6, max(2, len(found))), description="interpreters",
    )

    def draw(interpreters: Sequence[str]) -> tuple[object, ...]:
        picked = [by_path[p] for p in interpreters if p in by_path]
        if not picked:
            return (widgets.HTML("<p>Pick at least one interpreter (Ctrl- or Shift-click for several).</p>"),)
        for interp in picked:
            if interp.path not in cache:
                cache[interp.path] = runner(interp, budget=budget, quick=quick)
        report = analyse([cache[i.path] for i in picked], skipped, budget=budget, quick=quick)
        text = render_table(report) + "\n\nbetween interpreters:\n" + "\n".join(f"  {c}" for c in changes(report))
        table = widgets.HTML(f"<pre style='font-size:11px;line-height:1.3'>{html.escape(text)}</pre>"
                             + skipped_details(skipped))
        if not report.ok_runs:
            return (table,)
        return table, ratio_bars(report)

    caption = (f"{len(found)} interpreter(s) found on this machine. Ctrl- or Shift-click to pick several; "
               "each takes a few seconds the first time.")
    return FigureControl(draw, {"interpreters": picker}, caption=caption)
