"""A term: the course's assignments (``assignments.toml``), late work, LMS rosters and grade exports.

The instructor declares the assignments once, in ``assignments.toml`` at the repository's root::

    [course]
    name = "Python performance engineering"
    instructor = "Dr. Ada Example"
    hand_in = "Upload each exercise notebook to the Canvas assignment of the same name."

    [[assignment]]
    name = "a1"                                # grade --assignment a1; gradebook/a1/
    title = "Assignment 1"                     # the LMS gradebook column (Canvas: "Assignment 1 (12345)")
    exercises = ["01_next_one_percent", "04_exact_ticks"]
    due = "2026-10-02T23:59:00+02:00"          # ISO 8601 with its time zone
    points = 20                                # what it is worth in the LMS (default: its exercises' points)
    weight = 0.4                               # its share of the course total (default 1)
    late_per_day = 0.1                         # fraction of the points lost per day or part of one late
    late_cap = 0.5                             # never more than this fraction lost
    [assignment.extensions]
    dlee = "2026-10-05T23:59:00+02:00"         # a student's own due date (roster id)

``grade --assignment a1`` grades only its exercises into ``gradebook/a1/`` and writes the assignment
there (``assignment.json``), so every export of that folder (CSVs, class report, review, feedback)
is the assignment's and applies its late policy. Each row keeps its submission time (a time in the
LMS file name, else the file's modification time; an LMS zip keeps upload times) and whether the
LMS file name said ``LATE``; a file named late whose time is not after the due date counts as one
day late, unless the student has an extension.

Rosters: a plain CSV (a ``student`` column or the first one), or a Canvas or Moodle gradebook
export (recognised by its columns): ``--roster-id COLUMN`` chooses the identity column (Canvas:
``SIS Login ID``, else ``ID``; Moodle: ``Username``, else ``Email address``), Canvas's ``Points
Possible`` row is skipped, display names are kept, and the names an LMS puts in downloaded file
names (Canvas ``leedan_12345_...``: sortable name and user id; Moodle ``Dan Lee_...``) are aliases
of that student. ``canvas_import.csv`` and ``moodle_import.csv`` give the grades back, one column.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from edumatcher import CliError

from .identities import name_key

__all__ = [
    "ASSIGNMENTS_FILE", "ASSIGNMENT_JSON", "Assignment", "Course", "RosterEntry", "load_course", "load_assignment",
    "save_assignment", "lateness", "read_lms_roster", "canvas_name_key", "apply_aliases", "canvas_import_csv",
    "moodle_import_csv",
]

ASSIGNMENTS_FILE = "assignments.toml"
ASSIGNMENT_JSON = "assignment.json"
_DAY = 86400.0


@dataclass(frozen=True)
class Assignment:
    """One assignment: its exercises, due date, worth, weight, late policy and extensions."""

    name: str
    exercises: tuple[str, ...]
    due: str  # ISO 8601 with a time zone
    title: str = ""
    points: float | None = None
    weight: float = 1.0
    late_per_day: float = 0.0
    late_cap: float = 1.0
    extensions: dict[str, str] = field(default_factory=dict)
    course: str = ""  # the course's name (shown on the feedback pages)

    @property
    def column(self) -> str:
        """The LMS gradebook column (``title``, else ``name``)."""
        return self.title or self.name

    def due_for(self, student: str) -> datetime.datetime:
        """The due date of ``student`` (their extension when they have one)."""
        by_key = {name_key(k): v for k, v in self.extensions.items()}
        return _when(by_key.get(name_key(student), self.due), f"the due date of {student}")

    def has_extension(self, student: str) -> bool:
        """Whether ``student`` has an extension."""
        return name_key(student) in {name_key(k) for k in self.extensions}


@dataclass
class Course:
    """``assignments.toml``: the course's name, instructor, how to hand in, and its assignments in order."""

    name: str = ""
    instructor: str = ""
    hand_in: str = ""
    assignments: dict[str, Assignment] = field(default_factory=dict)


def _when(text: str, what: str) -> datetime.datetime:
    try:
        value = datetime.datetime.fromisoformat(str(text))
    except ValueError:
        raise CliError(f"{what}: {text!r} is not an ISO 8601 date and time (e.g. 2026-10-02T23:59:00+02:00)") \
            from None
    if value.tzinfo is None:
        raise CliError(f"{what}: {text!r} has no time zone (write e.g. 2026-10-02T23:59:00+02:00 or ...Z)")
    return value


def load_course(path: str | Path = ASSIGNMENTS_FILE) -> Course:
    """Read and check ``assignments.toml``; ``CliError`` (one line) for a missing file or a bad entry."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            raise CliError("reading assignments.toml needs Python 3.11 or the tomli package") from None
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CliError(f"{path}: no such file (declare the assignments there; see python -m edumatcher grade "
                       "--help)") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CliError(f"{path}: cannot be read: {exc}") from None
    info = data.get("course", {})
    course = Course(str(info.get("name", "")), str(info.get("instructor", "")), str(info.get("hand_in", "")))
    for number, raw in enumerate(data.get("assignment", []), 1):
        where = f"{path} assignment {number}"
        try:
            assignment = Assignment(
                name=str(raw["name"]), exercises=tuple(str(e) for e in raw["exercises"]), due=str(raw["due"]),
                title=str(raw.get("title", "")), points=float(raw["points"]) if "points" in raw else None,
                weight=float(raw.get("weight", 1.0)), late_per_day=float(raw.get("late_per_day", 0.0)),
                late_cap=float(raw.get("late_cap", 1.0)),
                extensions={str(k): str(v) for k, v in raw.get("extensions", {}).items()}, course=course.name)
        except KeyError as exc:
            raise CliError(f"{where}: {exc.args[0]!r} is missing (name, exercises and due are needed)") from None
        except (TypeError, ValueError) as exc:
            raise CliError(f"{where}: {exc}") from None
        _when(assignment.due, f"{where} due")
        for student, due in assignment.extensions.items():
            _when(due, f"{where} extension of {student}")
        if not 0 <= assignment.late_per_day <= 1 or not 0 <= assignment.late_cap <= 1 or assignment.weight < 0:
            raise CliError(f"{where}: late_per_day and late_cap are fractions (0..1) and weight is not negative")
        if assignment.name in course.assignments:
            raise CliError(f"{where}: a second assignment named {assignment.name!r}")
        course.assignments[assignment.name] = assignment
    return course


def save_assignment(assignment: Assignment, out_dir: str | Path) -> Path:
    """Write ``out_dir/assignment.json`` (what the exports of that gradebook apply)."""
    path = Path(out_dir) / ASSIGNMENT_JSON
    path.write_text(json.dumps(asdict(assignment), indent=1) + "\n", encoding="utf-8")
    return path


def load_assignment(out_dir: str | Path) -> Assignment | None:
    """The assignment a gradebook folder was graded as, or None (graded without ``--assignment``)."""
    path = Path(out_dir) / ASSIGNMENT_JSON
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    data["exercises"] = tuple(data["exercises"])
    known = {f.name for f in fields(Assignment)}
    return Assignment(**{k: v for k, v in data.items() if k in known})


def lateness(assignment: Assignment | None, student: str, submitted_at: str, lms_late: bool = False,
             ) -> tuple[int, float]:
    """``(days late, fraction of the points lost)``: days count whole or started days after the due date.

    >>> a = Assignment("a1", ("ex",), "2026-10-02T23:59:00+00:00", late_per_day=0.1, late_cap=0.25,
    ...                extensions={"dan": "2026-10-05T23:59:00+00:00"})
    >>> lateness(a, "ann", "2026-10-03T10:00:00+00:00"), lateness(a, "ann", "2026-10-09T10:00:00+00:00")
    ((1, 0.1), (7, 0.25))
    >>> lateness(a, "dan", "2026-10-04T10:00:00+00:00", lms_late=True), lateness(a, "bo", "", lms_late=True)
    ((0, 0.0), (1, 0.1))
    """
    if assignment is None:
        return 0, 0.0
    days = 0
    if submitted_at:
        late_by = (_when(submitted_at, "submission time") - assignment.due_for(student)).total_seconds()
        days = max(0, math.ceil(late_by / _DAY))
    if lms_late and days == 0 and not assignment.has_extension(student):
        days = 1
    return days, min(assignment.late_cap, assignment.late_per_day * days)


# --- rosters from an LMS -------------------------------------------------------------------------------

@dataclass
class RosterEntry:
    """One student of a roster: the id graded under, the display name, the names LMS files use, the LMS row."""

    student: str
    display: str = ""
    aliases: tuple[str, ...] = ()
    lms: dict[str, str] = field(default_factory=dict)


def canvas_name_key(sortable: str) -> str:
    """The prefix Canvas gives a student's downloaded files: the sortable name, lower case, letters only.

    >>> canvas_name_key("Lee, Dan"), canvas_name_key("O'Brien, Zoë")
    ('leedan', 'obrienzoë')
    """
    return "".join(ch for ch in sortable.casefold() if ch.isalnum())


def _kind(header: Sequence[str]) -> str:
    names = set(header)
    if {"Student", "ID"} <= names and ("SIS Login ID" in names or "SIS User ID" in names):
        return "canvas"
    if "First name" in names and ({"Last name", "Surname"} & names):
        return "moodle"
    return "plain"


def read_lms_roster(path: str | Path, id_column: str | None = None) -> tuple[list[RosterEntry], str]:
    """The students of a roster CSV and its kind (``canvas``, ``moodle`` or ``plain``); see the module docstring.

    ``CliError`` (one line) when the file cannot be read, names nobody, or has no ``id_column``.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
        rows = [row for row in csv.reader(io.StringIO(text, newline="")) if any(cell.strip() for cell in row)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CliError(f"cannot read the roster {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not rows:
        raise CliError(f"the roster {path} names no students (expected a 'student' column or one name per line)")
    header = [cell.strip() for cell in rows[0]]
    kind = _kind(header)
    if kind == "plain" and id_column is None:
        from .run_plan import read_roster

        return [RosterEntry(s) for s in read_roster(path)], kind
    if kind == "plain":
        header_rows = rows[1:]
    else:
        header_rows = [r for r in rows[1:] if not r[0].strip().startswith(("Points Possible", "Student, Test"))]
    if id_column is None:
        choices = ("SIS Login ID", "ID") if kind == "canvas" else ("Username", "Email address", "ID number")
        id_column = next((c for c in choices if c in header and any(
            len(r) > header.index(c) and r[header.index(c)].strip() for r in header_rows)), choices[-1])
    if id_column not in header:
        raise CliError(f"the roster {path} has no column {id_column!r} (its columns: {', '.join(header)})")
    column = header.index(id_column)
    entries: list[RosterEntry] = []
    for row in header_rows:
        cells = dict(zip(header, (c.strip() for c in row), strict=False))
        student = cells.get(id_column, "")
        if not student:
            continue
        if kind == "canvas":
            sortable = cells.get("Student", "")
            last, _, first = sortable.partition(",")
            display = f"{first.strip()} {last.strip()}".strip() if first else sortable
            aliases = tuple(a for a in (canvas_name_key(sortable), cells.get("ID", "")) if a)
        elif kind == "moodle":
            display = f"{cells.get('First name', '')} {cells.get('Last name', cells.get('Surname', ''))}".strip()
            aliases = (display,)
        else:
            display, aliases = "", ()
        lms = {k: v for k, v in cells.items() if k in _KEPT_COLUMNS}
        entries.append(RosterEntry(student, display, aliases, lms))
    if not entries:
        raise CliError(f"the roster {path} names no students under its column {header[column]!r}")
    return entries, kind


_KEPT_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section", "First name", "Last name", "Surname",
                 "ID number", "Email address", "Username")
_CANVAS_FILE = re.compile(r"^(?:late_)?(?P<name>[^_]+?)_(?:late_)?(?P<id>\d+)_\d+_", re.IGNORECASE)


def apply_aliases(submissions: Iterable[Any], entries: Sequence[RosterEntry]) -> tuple[list[Any], list[str]]:
    """Submissions whose folder or LMS file prefix is a roster student's alias, renamed to that student.

    A Canvas file's user id (``leedan_12345_...``) wins over its name prefix; returns the submissions
    and one line per renaming (for the terminal)."""
    import dataclasses

    by_alias: dict[str, str] = {}
    for entry in entries:
        for alias in entry.aliases:
            by_alias.setdefault(name_key(alias), entry.student)
    known = {name_key(e.student) for e in entries}
    renamed: list[Any] = []
    said: dict[tuple[str, str], None] = {}
    for item in submissions:
        student = item.student
        if name_key(student) not in known:
            found = _CANVAS_FILE.match(Path(item.path).name)
            target = by_alias.get(name_key(found.group("id"))) if found else None
            target = target or by_alias.get(name_key(student))
            if target is not None:
                said[(student, target)] = None
                item = dataclasses.replace(item, student=target)
        renamed.append(item)
    return renamed, [f"roster: files of {old!r} are {new!r}'s (the LMS's name for them)" for old, new in said]


def _worth(assignment: Assignment, top: float, earned: float) -> float:
    """``earned`` of ``top`` points scaled to the assignment's LMS points (unscaled when it declares none)."""
    if assignment.points is None or top <= 0:
        return earned
    return earned / top * assignment.points


def canvas_import_csv(assignment: Assignment, final: dict[str, tuple[float, float]],
                      roster: dict[str, tuple[str, dict[str, str]]]) -> str:
    """A Canvas gradebook import: ``Student, ID, SIS User ID, SIS Login ID, Section`` and one assignment column.

    ``final`` maps each student to (points after the late penalty, maximum). Canvas matches rows by
    ID (then SIS ids), so roster rows read from a Canvas export come back with their ids."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    columns = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
    writer.writerow([*columns, assignment.column])
    tops = {top for _, top in final.values()}
    possible = assignment.points if assignment.points is not None else (max(tops) if tops else 0.0)
    writer.writerow(["    Points Possible", "", "", "", "", f"{possible:g}"])
    for student, (points, top) in sorted(final.items()):
        display, lms = roster.get(student, ("", {}))
        cells = [lms.get("Student") or display or student, lms.get("ID", ""), lms.get("SIS User ID", ""),
                 lms.get("SIS Login ID", "") or (student if not lms else ""), lms.get("Section", "")]
        writer.writerow([*cells, f"{round(_worth(assignment, top, points), 2):g}"])
    return buffer.getvalue()


def moodle_import_csv(assignment: Assignment, final: dict[str, tuple[float, float]],
                      roster: dict[str, tuple[str, dict[str, str]]]) -> str:
    """A Moodle grade import (Grades > Import > CSV file): an identity column and one grade column.

    Map ``Email address`` (or ``Username``) to the user, and the assignment column to its grade item."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["First name", "Last name", "Email address", "Username", assignment.column])
    for student, (points, top) in sorted(final.items()):
        display, lms = roster.get(student, ("", {}))
        first, _, last = display.partition(" ")
        writer.writerow([lms.get("First name", first), lms.get("Last name", lms.get("Surname", last)),
                         lms.get("Email address", ""), lms.get("Username", student),
                         f"{round(_worth(assignment, top, points), 2):g}"])
    return buffer.getvalue()
