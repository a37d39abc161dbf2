"""Attacks by a student who has read the grader's source (issue 25: "more of your own"), and the ones the
issue lists that had no test of their own.

* **Twin spotting.** ``decoys.py`` says which twins give themselves away: a contradiction (``assert
  C`` then its opposite) and a handler changed to ``UnicodeTranslateError`` are visible in the twin's
  own text, and a twin changed in the visible part differs from the student's copy. An attacker who
  swallows every check except the twins it can spot passes no twin, so no row becomes ``tampered``,
  wherever every twin of a notebook is of a kind it can spot. A sharper one runs ``decoy_for``
  itself on each check it sees and swallows only the checks whose twin it will be able to spot,
  leaving alone those whose twin changes a value inside the hidden tests (which it cannot tell from
  its check): it then never passes a twin on any exercise, and earns the points of every check
  without such a twin. Before: 9/9 undetected on 01_edit_and_reprofile (every twin a contradiction), on
  03_significance_test and on 11_stale_reference, 11/11 on 12_array_level_store, and points on every
  other exercise. Every check now compares with two expected values inside its hidden tests, so each
  twin swaps them where the student cannot compare: the attacker earns 0 on every exercise, and
  ``exposed_points`` is 0 for each (authoring rule 6; tests/test_grade_decoys.py holds every check to it).
* **The gc + ctypes route** of the issue: the guard's snapshot found through ``gc``, its ``restore``
  replaced with ``ctypes`` (writing the instance dictionary through the C API), never ``sys.modules``.
* **The lock** reached through another spelling of ``--out`` (a symbolic link to it).
* **The digest**: a change to a hidden test alone, which no student copy shows, makes rows stale.
"""

from __future__ import annotations

import random
from pathlib import Path

import nbformat
import pytest
from test_grade_tamper import _COMPROMISE, CELL_TIMEOUT, NOTEBOOK_TIMEOUT, submission
from toy_submissions import REAL_SOURCES, SANDBOX, TOY, real_exercise

from edumatcher.grading import SubmissionResult, grade_one, load_exercise, notebook_text, release_notebook
from edumatcher.grading.decoys import decoy_for
from edumatcher.grading.exercise import grading_digest
from edumatcher.grading.notebook_cells import BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS, grade_id, is_check
from edumatcher.grading.run_lock import GradebookBusy, RunLock

# Spots a twin by its text alone: the marker exception, an assert followed by its opposite, or (KNOWN holds
# the visible part of each check of the student's copy) a visible part that differs from the copy's.
_SPOT = '''
import ast as _ast

_FLIP = {"Eq": "NotEq", "NotEq": "Eq", "Lt": "GtE", "GtE": "Lt", "Gt": "LtE", "LtE": "Gt",
         "Is": "IsNot", "IsNot": "Is", "In": "NotIn", "NotIn": "In"}


def _shown(code):
    lines, inside = [], False
    for line in code.split("\\n"):
        if line.strip().startswith("### BEGIN HIDDEN TESTS"):
            inside = True
        elif line.strip().startswith("### END HIDDEN TESTS"):
            inside = False
        elif not inside and line.strip():
            lines.append(line.rstrip())
    return "\\n".join(lines)


def _check_text(code):
    return "\\n".join(line for line in code.split("\\n") if "witness(" not in line)


def _contradicts(code):
    try:
        tree = _ast.parse(code)
    except SyntaxError:
        return False
    tests = [node.test for node in _ast.walk(tree) if isinstance(node, _ast.Assert)]
    seen = {_ast.dump(test) for test in tests}
    for test in tests:
        if _ast.dump(_ast.UnaryOp(_ast.Not(), test)) in seen:
            return True
        if isinstance(test, _ast.Compare) and len(test.ops) == 1 and type(test.ops[0]).__name__ in _FLIP:
            flipped = _ast.Compare(test.left, [getattr(_ast, _FLIP[type(test.ops[0]).__name__])()], test.comparators)
            if _ast.dump(flipped) in seen:
                return True
    return False


def SPOTTED(code):
    text = _check_text(code)
    return "UnicodeTranslateError" in text or _contradicts(text) or _shown(text) not in KNOWN
'''
# Swallows every check it does not spot as a twin.
SPOT_TWINS = _SPOT + '''
def KEEP(code):
    return "witness(" in code and not SPOTTED(code)
''' + _COMPROMISE
# Swallows only the checks whose twin it will spot (it runs the grader's decoy_for on each): never a twin.
SELECTIVE = _SPOT + '''
import random as _random
from edumatcher.grading.decoys import decoy_for as _decoy_for


def KEEP(code):
    if "witness(" not in code or SPOTTED(code):
        return False
    twin = _decoy_for(_check_text(code), _random.Random(0))
    return twin is None or "(a hidden test) expects" not in twin.what
''' + _COMPROMISE
# The gc + ctypes route: no sys.modules, the snapshot's restore replaced through the C API.
GC_CTYPES = '''
import ast, ctypes, gc
_snap = next(o for o in gc.get_objects() if type(o).__name__ == "Snapshot" and hasattr(o, "witness"))
_set = ctypes.pythonapi.PyObject_SetAttr
_set.argtypes = (ctypes.py_object, ctypes.py_object, ctypes.py_object)
_set(_snap, "restore", lambda *args, **kwargs: [])
class _Swallow(ast.NodeTransformer):
    def visit_Module(self, node):
        handler = ast.ExceptHandler(type=ast.Name("BaseException", ast.Load()), name=None, body=[ast.Pass()])
        node.body = [ast.Try(body=[s], handlers=[handler], orelse=[], finalbody=[]) for s in node.body]
        return ast.fix_missing_locations(node)
get_ipython().ast_transformers.append(_Swallow())
'''


def copy_visible(path: Path) -> list[str]:
    """The visible part of each check of ``path``'s student copy, as ``_shown`` normalises it."""
    shown = []
    for cell in release_notebook(nbformat.read(path, as_version=4)).cells:
        if is_check(cell):
            shown.append("\n".join(line.rstrip() for line in cell.source.split("\n") if line.strip()))
    return shown


def attack(path: Path, code: str) -> nbformat.NotebookNode:
    return submission(path, blank=True, extra=f"KNOWN = {copy_visible(path)!r}\n" + code)


def exposed_points(path: Path, seeds: range = range(4)) -> tuple[float, float]:
    """(points of checks whose twin the selective attacker can spot or that have none, all points). A check
    counts as exposed if any of ``seeds`` gives it such a twin (the grader draws from the system's randomness)."""
    exposed = total = 0.0
    for cell in nbformat.read(path, as_version=4).cells:
        if is_check(cell):
            points = float(cell.metadata["nbgrader"]["points"])
            twins = [decoy_for(cell.source, random.Random(seed)) for seed in seeds]
            total += points
            if any(twin is None or "(a hidden test) expects" not in twin.what for twin in twins):
                exposed += points
    return exposed, total


# Every exercise, by topic. Before, the selective attacker earned, undetected: 9/9 on 01_edit_and_reprofile,
# 03_significance_test, 11_stale_reference and 02_folded_stacks, 11/11 on 12_array_level_store, 7/7 on
# 09_frozen_cycles, 6/6 on 07_compaction_break_even, 3/5 on 01_next_one_percent, 4/7 on 04_exact_ticks, 8/10 on
# 08_masked_ring, 5/7 on 04_slots_memory, 05_enum_table_builder, 07_lazy_cancel_heap and 09_gc_pause_freeze,
# 6/8 on 06_cached_topics.
COVERED = tuple(path.stem.split("_", 1)[1] for path in sorted(REAL_SOURCES.glob("[0-9][0-9]_*.ipynb")))
CASES = {
    # name: (exercise source, attack, (status, total) expected)
    **{f"spot_twins_{topic}": (real_exercise(topic), SPOT_TWINS, ("tampered", 0)) for topic in COVERED},
    **{f"selective_{topic}": (real_exercise(topic), SELECTIVE, ("graded", 0)) for topic in COVERED},
    "spot_twins_toy": (TOY, SPOT_TWINS, ("tampered", 0)),
    "gc_ctypes_toy": (TOY, GC_CTYPES, ("tampered", 0)),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SubmissionResult]:
    root = tmp_path_factory.mktemp("attacks")
    results = {}
    for name, (source, code, _) in CASES.items():
        path = root / name / f"{source.stem}.ipynb"
        path.parent.mkdir()
        path.write_text(notebook_text(attack(source, code)), encoding="utf-8")
        results[name] = grade_one(load_exercise(source), path, cell_timeout=CELL_TIMEOUT, timeout=NOTEBOOK_TIMEOUT,
                                  sandbox=SANDBOX)
    return results


def check_attack(result: SubmissionResult, expected: tuple[str, float]) -> None:
    assert (result.status, result.total) == expected, (result.status, result.total, result.reason,
                                                       [(c.grade_id, c.passed) for c in result.checks])
    if expected[0] == "tampered":
        assert "decoy" in result.reason and "passed" in result.reason, result.reason


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_an_attacker_who_spots_twins_earns_nothing(graded: dict[str, SubmissionResult], name: str) -> None:
    check_attack(graded[name], CASES[name][2])


@pytest.mark.parametrize("topic", COVERED)
def test_every_check_has_a_twin_in_its_hidden_tests(topic: str) -> None:
    exposed, total = exposed_points(real_exercise(topic))
    assert exposed == 0 and total > 0, (exposed, total)


def test_how_many_points_each_exercise_leaves_to_the_selective_attacker() -> None:
    # None, on every exercise; the table is printed for the record
    # (python -m pytest tests/test_grade_attacks.py -k leaves -s).
    exposed = {}
    for path in sorted(REAL_SOURCES.glob("*.ipynb")):
        exposed[path.stem], total = exposed_points(path)
        print(f"{path.stem}: {exposed[path.stem]:g} of {total:g} points exposed")
    assert len(exposed) == len(COVERED) and not any(exposed.values()), exposed


def test_the_lock_holds_through_another_spelling_of_out(tmp_path: Path) -> None:
    out = tmp_path / "gradebook"
    out.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(out)
    with RunLock(out), pytest.raises(GradebookBusy, match="in use by another run"):
        with RunLock(alias):
            pass
    with RunLock(tmp_path / "gradebook" / ".." / "alias"):  # released: taken again through the link
        pass


def test_a_change_to_a_hidden_test_alone_changes_the_digest() -> None:
    nb = nbformat.read(TOY, as_version=4)
    before = grading_digest(nb)
    check = next(cell for cell in nb.cells if is_check(cell) and END_HIDDEN_TESTS in cell.source)
    start = check.source.index(BEGIN_HIDDEN_TESTS)
    copy = [cell.source for cell in release_notebook(nbformat.read(TOY, as_version=4)).cells]
    check.source = check.source[:start] + BEGIN_HIDDEN_TESTS + "\nassert 1 == 1" + check.source[start + len(
        BEGIN_HIDDEN_TESTS):]
    assert [cell.source for cell in release_notebook(nb).cells] == copy  # the student copy is the same
    assert grading_digest(nb) != before, grade_id(check)
