"""``review GRADEBOOK_DIR --serve``: the review pages on a local server whose forms save into the gradebook.

A stdlib ``http.server`` on 127.0.0.1 (never another interface): ``/`` lists the exercises with
written answers, ``/review/<exercise>`` is the review page of ``review`` with a points and a
comment field per answer, and its Save button posts them back; each filled field is checked (a
known student, question and 0 <= points <= its worth: one bad field saves nothing) and stored with
``Gradebook.set_manual``, then the gradebook's exports, the feedback pages and the static review
pages and CSV are rewritten. A field left empty stores nothing; a blank answer's field starts at 0.
``/notebooks/<student>/<exercise>.html`` are the graded notebooks with their outputs.

Every form carries a random token the server made at start, and requests must name the server's
own host (127.0.0.1 or localhost with its port), so another web page open in the same browser
cannot post scores to it.
"""

from __future__ import annotations

import http.server
import json
import math
import secrets
import sys
import threading
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from edumatcher import CliError

__all__ = ["ReviewServer", "serve_review", "save_form"]


def save_form(book_dir: Path, source: str | Path, exercise_name: str, form: dict[str, list[str]]) -> int:
    """Validate and store the points and comments of one posted review form; return how many were stored.

    ``CliError`` naming the first bad field; nothing is stored then."""
    from .exercise import find_exercises
    from .gradebook import Gradebook
    from .review import _export, _gradebook_rows, write_review
    from .run_lock import RunLock

    exercises = find_exercises(source)
    exercise = exercises.get(exercise_name)
    if exercise is None or not exercise.manual:
        raise CliError(f"no exercise {exercise_name!r} with answers graded by hand")
    worth = {spec.grade_id: spec.points for spec in exercise.manual}
    results, _ = _gradebook_rows(book_dir)
    students = {r.student for r in results if r.exercise == exercise_name}
    rows = []
    for field_name, values in sorted(form.items()):
        if not field_name.startswith("key-"):
            continue
        number = field_name.removeprefix("key-")
        try:
            student, gid = json.loads(values[0])
        except (ValueError, TypeError):
            raise CliError(f"field {field_name}: not a key this server wrote") from None
        text = form.get(f"points-{number}", [""])[0].strip()
        if not text:
            continue
        if student not in students or gid not in worth:
            raise CliError(f"{student}/{gid}: no such answer in the gradebook")
        try:
            points = float(text)
        except ValueError:
            raise CliError(f"{student}/{gid}: points {text!r} is not a number") from None
        if not math.isfinite(points) or not 0 <= points <= worth[gid]:
            raise CliError(f"{student}/{gid}: points {text} is outside 0..{worth[gid]:g}")
        rows.append((student, gid, points, form.get(f"comment-{number}", [""])[0].strip()))
    with RunLock(book_dir, "review --serve"):
        book = Gradebook.open(book_dir)
        try:
            for student, gid, points, comment in rows:
                book.set_manual(student, exercise_name, gid, points, comment)
            _export(book, exercises, book_dir)
        finally:
            book.close()
        write_review(book_dir, source)
    return len(rows)


class ReviewServer(http.server.ThreadingHTTPServer):
    """The review server: its gradebook folder, sources and form token."""

    def __init__(self, book_dir: Path, source: str | Path, port: int = 0) -> None:
        """Bind 127.0.0.1:``port`` (0: a free port)."""
        self.book_dir, self.source, self.token = book_dir, source, secrets.token_urlsafe(24)
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", port), _Handler)

    @property
    def url(self) -> str:
        """The server's address."""
        return f"http://127.0.0.1:{self.server_address[1]}/"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: ReviewServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass

    def _host_ok(self) -> bool:
        port = self.server.server_address[1]
        return self.headers.get("Host", "") in (f"127.0.0.1:{port}", f"localhost:{port}")

    def _send(self, status: int, body: str, content_type: str = "text/html; charset=utf-8") -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        """The index, an exercise's form page, or a graded notebook's page."""
        from .review import _e

        if not self._host_ok():
            return self._send(403, "wrong host")
        path = urllib.parse.urlsplit(self.path)
        if path.path == "/favicon.ico":  # asked for by every browser: nothing, rather than a 404
            self.send_response(204)
            self.end_headers()
            return None
        query = urllib.parse.parse_qs(path.query)
        parts = [urllib.parse.unquote(p) for p in path.path.strip("/").split("/") if p]
        with self.server.lock:
            try:
                if not parts:
                    names = _manual_exercises(self.server.book_dir, self.server.source)
                    items = "".join(f'<li><a href="/review/{urllib.parse.quote(n)}">{_e(n)}</a></li>' for n in names)
                    return self._send(200, f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
                                           f"Review</title></head><body><h1>Written answers to review</h1><ul>{items}"
                                           f"</ul></body></html>")
                if len(parts) == 2 and parts[0] == "review":
                    page = _form_page(self.server, parts[1], query.get("saved", [""])[0], query.get("error", [""])[0])
                    return self._send(200, page)
                if len(parts) == 3 and parts[0] == "notebooks" and parts[2].endswith(".html") and all(
                        p and not p.startswith(".") and "/" not in p and "\\" not in p and "\0" not in p
                        for p in parts):
                    base = (self.server.book_dir / "review" / "notebooks").resolve()
                    target = (base / parts[1] / parts[2]).resolve()
                    if target.is_relative_to(base) and target.is_file():
                        return self._send(200, target.read_text(encoding="utf-8"))
            except CliError as exc:
                return self._send(404, _e(str(exc)))
        return self._send(404, "not found")

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        """Save one exercise's form; redirect back to its page saying how many scores were stored."""
        if not self._host_ok():
            return self._send(403, "wrong host")
        parts = [urllib.parse.unquote(p) for p in urllib.parse.urlsplit(self.path).path.strip("/").split("/") if p]
        length = int(self.headers.get("Content-Length") or 0)
        if length > 10_000_000 or len(parts) != 2 or parts[0] != "review":
            return self._send(400, "bad request")
        form = urllib.parse.parse_qs(self.rfile.read(length).decode("utf-8", errors="replace"), keep_blank_values=True)
        if not secrets.compare_digest(form.get("token", [""])[0], self.server.token):
            return self._send(403, "this form was not made by this server (reload the page)")
        with self.server.lock:
            try:
                stored = save_form(self.server.book_dir, self.server.source, parts[1], form)
                where = f"?saved={stored}"
            except CliError as exc:
                where = "?error=" + urllib.parse.quote(str(exc))
        self.send_response(303)
        self.send_header("Location", f"/review/{urllib.parse.quote(parts[1])}{where}")
        self.send_header("Content-Length", "0")
        self.end_headers()


def _manual_exercises(book_dir: Path, source: str | Path) -> list[str]:
    from .exercise import find_exercises
    from .review import _gradebook_rows

    graded = {r.exercise for r in _gradebook_rows(book_dir)[0]}
    return [name for name, ex in find_exercises(source).items() if ex.manual and name in graded]


def _form_page(server: ReviewServer, name: str, saved: str, error: str) -> str:
    from .exercise import find_exercises
    from .review import _e, _gradebook_rows, collect_answers, render_page

    exercise = find_exercises(server.source).get(name)
    if exercise is None or not exercise.manual:
        raise CliError(f"no exercise {name!r} with answers graded by hand")
    results, stored = _gradebook_rows(server.book_dir)
    rows = [r for r in results if r.exercise == name]
    answers = collect_answers(server.book_dir, exercise, rows)
    entered = {(s, e, g): score for (s, e), scores in stored.items() for g, score in scores.items()}
    from .submissions import student_folder_name

    links = {r.student: f"/notebooks/{urllib.parse.quote(student_folder_name(r.student))}/"
             f"{urllib.parse.quote(r.exercise)}.html" for r in rows
             if (server.book_dir / "review" / "notebooks" / student_folder_name(r.student)
                 / f"{r.exercise}.html").is_file()}
    page = render_page(exercise, answers, entered, links=links, form_token=server.token)
    banner = ""
    if saved:
        banner = f'<p class="saved" role="status">Saved {_e(saved)} score(s) in the gradebook.</p>'
    if error:
        banner = f'<p class="blank" role="alert">Nothing saved: {_e(error)}</p>'
    return page.replace("<form ", banner + "<form ", 1)


def serve_review(book_dir: str | Path, source: str | Path, port: int = 0,
                 ready: Callable[[str], None] | None = None) -> None:
    """Write the static review pages, then serve the forms until Ctrl-C (``ready`` gets the URL)."""
    from .review import write_review

    book_dir = Path(book_dir)
    write_review(book_dir, source)  # the notebooks' pages, and a check that there is something to review
    server = ReviewServer(book_dir, source, port)
    try:
        (ready or (lambda url: print(f"reviewing at {url} (Ctrl-C stops)", flush=True)))(server.url)
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
