"""What one ``grade`` run grades: resume (skip what the gradebook holds), ``--regrade``, ``--roster``.

A submission is graded when the gradebook has no row for its (student, exercise), when the file's
sha256 differs from the one recorded (it changed since it was graded), when its row was graded
against another version of the exercise (``Exercise.digest``: the instructor changed a check), or
when ``--regrade`` names it; with ``--regrade``, the named ones and those graded against another
version are graded. Everything else keeps its recorded row.
"""

from __future__ import annotations

import csv
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from edumatcher import CliError

from .gradebook import printable
from .identities import name_key
from .submissions import Submission, submission_digest

__all__ = ["RunPlan", "plan_run", "parse_regrade", "read_roster"]


@dataclass
class RunPlan:
    """The submissions to grade now, each with the digest to record, and why the others are skipped."""

    todo: list[Submission] = field(default_factory=list)
    # (student, exercise) -> sha256. Not keyed by path: a linked folder can yield one path for several rows.
    digests: dict[tuple[str, str], str] = field(default_factory=dict)
    unchanged: list[Submission] = field(default_factory=list)   # already recorded, same file
    changed: list[Submission] = field(default_factory=list)     # recorded, but the file changed since
    stale: list[Submission] = field(default_factory=list)       # recorded against another version of the exercise


def _key(submission: Submission) -> tuple[str, str]:
    return printable(submission.student), printable(submission.exercise)


def parse_regrade(values: Sequence[str]) -> list[tuple[str, str | None]]:
    """``["ann", "bo/ex1"]`` -> ``[("ann", None), ("bo", "ex1")]`` (a folder name cannot hold ``/``)."""
    selectors: list[tuple[str, str | None]] = []
    for value in values:
        student, _, exercise = value.strip().partition("/")
        if not student:
            raise CliError(f"--regrade {value!r}: expected STUDENT or STUDENT/EXERCISE")
        selectors.append((student, exercise.removesuffix(".ipynb") or None))
    return selectors


def plan_run(submissions: Sequence[Submission], recorded: dict[tuple[str, str], str],
             regrade: Sequence[tuple[str, str | None]] = (), *,
             retry: Collection[tuple[str, str]] = (), recorded_sources: dict[tuple[str, str], str] | None = None,
             sources: dict[str, str] | None = None) -> RunPlan:
    """Decide what to grade; ``recorded`` is ``Gradebook.digests()``. ``CliError`` for a ``--regrade`` that
    names no submission found in the given paths (so a typo does not silently grade nothing).

    ``retry`` names recorded rows to grade again although their file did not change: rows where the
    grader itself failed (status ``error``), which say nothing about the student's work.
    ``recorded_sources`` (``Gradebook.source_digests()``) and ``sources`` (each exercise's current
    ``Exercise.digest``) find rows graded against another version of their exercise: those are
    graded again in every run, ``--regrade`` or not (``plan.stale`` lists them)."""
    plan = RunPlan()
    recorded_sources, sources = recorded_sources or {}, sources or {}
    for submission in submissions:
        # Never reads through a symbolic link (a student's link to /dev/zero would never end).
        plan.digests[_key(submission)] = submission_digest(submission.path)

    def stale(key: tuple[str, str]) -> bool:
        current = sources.get(key[1])
        return key in recorded and current is not None and recorded_sources.get(key, "") != current

    if regrade:
        for student, exercise in regrade:
            chosen = [s for s in submissions
                      if name_key(_key(s)[0]) == name_key(student) and exercise in (None, _key(s)[1])]
            if not chosen:
                what = f"{student}/{exercise}" if exercise else student
                raise CliError(f"--regrade {what}: no such submission in the paths given "
                               f"(students found: {', '.join(sorted({_key(s)[0] for s in submissions})[:10])})")
            plan.todo += [s for s in chosen if s not in plan.todo]
        for submission in submissions:
            if submission not in plan.todo and stale(_key(submission)):
                plan.stale.append(submission)
                plan.todo.append(submission)
        return plan
    for submission in submissions:
        key = _key(submission)
        if key not in recorded or key in retry:
            plan.todo.append(submission)
        elif recorded[key] != plan.digests[key]:
            plan.changed.append(submission)
            plan.todo.append(submission)
        elif stale(key):
            plan.stale.append(submission)
            plan.todo.append(submission)
        else:
            plan.unchanged.append(submission)
    return plan


def read_roster(path: str | Path) -> list[str]:
    """Student names from a roster CSV: its ``student`` column (any case), else its first column.

    Without a ``student`` header every row is a student. ``CliError`` (one line) when the file cannot
    be read or names nobody.
    """
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = [row for row in csv.reader(handle) if any(cell.strip() for cell in row)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CliError(f"cannot read the roster {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not rows:
        raise CliError(f"the roster {path} names no students (expected a 'student' column or one name per line)")
    header = [cell.strip().lower() for cell in rows[0]]
    column, start = (header.index("student"), 1) if "student" in header else (0, 0)
    students = [row[column].strip() for row in rows[start:] if len(row) > column and row[column].strip()]
    if not students:
        raise CliError(f"the roster {path} names no students under its 'student' column")
    return list(dict.fromkeys(students))
