"""One table for figures from two sources: quoted from a seed, and measured here.

The course shows a source's figures beside its own, in one table, with a column
that says where each row comes from, so nobody mistakes a quoted number for a
measurement of the reader's machine. ``SideBySide`` renders as HTML in Jupyter
and as aligned text elsewhere.

>>> t = side_by_side(["what", "source", "value"], [["x", "quoted: Python engine notes, CPython 3.14.10", "1 ns"]])
>>> str(t).splitlines()[1].split()[0]
'x'
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ._compare import Comparison
from ._formatter import format_seconds
from ._measurement import Measurement
from ._metadata import interpreter

__all__ = ["SideBySide", "side_by_side", "QUOTED_000", "measured_here", "Quoted", "timing_table", "ratio_verdict"]

QUOTED_000 = "quoted: Python engine notes, CPython 3.14.10"
"""Source label for figures quoted from the Python engine notes' chapter (measured there on CPython 3.14.10, x86-64 Linux)."""


def measured_here() -> str:
    """Source label for figures measured by this process: ``measured here, CPython 3.11.7``."""
    info = interpreter()
    return f"measured here, {info.implementation} {info.version}"


@dataclass(frozen=True)
class SideBySide:
    """A header and rows of strings; the column named ``source`` is shaded by where the row comes from."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""

    def __str__(self) -> str:
        rows = [list(self.header)] + [list(r) for r in self.rows]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.header))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        esc = html.escape
        source_col = self.header.index("source") if "source" in self.header else -1
        head = "".join(f"<th>{esc(h)}</th>" for h in self.header)
        body = []
        for r in self.rows:
            quoted = source_col >= 0 and r[source_col].startswith("quoted")
            style = " style='background:#f3f3f3;font-style:italic'" if quoted else ""
            body.append(f"<tr{style}>" + "".join(
                f"<td style='text-align:{'left' if i <= max(source_col, 0) else 'right'}'>{esc(c)}</td>"
                for i, c in enumerate(r)) + "</tr>")
        note = f"<p style='font-size:smaller'>{esc(self.note)}</p>" if self.note else ""
        return f"<div><table><tr>{head}</tr>{''.join(body)}</table>{note}</div>"


def side_by_side(header: Sequence[str], rows: Sequence[Sequence[str]], note: str = "") -> SideBySide:
    """Build a ``SideBySide`` table; every row must have one cell per header column."""
    header = tuple(header)
    out = tuple(tuple(str(c) for c in r) for r in rows)
    for r in out:
        if len(r) != len(header):
            raise ValueError(f"row {r!r} has {len(r)} cells for {len(header)} columns")
    return SideBySide(header, out, note)


@dataclass(frozen=True)
class Quoted:
    """A figure quoted from a seed: what it is, its value as printed there, and where it comes from."""

    what: str
    value: str
    source: str = QUOTED_000


def timing_table(items: Sequence[Quoted | Measurement], note: str = "") -> SideBySide:
    """One table of quoted figures and measurements, in the given order, with a ``source`` column.

    A measurement's row shows its median, min-max range and spread, and names its
    clock in the source column (a comparison's samples are the thread's CPU time,
    the notes' figures wall time); a quoted row shows the value as the notes
    printed it and a dash for what the source did not give.

    >>> m = Measurement.from_samples([1e-6] * 5, label="x")
    >>> [row[1].split(",")[0].split(":")[0] for row in timing_table([Quoted("x", "2 µs"), m]).rows]
    ['quoted', 'measured here']
    """
    here = measured_here()
    rows = []
    for item in items:
        if isinstance(item, Quoted):
            rows.append((item.what, item.source, item.value, "—", "—"))
        else:
            per = item.ops_per_call
            rows.append((
                item.label, f"{here} ({item.clock})", format_seconds(item.median / per),
                f"{format_seconds(item.min / per)} – {format_seconds(item.max / per)}", f"{item.spread * 100:.1f} %",
            ))
    return side_by_side(["what", "source", "median (quoted: as printed)", "min – max", "spread"], rows, note)


def ratio_verdict(what: str, comparison: Comparison, quoted: float) -> str:
    """A ``verdict:`` line for a comparison that has a quoted counterpart; true whatever the numbers.

    ``comparison`` is "without the technique" (a) against "with it" (b), and
    ``quoted`` the same ratio as the notes printed it (above 1: the technique
    helps). The line gives this interpreter's outcome worded from its confidence
    interval (see ``edumatcher.kit._compare``) and says whether the quoted effect
    shows here in the same *direction*. It never judges the size against the
    quoted figure: a 3.14 figure and a 3.11 interval agreeing "within 1.5x" is a
    threshold that a run can land on either side of.

    >>> from ._compare import compare
    >>> a = Measurement.from_samples([4.0, 4.1, 3.9, 4.0, 4.0, 4.05], label="a")
    >>> b = Measurement.from_samples([1.0, 1.1, 0.9, 1.0, 1.0, 1.05], label="b")
    >>> print(ratio_verdict("from_dict", compare(a, b), 5.0))  # doctest: +ELLIPSIS
    verdict: a is ...x slower than b
        from_dict: quoted 5.00x for CPython 3.14: the same direction here.
    """
    c = comparison
    quoted_same = abs(math.log(quoted)) <= math.log(1 + c.negligible)
    if c.outcome == "undetermined":
        tail = "too noisy here to say (rerun on a quieter machine, or raise the budget)."
    elif c.outcome == "same":
        tail = ("the same here: no difference either way." if quoted_same
                else "the quoted effect does not show on this interpreter.")
    elif quoted_same:
        tail = "a difference here that the quoted figure did not have."
    elif (c.outcome == "slower") == (quoted > 1):
        tail = "the same direction here."
    else:
        tail = "the opposite direction here."
    # The verdict line is the comparison's own (at most MAX_LINE with its prefix); the quoted figure and
    # how it relates are a detail line that check-verdicts does not compare.
    return f"verdict: {c.verdict}\n    {what}: quoted {quoted:.2f}x for CPython 3.14: {tail}"
