"""Write what the gradebook holds: CSVs, a Markdown feedback file per row, a terminal table.

``export_gradebook`` rewrites every export from the whole database (``gradebook.sqlite``) on each
run, so a run that graded one student still writes everyone's rows. Layout under the output folder
(``gradebook/`` by default)::

    gradebook.sqlite                the record (see ``gradebook``); everything below is exported from it
    grades.csv                      one row per student+exercise: auto points/max, manual points/max,
                                    total, max, status, reason, note (how the file was matched, "not on
                                    the roster"), superseded (older copies not graded), submission
    <exercise>.csv                  one per exercise: student, submission, one column per check (its
                                    grade_id), one per manually graded answer, total, max, status, reason;
                                    the first data row, student "(points)", gives each column's worth
    totals.csv                      one row per student: each exercise's total, the sum and the maximum
    points.csv                      what each exercise of totals.csv is worth, and the total
    feedback/<student>/<exercise>.md
    feedback/<student>/<assignment>.html    what the student reads (``feedback``), and bundles/<student>.zip
    canvas_import.csv, moodle_import.csv, assignment_totals.csv   graded with --assignment (``term_export``)
    autograded/<student>/<exercise>.ipynb   the executed notebook, outputs capped (when it ran)
    class_report.html               the class summary (``class_report``)

With a roster, every roster student has a row for every exercise of the assignment (``not-submitted``,
0 points when nothing was handed in). The assignment is every exercise of the source folder that at
least one student handed in: ``--source`` usually holds the whole course, and a class that was set
three exercises should not get twelve empty rows each. Text cells that a spreadsheet would run as a formula (starting with ``=``,
``+``, ``-``, ``@``, tab or CR) get a leading ``'``; numbers are written as numbers.
"""

from __future__ import annotations

import csv
import dataclasses
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .csv_cells import csv_cell, csv_text_back
from .exercise import Exercise
from .gradebook import Gradebook, GradebookEntry
from .identities import name_key
from .score import GRADED, NOT_SUBMITTED, CheckResult, SubmissionResult, reason_for_student
from .submissions import safe_name, student_folder_name

__all__ = [
    "POINTS_ROW_STUDENT", "NOT_SUBMITTED", "NOT_ON_ROSTER", "STALE", "csv_cell", "csv_text_back", "export_gradebook", "roster_entries",
    "write_gradebook", "write_totals", "feedback_markdown", "write_feedback", "summary_table",
]

POINTS_ROW_STUDENT = "(points)"
POINTS_NAME = "points.csv"  # what each exercise of totals.csv is worth (no "(points)" row among the students)
NOT_ON_ROSTER = "not on the roster"
STALE = "graded against another version of this exercise: grade its file again"

Manual = dict[tuple[str, str], dict[str, tuple[float, str]]]
Details = dict[tuple[str, str], tuple[str, Sequence[str]]]



def _num(value: float) -> str:
    """Points without a needless ``.0``: 2.0 -> '2', 1.5 -> '1.5'."""
    return f"{value:g}"


def _writerow(writer: Any, cells: Iterable[Any]) -> None:
    writer.writerow([csv_cell(cell) for cell in cells])


def _manual_specs(exercise: Exercise | None) -> list[Any]:
    """The exercise's manually graded answers (``ManualSpec``: grade_id, points), [] before they exist."""
    return list(getattr(exercise, "manual", ()) or ()) if exercise is not None else []


def _manual_cells(result: SubmissionResult, exercise: Exercise | None, manual: Manual) -> tuple[Any, float]:
    """``(manual points cell, manual max)``: the cell is "" while none of the answers has been reviewed."""
    specs = _manual_specs(exercise)
    top = float(sum(spec.points for spec in specs))
    entered = manual.get((result.student, result.exercise), {})
    if not specs and not entered:
        return 0.0, 0.0
    if result.status == NOT_SUBMITTED:
        return 0.0, top
    if not entered:
        return "", top
    return float(sum(points for points, _ in entered.values())), top


def write_gradebook(results: list[SubmissionResult], exercises: dict[str, Exercise], out_dir: str | Path, *,
                    manual: Manual | None = None, details: Details | None = None) -> list[Path]:
    """Write ``grades.csv`` and one ``<exercise>.csv`` per exercise that has results; return the paths.

    ``manual`` is ``Gradebook.manual_scores()``; ``details`` maps (student, exercise) to
    ``(note, superseded paths)``.
    """
    manual, details = manual or {}, details or {}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ordered = sorted(results, key=lambda r: (r.exercise, r.student, r.submission))
    written = [out_dir / "grades.csv"]
    with open(written[0], "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "exercise", "auto_points", "auto_max", "manual_points", "manual_max", "total",
                         "max", "status", "reason", "note", "superseded", "submission"])
        for r in ordered:
            manual_points, manual_max = _manual_cells(r, exercises.get(r.exercise), manual)
            total = r.total + (manual_points if isinstance(manual_points, float) else 0.0)
            note, superseded = details.get((r.student, r.exercise), ("", ()))
            _writerow(writer, [r.student, r.exercise, r.total, r.max_points, manual_points, manual_max, total,
                               r.max_points + manual_max, r.status, r.reason, note, "; ".join(superseded),
                               r.submission])
    for name, exercise in exercises.items():
        rows = [r for r in ordered if r.exercise == name]
        if not rows:
            continue
        path = out_dir / f"{name}.csv"
        written.append(path)
        ids = [check.grade_id for check in exercise.checks]
        specs = _manual_specs(exercise)
        top = exercise.max_points + sum(spec.points for spec in specs)
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            _writerow(writer, ["student", "submission", *ids, *(spec.grade_id for spec in specs), "total", "max",
                               "status", "reason"])
            _writerow(writer, [POINTS_ROW_STUDENT, "", *(c.points for c in exercise.checks),
                               *(spec.points for spec in specs), top, top, "", "points per check"])
            for r in rows:
                earned = {c.grade_id: c.points for c in r.checks}
                entered = manual.get((r.student, r.exercise), {})
                manual_points = [entered[s.grade_id][0] if s.grade_id in entered else "" for s in specs]
                total = r.total + sum(p for p in manual_points if isinstance(p, float))
                _writerow(writer, [r.student, r.submission, *(earned.get(i, 0.0) for i in ids), *manual_points,
                                   total, top, r.status, r.reason])
    return written


def write_totals(results: list[SubmissionResult], exercises: dict[str, Exercise], out_dir: str | Path, *,
                 manual: Manual | None = None) -> Path:
    """Write ``totals.csv``: one row per student, each exercise's total (auto + manual), the sum and the max.

    Columns are the exercises someone handed in (the assignment; ``--source`` may hold more), so the
    max is the assignment's. A cell is empty when the student has no row for that exercise (give
    ``--roster`` to get 0s).
    """
    manual = manual or {}
    names = sorted({r.exercise for r in results if r.exercise in exercises}) or sorted(exercises)
    tops = {n: exercises[n].max_points + sum(s.points for s in _manual_specs(exercises[n])) for n in names}
    per_student: dict[str, dict[str, float]] = {}
    for r in results:
        per_student.setdefault(r.student, {})
        if r.exercise in exercises:
            manual_points, _ = _manual_cells(r, exercises[r.exercise], manual)
            per_student[r.student][r.exercise] = r.total + (manual_points if isinstance(manual_points, float) else 0)
    path = Path(out_dir) / "totals.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        _writerow(writer, ["student", *names, "total", "max"])
        for student in sorted(per_student):
            scores = per_student[student]
            _writerow(writer, [student, *(scores.get(n, "") for n in names), sum(scores.values()),
                               sum(tops.values())])
    with open(Path(out_dir) / POINTS_NAME, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        _writerow(writer, ["exercise", "points"])
        for name in names:
            _writerow(writer, [name, tops[name]])
        _writerow(writer, ["total", sum(tops.values())])
    return path


def feedback_markdown(result: SubmissionResult, *, manual: dict[str, tuple[float, str]] | None = None,
                      note: str = "", superseded: Sequence[str] = ()) -> str:
    """The feedback a student reads: score, status, each check with its message, reviewed answers, notes."""
    lines = [
        f"# Feedback: {result.exercise}",
        "",
        f"- Student: {result.student}",
        f"- Submission: `{Path(result.submission).name}`" if result.submission else "- Submission: none",
        f"- Score: **{_num(result.total)} / {_num(result.max_points)}**"
        + (" (autograded checks)" if manual else ""),
        f"- Status: {result.status}" + (f" ({reason_for_student(result)})" if result.reason else ""),
    ]
    if note:
        lines.append(f"- Matched: {note}")
    if superseded:
        lines.append("- Not graded (an older copy): " + ", ".join(f"`{Path(p).name}`" for p in superseded))
    lines.append("")
    if result.checks:
        lines += ["| check | result | points | message |", "| --- | --- | --- | --- |"]
        for check in result.checks:
            verdict = "pass" if check.passed else "FAIL"
            message = check.message.replace("|", "\\|").replace("\n", " ") if check.message else ""
            lines.append(f"| {check.grade_id} | {verdict} | {_num(check.points)} / {_num(check.max_points)} "
                         f"| {message} |")
        lines.append("")
    if manual:
        lines += ["## Written answers (graded by a person)", "", "| answer | points | comment |", "| --- | --- | --- |"]
        for gid, (points, comment) in sorted(manual.items()):
            lines.append(f"| {gid} | {_num(points)} | {comment.replace('|', chr(92) + '|').replace(chr(10), ' ')} |")
        lines.append("")
    if result.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in result.notes] + [""]
    if result.status == GRADED and result.checks and result.total == result.max_points:
        lines += ["Every check passed.", ""]
    return "\n".join(lines)


def write_feedback(results: Iterable[SubmissionResult], out_dir: str | Path, *, manual: Manual | None = None,
                   details: Details | None = None) -> list[Path]:
    """Write ``feedback/<student folder>/<exercise>.md`` for each result (``-2``, ``-3`` suffixes on clashes).

    The student folder is ``student_folder_name(student)``: distinct students never share a folder.
    """
    manual, details = manual or {}, details or {}
    root = Path(out_dir) / "feedback"
    written: list[Path] = []
    taken: set[Path] = set()
    for result in results:
        folder = root / student_folder_name(result.student)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{safe_name(result.exercise)}.md"
        counter = 2
        while path in taken:
            path = folder / f"{safe_name(result.exercise)}-{counter}.md"
            counter += 1
        note, superseded = details.get((result.student, result.exercise), ("", ()))
        path.write_text(feedback_markdown(result, manual=manual.get((result.student, result.exercise)), note=note,
                                          superseded=superseded), encoding="utf-8")
        taken.add(path)
        written.append(path)
    return written


def roster_entries(entries: list[GradebookEntry], roster: Sequence[str],
                   exercises: dict[str, Exercise], *, all_assigned: bool = False) -> list[GradebookEntry]:
    """``entries`` completed by the roster: a ``not-submitted`` row (0 points) for every roster student and
    assigned exercise without one; rows of students not on the roster are kept and noted (no roster:
    unchanged). Assigned: an exercise of ``exercises`` that some entry is for (all of them if none is)."""
    if not roster:
        return list(entries)
    on_roster = {name_key(student) for student in roster}  # one student however the name is spelled
    have = {(name_key(e.result.student), e.result.exercise) for e in entries}
    assigned = sorted({name for _, name in have if name in exercises}) or sorted(exercises)
    if all_assigned:  # an assignment names its exercises: a roster student gets a row for each
        assigned = sorted(exercises)
    completed = []
    for entry in entries:
        if name_key(entry.result.student) not in on_roster:
            entry = dataclasses.replace(entry, note="; ".join(part for part in (entry.note, NOT_ON_ROSTER) if part))
        completed.append(entry)
    for student in roster:
        for name in assigned:
            if (name_key(student), name) not in have:
                checks = [CheckResult(c.grade_id, c.points, message="not submitted") for c in exercises[name].checks]
                result = SubmissionResult(student, name, "", NOT_SUBMITTED, "no submission found", checks)
                completed.append(GradebookEntry(result))
    return completed


def _mark_stale(entries: list[GradebookEntry], exercises: dict[str, Exercise]) -> list[GradebookEntry]:
    """Entries graded against another version of their exercise, noted as such (``grade`` regrades them
    when their file is among the paths it is given)."""
    marked = []
    for entry in entries:
        exercise = exercises.get(entry.result.exercise)
        if exercise is not None and entry.source_digest != exercise.digest and entry.result.status != NOT_SUBMITTED:
            entry = dataclasses.replace(entry, note="; ".join(part for part in (entry.note, STALE) if part))
        marked.append(entry)
    return marked


def export_gradebook(book: Gradebook, exercises: dict[str, Exercise], out_dir: str | Path) -> list[SubmissionResult]:
    """Rewrite every export (CSVs, totals, feedback, class report) from the whole database; return the rows.

    Called at the end of every ``grade`` run, stopped ones included, and usable after manual scores
    are imported. If the class report fails, one line says so and the other exports stand.
    """
    from .term import load_assignment

    out_dir = Path(out_dir)
    assignment = load_assignment(out_dir)
    if assignment is not None:  # graded as an assignment: its exercises only, each for every roster student
        exercises = {name: ex for name, ex in exercises.items() if name in assignment.exercises}
    entries = roster_entries(_mark_stale(book.entries(), exercises), book.roster(), exercises,
                             all_assigned=assignment is not None)
    if assignment is not None:
        entries = [e for e in entries if e.result.exercise in exercises]
    results = [entry.result for entry in entries]
    details: Details = {(e.result.student, e.result.exercise): (e.note, e.superseded) for e in entries}
    manual = book.manual_scores()
    write_gradebook(results, exercises, out_dir, manual=manual, details=details)
    write_totals(results, exercises, out_dir, manual=manual)
    write_feedback(results, out_dir, manual=manual, details=details)
    from .term_export import export_term

    export_term(book, entries, exercises, out_dir, manual, assignment)
    from .class_report import write_class_report  # matplotlib: imported only when a report is written

    try:
        write_class_report(results, exercises, out_dir / "class_report.html", manual=manual)
    except Exception as exc:  # the CSVs and feedback are written; say what is missing and carry on
        print(f"class report not written: {type(exc).__name__}: {exc}", file=sys.stderr)
    return results


def summary_table(results: list[SubmissionResult], width: int = 60) -> str:
    """A plain-text table of every row plus a count per status, for the terminal."""
    ordered = sorted(results, key=lambda r: (r.exercise, r.student, r.submission))
    rows = [("student", "exercise", "score", "status", "reason")]
    for r in ordered:
        reason = r.reason if len(r.reason) <= width else r.reason[: width - 3] + "..."
        rows.append((r.student, r.exercise, f"{_num(r.total)}/{_num(r.max_points)}", r.status, reason))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4] for row in rows]
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    lines.append("")
    lines.append(f"{len(results)} row(s): " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return "\n".join(line.rstrip() for line in lines)
