"""The class report (``edumatcher.grading.class_report``): synthetic results, no kernels.

Every case builds ``SubmissionResult`` rows by hand for the toy exercise (checks c_add 1 point,
c_mean 2, c_mean_empty 2), writes the report and reads the HTML back.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from edumatcher.grading.class_report import check_pass_rates, render_class_report, write_class_report
from edumatcher.grading.exercise import find_exercises
from edumatcher.grading.report import NOT_SUBMITTED
from edumatcher.grading.score import (
    GRADED,
    KERNEL_DIED,
    TIMEOUT,
    UNKNOWN_EXERCISE,
    CheckResult,
    SubmissionResult,
    result_without_run,
)

SOURCES = Path(__file__).parent / "fixtures" / "grading" / "solutions"
HOSTILE = '<script>alert("x")</script>&<img src=http://evil.example/x.png>'


@pytest.fixture(scope="module")
def exercises():
    found = find_exercises(SOURCES)
    return {"ex_toy": found["ex_toy"]}


def row(student: str, passed: set[str], *, status: str = GRADED, seconds: float = 1.0, reason: str = "",
        message: str = "wrong") -> SubmissionResult:
    checks = []
    for gid, points in (("c_add", 1.0), ("c_mean", 2.0), ("c_mean_empty", 2.0)):
        if gid in passed:
            checks.append(CheckResult(gid, points, points, True))
        else:
            checks.append(CheckResult(gid, points, message=message if status == GRADED else "not run: timed out"))
    return SubmissionResult(student, "ex_toy", f"{student}/ex_toy.ipynb", status, reason, checks, seconds=seconds)


def text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_checks_sorted_most_failed_first(exercises, tmp_path):
    # c_mean_empty fails for 3 of 4, c_mean for 2 of 4, c_add for none: that order, in the table too.
    results = [row("a", {"c_add", "c_mean", "c_mean_empty"}), row("b", {"c_add", "c_mean"}),
               row("c", {"c_add"}, message="mean([1, 2, 3, 4]) should be 2.5"), row("d", {"c_add"})]
    rates = check_pass_rates(results, exercises["ex_toy"])
    assert [(r.grade_id, r.passed, r.failed) for r in rates] == [
        ("c_mean_empty", 1, 3), ("c_mean", 2, 2), ("c_add", 4, 0)]
    html = text_of(write_class_report(results, exercises, tmp_path / "report.html"))
    positions = [html.index(f"<td>{gid}</td>") for gid in ("c_mean_empty", "c_mean", "c_add")]
    assert positions == sorted(positions)
    assert "25%" in html and "100%" in html


def test_ties_keep_source_order_and_not_run_is_not_a_failure(exercises):
    results = [row("a", set()), row("t", set(), status=TIMEOUT, reason="overran 300 s")]
    rates = check_pass_rates(results, exercises["ex_toy"])
    assert [r.grade_id for r in rates] == ["c_add", "c_mean", "c_mean_empty"]
    assert all((r.failed, r.not_run, r.pass_rate) == (1, 1, 0.0) for r in rates)


def test_roster_rows_without_a_submission_do_not_lower_pass_rates(exercises):
    # Two hand-ins that pass c_add, from a roster of five: c_add passes for 2 of 2 submissions.
    absent = [result_without_run(exercises["ex_toy"], s, "ex_toy", "", NOT_SUBMITTED, "no submission found")
              for s in ("x", "y", "z")]
    rates = {r.grade_id: r for r in check_pass_rates([row("a", {"c_add"}), row("b", {"c_add"}), *absent],
                                                      exercises["ex_toy"])}
    assert (rates["c_add"].passed, rates["c_add"].not_run, rates["c_add"].pass_rate) == (2, 0, 1.0)
    assert (rates["c_mean"].failed, rates["c_mean"].submissions) == (2, 2)

def test_student_text_is_escaped(exercises, tmp_path):
    results = [row(HOSTILE, {"c_add"}, message=HOSTILE),
               row("k" + HOSTILE, set(), status=KERNEL_DIED, reason="died: " + HOSTILE)]
    manual = {(HOSTILE, "ex_toy"): {"a_explain": (1.5, "nice " + HOSTILE)}}
    html = text_of(write_class_report(results, exercises, tmp_path / "report.html", manual=manual))
    assert "<script>" not in html and "evil.example/x.png>" not in html
    assert html.count(html_escaped(HOSTILE)) >= 4  # student name, failure message, reason, comment
    assert "nice " + html_escaped(HOSTILE) in html


def html_escaped(text: str) -> str:
    import html

    return html.escape(text, quote=True)


def test_every_non_graded_row_is_listed_with_its_reason(exercises, tmp_path):
    results = [row("ok", {"c_add"}),
               row("slow", set(), status=TIMEOUT, reason="the notebook overran --timeout 300 s", seconds=300.0),
               row("gone", set(), status=KERNEL_DIED, reason="the kernel died (exit code 1)"),
               result_without_run(None, "lost", "ex_typo", "lost/ex_typo.ipynb", UNKNOWN_EXERCISE,
                                  "no source notebook named ex_typo")]
    html = text_of(write_class_report(results, exercises, tmp_path / "report.html"))
    listed = html[html.index('id="not-graded"'):]
    for student, status, reason in (("slow", TIMEOUT, "overran --timeout 300 s"),
                                    ("gone", KERNEL_DIED, "the kernel died (exit code 1)"),
                                    ("lost", UNKNOWN_EXERCISE, "no source notebook named ex_typo")):
        assert re.search(rf"<td>{student}</td><td>[^<]*</td><td>{status}</td><td>[^<]*{re.escape(reason)}", listed)
    assert "<td>ok</td>" not in listed
    assert "3 submission(s) not graded normally (1 kernel-died, 1 timeout, 1 unknown-exercise)" in listed
    # Timings over the rows that ran (1, 300 and 1 s; the unknown exercise never ran): median 1.0, max 300.0.
    assert ('<td>ex_toy</td><td class="num">3</td><td class="num">1.0</td><td class="num">300.0</td>'
            "<td>slow (timeout)</td>") in html


def test_manual_points_add_to_totals(exercises, tmp_path):
    results = [row("a", {"c_add"}), row("b", {"c_add"})]
    manual = {("a", "ex_toy"): {"a_explain": (1.0, "clear")}}
    html = render_class_report(results, exercises, manual=manual, figures=False)
    # a: 1 autograded + 1 manual = 2; b: 1. Both totals appear in the distribution table, out of 5 + 1.
    assert '<tr><td class="num">1</td><td class="num">1</td></tr>' in html
    assert '<tr><td class="num">2</td><td class="num">1</td></tr>' in html
    assert "totals out of 6 (5 autograded + 1 manual)" in html
    assert '<td>a</td><td>a_explain</td><td class="num">1 / 1</td><td>clear</td>' in html


def test_renders_with_no_graded_rows_and_with_no_rows(exercises, tmp_path):
    only_failures = [row("t", set(), status=TIMEOUT, reason="overran")]
    html = text_of(write_class_report(only_failures, exercises, tmp_path / "a.html"))
    assert "0 graded normally" in html and "1 graded normally" not in html
    empty = text_of(write_class_report([], exercises, tmp_path / "b.html"))
    assert "No submissions." in empty and "Every submission was graded normally." in empty


def test_file_is_self_contained_and_deterministic(exercises, tmp_path):
    results = [row(f"s{i}", {"c_add", "c_mean"} if i % 2 else {"c_add"}, seconds=i / 10) for i in range(6)]
    first = write_class_report(results, exercises, tmp_path / "one.html")
    html = text_of(first)
    assert html.count('src="data:image/png;base64,') == 1  # the one exercise's distribution figure
    # No attribute loads or links anything outside the page.
    targets = re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)""", html)
    assert targets and all(t.startswith(("data:image/png;base64,", "#")) for t in targets), targets
    assert "<link" not in html and "@import" not in html and "url(" not in html
    again = write_class_report(results, exercises, tmp_path / "two.html")
    assert again.read_bytes() == first.read_bytes()
    assert not list(tmp_path.glob(".*partial*"))
