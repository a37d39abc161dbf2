"""The vocabulary every grading step shares: nbgrader cell metadata, marked regions, checksums, notebook text.

A cell's role comes from its ``metadata.nbgrader`` block (nbgrader schema 3):

========  =================  ===========  ==========================================
role      ``solution``       ``grade``    meaning
========  =================  ===========  ==========================================
answer    true               false        the student writes code here (cleared on release)
answer    true               true         a written (Markdown) answer graded by a person,
                                          worth ``points``: nbgrader's "manual" cell
check     false              true         autograded test, worth ``points`` (locked)
readonly  false              false        ``locked`` true: narrative or setup, restored
plain     (no nbgrader block)             anything else, left to the student
========  =================  ===========  ==========================================

>>> from nbformat.v4 import new_code_cell
>>> cell = new_code_cell("assert 1 + 1 == 2", metadata={"nbgrader": {
...     "grade": True, "solution": False, "locked": True, "grade_id": "c1", "points": 2, "schema_version": 3}})
>>> cell_role(cell), grade_id(cell), cell_points(cell)
('check', 'c1', 2.0)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

import nbformat
from nbformat import NotebookNode

__all__ = [
    "SCHEMA_VERSION", "BEGIN_SOLUTION", "END_SOLUTION", "BEGIN_HIDDEN_TESTS", "END_HIDDEN_TESTS",
    "CODE_STUB", "TEXT_STUB", "GRADE_ID_PATTERN", "RegionError",
    "nbgrader_meta", "is_grade", "is_check", "is_manual", "is_answer", "is_locked", "grade_id", "cell_points", "cell_role",
    "find_regions", "replace_regions", "compute_checksum", "source_text", "notebook_text",
    "ensure_cell_ids",
]

SCHEMA_VERSION = 3
BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN_TESTS = "### BEGIN HIDDEN TESTS"
END_HIDDEN_TESTS = "### END HIDDEN TESTS"
# The student's copy of a code answer region, in nbgrader's shape (so students who know nbgrader feel at home).
CODE_STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")
TEXT_STUB = "YOUR ANSWER HERE"
# A grade_id doubles as the cell id of released notebooks and as a CSV column, so keep it to safe characters.
GRADE_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_CELL_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class RegionError(ValueError):
    """Begin/end markers in a cell do not pair up (unbalanced, nested or reversed)."""


def nbgrader_meta(cell: Any) -> dict[str, Any]:
    """Return the cell's ``metadata.nbgrader`` dict, or ``{}`` when missing or malformed. O(1)."""
    metadata = cell.get("metadata") if isinstance(cell, dict) else None
    meta = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    return meta if isinstance(meta, dict) else {}


def is_grade(cell: Any) -> bool:
    """True for any cell worth points (nbgrader's ``grade: true``): an autograded check or a manual answer."""
    return nbgrader_meta(cell).get("grade") is True


def is_check(cell: Any) -> bool:
    """True for an autograded check (``grade: true`` and not an answer): the grader runs it for points."""
    meta = nbgrader_meta(cell)
    return meta.get("grade") is True and meta.get("solution") is not True


def is_manual(cell: Any) -> bool:
    """True for an answer graded by a person (``grade: true`` and ``solution: true``, nbgrader's manual cell)."""
    meta = nbgrader_meta(cell)
    return meta.get("grade") is True and meta.get("solution") is True


def is_answer(cell: Any) -> bool:
    """True for an answer cell (``solution: true``)."""
    return nbgrader_meta(cell).get("solution") is True


def is_locked(cell: Any) -> bool:
    """True for a cell students may not change, by nbgrader's rule.

    Answer cells are never locked, check cells always are, other cells follow their ``locked`` flag.
    """
    meta = nbgrader_meta(cell)
    if not meta or meta.get("solution") is True:
        return False
    if meta.get("grade") is True:
        return True
    return meta.get("locked") is True


def grade_id(cell: Any) -> str | None:
    """The cell's ``grade_id`` when it is a non-empty string, else None."""
    value = nbgrader_meta(cell).get("grade_id")
    return value if isinstance(value, str) and value else None


def cell_points(cell: Any) -> float:
    """The points a check or manual answer cell is worth (0.0 when absent or not a number)."""
    value = nbgrader_meta(cell).get("points")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    return float(value)


def cell_role(cell: Any) -> str:
    """Classify a cell as ``"answer"``, ``"check"``, ``"readonly"`` or ``"plain"`` (see the module table)."""
    meta = nbgrader_meta(cell)
    if not meta:
        return "plain"
    if meta.get("solution") is True:
        return "answer"
    if meta.get("grade") is True:
        return "check"
    if meta.get("locked") is True:
        return "readonly"
    return "plain"


def source_text(cell: Any) -> str:
    """The cell's source as one string, whether stored as a string or a list of lines."""
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def _marker_at(line: str, marker: str) -> bool:
    # A marker must open its line (after indentation); a marker quoted mid-line is ordinary text.
    return line.strip().startswith(marker)


def find_regions(source: str, begin: str, end: str) -> list[tuple[int, int]]:
    """Return ``(begin_line, end_line)`` index pairs of the marked regions in ``source``. O(lines).

    Raises ``RegionError`` for an END without BEGIN, a BEGIN inside a region, or a BEGIN never closed.

    >>> find_regions("a\\n### BEGIN SOLUTION\\nb\\n### END SOLUTION\\n", BEGIN_SOLUTION, END_SOLUTION)
    [(1, 3)]
    """
    regions: list[tuple[int, int]] = []
    opened: int | None = None
    for number, line in enumerate(source.split("\n")):
        if _marker_at(line, begin):
            if opened is not None:
                raise RegionError(f"'{begin}' on line {number + 1} inside a region opened on line {opened + 1}")
            opened = number
        elif _marker_at(line, end):
            if opened is None:
                raise RegionError(f"'{end}' on line {number + 1} without a matching '{begin}'")
            regions.append((opened, number))
            opened = None
    if opened is not None:
        raise RegionError(f"'{begin}' on line {opened + 1} is never closed by '{end}'")
    return regions


def replace_regions(source: str, begin: str, end: str, replacement: Callable[[str], list[str]]) -> str:
    """Replace every marked region (markers included) by ``replacement(indent_of_begin_line)``. O(lines).

    >>> replace_regions("x = 1\\n    ### BEGIN SOLUTION\\n    y\\n    ### END SOLUTION", BEGIN_SOLUTION,
    ...                 END_SOLUTION, lambda indent: [indent + "pass"])
    'x = 1\\n    pass'
    """
    lines = source.split("\n")
    regions = find_regions(source, begin, end)
    kept: list[str] = []
    position = 0
    for first, last in regions:
        kept.extend(lines[position:first])
        begin_line = lines[first]
        kept.extend(replacement(begin_line[: len(begin_line) - len(begin_line.lstrip())]))
        position = last + 1
    kept.extend(lines[position:])
    return "\n".join(kept)


def compute_checksum(cell: Any) -> str:
    """Return nbgrader's md5 checksum of a cell, so nbgrader and we agree on the value. O(len(source)).

    The digest covers, in this order: the source exactly as stored, the cell type, ``str()`` of the
    grade, solution and locked flags (``"True"``/``"False"``, locked by nbgrader's rule), the grade_id and,
    for cells worth points (checks and manual answers), ``str(float(points))``. Any edit to the text,
    role, id or worth changes it.
    """
    # usedforsecurity=False: this is a change detector, not a secret, so FIPS builds must allow it.
    digest = hashlib.md5(usedforsecurity=False)
    digest.update(source_text(cell).encode("utf-8"))
    digest.update(str(cell.get("cell_type", "")).encode("utf-8"))
    digest.update(str(is_grade(cell)).encode("utf-8"))
    digest.update(str(is_answer(cell)).encode("utf-8"))
    digest.update(str(is_locked(cell)).encode("utf-8"))
    digest.update((grade_id(cell) or "").encode("utf-8"))
    if is_grade(cell):
        digest.update(str(cell_points(cell)).encode("utf-8"))
    return digest.hexdigest()


def ensure_cell_ids(nb: NotebookNode) -> NotebookNode:
    """Give every cell a valid, unique, deterministic id (nbformat 4.5) and return ``nb``. O(cells).

    Existing valid ids are kept; a cell with an nbgrader grade_id gets that id when it has none;
    anything else becomes ``cell-<index>``. nbformat would otherwise invent random ids on write,
    which would make two releases of the same source differ.
    """
    taken: set[str] = set()
    for index, cell in enumerate(nb.cells):
        wanted = cell.get("id")
        if not (isinstance(wanted, str) and _CELL_ID_PATTERN.match(wanted)) or wanted in taken:
            wanted = grade_id(cell) or f"cell-{index}"
            if not _CELL_ID_PATTERN.match(wanted) or wanted in taken:
                wanted = f"cell-{index}"
            suffix = 1
            while wanted in taken:
                wanted = f"cell-{index}-{suffix}"
                suffix += 1
        cell["id"] = wanted
        taken.add(wanted)
    nb.nbformat = 4
    nb.nbformat_minor = max(int(nb.get("nbformat_minor", 5) or 0), 5)
    return nb


def notebook_text(nb: NotebookNode) -> str:
    """Serialise a notebook the way every tool here writes it: nbformat v4 JSON, sorted keys, final newline.

    Cell ids are made deterministic first, so the same notebook always gives the same text.
    """
    ensure_cell_ids(nb)
    text = nbformat.writes(nb, version=nbformat.NO_CONVERT)
    return text if text.endswith("\n") else text + "\n"
