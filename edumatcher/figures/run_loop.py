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
    "decide": (2.0, 3.3, "a payload?", NEUTRAL),
    "count": (5.6, 5.0, "sampled timing: 1 message in 16;\ncounters: plain ints", HOT),
    "handle": (5.6, 3.3, "Engine.handle(payload)\nto completion\n(the message path)", HOT),
    "idle": (5.6, 1.6, "idle tick:\nnothing waiting", AROUND),
    "snap": (9.2, 3.3, "snapshots of changed books,\nat most one per interval", AROUND),
    "gc": (9.2, 1.6, "collector housekeeping:\nGcPolicy.tick(idle)", AROUND),
}
"""The boxes of the diagram: centre, label and colour (red: on the message path; blue: between messages)."""

LOOP_ARROWS: tuple[tuple[str, str, str], ...] = (
    ("poll", "decide", ""),
    ("decide", "handle", "yes"),
    ("decide", "idle", "no"),
    ("handle", "snap", "then"),
    ("idle", "snap", "then"),
    ("snap", "gc", ""),
    ("handle", "count", "inside"),
)
"""Arrows ``(from, to, label)`` between boxes named in ``LOOP_BOXES``; after ``gc`` the loop returns to ``poll``."""

_W, _H = 2.9, 1.05


def _edge(x: float, y: float, dx: float, dy: float) -> tuple[float, float]:
    """Where the ray from a box's centre in direction (dx, dy) leaves the box."""
    hw, hh = _W / 2 + 0.08, _H / 2 + 0.08
    t = min(hw / abs(dx) if dx else float("inf"), hh / abs(dy) if dy else float("inf"))
    return x + t * dx, y + t * dy


def run_loop_diagram() -> Figure:
    """Draw one iteration of ``Engine.run``: the message path (red) and the maintenance around it (blue)."""
    fig = Figure(figsize=(9.5, 4.8), layout="constrained")
    ax = fig.add_subplot()
    ax.set_xlim(0.4, 11.1)
    ax.set_ylim(0.9, 6.0)
    ax.axis("off")
    for x, y, text, colour in LOOP_BOXES.values():
        ax.add_patch(FancyBboxPatch((x - _W / 2, y - _H / 2), _W, _H, boxstyle="round,pad=0.06",
                                    facecolor=colour, alpha=0.12, edgecolor=colour, linewidth=1.6))
        ax.text(x, y, text, ha="center", va="center", fontsize=9, color="#212121")
    for start, end, label in LOOP_ARROWS:
        (x0, y0, *_), (x1, y1, *_) = LOOP_BOXES[start], LOOP_BOXES[end]
        dx, dy = x1 - x0, y1 - y0
        a, b = _edge(x0, y0, dx, dy), _edge(x1, y1, -dx, -dy)
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=14, color=NEUTRAL, linewidth=1.2))
        if label:
            ax.text((a[0] + b[0]) / 2 + 0.05, (a[1] + b[1]) / 2 + 0.12, label, fontsize=8, color=NEUTRAL, style="italic")
    # Back to poll(): out of the right of the GcPolicy box, over the top, down into poll().
    gx, gy = LOOP_BOXES["gc"][0] + _W / 2 + 0.08, LOOP_BOXES["gc"][1]
    px, py = LOOP_BOXES["poll"][0], LOOP_BOXES["poll"][1] + _H / 2 + 0.08
    top = 5.8
    ax.plot([gx, 10.95, 10.95, px], [gy, gy, top, top], color="#9e9e9e", linewidth=1.0)
    ax.add_patch(FancyArrowPatch((px, top), (px, py), arrowstyle="-|>", mutation_scale=14, color="#9e9e9e", linewidth=1.0))
    ax.text(7.6, top + 0.06, "next iteration", fontsize=8, color="#757575", ha="center", va="bottom")
    ax.set_title("One iteration of Engine.run: red is what a message waits for, blue happens between messages",
                 fontsize=10)
    return fig
