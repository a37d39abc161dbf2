"""Submitted files: find them, name their student and exercise, and read them without trusting them.

Student identity comes from folders, as in nbgrader's ``submitted/<student>/...`` layout: for a
notebook found inside a folder argument, it is the first folder below that argument
(``grade submitted/`` on ``submitted/ann/ex1.ipynb`` or ``submitted/ann/ps1/ex1.ipynb`` gives
``ann``); for a notebook directly inside the folder argument, or a file named on the command line,
it is the name of the folder holding it (``grade submitted/ann`` gives ``ann``). The exercise is
the file stem, matched to ``<source>/<stem>.ipynb``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from edumatcher.cli import CliError

__all__ = ["Submission", "SubmissionUnreadable", "discover_submissions", "read_submission", "MAX_SUBMISSION_BYTES", "safe_name"]

# A real exercise notebook is tens of kilobytes; beyond this it is not worth parsing (or a trap).
MAX_SUBMISSION_BYTES = 20_000_000


@dataclass(frozen=True)
class Submission:
    """One submitted file, with the student and exercise it is graded as."""

    path: Path
    student: str
    exercise: str


class SubmissionUnreadable(Exception):
    """The submitted file is not a notebook we can grade; ``str(exc)`` is the reason for the gradebook."""


def discover_submissions(paths: list[str | Path]) -> tuple[list[Submission], list[Path]]:
    """Expand files and folders into submissions; return ``(submissions, skipped non-notebook files)``.

    Folders are searched recursively for ``*.ipynb`` (checkpoint folders ignored); files named on the
    command line are always graded, whatever their suffix, so a wrongly named file still gets a row.
    The same file reached twice is graded once. Raises ``CliError`` for a path that does not exist.
    """
    found: dict[Path, Submission] = {}
    skipped: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for candidate in sorted(path.rglob("*")):
                if ".ipynb_checkpoints" in candidate.parts or not candidate.is_file():
                    continue
                if candidate.suffix == ".ipynb":
                    relative = candidate.relative_to(path)
                    _add(found, candidate, relative.parts[0] if len(relative.parts) > 1 else None)
                else:
                    skipped.append(candidate)
        elif path.is_file():
            _add(found, path)
        else:
            raise CliError(f"submission path {path} does not exist")
    submissions = sorted(found.values(), key=lambda s: (s.exercise, s.student, str(s.path)))
    return submissions, skipped


def _add(found: dict[Path, Submission], path: Path, student: str | None = None) -> None:
    key = path.resolve()
    if key not in found:
        found[key] = Submission(path=path, student=student or key.parent.name or "unknown", exercise=path.stem)


def safe_name(name: str) -> str:
    """A file-system-safe form of a student or exercise name (for feedback and autograded paths).

    >>> safe_name("ann lee/../x")
    'ann_lee_.._x'
    """
    cleaned = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name).strip(".")
    return cleaned or "unknown"


def read_submission(path: str | Path, max_bytes: int = MAX_SUBMISSION_BYTES) -> NotebookNode:
    """Read an untrusted notebook into a clean nbformat v4 notebook, or raise ``SubmissionUnreadable``.

    Only what grading needs is kept from each cell (type, source, metadata); cells that are not
    objects or have an unknown type are dropped. Strict schema validation is skipped on purpose: a
    notebook with a stray field can still be graded.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise SubmissionUnreadable(f"file is {size:,} bytes, over the {max_bytes:,}-byte limit")
        data = path.read_bytes()
    except OSError as exc:
        raise SubmissionUnreadable(f"cannot read file: {exc.strerror or exc}") from None
    if not data.strip():
        raise SubmissionUnreadable("file is empty (0 bytes of JSON)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SubmissionUnreadable("not a notebook: file is not UTF-8 text") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SubmissionUnreadable(f"not a notebook: invalid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise SubmissionUnreadable("not a notebook: JSON nested too deeply") from None
    if not isinstance(document, dict) or not isinstance(document.get("nbformat"), int):
        raise SubmissionUnreadable("not a notebook: JSON has no 'nbformat' version")
    if document["nbformat"] < 4:
        try:  # nbformat 3 stored cells in worksheets; let nbformat upgrade it
            document = json.loads(nbformat.writes(nbformat.reads(text, as_version=4)))
        except Exception as exc:
            raise SubmissionUnreadable(f"not a notebook: cannot upgrade format 3 ({exc})") from None
    cells = document.get("cells")
    if not isinstance(cells, list):
        raise SubmissionUnreadable("not a notebook: no list of cells")
    nb = new_notebook()
    for raw in cells:
        cell = _clean_cell(raw)
        if cell is not None:
            nb.cells.append(cell)
    return nb


_CELL_MAKERS = {"code": new_code_cell, "markdown": new_markdown_cell, "raw": new_raw_cell}


def _clean_cell(raw: Any) -> NotebookNode | None:
    if not isinstance(raw, dict) or raw.get("cell_type") not in _CELL_MAKERS:
        return None
    source = raw.get("source", "")
    if isinstance(source, list):
        source = "".join(part for part in source if isinstance(part, str))
    elif not isinstance(source, str):
        source = ""
    metadata = raw.get("metadata")
    cell = _CELL_MAKERS[raw["cell_type"]](source=source, metadata=metadata if isinstance(metadata, dict) else {})
    cell.pop("id", None)  # ids are assigned later, deterministically
    return cell
