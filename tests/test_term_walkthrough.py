"""Issue 27's walkthrough: an instructor runs a term of five students with two assignments.

The course declares two assignments in ``assignments.toml`` (a due date, a late policy, an
extension); the roster is a Canvas gradebook export (its "Points Possible" row, display names,
SIS logins); the submissions are an honest and a partial one in folders, a blank template, a
Canvas-named flat file of a student with an extension (``leedan_12345_...``: the prefix is not her
login) and a Canvas ``LATE`` file two days after the due date; one student hands in nothing. Both
assignments are graded, the written answers are scored on ``review --serve``'s page in Chromium,
and the term ends with a Canvas-importable CSV, one HTML feedback page per student, the course
totals, and a student tree that is a git repository ready to push.
"""

from __future__ import annotations

import csv
import datetime
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from toy_submissions import SANDBOX, TOY

from edumatcher.grading import notebook_text, release_notebook
from edumatcher.grading.gradebook import Gradebook
from edumatcher.grading.notebook_cells import grade_id

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("EDUMATCHER_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = REPO / "artifacts" / "term"

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DUE = datetime.datetime(2026, 10, 2, 23, 59, tzinfo=datetime.timezone.utc)
CANVAS_EXPORT = """\
Student,ID,SIS User ID,SIS Login ID,Section,Assignment 1 (101),Assignment 2 (102)
    Points Possible,,,,,10,10
"Lee, Ann",12300,s1,ann,Sec A,,
"Bo, Ben",12301,s2,bben,Sec A,,
"Cho, Cy",12302,s3,ccho,Sec A,,
"Lee, Dan",12345,s4,dlee,Sec A,,
"Park, Eve",12346,s5,epark,Sec A,,
"""
ASSIGNMENTS = f"""\
[course]
name = "Toy performance course"
instructor = "Dr. Ada Example"
hand_in = "Upload each exercise notebook to the Canvas assignment."

[[assignment]]
name = "a1"
title = "Assignment 1 (101)"
exercises = ["ex_toy"]
due = "{DUE.isoformat()}"
points = 10
weight = 0.4
late_per_day = 0.1
late_cap = 0.3
[assignment.extensions]
dlee = "{(DUE + datetime.timedelta(days=7)).isoformat()}"

[[assignment]]
name = "a2"
title = "Assignment 2 (102)"
exercises = ["ex_two"]
due = "{(DUE + datetime.timedelta(days=14)).isoformat()}"
points = 10
weight = 0.6
"""


def _notebook(filled: set[str]) -> str:
    """The toy student copy with the answers ``filled`` taken from the source (the rest as released)."""
    source = {grade_id(cell): cell.source for cell in nbformat.read(TOY, as_version=4).cells}
    nb = release_notebook(nbformat.read(TOY, as_version=4))
    for cell in nb.cells:
        if grade_id(cell) == "a_explain" and "a_explain" in filled:
            cell.source = "Why does `mean` refuse an empty list?\n\nDividing by a length of **zero** has no meaning."
        elif grade_id(cell) in filled:
            cell.source = source[grade_id(cell)]
    return notebook_text(nb)


def _put(path: Path, text: str, when: datetime.datetime) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (when.timestamp(), when.timestamp()))


def _run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "edumatcher", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"{argv}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _serve_and_score(course: Path, book: str, scores: list[str], screenshot: Path) -> dict[str, object]:
    """Start ``review --serve``, enter ``scores`` in Chromium (a child process), stop the server."""
    import json

    server = subprocess.Popen([sys.executable, "-m", "edumatcher", "review", book, "--source", "solutions",
                               "--serve"], cwd=course, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline() if server.stdout else ""
        assert "http://127.0.0.1:" in line, f"review --serve said {line!r}; stderr: {server.stderr.read() if server.stderr else ''}"
        url = line[line.index("http://"):].split()[0]
        done = subprocess.run([sys.executable, str(Path(__file__).with_name("term_review_browser.py")), url, "ex_toy",
                               str(screenshot), *scores], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"term_review_browser.py failed:\n{done.stderr[-3000:]}"
        return json.loads(done.stdout)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_term_of_five_students_ends_with_canvas_grades_and_feedback_pages(tmp_path: Path, terminal_summary) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium not found at {CHROMIUM}: `apt-get install chromium` (.ci/run does this)")
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    course = tmp_path / "course"
    (course / "solutions").mkdir(parents=True)
    shutil.copy(TOY, course / "solutions" / "ex_toy.ipynb")
    shutil.copy(TOY, course / "solutions" / "ex_two.ipynb")  # the second assignment's exercise
    (course / "assignments.toml").write_text(ASSIGNMENTS, encoding="utf-8")
    (course / "canvas_export.csv").write_text(CANVAS_EXPORT, encoding="utf-8")

    every = {"a_add", "a_mean", "a_explain"}
    on_time, submitted = DUE - datetime.timedelta(hours=2), course / "submitted"
    _put(submitted / "ann" / "ex_toy.ipynb", _notebook(every), on_time)          # honest
    _put(submitted / "bben" / "ex_toy.ipynb", _notebook({"a_add"}), on_time)     # partial
    _put(submitted / "ccho" / "ex_toy.ipynb", _notebook(set()), on_time)         # the blank template
    # Canvas names: Dan's prefix is his sortable name (not his login); he has an extension.
    _put(submitted / "leedan_12345_67890_ex_toy.ipynb", _notebook(every), DUE + datetime.timedelta(days=3))
    # Eve's file came two days late (Canvas marks it LATE)
    _put(submitted / "parkeve_LATE_12346_67891_ex_toy.ipynb", _notebook(every), DUE + datetime.timedelta(days=1, hours=5))
    for student in ("ann", "bben", "ccho", "dlee", "epark"):
        _put(course / "submitted2" / student / "ex_two.ipynb", _notebook(every if student != "ccho" else set()),
             DUE + datetime.timedelta(days=10))

    graded = _run("grade", "submitted", "--source", "solutions", "--assignment", "a1", "--roster", "canvas_export.csv",
                  "--sandbox", SANDBOX, "--jobs", "2", cwd=course)
    assert "roster: files of 'leedan' are 'dlee'" in graded.stderr
    assert "late: epark/ex_toy: graded, late 2 day(s), penalty 20%" in graded.stdout
    assert "dlee/ex_toy" not in "".join(line for line in graded.stdout.splitlines() if line.startswith("late:"))
    _run("grade", "submitted2", "--source", "solutions", "--assignment", "a2", "--roster", "canvas_export.csv",
         "--sandbox", SANDBOX, "--jobs", "2", cwd=course)
    book = course / "gradebook" / "a1"
    rows = {row["student"]: row for row in _csv(book / "grades.csv")}
    assert sorted(rows) == ["ann", "bben", "ccho", "dlee", "epark"]  # no "leedan", no "(points)" row
    assert rows["epark"]["late_days"] == "2" and rows["epark"]["penalty"] == "0.2"
    assert rows["dlee"]["late_days"] == "0"  # three days after the due date, inside his extension
    assert (book / "points.csv").is_file() and "(points)" not in (book / "totals.csv").read_text(encoding="utf-8")
    report = (book / "class_report.html").read_text(encoding="utf-8")
    assert "1 untouched submission(s)" in report and '<section id="students">' in report
    assert "ex_two" not in report and "No submissions" not in report  # a1's exercises only

    # The written answers, scored in the browser: ccho's blank answer starts at 0 and stays.
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    seen = _serve_and_score(course, "gradebook/a1", ["ann=1:clear", "bben=0.5:half of it", "dlee=1", "epark=1"],
                            SCREENSHOTS / "review_serve.png")
    terminal_summary(f"term walkthrough: the review form after saving: {SCREENSHOTS / 'review_serve.png'}")
    assert seen["banner"] == "Saved 5 score(s) in the gradebook.", seen
    assert seen["values"] == {"ann": "1", "bben": "0.5", "dlee": "1", "epark": "1"}, seen
    assert seen["rendered_markdown"] > 0 and seen["notebook_links"] == 5 and seen["notebook_outputs"] >= 0, seen
    assert not seen["console_errors"], seen
    with Gradebook.open(book) as gradebook:
        manual = gradebook.manual_scores()
    assert manual[("bben", "ex_toy")] == {"a_explain": (0.5, "half of it")}
    assert manual[("ccho", "ex_toy")] == {"a_explain": (0.0, "")}

    # Canvas gets one column of points out of 10: toy = 5 checks + 1 written answer = 6 points.
    canvas = list(csv.reader((book / "canvas_import.csv").open(encoding="utf-8", newline="")))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Assignment 1 (101)"]
    assert canvas[1][0].strip() == "Points Possible" and canvas[1][5] == "10"
    points = {row[3]: float(row[5]) for row in canvas[2:]}
    ids = {row[3]: row[1] for row in canvas[2:]}
    assert ids == {"ann": "12300", "bben": "12301", "ccho": "12302", "dlee": "12345", "epark": "12346"}
    assert points["ann"] == 10 and points["dlee"] == 10 and points["ccho"] == 0
    assert points["epark"] == pytest.approx(10 * 0.8)  # 6/6, 20% off for two days late
    assert 0 < points["bben"] < 10

    # One feedback page per student, what the student reads: the combined total and hidden checks labelled.
    pages = sorted((book / "feedback").glob("*/a1.html"))
    assert [p.parent.name for p in pages] == ["ann", "bben", "ccho", "dlee", "epark"]
    assert all((book / "bundles" / f"{p.parent.name}.zip").is_file() for p in pages)
    shown = _run("feedback", "gradebook/a1", "--show", "epark", cwd=course).stdout
    assert "Total: 4.8 / 6" in shown and "Late: 2 day(s), 20% of the points deducted" in shown
    assert "includes hidden tests" in shown and "Written answers, graded by a person: 1 / 1" in shown
    assert "cell 1" not in shown and "not on the roster" not in shown and "Student: Eve Park (epark)" in shown
    assert "Toy performance course" in shown

    _run("totals", "gradebook", cwd=course)
    by_student = {row["student"]: row for row in _csv(course / "gradebook" / "course_totals.csv")}
    # a1 (weight 0.4): 6/6; a2 (weight 0.6): 5/6, its written answer not scored yet
    assert float(by_student["ann"]["weighted_percent"]) == pytest.approx(90)
    assert float(by_student["ccho"]["weighted_percent"]) == 0

    # The class repository: the course's name, instructor, hand-in rule and due dates, one commit, ready to push.
    released = _run("release", str(REPO / "solutions"), "--student-tree", str(tmp_path / "class-repo"),
                    "--assignments", "assignments.toml", "--binder-repo", "uni-x/perf-2027", cwd=course)
    assert "git -C" in released.stdout and "push" in released.stdout
    tree = tmp_path / "class-repo"
    readme = (tree / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# Toy performance course\n") and "Instructor: Dr. Ada Example" in readme
    assert "| Assignment 1 (101) | `exercises/ex_toy.ipynb` | 2026-10-02T23:59:00+00:00" in readme
    log = subprocess.run(["git", "-C", str(tree), "log", "--oneline"], capture_output=True, text=True, check=True)
    status = subprocess.run(["git", "-C", str(tree), "status", "--porcelain"], capture_output=True, text=True,
                            check=True)
    assert len(log.stdout.splitlines()) == 1 and status.stdout == ""
    assert "'.[course]'" in (tree / "Makefile").read_text(encoding="utf-8")
