"""The course as a student meets it: every chapter run in JupyterLab in a real Chromium.

For each chapter ``course/NN_*.ipynb``: open it, run all cells with JupyterLab's own
command, and fail on anything a student would see go wrong: an error output or a traceback
on screen, a cell that never ran, "Error displaying widget", a widget that is not shown in
a chapter that uses ipywidgets, a figure that is not shown in a chapter that plots. One
exercise is then solved the way a student does it: the answer is *typed* into the student
copy, and its check cells must pass.

The ``test_harness_*`` tests run the same machinery on small notebooks made by the
conftest, and prove the checks catch an error, a broken widget and an unsolved exercise.
Screenshots of every page go to ``artifacts/browser/`` (the path is printed at the end).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed: pip install -e '.[dev]'")

from course_notebooks import (  # noqa: E402 - after the importorskip on purpose
    ExercisePair,
    answer_cells,
    chapters,
    check_cell_indices,
    exercise_pairs,
    makes_figures,
    same_code,
    uses_widgets,
)
from lab_page import NotebookPage, RunReport  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIR = REPO / "edumatcher"
CHAPTERS = chapters(REPO)
EXERCISES = exercise_pairs(REPO)
# Generous bounds: a chapter should run in under 60 s (COURSE_GUIDE); the machine is shared.
RUN_TIMEOUT_S = 240
FOCUS = (".jp-OutputArea-output .jupyter-widgets", ".jp-OutputArea-output img")
PROBLEM_FOCUS = ('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]',)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _open_and_run(context, server, path: str) -> tuple[NotebookPage, RunReport]:
    page = NotebookPage(context.new_page(), server.url, server.token, path)
    page.open()
    return page, page.run_all(timeout_s=RUN_TIMEOUT_S)


def _shot_name(path: str, suffix: str = "") -> str:
    return path.replace("/", "__").removesuffix(".ipynb") + suffix + ".png"


def _solve_exercise(context, server, student_path: str, pair: ExercisePair, shots: Path, run_log) -> None:
    """Open the student copy, see it fail, type every answer, restart, run all, see the checks pass."""
    answers = answer_cells(pair)
    assert answers, f"{pair.student.name} has no answer cell (nbgrader solution: true)"
    checks = check_cell_indices(pair.student)
    assert checks, f"{pair.student.name} has no check cell (nbgrader grade: true): nothing would grade the answer"
    page, before = _open_and_run(context, server, student_path)
    try:
        # The untouched copy must fail at an answer stub; otherwise its checks prove nothing.
        assert any("NotImplementedError" in error for error in before.errors), (
            f"{student_path} ran without hitting a NotImplementedError stub:\n{before.summary()}\n{before.errors}")
        for cell in answers:
            typed = page.type_into_cell(cell.index, cell.answer)
            assert same_code(typed, cell.answer), (
                f"typing into cell {cell.index} of {student_path} did not give the solution's code.\n"
                f"--- typed ---\n{typed}\n--- expected ---\n{cell.answer}")
        page.restart_kernel()
        after = page.run_all(timeout_s=RUN_TIMEOUT_S)
        # The last typed answer and, below it, the check that grades it.
        page.screenshot(shots / _shot_name(student_path, "-solved"), cell=answers[-1].index)
        run_log.append("solved  " + after.summary())
        problems = after.problems(expect_widgets=False, expect_figures=False)
        unexecuted_checks = sorted(set(checks) & set(after.unexecuted))
        assert not problems and not unexecuted_checks, (
            f"{student_path} with the typed answers:\n" + "\n".join(problems)
            + f"\ncheck cells not run: {unexecuted_checks}")
    finally:
        page.close()


# --- the harness: the checks themselves are checked ---------------------------------------

def test_harness_good_notebook_shows_figure_and_slider(browser_context, lab_server, screenshots_dir, run_log):
    page, report = _open_and_run(browser_context, lab_server, "_harness/figure_and_slider.ipynb")
    try:
        page.screenshot(screenshots_dir / _shot_name("_harness/figure_and_slider.ipynb"), focus=FOCUS)
    finally:
        page.close()
    run_log.append("harness " + report.summary())
    assert report.problems(expect_widgets=True, expect_figures=True) == []
    assert report.dom["imagesShown"] == 1 and report.dom["widgetsShown"] == 1
    assert report.stderr, "the warning should reach the page on stderr (and not count as an error)"


def test_harness_error_is_reported(browser_context, lab_server):
    page, report = _open_and_run(browser_context, lab_server, "_harness/raises.ipynb")
    page.close()
    problems = report.problems(expect_widgets=False, expect_figures=False)
    assert any("ZeroDivisionError" in p for p in problems if p.startswith("error output"))
    assert any(p.startswith("traceback on screen") for p in problems)
    assert any(p.startswith("code cells never executed") for p in problems)


def test_harness_dead_kernel_is_reported(browser_context, lab_server):
    page, report = _open_and_run(browser_context, lab_server, "_harness/dies.ipynb")
    page.close()
    problems = report.problems(expect_widgets=False, expect_figures=False)
    assert any(p.startswith("the kernel died during the run") for p in problems), problems


def test_harness_broken_widget_is_reported(browser_context, lab_server):
    page, report = _open_and_run(browser_context, lab_server, "_harness/broken_widget.ipynb")
    page.close()
    problems = report.problems(expect_widgets=True, expect_figures=False)
    assert any(p.startswith("widget failed: Error displaying widget") for p in problems), problems
    assert "the notebook uses ipywidgets but no widget is shown" in problems


def test_harness_exercise_solved_by_typing(browser_context, lab_server, lab_root, screenshots_dir, run_log):
    folder = lab_root / "_harness"
    pair = ExercisePair(folder / "exercises" / "00_spread.ipynb", folder / "solutions" / "00_spread.ipynb")
    _solve_exercise(browser_context, lab_server, "_harness/exercises/00_spread.ipynb", pair, screenshots_dir, run_log)


# --- the real course ----------------------------------------------------------------------

@pytest.mark.timeout(RUN_TIMEOUT_S + 240)
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_runs_clean_in_jupyterlab(chapter: Path, browser_context, lab_server, screenshots_dir, run_log):
    expect_widgets = uses_widgets(chapter, PACKAGE_DIR)
    expect_figures = makes_figures(chapter, PACKAGE_DIR)
    path = f"course/{chapter.name}"
    page, report = _open_and_run(browser_context, lab_server, path)
    try:
        page.screenshot(screenshots_dir / _shot_name(path), focus=FOCUS)
        problems = report.problems(expect_widgets=expect_widgets, expect_figures=expect_figures)
        if problems:
            page.screenshot(screenshots_dir / _shot_name(path, "-problem"), focus=PROBLEM_FOCUS)
    finally:
        page.close()
    run_log.append(f"chapter {report.summary()} (expects widgets={expect_widgets}, figures={expect_figures})")
    assert not problems, f"{path} in JupyterLab:\n" + "\n".join(problems) + "\nstderr:\n" + "\n".join(report.stderr)


@pytest.mark.timeout(2 * RUN_TIMEOUT_S + 300)
@pytest.mark.parametrize("pair", EXERCISES[:1], ids=[p.student.stem for p in EXERCISES[:1]])
def test_student_solves_an_exercise_in_jupyterlab(pair: ExercisePair, browser_context, lab_server, screenshots_dir,
                                                  run_log):
    _solve_exercise(browser_context, lab_server, f"exercises/{pair.student.name}", pair, screenshots_dir, run_log)
