"""``python -m edumatcher status GRADEBOOK_DIR``: where each student stands, late work included.

One line per student and exercise, read from the gradebook's exports (``grades.csv`` through
``term_export.read_grades`` and ``assignment.json`` through ``term.load_assignment``; nothing is
graded or recomputed): the state (``graded``, ``late``, ``not-submitted``, ``tampered``, ...), the
submission time, the days late after any extension, the late penalty and the points before and
after it; a footer counts the states. ``GRADEBOOK_DIR`` is one gradebook folder (``grade --out``)
or the folder of the assignments' gradebooks (``gradebook/`` holding ``a1/``, ``a2/``, ...);
``--assignment NAME`` picks one of those, ``--student S`` one student.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from edumatcher import CliError

__all__ = ["StatusRow", "status_rows", "status_table", "add_status_parser"]

_GRADED = "graded"
_NOT_SUBMITTED = "not-submitted"


class StatusRow:
    """One student's exercise as ``status`` shows it."""

    def __init__(self, assignment: str, row: dict[str, str], extension: str = "") -> None:
        from .csv_cells import csv_text_back

        self.assignment = assignment
        self.student = csv_text_back(row.get("student", ""))
        self.exercise = csv_text_back(row.get("exercise", ""))
        self.status = row.get("status", "")
        self.submitted_at = row.get("submitted_at", "") if self.status != _NOT_SUBMITTED else ""
        self.late_days = int(float(row.get("late_days") or 0))
        self.penalty = float(row.get("penalty") or 0.0)
        self.points = float(row.get("total") or 0.0)
        self.top = float(row.get("max") or 0.0)
        self.extension = extension  # the student's own due date, when they have one

    @property
    def state(self) -> str:
        """``late`` for a graded row handed in late; the gradebook's status otherwise (``, late`` added)."""
        if self.late_days and self.status != _NOT_SUBMITTED:
            return "late" if self.status == _GRADED else f"{self.status}, late"
        return self.status

    @property
    def final(self) -> float:
        """The points after the late penalty (as the feedback pages and LMS exports count them)."""
        return self.points * (1.0 - self.penalty)


def _folders(root: Path, assignment: str | None) -> list[Path]:
    """The gradebook folders to show: ``root`` itself, or its assignments' folders."""
    from .term import load_assignment

    if not root.is_dir():
        raise CliError(f"{root}: no such gradebook folder (run python -m edumatcher grade ... --out {root})")
    graded = sorted(d for d in root.iterdir() if d.is_dir() and (d / "grades.csv").is_file())
    if assignment is not None:
        own = load_assignment(root) if (root / "grades.csv").is_file() else None
        if own is not None and own.name == assignment:
            return [root]
        if (root / assignment / "grades.csv").is_file():
            return [root / assignment]
        names = [d.name for d in graded] or ([own.name] if own is not None else [])
        raise CliError(f"no assignment {assignment!r} graded under {root} (graded: {', '.join(names) or 'none'}; "
                       f"run python -m edumatcher grade --assignment {assignment})")
    if (root / "grades.csv").is_file():
        return [root]
    if not graded:
        raise CliError(f"{root} holds no grades.csv, nor assignment folders with one (run python -m edumatcher "
                       f"grade ... --out {root})")
    return graded


def status_rows(root: str | Path, assignment: str | None = None, student: str | None = None) -> list[StatusRow]:
    """The rows ``status`` shows, in gradebook order; ``CliError`` (one line) for a wrong folder or name."""
    from .identities import name_key
    from .term import load_assignment
    from .term_export import read_grades

    rows: list[StatusRow] = []
    for folder in _folders(Path(root), assignment):
        spec = load_assignment(folder)
        name = spec.name if spec is not None else "-"
        for row in read_grades(folder) or []:
            item = StatusRow(name, row)
            if spec is not None and spec.has_extension(item.student):
                item.extension = spec.due_for(item.student).isoformat()
            rows.append(item)
    if student is not None:
        chosen = [r for r in rows if name_key(r.student) == name_key(student)]
        if not chosen:
            known = sorted({r.student for r in rows})
            raise CliError(f"no rows for student {student!r} under {root} (students: {', '.join(known[:10])}"
                           + (", ..." if len(known) > 10 else "") + ")")
        rows = chosen
    return rows


def _n(value: float) -> str:
    return f"{round(value, 2):g}"


def status_table(rows: list[StatusRow]) -> str:
    """The rows as an aligned plain-text table with a footer of counts."""
    table = [("assignment", "student", "exercise", "state", "submitted_at", "days late", "penalty",
              "points (before -> after)", "note")]
    counts: dict[str, int] = {}
    extended = 0
    lost = 0.0
    for r in rows:
        points = f"{_n(r.points)}/{_n(r.top)} -> {_n(r.final)}/{_n(r.top)}"
        note = f"extension to {r.extension}" if r.extension else ""
        table.append((r.assignment, r.student, r.exercise, r.state, r.submitted_at or "-", str(r.late_days),
                      f"{_n(r.penalty * 100)}%", points, note))
        counts[r.state] = counts.get(r.state, 0) + 1
        extended += int(bool(r.extension) and r.status != _NOT_SUBMITTED)
        lost += r.points - r.final
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in table]
    lines.append("")
    lines.append(f"{len(rows)} row(s): " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
                 + f"; late penalties: -{_n(lost)} point(s); {extended} handed in under an extension")
    return "\n".join(lines)


def add_status_parser(sub: Any) -> None:
    """Register ``status GRADEBOOK_DIR [--assignment NAME] [--student S]``."""
    parser = sub.add_parser(
        "status", help="where each student stands: graded, late (days and penalty), not submitted, tampered",
        description="One line per student and exercise of a graded gradebook: its state (graded, late, "
                    "not-submitted, tampered, ...), when it was handed in, the days late after any extension, "
                    "the late penalty, and the points before and after it; a footer with the counts. Read from "
                    "the exports of grade (grades.csv, assignment.json): nothing is graded again.",
        epilog="Examples: python -m edumatcher status gradebook --assignment a1; "
               "python -m edumatcher status gradebook/a1 --student dlee")
    parser.add_argument("gradebook", metavar="GRADEBOOK_DIR",
                        help="a --out folder of 'grade', or the folder of the assignments' gradebooks")
    parser.add_argument("--assignment", metavar="NAME", default=None,
                        help="only this assignment (GRADEBOOK_DIR/NAME, or GRADEBOOK_DIR graded as NAME)")
    parser.add_argument("--student", metavar="S", default=None, help="only this student")
    parser.set_defaults(func=_status)


def _status(args: argparse.Namespace) -> int:
    print(status_table(status_rows(args.gradebook, args.assignment, args.student)))
    return 0
