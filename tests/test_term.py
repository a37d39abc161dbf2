"""A term's parts one by one: assignments.toml, late penalties, LMS rosters and exports, feedback wording,
the student pyproject, and the instructor's guide kept in step with the course."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from edumatcher.cli import CliError, main
from edumatcher.grading.feedback import page_text, student_wording
from edumatcher.grading.student_tree import student_pyproject
from edumatcher.grading.submissions import Submission
from edumatcher.grading.term import (
    Assignment,
    apply_aliases,
    canvas_import_csv,
    lateness,
    load_course,
    moodle_import_csv,
    read_lms_roster,
)

REPO = Path(__file__).resolve().parent.parent


def test_assignments_file_is_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "assignments.toml"
    path.write_text('[course]\nname = "C"\n[[assignment]]\nname = "a1"\nexercises = ["ex"]\n'
                    'due = "2026-10-02T23:59:00+02:00"\nlate_per_day = 0.25\n', encoding="utf-8")
    course = load_course(path)
    assert course.name == "C" and course.assignments["a1"].late_per_day == 0.25
    path.write_text('[[assignment]]\nname = "a1"\nexercises = ["ex"]\ndue = "2026-10-02 23:59"\n', encoding="utf-8")
    with pytest.raises(CliError, match="no time zone"):
        load_course(path)
    path.write_text('[[assignment]]\nname = "a1"\nexercises = ["ex"]\n', encoding="utf-8")
    with pytest.raises(CliError, match="'due' is missing"):
        load_course(path)


def test_lateness_counts_started_days_caps_and_honours_extensions() -> None:
    a = Assignment("a1", ("ex",), "2026-10-02T23:59:00+02:00", late_per_day=0.2, late_cap=0.5,
                   extensions={"Dan": "2026-10-06T23:59:00+02:00"})
    assert lateness(a, "ann", "2026-10-02T21:00:00+00:00") == (0, 0.0)  # 23:00 in +02:00: on time
    assert lateness(a, "ann", "2026-10-02T22:00:00+00:00") == (1, 0.2)  # one minute late is a day
    assert lateness(a, "ann", "2026-10-20T00:00:00+00:00")[1] == 0.5    # capped
    assert lateness(a, "dan", "2026-10-05T00:00:00+00:00", lms_late=True) == (0, 0.0)  # the extension wins
    assert lateness(None, "ann", "2030-01-01T00:00:00+00:00") == (0, 0.0)


CANVAS = ('Student,ID,SIS User ID,SIS Login ID,Section,HW 1 (55)\n'
          '    Points Possible,,,,,10\n'
          '"Student, Test",999,,,,\n'
          '"Lee, Dan",12345,s4,dlee,A,\n'
          '"Lee, Ann",12300,s1,,A,\n')
MOODLE = ('First name,Last name,ID number,Institution,Department,Email address,Username\n'
          'Dan,Lee,77,,,dan@uni.example,dlee\n')


def test_canvas_and_moodle_exports_are_rosters(tmp_path: Path) -> None:
    (tmp_path / "canvas.csv").write_text(CANVAS, encoding="utf-8")
    entries, kind = read_lms_roster(tmp_path / "canvas.csv")
    assert kind == "canvas" and [e.student for e in entries] == ["dlee"]  # SIS Login ID; Ann has none
    assert entries[0].display == "Dan Lee" and set(entries[0].aliases) == {"leedan", "12345"}
    by_id, _ = read_lms_roster(tmp_path / "canvas.csv", "ID")
    assert [e.student for e in by_id] == ["12345", "12300"]  # no Points Possible row, no test student
    with pytest.raises(CliError, match="no column 'Login'"):
        read_lms_roster(tmp_path / "canvas.csv", "Login")
    (tmp_path / "moodle.csv").write_text(MOODLE, encoding="utf-8")
    entries, kind = read_lms_roster(tmp_path / "moodle.csv")
    assert kind == "moodle" and entries[0].student == "dlee" and entries[0].aliases == ("Dan Lee",)
    (tmp_path / "plain.csv").write_text("student\nann\nbo\n", encoding="utf-8")
    assert [e.student for e in read_lms_roster(tmp_path / "plain.csv")[0]] == ["ann", "bo"]


def test_lms_file_prefixes_become_roster_students(tmp_path: Path) -> None:
    (tmp_path / "canvas.csv").write_text(CANVAS, encoding="utf-8")
    entries, _ = read_lms_roster(tmp_path / "canvas.csv")
    files = [Submission(tmp_path / "leedan_12345_1_ex.ipynb", "leedan", "ex"),
             Submission(tmp_path / "leedan_late_12345_2_other.ipynb", "leedan", "other"),
             Submission(tmp_path / "zed_1_2_ex.ipynb", "zed", "ex")]
    renamed, said = apply_aliases(files, entries)
    assert [s.student for s in renamed] == ["dlee", "dlee", "zed"] and len(said) == 1


def test_lms_import_files_have_one_assignment_column() -> None:
    a = Assignment("a1", ("ex",), "2026-10-02T23:59:00+00:00", title="HW 1 (55)", points=10)
    roster = {"dlee": ("Dan Lee", {"Student": "Lee, Dan", "ID": "12345", "SIS Login ID": "dlee", "Section": "A"})}
    canvas = list(csv.reader(io.StringIO(canvas_import_csv(a, {"dlee": (4.5, 9.0)}, roster))))
    assert canvas == [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "HW 1 (55)"],
                      ["    Points Possible", "", "", "", "", "10"], ["Lee, Dan", "12345", "", "dlee", "A", "5"]]
    moodle = list(csv.reader(io.StringIO(moodle_import_csv(a, {"dlee": (9.0, 9.0)}, roster))))
    assert moodle[0][-1] == "HW 1 (55)" and moodle[1] == ["Dan", "Lee", "", "dlee", "10"]


def test_feedback_is_worded_for_a_student() -> None:
    assert student_wording("not submitted") == "nothing was handed in for this exercise"
    assert "cell 3" not in student_wording("cell 3 claims to be a graded check")
    text = page_text("<h1>A &amp; B</h1><table><tr><td>c1</td><td>passed</td></tr></table>")
    assert text == "A & B\nc1 | passed\n"


def test_student_pyproject_drops_the_nbgrader_extra_and_test_paths() -> None:
    text = student_pyproject((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "nbgrader" not in text and "testpaths" not in text and "[tool.pytest" not in text
    assert "course = [" in text and "[project]" in text


def test_the_instructors_guide_is_in_step_with_the_course(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["guide", "--root", str(REPO), "--check"])
    assert code == 0, capsys.readouterr().err
    guide = (REPO / "site" / "instructors" / "guide.md").read_text(encoding="utf-8")
    assert "## A sample term" in guide and "After this chapter students can:" in guide
    assert "guide" in (REPO / "site" / "instructors" / "index.md").read_text(encoding="utf-8")
