"""Write what grading found: CSV gradebooks, a Markdown feedback file per submission, a terminal table.

Layout under the output folder (``gradebook/`` by default)::

    grades.csv                      one row per submission: student, exercise, total, max, status, reason, submission
    <exercise>.csv                  one per exercise: student, submission, one column per check (its
                                    grade_id), total, max, status, reason; the first data row, student
                                    "(points)", gives each check's worth
    feedback/<student>/<exercise>.md
    autograded/<student>/<exercise>.ipynb   the executed notebook, outputs capped (when it ran)

One CSV per exercise keeps each header exact even when exercises have different checks; grades.csv
is the overview across exercises, including rows for unknown exercises and unreadable files.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path

from .exercise import Exercise
from .score import GRADED, SubmissionResult
from .submissions import safe_name

__all__ = ["POINTS_ROW_STUDENT", "write_gradebook", "feedback_markdown", "write_feedback", "summary_table"]

POINTS_ROW_STUDENT = "(points)"


def _num(value: float) -> str:
    """Points without a needless ``.0``: 2.0 -> '2', 1.5 -> '1.5'."""
    return f"{value:g}"


def write_gradebook(results: list[SubmissionResult], exercises: dict[str, Exercise], out_dir: str | Path) -> list[Path]:
    """Write ``grades.csv`` and one ``<exercise>.csv`` per exercise that has results; return the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ordered = sorted(results, key=lambda r: (r.exercise, r.student, r.submission))
    written = [out_dir / "grades.csv"]
    with open(written[0], "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "exercise", "total", "max", "status", "reason", "submission"])
        for r in ordered:
            writer.writerow([r.student, r.exercise, _num(r.total), _num(r.max_points), r.status, r.reason,
                             r.submission])
    for name, exercise in exercises.items():
        rows = [r for r in ordered if r.exercise == name]
        if not rows:
            continue
        path = out_dir / f"{name}.csv"
        written.append(path)
        ids = [check.grade_id for check in exercise.checks]
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["student", "submission", *ids, "total", "max", "status", "reason"])
            writer.writerow([POINTS_ROW_STUDENT, "", *(_num(c.points) for c in exercise.checks),
                             _num(exercise.max_points), _num(exercise.max_points), "", "points per check"])
            for r in rows:
                earned = {c.grade_id: c.points for c in r.checks}
                writer.writerow([r.student, r.submission, *(_num(earned.get(i, 0.0)) for i in ids),
                                 _num(r.total), _num(r.max_points), r.status, r.reason])
    return written


def feedback_markdown(result: SubmissionResult) -> str:
    """The feedback a student reads: score, status, each check with its message, and the notes."""
    lines = [
        f"# Feedback: {result.exercise}",
        "",
        f"- Student: {result.student}",
        f"- Submission: `{Path(result.submission).name}`",
        f"- Score: **{_num(result.total)} / {_num(result.max_points)}**",
        f"- Status: {result.status}" + (f" ({result.reason})" if result.reason else ""),
        "",
    ]
    if result.checks:
        lines += ["| check | result | points | message |", "| --- | --- | --- | --- |"]
        for check in result.checks:
            verdict = "pass" if check.passed else "FAIL"
            message = check.message.replace("|", "\\|").replace("\n", " ") if check.message else ""
            lines.append(f"| {check.grade_id} | {verdict} | {_num(check.points)} / {_num(check.max_points)} "
                         f"| {message} |")
        lines.append("")
    if result.notes:
        lines += ["## Notes", ""] + [f"- {note}" for note in result.notes] + [""]
    if result.status == GRADED and result.checks and result.total == result.max_points:
        lines += ["Every check passed.", ""]
    return "\n".join(lines)


def write_feedback(results: Iterable[SubmissionResult], out_dir: str | Path) -> list[Path]:
    """Write ``feedback/<student>/<exercise>.md`` for each result (``-2``, ``-3`` suffixes on clashes)."""
    root = Path(out_dir) / "feedback"
    written: list[Path] = []
    for result in results:
        folder = root / safe_name(result.student)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{safe_name(result.exercise)}.md"
        counter = 2
        while path in written:
            path = folder / f"{safe_name(result.exercise)}-{counter}.md"
            counter += 1
        path.write_text(feedback_markdown(result), encoding="utf-8")
        written.append(path)
    return written


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
    lines.append(f"{len(results)} submission(s): " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return "\n".join(line.rstrip() for line in lines)
