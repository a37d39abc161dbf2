"""The gradebook (``gradebook.sqlite``) and its exports: rows kept across regrades, manual scores kept,
roster rows, formula-safe CSVs, distinct feedback folders, and any folder name graded end to end."""

from __future__ import annotations

import csv
import os
import subprocess
from pathlib import Path

import pytest
from toy_submissions import SOURCES, grade_command, solved, write

from edumatcher.cli import main
from edumatcher.grading.exercise import find_exercises
from edumatcher.grading.gradebook import Gradebook, printable
from edumatcher.grading.report import csv_cell, export_gradebook
from edumatcher.grading.run_plan import read_roster
from edumatcher.grading.score import CheckResult, SubmissionResult


def toy_result(student: str, points: tuple[float, float, float] = (1, 2, 2), exercise: str = "ex_toy",
               status: str = "graded") -> SubmissionResult:
    tops = (1.0, 2.0, 2.0)
    checks = [CheckResult(gid, top, got, got == top, "" if got == top else "AssertionError: wrong")
              for gid, top, got in zip(("c_add", "c_mean", "c_mean_empty"), tops, points, strict=True)]
    return SubmissionResult(student, exercise, f"submitted/{student}/{exercise}.ipynb", status, checks=checks,
                            notes=["a note"], seconds=1.25)


def read_csv(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_a_row_is_replaced_by_its_regrade_and_manual_scores_survive(tmp_path: Path) -> None:
    with Gradebook.open(tmp_path) as book:
        book.record(toy_result("ann", (0, 0, 0)), digest="old")
        book.record(toy_result("bo"), digest="b")
        book.set_manual("ann", "ex_toy", "a_explain", 1.0, "clear")
        book.record(toy_result("ann"), digest="new")  # the regrade
    with Gradebook.open(tmp_path) as book:  # everything was committed: a fresh connection sees it
        rows = {(r.student, r.exercise): r for r in book.results()}
        assert set(rows) == {("ann", "ex_toy"), ("bo", "ex_toy")}
        assert rows[("ann", "ex_toy")].total == 5 and rows[("ann", "ex_toy")].notes == ["a note"]
        assert [c.grade_id for c in rows[("ann", "ex_toy")].checks] == ["c_add", "c_mean", "c_mean_empty"]
        assert book.digests() == {("ann", "ex_toy"): "new", ("bo", "ex_toy"): "b"}
        assert book.manual_scores() == {("ann", "ex_toy"): {"a_explain": (1.0, "clear")}}


def test_an_interrupted_record_leaves_the_previous_row(tmp_path: Path) -> None:
    broken = toy_result("ann", (0, 0, 0))
    broken.notes = ["fine", object()]  # fails mid-transaction, after the row was replaced (as a Ctrl-C would)
    with Gradebook.open(tmp_path) as book:
        book.record(toy_result("ann"), digest="first")
        with pytest.raises(AttributeError):
            book.record(broken, digest="second")
        assert book.digests() == {("ann", "ex_toy"): "first"} and book.results()[0].total == 5


def test_undecodable_names_are_stored_printable(tmp_path: Path) -> None:
    raw = os.fsdecode(b"st\xff")  # what os.listdir gives for a non-UTF-8 folder name
    assert printable(raw) == "st\\xff" and printable("ann lee") == "ann lee"
    with Gradebook.open(tmp_path) as book:
        book.record(toy_result(raw))
        assert book.results()[0].student == "st\\xff"


def test_exports_fill_the_roster_escape_formulas_and_separate_feedback_folders(tmp_path: Path) -> None:
    exercises = find_exercises(SOURCES)
    with Gradebook.open(tmp_path) as book:
        for student in ("ann lee", "ann_lee", '=HYPERLINK("http://x","y")', "-1+2"):
            book.record(toy_result(student, (1, 0, 2)))
        book.set_roster(["ann lee", "ann_lee", "cy"])
        results = export_gradebook(book, exercises, tmp_path)
    grades = read_csv(tmp_path / "grades.csv")
    header, rows = grades[0], {(r[0], r[1]): dict(zip(grades[0], r, strict=True)) for r in grades[1:]}
    assert header[:8] == ["student", "exercise", "auto_points", "auto_max", "manual_points", "manual_max", "total",
                          "max"]
    # Every roster student has a row for every exercise someone handed in; cy handed nothing in.
    # ex_naive_helper is in the source folder but nobody handed it in: not assigned, no rows.
    for student in ("ann lee", "ann_lee", "cy"):
        assert (student, "ex_toy") in rows and (student, "ex_naive_helper") not in rows
    assert rows[("cy", "ex_toy")]["status"] == "not-submitted" and rows[("cy", "ex_toy")]["total"] == "0"
    # Formula-like text is defused; numbers stay numbers; off-roster rows are graded and flagged.
    assert ("'=HYPERLINK(\"http://x\",\"y\")", "ex_toy") in rows and ("'-1+2", "ex_toy") in rows
    off = rows[("'-1+2", "ex_toy")]
    assert off["auto_points"] == "3" and off["auto_max"] == "5" and "not on the roster" in off["note"]
    assert "not on the roster" not in rows[("ann lee", "ex_toy")]["note"]
    assert len(results) == len(grades) - 1
    totals = read_csv(tmp_path / "totals.csv")
    assert totals[0][0] == "student" and totals[0][-2:] == ["total", "max"]
    # No "(points)" row among the students: what each column is worth is in points.csv.
    assert {r[0] for r in totals[1:]} == {"ann lee", "ann_lee", "'=HYPERLINK(\"http://x\",\"y\")", "'-1+2", "cy"}
    assert read_csv(tmp_path / "points.csv") == [["exercise", "points"], ["ex_toy", "6"], ["total", "6"]]
    assert totals[0][1:-2] == ["ex_toy"]  # the assignment's columns only
    assert next(r for r in totals if r[0] == "cy")[1:-1] == ["0", "0"]
    toy_csv = read_csv(tmp_path / "ex_toy.csv")
    assert toy_csv[1][0] == "(points)" and toy_csv[0][2:5] == ["c_add", "c_mean", "c_mean_empty"]
    folders = {p.name for p in (tmp_path / "feedback").iterdir()}
    assert len(folders) == 5  # "ann lee" and "ann_lee" do not share a folder
    assert csv_cell(-1.5) == "-1.5" and csv_cell("@SUM(A1)") == "'@SUM(A1)" and csv_cell("\tx") == "'\tx"


def test_roster_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "with_header.csv").write_text("Name,Student\nAnn Lee,ann\nBo,bo\n,\n", encoding="utf-8")
    (tmp_path / "plain.csv").write_text("\ufeffann\nbo\nann\n", encoding="utf-8")
    assert read_roster(tmp_path / "with_header.csv") == ["ann", "bo"]
    assert read_roster(tmp_path / "plain.csv") == ["ann", "bo"]
    write(tmp_path / "submitted", "ann", solved())
    (tmp_path / "bad.csv").write_bytes(b"\xff\xfe\x00")
    for roster, message in ((tmp_path / "missing.csv", "cannot read the roster"),
                            (tmp_path / "bad.csv", "cannot read the roster")):
        code = main(["grade", str(tmp_path / "submitted"), "--source", str(SOURCES), "--out", str(tmp_path / "out"),
                     "--roster", str(roster)])
        err = capsys.readouterr().err
        assert code == 1 and err.startswith("Error: ") and message in err and err.count("\n") == 1
    code = main(["grade", str(tmp_path / "submitted"), "--source", str(SOURCES), "--out", str(tmp_path / "out"),
                 "--regrade", "nobody"])
    assert code == 1 and "--regrade nobody: no such submission" in capsys.readouterr().err


@pytest.mark.slow
def test_any_folder_name_is_graded_end_to_end(tmp_path: Path) -> None:
    submitted = tmp_path / "submitted"
    for student in (b"st\xff", b"ann lee", b"ann_lee", b"=cmd|' -C calc'!A0"):
        write(submitted, student, solved())
    out = tmp_path / "gradebook"
    run = subprocess.run(grade_command(submitted, out), capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr
    rows = {r[0]: r for r in read_csv(out / "grades.csv")[1:]}
    assert set(rows) == {"st\\xff", "ann lee", "ann_lee", "'=cmd|' -C calc'!A0"}
    assert all(r[2] == r[3] == "5" and r[8] == "graded" for r in rows.values())
    assert len(list((out / "feedback").iterdir())) == 4
    assert "st\\xff/ex_toy: 5/5 graded" in run.stderr and "class report not written" not in run.stderr
    assert (out / "class_report.html").is_file()


def test_resume_retries_rows_where_the_grader_failed(tmp_path: Path) -> None:
    from edumatcher.grading.run_plan import plan_run
    from edumatcher.grading.submissions import Submission, submission_digest

    path = tmp_path / "ann" / "ex_toy.ipynb"
    path.parent.mkdir()
    path.write_text("{}", encoding="utf-8")
    submission = Submission(path, "ann", "ex_toy")
    recorded = {("ann", "ex_toy"): submission_digest(path)}
    assert plan_run([submission], recorded).todo == []  # same file, graded: kept
    assert plan_run([submission], recorded, retry={("ann", "ex_toy")}).todo == [submission]
