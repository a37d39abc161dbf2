"""Restore the official checks into a submission before anything of it runs.

The notebook that gets executed is rebuilt around the trusted source:

* every check and read-only cell comes from the source (hidden tests included), matched by
  grade_id; a deleted one is put back, an edited one is replaced;
* answer cells are the student's, matched by grade_id, with their nbgrader metadata reset to the
  source's (student metadata is never trusted); this includes written answers graded by a person
  (Markdown manual-grade cells), whose text is kept as the student wrote it for ``review``;
* cells the source does not know (scratch work, unknown ids, cells claiming ``grade: true``) stay
  as ordinary student code that earns no points; a second copy of a check is dropped;
* the cells the source knows are put back in source order; each student-only cell travels with
  the known cell it followed.

Everything unusual becomes a note for the feedback; nothing here is fatal.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from nbformat import NotebookNode
from nbformat.v4 import new_notebook

from .exercise import Exercise
from .notebook_cells import cell_role, ensure_cell_ids, grade_id, is_grade, nbgrader_meta, source_text
from .release import release_notebook

__all__ = ["GradedCell", "RestoredNotebook", "restore_checks"]


@dataclass
class GradedCell:
    """A cell of the notebook to execute, with its trusted role and, if the source knows it, its grade_id."""

    cell: NotebookNode
    role: str  # "check", "readonly", "answer" (all from the source) or "student"
    grade_id: str | None = None


@dataclass
class RestoredNotebook:
    """The notebook to execute (``cells[i].cell is notebook.cells[i]``) and what was noticed on the way."""

    notebook: NotebookNode
    cells: list[GradedCell]
    notes: list[str] = field(default_factory=list)

    def check_positions(self) -> dict[str, int]:
        """Map each check's grade_id to its cell index in ``notebook``."""
        return {c.grade_id: i for i, c in enumerate(self.cells) if c.role == "check" and c.grade_id}


def restore_checks(exercise: Exercise, submission: NotebookNode) -> RestoredNotebook:
    """Rebuild ``submission`` around the source of ``exercise`` (see the module docstring). O(cells).

    Neither argument is modified.
    """
    source_cells = {grade_id(c): c for c in exercise.notebook.cells if grade_id(c)}  # in source order
    released = release_notebook(exercise.notebook)
    released_by_id = {grade_id(c): c for c in released.cells if grade_id(c)}
    notes: list[str] = []

    # Pass 1: sort student cells into "anchors" (cells the source knows) and the cells that follow each.
    prelude: list[GradedCell] = []
    anchored: dict[str, tuple[GradedCell, list[GradedCell]]] = {}
    student_order: list[str] = []
    trailing = prelude
    for position, cell in enumerate(submission.cells):
        cell = copy.deepcopy(cell)
        gid = grade_id(cell)
        source_cell = source_cells.get(gid) if gid else None
        if source_cell is None:
            if is_grade(cell):
                notes.append(f"cell {position} claims to be a graded check ({gid or 'no id'}) that the exercise "
                             "does not have; it ran as ordinary code and earns no points")
            _strip_nbgrader(cell)
            trailing.append(GradedCell(cell, "student"))
            continue
        role = cell_role(source_cell)
        if gid in anchored:
            if role in ("check", "readonly"):
                notes.append(f"a second copy of {_describe(role, gid)} (cell {position}) was ignored")
                continue
            notes.append(f"a second copy of {_describe(role, gid)} (cell {position}) ran as ordinary code")
            _strip_nbgrader(cell)
            trailing.append(GradedCell(cell, "student"))
            continue
        if role in ("check", "readonly"):
            if cell.get("cell_type") != source_cell.cell_type:
                notes.append(f"{_describe(role, gid)} had been changed to a {cell.get('cell_type')} cell; "
                             "the original was restored")
            elif role == "check" and source_text(cell).strip() != source_text(released_by_id[gid]).strip():
                notes.append(f"{_describe(role, gid)} had been edited; the original was restored")
            graded = GradedCell(_trusted_copy(source_cell), role, gid)
        else:
            if cell.get("cell_type") != source_cell.cell_type:
                notes.append(f"answer cell {gid} was changed from {source_cell.cell_type} to "
                             f"{cell.get('cell_type')}; graded as submitted")
            cell.metadata["nbgrader"] = copy.deepcopy(dict(nbgrader_meta(source_cell)))
            graded = GradedCell(cell, "answer" if role == "answer" else "student", gid)
        anchored[gid] = (graded, [])
        student_order.append(gid)
        trailing = anchored[gid][1]

    # Pass 2: lay the known cells out in source order, putting back what is missing.
    source_order = list(source_cells)
    if [g for g in source_order if g in anchored] != student_order:
        notes.append("cells had been moved; the exercise's cells were graded in their original order")
    cells: list[GradedCell] = list(prelude)
    for gid in source_order:
        if gid in anchored:
            graded, followers = anchored[gid]
            cells.append(graded)
            cells.extend(followers)
            continue
        source_cell = source_cells[gid]
        role = cell_role(source_cell)
        if role in ("check", "readonly"):
            notes.append(f"{_describe(role, gid)} was missing and has been put back")
            cells.append(GradedCell(_trusted_copy(source_cell), role, gid))
        elif role == "answer":
            notes.append(f"answer cell {gid} is missing from the submission")

    # Cells are attached after creation: new_notebook(cells=...) would validate them before ids exist.
    notebook = new_notebook(metadata=copy.deepcopy(exercise.notebook.metadata))
    notebook.cells = [c.cell for c in cells]
    ensure_cell_ids(notebook)
    return RestoredNotebook(notebook=notebook, cells=cells, notes=notes)


def _trusted_copy(source_cell: NotebookNode) -> NotebookNode:
    cell = copy.deepcopy(source_cell)
    if cell.cell_type == "code":
        cell.outputs = []
        cell.execution_count = None
    cell.pop("id", None)
    return cell


def _strip_nbgrader(cell: NotebookNode) -> None:
    metadata = cell.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("nbgrader", None)
    cell.pop("id", None)


def _describe(role: str, gid: str) -> str:
    return {"check": f"check {gid}", "readonly": f"read-only cell {gid}"}.get(role, f"cell {gid}")
