"""``python -m edumatcher status``: late work and its penalty, extensions, and one-line mistakes.

No kernels: the gradebook is filled with ``Gradebook.record`` (as tests/test_gradebook.py does) for
files whose times are set, graded as an assignment, and exported as ``grade`` would.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import pytest
from toy_submissions import SOURCES

from edumatcher.cli import main
from edumatcher.grading.exercise import find_exercises
from edumatcher.grading.gradebook import Gradebook
from edumatcher.grading.report import export_gradebook
from edumatcher.grading.score import CheckResult, SubmissionResult
from edumatcher.grading.submissions import Submission
from edumatcher.grading.term import Assignment, save_assignment

DUE = datetime.datetime(2026, 10, 2, 23, 59, tzinfo=datetime.timezone.utc)


def _result(student: str) -> SubmissionResult:
    checks = [CheckResult("c_add", 1.0, 1.0, True), CheckResult("c_mean", 2.0, 2.0, True),
              CheckResult("c_mean_empty", 2.0, 2.0, True)]
    return SubmissionResult(student, "ex_toy", f"submitted/{student}/ex_toy.ipynb", "graded", checks=checks)


@pytest.fixture
def gradebook(tmp_path: Path) -> Path:
    """``gradebook/a1``: ann on time, bo two days late, dlee three days after the due date but within
    his extension, cy on the roster with nothing handed in."""
    root = tmp_path / "gradebook"
    out = root / "a1"
    out.mkdir(parents=True)
    assignment = Assignment("a1", ("ex_toy",), DUE.isoformat(), late_per_day=0.1, late_cap=0.3,
                            extensions={"dlee": (DUE + datetime.timedelta(days=7)).isoformat()})
    save_assignment(assignment, out)
    handed_in = {"ann": DUE - datetime.timedelta(hours=2), "bo": DUE + datetime.timedelta(days=1, hours=5),
                 "dlee": DUE + datetime.timedelta(days=3)}
    with Gradebook.open(out) as book:
        for student, when in handed_in.items():
            path = tmp_path / "submitted" / student / "ex_toy.ipynb"
            path.parent.mkdir(parents=True)
            path.write_text("{}", encoding="utf-8")
            os.utime(path, (when.timestamp(), when.timestamp()))
            book.record(_result(student), submission=Submission(path, student, "ex_toy"))
        book.set_roster(["ann", "bo", "cy", "dlee"])
        export_gradebook(book, find_exercises(SOURCES), out)
    return root


def _lines(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    return {line.split()[1]: line for line in capsys.readouterr().out.splitlines()[1:] if line.startswith("a1 ")}


def test_status_shows_late_work_with_its_penalty_and_the_extension_as_on_time(
        gradebook: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", str(gradebook)]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[1]: line.split() for line in out.splitlines()[1:] if line.startswith("a1 ")}
    assert set(rows) == {"ann", "bo", "cy", "dlee"}
    # assignment, student, exercise, state, submitted_at, days late, penalty, before -> after (the toy has 1
    # point of written answer, not scored here), note
    assert rows["bo"][3] == "late" and rows["bo"][5:10] == ["2", "20%", "5/6", "->", "4/6"]
    assert rows["ann"][3] == "graded" and rows["ann"][5:10] == ["0", "0%", "5/6", "->", "5/6"]
    assert rows["dlee"][3] == "graded" and rows["dlee"][5:7] == ["0", "0%"] and "extension to" in out
    assert rows["cy"][3] == "not-submitted" and rows["cy"][4] == "-"
    footer = out.strip().splitlines()[-1]
    assert footer == ("4 row(s): 2 graded, 1 late, 1 not-submitted; late penalties: -1 point(s); "
                      "1 handed in under an extension")

    assert main(["status", str(gradebook / "a1"), "--student", "BO"]) == 0  # the folder itself; any case
    assert list(_lines(capsys)) == ["bo"]
    assert main(["status", str(gradebook), "--assignment", "a1", "--student", "dlee"]) == 0
    assert list(_lines(capsys)) == ["dlee"]


@pytest.mark.parametrize("argv, said", [
    (["--assignment", "a9"], "no assignment 'a9' graded under"),
    (["--student", "zed"], "no rows for student 'zed'"),
])
def test_status_mistakes_answer_in_one_line(gradebook: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                            said: str) -> None:
    assert main(["status", str(gradebook), *argv]) == 1
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1
    assert main(["status", str(gradebook / "missing")]) == 1
    assert "no such gradebook folder" in capsys.readouterr().err
