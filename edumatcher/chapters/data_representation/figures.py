"""Plain against slotted instances: one class's memory, construction and read; memory against field count."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from .inline_values import LayoutRow, largest_step
from .slots import SlotsFigures

__all__ = ["slots_panels", "memory_by_fields", "PLAIN_COLOUR", "SLOTTED_COLOUR", "MATERIALISED_COLOUR"]

PLAIN_COLOUR = "#b0bec5"
SLOTTED_COLOUR = "#1565c0"
MATERIALISED_COLOUR = "#ef6c00"


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


def memory_by_fields(rows: Sequence[LayoutRow], *, interpreter: str = "", title: str = "") -> Figure:
    """Bytes per instance against field count: plain, plain after ``__dict__`` was read, and slotted.

    The largest step of the plain line (``largest_step``) is marked and labelled
    with its two byte counts, so the cliff is read from the data, not from the text.
    """
    if len(rows) < 2:
        raise ValueError("memory_by_fields needs at least two rows")
    fig = Figure(figsize=(8.5, 3.4), layout="constrained")
    ax = fig.add_subplot()
    xs = [r.n_fields for r in rows]
    ax.plot(xs, [r.plain for r in rows], "o-", color=PLAIN_COLOUR, label="plain", markersize=4)
    ax.plot(xs, [r.materialised for r in rows], "s--", color=MATERIALISED_COLOUR, markersize=3,
            label="plain, after reading obj.__dict__")
    ax.plot(xs, [r.slotted for r in rows], "o-", color=SLOTTED_COLOUR, label="slots=True", markersize=4)
    before, after = largest_step(rows)
    ax.annotate(f"largest step: {before.n_fields} → {after.n_fields} fields,\n"
                f"{before.plain:,.0f} B → {after.plain:,.0f} B",
                xy=(after.n_fields, after.plain), xytext=(8, -30), textcoords="offset points", fontsize=8,
                arrowprops={"arrowstyle": "->", "color": "#37474f"})
    ax.set_xlabel("int fields in the dataclass")
    ax.set_ylabel("bytes per instance (tracemalloc)")
    ax.set_ylim(0, max(max(r.plain, r.materialised) for r in rows) * 1.15)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title(title or f"Memory per instance against field count{', ' + interpreter if interpreter else ''}"
                 " (measured here)", fontsize=10)
    return fig
