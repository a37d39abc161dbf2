"""Chapter 13's control, ``savings_explorer``: the savings the chapter measured, read against one
message's time as a function of how often a message runs each operation (nothing is measured again).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

import ipywidgets as widgets
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from edumatcher.kit import Comparison, Measurement
from edumatcher.kit.figure_control import FigureControl

from .micro import SPEED_UP_WORTH_NAMING

_PALETTE = ("#1565c0", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#8d6e63", "#ad1457", "#455a64")

__all__ = ["TIMES_PER_MESSAGE", "WORTH_NAMING", "Saving", "savings_figure", "draw_savings", "savings_explorer"]


TIMES_PER_MESSAGE: tuple[int, ...] = (1, 3, 10, 30, 100, 300, 1_000)
"""How many times one message might run a technique's operation, as ``savings_explorer`` offers them."""


WORTH_NAMING = 1.0
"""The share of one message (%) the Python engine notes' 1 % rule asks of a change before it is worth its risk."""


@dataclass(frozen=True)
class Saving:
    """One technique's measured pair: what it saves per operation, read from a ``Comparison``.

    ``unit``: operations per timed call (a loop of 400 reads is 400). ``technique_first``:
    True when ``comparison.a`` is the technique (the chapter's "left alone" rows time the
    idea first); False when ``a`` is what the technique avoids and ``b`` the technique.
    """

    label: str
    comparison: Comparison
    unit: int = 1
    technique_first: bool = False

    @property
    def left_alone(self) -> bool:
        """True for an idea the notes tried and left alone (timed idea first), drawn dashed."""
        return self.technique_first

    def clear(self) -> bool:
        """True when the technique is faster beyond the course's "same" band, by the whole interval of its ratio.

        The rule of ``micro.left_alone_verdict`` (``SPEED_UP_WORTH_NAMING``), so the
        control draws a saving exactly where the chapter's verdict names one.
        """
        low, high = self.comparison.ci
        band = 1 + SPEED_UP_WORTH_NAMING
        return high < 1 / band if self.technique_first else low > band

    def per_op_ns(self) -> tuple[float, float, float]:
        """The saving per operation (ns) and its interval, from the ratio's interval: (saving, low, high). O(1).

        Positive: the technique is faster. The ratio is the comparison's own
        estimate, so the saving and its interval agree with its verdict.
        """
        c = self.comparison
        low, high = c.ci
        base = c.b.median / self.unit * 1e9  # the form the ratio divides by, ns per operation
        if self.technique_first:  # ratio = technique / old: saving = old * (1 - ratio)
            return base * (1 - c.ratio), base * (1 - high), base * (1 - low)
        return base * (c.ratio - 1), base * (low - 1), base * (high - 1)  # ratio = old / technique


def savings_figure(message_ns: float, savings: Sequence[Saving], times: int) -> Figure:
    """Each saving as a share of one message (%, log) against how often a message runs it (log), the 1 % line across.

    A line per technique faster beyond the "same" band (``Saving.clear``; its
    interval shaded, the ideas the notes left alone dashed); the others are left
    off the axes (the note beside says so). The axis stops at 100 %: an operation run so often that it
    saves more than the message cost would make a dearer message. The vertical line
    marks ``times``; a dot marks where each line crosses 1 %. O(len(savings)).
    """
    lo_k, hi_k = TIMES_PER_MESSAGE[0], TIMES_PER_MESSAGE[-1]
    fig = Figure(figsize=(8.5, 4.4), layout="constrained")
    ax = fig.subplots()
    ks = [lo_k, hi_k]
    lowest = WORTH_NAMING
    for i, s in enumerate(savings):
        ns, low, high = s.per_op_ns()
        if not s.clear():
            continue
        colour = _PALETTE[i % len(_PALETTE)]
        share = [100 * ns * k / message_ns for k in ks]
        lowest = min(lowest, 100 * low * lo_k / message_ns)
        ax.plot(ks, share, color=colour, linewidth=1.8, linestyle="--" if s.left_alone else "-", label=s.label)
        ax.fill_between(ks, [100 * low * k / message_ns for k in ks], [100 * high * k / message_ns for k in ks],
                        color=colour, alpha=0.15, linewidth=0)
        even = WORTH_NAMING / 100 * message_ns / ns
        if lo_k <= even <= hi_k:
            ax.plot([even], [WORTH_NAMING], "o", color=colour, markersize=5)
    ax.axhline(WORTH_NAMING, color="#c62828", linestyle=":", linewidth=1.5, label="1 % of one message")
    ax.axvline(times, color="#455a64", linewidth=1.2, alpha=0.8,
               label=f"{times:,} time{'s' * (times != 1)} per message")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlim(lo_k / 1.25, hi_k * 1.25)
    ax.set_ylim(10 ** math.floor(math.log10(lowest)), 100)
    ax.set_xlabel("times one message runs the operation (log scale)")
    ax.set_ylabel("saving, % of one message's time (log scale)")
    ax.set_title(f"What each technique would save one message of {message_ns / 1e3:,.1f} µs, "
                 "by how often the message runs it", fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def draw_savings(message_ns: float, savings: Sequence[Saving], times: int) -> tuple[object, ...]:
    """The savings figure at ``times`` per message, and a table: each saving, its share of a message there, its 1 % count."""
    cells = "padding:1px 8px;text-align:{}"
    head = "".join(f"<th style='{cells.format(al)}'>{h}</th>" for h, al in (
        ("operation", "left"), ("saving each", "right"), (f"share of a message at {times:,} per message", "right"),
        ("runs per message for 1 %", "right")))
    rows = []
    for s in savings:
        ns = s.per_op_ns()[0]
        if s.clear():
            share = 100 * ns * times / message_ns
            values = (f"{ns:,.1f} ns", f"{share:,.2f} %" if share < 100 else "more than the whole message",
                      f"{math.ceil(WORTH_NAMING / 100 * message_ns / ns):,}")
        else:
            values = (f"no speed-up beyond ±{SPEED_UP_WORTH_NAMING * 100:g} %", "none to read", "never")
        rows.append(f"<tr><td style='{cells.format('left')}'>{html.escape(s.label)}</td>"
                    + "".join(f"<td style='{cells.format('right')}'>{v}</td>" for v in values) + "</tr>")
    table = (f"<table style='font-size:12px;border-collapse:collapse'><tr>{head}</tr>{''.join(rows)}</table>"
             f"<p style='font-size:12px'>One message: {message_ns / 1e3:,.1f} µs, the chapter's plain pass.</p>")
    return savings_figure(message_ns, savings, times), widgets.HTML(table)


def savings_explorer(message: Measurement, savings: Sequence[Saving], *, times: int = 1) -> FigureControl:
    """A slider for how often one message runs each technique, over savings the chapter measured; measures nothing.

    ``message``: one message's time (its ``per_op``, seconds), the scale every saving is read against.
    """
    if times not in TIMES_PER_MESSAGE:
        raise ValueError(f"times must be one of {TIMES_PER_MESSAGE}, not {times!r}")
    if not savings:
        raise ValueError("savings_explorer needs at least one measured saving")
    message_ns = message.per_op * 1e9
    if not message_ns > 0:
        raise ValueError("one message must take some time")
    rows = list(savings)
    control = widgets.SelectionSlider(options=[(f"{k:,}", k) for k in TIMES_PER_MESSAGE], value=times,
                                      description="per message")
    return FigureControl(lambda times: draw_savings(message_ns, rows, times), {"times": control},
                         caption="How many times must one message run an operation before its saving reaches 1 % "
                                 "of the message?")
