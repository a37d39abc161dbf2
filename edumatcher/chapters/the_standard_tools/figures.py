"""Flame graphs and icicles drawn with matplotlib, from py-spy's folded stacks or from ``pstats``.

A flame graph shows a profile as nested boxes: each box is a function *in one
calling context*, its width is the time (or the samples) spent in it and in what
it called, and the boxes on top of it are its callees. Read it by width, never by
order: the widest boxes at a level are where the time goes; a box much wider than
all its children is a function that spends its time in its own code. Here the
colour says one thing, named in the legend: the module (file) a function is in.
Drawn with the root at the top it is called an *icicle* (snakeviz's default).

Two sources give the tree:

* ``tree_from_folded``: *folded stacks*, one line per distinct stack,
  ``"outer;middle;inner count"``, the format py-spy writes with ``--format raw``
  (and Brendan Gregg's ``stackcollapse`` scripts). Every sample is a whole stack,
  so the tree is exact up to sampling noise.
* ``tree_from_pstats``: a ``pstats.Stats`` table. cProfile keeps only
  caller→callee *pairs*, not whole stacks, so a function called from two places
  splits its children between them in proportion to the time each caller spent
  in it. That is the approximation snakeviz makes; it is exact for a function with
  one caller, and it cannot separate two calling contexts of the same function.

>>> root = tree_from_folded(["main;handle;decode 3", "main;handle;match 1", "main;idle 1"])
>>> root.value, [(c.name, c.value) for c in root.children]
(5.0, [('main', 5.0)])
>>> [(c.name, c.value) for c in root.children[0].children]
[('handle', 4.0), ('idle', 1.0)]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

__all__ = ["FlameNode", "tree_from_folded", "tree_from_pstats", "frame_label", "flame_graph", "module_of", "function_of",
           "MODULE_COLOURS", "OTHER_COLOUR", "STABLE_COLOURS", "SPARE_COLOURS"]

ROOT = "all"
"""Name of the synthetic root every tree hangs from."""


@dataclass
class FlameNode:
    """One box: a frame name, its total ``value`` (own time plus its children's), and its children."""

    name: str
    value: float = 0.0
    children: list[FlameNode] = field(default_factory=list)

    def child(self, name: str) -> FlameNode:
        """The child called ``name``, created (with value 0) if it is not there yet. O(children)."""
        for c in self.children:
            if c.name == name:
                return c
        node = FlameNode(name)
        self.children.append(node)
        return node

    @property
    def own(self) -> float:
        """The part of ``value`` not covered by children: time in this frame's own code."""
        return max(self.value - sum(c.value for c in self.children), 0.0)

    def depth(self) -> int:
        """Levels below and including this node (a leaf has depth 1)."""
        return 1 + max((c.depth() for c in self.children), default=0)

    def find(self, name_part: str) -> FlameNode | None:
        """The widest node (any depth) whose name contains ``name_part``, or None."""
        best: FlameNode | None = None
        stack = [self]
        while stack:
            node = stack.pop()
            if name_part in node.name and (best is None or node.value > best.value):
                best = node
            stack.extend(node.children)
        return best

    def sort(self) -> FlameNode:
        """Order every level's children widest first (in place); return self."""
        self.children.sort(key=lambda c: c.value, reverse=True)
        for c in self.children:
            c.sort()
        return self


_FOLDED = re.compile(r"^(?P<stack>.*\S)\s+(?P<count>\d+)\s*$")


def tree_from_folded(lines: Iterable[str], *, label: Any = None) -> FlameNode:
    """Build a tree from folded stacks (``"a;b;c 12"`` per line, outermost frame first). O(total frames).

    ``label`` (a function of one frame string) renames frames, e.g. ``frame_label``
    to drop line numbers so all samples of one function merge. Blank lines are
    skipped; a line without a trailing count raises ``ValueError``.
    """
    root = FlameNode(ROOT)
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        match = _FOLDED.match(line)
        if match is None:
            raise ValueError(f"not a folded stack (expected 'frame;frame count'): {line[:80]!r}")
        count = int(match["count"])
        root.value += count
        node = root
        for frame in match["stack"].split(";"):
            node = node.child(label(frame) if label else frame)
            node.value += count
    return root.sort()


_PYSPY_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def frame_label(frame: str) -> str:
    """A py-spy frame ``"func (path/file.py:123)"`` as ``"func (file.py)"``: the line number dropped.

    >>> frame_label("Engine.handle (edumatcher/engine.py:237)")
    'Engine.handle (engine.py)'
    >>> frame_label("make_order_ack_unchecked (<edumatcher.messages order.ack orjson 3.13.0>:21)")
    'make_order_ack_unchecked (generated)'
    >>> frame_label("plain")
    'plain'
    """
    match = _PYSPY_FRAME.match(frame)
    if match is None:
        return frame
    file = match["file"]
    where = "generated" if file.startswith("<") else file.rsplit("/", 1)[-1]
    return f"{match['func']} ({where})"


def _pstats_name(key: tuple[str, int, str]) -> str:
    filename, line, name = key
    if filename == "~" or not filename:
        return name
    if filename.startswith("<"):
        return f"{name} (generated)"
    return f"{name} ({filename.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line})"


def tree_from_pstats(stats: Mapping[Any, Any], root: tuple[str, int, str], *, max_depth: int = 20,
                     min_share: float = 0.002) -> FlameNode:
    """Build an icicle tree below ``root`` from a ``pstats.Stats(...).stats`` mapping (cumulative seconds).

    ``stats`` maps ``(file, line, function)`` to ``(primitive calls, calls, own s,
    cumulative s, callers)``, where ``callers`` maps each caller to that pair's
    ``(calls, calls, own s, cumulative s)``. A child's width is the cumulative
    time of the caller→callee pair, scaled by the share of the parent's total time
    this box stands for (see the module docstring). A function already on the path
    is not expanded again (recursion), and boxes narrower than ``min_share`` of the
    root are dropped, as is anything deeper than ``max_depth``.
    """
    if root not in stats:
        raise KeyError(f"{root!r} is not in the profile")
    callees: dict[Any, list[tuple[Any, float]]] = {}
    for callee, entry in stats.items():
        for caller, edge in entry[4].items():
            callees.setdefault(caller, []).append((callee, edge[3]))
    total = stats[root][3]
    node = FlameNode(_pstats_name(root), total)
    floor = total * min_share

    def expand(parent: FlameNode, key: Any, path: frozenset[Any], depth: int) -> None:
        whole = stats[key][3]
        if depth >= max_depth or whole <= 0:
            return
        scale = parent.value / whole
        for callee, cumulative in callees.get(key, ()):
            width = cumulative * scale
            if callee in path or width < floor:
                continue
            child = FlameNode(_pstats_name(callee), width)
            parent.children.append(child)
            expand(child, callee, path | {callee}, depth + 1)

    expand(node, root, frozenset({root}), 1)
    wrapper = FlameNode(ROOT, total, [node])
    return wrapper.sort()


STABLE_COLOURS = {"engine.py": "#4e79a7", "book.py": "#f28e2b", "generated": "#59a14f", "model.py": "#e15759",
                  "built-in (C)": "#b07aa1", "messages.py": "#76b7b2", "rules.py": "#edc948", "ticks.py": "#9c755f",
                  "sinks.py": "#ff9da7"}
"""The message path's modules keep one colour in every flame graph, so two pictures of one path
(chapter 02's icicle from cProfile and flame graph from py-spy) can be set side by side."""

SPARE_COLOURS = ("#a0cbe8", "#ffbe7d", "#8cd17d")
"""Colours for the widest modules outside ``STABLE_COLOURS``, in order of width; the rest share ``OTHER_COLOUR``."""

MODULE_COLOURS = (*STABLE_COLOURS.values(), *SPARE_COLOURS)
"""Every colour a module can get."""

OTHER_COLOUR = "#bab0ac"
"""Colour of every box whose module got none of ``MODULE_COLOURS``."""


def module_of(name: str) -> str:
    """The file a box's name ends with, without its line number; ``"built-in (C)"`` when it names none.

    >>> module_of("OrderBook.submit (book.py:419)"), module_of("check (generated)"), module_of("<built-in method len>")
    ('book.py', 'generated', 'built-in (C)')
    """
    if not name.endswith(")") or " (" not in name:
        return "built-in (C)"
    return name[name.rfind(" (") + 2:-1].split(":")[0]


def function_of(name: str) -> str:
    """A box's name without the file in brackets: what its label shows (the colour names the module).

    >>> function_of("OrderBook.submit (book.py:419)"), function_of("<built-in method len>")
    ('OrderBook.submit', '<built-in method len>')
    """
    return name[: name.rfind(" (")] if module_of(name) != "built-in (C)" else name


def _visible(node: FlameNode, total: float, min_share: float, max_depth: int, level: int = 0) -> list[tuple[FlameNode, int]]:
    """Every box wide enough to draw, with its level, parents before children."""
    if node.value / total < min_share or level >= max_depth:
        return []
    out = [(node, level)]
    for c in node.children:
        out += _visible(c, total, min_share, max_depth, level + 1)
    return out


def _fit(text: str, width_pt: float, measure: Any) -> str:
    """``text``, or its longest start that fits ``width_pt`` points with "…" after it, or "" if not even one letter does."""
    if measure(text) <= width_pt:
        return text
    lo, hi = 0, len(text) - 1  # the longest k with text[:k] + "…" fitting
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if measure(text[:mid] + "…") <= width_pt:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + "…" if lo >= 2 else ""


def flame_graph(root: FlameNode, *, title: str = "", unit: str = "samples", icicle: bool = True,
                min_share: float = 0.005, max_depth: int = 14) -> Figure:
    """Draw ``root``'s tree: one row per depth, each box as wide as its share of the root.

    ``icicle=True`` puts the root at the top (snakeviz); ``False`` draws a flame
    graph, root at the bottom (py-spy's SVGs). Boxes narrower than ``min_share`` of
    the root are not drawn. A box's colour is its module (the file its name ends
    with): the message path's modules always the same one (``STABLE_COLOURS``), the
    widest others a spare colour each, the rest a shared grey; the legend under the
    axis names them, widest first. A box's label is its function, elided with "…"
    to the width of the box (measured, not guessed), or left out when not two
    letters fit. The synthetic ``all`` root is skipped when it has a single child.
    """
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    if root.value <= 0:
        raise ValueError("flame_graph needs a tree with a positive value")
    top = root.children[0] if root.name == ROOT and len(root.children) == 1 else root
    total = top.value
    boxes = _visible(top, total, min_share, max_depth)
    depth = max(level for _, level in boxes) + 1
    own: dict[str, float] = {}
    for node, _ in boxes:
        own[module_of(node.name)] = own.get(module_of(node.name), 0.0) + node.own
    ranked = sorted(own, key=lambda m: own[m], reverse=True)
    spare = iter(SPARE_COLOURS)
    colour = {m: STABLE_COLOURS[m] if m in STABLE_COLOURS else next(spare, OTHER_COLOUR) for m in ranked}
    named = [m for m in ranked if colour[m] != OTHER_COLOUR]
    fig_width = 10.0
    fig = Figure(figsize=(fig_width, 0.42 * depth + 2.0), layout="constrained")
    ax = fig.add_subplot()
    font = FontProperties(size=7.5)
    renderer = RendererAgg(10, 10, 72)  # at 72 dpi a pixel is a point
    axes_pt = fig_width * 72 * 0.9  # the axes span about nine tenths of the figure (no y tick labels)

    def measure(text: str) -> float:
        return renderer.get_text_width_height_descent(text, font, ismath=False)[0]

    x_of: dict[int, float] = {id(top): 0.0}
    for node, level in boxes:
        x = x_of[id(node)]
        child_x = x
        for c in node.children:
            x_of[id(c)] = child_x
            child_x += c.value / total
        width = node.value / total
        y = -level if icicle else level
        ax.add_patch(Rectangle((x, y), width, 0.92, facecolor=colour.get(module_of(node.name), OTHER_COLOUR),
                               edgecolor="white", linewidth=0.6))
        text = _fit(function_of(node.name), width * axes_pt - 6, measure)
        if text:
            ax.text(x + 0.003, y + 0.46, text, va="center", ha="left", fontsize=7.5, clip_on=True)
    ax.set_xlim(0, 1)
    ax.set_ylim((-depth + 1 - 0.1, 1.0) if icicle else (-0.1, depth))
    ax.set_yticks([])
    ax.set_ylabel("callees " + ("below" if icicle else "above") + " their caller")
    ax.set_xlabel(f"share of {total:,.3g} {unit} under {top.name}")
    ax.xaxis.set_major_formatter(lambda v, _pos: f"{v * 100:.0f} %")
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    handles = [Patch(color=colour[m], label=m) for m in named]
    if len(named) < len(ranked):
        handles.append(Patch(color=OTHER_COLOUR, label="other modules"))
    fig.legend(handles=handles, title="colour: the module (file) of the function; width: its time and its callees'",
               title_fontsize=8, fontsize=8, loc="outside lower center", ncols=min(len(handles), 6), frameon=False)
    ax.set_title(title or ("Icicle" if icicle else "Flame graph") + " (width = time; read by width)")
    return fig
