"""Plain against slotted instances of one class: memory, construction and attribute read, side by side."""

from __future__ import annotations

from matplotlib.figure import Figure

from ..experiments.slots import SlotsFigures

__all__ = ["slots_panels", "PLAIN_COLOUR", "SLOTTED_COLOUR"]

PLAIN_COLOUR = "#b0bec5"
SLOTTED_COLOUR = "#1565c0"


def slots_panels(figures: SlotsFigures, *, title: str = "") -> Figure:
    """Three panels, plain bar beside slotted bar: bytes per instance, construction ns, one read ns.

    Time bars carry a whisker from the fastest to the slowest sample; each time
    panel's title gives the ratio plain / slotted with its confidence interval.
    """
    fig = Figure(figsize=(8.5, 3.0), layout="constrained")
    mem, make, read = fig.subplots(1, 3)
    names = ["plain", "slots=True"]
    colours = [PLAIN_COLOUR, SLOTTED_COLOUR]
    values = [figures.plain_bytes, figures.slotted_bytes]
    mem.bar(names, values, color=colours)
    mem.set_title("bytes per instance", fontsize=10)
    for x, v in enumerate(values):
        mem.annotate(f"{v:,.0f} B", xy=(x, v), xytext=(0, 2), textcoords="offset points", ha="center", fontsize=8)
    for ax, comparison, what in ((make, figures.construction, "construct (ns)"),
                                 (read, figures.read, "read one attribute (ns)")):
        pair = tuple(comparison)
        med = [m.median * 1e9 for m in pair]
        lo = [(m.median - m.min) * 1e9 for m in pair]
        hi = [(m.max - m.median) * 1e9 for m in pair]
        ax.bar(names, med, yerr=[lo, hi], color=colours, capsize=3)
        ax.set_title(f"{what}\nplain / slots {comparison.ratio:.2f} ({comparison.ci_text})", fontsize=9)
        for x, v in enumerate(med):
            ax.annotate(f"{v:,.3g}", xy=(x, v), xytext=(6, 2), textcoords="offset points", fontsize=8)
    fig.suptitle(title or f"{figures.n_fields}-field dataclass: plain against slots=True (measured here)")
    return fig
