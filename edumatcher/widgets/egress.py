"""Chapter 10's control: how big can a payload get, and what does each kind of bound then hold?"""

from __future__ import annotations

import ipywidgets as widgets

from ..experiments.egress import simulate
from ..figures.queues import egress_figure
from .figure_control import FigureControl

__all__ = ["MAX_PAYLOADS", "draw_egress", "egress_explorer"]

MAX_PAYLOADS: tuple[int, ...] = (1_024, 4_096, 16_384, 65_536)
"""Largest payload sizes offered (bytes). At the largest, the entry-capped queue holds tens of MiB."""


def draw_egress(max_payload: int) -> tuple[object, ...]:
    """Simulate the overload with payloads up to ``max_payload`` bytes; the figure and a line of figures."""
    trace = simulate(max_payload=max_payload)
    note = widgets.HTML(
        f"<p>Largest payload {max_payload:,} bytes: the entry-capped queue peaked at "
        f"{max(trace.entry_bounded) / 2**20:,.1f} MiB, the byte-capped one at {max(trace.byte_bounded) / 2**20:,.1f} MiB "
        f"(cap {trace.byte_queue.max_bytes / 2**20:g} MiB), shedding {trace.byte_queue.stats()['shed_fraction']:.1%} "
        "of what it was offered.</p>")
    return egress_figure(trace, title=f"Payloads up to {max_payload:,} bytes"), note


def egress_explorer(*, max_payload: int = 16_384) -> FigureControl:
    """A dropdown of the largest payload size; redraws the overload on every change."""
    if max_payload not in MAX_PAYLOADS:
        raise ValueError(f"max_payload must be one of {MAX_PAYLOADS}, not {max_payload!r}")
    control = widgets.Dropdown(options=[(f"{p:,} bytes", p) for p in MAX_PAYLOADS], value=max_payload,
                               description="largest")
    return FigureControl(lambda max_payload: draw_egress(max_payload), {"max_payload": control},
                         caption="Which queue's memory depends on the payloads, and which on its cap alone?")
