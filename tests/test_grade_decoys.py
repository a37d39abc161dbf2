"""Decoy twins of checks (``edumatcher.grading.decoys``), without kernels: what they change, and where.

The kernel-level proof (a twin that passes makes a submission ``tampered``; honest work never
passes one) is in tests/test_grade_tamper.py; that every real exercise's solution fails every twin
is proved by tests/test_exercises.py, which grades each solution with its twins.
"""

from __future__ import annotations

import ast
import random

import nbformat
import pytest
from toy_submissions import REAL_SOURCES, TOY

from edumatcher.grading.decoys import decoy_for, plan_twins
from edumatcher.grading.notebook_cells import BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS, find_regions, grade_id, is_check
from edumatcher.grading.score import TAMPERED, result_from_events

WITH_HIDDEN = """\
result = mean([1, 2, 3, 4])
assert result == 2.5, f"got {result}"
### BEGIN HIDDEN TESTS
assert mean([7]) == 7.0, "one value"
assert mean([-1.5, 1.5]) == 0.0, "a symmetric pair"
### END HIDDEN TESTS"""


def visible(source: str) -> str:
    """The check as the student's copy shows it: every hidden region left out."""
    lines = source.split("\n")
    hidden = {n for first, last in find_regions(source, BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS)
              for n in range(first, last + 1)}
    return "\n".join(line for n, line in enumerate(lines) if n not in hidden)


def test_a_twin_changes_the_hidden_part_only_and_swaps_two_expected_values() -> None:
    twin = decoy_for(WITH_HIDDEN, random.Random(0))
    assert twin is not None
    assert visible(twin.source) == visible(WITH_HIDDEN)  # what the student's copy shows is byte-identical
    assert "assert mean([7]) == 0.0" in twin.source and "assert mean([-1.5, 1.5]) == 7.0" in twin.source
    assert "hidden test" in twin.what and "instead of" in twin.what
    ast.parse(twin.source)


@pytest.mark.parametrize(("source", "changed"), [
    ("assert add(2, 3) == 5", "assert add(2, 3) == -5"),  # one value: its negative
    ("assert f() == 0", "assert f() == -1"),  # zero: -1, which no count or length is
    ("assert name() == 'ann'", "assert name() == 'nna'"),  # a string: reversed
    ("from math import isclose\nassert isclose(m(), 2.5)", "assert isclose(m(), -2.5)"),
    ("assert pair() == (6, 4)", "== (-6, 4)"),  # one element of a collection
    ("for x in (1, 2):\n    assert g(x) == 3", "    assert g(x) == -3"),  # in a loop over a literal
    ("try:\n    f(0)\nexcept ValueError:\n    pass\nelse:\n    raise AssertionError('f(0)')",
     "except UnicodeTranslateError:"),  # an expected exception: one no code raises
    ("got = f()\nassert got > 3", "assert got <= 3"),  # a contradiction, when nothing else is usable
])
def test_each_kind_of_change(source: str, changed: str) -> None:
    twin = decoy_for(source, random.Random(1))
    assert twin is not None and changed in twin.source, twin
    ast.parse(twin.source)


@pytest.mark.parametrize("source", [
    "if ready():\n    assert f() == 3",  # may not run on a correct path
    "for x in items:\n    assert g(x) == 3",  # the loop may not run
    "for x in (1, 2):\n    if x:\n        continue\n    assert g(x) == 3",  # skipped by continue
    "try:\n    f(0)\nexcept ValueError:\n    pass",  # a right answer may not raise at all
    "def _raises(kind, fn):\n    try:\n        return fn()\n    except kind:\n        return None\n"
    "_raises(ValueError, f)",  # returns from the try: passing never needs the handler
    "assert values() != []",  # calls the student's code twice: a contradiction could be honest
    "x = 1",
])
def test_no_twin_where_a_right_answer_might_pass_it(source: str) -> None:
    assert decoy_for(source, random.Random(1)) is None


def test_a_helper_that_expects_an_exception_gets_its_handler_changed() -> None:
    source = ("def _raises(kind, fn, *args):\n    try:\n        result = fn(*args)\n    except kind:\n        return\n"
              "    raise AssertionError(f'{fn} returned {result}')\n\n_raises(ValueError, price_to_ticks, '1.005', 2)")
    twin = decoy_for(source, random.Random(0))
    assert twin is not None and "except UnicodeTranslateError:" in twin.source


def test_all_handlers_of_one_try_change_together() -> None:
    source = "try:\n    f()\nexcept TypeError:\n    pass\nexcept ValueError:\n    pass\nelse:\n    raise AssertionError"
    twin = decoy_for(source, random.Random(0))
    assert twin is not None and twin.source.count("except UnicodeTranslateError:") == 2


def test_the_plan_is_the_seeds_and_tosses_a_coin_per_check() -> None:
    checks = {3: "assert f() == 1", 5: "x = 1", 8: WITH_HIDDEN}
    first = plan_twins(checks, random.Random(7))
    assert set(first) == {3, 8} and first == plan_twins(checks, random.Random(7))
    orders = {tuple(before for _, before in plan_twins(checks, random.Random(seed)).values()) for seed in range(40)}
    assert len(orders) == 4  # every order happens


def real_checks() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(REAL_SOURCES.glob("*.ipynb")) + [TOY]:
        for cell in nbformat.read(path, as_version=4).cells:
            if is_check(cell):
                found.append((path.stem, grade_id(cell), cell.source))
    return found


def test_every_exercise_has_twins_and_they_keep_the_visible_part_where_they_can() -> None:
    by_exercise: dict[str, list[bool]] = {}
    for exercise, _, source in real_checks():
        twin = decoy_for(source, random.Random(3))
        by_exercise.setdefault(exercise, []).append(twin is not None)
        if twin is None:
            continue
        ast.parse(twin.source)
        assert twin.source != source
        if "a hidden test" in twin.what:
            assert visible(twin.source) == visible(source), (exercise, twin.what)
            assert END_HIDDEN_TESTS in twin.source
    # Every exercise can catch a notebook that makes every check pass: at least one check has a twin.
    assert all(any(covered) for covered in by_exercise.values()), by_exercise
    covered = sum(sum(flags) for flags in by_exercise.values())
    assert covered >= 0.8 * sum(len(flags) for flags in by_exercise.values()), by_exercise


def hidden_value_twins(source: str, seeds: range = range(8)) -> int:
    """How many expected values the check's twin changes inside its hidden tests, the fewest over ``seeds``
    (the grader draws its twins from the system's randomness): 0 when some twin has no such change."""
    fewest = 2
    for seed in seeds:
        twin = decoy_for(source, random.Random(seed))
        fewest = min(fewest, 0 if twin is None else twin.what.count("(a hidden test) expects"))
    return fewest


@pytest.mark.parametrize("path", sorted(REAL_SOURCES.glob("*.ipynb")), ids=lambda path: path.stem)
def test_every_check_of_an_exercise_has_a_twin_that_changes_a_hidden_value(path) -> None:
    """Authoring rule 6 (``edumatcher/grading/__init__.py``) as a test: every check's twin changes an expected
    value inside the hidden tests. A twin that adds a contradiction, changes a handler to the marker
    exception or changes the visible part can be told from the check by code that reads it (and a check
    without a twin by code that runs ``decoy_for``): an attacker who swallows only those checks scores
    their points without ever passing a twin (tests/test_grade_attacks.py). Two values, swapped, are
    preferred over one changed (a negated count or a reversed string reads as made up): those left with
    one are listed here, and may not grow in number."""
    lacking, single = [], []
    for cell in nbformat.read(path, as_version=4).cells:
        if is_check(cell):
            changed = hidden_value_twins(cell.source)
            if changed == 0:
                lacking.append(grade_id(cell))
            elif changed == 1:
                single.append(grade_id(cell))
    assert not lacking, (f"{path.name}: the twins of {lacking} change no expected value inside the hidden tests; give "
                         "each check's hidden part two `assert X == <literal>` with values the right answer "
                         "always gives (authoring rule 6)")
    assert len(single) <= SINGLE_VALUE_CHECKS.get(path.stem, 0), (path.name, single)


# Checks whose hidden tests compare with one expected value only (their twin changes it rather than swapping
# two): a record that may shrink, not grow.
SINGLE_VALUE_CHECKS = {"01_next_one_percent": 1, "04_exact_ticks": 2}


def test_a_passing_twin_makes_the_row_tampered_with_no_points() -> None:
    from edumatcher.grading import load_exercise

    events = [{"event": "check", "grade_id": "c_add", "passed": True},
              {"event": "decoy", "grade_id": "c_add", "passed": False, "what": "line 1 ..."},
              {"event": "check", "grade_id": "c_mean", "passed": True},
              {"event": "decoy", "grade_id": "c_mean", "passed": True, "what": "line 4 expects -2.5 instead of 2.5"},
              {"event": "check", "grade_id": "c_mean_empty", "passed": True}, {"event": "done"}]
    result = result_from_events(load_exercise(TOY), "ann", "ann/ex_toy.ipynb", events)
    assert result.status == TAMPERED and result.total == 0 and result.max_points == 5
    assert "c_mean" in result.reason and "-2.5 instead of 2.5" in result.reason
    honest = result_from_events(load_exercise(TOY), "ann", "x", [e for e in events if e.get("passed") is not True
                                                                 or e["event"] == "check"])
    assert honest.status == "graded" and honest.total == 5


def test_the_student_reads_no_decoy_detail_in_the_feedback() -> None:
    from edumatcher.grading.report import feedback_markdown
    from edumatcher.grading.score import SubmissionResult

    result = SubmissionResult("ann", "ex", "ann/ex.ipynb", TAMPERED, "a decoy of check c_mean passed (line 4 ...)")
    text = feedback_markdown(result)
    assert "tampered" in text and "review" in text and "decoy" not in text and "line 4" not in text
