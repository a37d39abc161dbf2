"""Every graded exercise proves its checks: the blank student copy scores 0 on each, the solution full marks.

Parametrized over every source notebook in ``solutions/``: an exercise author adds a notebook, not a
test. Grading goes through the real pipeline (release the blank copy, restore the checks from the
source, execute in a fresh kernel, score), one worker and one kernel per notebook.

All the notebooks this session selected are graded in one batch, two workers at a time, by the
module-scoped ``graded`` fixture: pairing each exercise's blank copy with its solution, one exercise at
a time, would leave a worker idle while the slower of each pair finishes. Running one exercise alone
(``-k 04_exact_ticks``) grades only that one.

Beside the proof, cheap static tests hold every exercise to the authoring guide
(``edumatcher/grading/__init__.py``): checks say why they failed, never time anything, and the
statement points to its chapter.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from toy_submissions import SANDBOX

from edumatcher.grading import SubmissionResult, grade_submissions, load_exercise, notebook_text, release_notebook
from edumatcher.grading.notebook_cells import BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS, is_check, source_text
from edumatcher.grading.submissions import Submission

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO / "solutions"
NAMES = sorted(path.stem for path in SOLUTIONS.glob("*.ipynb"))
# A second correct answer, written differently from the solution (another algorithm, another method the
# statement allows): full marks for it shows the checks test the result, not the solution's way to it.
ALTERNATIVES = REPO / "tests" / "fixtures" / "alternatives"
ALTERNATIVE_NAMES = sorted(path.stem for path in ALTERNATIVES.glob("*.ipynb") if path.stem in NAMES)

# The grading command's defaults: an exercise must pass the way a teacher will grade it.
CELL_TIMEOUT = 60
NOTEBOOK_TIMEOUT = 300
JOBS = 2


def _selected_names(request: pytest.FixtureRequest) -> list[str]:
    """The exercises whose grading tests this session will run (after ``-k`` and other deselection)."""
    names = set()
    for item in request.session.items:  # notebook cells collected by nbval are items too, without a module
        callspec = getattr(item, "callspec", None)
        if callspec is not None and getattr(item, "module", None) is request.module and "graded" in item.fixturenames:
            names.add(callspec.params["name"])
    return sorted(names)


@pytest.fixture(scope="module")
def graded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
           ) -> dict[tuple[str, str], SubmissionResult]:
    """Grade the blank copy and the solution of every selected exercise; key ``(copy, exercise name)``."""
    root = tmp_path_factory.mktemp("graded-exercises")
    exercises, submissions = {}, []
    for name in _selected_names(request):
        exercise = exercises[name] = load_exercise(SOLUTIONS / f"{name}.ipynb")
        blank = root / "blank" / f"{name}.ipynb"
        solution = root / "solution" / f"{name}.ipynb"
        for path in (blank, solution):
            path.parent.mkdir(exist_ok=True)
        # The same text `python -m edumatcher release` writes to exercises/ (test_release pins that).
        blank.write_text(notebook_text(release_notebook(exercise.notebook)), encoding="utf-8")
        shutil.copyfile(exercise.path, solution)
        submissions += [Submission(blank, "blank", name), Submission(solution, "solution", name)]
        if name in ALTERNATIVE_NAMES:
            alternative = root / "alternative" / f"{name}.ipynb"
            alternative.parent.mkdir(exist_ok=True)
            shutil.copyfile(ALTERNATIVES / f"{name}.ipynb", alternative)
            submissions.append(Submission(alternative, "alternative", name))
    # Without bubblewrap (CI installs it) these grade unsandboxed, as the other grading tests do.
    results = grade_submissions(submissions, exercises, jobs=JOBS, cell_timeout=CELL_TIMEOUT,
                                timeout=NOTEBOOK_TIMEOUT, sandbox=SANDBOX)
    return {(result.student, result.exercise): result for result in results}


def _describe(result: SubmissionResult) -> str:
    lines = [f"{result.student} copy of {result.exercise}: {result.status} {result.reason}".rstrip(),
             f"  {result.total:g} / {result.max_points:g} points in {result.seconds:.1f} s"]
    lines += [f"  {c.grade_id}: {c.points:g}/{c.max_points:g} {c.message}".rstrip() for c in result.checks]
    lines += [f"  note: {note}" for note in result.notes]
    return "\n".join(lines)


@pytest.mark.parametrize("name", NAMES)
def test_the_blank_copy_scores_zero_on_every_check(graded: dict[tuple[str, str], SubmissionResult],
                                                   name: str) -> None:
    """A check that passes before the student writes anything tests nothing."""
    result = graded[("blank", name)]
    assert result.status == "graded", _describe(result)
    assert result.checks, _describe(result)
    passing = [check.grade_id for check in result.checks if check.points != 0 or check.passed]
    assert not passing, f"checks pass on the blank copy: {passing}\n{_describe(result)}"


@pytest.mark.parametrize("name", NAMES)
def test_the_solution_scores_full_marks(graded: dict[tuple[str, str], SubmissionResult], name: str) -> None:
    """Every check, hidden tests included, can be satisfied: the solution earns all of its points."""
    result = graded[("solution", name)]
    assert result.status == "graded", _describe(result)
    assert result.max_points > 0 and result.total == result.max_points, _describe(result)
    assert all(check.passed for check in result.checks), _describe(result)


@pytest.mark.parametrize("name", ALTERNATIVE_NAMES)
def test_an_alternative_correct_answer_scores_full_marks(graded: dict[tuple[str, str], SubmissionResult],
                                                         name: str) -> None:
    """A correct answer that is not the solution's still earns every point (tests/fixtures/alternatives/)."""
    result = graded[("alternative", name)]
    assert result.status == "graded", _describe(result)
    assert result.max_points > 0 and result.total == result.max_points, _describe(result)


@pytest.mark.parametrize("name", ALTERNATIVE_NAMES)
def test_an_alternative_answer_differs_from_the_solution(name: str) -> None:
    """An "alternative" identical to the solution would prove nothing."""
    def answers(path: Path) -> list[str]:
        nb = nbformat.read(path, as_version=4)
        return [source_text(cell) for cell in nb.cells if cell.cell_type == "code" and not is_check(cell)]
    assert answers(ALTERNATIVES / f"{name}.ipynb") != answers(SOLUTIONS / f"{name}.ipynb"), (
        f"tests/fixtures/alternatives/{name}.ipynb answers exactly as the solution does")


# --- the authoring guide, checked without running anything ---------------------------------------


def _markdown_answers(path: Path) -> dict[str, dict]:
    """``{grade_id: nbgrader metadata}`` of every Markdown answer cell of a notebook."""
    nb = nbformat.read(path, as_version=4)
    return {cell.metadata["nbgrader"]["grade_id"]: dict(cell.metadata["nbgrader"]) for cell in nb.cells
            if cell.cell_type == "markdown" and cell.metadata.get("nbgrader", {}).get("solution") is True}


@pytest.mark.parametrize("name", NAMES)
def test_written_answers_are_graded_by_hand(name: str) -> None:
    """Every Markdown answer is an nbgrader manual-grade cell worth 1-3 points, never an autograded check."""
    exercise = load_exercise(SOLUTIONS / f"{name}.ipynb")
    written = _markdown_answers(exercise.path)
    assert [spec.grade_id for spec in exercise.manual] == list(written)
    assert all(meta["grade"] is True and meta["locked"] is False for meta in written.values()), written
    assert all(1 <= spec.points <= 3 for spec in exercise.manual), exercise.manual
    assert not set(written) & {check.grade_id for check in exercise.checks}


@pytest.mark.parametrize("name", ALTERNATIVE_NAMES)
def test_an_alternatives_written_answers_are_marked_as_the_solutions(name: str) -> None:
    """A submission's metadata is replaced by the source's when graded, but these copies should read true."""
    assert _markdown_answers(ALTERNATIVES / f"{name}.ipynb") == _markdown_answers(SOLUTIONS / f"{name}.ipynb")


def _checks(name: str) -> list[tuple[str, str]]:
    """``(grade_id, source)`` of every check cell of an exercise, hidden tests included."""
    nb = nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)
    return [(cell.metadata["nbgrader"]["grade_id"], source_text(cell)) for cell in nb.cells if is_check(cell)]


def _without_markers(source: str) -> str:
    return "\n".join(line for line in source.splitlines()
                     if line.strip() not in (BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS))


@pytest.mark.parametrize("name", NAMES)
def test_every_assert_in_a_check_says_what_went_wrong(name: str) -> None:
    """The assertion message is all the student sees in the feedback; a bare ``assert`` tells them nothing."""
    bare = []
    for grade_id, source in _checks(name):
        tree = ast.parse(_without_markers(source))
        bare += [f"{grade_id} line {node.lineno}" for node in ast.walk(tree)
                 if isinstance(node, ast.Assert) and node.msg is None]
    assert not bare, f"asserts without a message in {name}: {bare}"


# Calls that read a clock or run a benchmark. Checks test behaviour, never speed: the grading machine is
# shared and slow, so a timed assertion would fail for reasons that have nothing to do with the answer.
_CLOCKS = frozenset({"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time", "time",
                     "time_ns", "timeit", "repeat", "measure", "measure_passes", "interleave"})


def _called_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


@pytest.mark.parametrize("name", NAMES)
def test_no_check_times_anything(name: str) -> None:
    timed = []
    for grade_id, source in _checks(name):
        calls = {_called_name(node) for node in ast.walk(ast.parse(_without_markers(source)))
                 if isinstance(node, ast.Call)}
        timed += [f"{grade_id} calls {clock}()" for clock in sorted(calls & _CLOCKS)]
    assert not timed, f"checks in {name} read a clock: {timed}"


@pytest.mark.parametrize("name", NAMES)
def test_the_statement_links_its_chapter(name: str) -> None:
    """The first cell names the chapter the exercise belongs to (``course/NN_*.ipynb``, same NN), and it exists."""
    nb = nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)
    number = name.split("_", 1)[0]
    chapters = re.findall(rf"course/({number}_[A-Za-z0-9_]+\.ipynb)", source_text(nb.cells[0]))
    assert chapters, f"the first cell of {name} should link course/{number}_<chapter>.ipynb"
    for chapter in chapters:
        assert (REPO / "course" / chapter).is_file(), f"{name} links course/{chapter}, which does not exist"
