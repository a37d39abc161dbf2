"""Every exercise ends its run with one line saying how many visible checks passed (issue 22, §4).

The line is a locked, ungraded cell (``grade_id`` ``visible_checks_passed``) placed after the last
check: Run All stops at the first cell that raises, so it prints only once every check above has
passed. Its count is written in the cell, so this test keeps it equal to the notebook's visible
checks (graded code cells with code outside their hidden-test region), in the source and in the
student copy.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((REPO / "solutions").glob("*.ipynb"))
SUMMARY_ID = "visible_checks_passed"
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", re.S)
LINE = re.compile(r'print\("(\d+) of (\d+) visible checks passed; more checks run when it is graded\."\)')


def _is_check(cell: nbformat.NotebookNode) -> bool:
    meta = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def visible_checks(nb: nbformat.NotebookNode) -> list[int]:
    """Indices of the check cells a student sees something of (code outside the hidden-test region)."""
    out = []
    for index, cell in enumerate(nb.cells):
        if _is_check(cell):
            visible = HIDDEN.sub("", cell.source)
            if any(line.strip() and not line.strip().startswith("#") for line in visible.splitlines()):
                out.append(index)
    return out


def test_the_count_of_a_made_up_notebook() -> None:
    check = nbformat.v4.new_code_cell("assert f() == 1\n### BEGIN HIDDEN TESTS\nassert f() != 2\n### END HIDDEN TESTS")
    hidden_only = nbformat.v4.new_code_cell("### BEGIN HIDDEN TESTS\nassert f() != 2\n### END HIDDEN TESTS")
    answer = nbformat.v4.new_code_cell("def f():\n    return 1")
    for cell in (check, hidden_only):
        cell.metadata["nbgrader"] = {"grade": True, "solution": False}
    answer.metadata["nbgrader"] = {"grade": False, "solution": True}
    assert visible_checks(nbformat.v4.new_notebook(cells=[answer, check, hidden_only])) == [1]


@pytest.mark.parametrize("folder", ["solutions", "exercises"])
@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_one_line_reports_every_visible_check(folder: str, solution: Path) -> None:
    nb = nbformat.read(REPO / folder / solution.name, as_version=4)
    source_checks = visible_checks(nbformat.read(solution, as_version=4))
    summaries = [i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == SUMMARY_ID]
    assert len(summaries) == 1, f"{folder}/{solution.name}: one {SUMMARY_ID} cell, found {len(summaries)}"
    cell = nb.cells[summaries[0]]
    assert not _is_check(cell) and cell.metadata["nbgrader"].get("locked"), "the summary is a locked cell, not graded"
    found = LINE.search(cell.source)
    assert found, f"{folder}/{solution.name}: the summary cell should print the one line, got {cell.source!r}"
    assert int(found.group(1)) == int(found.group(2)) == len(source_checks), (
        f"{folder}/{solution.name}: {len(source_checks)} visible checks, the line says {found.group(1)}")
    assert summaries[0] > max(visible_checks(nb) or [-1]), "the line comes after the last check"
