"""``release``: turn source notebooks into student copies, as a list of single-purpose steps.

Each step takes a notebook, changes it in place and returns it; ``release_notebook`` runs them on
a copy in the order of ``RELEASE_STEPS``. ``release_tree`` writes ``exercises/`` from
``solutions/``; ``check_release`` reports what differs without writing anything (for CI).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nbformat import NotebookNode

from .exercise import find_exercises
from .notebook_cells import (
    BEGIN_HIDDEN_TESTS,
    BEGIN_SOLUTION,
    CODE_STUB,
    END_HIDDEN_TESTS,
    END_SOLUTION,
    TEXT_STUB,
    compute_checksum,
    ensure_cell_ids,
    is_answer,
    is_check,
    is_locked,
    nbgrader_meta,
    notebook_text,
    replace_regions,
    source_text,
)

__all__ = [
    "clear_solutions", "clear_hidden_tests", "clear_outputs", "lock_cells", "compute_checksums",
    "RELEASE_STEPS", "release_notebook", "released_texts", "ReleaseReport", "release_tree", "check_release",
]

Step = Callable[[NotebookNode], NotebookNode]


def clear_solutions(nb: NotebookNode) -> NotebookNode:
    """Replace every answer region by the stub: ``# YOUR CODE HERE`` / ``raise NotImplementedError()``
    in code, ``YOUR ANSWER HERE`` in Markdown, at the indentation of the BEGIN line."""
    for cell in nb.cells:
        if not is_answer(cell):
            continue
        if cell.cell_type == "code":
            def stub(indent: str) -> list[str]:
                return [indent + line for line in CODE_STUB]
        else:
            def stub(indent: str) -> list[str]:
                return [indent + TEXT_STUB]
        cell.source = replace_regions(source_text(cell), BEGIN_SOLUTION, END_SOLUTION, stub)
    return nb


def clear_hidden_tests(nb: NotebookNode) -> NotebookNode:
    """Delete hidden-test regions (markers included) from check cells; trailing blank lines go too."""
    for cell in nb.cells:
        if is_check(cell):
            cleared = replace_regions(source_text(cell), BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS, lambda indent: [])
            cell.source = cleared.rstrip()
    return nb


def clear_outputs(nb: NotebookNode) -> NotebookNode:
    """Drop outputs, execution counts and per-run cell metadata (timings, collapsed/scrolled state)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for key in ("execution", "collapsed", "scrolled", "ExecuteTime"):
            cell.metadata.pop(key, None)
    nb.metadata.pop("widgets", None)
    return nb


def lock_cells(nb: NotebookNode) -> NotebookNode:
    """Make check and read-only cells non-editable and non-deletable, answer cells (code, and written
    answers graded by hand) non-deletable but editable; leave the rest alone.

    This is nbgrader's ``LockCells`` with its defaults, so ``nbgrader generate_assignment`` writes the
    same metadata. Jupyter honours ``editable``/``deletable``; a determined student can still change
    them, which is why ``grade`` restores every check from the source anyway.
    """
    for cell in nb.cells:
        if is_locked(cell):
            cell.metadata["editable"] = False
            cell.metadata["deletable"] = False
        elif is_answer(cell):
            # Deleting an answer cell loses the student's work and leaves "missing answer" in the feedback.
            cell.metadata.pop("editable", None)
            cell.metadata["deletable"] = False
        else:
            cell.metadata.pop("editable", None)
            cell.metadata.pop("deletable", None)
    return nb


def compute_checksums(nb: NotebookNode) -> NotebookNode:
    """Store nbgrader's ``checksum`` (and ``cell_type``) in every answer, check and read-only cell."""
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if meta and (is_answer(cell) or is_check(cell) or is_locked(cell)):
            meta["checksum"] = compute_checksum(cell)
            meta["cell_type"] = cell.cell_type
    return nb


RELEASE_STEPS: tuple[Step, ...] = (
    clear_solutions,
    clear_hidden_tests,
    clear_outputs,
    lock_cells,
    ensure_cell_ids,
    # Last: the checksum must describe the text the student receives, after every change above.
    compute_checksums,
)


def release_notebook(source: NotebookNode) -> NotebookNode:
    """Return the student copy of a (validated) source notebook; the source is left untouched.

    >>> from nbformat.v4 import new_notebook, new_code_cell
    >>> meta = {"solution": True, "grade": False, "locked": False, "grade_id": "a1", "schema_version": 3}
    >>> src = new_notebook(cells=[new_code_cell(
    ...     "def f():\\n    ### BEGIN SOLUTION\\n    return 1\\n    ### END SOLUTION", metadata={"nbgrader": meta})])
    >>> print(release_notebook(src).cells[0].source)
    def f():
        # YOUR CODE HERE
        raise NotImplementedError()
    """
    nb = copy.deepcopy(source)
    for step in RELEASE_STEPS:
        nb = step(nb)
    return nb


def released_texts(source_dir: str | Path) -> dict[str, str]:
    """Validate every source in ``source_dir`` and return ``{file name: released notebook text}``."""
    exercises = find_exercises(source_dir)
    return {f"{name}.ipynb": notebook_text(release_notebook(ex.notebook)) for name, ex in exercises.items()}


@dataclass
class ReleaseReport:
    """What ``release_tree`` did, by file name."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def release_tree(source_dir: str | Path, out_dir: str | Path) -> ReleaseReport:
    """Write the student copy of every source notebook into ``out_dir``.

    Files whose text would not change are not rewritten. ``*.ipynb`` files in ``out_dir`` with no
    source are removed, so the folder always matches the sources (other files are left alone).
    Nothing is written unless every source validates.
    """
    texts = released_texts(source_dir)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = ReleaseReport()
    for name, text in texts.items():
        target = out_dir / name
        if target.is_file() and target.read_bytes() == text.encode("utf-8"):
            report.unchanged.append(name)
            continue
        # Bytes, not text mode: the same bytes on every platform, so --check agrees everywhere.
        target.write_bytes(text.encode("utf-8"))
        report.written.append(name)
    for stale in sorted(out_dir.glob("*.ipynb")):
        if stale.name not in texts and stale.is_file():
            stale.unlink()
            report.removed.append(stale.name)
    return report


def check_release(source_dir: str | Path, out_dir: str | Path) -> list[str]:
    """Compare ``out_dir`` with what ``release_tree`` would write; return one line per difference.

    Writes nothing. Lines read ``missing: NAME``, ``changed: NAME`` or ``extra: NAME``.
    """
    texts = released_texts(source_dir)
    out_dir = Path(out_dir)
    differences: list[str] = []
    for name, text in texts.items():
        target = out_dir / name
        if not target.is_file():
            differences.append(f"missing: {target}")
        elif target.read_bytes() != text.encode("utf-8"):
            differences.append(f"changed: {target}")
    if out_dir.is_dir():
        for extra in sorted(out_dir.glob("*.ipynb")):
            if extra.name not in texts:
                differences.append(f"extra: {extra}")
    return differences
