"""Build correctly marked cells for a source notebook, so authors never hand-write nbgrader metadata.

>>> cell = check_cell("check_add", "from toy import add\\nassert add(2, 3) == 5", points=2)
>>> cell.metadata.nbgrader["grade"], cell.metadata.nbgrader["points"], cell.metadata.nbgrader["locked"]
(True, 2, True)
>>> written = manual_answer_cell("a_why", "Why?\\n\\n### BEGIN SOLUTION\\nBecause.\\n### END SOLUTION", points=2)
>>> written.cell_type, written.metadata.nbgrader["solution"], written.metadata.nbgrader["grade"]
('markdown', True, True)
"""

from __future__ import annotations

from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell

from .notebook_cells import GRADE_ID_PATTERN, SCHEMA_VERSION

__all__ = ["answer_cell", "manual_answer_cell", "check_cell", "readonly_cell"]


def _meta(grade_id: str, *, solution: bool, grade: bool, locked: bool, points: float | None = None) -> dict:
    meta: dict = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": SCHEMA_VERSION,
                  "solution": solution}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _id(grade_id: str) -> dict:
    # The grade_id doubles as the cell id when it is a valid one; a bad grade_id is reported by release.
    return {"id": grade_id} if GRADE_ID_PATTERN.match(grade_id) else {}


def answer_cell(grade_id: str, source: str, cell_type: str = "code", points: float = 1) -> NotebookNode:
    """An answer cell (solution=true); ``source`` must hold a BEGIN/END SOLUTION region.

    A code answer is scored by the check cells after it. A Markdown answer can only be graded by a
    person, so ``cell_type="markdown"`` gives ``manual_answer_cell(grade_id, source, points)``.
    """
    if cell_type == "markdown":
        return manual_answer_cell(grade_id, source, points)
    return new_code_cell(source, metadata=_meta(grade_id, solution=True, grade=False, locked=False), **_id(grade_id))


def manual_answer_cell(grade_id: str, source: str, points: float) -> NotebookNode:
    """A written answer graded by a person: a Markdown cell with solution=true, grade=true and ``points``.

    The text before the BEGIN SOLUTION region stays for the student (it can hold the question); the
    region becomes ``YOUR ANSWER HERE``. ``python -m edumatcher review`` collects the answers for grading.
    """
    return new_markdown_cell(source, metadata=_meta(grade_id, solution=True, grade=True, locked=False, points=points),
                             **_id(grade_id))


def check_cell(grade_id: str, source: str, points: float) -> NotebookNode:
    """A graded check cell worth ``points`` (grade=true, locked); may hold a HIDDEN TESTS region."""
    return new_code_cell(source, metadata=_meta(grade_id, solution=False, grade=True, locked=True, points=points),
                         **_id(grade_id))


def readonly_cell(grade_id: str, source: str, cell_type: str = "markdown") -> NotebookNode:
    """A locked read-only cell (narrative or setup code), restored from the source at grading time."""
    make = new_code_cell if cell_type == "code" else new_markdown_cell
    return make(source, metadata=_meta(grade_id, solution=False, grade=False, locked=True), **_id(grade_id))
