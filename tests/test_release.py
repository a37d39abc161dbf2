"""``release``: student copies from source notebooks, ``--check``, and source validation.

No kernels here: everything is notebook JSON, so this file runs in a few seconds.
"""

from __future__ import annotations

import copy
import hashlib
import shutil
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from edumatcher.cli import main
from edumatcher.grading import (
    answer_cell,
    check_cell,
    check_release,
    compute_checksum,
    notebook_text,
    readonly_cell,
    release_notebook,
)
from edumatcher.grading.authoring import manual_answer_cell
from edumatcher.grading.exercise import SourceError, load_exercise, validate_source
from edumatcher.grading.notebook_cells import (
    BEGIN_SOLUTION,
    END_SOLUTION,
    RegionError,
    find_regions,
    grade_id,
    replace_regions,
)

FIXTURES = Path(__file__).parent / "fixtures" / "grading"
SOURCES = FIXTURES / "solutions"
TOY = SOURCES / "ex_toy.ipynb"


def cells_by_id(nb: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    return {grade_id(c): c for c in nb.cells if grade_id(c)}


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    """A writable copy of the fixture sources, with stale outputs added to prove they get cleared."""
    folder = tmp_path / "solutions"
    shutil.copytree(SOURCES, folder)
    nb = nbformat.read(folder / "ex_toy.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [new_output("stream", name="stdout", text="stale output\n")]
            cell.execution_count = 7
            cell.metadata["execution"] = {"iopub.status.busy": "2024-01-01T00:00:00Z"}
    (folder / "ex_toy.ipynb").write_text(notebook_text(nb), encoding="utf-8")
    return folder


@pytest.fixture
def released(sources: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "exercises"
    assert main(["release", str(sources), str(out)]) == 0
    capsys.readouterr()
    return out


# --- output shape ------------------------------------------------------------------------------

def test_answer_regions_become_nbgrader_stubs(released: Path) -> None:
    cells = cells_by_id(nbformat.read(released / "ex_toy.ipynb", as_version=4))
    assert cells["a_add"].source == 'def add(a, b):\n    """Return a + b."""\n    # YOUR CODE HERE\n    raise NotImplementedError()'
    assert "# YOUR CODE HERE\n    raise NotImplementedError()" in cells["a_mean"].source
    assert cells["a_explain"].source == "Why does `mean` refuse an empty list?\n\nYOUR ANSWER HERE"


def test_no_solution_or_hidden_test_survives(released: Path) -> None:
    text = (released / "ex_toy.ipynb").read_text(encoding="utf-8")
    for secret in ("return a + b", "sum(values) / len(values)", "Dividing by a length of zero",
                   "BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", "symmetric pair", "mean([7])"):
        assert secret not in text, secret
    visible = cells_by_id(nbformat.read(released / "ex_toy.ipynb", as_version=4))["c_mean_empty"].source
    assert visible.startswith("try:\n    mean([])") and visible.endswith('raise AssertionError("mean([]) should raise ValueError")')


def test_outputs_and_execution_counts_are_cleared(released: Path) -> None:
    nb = nbformat.read(released / "ex_toy.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)
    assert all("execution" not in c.metadata for c in code)


def test_checks_and_readonly_cells_are_locked_answers_are_not(released: Path) -> None:
    cells = cells_by_id(nbformat.read(released / "ex_toy.ipynb", as_version=4))
    for gid in ("c_add", "c_mean", "c_mean_empty", "intro", "setup"):
        assert cells[gid].metadata["editable"] is False and cells[gid].metadata["deletable"] is False, gid
    # Answer cells, written answers graded by hand included, stay editable; like nbgrader's LockCells
    # they cannot be deleted (a deleted answer is lost work).
    for gid in ("a_add", "a_mean", "a_explain"):
        assert "editable" not in cells[gid].metadata and cells[gid].metadata["deletable"] is False, gid


def test_a_written_answer_is_a_manual_grade_cell_cleared_on_release(sources: Path, released: Path) -> None:
    exercise = load_exercise(sources / "ex_toy.ipynb")
    assert [spec.grade_id for spec in exercise.manual] == ["a_explain"] and exercise.manual_points == 1
    assert "a_explain" not in [check.grade_id for check in exercise.checks] and exercise.max_points == 5
    meta = cells_by_id(nbformat.read(released / "ex_toy.ipynb", as_version=4))["a_explain"].metadata.nbgrader
    assert (meta["solution"], meta["grade"], meta["locked"], meta["points"]) == (True, True, False, 1)


def _nbgrader_recipe(cell: nbformat.NotebookNode) -> str:
    """nbgrader's checksum recipe, written out independently of our implementation."""
    meta = cell.metadata.nbgrader
    digest = hashlib.md5(usedforsecurity=False)
    locked = not meta["solution"] and (meta["grade"] or meta.get("locked", False))
    for part in (cell.source, cell.cell_type, str(meta["grade"]), str(meta["solution"]), str(locked),
                 meta["grade_id"]):
        digest.update(part.encode("utf-8"))
    if meta["grade"]:
        digest.update(str(float(meta["points"])).encode("utf-8"))
    return digest.hexdigest()


def test_checksums_follow_nbgrader_and_detect_edits(released: Path) -> None:
    nb = nbformat.read(released / "ex_toy.ipynb", as_version=4)
    marked = [c for c in nb.cells if "nbgrader" in c.metadata]
    assert len(marked) == 8
    for cell in marked:
        assert cell.metadata.nbgrader["checksum"] == _nbgrader_recipe(cell) == compute_checksum(cell)
        assert cell.metadata.nbgrader["cell_type"] == cell.cell_type
    check = cells_by_id(nb)["c_add"]
    edited = copy.deepcopy(check)
    edited.source += "\npass"
    worth_more = copy.deepcopy(check)
    worth_more.metadata.nbgrader["points"] = 5
    assert len({compute_checksum(check), compute_checksum(edited), compute_checksum(worth_more)}) == 3


def test_release_is_deterministic_and_leaves_the_source_alone(sources: Path, tmp_path: Path) -> None:
    before = (sources / "ex_toy.ipynb").read_bytes()
    assert main(["release", str(sources), str(tmp_path / "a")]) == 0
    assert main(["release", str(sources), str(tmp_path / "b")]) == 0
    for name in ("ex_toy.ipynb", "ex_naive_helper.ipynb"):
        first = (tmp_path / "a" / name).read_bytes()
        assert first == (tmp_path / "b" / name).read_bytes()
        assert first.endswith(b"}\n") and not first.endswith(b"\n\n")
    assert (sources / "ex_toy.ipynb").read_bytes() == before


def test_committed_fixture_copies_are_current(capsys: pytest.CaptureFixture[str]) -> None:
    """The checked-in released fixtures match a release made now, in this process."""
    assert main(["release", str(SOURCES), str(FIXTURES / "exercises"), "--check"]) == 0
    assert "up to date" in capsys.readouterr().out


REPO = Path(__file__).resolve().parent.parent


def test_the_course_exercises_are_current() -> None:
    """exercises/ must be exactly what `python -m edumatcher release solutions/ exercises/` writes."""
    if not any((REPO / "solutions").glob("*.ipynb")):
        pytest.skip("no source notebooks in solutions/ yet")
    assert check_release(REPO / "solutions", REPO / "exercises") == [], (
        "run: python -m edumatcher release solutions/ exercises/")


def test_indentation_of_the_begin_line_is_kept() -> None:
    meta = {"nbgrader": {"solution": True, "grade": False, "locked": False, "grade_id": "a", "schema_version": 3}}
    src = new_notebook(cells=[new_code_cell("class A:\n    def f(self):\n        ### BEGIN SOLUTION\n        return 1\n"
                                            "        ### END SOLUTION\n    x = 1", metadata=meta)])
    assert release_notebook(src).cells[0].source == (
        "class A:\n    def f(self):\n        # YOUR CODE HERE\n        raise NotImplementedError()\n    x = 1")


# --- release writes, --check compares -----------------------------------------------------------

def test_check_passes_on_fresh_output(sources: Path, released: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", str(sources), str(released), "--check"]) == 0
    assert "up to date" in capsys.readouterr().out


def test_check_reports_changed_missing_and_extra_files_and_writes_nothing(
        sources: Path, released: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toy = released / "ex_toy.ipynb"
    toy.write_text(toy.read_text(encoding="utf-8").replace("YOUR CODE HERE", "my answer", 1), encoding="utf-8")
    (released / "ex_naive_helper.ipynb").unlink()
    (released / "old_exercise.ipynb").write_text("{}", encoding="utf-8")
    (released / "README.md").write_text("not managed by release", encoding="utf-8")
    snapshot = {p.name: p.read_bytes() for p in released.iterdir()}

    assert main(["release", str(sources), str(released), "--check"]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        f"missing: {released / 'ex_naive_helper.ipynb'}",
        f"changed: {toy}",
        f"extra: {released / 'old_exercise.ipynb'}",
    ]
    assert "3 file(s) differ" in captured.err
    assert {p.name: p.read_bytes() for p in released.iterdir()} == snapshot


def test_check_fails_when_the_output_folder_is_missing(sources: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", str(sources), str(tmp_path / "nowhere"), "--check"]) == 1
    assert len(capsys.readouterr().out.splitlines()) == 2
    assert not (tmp_path / "nowhere").exists()


def test_release_repairs_the_folder_and_skips_unchanged_files(
        sources: Path, released: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (released / "old_exercise.ipynb").write_text("{}", encoding="utf-8")
    toy = released / "ex_toy.ipynb"
    toy.write_text("edited", encoding="utf-8")
    assert main(["release", str(sources), str(released)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {released}/ex_toy.ipynb" in out and "removed" in out and "1 written, 1 unchanged, 1 removed" in out
    assert not (released / "old_exercise.ipynb").exists()
    assert main(["release", str(sources), str(released), "--check"]) == 0


# --- source validation ------------------------------------------------------------------------

def _meta(gid: str, *, solution: bool = False, grade: bool = False, locked: bool = False, **extra: object) -> dict:
    return {"nbgrader": {"grade": grade, "solution": solution, "locked": locked, "grade_id": gid,
                         "schema_version": 3, **extra}}


GOOD_ANSWER = answer_cell("a1", "### BEGIN SOLUTION\nx = 1\n### END SOLUTION")
GOOD_CHECK = check_cell("c1", "assert x == 1", points=1)

BAD_SOURCES = {
    "duplicate grade_id": ([GOOD_ANSWER, GOOD_CHECK, check_cell("c1", "assert x", points=1)],
                           "duplicate grade_id 'c1'"),
    "grade cell without points": ([GOOD_ANSWER, new_code_cell("assert x", metadata=_meta("c1", grade=True, locked=True))],
                                  "check cell needs points > 0"),
    "zero points": ([GOOD_ANSWER, check_cell("c1", "assert x", points=0)], "check cell needs points > 0"),
    "BEGIN never closed": ([answer_cell("a1", "### BEGIN SOLUTION\nx = 1"), GOOD_CHECK], "is never closed"),
    "END without BEGIN": ([answer_cell("a1", "x = 1\n### END SOLUTION"), GOOD_CHECK], "without a matching"),
    "nested BEGIN": ([answer_cell("a1", "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION"), GOOD_CHECK],
                     "inside a region"),
    "unbalanced hidden tests": ([GOOD_ANSWER, check_cell("c1", "assert x\n### BEGIN HIDDEN TESTS\nassert 1", points=1)],
                                "BEGIN HIDDEN TESTS' on line 2 is never closed"),
    "answer cell without a region": ([answer_cell("a1", "x = 1"), GOOD_CHECK], "answer cell has no"),
    "solution markers in a check": ([GOOD_ANSWER, check_cell("c1", "### BEGIN SOLUTION\nx\n### END SOLUTION", points=1)],
                                    "solution markers outside an answer cell"),
    "hidden tests in an answer": ([answer_cell("a1", "### BEGIN SOLUTION\nx=1\n### END SOLUTION\n"
                                               "### BEGIN HIDDEN TESTS\nassert x\n### END HIDDEN TESTS"), GOOD_CHECK],
                                  "hidden-test markers outside a check cell"),
    "code cell marked manual": ([new_code_cell("### BEGIN SOLUTION\nx\n### END SOLUTION",
                                               metadata=_meta("c1", solution=True, grade=True, points=1)), GOOD_CHECK],
                                "a code cell cannot be both an answer (solution) and graded"),
    "manual answer without points": ([GOOD_ANSWER, GOOD_CHECK, new_markdown_cell(
        "Why?\n### BEGIN SOLUTION\nBecause.\n### END SOLUTION", metadata=_meta("m1", solution=True, grade=True))],
        "manual-grade answer cell needs points > 0 (has None)"),
    "manual answer with zero points": ([GOOD_ANSWER, GOOD_CHECK, manual_answer_cell(
        "m1", "### BEGIN SOLUTION\nBecause.\n### END SOLUTION", points=0)], "manual-grade answer cell needs points > 0"),
    "locked manual answer": ([GOOD_ANSWER, GOOD_CHECK, new_markdown_cell(
        "### BEGIN SOLUTION\nBecause.\n### END SOLUTION",
        metadata=_meta("m1", solution=True, grade=True, locked=True, points=1))], "must have locked: false"),
    "manual answer without a region": ([GOOD_ANSWER, GOOD_CHECK, manual_answer_cell("m1", "Why?", points=1)],
                                       "answer cell has no"),
    "ungraded markdown answer": ([GOOD_ANSWER, GOOD_CHECK, new_markdown_cell(
        "### BEGIN SOLUTION\nBecause.\n### END SOLUTION", metadata=_meta("m1", solution=True))],
        "a Markdown answer cell is graded by hand: mark it grade: true"),
    "markdown check": ([GOOD_ANSWER, new_markdown_cell("why?", metadata=_meta("c1", grade=True, locked=True, points=1))],
                       "check cells must be code cells"),
    "unlocked check": ([GOOD_ANSWER, new_code_cell("assert x", metadata=_meta("c1", grade=True, points=1))],
                       "check cells must have locked: true"),
    "bad grade_id": ([GOOD_ANSWER, check_cell("c 1!", "assert x", points=1)], "grade_id 'c 1!' must be"),
    "wrong schema": ([GOOD_ANSWER, new_code_cell("assert x", metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "grade_id": "c1", "points": 1, "schema_version": 1}})],
                     "schema_version must be 3"),
    "no checks at all": ([GOOD_ANSWER, readonly_cell("r1", "text")], "no check cells"),
}


def _notebook(cells: list) -> nbformat.NotebookNode:
    """A notebook of copies of ``cells`` without ids (so duplicate grade_ids do not collide as cell ids)."""
    nb = new_notebook()
    nb.cells = [copy.deepcopy(cell) for cell in cells]
    for cell in nb.cells:
        cell.pop("id", None)
    return nb


@pytest.mark.parametrize("case", sorted(BAD_SOURCES))
def test_invalid_sources_give_one_error_line_and_write_nothing(
        case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cells, expected = BAD_SOURCES[case]
    source = tmp_path / "solutions"
    source.mkdir()
    (source / "01_bad.ipynb").write_text(notebook_text(_notebook(cells)), encoding="utf-8")
    out = tmp_path / "exercises"
    assert main(["release", str(source), str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    assert str(source / "01_bad.ipynb") in err and expected in err, err
    assert not out.exists()


def test_all_problems_are_reported_at_once() -> None:
    nb = _notebook([answer_cell("a1", "x = 1"), check_cell("a1", "assert x", points=0)])
    with pytest.raises(SourceError) as caught:
        validate_source(nb, "nb.ipynb")
    message = str(caught.value)
    assert "answer cell has no" in message and "points > 0" in message and "duplicate grade_id" in message


def test_missing_source_folder_and_empty_folder_are_cli_errors(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", str(tmp_path / "missing"), str(tmp_path / "out")]) == 1
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["release", str(tmp_path / "empty"), str(tmp_path / "out")]) == 1
    assert "no source notebooks" in capsys.readouterr().err


def test_unreadable_source_is_a_cli_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "01_x.ipynb").write_text("{not json", encoding="utf-8")
    assert main(["release", str(tmp_path / "src"), str(tmp_path / "out")]) == 1
    assert "not a readable notebook" in capsys.readouterr().err


# --- the marker helpers ---------------------------------------------------------------------------

def test_find_regions_pairs_markers_and_rejects_bad_ones() -> None:
    text = "a\n### BEGIN SOLUTION\nb\n### END SOLUTION\nc\n  ### BEGIN SOLUTION\n  ### END SOLUTION"
    assert find_regions(text, BEGIN_SOLUTION, END_SOLUTION) == [(1, 3), (5, 6)]
    assert find_regions('print("### BEGIN SOLUTION")', BEGIN_SOLUTION, END_SOLUTION) == []
    with pytest.raises(RegionError):
        find_regions("### END SOLUTION\n### BEGIN SOLUTION", BEGIN_SOLUTION, END_SOLUTION)


def test_replace_regions_handles_several_regions() -> None:
    text = "a\n### BEGIN SOLUTION\nb\n### END SOLUTION\nc\n### BEGIN SOLUTION\nd\n### END SOLUTION\ne"
    assert replace_regions(text, BEGIN_SOLUTION, END_SOLUTION, lambda indent: ["X"]) == "a\nX\nc\nX\ne"


# --- help ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["release", "grade", "review"])
def test_help_has_a_summary_and_an_example(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([command, "--help"])
    assert stopped.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"Example: python -m edumatcher {command}" in out or f"Examples: python -m edumatcher {command}" in out
    if command == "grade":
        assert "bubblewrap" in out and "--sandbox none" in out
