"""The interpreters side by side, drawn: the ratio figure and the picker control over ``edumatcher.kit.versions``.

Chapter 00's control: pick interpreters, run the suite on each, see one table and one figure.

The course's headline ratios on every interpreter found: grouped bars with their confidence intervals.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence

import ipywidgets as widgets
from matplotlib.figure import Figure

from .figure_control import FigureControl
from .versions import (
    QUICK_BUDGET,
    SPECS,
    Discovery,
    Found,
    Report,
    SuiteRun,
    analyse,
    changes,
    discover,
    render_table,
    run_one,
)

__all__ = ["versions_explorer", "default_selection", "ratio_bars", "RATIO_KEYS", "QUOTED_COLOUR"]


def default_selection(found: Sequence[Found]) -> tuple[str, ...]:
    """The kernel's own interpreter (one run of a few seconds), or the first found."""
    own = [f.path for f in found if f.source == "this interpreter"]
    return tuple(own[:1] or [f.path for f in found[:1]])


def versions_explorer(
    discovery: Discovery | None = None, *, budget: float = QUICK_BUDGET, quick: bool = True,
    runner: Callable[..., SuiteRun] = run_one,
) -> FigureControl:
    """A multiple choice of the interpreters ``discover()`` found; the suite runs on each one picked.

    Each interpreter runs once (``budget`` seconds per comparison, quick sizes by
    default) and its result is kept, so picking another only runs that one. It
    draws once on creation with the kernel's own interpreter picked, so a notebook
    run by nobody shows a table and a figure. ``runner`` replaces ``run_one`` in tests.
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
        table = widgets.HTML(f"<pre style='font-size:11px;line-height:1.3'>{html.escape(text)}</pre>")
        if not report.ok_runs:
            return (table,)
        return ratio_bars(report), table

    caption = (f"{len(found)} interpreter(s) found on this machine. Ctrl- or Shift-click to pick several; "
               "each takes a few seconds the first time.")
    return FigureControl(draw, {"interpreters": picker}, caption=caption)


RATIO_KEYS = tuple(s.key for s in SPECS if s.key not in ("gc_young", "bare_book"))
"""The figures drawn: every one that is a ratio (without / with the technique)."""

QUOTED_COLOUR = "#000000"

_PALETTE = ("#90caf9", "#42a5f5", "#1e88e5", "#1565c0", "#0d47a1", "#7e57c2", "#26a69a", "#8d6e63")


def ratio_bars(report: Report, *, title: str = "") -> Figure:
    """One group of bars per ratio, one bar per interpreter, whiskers at the 95 % CI, log scale.

    A black diamond marks seed 000's quoted CPython 3.14 ratio where it printed
    both figures; a figure an interpreter could not produce (orjson or the engine
    missing) has no bar and a small "n/a". The dotted line at 1 is "no
    difference": above it, the technique on the right of the label saves time.
    """
    runs = report.ok_runs
    specs = [s for s in SPECS if s.key in RATIO_KEYS]
    fig = Figure(figsize=(max(7.0, 1.05 * len(specs) + 2), 4.2), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / max(1, len(runs))
    for i, run in enumerate(runs):
        colour = _PALETTE[i % len(_PALETTE)]
        xs, heights, lows, highs, missing = [], [], [], [], []
        for g, spec in enumerate(specs):
            x = g - 0.4 + width * (i + 0.5)
            value = report.ratio(run, spec.key)
            if value is None or not all(math.isfinite(v) and v > 0 for v in value):
                missing.append(x)
                continue
            ratio, low, high = value
            xs.append(x)
            heights.append(ratio)
            lows.append(max(ratio - low, 0.0))
            highs.append(max(high - ratio, 0.0))
        ax.bar(xs, heights, width=width * 0.95, color=colour, label=run.interpreter.name,
               yerr=[lows, highs], capsize=2, ecolor="#333333")
        for x in missing:
            ax.annotate("n/a", xy=(x, 1.0), ha="center", va="bottom", fontsize=6, rotation=90, color="#666666")
    quoted = [(g, s.quoted_ratio) for g, s in enumerate(specs) if s.quoted_ratio is not None]
    if quoted:
        ax.scatter([g for g, _ in quoted], [r for _, r in quoted], marker="D", color=QUOTED_COLOUR, zorder=3,
                   s=22, label="quoted, seed 000, CPython 3.14.10")
    ax.axhline(1.0, color="#555555", linestyle=":", linewidth=1)
    ax.set_yscale("log")
    ax.set_xticks(range(len(specs)))
    ax.set_xticklabels([s.title.split(": ", 1)[1].replace(" / ", "\n/ ") for s in specs], fontsize=7)
    ax.set_ylabel("ratio without / with the technique (log)")
    ax.legend(fontsize=7, ncols=2 if len(runs) > 3 else 1, loc="upper left")
    ax.set_title(title or "The course's headline ratios on each interpreter (measured here; 95 % CI whiskers)",
                 fontsize=10)
    return fig
