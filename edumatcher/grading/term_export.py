"""The exports of a gradebook graded as an assignment, and the course-wide gradebook.

``export_term`` runs at the end of every gradebook export (``report.export_gradebook``). It always
writes the feedback pages and bundles (``feedback``). When the folder was graded with
``--assignment`` it also adds, under the gradebook folder:

    grades.csv (three more columns)   submitted_at, late_days, penalty (fraction of the points lost)
    assignment_totals.csv             one row per student: display name, points before and after the
                                      late penalty, maximum, the most days late
    canvas_import.csv                 Canvas gradebook import: Student, ID, SIS User ID, SIS Login ID,
                                      Section and the assignment's column (its points, scaled)
    moodle_import.csv                 Moodle grade import: names, email, username and the grade column

``course_totals(root, course)`` sums the assignments' ``assignment_totals.csv`` with their weights
into ``ROOT/course_totals.csv`` (``python -m edumatcher totals``).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
from pathlib import Path
from typing import Any

from edumatcher import CliError

__all__ = ["ASSIGNMENT_TOTALS", "COURSE_TOTALS", "export_term", "course_totals", "read_grades", "late_lines",
           "add_totals_parser"]

ASSIGNMENT_TOTALS = "assignment_totals.csv"
COURSE_TOTALS = "course_totals.csv"


def _write(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def export_term(book: Any, entries: list[Any], exercises: dict[str, Any], out_dir: str | Path,
                manual: dict[tuple[str, str], dict[str, tuple[float, str]]], assignment: Any | None) -> None:
    """Feedback pages for every student; with an ``assignment``, late penalties and the LMS exports too."""
    from .csv_cells import csv_cell
    from .feedback import ExerciseFeedback, StudentFeedback, write_feedback_pages
    from .score import NOT_SUBMITTED
    from .term import canvas_import_csv, lateness, moodle_import_csv

    out_dir = Path(out_dir)
    roster = book.roster_details()
    order = list(assignment.exercises) if assignment is not None else sorted(exercises)
    per_student: dict[str, list[ExerciseFeedback]] = {}
    late: dict[tuple[str, str], tuple[str, int, float]] = {}
    for entry in entries:
        r = entry.result
        days, penalty = (0, 0.0)
        if r.status != NOT_SUBMITTED:
            days, penalty = lateness(assignment, r.student, entry.submitted_at, entry.lms_late)
        late[(r.student, r.exercise)] = (entry.submitted_at, days, penalty)
        per_student.setdefault(r.student, []).append(ExerciseFeedback(
            r, exercises.get(r.exercise), manual.get((r.student, r.exercise), {}), days, penalty,
            entry.submitted_at if r.status != NOT_SUBMITTED else ""))
    name = assignment.name if assignment is not None else "feedback"
    students = []
    for student, items in sorted(per_student.items()):
        items.sort(key=lambda i: (order.index(i.result.exercise) if i.result.exercise in order else len(order),
                                  i.result.exercise))
        students.append(StudentFeedback(student, roster.get(student, ("", {}))[0], assignment.column
                                        if assignment is not None else name,
                                        assignment.due if assignment is not None else "", items, name))
    write_feedback_pages(out_dir, students, assignment.course if assignment is not None else "")
    if assignment is None:
        return
    grades = out_dir / "grades.csv"
    with open(grades, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    for number, row in enumerate(rows):
        if number == 0:
            writer.writerow([*row, "submitted_at", "late_days", "penalty"])
            continue
        student = next((s for s in per_student if csv_cell(s) == row[0]), row[0])
        submitted_at, days, penalty = late.get((student, row[1]), ("", 0, 0.0))
        writer.writerow([*row, submitted_at, days, f"{penalty:g}"])
    _write(grades, buffer.getvalue())
    final = {f.student: (f.final, f.top) for f in students}
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", "display", "points", "final", "max", "late_days"])
    for f in students:
        writer.writerow([csv_cell(f.student), csv_cell(f.display), f"{round(sum(e.earned for e in f.exercises), 2):g}",
                         f"{round(f.final, 2):g}", f"{f.top:g}", max((e.late_days for e in f.exercises), default=0)])
    _write(out_dir / ASSIGNMENT_TOTALS, buffer.getvalue())
    _write(out_dir / "canvas_import.csv", canvas_import_csv(assignment, final, roster))
    _write(out_dir / "moodle_import.csv", moodle_import_csv(assignment, final, roster))


def course_totals(root: str | Path, course: Any) -> Path:
    """Write ``root/course_totals.csv``: each assignment's final points and the weighted course percentage.

    An assignment's share is ``weight * final / max``; the course percentage divides the sum by the
    weights of the assignments graded so far (``root/<name>/assignment_totals.csv`` exists)."""
    root = Path(root)
    graded = {}
    for name, assignment in course.assignments.items():
        path = root / name / ASSIGNMENT_TOTALS
        if path.is_file():
            with open(path, newline="", encoding="utf-8") as handle:
                graded[name] = (assignment, {row["student"]: row for row in csv.DictReader(handle)})
    if not graded:
        raise CliError(f"no assignment of the course is graded under {root} (expected {root}/<assignment>/"
                       f"{ASSIGNMENT_TOTALS}; run python -m edumatcher grade --assignment NAME)")
    students = sorted({s for _, rows in graded.values() for s in rows})
    weights = sum(a.weight for a, _ in graded.values())
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", "display", *(f"{n} (of {_top(rows)})" for n, (_, rows) in graded.items()),
                     "weighted_percent"])
    for student in students:
        cells, share, display = [], 0.0, ""
        for assignment, rows in graded.values():
            row = rows.get(student)
            cells.append(row["final"] if row else "0")
            display = display or (row["display"] if row else "")
            top = float(row["max"]) if row else 0.0
            share += assignment.weight * (float(row["final"]) / top if row and top else 0.0)
        writer.writerow([student, display, *cells, f"{round(100 * share / weights, 2) if weights else 0:g}"])
    path = root / COURSE_TOTALS
    _write(path, buffer.getvalue())
    return path


def _top(rows: dict[str, dict[str, str]]) -> str:
    tops = {row["max"] for row in rows.values()}
    return max(tops, key=float) if tops else "0"


def add_totals_parser(sub: Any) -> None:
    """Register ``totals [ROOT] [--assignments FILE]``: the course-wide gradebook."""
    parser = sub.add_parser(
        "totals", help="the course-wide gradebook: every assignment's points and the weighted total",
        description=f"Sum the assignments graded under ROOT (ROOT/<assignment>/{ASSIGNMENT_TOTALS}, written by "
                    f"grade --assignment) with the weights of assignments.toml into ROOT/{COURSE_TOTALS}.",
        epilog="Example: python -m edumatcher totals gradebook --assignments assignments.toml")
    parser.add_argument("root", nargs="?", default="gradebook", help="folder of the assignments' gradebooks")
    parser.add_argument("--assignments", default="assignments.toml", help="the course's assignments file")
    parser.set_defaults(func=_totals)


def _totals(args: argparse.Namespace) -> int:
    from .term import load_course

    path = course_totals(args.root, load_course(args.assignments))
    with open(path, encoding="utf-8") as handle:
        print(handle.read(), end="")
    print(f"wrote {path}")
    return 0


def read_grades(out_dir: str | Path) -> list[dict[str, str]] | None:
    """The rows of ``out_dir/grades.csv`` as written by the exports (cells as stored), or None without one."""
    path = Path(out_dir) / "grades.csv"
    if not path.is_file():
        return None
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def late_lines(out_dir: str | Path) -> list[str]:
    """One terminal line per late row of an assignment's ``grades.csv`` (status, days late, penalty)."""
    rows = [row for row in read_grades(out_dir) or [] if row.get("late_days") not in (None, "", "0")]
    return [f"late: {row['student']}/{row['exercise']}: {row['status']}, late {row['late_days']} day(s), penalty "
            f"{float(row['penalty']) * 100:g}% (handed in {row['submitted_at']})" for row in rows]
