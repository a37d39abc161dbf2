"""Flame graphs and icicles drawn with matplotlib, from py-spy's folded stacks or from ``pstats``.

A flame graph shows a profile as nested boxes: each box is a function *in one
calling context*, its width is the time (or the samples) spent in it and in what
it called, and the boxes on top of it are its callees. Read it by width, never by
colour or order: the widest boxes at a level are where the time goes; a box much
wider than all its children is a function that spends its time in its own code.
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

import colorsys
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

__all__ = ["FlameNode", "tree_from_folded", "tree_from_pstats", "frame_label", "flame_graph"]

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


def _colour(name: str) -> tuple[float, float, float]:
    # Warm colours keyed by the file (or the whole name for built-ins), stable from run to
    # run: colour helps tell boxes apart; it carries no measurement.
    where = name[name.rfind("(") + 1:] if "(" in name else name
    where = where.split(":")[0]
    h = (zlib.crc32(where.encode()) & 0xFFFFFF) / 0xFFFFFF
    return colorsys.hls_to_rgb(0.02 + 0.12 * h, 0.62, 0.75)


def flame_graph(root: FlameNode, *, title: str = "", unit: str = "samples", icicle: bool = True,
                min_share: float = 0.005, max_depth: int = 14) -> Figure:
    """Draw ``root``'s tree: one row per depth, each box as wide as its share of the root.

    ``icicle=True`` puts the root at the top (snakeviz); ``False`` draws a flame
    graph, root at the bottom (py-spy's SVGs). Boxes narrower than ``min_share`` of
    the root are not drawn; a box is labelled when its label fits. The synthetic
    ``all`` root is skipped when it has a single child.
    """
    if root.value <= 0:
        raise ValueError("flame_graph needs a tree with a positive value")
    top = root.children[0] if root.name == ROOT and len(root.children) == 1 else root
    depth = min(top.depth(), max_depth)
    fig = Figure(figsize=(10, 0.42 * depth + 1.2), layout="constrained")
    ax = fig.add_subplot()
    total = top.value

    def draw(node: FlameNode, x: float, level: int) -> None:
        width = node.value / total
        if width < min_share or level >= max_depth:
            return
        y = -level if icicle else level
        ax.add_patch(Rectangle((x, y), width, 0.92, facecolor=_colour(node.name), edgecolor="white", linewidth=0.6))
        chars = int(width * 150)  # about 150 characters fit across the axes at this size
        if chars >= 4:
            text = node.name if len(node.name) <= chars else node.name[: chars - 1] + "…"
            ax.text(x + 0.003, y + 0.46, text, va="center", ha="left", fontsize=7.5, clip_on=True)
        child_x = x
        for c in node.children:
            draw(c, child_x, level + 1)
            child_x += c.value / total

    draw(top, 0.0, 0)
    ax.set_xlim(0, 1)
    ax.set_ylim((-depth + 1 - 0.1, 1.0) if icicle else (-0.1, depth))
    ax.set_yticks([])
    ax.set_xlabel(f"share of {total:,.3g} {unit} under {top.name}")
    ax.xaxis.set_major_formatter(lambda v, _pos: f"{v * 100:.0f} %")
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_title(title or ("Icicle" if icicle else "Flame graph") + " (width = time; read by width, not colour)")
    return fig
