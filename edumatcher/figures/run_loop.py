"""The run loop as a picture: the message path in one colour, the work done between messages in another.

Chapter 06 opens with this diagram. It is drawn from ``LOOP_BOXES`` and
``LOOP_ARROWS`` (plain data, so the test can check that every arrow joins two
boxes that exist) with matplotlib patches: no image is fetched from anywhere.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

__all__ = ["LOOP_BOXES", "LOOP_ARROWS", "run_loop_diagram"]

HOT = "#c62828"
AROUND = "#1565c0"
NEUTRAL = "#455a64"

LOOP_BOXES: dict[str, tuple[float, float, str, str]] = {
    # name: (x centre, y centre, text, colour)
    "poll": (2.0, 5.0, "source.poll()", NEUTRAL),
    "decide": (2.0, 3.5, "a payload?", NEUTRAL),
    "handle": (5.4, 3.5, "Engine.handle(payload)\nto completion\n(the message path)", HOT),
    "idle": (2.0, 1.6, "idle tick:\nnothing waiting", AROUND),
    "snap": (8.9, 4.6, "snapshots of changed books,\nat most one per interval", AROUND),
    "gc": (8.9, 2.4, "GcPolicy.tick(idle)", AROUND),
    "count": (5.4, 1.5, "sampled timing: 1 message in 16;\ncounters: plain ints", HOT),
}
"""The boxes of the diagram: centre, label and colour (red: on the message path; blue: between messages)."""

LOOP_ARROWS: tuple[tuple[str, str, str], ...] = (
    ("poll", "decide", ""),
    ("decide", "handle", "yes"),
    ("decide", "idle", "no"),
    ("handle", "snap", "then"),
    ("handle", "gc", "then"),
    ("idle", "gc", ""),
    ("handle", "count", "inside"),
)
"""Arrows ``(from, to, label)`` between boxes named in ``LOOP_BOXES``."""

_W, _H = 2.9, 1.05


def run_loop_diagram() -> Figure:
    """Draw one iteration of ``Engine.run``: the message path (red) and the maintenance around it (blue)."""
    fig = Figure(figsize=(9.5, 4.6), layout="constrained")
    ax = fig.add_subplot()
    ax.set_xlim(0, 10.6)
    ax.set_ylim(0.6, 5.8)
    ax.axis("off")
    for x, y, text, colour in LOOP_BOXES.values():
        ax.add_patch(FancyBboxPatch((x - _W / 2, y - _H / 2), _W, _H, boxstyle="round,pad=0.06",
                                    facecolor=colour, alpha=0.12, edgecolor=colour, linewidth=1.6))
        ax.text(x, y, text, ha="center", va="center", fontsize=9, color="#212121")
    for start, end, label in LOOP_ARROWS:
        (x0, y0, *_), (x1, y1, *_) = LOOP_BOXES[start], LOOP_BOXES[end]
        dashed = LOOP_BOXES[end][3] == AROUND and start == "handle"
        ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=14, shrinkA=30, shrinkB=30,
                                     color=NEUTRAL, linewidth=1.2, linestyle="--" if dashed else "-"))
        if label:
            ax.text((x0 + x1) / 2, (y0 + y1) / 2 + 0.15, label, ha="center", fontsize=8, color=NEUTRAL, style="italic")
    ax.add_patch(FancyArrowPatch((LOOP_BOXES["gc"][0], LOOP_BOXES["gc"][1] - 0.6), (LOOP_BOXES["poll"][0] - 1.5, 5.0),
                                 connectionstyle="arc3,rad=-0.35", arrowstyle="-|>", mutation_scale=14,
                                 color="#9e9e9e", linewidth=1.0))
    ax.text(0.1, 0.75, "next iteration", fontsize=8, color="#9e9e9e")
    ax.set_title("One iteration of Engine.run: red is what a message waits for, blue happens between messages",
                 fontsize=10)
    return fig
