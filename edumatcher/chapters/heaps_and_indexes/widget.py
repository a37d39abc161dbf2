"""Chapter 07's control: choose ``compact_factor`` and slack, watch the heaps of a cancel-heavy run."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from edumatcher.book import COMPACT_SLACK
from edumatcher.kit import format_seconds
from edumatcher.kit.figure_control import FigureControl

from .figures import compaction_trace_figure
from .heaps import compaction_trace

__all__ = ["compaction_explorer", "draw_compaction"]


def draw_compaction(factor: float, slack: int, n: int, seed: int = 1) -> tuple[Any, ...]:
    """Run the workload for one setting; return the trace figure and a one-line summary."""
    trace, row = compaction_trace(factor, n=n, seed=seed, slack=slack)
    summary = widgets.HTML(
        f"<p>peak <b>{row.peak_entries:,}</b> heap entries (at most {row.peak_live:,} live), "
        f"<b>{row.rebuilds}</b> rebuild(s); time per operation <b>{format_seconds(row.time.per_op)}</b> "
        f"(median of {row.time.repeat}, range {format_seconds(row.time.min / row.time.ops_per_call)}–"
        f"{format_seconds(row.time.max / row.time.ops_per_call)})</p>"
    )
    return compaction_trace_figure(trace, row, slack=slack), summary


def compaction_explorer(*, n: int = 3_000, seed: int = 1) -> FigureControl:
    """Buttons for ``compact_factor`` (1, 2, 4, 8), the slack (0 or the default) and the workload size.

    Draws the default (factor 2, default slack, ``n`` operations) on creation.
    """
    controls = {
        "factor": widgets.ToggleButtons(options=[1, 2, 4, 8], value=2, description="factor"),
        "slack": widgets.Dropdown(options=[0, COMPACT_SLACK], value=COMPACT_SLACK, description="slack"),
        "n": widgets.Dropdown(options=[n, 4 * n], value=n, description="operations"),
    }
    return FigureControl(lambda factor, slack, n: draw_compaction(factor, slack, n, seed), controls,
                         caption="Compaction rebuilds the heaps when entries exceed factor × live + slack.")
