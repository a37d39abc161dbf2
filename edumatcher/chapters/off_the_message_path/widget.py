"""Chapter 08's control: how rarely can the run loop time a message and still get the percentiles right?"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets

from edumatcher.kit.figure_control import FigureControl

from .figures import percentile_comparison
from .instrumentation import sampled, sampled_percentiles

__all__ = ["RATES", "draw_sample_rate", "sample_rate_explorer"]

RATES: tuple[int, ...] = (1, 4, 16, 64, 256, 1024)
"""The sampling rates offered: one message in N."""


def draw_sample_rate(latencies_ns: Sequence[int], every: int) -> tuple[object, ...]:
    """The percentile figure at one in ``every``, and a line saying how far each sampled percentile is from the full one."""
    rows = sampled_percentiles(latencies_ns, every=every)
    parts = ", ".join(f"p{p:g} {100 * (part - full) / full:+.0f} %" for p, full, part in rows if full)
    note = widgets.HTML(
        f"<p>1 in {every}: {len(sampled(latencies_ns, every)):,} samples of {len(latencies_ns):,} messages. "
        f"Sampled percentile against the full one: {parts}.</p>")
    return percentile_comparison(latencies_ns, every), note


def sample_rate_explorer(latencies_ns: Sequence[int], *, every: int = 16) -> FigureControl:
    """A dropdown of sampling rates over one fixed list of latencies (ns); redraws on every change."""
    if every not in RATES:
        raise ValueError(f"every must be one of {RATES}, not {every!r}")
    if len(latencies_ns) < max(RATES):
        raise ValueError(f"need at least {max(RATES):,} latencies so every rate has a sample, got {len(latencies_ns):,}")
    values = list(latencies_ns)
    control = widgets.Dropdown(options=[(f"1 in {r}", r) for r in RATES], value=every, description="timed")
    return FigureControl(lambda every: draw_sample_rate(values, every), {"every": control},
                         caption="Which percentile drifts first as the sample gets thinner, and why?")
