"""``review``: written answers graded by people, one HTML page per exercise and a CSV to fill in.

``python -m edumatcher review GRADEBOOK_DIR`` reads the gradebook that ``grade`` wrote and, for each
exercise with manual-grade answers (Markdown cells with ``solution: true, grade: true, points``),
writes ``GRADEBOOK_DIR/review/<exercise>.html``: every question (its prompt, the model answer folded
away) with every student's written answer side by side, their autograde score beside it. Answers
are shown as escaped text and the page forbids scripts (Content-Security-Policy), so nothing a
student typed can run in the grader's browser.

It also writes ``GRADEBOOK_DIR/review/manual_scores.csv`` (student, exercise, grade_id, max_points,
points, comment) to fill in. A rerun keeps what was already typed there (and any score already
imported); an answer left exactly as released starts at 0 ("no answer written"), like nbgrader.
``review GRADEBOOK_DIR --import FILE.csv`` checks every filled row (known student, exercise and
grade_id, 0 <= points <= max) and stores them with ``Gradebook.set_manual``; a bad row stops the
import with one line naming it, before anything is stored. Rows with no points are skipped.

Written answers come from the autograded notebooks ``GRADEBOOK_DIR/autograded/<student folder>/
<exercise>.ipynb`` (else the row's submission path), rebuilt around the source with
``restore_checks`` so a student's own metadata cannot redirect which cell is read.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edumatcher import CliError

__all__ = [
    "CSV_NAME", "CSV_COLUMNS", "WrittenAnswer", "ScoreRow", "question_prompt", "model_answer",
    "collect_answers", "render_page", "write_review", "read_scores", "import_scores",
]

CSV_NAME = "manual_scores.csv"
CSV_COLUMNS = ("student", "exercise", "grade_id", "max_points", "points", "comment")
NO_ANSWER = "no answer written"
# A page for the instructor's browser: inline styles only, no scripts, no requests anywhere.
_CSP = "default-src 'none'; style-src 'unsafe-inline'"


@dataclass
class WrittenAnswer:
    """One student's text for one manual question (``text`` None when no answer cell could be read).

    ``text`` is what the student wrote: the question text the released cell holds around
    ``YOUR ANSWER HERE`` is taken off when the student left it in place.
    """

    student: str
    exercise: str
    grade_id: str
    text: str | None
    blank: bool
    autograde: str
    why_missing: str = ""


@dataclass(frozen=True)
class ScoreRow:
    """One validated row of the scores CSV, ready for ``Gradebook.set_manual``."""

    student: str
    exercise: str
    grade_id: str
    points: float
    comment: str


# --- reading the questions and the answers -----------------------------------------------------------

def question_prompt(exercise: Any, grade_id: str) -> str:
    """The question a manual answer responds to: the Markdown cell just before it, if any, and the
    answer cell's own text outside its solution region (what the student sees around ``YOUR ANSWER HERE``)."""
    from .notebook_cells import BEGIN_SOLUTION, END_SOLUTION, replace_regions, source_text
    from .notebook_cells import grade_id as cell_grade_id

    cells = exercise.notebook.cells
    for index, cell in enumerate(cells):
        if cell_grade_id(cell) != grade_id:
            continue
        parts = []
        if index > 0 and cells[index - 1].cell_type == "markdown":
            parts.append(source_text(cells[index - 1]).strip())
        own = replace_regions(source_text(cell), BEGIN_SOLUTION, END_SOLUTION, lambda indent: []).strip()
        if own:
            parts.append(own)
        return "\n\n".join(part for part in parts if part)
    raise KeyError(grade_id)


def model_answer(exercise: Any, grade_id: str) -> str:
    """The text of the source's solution region(s) of a manual answer (the instructor's model answer)."""
    from .notebook_cells import BEGIN_SOLUTION, END_SOLUTION, find_regions, source_text
    from .notebook_cells import grade_id as cell_grade_id

    for cell in exercise.notebook.cells:
        if cell_grade_id(cell) == grade_id:
            lines = source_text(cell).split("\n")
            return "\n\n".join("\n".join(lines[first + 1:last])
                               for first, last in find_regions("\n".join(lines), BEGIN_SOLUTION, END_SOLUTION)).strip()
    raise KeyError(grade_id)


def _notebook_for(book_dir: Path, result: Any) -> tuple[Path | None, str]:
    from .submissions import student_folder_name

    autograded = book_dir / "autograded" / student_folder_name(result.student) / f"{result.exercise}.ipynb"
    if autograded.is_file():
        return autograded, ""
    submitted = Path(str(result.submission)) if result.submission else None
    if submitted is not None and submitted.is_file():
        return submitted, ""
    return None, f"no notebook to read ({result.status}{': ' + result.reason if result.reason else ''})"


def collect_answers(book_dir: str | Path, exercise: Any, results: Iterable[Any]) -> list[WrittenAnswer]:
    """Every student's written answer to every manual question of ``exercise``, in result then question order.

    ``results`` are the gradebook rows (``SubmissionResult``) of this exercise. O(rows x notebook size).
    """
    from .release import release_notebook
    from .restore import restore_checks
    from .submissions import read_submission

    book_dir = Path(book_dir)
    released = {c.metadata["nbgrader"]["grade_id"]: c.source for c in release_notebook(exercise.notebook).cells
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")}
    answers: list[WrittenAnswer] = []
    for result in results:
        autograde = f"{result.total:g}/{result.max_points:g} ({result.status})"
        path, why = _notebook_for(book_dir, result)
        texts: dict[str, str] = {}
        if path is not None:
            try:
                restored = restore_checks(exercise, read_submission(path, max_bytes=None))
            except Exception as exc:  # an unreadable notebook is one row's problem, not the page's
                why = f"notebook unreadable: {type(exc).__name__}: {exc}"
            else:
                texts = {c.grade_id: c.cell.source for c in restored.cells if c.role == "answer" and c.grade_id}
        for spec in exercise.manual:
            text = texts.get(spec.grade_id)
            missing = why or ("" if text is not None else "the answer cell is missing from the submission")
            blank = text is None or text.strip() == released.get(spec.grade_id, "").strip()
            text = None if text is None else _own_part(text, released.get(spec.grade_id, ""))
            blank = blank or not (text or "").strip()
            answers.append(WrittenAnswer(result.student, result.exercise, spec.grade_id, text, blank, autograde,
                                         missing))
    return answers


def _own_part(text: str, released: str) -> str:
    """The student's text without the question around the stub, when they left that question as released."""
    from .notebook_cells import TEXT_STUB

    before, stub, after = released.partition(TEXT_STUB)
    if stub and text.startswith(before) and text.endswith(after) and len(text) >= len(before) + len(after):
        return text[len(before):len(text) - len(after)].strip("\n")
    return text


# --- the page ----------------------------------------------------------------------------------------

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 80em; padding: 0 1em; color: #222; }
h2 { border-top: 2px solid #888; padding-top: .6em; margin-top: 2em; }
.prompt, .answer, .model { white-space: pre-wrap; overflow-wrap: anywhere; font: 14px/1.4 ui-monospace, monospace; }
.prompt { background: #f4f4f8; padding: .8em; border-left: 4px solid #668; }
.model { background: #f3f8f3; padding: .8em; }
table { border-collapse: collapse; width: 100%; margin-top: 1em; }
th, td { border: 1px solid #ccc; padding: .5em; vertical-align: top; text-align: left; }
th { background: #eee; }
td.student { width: 12em; overflow-wrap: anywhere; }
td.auto, td.points { width: 8em; white-space: nowrap; }
.blank { color: #a00; font-style: italic; }
.answer.md, .prompt { white-space: normal; font: 15px/1.45 system-ui, sans-serif; }
.md pre, .md code { font: 13px/1.4 ui-monospace, monospace; white-space: pre-wrap; }
textarea { width: 100%; }
.cell { border-left: 3px solid #ccc; margin: .6em 0; padding-left: .6em; }
.output { background: #fafafa; white-space: pre-wrap; font: 13px/1.4 ui-monospace, monospace; }
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def render_markdown(text: str) -> str:
    """A student's Markdown as HTML: raw HTML in it is shown as text, unsafe links are refused
    (markdown-it's commonmark preset with ``html`` off); escaped text where markdown-it is missing."""
    try:
        from markdown_it import MarkdownIt
    except ImportError:  # pragma: no cover - markdown-it-py comes with the course's Jupyter stack
        return f"<div class=\"answer\">{_e(text)}</div>"
    return f"<div class=\"answer md\">{MarkdownIt('commonmark', {'html': False}).render(text)}</div>"


def render_page(exercise: Any, answers: list[WrittenAnswer], entered: dict[tuple[str, str, str], tuple[float, str]],
                *, links: dict[str, str] | None = None, form_token: str | None = None) -> str:
    """The HTML review page of one exercise; every piece of student or file text is escaped.

    ``links`` maps a student to the page of their graded notebook (its outputs beside the answer);
    with ``form_token`` (``review --serve``), each answer gets a points and a comment field and the
    page is one form posted back to the server that served it."""
    links = links or {}
    csp = _CSP + ("; form-action 'self'" if form_token else "")
    how = (f"Enter points in <code>{CSV_NAME}</code> beside this page, then run <code>python -m edumatcher review "
           f"GRADEBOOK_DIR --import GRADEBOOK_DIR/review/{CSV_NAME}</code>." if form_token is None else
           "Enter points and comments below and press Save: they are stored in the gradebook at once. An answer "
           "left untouched counts 0.")
    parts = [
        "<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">",
        f"<title>Review: {_e(exercise.name)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>Written answers: {_e(exercise.name)}</h1>",
        f"<p>{len({a.student for a in answers})} student(s), {len(exercise.manual)} question(s) graded by hand "
        f"({exercise.manual_points:g} points; autograded checks: {exercise.max_points:g} points). {how}</p>",
    ]
    if form_token is not None:
        parts.append(f'<form method="post"><input type="hidden" name="token" value="{_e(form_token)}">')
    number = 0
    for spec in exercise.manual:
        parts.append(f"<h2 id=\"{_e(spec.grade_id)}\">{_e(spec.grade_id)} ({spec.points:g} point"
                     f"{'' if spec.points == 1 else 's'})</h2>")
        parts.append(f"<div class=\"prompt\">{render_markdown(question_prompt(exercise, spec.grade_id))}</div>")
        parts.append(f"<details><summary>Model answer</summary><div class=\"model\">"
                     f"{_e(model_answer(exercise, spec.grade_id))}</div></details>")
        parts.append("<table><thead><tr><th>student</th><th>autograde</th><th>written answer</th>"
                     "<th>manual points</th></tr></thead><tbody>")
        for answer in (a for a in answers if a.grade_id == spec.grade_id):
            if answer.text is None:
                shown = f"<span class=\"blank\">{_e(answer.why_missing)}</span>"
            elif answer.blank:
                shown = f"<span class=\"blank\">{NO_ANSWER}</span>"
            else:
                shown = render_markdown(answer.text)
            score = entered.get((answer.student, answer.exercise, answer.grade_id))
            if form_token is not None:
                value = f"{score[0]:g}" if score else ("0" if answer.blank else "")
                key = json.dumps([answer.student, answer.grade_id])
                points = (f'<input type="hidden" name="key-{number}" value="{_e(key)}">'
                          f'<input name="points-{number}" aria-label="points of {_e(answer.student)}" '
                          f'type="number" step="any" min="0" max="{spec.points:g}" value="{value}" size="4"> / '
                          f'{spec.points:g}<br><textarea name="comment-{number}" rows="2" '
                          f'aria-label="comment for {_e(answer.student)}">{_e(score[1] if score else "")}</textarea>')
                number += 1
            else:
                points = f"{score[0]:g} / {spec.points:g}" + (f"<br>{_e(score[1])}" if score[1] else "") \
                    if score else "-"
            link = links.get(answer.student)
            auto = _e(answer.autograde) + (f'<br><a href="{_e(link)}">graded notebook, with its outputs</a>'
                                           if link else "")
            parts.append(f"<tr><td class=\"student\">{_e(answer.student)}</td><td class=\"auto\">"
                         f"{auto}</td><td>{shown}</td><td class=\"points\">{points}</td></tr>")
        parts.append("</tbody></table>")
    if form_token is not None:
        parts.append('<p><button type="submit">Save</button></p></form>')
    parts.append("</body></html>\n")
    return "\n".join(parts)


def notebook_page(path: Path, title: str) -> str:
    """A graded notebook as one HTML page: Markdown rendered, code, and its text and PNG outputs (never its
    HTML or JavaScript outputs); the review page links each answer to it."""
    import base64
    import binascii

    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_CSP}; img-src data:\">",
             f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body><h1>{_e(title)}</h1>"]
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            parts.append(f'<div class="cell">{render_markdown(cell.source)}</div>')
            continue
        parts.append(f'<div class="cell"><pre>{_e(cell.source)}</pre>')
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if output.get("output_type") == "stream":
                parts.append(f'<div class="output">{_e(str(output.get("text", "")))}</div>')
            elif output.get("output_type") == "error":
                parts.append(f'<div class="output blank">{_e(str(output.get("ename", "")))}: '
                             f'{_e(str(output.get("evalue", "")))}</div>')
            elif "image/png" in data:
                png = "".join(data["image/png"]) if isinstance(data["image/png"], list) else str(data["image/png"])
                try:
                    base64.b64decode(png, validate=True)
                except (binascii.Error, ValueError):
                    continue
                parts.append(f'<img alt="output" src="data:image/png;base64,{png}">')
            elif "text/plain" in data:
                text = data["text/plain"]
                parts.append(f'<div class="output">{_e("".join(text) if isinstance(text, list) else str(text))}</div>')
        parts.append("</div>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_notebook_pages(book_dir: Path, results: Iterable[Any]) -> dict[str, str]:
    """``review/notebooks/<student folder>/<exercise>.html`` for each row with a graded notebook; returns
    ``{student: link relative to the review page}``."""
    from .submissions import student_folder_name

    links: dict[str, str] = {}
    for result in results:
        folder = student_folder_name(result.student)
        graded = book_dir / "autograded" / folder / f"{result.exercise}.ipynb"
        if not graded.is_file():
            continue
        target = book_dir / "review" / "notebooks" / folder / f"{result.exercise}.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            page = notebook_page(graded, f"{result.student}: {result.exercise} (graded)")
        except Exception:  # noqa: BLE001 - an unreadable notebook loses its link, not the review page
            continue
        _atomic_write(target, page.encode("utf-8"))
        links[result.student] = f"notebooks/{folder}/{result.exercise}.html"
    return links


# --- the CSV -----------------------------------------------------------------------------------------

def _atomic_write(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def _read_csv_rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    """``(line number, row)`` pairs of a scores CSV; ``CliError`` when it is not one."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"{path}: cannot be read as UTF-8 text ({exc})") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise CliError(f"{path}: not a manual scores file: missing column(s) {', '.join(missing)} "
                       f"(expected {','.join(CSV_COLUMNS)})")
    rows = []
    try:
        for row in reader:
            rows.append((reader.line_num, {k: (v or "") for k, v in row.items() if isinstance(k, str)}))
    except csv.Error as exc:
        raise CliError(f"{path} line {reader.line_num}: not valid CSV ({exc})") from None
    return rows


def write_review(book_dir: str | Path, source: str | Path = "solutions") -> list[Path]:
    """Write the review pages and the scores CSV under ``book_dir/review/``; return the paths written.

    Raises ``CliError`` when there is no gradebook or no exercise has a manual question.
    """
    from .exercise import find_exercises
    from .report import csv_cell, csv_text_back  # the gradebook's own defusing of formula-like cells

    book_dir = Path(book_dir)
    exercises = {name: ex for name, ex in find_exercises(source).items() if ex.manual}
    if not exercises:
        raise CliError(f"no exercise in {source} has answers graded by hand (Markdown cells with "
                       "solution: true, grade: true, points)")
    results, stored = _gradebook_rows(book_dir)
    graded = {r.exercise for r in results}  # no pages for exercises nobody handed in (or of another assignment)
    exercises = {name: ex for name, ex in exercises.items() if name in graded} or exercises
    out = book_dir / "review"
    csv_path = out / CSV_NAME
    typed: dict[tuple[str, str, str], tuple[str, str]] = {}
    if csv_path.exists():
        # The instructor may be halfway through it: keep every value already typed.
        for _, row in _read_csv_rows(csv_path):
            key = (row["student"], row["exercise"], row["grade_id"])  # the student cell as written
            typed[key] = (row["points"].strip(), csv_text_back(row["comment"]))
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    lines: list[list[str]] = []
    for name, exercise in exercises.items():
        rows = [r for r in results if r.exercise == name]
        answers = collect_answers(book_dir, exercise, rows)
        entered = {(s, e, g): score for (s, e), scores in stored.items() for g, score in scores.items()}
        links = write_notebook_pages(book_dir, rows)
        page = out / f"{name}.html"
        _atomic_write(page, render_page(exercise, answers, entered, links=links).encode("utf-8"))
        written.append(page)
        worth = {spec.grade_id: spec.points for spec in exercise.manual}
        for answer in answers:
            key = (answer.student, answer.exercise, answer.grade_id)
            cell_key = (csv_cell(answer.student), answer.exercise, answer.grade_id)
            if cell_key in typed and (typed[cell_key][0] or typed[cell_key][1]):
                points, comment = typed[cell_key]
            elif key in entered:
                points, comment = f"{entered[key][0]:g}", entered[key][1]
            elif answer.blank:
                points, comment = "0", (answer.why_missing or NO_ANSWER)
            else:
                points, comment = "", ""
            lines.append([csv_cell(answer.student), answer.exercise, answer.grade_id, f"{worth[answer.grade_id]:g}",
                          points, csv_cell(comment)])
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(lines)
    _atomic_write(csv_path, buffer.getvalue().encode("utf-8"))
    written.append(csv_path)
    return written


def _gradebook_rows(book_dir: Path) -> tuple[list[Any], dict[tuple[str, str], dict[str, tuple[float, str]]]]:
    from .gradebook import DATABASE_NAME, Gradebook

    if not (book_dir / DATABASE_NAME).is_file():
        raise CliError(f"{book_dir} holds no gradebook ({DATABASE_NAME}); run "
                       f"python -m edumatcher grade ... --out {book_dir} first")
    book = Gradebook.open(book_dir)
    try:
        return book.results(), book.manual_scores()
    finally:
        book.close()


# --- importing the CSV -------------------------------------------------------------------------------

def read_scores(csv_path: str | Path, exercises: dict[str, Any], students: dict[str, set[str]]) -> list[ScoreRow]:
    """Validate every filled row of a scores CSV; raise ``CliError`` naming the first bad row.

    ``students`` maps each exercise to the students the gradebook knows for it. Rows whose points
    cell is empty are skipped (not graded yet). A student cell may be written defused (``'=x``) or not.
    """
    from .csv_cells import csv_cell, csv_text_back

    csv_path = Path(csv_path)
    rows: list[ScoreRow] = []
    seen: dict[tuple[str, str, str], int] = {}
    for line, row in _read_csv_rows(csv_path):
        where = f"{csv_path} row {line}"
        points_text = row["points"].strip()
        if not points_text:
            continue
        name = row["exercise"].strip()
        exercise = exercises.get(name)
        if exercise is None:
            raise CliError(f"{where}: unknown exercise {name!r}")
        worth = {spec.grade_id: spec.points for spec in exercise.manual}
        gid = row["grade_id"].strip()
        if gid not in worth:
            known = ", ".join(worth) or "none"
            raise CliError(f"{where}: {name} has no question graded by hand called {gid!r} (it has: {known})")
        cell = row["student"]
        matches = sorted(s for s in students.get(name, set()) if csv_cell(s) == cell)
        matches = matches or sorted(s for s in students.get(name, set()) if s == cell)
        if len(matches) != 1:
            raise CliError(f"{where}: student {cell!r} has no row for {name} in the gradebook")
        try:
            points = float(points_text)
        except ValueError:
            raise CliError(f"{where}: points {points_text!r} is not a number") from None
        if not math.isfinite(points) or not 0 <= points <= worth[gid]:
            raise CliError(f"{where}: points {points_text} is outside 0..{worth[gid]:g} ({gid} is worth "
                           f"{worth[gid]:g})")
        key = (matches[0], name, gid)
        if key in seen:
            raise CliError(f"{where}: {matches[0]}/{name}/{gid} was already given on row {seen[key]}")
        seen[key] = line
        rows.append(ScoreRow(matches[0], name, gid, points, csv_text_back(row["comment"]).strip()))
    return rows


def import_scores(book_dir: str | Path, csv_path: str | Path, source: str | Path = "solutions") -> tuple[int, int]:
    """Store every filled row of ``csv_path`` in the gradebook (all or nothing); return (stored, skipped).

    Re-exports the gradebook's CSVs afterwards so ``grades.csv`` shows the manual points.
    """
    from .exercise import find_exercises
    from .gradebook import Gradebook

    book_dir = Path(book_dir)
    exercises = find_exercises(source)
    results, _ = _gradebook_rows(book_dir)
    students: dict[str, set[str]] = {}
    for result in results:
        students.setdefault(result.exercise, set()).add(result.student)
    total = len([1 for _, row in _read_csv_rows(Path(csv_path))])
    rows = read_scores(csv_path, exercises, students)  # everything is checked before anything is stored
    book = Gradebook.open(book_dir)
    try:
        for row in rows:
            book.set_manual(row.student, row.exercise, row.grade_id, row.points, row.comment)
        _export(book, exercises, book_dir)
    finally:
        book.close()
    if (book_dir / "review").is_dir():  # the pages show what is stored now
        write_review(book_dir, source)
    return len(rows), total - len(rows)


def _export(book: Any, exercises: dict[str, Any], book_dir: Path) -> None:
    try:
        from .report import export_gradebook
    except ImportError:  # pragma: no cover - the exports are the gradebook's job; the scores are stored
        return
    export_gradebook(book, exercises, book_dir)


# --- the command -------------------------------------------------------------------------------------
