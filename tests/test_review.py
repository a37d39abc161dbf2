"""``review``: written answers on one page per exercise, a CSV of manual scores, and its import.

No kernels: the gradebook is filled with ``Gradebook.record`` and the answers come from notebooks
written here, so this file runs in a few seconds.
"""

from __future__ import annotations

import copy
import csv
from pathlib import Path

import nbformat
import pytest

from edumatcher.cli import main
from edumatcher.grading.exercise import load_exercise
from edumatcher.grading.gradebook import Gradebook
from edumatcher.grading.notebook_cells import grade_id
from edumatcher.grading.restore import restore_checks
from edumatcher.grading.score import CheckResult, SubmissionResult
from edumatcher.grading.submissions import student_folder_name

FIXTURES = Path(__file__).parent / "fixtures" / "grading"
SOURCES = FIXTURES / "solutions"
BLANK = FIXTURES / "exercises" / "ex_toy.ipynb"
EVIL = "<script>alert('stolen')</script> because **zero** & no length"


def _with_answer(text: str | None) -> nbformat.NotebookNode:
    nb = nbformat.read(BLANK, as_version=4)
    if text is not None:
        for cell in nb.cells:
            if grade_id(cell) == "a_explain":
                cell.source = "Why does `mean` refuse an empty list?\n\n" + text
    return nb


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """A gradebook of three students: ann (answer in her autograded notebook), =cmd (formula-like
    name, answer only at the submission path) and bob (left the answer as released)."""
    out = tmp_path / "gradebook"
    answers = {"ann": EVIL, "=cmd": "Dividing by zero.", "bob": None}
    with Gradebook.open(out) as gradebook:
        for number, (student, text) in enumerate(answers.items()):
            submitted = tmp_path / "submitted" / student_folder_name(student) / "ex_toy.ipynb"
            submitted.parent.mkdir(parents=True)
            nbformat.write(_with_answer(text), submitted)
            if student == "ann":  # the autograded copy is read first; her submitted file says something else
                autograded = out / "autograded" / student_folder_name(student) / "ex_toy.ipynb"
                autograded.parent.mkdir(parents=True)
                nbformat.write(_with_answer(text), autograded)
                nbformat.write(_with_answer("NOT THIS ONE"), submitted)
            checks = [CheckResult("c_add", 1, float(number == 0), number == 0)]
            gradebook.record(SubmissionResult(student, "ex_toy", str(submitted), "graded", checks=checks))
    return out


def _review(book: Path, *extra: str) -> int:
    return main(["review", str(book), "--source", str(SOURCES), *extra])


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_page_shows_every_answer_escaped_with_the_autograde(book: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _review(book) == 0
    page = (book / "review" / "ex_toy.html").read_text(encoding="utf-8")
    # Markdown is rendered; the raw HTML in it stays text (markdown-it with html off, under the CSP).
    assert "<script" not in page.lower() and "&lt;script&gt;alert('stolen')&lt;/script&gt;" in page
    assert "because <strong>zero</strong> &amp; no length" in page
    assert "Content-Security-Policy" in page and "default-src &#x27;none&#x27;" not in page
    assert "Dividing by zero." in page and "NOT THIS ONE" not in page  # autograded copy first
    # the prompt, once (rendered): taken off the answers
    assert page.count("Why does <code>mean</code> refuse an empty list?") == 1
    assert '<div class="answer md"><p>&lt;script&gt;' in page
    assert "Dividing by a length of zero has no meaning." in page  # the model answer, folded
    assert "1/1 (graded)" in page and "0/1 (graded)" in page
    assert "&#x27;=cmd" not in page and "=cmd" in page
    assert not (book / "review" / "ex_naive_helper.html").exists()  # no written answer there
    assert "wrote" in capsys.readouterr().out


def test_csv_lists_every_answer_defused_with_blanks_at_zero(book: Path) -> None:
    assert _review(book) == 0
    rows = _rows(book / "review" / "manual_scores.csv")
    assert [(r["student"], r["grade_id"], r["max_points"], r["points"]) for r in rows] == [
        ("'=cmd", "a_explain", "1", ""), ("ann", "a_explain", "1", ""), ("bob", "a_explain", "1", "0")]
    assert rows[2]["comment"] == "no answer written"


def _fill(path: Path, points: dict[str, str], comment: str = "") -> None:
    rows = _rows(path)
    for row in rows:
        if row["student"] in points:
            row["points"], row["comment"] = points[row["student"]], comment
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_import_round_trip_stores_the_points_and_a_rerun_keeps_them(
        book: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _review(book) == 0
    scores = book / "review" / "manual_scores.csv"
    _fill(scores, {"'=cmd": "1", "ann": "0.5"}, comment="=see me")
    assert _review(book, "--import", str(scores)) == 0
    assert "stored 3 manual score(s)" in capsys.readouterr().out
    with Gradebook.open(book) as gradebook:
        assert gradebook.manual_scores() == {("=cmd", "ex_toy"): {"a_explain": (1.0, "=see me")},
                                             ("ann", "ex_toy"): {"a_explain": (0.5, "=see me")},
                                             ("bob", "ex_toy"): {"a_explain": (0.0, "no answer written")}}
    scores.unlink()
    assert _review(book) == 0  # from the gradebook this time
    again = {r["student"]: (r["points"], r["comment"]) for r in _rows(scores)}
    assert again == {"'=cmd": ("1", "'=see me"), "ann": ("0.5", "'=see me"), "bob": ("0", "no answer written")}
    assert "0.5 / 1" in (book / "review" / "ex_toy.html").read_text(encoding="utf-8")


def test_a_rerun_keeps_what_was_typed_but_not_imported(book: Path) -> None:
    assert _review(book) == 0
    scores = book / "review" / "manual_scores.csv"
    _fill(scores, {"ann": "1"}, comment="good")
    assert _review(book) == 0
    assert {r["student"]: r["points"] for r in _rows(scores)} == {"'=cmd": "", "ann": "1", "bob": "0"}


@pytest.mark.parametrize(("student", "grade", "points", "expected"), [
    ("nobody", "a_explain", "1", "student 'nobody' has no row for ex_toy"),
    ("ann", "a_other", "1", "ex_toy has no question graded by hand called 'a_other'"),
    ("ann", "a_explain", "2", "points 2 is outside 0..1"),
    ("ann", "a_explain", "-1", "points -1 is outside 0..1"),
    ("ann", "a_explain", "nan", "points nan is outside 0..1"),
    ("ann", "a_explain", "lots", "points 'lots' is not a number"),
])
def test_a_bad_row_is_one_error_line_naming_it_and_nothing_is_stored(
        book: Path, capsys: pytest.CaptureFixture[str], student: str, grade: str, points: str, expected: str) -> None:
    scores = book / "scores.csv"
    scores.write_text("student,exercise,grade_id,max_points,points,comment\nbob,ex_toy,a_explain,1,1,\n"
                      f"{student},ex_toy,{grade},1,{points},\n", encoding="utf-8")
    assert _review(book, "--import", str(scores)) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and err.count("\n") == 1 and f"{scores} row 3: {expected}" in err, err
    with Gradebook.open(book) as gradebook:
        assert gradebook.manual_scores() == {}  # bob's good row was not stored either


def test_unknown_exercise_duplicate_rows_and_wrong_columns_are_refused(
        book: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scores = book / "scores.csv"
    for text, expected in [
        ("student,exercise,grade_id,max_points,points,comment\nann,ex_nope,a_explain,1,1,\n", "unknown exercise"),
        ("student,exercise,grade_id,max_points,points,comment\nann,ex_toy,a_explain,1,1,\nann,ex_toy,a_explain,1,0,\n",
         "row 3: ann/ex_toy/a_explain was already given on row 2"),
        ("name,score\nann,1\n", "missing column(s) student, exercise, grade_id"),
    ]:
        scores.write_text(text, encoding="utf-8")
        assert _review(book, "--import", str(scores)) == 1
        err = capsys.readouterr().err
        assert err.startswith("Error: ") and err.count("\n") == 1 and expected in err, err


def test_review_without_a_gradebook_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _review(tmp_path / "nothing") == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and "holds no gradebook" in err and err.count("\n") == 1


def test_restore_keeps_the_students_written_answer_and_trusts_only_the_source_metadata() -> None:
    exercise = load_exercise(SOURCES / "ex_toy.ipynb")
    submission = _with_answer("My own words.")
    for cell in submission.cells:
        if grade_id(cell) == "a_explain":
            cell.metadata.nbgrader["points"] = 99  # the student's metadata is never trusted
    restored = restore_checks(exercise, copy.deepcopy(submission))
    (answer,) = [c for c in restored.cells if c.grade_id == "a_explain"]
    assert answer.role == "answer" and answer.cell.source.endswith("My own words.")
    assert answer.cell.metadata.nbgrader["points"] == 1 and answer.cell.metadata.nbgrader["grade"] is True
    assert "a_explain" not in restored.check_positions()


def test_review_server_saves_a_form_and_refuses_forged_or_foreign_requests(book: Path) -> None:
    """``review --serve`` without a browser: the form's fields stored; a wrong token, another host or a path
    outside the notebooks' folder refused (the browser test is tests/test_term_walkthrough.py)."""
    import http.client
    import json
    import re
    import threading
    import urllib.parse

    from edumatcher.grading.review import write_review
    from edumatcher.grading.review_server import ReviewServer

    write_review(book, SOURCES)
    server = ReviewServer(book, SOURCES)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]

    def request(method: str, path: str, body: str = "", host: str = f"127.0.0.1:{port}") -> http.client.HTTPResponse:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request(method, path, body=body.encode(), headers={
            "Host": host, "Content-Type": "application/x-www-form-urlencoded"})
        return connection.getresponse()

    try:
        page = request("GET", "/review/ex_toy").read().decode()
        token = re.search(r'name="token" value="([^"]+)"', page).group(1)
        keys = dict(re.findall(r'name="(key-\d+)" value="([^"]+)"', page))
        number = next(k for k, v in keys.items() if json.loads(v.replace("&quot;", '"'))[0] == "ann")[4:]
        form = {"token": token, f"key-{number}": json.dumps(["ann", "a_explain"]), f"points-{number}": "0.5",
                f"comment-{number}": "half"}
        answer = request("POST", "/review/ex_toy", urllib.parse.urlencode(form))
        assert answer.status == 303 and "saved=1" in answer.getheader("Location")
        with Gradebook.open(book) as gradebook:
            assert gradebook.manual_scores()[("ann", "ex_toy")] == {"a_explain": (0.5, "half")}
        assert request("POST", "/review/ex_toy", urllib.parse.urlencode({**form, "token": "forged"})).status == 403
        assert request("GET", "/review/ex_toy", host="evil.example:80").status == 403
        too_many = urllib.parse.urlencode({**form, f"points-{number}": "7"})
        assert "error=" in request("POST", "/review/ex_toy", too_many).getheader("Location")
        assert request("GET", "/notebooks/..%2F..%2F/gradebook.sqlite").status == 404
        assert request("GET", "/notebooks/ann/..%2F..%2F..%2Fgradebook.sqlite").status == 404
    finally:
        server.shutdown()
        server.server_close()
