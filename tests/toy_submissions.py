"""Submissions of the toy exercise (tests/fixtures/grading) for the grading tests, and the course's real
exercises found by topic (their number changes when chapters move; their topic does not)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat

from edumatcher.grading import notebook_text, release_notebook
from edumatcher.grading.notebook_cells import grade_id
from edumatcher.grading.sandbox import _probe_bwrap

SOURCES = Path(__file__).parent / "fixtures" / "grading" / "solutions"
TOY = SOURCES / "ex_toy.ipynb"
REAL_SOURCES = Path(__file__).resolve().parent.parent / "solutions"
# grade refuses to run without bubblewrap unless told --sandbox none: tests that are not about the sandbox
# grade without it where it is missing (CI installs it: .ci/run).
SANDBOX = "auto" if _probe_bwrap()[0] else "none"
# The exercises issue 25's tampering attack scored full marks on, by topic: the one place grading tests name
# real exercises, so a renumbering of the chapters changes nothing here.
ISSUE_25_TOPICS = ("next_one_percent", "exact_ticks", "masked_ring", "significance_test")


def real_exercise(topic: str) -> Path:
    """The source notebook ``solutions/NN_<topic>.ipynb``, whatever its number."""
    found = sorted(REAL_SOURCES.glob(f"[0-9][0-9]_{topic}.ipynb"))
    if len(found) != 1:
        raise LookupError(f"expected one solutions/NN_{topic}.ipynb, found {[p.name for p in found]}")
    return found[0]


def solved(a_add_prefix: str = "") -> str:
    """The toy student copy with every answer filled from the source (``a_add`` led by ``a_add_prefix``)."""
    source = nbformat.read(TOY, as_version=4)
    answers = {grade_id(cell): cell.source for cell in source.cells}
    nb = release_notebook(nbformat.read(TOY, as_version=4))
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            gid = grade_id(cell)
            cell.source = (a_add_prefix if gid == "a_add" else "") + answers[gid]
    return notebook_text(nb)


def write(folder: str | Path | bytes, student: str | bytes, text: str, exercise: str = "ex_toy") -> bytes:
    """Write ``folder/student/<exercise>.ipynb`` (bytes names allowed, for non-UTF-8 folders); return its path."""
    directory = os.path.join(os.fsencode(folder), os.fsencode(student))
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, os.fsencode(f"{exercise}.ipynb"))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def grade_command(submitted: Path, out: Path, *extra: str) -> list[str]:
    """``python -m edumatcher grade`` on the toy sources, two at a time."""
    return [sys.executable, "-m", "edumatcher", "grade", str(submitted), "--source", str(SOURCES), "--out", str(out),
            "--jobs", "2", "--cell-timeout", "60", "--timeout", "120", "--sandbox", SANDBOX, *extra]
