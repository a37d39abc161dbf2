"""Source notebooks (``solutions/NN_*.ipynb``): load them, validate their marking, list their checks.

The source is the trusted copy of an exercise: it holds the solutions, the hidden tests and the
points. ``load_exercise`` refuses a source whose marking is ambiguous, because every later step
(release, restore, score) relies on it: ids are unique, every check has points, every answer cell
has a region to clear, and markers pair up and sit only where they can do their job.

Written answers are Markdown answer cells graded by a person (nbgrader's "manual" cells:
``solution: true, grade: true, points``); they are listed in ``Exercise.manual``, never among the
autograded ``Exercise.checks``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from edumatcher import CliError

from .notebook_cells import (
    BEGIN_HIDDEN_TESTS,
    BEGIN_SOLUTION,
    END_HIDDEN_TESTS,
    END_SOLUTION,
    GRADE_ID_PATTERN,
    SCHEMA_VERSION,
    RegionError,
    cell_points,
    find_regions,
    is_manual,
    nbgrader_meta,
    source_text,
)

__all__ = ["SourceError", "CheckSpec", "ManualSpec", "Exercise", "validate_source", "load_exercise", "find_exercises",
           "grading_digest"]


class SourceError(CliError):
    """A source notebook is missing, unreadable or wrongly marked (the instructor's mistake to fix)."""


@dataclass(frozen=True)
class CheckSpec:
    """One graded check of an exercise: its grade_id, its worth and its position in the source."""

    grade_id: str
    points: float
    cell_index: int


@dataclass(frozen=True)
class ManualSpec:
    """One answer graded by a person (a Markdown manual-grade cell): its grade_id, worth and source position."""

    grade_id: str
    points: float
    cell_index: int


@dataclass(frozen=True)
class Exercise:
    """A validated source notebook. ``name`` is the file stem that submissions are matched by."""

    name: str
    path: Path
    notebook: NotebookNode
    checks: tuple[CheckSpec, ...]
    answer_ids: tuple[str, ...]
    manual: tuple[ManualSpec, ...] = ()
    digest: str = ""  # the version of what grading uses (``grading_digest``): rows keep it, to spot stale ones

    @property
    def max_points(self) -> float:
        """Sum of the points of every autograded check (manual answers not included)."""
        return sum(check.points for check in self.checks)

    @property
    def manual_points(self) -> float:
        """Sum of the points of every answer graded by a person."""
        return sum(spec.points for spec in self.manual)


def _cell_problems(cell: NotebookNode) -> list[str]:
    """Everything wrong with one source cell, as readable phrases (empty when the cell is fine)."""
    problems: list[str] = []
    meta = nbgrader_meta(cell)
    source = source_text(cell)
    kind = cell.get("cell_type")
    raw_meta = cell.get("metadata", {}).get("nbgrader") if isinstance(cell.get("metadata"), dict) else None
    if raw_meta is not None and not isinstance(raw_meta, dict):
        return ["metadata.nbgrader must be an object"]

    solution, grade = meta.get("solution", False), meta.get("grade", False)
    if meta:
        for flag in ("solution", "grade", "locked"):
            if flag in meta and not isinstance(meta[flag], bool):
                problems.append(f"nbgrader '{flag}' must be true or false, not {meta[flag]!r}")
        if meta.get("schema_version") != SCHEMA_VERSION:
            problems.append(f"nbgrader schema_version must be {SCHEMA_VERSION}, not {meta.get('schema_version')!r}")
        gid = meta.get("grade_id")
        if not isinstance(gid, str) or not GRADE_ID_PATTERN.match(gid):
            problems.append(f"grade_id {gid!r} must be 1-64 letters, digits, '_' or '-'")
    if grade is True:
        points = meta.get("points")
        what = "manual-grade answer" if solution is True else "check"
        if isinstance(points, bool) or not isinstance(points, (int, float)) or not points > 0:
            problems.append(f"{what} cell needs points > 0 (has {points!r})")
    if solution is True and grade is True:
        # nbgrader's rule: only a written (Markdown) answer can be graded by hand; code is autograded by checks.
        if kind != "markdown":
            problems.append("a code cell cannot be both an answer (solution) and graded (grade); split it into "
                            "an answer cell and a check cell (only Markdown answers are graded by hand)")
        if meta.get("locked") is True:
            problems.append("manual-grade answer cells must have locked: false (the student writes in them)")
    elif grade is True:
        if kind != "code":
            problems.append("check cells must be code cells (a Markdown cell graded by hand must also be an "
                            "answer: solution: true, grade: true, points)")
        if meta.get("locked") is not True:
            problems.append("check cells must have locked: true")
    elif solution is True and kind == "markdown":
        # nbgrader refuses these ("Markdown solution cell is not marked as a grade cell").
        problems.append("a Markdown answer cell is graded by hand: mark it grade: true with points > 0 "
                        "(authoring.manual_answer_cell)")

    def regions(begin: str, end: str) -> list[tuple[int, int]]:
        try:
            return find_regions(source, begin, end)
        except RegionError as exc:
            problems.append(f"unbalanced markers: {exc}")
            return []

    solution_regions = regions(BEGIN_SOLUTION, END_SOLUTION)
    regions(BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS)  # only for its balance problems
    has_marker = any(marker in source for marker in (BEGIN_SOLUTION, END_SOLUTION))
    has_hidden_marker = any(marker in source for marker in (BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS))
    if solution is True:
        if not solution_regions and not any(p.startswith("unbalanced") for p in problems):
            problems.append(f"answer cell has no '{BEGIN_SOLUTION}' ... '{END_SOLUTION}' region")
        if kind not in ("code", "markdown"):
            problems.append("answer cells must be code or markdown cells")
    elif has_marker:
        # Clearing only happens in answer cells, so a region anywhere else would ship the solution.
        problems.append("solution markers outside an answer cell (set solution: true, or remove them)")
    if has_hidden_marker and grade is not True:
        # Hidden tests are restored only inside check cells; elsewhere they would be lost or leaked.
        problems.append("hidden-test markers outside a check cell")
    return problems


def validate_source(
    nb: NotebookNode, label: str, *, manual: list[ManualSpec] | None = None
) -> tuple[tuple[CheckSpec, ...], tuple[str, ...]]:
    """Check a source notebook's marking; return its checks and answer ids, or raise ``SourceError``.

    Manual-grade answers are among the answer ids; pass a list as ``manual`` to receive their specs too.

    All problems are gathered into one message (``label: cell N (id): problem; ...``) so the author
    can fix them in one pass. O(total source length).
    """
    problems: list[str] = []
    seen: dict[str, int] = {}
    checks: list[CheckSpec] = []
    answers: list[str] = []
    for index, cell in enumerate(nb.cells):
        meta = nbgrader_meta(cell)
        gid = meta.get("grade_id") if meta else None
        where = f"cell {index}" + (f" ({gid})" if isinstance(gid, str) and gid else "")
        problems.extend(f"{where}: {problem}" for problem in _cell_problems(cell))
        if meta and isinstance(gid, str) and gid:
            if gid in seen:
                problems.append(f"{where}: duplicate grade_id {gid!r} (also cell {seen[gid]})")
            else:
                seen[gid] = index
        if is_manual(cell) and isinstance(gid, str):
            answers.append(gid)
            if manual is not None:
                manual.append(ManualSpec(gid, cell_points(cell), index))
        elif meta.get("grade") is True and isinstance(gid, str):
            checks.append(CheckSpec(gid, cell_points(cell), index))
        elif meta.get("solution") is True and isinstance(gid, str):
            answers.append(gid)
    if not checks and not problems:
        problems.append("no check cells (nbgrader grade: true) - nothing could be graded")
    if problems:
        shown = "; ".join(problems[:8]) + (f"; and {len(problems) - 8} more" if len(problems) > 8 else "")
        raise SourceError(f"{label}: {shown}")
    return tuple(checks), tuple(answers)


def load_exercise(path: str | Path) -> Exercise:
    """Read and validate one source notebook. Raises ``SourceError`` with a one-line reason."""
    path = Path(path)
    try:
        nb = nbformat.read(path, as_version=4)
    except FileNotFoundError:
        raise SourceError(f"{path}: no such source notebook") from None
    except Exception as exc:  # nbformat raises several unrelated types for unreadable files
        raise SourceError(f"{path}: not a readable notebook ({type(exc).__name__}: {exc})") from None
    manual: list[ManualSpec] = []
    checks, answers = validate_source(nb, str(path), manual=manual)
    return Exercise(name=path.stem, path=path, notebook=nb, checks=checks, answer_ids=answers, manual=tuple(manual),
                    digest=grading_digest(nb))


def grading_digest(nb: NotebookNode) -> str:
    """sha256 (first 16 hex digits) of what grading a submission against ``nb`` depends on: every code cell
    and every nbgrader-marked cell (type, text, nbgrader metadata), in order. Narrative Markdown is left
    out, so fixing a typo in the prose does not send the whole class to be graded again. O(size of nb).
    """
    digest = hashlib.sha256()
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.get("cell_type") != "code" and not meta:
            continue
        digest.update(json.dumps([cell.get("cell_type"), source_text(cell), meta], sort_keys=True,
                                 default=str).encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def find_exercises(source_dir: str | Path) -> dict[str, Exercise]:
    """Load every ``*.ipynb`` directly inside ``source_dir``, keyed by file stem, in name order.

    Raises ``SourceError`` when the folder is missing, holds no notebook, or any notebook is invalid.
    """
    source_dir = Path(source_dir)
    if not source_dir.is_dir():
        raise SourceError(f"source folder {source_dir} does not exist (pass --source DIR)")
    paths = sorted(p for p in source_dir.glob("*.ipynb") if p.is_file())
    if not paths:
        raise SourceError(f"no source notebooks (*.ipynb) in {source_dir}")
    return {path.stem: load_exercise(path) for path in paths}
