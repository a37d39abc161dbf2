"""The class report: one self-contained HTML page beside the gradebook's CSVs.

For each exercise it shows the distribution of totals (a bar per total, the number of students who
got it), the checks ordered so the one most students fail comes first, the time a submission took
(median and slowest), and the manual points given; then every row that was not graded normally
(timeout, kernel died, invalid, unknown exercise, ...) with its reason. The page needs no network:
figures are inline base64 PNGs drawn with matplotlib's Agg canvas, styles are inline, and every
text that came from a student (names, file names, failure messages, comments) is HTML-escaped.

``write_class_report`` is a pure function of its arguments: no clock, no machine name, so the same
results give the same file.
"""

from __future__ import annotations

import base64
import html
import io
import os
import statistics
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .exercise import Exercise
from .score import GRADED, NOT_SUBMITTED, SubmissionResult

__all__ = ["CheckRate", "check_pass_rates", "untouched", "write_class_report", "render_class_report"]


def untouched(result: SubmissionResult) -> bool:
    """Whether a graded row looks like the template as released: every check failed on NotImplementedError."""
    return result.status == GRADED and bool(result.checks) and all(
        not c.passed and "NotImplementedError" in (c.message or "") for c in result.checks)

# manual_scores() shape from the gradebook: {(student, exercise): {grade_id: (points, comment)}}.
Manual = Mapping[tuple[str, str], Mapping[str, tuple[float, str]]]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.muted { color: #666; }
section { border-top: 2px solid #ddd; margin-top: 2em; }
"""


@dataclass(frozen=True)
class CheckRate:
    """How one check fared across a class: submissions that passed, failed, or never ran it."""

    grade_id: str
    points: float
    passed: int
    failed: int
    not_run: int
    common_message: str = ""

    @property
    def submissions(self) -> int:
        """Every submission that has this check (passed + failed + not run)."""
        return self.passed + self.failed + self.not_run

    @property
    def pass_rate(self) -> float:
        """Passed over submissions (0.0 with no submissions)."""
        return self.passed / self.submissions if self.submissions else 0.0


def _e(text: object) -> str:
    """HTML-escape anything (quotes too, since some text lands in attributes)."""
    return html.escape(str(text), quote=True)


def _num(value: float) -> str:
    return f"{value:g}"


def check_pass_rates(results: list[SubmissionResult], exercise: Exercise) -> list[CheckRate]:
    """Per check of ``exercise``, across ``results`` for it, most-failed first (then source order).

    A check "not run" (the notebook timed out, the kernel died, ...) is counted apart from a failure,
    but it does not pass: the rate is passed over all submissions of the exercise. A roster's
    ``not-submitted`` rows are no submission and are left out: with 8 hand-ins from a class of 40,
    a check all 8 pass has a 100% pass rate, not 20%.

    >>> from edumatcher.grading.score import CheckResult
    >>> from types import SimpleNamespace as NS
    >>> ex = NS(name="e", checks=(NS(grade_id="a", points=1.0), NS(grade_id="b", points=2.0)))
    >>> rows = [SubmissionResult("s1", "e", "s1.ipynb", "graded", checks=[
    ...     CheckResult("a", 1.0, 1.0, True), CheckResult("b", 2.0, message="off by one")])]
    >>> [(r.grade_id, r.passed, r.failed) for r in check_pass_rates(rows, ex)]
    [('b', 0, 1), ('a', 1, 0)]
    """
    rates: list[CheckRate] = []
    for spec in exercise.checks:
        passed = failed = not_run = 0
        messages: Counter[str] = Counter()
        for result in results:
            if result.exercise != exercise.name or result.status == NOT_SUBMITTED:
                continue
            check = next((c for c in result.checks if c.grade_id == spec.grade_id), None)
            if check is None:
                not_run += 1
            elif check.passed:
                passed += 1
            elif result.status != GRADED or check.message.startswith("not run"):
                not_run += 1
            else:
                failed += 1
                if check.message:
                    messages[check.message.strip().splitlines()[0][:200]] += 1
        common = messages.most_common(1)[0][0] if messages else ""
        rates.append(CheckRate(spec.grade_id, spec.points, passed, failed, not_run, common))
    order = {spec.grade_id: index for index, spec in enumerate(exercise.checks)}
    # Stable: fewest passes first, ties in the source's order.
    return sorted(rates, key=lambda rate: (rate.pass_rate, order[rate.grade_id]))


def _manual_points(manual: Manual | None, result: SubmissionResult) -> dict[str, tuple[float, str]]:
    if not manual:
        return {}
    given = manual.get((result.student, result.exercise))
    return dict(given) if given else {}


def _distribution_png(totals: list[float], max_points: float, title: str) -> str:
    """A bar per distinct total (students who got it), as a base64 PNG ``<img>``; Agg, no pyplot state."""
    from matplotlib.figure import Figure

    counts = Counter(round(total, 6) for total in totals)
    figure = Figure(figsize=(6.0, 2.6), dpi=96)
    axes = figure.add_subplot()
    xs = sorted(counts)
    width = max(max_points / 40, 0.25) if max_points > 0 else 0.5
    axes.bar(xs, [counts[x] for x in xs], width=width, color="#4477aa")
    axes.set_xlim(-width, max(max_points, max(xs, default=0.0)) + width)
    axes.set_xlabel(f"total out of {_num(max_points)}")
    axes.set_ylabel("students")
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.set_title(title, fontsize=10)
    figure.tight_layout()
    buffer = io.BytesIO()
    # No Software/date metadata: the same results give the same bytes.
    figure.savefig(buffer, format="png", metadata={"Software": None})
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="{_e(title)}" src="data:image/png;base64,{data}">'


def _exercise_section(name: str, exercise: Exercise | None, rows: list[SubmissionResult], manual: Manual | None,
                      draw: bool) -> str:
    auto_max = exercise.max_points if exercise is not None else max((r.max_points for r in rows), default=0.0)
    manual_max = float(getattr(exercise, "manual_points", 0.0) or 0.0) if exercise is not None else 0.0
    totals = [r.total + sum(p for p, _ in _manual_points(manual, r).values()) for r in rows]
    graded = sum(1 for r in rows if r.status == GRADED)
    max_points = auto_max + manual_max
    parts = [f'<section id="ex-{_e(name)}"><h2>{_e(name)}</h2>']
    if not rows:
        parts.append('<p class="muted">No submissions.</p></section>')
        return "".join(parts)
    median_total = statistics.median(totals)
    parts.append(
        f"<p>{len(rows)} submission(s), {graded} graded normally; totals out of {_num(max_points)}"
        + (f" ({_num(auto_max)} autograded + {_num(manual_max)} manual)" if manual_max else "")
        + f": median {_num(median_total)}, mean {statistics.fmean(totals):.3g}, "
        f"lowest {_num(min(totals))}, highest {_num(max(totals))}.</p>"
    )
    if draw:
        parts.append(_distribution_png(totals, max_points, f"{name}: totals of {len(rows)} submission(s)"))
    counts = Counter(round(t, 6) for t in totals)
    parts.append("<table><tr><th>total</th><th>students</th></tr>"
                 + "".join(f'<tr><td class="num">{_num(t)}</td><td class="num">{counts[t]}</td></tr>'
                           for t in sorted(counts)) + "</table>")
    blank = sorted(r.student for r in rows if untouched(r))
    if blank:
        parts.append(f"<p><b>{len(blank)} untouched submission(s)</b> (the template as released: every check "
                     f"failed on NotImplementedError): {_e(', '.join(blank))}.</p>")
    if exercise is not None and exercise.checks:
        from .feedback import hidden_checks

        hidden = hidden_checks(exercise)
        rates = check_pass_rates([r for r in rows if not untouched(r)], exercise)
        hidden_failed = sum(rate.failed for rate in rates if rate.grade_id in hidden)
        visible_failed = sum(rate.failed for rate in rates if rate.grade_id not in hidden)
        parts.append(f"<h3>Checks, most failed first</h3><p>Untouched submissions left out. Failures of visible "
                     f"checks (students could see them fail): {visible_failed}; of checks that hold hidden tests "
                     f"(a student's own run cannot show the hidden part): {hidden_failed}.</p>"
                     "<table><tr><th>check</th><th>kind</th><th>points</th><th>passed</th>"
                     "<th>failed</th><th>not run</th><th>pass rate</th><th>most common failure</th></tr>")
        for rate in rates:
            kind = "hidden tests" if rate.grade_id in hidden else "visible"
            parts.append(
                f'<tr><td>{_e(rate.grade_id)}</td><td>{kind}</td><td class="num">{_num(rate.points)}</td>'
                f'<td class="num">{rate.passed}</td><td class="num">{rate.failed}</td>'
                f'<td class="num">{rate.not_run}</td><td class="num">{rate.pass_rate:.0%}</td>'
                f"<td>{_e(rate.common_message)}</td></tr>")
        parts.append("</table>")
    given = [(r, gid, pts, comment) for r in rows for gid, (pts, comment) in sorted(_manual_points(manual, r).items())]
    if given:
        parts.append("<h3>Manual points</h3><table><tr><th>student</th><th>answer</th><th>points</th>"
                     "<th>comment</th></tr>")
        specs = {spec.grade_id: spec.points for spec in getattr(exercise, "manual", ())} if exercise else {}
        for result, gid, pts, comment in given:
            out_of = f" / {_num(specs[gid])}" if gid in specs else ""
            parts.append(f"<tr><td>{_e(result.student)}</td><td>{_e(gid)}</td>"
                         f'<td class="num">{_num(pts)}{out_of}</td><td>{_e(comment)}</td></tr>')
        parts.append("</table>")
    parts.append("</section>")
    return "".join(parts)


def _timing_table(by_exercise: dict[str, list[SubmissionResult]]) -> str:
    # Only rows that ran count: a file that was never executed (unreadable, not submitted) took no time.
    rows = ['<p class="muted">Wall-clock seconds per submission that ran, kernel start included.</p>'
            "<table><tr><th>exercise</th><th>ran</th><th>median s</th><th>max s</th><th>slowest</th></tr>"]
    for name, results in by_exercise.items():
        ran = [r for r in results if r.seconds > 0]
        if not ran:
            rows.append(f'<tr><td>{_e(name)}</td><td class="num">0</td><td></td><td></td><td></td></tr>')
            continue
        seconds = [r.seconds for r in ran]
        slowest = max(ran, key=lambda r: r.seconds)
        rows.append(f'<tr><td>{_e(name)}</td><td class="num">{len(ran)}</td>'
                    f'<td class="num">{statistics.median(seconds):.1f}</td><td class="num">{slowest.seconds:.1f}</td>'
                    f"<td>{_e(slowest.student)} ({_e(slowest.status)})</td></tr>")
    rows.append("</table>")
    return "".join(rows)


def _student_table(by_exercise: dict[str, list[SubmissionResult]], exercises: Mapping[str, Exercise],
                   manual: Manual | None) -> str:
    """One row per student: each exercise's total (auto + manual; "blank" when untouched) and the sum."""
    names = list(by_exercise)
    cells: dict[str, dict[str, str]] = {}
    sums: dict[str, float] = {}
    for name, rows in by_exercise.items():
        for r in rows:
            total = r.total + sum(p for p, _ in _manual_points(manual, r).values())
            cells.setdefault(r.student, {})[name] = _num(total) + (" (blank)" if untouched(r) else "")
            sums[r.student] = sums.get(r.student, 0.0) + total
    tops = [exercises[n].max_points + float(getattr(exercises[n], "manual_points", 0.0) or 0.0) for n in names]
    lines = ['<section id="students"><h2>Students</h2><table><tr><th>student</th>'
             + "".join(f"<th>{_e(n)} (/{_num(t)})</th>" for n, t in zip(names, tops, strict=True))
             + f"<th>total (/{_num(sum(tops))})</th></tr>"]
    for student in sorted(cells):
        lines.append(f"<tr><td>{_e(student)}</td>"
                     + "".join(f'<td class="num">{_e(cells[student].get(n, "-"))}</td>' for n in names)
                     + f'<td class="num">{_num(sums[student])}</td></tr>')
    lines.append("</table></section>")
    return "".join(lines)


def _not_graded_table(results: list[SubmissionResult]) -> str:
    rows = sorted((r for r in results if r.status != GRADED), key=lambda r: (r.exercise, r.student, r.submission))
    if not rows:
        return "<p>Every submission was graded normally.</p>"
    statuses = Counter(r.status for r in rows)
    by_status = ", ".join(f"{count} {_e(status)}" for status, count in sorted(statuses.items()))
    lines = [f"<p>{len(rows)} submission(s) not graded normally ({by_status}); they score what their checks "
             "earned, often 0:</p><table><tr><th>student</th><th>exercise</th><th>status</th><th>reason</th>"
             "<th>submission</th><th>notes</th></tr>"]
    for r in rows:
        lines.append(f"<tr><td>{_e(r.student)}</td><td>{_e(r.exercise)}</td><td>{_e(r.status)}</td>"
                     f"<td>{_e(r.reason)}</td><td>{_e(r.submission)}</td><td>{_e('; '.join(r.notes))}</td></tr>")
    lines.append("</table>")
    return "".join(lines)


def render_class_report(results: list[SubmissionResult], exercises: Mapping[str, Exercise], *,
                        manual: Manual | None = None, figures: bool = True) -> str:
    """The class report's HTML text (see the module docstring); ``figures=False`` leaves out the PNGs."""
    by_exercise: dict[str, list[SubmissionResult]] = {name: [] for name in exercises}
    for result in results:
        if result.exercise in by_exercise:
            by_exercise[result.exercise].append(result)
    if any(by_exercise.values()):  # the exercises set (someone handed them in), not every one of the source
        by_exercise = {name: rows for name, rows in by_exercise.items() if rows}
    students = {r.student for r in results}
    graded = sum(1 for r in results if r.status == GRADED)
    body = [
        "<h1>Class report</h1>",
        f"<p>{len(results)} submission row(s) from {len(students)} student(s) over {len(exercises)} exercise(s); "
        f"{graded} graded normally, {len(results) - graded} not (listed at the end).</p>",
        "<h2>Exercises</h2><ul>"
        + "".join(f'<li><a href="#ex-{_e(n)}">{_e(n)}</a> ({len(rs)})</li>' for n, rs in by_exercise.items())
        + '<li><a href="#not-graded">not graded normally</a></li></ul>',
        "<h2>Time per submission</h2>",
        _timing_table(by_exercise),
        _student_table(by_exercise, exercises, manual),
    ]
    for name, rows in by_exercise.items():
        body.append(_exercise_section(name, exercises[name], rows, manual, figures))
    body.append('<section id="not-graded"><h2>Not graded normally</h2>')
    body.append(_not_graded_table(results))
    body.append("</section>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Class report</title>"
            f"<style>{_STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def write_class_report(results: list[SubmissionResult], exercises: dict[str, Exercise], path: Path, *,
                       manual: dict | None = None) -> Path:
    """Write the class report for ``results`` to ``path`` (e.g. ``OUT/report.html``) and return the path.

    ``exercises`` gives the order, the checks and their points; ``manual`` is the gradebook's
    ``manual_scores()`` (``{(student, exercise): {grade_id: (points, comment)}}``). The file is
    replaced atomically, so a reader never sees half a report.
    """
    path = Path(path)
    text = render_class_report(results, exercises, manual=manual)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    partial.write_bytes(text.encode("utf-8"))
    os.replace(partial, path)
    return path
