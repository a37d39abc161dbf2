"""Feedback a student receives: one HTML page per student and assignment, and a bundle to upload.

``feedback/<student folder>/<assignment>.html`` (the assignment's name, or ``feedback`` for a
gradebook graded without ``--assignment``) shows the combined total (autograded checks plus the
answers graded by a person, after any late penalty), then each exercise: every check with its
result and message (checks with hidden tests are labelled: the student's own run could not show
them), each written answer's points and comment, and the notes, worded for a student.
``bundles/<student folder>.zip`` holds that page, the Markdown feedback files and the student's
graded notebooks: one file per student to upload to the LMS (Canvas: "Submission comments" or a
"Feedback file"). ``python -m edumatcher feedback GRADEBOOK_DIR --show STUDENT`` prints the page
as text: exactly what the student will read.

The page is static HTML with no scripts and every piece of text escaped.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edumatcher import CliError

__all__ = ["ExerciseFeedback", "StudentFeedback", "hidden_checks", "student_wording", "feedback_page",
           "write_feedback_pages", "page_text", "add_feedback_parser"]

BUNDLES = "bundles"  # GRADEBOOK_DIR/bundles/<student folder>.zip
_CSP = "default-src 'none'; style-src 'unsafe-inline'"
_STYLE = """
body { font: 16px/1.5 system-ui, sans-serif; margin: 2em auto; max-width: 50em; padding: 0 1em; color: #222; }
.total { font-size: 1.4em; } table { border-collapse: collapse; width: 100%; margin: .5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: .4em .6em; text-align: left; vertical-align: top; }
th { background: #eee; } .pass { color: #060; } .fail { color: #a00; } .hidden { font-size: .85em; color: #555; }
"""


@dataclass
class ExerciseFeedback:
    """One exercise of a student's feedback (``result`` is the gradebook row)."""

    result: Any
    exercise: Any
    manual: dict[str, tuple[float, str]]
    late_days: int = 0
    penalty: float = 0.0
    submitted_at: str = ""

    @property
    def manual_max(self) -> float:
        """Points of the answers graded by a person."""
        return float(sum(spec.points for spec in getattr(self.exercise, "manual", ()) or ()))

    @property
    def earned(self) -> float:
        """Autograded plus manual points, before the late penalty."""
        return self.result.total + sum(points for points, _ in self.manual.values())

    @property
    def top(self) -> float:
        """The exercise's maximum (checks plus written answers)."""
        return self.result.max_points + self.manual_max

    @property
    def final(self) -> float:
        """The points after the late penalty."""
        return self.earned * (1.0 - self.penalty)


@dataclass
class StudentFeedback:
    """A student's feedback for one assignment."""

    student: str
    display: str
    assignment: str
    due: str
    exercises: list[ExerciseFeedback]
    file_name: str = "feedback"  # the page's name: the assignment's short name

    @property
    def final(self) -> float:
        """The assignment's points after late penalties."""
        return sum(e.final for e in self.exercises)

    @property
    def top(self) -> float:
        """The assignment's maximum."""
        return sum(e.top for e in self.exercises)


def hidden_checks(exercise: Any) -> set[str]:
    """The grade_ids of the exercise's checks that hold hidden tests."""
    from .notebook_cells import BEGIN_HIDDEN_TESTS, source_text

    cells = exercise.notebook.cells
    return {spec.grade_id for spec in exercise.checks if BEGIN_HIDDEN_TESTS in source_text(cells[spec.cell_index])}


_WORDING = [
    (re.compile(r"^not submitted$"), "nothing was handed in for this exercise"),
    (re.compile(r"^no submission found$"), "nothing was handed in for this exercise"),
    (re.compile(r"^not run: (.*)$"), r"this check did not run: \1"),
    (re.compile(r"^not run$"), "this check did not run (an earlier cell stopped the notebook)"),
    (re.compile(r"\bcell (\d+)\b"), lambda m: f"the cell at position {int(m.group(1)) + 1} of your notebook"),
]


def student_wording(text: str) -> str:
    """A grader's message as a student reads it (no internal cell numbers or matching notes).

    >>> student_wording("not submitted"), student_wording("cell 12 claims to be a graded check")
    ('nothing was handed in for this exercise', 'the cell at position 13 of your notebook claims to be a graded check')
    """
    for pattern, replacement in _WORDING:
        text = pattern.sub(replacement, text)  # type: ignore[arg-type]
    return text


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _n(value: float) -> str:
    return f"{round(value, 2):g}"


def feedback_page(feedback: StudentFeedback, course: str = "") -> str:
    """The HTML page of one student's feedback for one assignment."""
    from .score import reason_for_student

    who = feedback.display or feedback.student
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
             f"<title>Feedback: {_e(feedback.assignment)}, {_e(who)}</title><style>{_STYLE}</style></head><body>",
             f"<h1>{_e(feedback.assignment)}: your feedback</h1>"]
    if course:
        parts.append(f"<p>{_e(course)}</p>")
    parts.append(f"<p>Student: <b>{_e(who)}</b>" + (f" ({_e(feedback.student)})" if feedback.display else "")
                 + (f"<br>Due: {_e(feedback.due)}" if feedback.due else "") + "</p>")
    parts.append(f'<p class="total">Total: <b>{_n(feedback.final)} / {_n(feedback.top)}</b></p>')
    if any(e.penalty for e in feedback.exercises):
        parts.append("<p>The total includes the late penalty shown for each exercise.</p>")
    for item in feedback.exercises:
        r = item.result
        parts.append(f"<h2>{_e(r.exercise)}: {_n(item.final)} / {_n(item.top)}</h2><ul>")
        parts.append(f"<li>Autograded checks: {_n(r.total)} / {_n(r.max_points)}</li>")
        if item.manual_max:
            written = sum(points for points, _ in item.manual.values())
            parts.append("<li>Written answers, graded by a person: "
                         + (f"{_n(written)} / {_n(item.manual_max)}" if item.manual else
                            f"not graded yet (out of {_n(item.manual_max)})") + "</li>")
        if item.submitted_at:
            parts.append(f"<li>Handed in: {_e(item.submitted_at)}</li>")
        if item.late_days:
            parts.append(f"<li>Late: {item.late_days} day(s), {_n(item.penalty * 100)}% of the points deducted "
                         f"(-{_n(item.earned - item.final)})</li>")
        if r.status not in ("graded",):
            parts.append(f"<li>Status: {_e(student_wording(r.status))}"
                         + (f": {_e(student_wording(reason_for_student(r)))}" if r.reason else "") + "</li>")
        parts.append("</ul>")
        hidden = hidden_checks(item.exercise) if item.exercise is not None else set()
        if r.checks:
            parts.append("<table><thead><tr><th>check</th><th>result</th><th>points</th><th>message</th></tr>"
                         "</thead><tbody>")
            for check in r.checks:
                label = (' <span class="hidden">(includes hidden tests: your own run of the notebook '
                         "could not show them)</span>") if check.grade_id in hidden else ""
                verdict = '<span class="pass">passed</span>' if check.passed else '<span class="fail">failed</span>'
                parts.append(f"<tr><td>{_e(check.grade_id)}{label}</td><td>{verdict}</td>"
                             f"<td>{_n(check.points)} / {_n(check.max_points)}</td>"
                             f"<td>{_e(student_wording(check.message or ''))}</td></tr>")
            parts.append("</tbody></table>")
        if item.manual:
            parts.append("<table><thead><tr><th>written answer</th><th>points</th><th>comment</th></tr></thead><tbody>")
            worth = {spec.grade_id: spec.points for spec in getattr(item.exercise, "manual", ()) or ()}
            for gid, (points, comment) in sorted(item.manual.items()):
                parts.append(f"<tr><td>{_e(gid)}</td><td>{_n(points)} / {_n(worth.get(gid, points))}</td>"
                             f"<td>{_e(comment)}</td></tr>")
            parts.append("</tbody></table>")
        if r.notes:
            parts.append("<p>About your notebook:</p><ul>"
                         + "".join(f"<li>{_e(student_wording(n))}</li>" for n in r.notes) + "</ul>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def page_text(page: str) -> str:
    """A feedback page as plain text (what ``feedback --show`` prints)."""
    text = re.sub(r"<(style|title)>.*?</\1>", "", page, flags=re.S)
    text = re.sub(r"</(p|h1|h2|li|tr|table|ul)>|<br>", "\n", text)
    text = re.sub(r"</t[dh]>(?=\s*<t[dh])", " | ", text)
    text = re.sub(r"<[^>]+>", "", text)
    lines = [" ".join(html.unescape(line).split()) for line in text.splitlines()]
    return "\n".join(line for line in lines if line) + "\n"


def write_feedback_pages(out_dir: str | Path, students: Sequence[StudentFeedback], course: str = "",
                         ) -> list[Path]:
    """Write each student's page and bundle under ``out_dir/feedback/``; return the pages written."""
    from .submissions import safe_name, student_folder_name

    root = Path(out_dir) / "feedback"
    pages = []
    for feedback in students:
        folder_name = student_folder_name(feedback.student)
        folder = root / folder_name
        folder.mkdir(parents=True, exist_ok=True)
        page = folder / f"{safe_name(feedback.file_name)}.html"
        page.write_text(feedback_page(feedback, course), encoding="utf-8")
        pages.append(page)
        bundles = Path(out_dir) / BUNDLES
        bundles.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(bundles / f"{folder_name}.zip", "w", zipfile.ZIP_DEFLATED) as bundle:
            bundle.write(page, page.name)
            for markdown in sorted(folder.glob("*.md")):
                bundle.write(markdown, markdown.name)
            graded = Path(out_dir) / "autograded" / folder_name
            for notebook in sorted(graded.glob("*.ipynb")) if graded.is_dir() else ():
                bundle.write(notebook, f"graded/{notebook.name}")
    return pages


# --- the command ---------------------------------------------------------------------------------------

def add_feedback_parser(sub: Any) -> None:
    """Register ``feedback GRADEBOOK_DIR [--show STUDENT]``."""
    parser = sub.add_parser(
        "feedback", help="the feedback students receive: list the pages, or --show one student's page as text",
        description="Every grade and review --import run writes GRADEBOOK_DIR/feedback/<student>/<assignment>.html "
                    "and a bundle GRADEBOOK_DIR/bundles/<student>.zip (the page, the Markdown feedback and the "
                    "graded notebooks) to upload to the LMS. This command lists them, or shows one student's "
                    "page as text: exactly what that student will read.",
        epilog="Example: python -m edumatcher feedback gradebook/a1 --show dlee")
    parser.add_argument("gradebook", metavar="GRADEBOOK_DIR", help="the --out folder of 'grade'")
    parser.add_argument("--show", metavar="STUDENT", default=None, help="print this student's page as text")
    parser.set_defaults(func=_feedback)


def _feedback(args: argparse.Namespace) -> int:
    from .identities import name_key
    from .submissions import student_folder_name

    root = Path(args.gradebook) / "feedback"
    pages = sorted(root.glob("*/*.html")) if root.is_dir() else []
    if not pages:
        raise CliError(f"{root} holds no feedback pages; run python -m edumatcher grade ... --out {args.gradebook}")
    if args.show is None:
        for page in pages:
            print(page)
        print(f"{len(pages)} page(s); bundles to upload: {Path(args.gradebook) / BUNDLES}/<student>.zip", file=sys.stderr)
        return 0
    wanted = student_folder_name(args.show)
    chosen = [p for p in pages if p.parent.name == wanted] or [
        p for p in pages if name_key(p.parent.name) == name_key(args.show)]
    if not chosen:
        raise CliError(f"no feedback for {args.show!r} in {root} (students: "
                       f"{', '.join(sorted({p.parent.name for p in pages})[:10])})")
    for page in chosen:
        print(f"== {page} ==")
        print(page_text(page.read_text(encoding="utf-8")))
    return 0
