"""``grade``: restore -> execute -> score -> report, on toy exercises and a class of awkward submissions.

Kernels take seconds to start, so one module-scoped ``grade`` run (``--jobs 2``) grades the whole
class of fixtures below and most tests read its gradebook. Restore logic is also tested directly,
without kernels. The fixture sources are tests/fixtures/grading/solutions/ (rebuilt by
make_toy_exercise.py there).
"""

from __future__ import annotations

import copy
import csv
import io
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from toy_submissions import SANDBOX

from edumatcher.cli import main
from edumatcher.grading import (
    check_exercise,
    grade_one,
    load_exercise,
    notebook_text,
    release_notebook,
    restore_checks,
)
from edumatcher.grading.execute import describe_error
from edumatcher.grading.notebook_cells import grade_id
from edumatcher.grading.report import feedback_markdown, summary_table
from edumatcher.grading.score import CheckResult, SubmissionResult
from edumatcher.grading.submissions import discover_submissions
from edumatcher.grading.supervise import grade_submissions

FIXTURES = Path(__file__).parent / "fixtures" / "grading"
SOURCES = FIXTURES / "solutions"
TOY = SOURCES / "ex_toy.ipynb"
NAIVE = SOURCES / "ex_naive_helper.ipynb"
CELL_TIMEOUT = 3
NOTEBOOK_TIMEOUT = 25  # generous: kernels start slowly on a loaded 2-core machine
SAM_TIMEOUT = 15  # sam overruns on purpose; graded beside the class run so the class waits less


# --- building submissions -------------------------------------------------------------------------

def source_nb(path: Path = TOY) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def index_of(nb: nbformat.NotebookNode, gid: str) -> int:
    return next(i for i, cell in enumerate(nb.cells) if grade_id(cell) == gid)


def blank(path: Path = TOY) -> nbformat.NotebookNode:
    """The student copy, exactly as released."""
    return release_notebook(source_nb(path))


def solved(path: Path = TOY, **answers: str) -> nbformat.NotebookNode:
    """The student copy with every answer cell filled from the source, then ``answers`` overriding some."""
    nb = blank(path)
    source = source_nb(path)
    for cell in nb.cells:
        gid = grade_id(cell)
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = answers.get(gid, source.cells[index_of(source, gid)].source)
    return nb


def save(nb: nbformat.NotebookNode | str | bytes, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(nb, bytes):
        path.write_bytes(nb)
    elif isinstance(nb, str):
        path.write_text(nb, encoding="utf-8")
    else:
        path.write_text(notebook_text(nb), encoding="utf-8")


WRONG_MEAN = "def mean(values):\n    return 0"
TAMPER_HELPER = ("def mean(values):\n    return 0\n\n\n"
                 "def isclose(*args, **kwargs):\n    return True  # tamper: every closeness test passes\n")
HIDDEN_FAIL_MEAN = ("def mean(values):\n    if not values:\n        raise ValueError('empty')\n"
                    "    return sum(values) / max(len(values), 2)  # right for 4 values, wrong for 1")


def build_class(root: Path) -> dict[str, Path]:
    """Write one submission per scenario under root/submitted/<student>/; return pid files to inspect."""
    sub = root / "submitted"
    pid_files = {name: root / f"{name}_pids.txt" for name in ("sam", "victor")}

    save(source_nb(), sub / "alice" / "ex_toy.ipynb")  # the solution itself
    save(blank(), sub / "bob" / "ex_toy.ipynb")  # the untouched student copy

    carol = solved(a_mean=WRONG_MEAN)  # a wrong answer, and its check replaced by `pass`
    carol.cells[index_of(carol, "c_mean")].source = "pass"
    save(carol, sub / "carol" / "ex_toy.ipynb")

    dave = solved(a_mean=HIDDEN_FAIL_MEAN)  # deletes the check that holds the hidden tests
    del dave.cells[index_of(dave, "c_mean_empty")]
    save(dave, sub / "dave" / "ex_toy.ipynb")

    save(solved(a_mean=TAMPER_HELPER), sub / "erin" / "ex_toy.ipynb")  # redefines the helper the check uses
    save(solved(NAIVE, a_mean=TAMPER_HELPER), sub / "erin" / "ex_naive_helper.ipynb")

    mike = solved()  # adds a fake graded cell and a second copy of a check
    mike.cells.append(new_code_cell("pass", metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "grade_id": "c_bonus", "points": 100, "schema_version": 3}}))
    extra = copy.deepcopy(mike.cells[index_of(mike, "c_add")])
    extra.source = "pass"
    extra.pop("id", None)
    mike.cells.append(extra)
    save(mike, sub / "mike" / "ex_toy.ipynb")

    nina = solved(a_add="def add(a, b):\n    return a - b")  # turns the failing check into Markdown
    check = nina.cells[index_of(nina, "c_add")]
    nina.cells[index_of(nina, "c_add")] = new_markdown_cell(check.source, metadata=check.metadata, id="c_add")
    save(nina, sub / "nina" / "ex_toy.ipynb")

    save(solved(a_add="def add(a, b):\n    while True:  # loops when a check calls it\n        pass",
                a_mean=source_nb().cells[index_of(source_nb(), "a_mean")].source + "\n\nwhile True:\n    pass"),
         sub / "frank" / "ex_toy.ipynb")  # interruptible infinite loops, in a check and in an answer
    save(solved(a_mean="import os\n\nos._exit(1)"), sub / "gina" / "ex_toy.ipynb")  # kills the kernel
    save(solved(a_add="print('x' * 3_000_000)\nfor i in range(20_000):\n    print(i)\n\n\n"
                      "def add(a, b):\n    return a + b"), sub / "hank" / "ex_toy.ipynb")
    save(solved(a_add="import time\n\nwhile True:\n    try:\n        time.sleep(0.05)\n"
                      "    except KeyboardInterrupt:\n        pass  # ignores the grader's interrupt"),
         sub / "patty" / "ex_toy.ipynb")
    save(solved(a_add="import sys\nimport warnings\n\n\ndef add(a, b):\n"
                      "    warnings.warn('add is being called')\n    print('debug: adding', file=sys.stderr)\n"
                      "    return a + b"), sub / "rita" / "ex_toy.ipynb")

    sam = solved()  # spawns a child process, then runs past the notebook timeout before any check (graded apart)
    slow = [new_code_cell("import os\nimport subprocess\n\nsleeper = subprocess.Popen(['sleep', '300'])\n"
                          f"open({str(pid_files['sam'])!r}, 'w').write(f'{{os.getpid()}} {{sleeper.pid}}')")]
    slow += [new_code_cell("import time\n\ntime.sleep(2.5)") for _ in range(12)]
    at = index_of(sam, "a_add") + 1
    sam.cells[at:at] = slow
    save(sam, root / "apart" / "sam" / "ex_toy.ipynb")

    save(solved(a_add="import os\nimport signal\n\n"  # kills its parent: the grading worker, unless sandboxed
                      "try:\n"
                      f"    open({str(pid_files['victor'])!r}, 'w').write(str(os.getpid()))\n"
                      "except OSError:\n"
                      "    pass  # a sandboxed kernel cannot reach the grader's folders\n"
                      "os.kill(os.getppid(), signal.SIGKILL)"), sub / "victor" / "ex_toy.ipynb")

    save("this is not a notebook\n", sub / "ivan" / "ex_toy.ipynb")
    save('{"cells": [', sub / "judy" / "ex_toy.ipynb")
    save(new_notebook(), sub / "ken" / "ex_toy.ipynb")
    save(b"", sub / "oscar" / "ex_toy.ipynb")
    save("[1, 2, 3]", sub / "quinn" / "ex_toy.ipynb")
    save(solved(), sub / "lara" / "ex_unknown.ipynb")
    save("my notes", sub / "lara" / "notes.txt")
    return pid_files


@dataclass
class ClassRun:
    out: Path
    code: int
    stdout: str
    stderr: str
    seconds: float
    grades: dict[tuple[str, str], dict[str, str]]
    toy_rows: list[dict[str, str]]
    pid_files: dict[str, Path]
    sam: SubmissionResult

    def row(self, student: str, exercise: str = "ex_toy") -> dict[str, str]:
        return self.grades[(student, exercise)]

    def toy(self, student: str) -> dict[str, str]:
        return next(r for r in self.toy_rows if r["student"] == student)

    def feedback(self, student: str, exercise: str = "ex_toy") -> str:
        return (self.out / "feedback" / student / f"{exercise}.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def class_run(tmp_path_factory: pytest.TempPathFactory) -> ClassRun:
    root = tmp_path_factory.mktemp("class")
    pid_files = build_class(root)
    out = root / "gradebook"
    stdout, stderr = io.StringIO(), io.StringIO()
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=1) as beside:
        # Unsandboxed, so the test can see the kernel's and its child's host pids (a sandboxed kernel
        # cannot write them where the test looks); tests/test_grade_sandbox.py covers the sandbox.
        sam = beside.submit(grade_one, TOY, root / "apart" / "sam" / "ex_toy.ipynb", cell_timeout=CELL_TIMEOUT,
                            timeout=SAM_TIMEOUT, sandbox="none")
        with redirect_stdout(stdout), redirect_stderr(stderr):
            code = main(["grade", str(root / "submitted"), "--source", str(SOURCES), "--out", str(out), "--jobs",
                         "2", "--cell-timeout", str(CELL_TIMEOUT), "--timeout", str(NOTEBOOK_TIMEOUT),
                         "--sandbox", SANDBOX])
        sam_result = sam.result()
    seconds = time.monotonic() - started
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        grades = {(r["student"], r["exercise"]): r for r in csv.DictReader(handle)}
    with open(out / "ex_toy.csv", newline="", encoding="utf-8") as handle:
        toy_rows = list(csv.DictReader(handle))
    return ClassRun(out, code, stdout.getvalue(), stderr.getvalue(), seconds, grades, toy_rows, pid_files, sam_result)


def points(run: ClassRun, student: str) -> tuple[str, str, str, str]:
    row = run.toy(student)
    return row["c_add"], row["c_mean"], row["c_mean_empty"], row["total"]


slow = pytest.mark.slow


# --- the pattern every real exercise must pass ------------------------------------------------------

@slow
def test_blank_copy_scores_zero_and_solution_full_marks(tmp_path: Path) -> None:
    blank_result, solution_result = check_exercise(TOY, tmp_path, cell_timeout=30, timeout=NOTEBOOK_TIMEOUT * 2,
                                                   sandbox=SANDBOX)
    assert blank_result.status == "graded", blank_result
    assert [c.points for c in blank_result.checks] == [0, 0, 0]
    assert all("NotImplementedError" in c.message for c in blank_result.checks)
    assert solution_result.status == "graded", solution_result
    assert solution_result.total == solution_result.max_points == 5
    assert all(c.passed and not c.message for c in solution_result.checks)


@slow
def test_the_class_run_completes_with_one_row_per_submission(class_run: ClassRun) -> None:
    assert class_run.code == 0, class_run.stderr
    expected = {(s, "ex_toy") for s in ("alice", "bob", "carol", "dave", "erin", "mike", "nina", "frank", "gina",
                                        "hank", "patty", "rita", "victor", "ivan", "judy", "ken", "oscar", "quinn")}
    expected |= {("erin", "ex_naive_helper"), ("lara", "ex_unknown")}
    assert set(class_run.grades) == expected
    assert "[20/20]" in class_run.stderr  # progress, one line per finished submission
    assert "skipping 1 file(s) that are not notebooks" in class_run.stderr


@slow
def test_solution_and_blank_through_the_command(class_run: ClassRun) -> None:
    assert points(class_run, "alice") == ("1", "2", "2", "5")
    assert class_run.row("alice")["status"] == "graded"
    assert points(class_run, "bob") == ("0", "0", "0", "0")
    assert class_run.row("bob")["status"] == "graded"


# --- tampering ------------------------------------------------------------------------------------

@slow
def test_a_check_replaced_by_pass_is_restored(class_run: ClassRun) -> None:
    assert points(class_run, "carol") == ("1", "0", "0", "1")
    feedback = class_run.feedback("carol")
    assert "check c_mean had been edited; the original was restored" in feedback
    assert "mean([1, 2, 3, 4]) should be 2.5, got 0" in feedback


@slow
def test_a_deleted_check_is_put_back_with_its_hidden_tests(class_run: ClassRun) -> None:
    assert points(class_run, "dave") == ("1", "2", "0", "3")
    feedback = class_run.feedback("dave")
    assert "check c_mean_empty was missing and has been put back" in feedback
    # The hidden tests ran (they fail this mean); the student reads where, never their text (issue 25).
    assert "| c_mean_empty | FAIL | 0 / 2 | AssertionError in a hidden test |" in feedback
    assert "the mean of one value is that value" not in feedback
    executed = nbformat.read(class_run.out / "autograded" / "dave" / "ex_toy.ipynb", as_version=4)
    ids = [grade_id(c) for c in executed.cells]
    assert ids.index("c_mean_empty") == ids.index("c_mean") + 1  # back at its source position
    assert "BEGIN HIDDEN TESTS" in executed.cells[ids.index("c_mean_empty")].source


@slow
def test_redefining_a_helper_cannot_fool_checks_that_import_it(class_run: ClassRun) -> None:
    """The same tampering: the toy check imports isclose itself and fails; the naive one is fooled."""
    assert points(class_run, "erin") == ("1", "0", "0", "1")
    assert "should be 2.5, got 0" in class_run.feedback("erin")
    # The naive check, which calls the setup cell's isclose, is fooled; so is its decoy twin, which no
    # honest answer passes: the row is tampered. The authoring guide still forbids global helpers.
    naive = class_run.row("erin", "ex_naive_helper")
    assert (naive["status"], naive["total"], naive["max"]) == ("tampered", "0", "2"), naive


@slow
def test_added_graded_cells_earn_nothing_and_copies_are_ignored(class_run: ClassRun) -> None:
    assert points(class_run, "mike") == ("1", "2", "2", "5")
    assert class_run.row("mike")["auto_max"] == "5"  # c_bonus's 100 points count nowhere
    feedback = class_run.feedback("mike")
    assert "claims to be a graded check (c_bonus)" in feedback
    assert "a second copy of check c_add" in feedback


@slow
def test_a_check_turned_into_markdown_still_runs(class_run: ClassRun) -> None:
    assert points(class_run, "nina") == ("0", "2", "2", "4")
    assert "check c_add had been changed to a markdown cell; the original was restored" in class_run.feedback("nina")


# --- bad input ------------------------------------------------------------------------------------

@slow
def test_interruptible_infinite_loops_cost_only_their_own_checks(class_run: ClassRun) -> None:
    row = class_run.row("frank")
    assert row["status"] == "graded"
    assert points(class_run, "frank") == ("0", "2", "2", "4")  # mean was defined before its cell looped
    feedback = class_run.feedback("frank")
    assert f"| c_add | FAIL | 0 / 1 | timed out after {CELL_TIMEOUT} s |" in feedback
    assert f"answer cell a_mean failed: timed out after {CELL_TIMEOUT} s" in feedback


@slow
def test_a_loop_that_ignores_interrupts_stops_the_notebook(class_run: ClassRun) -> None:
    row = class_run.row("patty")
    assert row["status"] == "timeout" and "ignored the interrupt" in row["reason"], row
    assert points(class_run, "patty") == ("0", "0", "0", "0")


@slow
def test_kernel_death_scores_the_remaining_checks_zero(class_run: ClassRun) -> None:
    row = class_run.row("gina")
    assert row["status"] == "kernel-died"
    assert "answer cell a_mean" in row["reason"]
    assert points(class_run, "gina") == ("1", "0", "0", "1")  # c_add ran before the death
    assert "| c_mean | FAIL | 0 / 2 | not run: the kernel had died before this check |" in class_run.feedback("gina")


@slow
def test_huge_output_is_capped_and_grading_goes_on(class_run: ClassRun) -> None:
    assert points(class_run, "hank") == ("1", "2", "2", "5")
    executed = class_run.out / "autograded" / "hank" / "ex_toy.ipynb"
    assert executed.stat().st_size < 200_000
    assert "output truncated" in executed.read_text(encoding="utf-8")


@slow
def test_warnings_on_stderr_are_not_failures(class_run: ClassRun) -> None:
    assert points(class_run, "rita") == ("1", "2", "2", "5")


def _alive(pid: int) -> bool:
    psutil = pytest.importorskip("psutil")
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _eventually_dead(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


@slow
def test_notebook_timeout_kills_the_kernel_and_its_children(class_run: ClassRun) -> None:
    sam = class_run.sam
    assert sam.status == "timeout" and f"within {SAM_TIMEOUT} s" in sam.reason, sam
    assert [c.points for c in sam.checks] == [0, 0, 0]
    assert all(c.message == "not run: the notebook timed out before this check" for c in sam.checks)
    kernel_pid, sleeper_pid = map(int, class_run.pid_files["sam"].read_text().split())
    assert sam.kernel_pid == kernel_pid
    assert _eventually_dead(kernel_pid) and _eventually_dead(sleeper_pid)


@slow
def test_student_code_killing_its_parent_costs_only_its_own_marks(class_run: ClassRun) -> None:
    row = class_run.row("victor")
    if SANDBOX == "auto":
        # Its parent is the sandbox's init, which ignores the signal: victor's own cell simply ran.
        assert row["status"] == "graded" and row["total"] == "4", row  # c_add fails: `add` is undefined
        assert not class_run.pid_files["victor"].exists()
    else:  # unsandboxed, it kills its grading worker: an error row, and the class goes on
        assert row["status"] == "error" and "killed by signal 9" in row["reason"], row
        assert row["total"] == "0"
        assert _eventually_dead(int(class_run.pid_files["victor"].read_text()))
    assert len(class_run.grades) > 10  # every other student still has a row


@slow
@pytest.mark.parametrize(("student", "status", "reason"), [
    ("ivan", "invalid", "invalid JSON"),
    ("judy", "invalid", "invalid JSON"),
    ("oscar", "invalid", "file is empty"),
    ("quinn", "invalid", "no 'nbformat' version"),
    ("ken", "empty", "no cells"),
])
def test_unreadable_and_empty_files_get_a_row(class_run: ClassRun, student: str, status: str, reason: str) -> None:
    row = class_run.row(student)
    assert row["status"] == status and reason in row["reason"], row
    assert (row["total"], row["auto_max"]) == ("0", "5")


@slow
def test_a_notebook_for_no_exercise_gets_a_row(class_run: ClassRun) -> None:
    row = class_run.row("lara", "ex_unknown")
    assert row["status"] == "unknown-exercise"
    assert "known: ex_naive_helper, ex_toy" in row["reason"]


# --- the gradebook --------------------------------------------------------------------------------

@slow
def test_per_exercise_csv_header_and_points_row(class_run: ClassRun) -> None:
    with open(class_run.out / "ex_toy.csv", newline="", encoding="utf-8") as handle:
        header, points_row = list(csv.reader(handle))[:2]
    assert header == ["student", "submission", "c_add", "c_mean", "c_mean_empty", "a_explain", "total", "max",
                      "status", "reason"]  # a_explain: the written answer a person grades
    assert points_row == ["(points)", "", "1", "2", "2", "1", "6", "6", "", "points per check"]
    with open(class_run.out / "ex_naive_helper.csv", newline="", encoding="utf-8") as handle:
        assert next(csv.reader(handle))[2:4] == ["c_mean", "total"]
    assert len(class_run.toy_rows) == 1 + 18  # the points row, then every ex_toy submission


@slow
def test_feedback_files_list_every_check_with_its_message(class_run: ClassRun) -> None:
    alice = class_run.feedback("alice")
    assert "**5 / 5**" in alice and "Every check passed." in alice
    bob = class_run.feedback("bob")
    for gid in ("c_add", "c_mean", "c_mean_empty"):
        assert f"| {gid} | FAIL |" in bob
    assert "NotImplementedError" in bob
    for student in ("ivan", "ken", "patty", "victor"):
        assert "Status:" in class_run.feedback(student)
    assert (class_run.out / "feedback" / "lara" / "ex_unknown.md").is_file()


@slow
def test_terminal_summary(class_run: ClassRun) -> None:
    lines = class_run.stdout.splitlines()
    assert lines[0].split() == ["student", "exercise", "score", "status", "reason"]
    assert any(line.split()[:4] == ["alice", "ex_toy", "5/5", "graded"] for line in lines)
    assert "20 row(s):" in class_run.stdout and "1 kernel-died" in class_run.stdout
    # One line names the sandbox; only an unsandboxed run adds the warning.
    assert "sandbox: " in class_run.stderr
    assert ("UNSANDBOXED" in class_run.stderr) == (SANDBOX == "none")


# --- restore, without kernels -----------------------------------------------------------------------

def test_restore_rebuilds_around_the_source() -> None:
    exercise = load_exercise(TOY)
    nb = solved(a_mean=WRONG_MEAN)
    nb.cells.insert(0, nb.cells.pop(index_of(nb, "c_add")))  # moved to the top
    del nb.cells[index_of(nb, "a_explain")]  # an answer deleted
    nb.cells[index_of(nb, "a_add")].metadata["nbgrader"]["grade"] = True  # metadata forged
    nb.cells[index_of(nb, "a_add")].metadata["nbgrader"]["points"] = 50
    scratch = new_code_cell("print('my scratch work')")
    nb.cells.insert(index_of(nb, "a_mean") + 1, scratch)
    restored = restore_checks(exercise, nb)

    ids = [c.grade_id for c in restored.cells]
    # The source's plain Markdown cell (no grade_id) followed a_add in the student's order, so it stays there.
    assert ids == ["intro", "setup", "a_add", None, "c_add", "a_mean", None, "c_mean", "c_mean_empty"]
    assert restored.notebook.cells[6].source == "print('my scratch work')"  # travels with a_mean
    roles = [c.role for c in restored.cells]
    assert roles == ["readonly", "readonly", "answer", "student", "check", "answer", "student", "check", "check"]
    assert restored.cells[2].cell.metadata.nbgrader["grade"] is False  # forged metadata reset to the source's
    assert "points" not in restored.cells[2].cell.metadata.nbgrader
    assert "### BEGIN HIDDEN TESTS" in restored.cells[8].cell.source
    assert any("moved" in n for n in restored.notes) and any("a_explain is missing" in n for n in restored.notes)
    assert restored.check_positions() == {"c_add": 4, "c_mean": 7, "c_mean_empty": 8}


def test_restore_puts_back_deleted_checks_in_place() -> None:
    exercise = load_exercise(TOY)
    nb = blank()
    nb.cells = [c for c in nb.cells if grade_id(c) not in ("c_add", "c_mean_empty", "setup")]
    restored = restore_checks(exercise, nb)
    assert [c.grade_id for c in restored.cells if c.grade_id] == [
        "intro", "setup", "a_add", "c_add", "a_mean", "c_mean", "c_mean_empty", "a_explain"]
    assert sum("was missing and has been put back" in n for n in restored.notes) == 3


def test_restore_handles_a_notebook_with_only_foreign_cells() -> None:
    nb = new_notebook()
    nb.cells = [new_code_cell("x = 1")]
    restored = restore_checks(load_exercise(TOY), nb)
    assert restored.cells[0].role == "student"
    assert [c.grade_id for c in restored.cells if c.role == "check"] == ["c_add", "c_mean", "c_mean_empty"]
    assert sum("is missing" in n for n in restored.notes) == 3


# --- small parts ------------------------------------------------------------------------------------

def test_describe_error_prefers_the_message_then_the_failing_line() -> None:
    assert describe_error("AssertionError", "add(2, 3) should be 5") == "AssertionError: add(2, 3) should be 5"
    traceback = ["\x1b[0;31mAssertionError\x1b[0m", "Cell \x1b[1;32mIn[4], line 2\x1b[0m",
                 "\x1b[1;32m----> 2\x1b[0m \x1b[38;5;28;01massert\x1b[39;00m f(\x1b[38;5;241m1\x1b[39m) == 2"]
    assert describe_error("AssertionError", "", traceback) == "AssertionError at: assert f(1) == 2"
    assert describe_error("KeyboardInterrupt", "") == "KeyboardInterrupt"


def test_feedback_and_summary_formatting() -> None:
    result = SubmissionResult("ann", "ex", "sub/ann/ex.ipynb", "graded", checks=[
        CheckResult("c1", 1.5, 1.5, True), CheckResult("c2", 2, 0, False, "AssertionError: a | b")],
        notes=["answer cell a1 failed: NameError: x"])
    text = feedback_markdown(result)
    assert "**1.5 / 3.5**" in text and "| c2 | FAIL | 0 / 2 | AssertionError: a \\| b |" in text
    assert "## Notes" in text and "NameError" in text
    table = summary_table([result])
    assert "ann" in table and "1.5/3.5" in table and "1 row(s): 1 graded" in table


def test_an_internal_failure_becomes_an_error_row(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def broken(*args: object, **kwargs: object) -> SubmissionResult:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("edumatcher.grading.supervise.grade_one", broken)
    save(solved(), tmp_path / "ann" / "ex_toy.ipynb")
    submissions, _ = discover_submissions([tmp_path])
    (result,) = grade_submissions(submissions, {"ex_toy": load_exercise(TOY)}, sandbox=SANDBOX)
    assert result.status == "error" and "disk on fire" in result.reason
    assert result.total == 0 and result.max_points == 5


def test_grade_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grade", str(tmp_path / "nope.ipynb"), "--source", str(SOURCES)]) == 1
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["grade", str(tmp_path / "empty"), "--source", str(SOURCES)]) == 1
    assert "no submissions found" in capsys.readouterr().err
    assert main(["grade", str(tmp_path / "empty"), "--source", str(tmp_path / "missing")]) == 1
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["grade", str(tmp_path), "--jobs", "0"])


def test_students_are_named_by_their_folder(tmp_path: Path) -> None:
    sub = tmp_path / "submitted"
    for path in (sub / "ann" / "ex_toy.ipynb", sub / "bo" / "ps1" / "ex_naive_helper.ipynb",
                 sub / "cy" / "ex_toy.ipynb", tmp_path / "loose" / "ex_toy.ipynb"):
        save(solved(), path)
    save("x", sub / "ann" / ".ipynb_checkpoints" / "ex_toy-checkpoint.ipynb")
    found, skipped = discover_submissions([sub, tmp_path / "loose" / "ex_toy.ipynb", sub / "ann" / "ex_toy.ipynb",
                                           sub / "cy"])
    assert [(s.student, s.exercise) for s in found] == [
        ("bo", "ex_naive_helper"), ("ann", "ex_toy"), ("cy", "ex_toy"), ("loose", "ex_toy")]
    assert skipped == []
    (only,), _ = discover_submissions([sub / "cy"])
    assert only.student == "cy"
