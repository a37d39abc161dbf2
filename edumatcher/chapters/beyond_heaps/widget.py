"""Chapter 12's control: how big can a frame get, and what does each kind of bound then hold?"""

from __future__ import annotations

import ipywidgets as widgets

from edumatcher.kit.figure_control import FigureControl

from .egress import frame_scaling_isolated
from .figures import egress_figure

__all__ = ["MAX_PAYLOADS", "MAX_ENTRIES", "draw_egress", "egress_explorer"]

MAX_PAYLOADS: tuple[int, ...] = (1_024, 4_096, 16_384, 65_536, 150_000)
"""Largest frame sizes offered (bytes); 150,000 is the Open Exchange write-up's "up to about 150 KB". At most about 80 MiB is held."""

MAX_ENTRIES = 2_048
"""The entry cap: chapter 12's scaled-down stand-in for the Open Exchange write-up's 262,144 entries (1/128 of it)."""


def draw_egress(max_payload: int) -> tuple[object, ...]:
    """Simulate the overload with frames up to ``max_payload`` bytes, memory traced; the figure and a line of figures."""
    # Traced in a fresh interpreter, as in the chapter: the largest frames allocate tens of MiB there, not here.
    (trace,) = frame_scaling_isolated([max_payload], ticks=150, max_entries=MAX_ENTRIES)
    note = widgets.HTML(
        f"<p>Largest frame {max_payload:,} bytes (mean {trace.mean_payload:,.0f}): the queue capped at "
        f"{MAX_ENTRIES:,} entries peaked at {trace.entry_traced_peak / 2**20:,.1f} MiB allocated, the one capped at "
        f"{trace.byte_queue.max_bytes / 2**20:g} MiB at {trace.byte_traced_peak / 2**20:,.1f} MiB (tracemalloc), "
        f"shedding {trace.byte_queue.stats()['shed_fraction']:.1%} of what it was offered.</p>")
    return egress_figure(trace, title=f"Frames up to {max_payload:,} bytes"), note


def egress_explorer(*, max_payload: int = 16_384) -> FigureControl:
    """A dropdown of the largest frame size; redraws the overload on every change."""
    if max_payload not in MAX_PAYLOADS:
        raise ValueError(f"max_payload must be one of {MAX_PAYLOADS}, not {max_payload!r}")
    control = widgets.Dropdown(options=[(f"{p:,} bytes", p) for p in MAX_PAYLOADS], value=max_payload,
                               description="largest")
    return FigureControl(lambda max_payload: draw_egress(max_payload), {"max_payload": control},
                         caption="Which queue's memory depends on the frames, and which on its cap alone?")
