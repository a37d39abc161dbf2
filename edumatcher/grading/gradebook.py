"""The gradebook: every graded submission, committed to ``OUT/gradebook.sqlite`` as it finishes.

The SQLite file (stdlib ``sqlite3``, WAL journal) is the record; the CSVs, feedback files and class
report are exports of it, rewritten in full on every run. One row per (student, exercise): grading
again replaces that row and nothing else, so a stopped or crashed run keeps everything that had
finished, a rerun grades only what is missing or changed (``digest``: sha256 of the graded file),
and regrading one student leaves the others alone. Manual scores live in their own table and
survive any regrade. Each row also keeps ``source_digest``, the version of the exercise it was
graded against (``Exercise.digest``): a rerun grades again every row whose exercise changed since.

Tables::

    rows    (student, exercise) -> status, reason, submission, note, superseded (JSON list),
            seconds, digest, graded_at (UTC, ISO 8601), source_digest, submitted_at (UTC, ISO 8601:
            the file's time, or the time an LMS file name holds), lms_late (the LMS named it late)
    checks  (student, exercise, grade_id) -> position, points, max, passed, message
    notes   (student, exercise, position) -> text
    manual  (student, exercise, grade_id) -> points, comment, updated_at
    roster  student -> position, display, lms (JSON: the LMS export's row)   (the last --roster given)

Schema changes are additive: a newer edumatcher adds columns and tables (``_MIGRATIONS``) and
opens every older gradebook; an older one refuses a newer gradebook with one line.

Typical use::

    book = Gradebook.open("gradebook")
    book.record(result, submission=sub, digest=submission_digest(sub.path))
    rows = book.results()
    book.close()
"""

from __future__ import annotations

import datetime
import json
import os
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edumatcher import CliError

from .score import CheckResult, SubmissionResult

__all__ = ["DATABASE_NAME", "Gradebook", "GradebookEntry", "GradebookError", "printable", "submission_time"]

DATABASE_NAME = "gradebook.sqlite"
_SCHEMA_VERSION = 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rows (
    student    TEXT NOT NULL,
    exercise   TEXT NOT NULL,
    status     TEXT NOT NULL,
    reason     TEXT NOT NULL DEFAULT '',
    submission TEXT NOT NULL DEFAULT '',
    note       TEXT NOT NULL DEFAULT '',
    superseded TEXT NOT NULL DEFAULT '[]',
    seconds    REAL NOT NULL DEFAULT 0,
    digest     TEXT NOT NULL DEFAULT '',
    graded_at  TEXT NOT NULL,
    PRIMARY KEY (student, exercise)
);
CREATE TABLE IF NOT EXISTS checks (
    student  TEXT NOT NULL,
    exercise TEXT NOT NULL,
    grade_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    points   REAL NOT NULL,
    max      REAL NOT NULL,
    passed   INTEGER NOT NULL,
    message  TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (student, exercise, grade_id)
);
CREATE TABLE IF NOT EXISTS notes (
    student  TEXT NOT NULL,
    exercise TEXT NOT NULL,
    position INTEGER NOT NULL,
    text     TEXT NOT NULL,
    PRIMARY KEY (student, exercise, position)
);
CREATE TABLE IF NOT EXISTS manual (
    student    TEXT NOT NULL,
    exercise   TEXT NOT NULL,
    grade_id   TEXT NOT NULL,
    points     REAL NOT NULL,
    comment    TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL,
    PRIMARY KEY (student, exercise, grade_id)
);
CREATE TABLE IF NOT EXISTS roster (
    student  TEXT PRIMARY KEY,
    position INTEGER NOT NULL
);
"""
# What brings a gradebook of version N - 1 to version N (the tables above are version 1's).
_MIGRATIONS = {
    2: "ALTER TABLE rows ADD COLUMN source_digest TEXT NOT NULL DEFAULT ''",
    3: "ALTER TABLE rows ADD COLUMN submitted_at TEXT NOT NULL DEFAULT '';"
       "ALTER TABLE rows ADD COLUMN lms_late INTEGER NOT NULL DEFAULT 0;"
       "ALTER TABLE roster ADD COLUMN display TEXT NOT NULL DEFAULT '';"
       "ALTER TABLE roster ADD COLUMN lms TEXT NOT NULL DEFAULT '{}'",
}


class GradebookError(CliError):
    """The gradebook file cannot be opened or is not a gradebook (printed as one ``Error:`` line)."""


@dataclass
class GradebookEntry:
    """One recorded row with what the CSVs need beyond the result: how it was matched, and when."""

    result: SubmissionResult
    note: str = ""
    superseded: tuple[str, ...] = ()
    digest: str = ""
    graded_at: str = ""
    source_digest: str = ""  # the version of the exercise it was graded against ("" before it was recorded)
    submitted_at: str = ""  # when it was handed in (UTC, ISO 8601; "" when unknown)
    lms_late: bool = False  # the LMS file name said LATE


def printable(text: str) -> str:
    """``text`` as a str that encodes to UTF-8: undecodable file-name bytes become ``\\xff`` escapes.

    Names normally arrive printable from ``submissions``; this keeps the database safe when a raw
    ``os.fsdecode`` name (with surrogate escapes) slips through.

    >>> printable("ann\\udcff")
    'ann\\\\xff'
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return os.fsencode(text).decode("utf-8", errors="backslashreplace")
    except UnicodeError:
        return text.encode("utf-8", errors="backslashreplace").decode("utf-8")


_LMS_LATE = re.compile(r"(?:^|_)late_", re.IGNORECASE)
# Blackboard's names hold the attempt's time: ..._attempt_2026-11-30-12-00-00_...
_LMS_TIME = re.compile(r"_attempt_(\d{4})-(\d\d)-(\d\d)-(\d\d)-(\d\d)-(\d\d)")


def submission_time(path: str | Path) -> tuple[str, bool]:
    """When a file was handed in (UTC, ISO 8601) and whether its LMS file name says LATE.

    The time is the one the file name holds (Blackboard), else the file's modification time (an LMS
    zip keeps each file's upload time); "" when the file cannot be read.
    """
    name = Path(path).name
    late = bool(_LMS_LATE.search(name))
    found = _LMS_TIME.search(name)
    if found:
        stamp = datetime.datetime(*map(int, found.groups()), tzinfo=datetime.timezone.utc)
        return stamp.isoformat(timespec="seconds"), late
    try:
        mtime = os.lstat(path).st_mtime
    except OSError:
        return "", late
    return datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc).isoformat(timespec="seconds"), late


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class Gradebook:
    """``OUT/gradebook.sqlite``: open it, record results one committed transaction each, read them back."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        """Wrap an open connection (use ``Gradebook.open``)."""
        self._db = connection
        self.path = path

    @classmethod
    def open(cls, out_dir: str | Path) -> Gradebook:
        """Open (creating if needed) ``out_dir/gradebook.sqlite``; ``GradebookError`` if it is not a gradebook."""
        out_dir = Path(out_dir)
        path = out_dir / DATABASE_NAME
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            # Autocommit mode: every write below opens its own transaction explicitly.
            db = sqlite3.connect(str(path), timeout=30, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise GradebookError(f"cannot open the gradebook {path}: {exc}") from None
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")  # a committed row survives a power cut, not just a crash
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > _SCHEMA_VERSION:
                raise GradebookError(f"{path} was written by a newer edumatcher (schema {version}); "
                                     f"upgrade edumatcher or use another --out")
            # CREATE ... IF NOT EXISTS: opening an existing gradebook changes nothing.
            db.executescript(_SCHEMA)
            columns = {row[1] for row in db.execute("PRAGMA table_info(rows)")}
            with _transaction(db):
                for target in range(max(version, 1) + 1, _SCHEMA_VERSION + 1):
                    if target == 2 and "source_digest" in columns:
                        continue
                    for statement in _MIGRATIONS[target].split(";"):
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            db.close()
            raise GradebookError(f"{path} is not a readable gradebook ({exc}); move it away or use another --out") \
                from None
        return cls(db, path)

    def record(self, result: SubmissionResult, *, submission: Any | None = None, digest: str = "",
               source_digest: str = "") -> None:
        """Store ``result`` as the row of its (student, exercise), replacing any earlier one; one commit.

        ``submission`` (a ``submissions.Submission``) adds how the file was matched (``note``) and the
        older copies that were not graded (``superseded``); ``source_digest`` is the version of the
        exercise it was graded against (``Exercise.digest``). Manual scores are kept.
        """
        key = (printable(result.student), printable(result.exercise))
        note = printable(str(getattr(submission, "note", "") or ""))
        path = getattr(submission, "path", None)
        submitted_at, lms_late = submission_time(path) if path is not None else ("", False)
        superseded = [printable(str(p)) for p in getattr(submission, "superseded", ()) or ()]
        with _transaction(self._db):
            self._db.execute("DELETE FROM checks WHERE student = ? AND exercise = ?", key)
            self._db.execute("DELETE FROM notes WHERE student = ? AND exercise = ?", key)
            self._db.execute(
                "INSERT OR REPLACE INTO rows (student, exercise, status, reason, submission, note, superseded, "
                "seconds, digest, graded_at, source_digest, submitted_at, lms_late) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*key, printable(result.status), printable(result.reason), printable(str(result.submission)),
                 note, json.dumps(superseded), float(result.seconds or 0.0), digest, _now(), source_digest,
                 submitted_at, int(lms_late)))
            self._db.executemany(
                "INSERT OR REPLACE INTO checks (student, exercise, grade_id, position, points, max, passed, message) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(*key, printable(c.grade_id), i, float(c.points), float(c.max_points), int(bool(c.passed)),
                  printable(c.message or "")) for i, c in enumerate(result.checks)])
            self._db.executemany(
                "INSERT INTO notes (student, exercise, position, text) VALUES (?, ?, ?, ?)",
                [(*key, i, printable(text)) for i, text in enumerate(result.notes)])

    def entries(self) -> list[GradebookEntry]:
        """Every recorded row with its match note, superseded copies, digest and time, by exercise then student."""
        checks: dict[tuple[str, str], list[CheckResult]] = {}
        for student, exercise, gid, points, top, passed, message in self._db.execute(
                "SELECT student, exercise, grade_id, points, max, passed, message FROM checks "
                "ORDER BY student, exercise, position"):
            checks.setdefault((student, exercise), []).append(CheckResult(gid, top, points, bool(passed), message))
        notes: dict[tuple[str, str], list[str]] = {}
        for student, exercise, text in self._db.execute(
                "SELECT student, exercise, text FROM notes ORDER BY student, exercise, position"):
            notes.setdefault((student, exercise), []).append(text)
        entries = []
        for (student, exercise, status, reason, submission, note, superseded, seconds, digest,
             graded_at, source_digest, submitted_at, lms_late) in self._db.execute(
                "SELECT student, exercise, status, reason, submission, note, superseded, seconds, digest, graded_at, "
                "source_digest, submitted_at, lms_late FROM rows ORDER BY exercise, student"):
            key = (student, exercise)
            result = SubmissionResult(student, exercise, submission, status, reason, checks.get(key, []),
                                      notes.get(key, []), seconds)
            entries.append(GradebookEntry(result, note, tuple(json.loads(superseded or "[]")), digest, graded_at,
                                          source_digest, submitted_at, bool(lms_late)))
        return entries

    def results(self) -> list[SubmissionResult]:
        """Every recorded row (one per student+exercise), by exercise then student."""
        return [entry.result for entry in self.entries()]

    def digests(self) -> dict[tuple[str, str], str]:
        """The sha256 recorded for each (student, exercise): what a rerun compares to skip unchanged files."""
        return {(s, e): d for s, e, d in self._db.execute("SELECT student, exercise, digest FROM rows")}

    def source_digests(self) -> dict[tuple[str, str], str]:
        """The exercise version each (student, exercise) row was graded against ("" when not recorded)."""
        return {(s, e): d for s, e, d in self._db.execute("SELECT student, exercise, source_digest FROM rows")}

    def students(self) -> list[str]:
        """Every student with a row or a manual score, in name order."""
        return [s for (s,) in self._db.execute("SELECT student FROM rows UNION SELECT student FROM manual "
                                               "ORDER BY student")]

    def rename_student(self, old: str, new: str) -> None:
        """Move ``old``'s rows, checks, notes and manual scores to ``new`` (the same person, spelled as the
        roster spells them); where ``new`` already has a row for an exercise, that row wins. One commit."""
        old, new = printable(old), printable(new)
        with _transaction(self._db):
            taken = {e for (e,) in self._db.execute("SELECT exercise FROM rows WHERE student = ?", (new,))}
            for (exercise,) in list(self._db.execute("SELECT exercise FROM rows WHERE student = ?", (old,))):
                for table in ("rows", "checks", "notes"):
                    if exercise not in taken:
                        self._db.execute(f"UPDATE {table} SET student = ? WHERE student = ? AND exercise = ?",  # noqa: S608
                                         (new, old, exercise))
                    self._db.execute(f"DELETE FROM {table} WHERE student = ? AND exercise = ?",  # noqa: S608
                                     (old, exercise))
            self._db.execute("UPDATE OR IGNORE manual SET student = ? WHERE student = ?", (new, old))
            self._db.execute("DELETE FROM manual WHERE student = ?", (old,))

    def set_manual(self, student: str, exercise: str, grade_id: str, points: float, comment: str = "") -> None:
        """Store a person's score for one manually graded answer (replacing an earlier one); one commit."""
        with _transaction(self._db):
            self._db.execute(
                "INSERT OR REPLACE INTO manual (student, exercise, grade_id, points, comment, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (printable(student), printable(exercise), printable(grade_id), float(points), printable(comment),
                 _now()))

    def manual_scores(self) -> dict[tuple[str, str], dict[str, tuple[float, str]]]:
        """``{(student, exercise): {grade_id: (points, comment)}}`` for every manual score entered."""
        scores: dict[tuple[str, str], dict[str, tuple[float, str]]] = {}
        for student, exercise, gid, points, comment in self._db.execute(
                "SELECT student, exercise, grade_id, points, comment FROM manual ORDER BY student, exercise, grade_id"):
            scores.setdefault((student, exercise), {})[gid] = (points, comment)
        return scores

    def set_roster(self, students: Iterable[str], details: dict[str, tuple[str, dict[str, str]]] | None = None,
                   ) -> None:
        """Replace the stored roster (kept for later runs that give no ``--roster``); one commit.

        ``details`` maps a student to (display name, the LMS export's row), for the LMS exports."""
        unique = list(dict.fromkeys(printable(s) for s in students))
        details = details or {}
        with _transaction(self._db):
            self._db.execute("DELETE FROM roster")
            self._db.executemany("INSERT INTO roster (student, position, display, lms) VALUES (?, ?, ?, ?)",
                                 [(s, i, printable(details.get(s, ("", {}))[0]),
                                   json.dumps(details.get(s, ("", {}))[1])) for i, s in enumerate(unique)])

    def roster_details(self) -> dict[str, tuple[str, dict[str, str]]]:
        """``{student: (display name, LMS row)}`` of the stored roster ("" and {} when a plain roster was given)."""
        return {s: (d, json.loads(lms or "{}")) for s, d, lms in
                self._db.execute("SELECT student, display, lms FROM roster ORDER BY position")}

    def roster(self) -> list[str]:
        """The stored roster, in its file's order ([] when none was ever given)."""
        return [s for (s,) in self._db.execute("SELECT student FROM roster ORDER BY position")]

    def close(self) -> None:
        """Close the database (everything recorded is already committed)."""
        self._db.close()

    def __enter__(self) -> Gradebook:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` on any exception (Ctrl-C included)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        if not self._db.in_transaction:
            self._db.execute("BEGIN IMMEDIATE")
            self._own = True
        else:
            self._own = False

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if not self._own:
            return
        if kind is None:
            self._db.execute("COMMIT")
        elif self._db.in_transaction:
            self._db.execute("ROLLBACK")
