"""Scores: what one submission earned, check by check, and why.

A check earns its full points only when a worker saw it run to the end without an exception: the
worker reports ``passed: true`` only when the kernel's reply, the executed cell's outputs and the
grader's own channel all agree (``guarded_checks``), and only the worker writes events. Any
check without such a report (the run timed out, the kernel died, the worker crashed, the file was
unreadable) scores 0, with the reason that applies. There is no partial credit within a check.
A submission whose decoy passed (a twin of a check that no honest answer can pass: ``decoys``)
scores 0 on every check, with status ``tampered`` and a reason naming the twin, for the
instructor to review.

Statuses of a submission row:

=================  ===============================================================
``graded``         every check ran (some may have failed)
``tampered``       a decoy check passed: the checks were made to pass whatever the answer (0 points)
``timeout``        the notebook overran ``--timeout``, or a cell ignored the interrupt
``kernel-died``    the kernel process died (e.g. ``os._exit``); later checks score 0
``invalid``        not a readable notebook (empty file, invalid JSON, not UTF-8, too large)
``empty``          a notebook with no cells
``unknown-exercise`` no source notebook has this file name
``error``          the grader itself failed on this submission (see reason)
=================  ===============================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .exercise import Exercise

__all__ = [
    "GRADED", "TAMPERED", "reason_for_student", "TIMEOUT", "KERNEL_DIED", "INVALID", "EMPTY", "UNKNOWN_EXERCISE", "ERROR",
    "NOT_SUBMITTED",
    "CheckResult", "SubmissionResult", "result_from_events", "result_without_run",
]

GRADED = "graded"
TAMPERED = "tampered"
TIMEOUT = "timeout"
KERNEL_DIED = "kernel-died"
INVALID = "invalid"
EMPTY = "empty"
UNKNOWN_EXERCISE = "unknown-exercise"
ERROR = "error"
NOT_SUBMITTED = "not-submitted"
"""A student with no file for an exercise: the report's row, never a run (``report`` and ``class_report`` both read it)."""


# Why a check has no outcome, by row status; the row's reason holds the details.
_NOT_RUN = {
    TIMEOUT: "not run: the notebook timed out before this check",
    KERNEL_DIED: "not run: the kernel had died before this check",
    ERROR: "not run: the grader failed on this submission",
    INVALID: "not run: the file is not a readable notebook",
    EMPTY: "not run: the notebook has no cells",
    GRADED: "not run",
    UNKNOWN_EXERCISE: "not run",
}
NOT_SCORED = "not scored: the submission is held for review (status tampered)"


@dataclass
class CheckResult:
    """The outcome of one check: points earned out of ``max_points``, and the failure message if any."""

    grade_id: str
    max_points: float
    points: float = 0.0
    passed: bool = False
    message: str = ""


@dataclass
class SubmissionResult:
    """One row of the gradebook: a student's submission for one exercise."""

    student: str
    exercise: str
    submission: str
    status: str
    reason: str = ""
    checks: list[CheckResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    kernel_pid: int | None = None

    @property
    def total(self) -> float:
        """Points earned over all checks."""
        return sum(check.points for check in self.checks)

    @property
    def max_points(self) -> float:
        """Points available over all checks."""
        return sum(check.max_points for check in self.checks)

    def check(self, grade_id: str) -> CheckResult:
        """The result of the check with this grade_id (KeyError if the exercise has none)."""
        for result in self.checks:
            if result.grade_id == grade_id:
                return result
        raise KeyError(grade_id)


def result_without_run(exercise: Exercise | None, student: str, exercise_name: str, submission: str,
                       status: str, reason: str) -> SubmissionResult:
    """A row for a submission that was never executed: every check 0, with ``reason`` as the row's reason."""
    message = _NOT_RUN.get(status, "not run")
    checks = [CheckResult(c.grade_id, c.points, message=message) for c in exercise.checks] if exercise else []
    return SubmissionResult(student, exercise_name, submission, status, reason, checks)


def result_from_events(exercise: Exercise, student: str, submission: str, events: list[dict[str, Any]], *,
                       overran: str | None = None, worker_exit: str | None = None) -> SubmissionResult:
    """Build a row from a worker's event stream (see ``worker``) and how the worker ended.

    ``overran`` is the reason when the supervisor killed the worker on its notebook timeout;
    ``worker_exit`` describes a worker that ended without reporting ``done``. Only ``check`` events
    with ``passed: true`` earn points, and only for check ids the source defines. A ``decoy`` event
    with ``passed: true`` makes the row ``tampered`` whatever else happened: every check scores 0.
    """
    outcomes: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    passed_decoys: list[dict[str, Any]] = []
    status, reason, kernel_pid, done = None, "", None, False
    for event in events:
        kind = event.get("event")
        if kind == "check" and isinstance(event.get("grade_id"), str):
            outcomes.setdefault(event["grade_id"], event)
        elif kind == "decoy" and event.get("passed") is True:
            passed_decoys.append(event)
        elif kind == "note" and isinstance(event.get("text"), str):
            notes.append(event["text"])
        elif kind == "status" and status is None:
            status, reason = str(event.get("status", ERROR)), str(event.get("reason", ""))
        elif kind == "kernel" and isinstance(event.get("pid"), int):
            kernel_pid = event["pid"]
        elif kind == "done":
            done = True
    if overran is not None:
        status, reason = TIMEOUT, overran
    elif status is None and not done:
        status, reason = ERROR, worker_exit or "the grading worker stopped without a result"
    elif status is None:
        status = GRADED
    if passed_decoys:
        first = passed_decoys[0]
        status = TAMPERED
        reason = (f"a decoy of check {first.get('grade_id')} passed ({first.get('what', '')}): no honest answer "
                  "passes it, so the checks were made to pass whatever the answer; review the submission"
                  + (f" ({len(passed_decoys)} decoys passed)" if len(passed_decoys) > 1 else ""))
        checks = [CheckResult(spec.grade_id, spec.points, message=NOT_SCORED) for spec in exercise.checks]
        return SubmissionResult(student, exercise.name, submission, status, reason, checks, notes,
                                kernel_pid=kernel_pid)
    checks = []
    for spec in exercise.checks:
        event = outcomes.get(spec.grade_id)
        if event is not None and event.get("passed") is True:
            checks.append(CheckResult(spec.grade_id, spec.points, spec.points, True))
        elif event is not None:
            checks.append(CheckResult(spec.grade_id, spec.points, message=str(event.get("message", "failed"))))
        else:
            checks.append(CheckResult(spec.grade_id, spec.points, message=_NOT_RUN.get(status, "not run")))
    return SubmissionResult(student, exercise.name, submission, status, reason, checks, notes,
                            kernel_pid=kernel_pid)


def reason_for_student(result: SubmissionResult) -> str:
    """The row's reason as the student reads it: a tampered row's details stay with the instructor."""
    if result.status == TAMPERED:
        return "the checks could not vouch for this submission; your instructor will review it"
    return result.reason
