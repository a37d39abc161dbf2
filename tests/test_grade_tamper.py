"""Tampering that gets past the kernel guard, caught by decoy twins (issue 25, part 1), and what stays honest.

Each attack is a submission of the toy exercise (or of a real one) whose answers are blank or wrong,
plus code that makes checks pass whatever the answer. Before decoys, each scored points (noted per
attack); now each is ``tampered`` with 0 points, or scores what its answers earn. Some attackers
have read the grader's source and try to tell a twin from its real check (by the order it runs in,
by the text their copy shows, by patching what checks import, by the token channel): the seeds
below put the twin where each of them bets it is not. Honest notebooks, right or wrong, are never
``tampered``. One module-scoped run grades everything, two at a time, in bubblewrap.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from toy_submissions import ISSUE_25_TOPICS, SANDBOX, TOY, real_exercise

from edumatcher.grading import SubmissionResult, grade_one, load_exercise, notebook_text, release_notebook
from edumatcher.grading.check_messages import HiddenText
from edumatcher.grading.decoys import plan_twins
from edumatcher.grading.notebook_cells import grade_id, is_check
from edumatcher.grading.report import feedback_markdown

CELL_TIMEOUT = 20
NOTEBOOK_TIMEOUT = 150  # generous: real exercises import the engine, on a loaded 2-core machine
WRONG_MEAN = "def mean(values):\n    if not values:\n        raise ValueError('empty')\n    return 0\n"

# Puts the guard's restore out of action and swallows every statement of every cell (issue 25: "a blank
# notebook plus six lines scores full marks"). KEEP decides, from the code of the cell being compiled,
# whether to swallow it; the issue's attacker swallows everything.
_COMPROMISE = '''
import ast, sys
_g = sys.modules["_edumatcher_kernel_guard"]
_snap = _g._snapshot
_g.restore = lambda ack: ack
_g.witness = lambda token: _snap.send(_snap.iopub, "comm_msg", {"comm_id": _g.COMM_ID,
                                      "data": {_g.WITNESS_KEY: token}}, parent=_snap.get_parent("shell"))
_seen = []
class _Swallow(ast.NodeTransformer):
    def visit_Module(self, node):
        code = get_ipython().kernel.get_parent()["content"]["code"]
        if not KEEP(code):
            return node
        handler = ast.ExceptHandler(type=ast.Name("BaseException", ast.Load()), name=None, body=[ast.Pass()])
        node.body = [ast.Try(body=[s], handlers=[handler], orelse=[], finalbody=[]) for s in node.body]
        return ast.fix_missing_locations(node)
get_ipython().ast_transformers.append(_Swallow())
'''
ISSUE_ATTACK = "KEEP = lambda code: True\n" + _COMPROMISE
# The same without touching sys.modules: the guard's snapshot is found through gc, its methods replaced.
GC_ATTACK = '''
import ast, gc
_snap = next(o for o in gc.get_objects() if type(o).__name__ == "Snapshot" and hasattr(o, "witness"))
_snap.restore = lambda *args, **kwargs: []
class _Swallow(ast.NodeTransformer):
    def visit_Module(self, node):
        handler = ast.ExceptHandler(type=ast.Name("BaseException", ast.Load()), name=None, body=[ast.Pass()])
        node.body = [ast.Try(body=[s], handlers=[handler], orelse=[], finalbody=[]) for s in node.body]
        return ast.fix_missing_locations(node)
get_ipython().ast_transformers.append(_Swallow())
'''
# A check runs twice (real and twin): swallow only its first run / only its second one (a check known by
# its first line; the seeds put the twin of c_mean_empty, which shares it, where the attacker bets it is not).
FIRST_RUN_ONLY = '''
def KEEP(code):
    if "witness(" not in code:
        return False
    key = code.split("\\n")[0]
    if key in _seen:
        return False
    _seen.append(key)
    return True
''' + _COMPROMISE
SECOND_RUN_ONLY = '''
def KEEP(code):
    if "witness(" not in code:
        return False
    key = code.split("\\n")[0]
    if key in _seen:
        return True
    _seen.append(key)
    return False
''' + _COMPROMISE
# Swallow only checks that begin with a check of the student's own copy (a twin of a visible-only check
# differs from it there); KNOWN is filled with the copy's check texts below.
COPY_MATCHING = '''
def KEEP(code):
    return any(code.startswith(known.rstrip()) for known in KNOWN)
''' + _COMPROMISE
# No guard touched: what the checks import is patched (it scored 4/5 with a wrong answer).
PATCH_IMPORTS = "import math\nmath.isclose = lambda *args, **kwargs: True\n"
# The answer itself, called by the check, reads the check's token from the running request, sends it on
# the grader's channel and turns the failure into an "ok" reply with no error output (it scored 5/5).
TOKEN_THIEF = '''
import re

def add(a, b):
    kernel = get_ipython().kernel
    session, parent = kernel.session, kernel.get_parent()
    token = re.findall(r"witness[(]'([0-9a-f]+)'[)]", parent["content"]["code"])[-1]
    original = session.send

    def send(stream, kind, content=None, *args, **kwargs):
        if kind == "error":
            return None
        if kind == "execute_reply" and content and content.get("status") == "error":
            session.send = original
            original(kernel.iopub_socket, "comm_msg", {"comm_id": "edumatcher-grader-witness",
                     "data": {"edumatcher_check_token": token}}, parent=parent)
            content = {"status": "ok", "execution_count": content.get("execution_count"),
                       "user_expressions": {}, "payload": []}
        return original(stream, kind, content, *args, **kwargs)

    session.send = send
    return 0
'''
# A private builtins dict for the cells: their "from math import isclose" gets a fake (issue 25: 4/5).
PRIVATE_BUILTINS = '''
import builtins, types
_fake_math = types.ModuleType("math")
_fake_math.isclose = lambda *args, **kwargs: True
_real_import = builtins.__import__
def _import(name, *args, **kwargs):
    return _fake_math if name == "math" else _real_import(name, *args, **kwargs)
get_ipython().user_ns["__builtins__"] = {**vars(builtins), "__import__": _import}
'''
# An answer that raises an error carrying the running check's source, hidden tests included, and a cell
# after the last check that raises what it kept (issue 25: hidden-test code in feedback/<student>/).
LEAKY_MEAN = '''
_kept = []
def mean(values):
    code = get_ipython().kernel.get_parent()["content"]["code"]
    _kept.append(code)
    if not values:
        raise ValueError("empty")
    raise RuntimeError(code)
'''
LEAK_LATER = "raise RuntimeError(max(_kept, key=len))"


def copy_checks() -> list[str]:
    return [cell.source for cell in release_notebook(nbformat.read(TOY, as_version=4)).cells if is_check(cell)]


def submission(path: Path = TOY, *, blank: bool = False, extra: str = "", after: str = "",
               **answers: str) -> nbformat.NotebookNode:
    """The student copy of ``path``: answers from the source (blank ones if ``blank``), ``answers`` overriding
    some, ``extra`` appended to the first answer cell, ``after`` as a last code cell."""
    source = nbformat.read(path, as_version=4)
    by_id = {grade_id(cell): cell.source for cell in source.cells}
    nb = release_notebook(source)
    first = True
    for cell in nb.cells:
        if not cell.metadata.get("nbgrader", {}).get("solution") or cell.cell_type != "code":
            continue
        gid = grade_id(cell)
        cell.source = answers.get(gid, cell.source if blank else by_id[gid])
        if first and extra:
            cell.source += "\n\n" + extra
        first = False
    if after:
        nb.cells.append(nbformat.v4.new_code_cell(after))
    return nb


def seed_where(gid: str, twin_first: bool) -> int:
    """A seed whose plan runs the twin of toy check ``gid`` first (``twin_first``) or after it."""
    source = nbformat.read(TOY, as_version=4)
    checks = {index: cell.source for index, cell in enumerate(source.cells) if is_check(cell)}
    where = next(index for index, cell in enumerate(source.cells) if grade_id(cell) == gid)
    return next(seed for seed in range(1000) if plan_twins(checks, random.Random(seed))[where][1] == twin_first)


CASES = {
    # name: (exercise source, notebook, decoy seed)
    "solution": (TOY, lambda: nbformat.read(TOY, as_version=4), None),
    "blank": (TOY, lambda: submission(blank=True), None),
    "honest_wrong_mean": (TOY, lambda: submission(a_mean=WRONG_MEAN), None),
    "issue_attack": (TOY, lambda: submission(blank=True, extra=ISSUE_ATTACK), None),
    "gc_attack": (TOY, lambda: submission(blank=True, extra=GC_ATTACK), None),
    "first_run_only": (TOY, lambda: submission(blank=True, extra=FIRST_RUN_ONLY), seed_where("c_mean_empty", twin_first=True)),
    "second_run_only": (TOY, lambda: submission(blank=True, extra=SECOND_RUN_ONLY), seed_where("c_mean_empty", twin_first=False)),
    "copy_matching": (TOY, lambda: submission(blank=True, extra=f"KNOWN = {copy_checks()!r}\n" + COPY_MATCHING),
                      None),
    "patch_imports": (TOY, lambda: submission(a_mean=WRONG_MEAN, a_add="def add(a, b):\n    return 0\n",
                                              extra=PATCH_IMPORTS), None),
    "token_thief": (TOY, lambda: submission(a_add=TOKEN_THIEF, a_mean=WRONG_MEAN), None),
    "private_builtins": (TOY, lambda: submission(a_add="def add(a, b):\n    return 0\n", a_mean=WRONG_MEAN,
                                                 extra=PRIVATE_BUILTINS), None),
    "leaky": (TOY, lambda: submission(a_mean=LEAKY_MEAN, after=LEAK_LATER), None),
    **{f"issue_attack_{topic}": (real_exercise(topic), lambda topic=topic: submission(
        real_exercise(topic), blank=True, extra=ISSUE_ATTACK), None) for topic in ISSUE_25_TOPICS},
}
ATTACKS = ("issue_attack", "gc_attack", "first_run_only", "second_run_only", "copy_matching", "patch_imports",
           "token_thief", *(f"issue_attack_{topic}" for topic in ISSUE_25_TOPICS))


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SubmissionResult]:
    root = tmp_path_factory.mktemp("tamper")

    def grade(name: str) -> SubmissionResult:
        source, build, seed = CASES[name]
        path = root / name / f"{source.stem}.ipynb"
        path.parent.mkdir()
        path.write_text(notebook_text(build()), encoding="utf-8")
        return grade_one(load_exercise(source), path, cell_timeout=CELL_TIMEOUT, timeout=NOTEBOOK_TIMEOUT,
                         decoy_seed=seed, sandbox=SANDBOX)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(CASES, pool.map(grade, CASES), strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("name", ATTACKS)
def test_tampering_is_caught_by_a_decoy(graded: dict[str, SubmissionResult], name: str) -> None:
    result = graded[name]
    assert result.status == "tampered", (result.status, result.reason, result.checks, result.notes)
    assert result.total == 0 and "decoy" in result.reason and "passed" in result.reason
    assert "tampered" in feedback_markdown(result) and "decoy" not in feedback_markdown(result)


@pytest.mark.slow
def test_honest_notebooks_are_never_tampered(graded: dict[str, SubmissionResult]) -> None:
    expected = {"solution": 5, "blank": 0, "honest_wrong_mean": 1}  # c_add passes with the wrong mean
    for name, total in expected.items():
        result = graded[name]
        assert (result.status, result.total) == ("graded", total), (name, result.reason, result.checks)


@pytest.mark.slow
def test_private_builtins_are_put_back_before_each_check(graded: dict[str, SubmissionResult]) -> None:
    result = graded["private_builtins"]  # scored 4/5 while its builtins stayed in place
    assert result.status == "graded" and result.total == 0, (result.reason, result.checks)


@pytest.mark.slow
def test_feedback_never_carries_hidden_test_code(graded: dict[str, SubmissionResult]) -> None:
    result = graded["leaky"]
    hidden = HiddenText(cell.source for cell in nbformat.read(TOY, as_version=4).cells if is_check(cell))
    text = feedback_markdown(result)
    assert not hidden.leaks(text), text
    assert "RuntimeError in a hidden test" in result.check("c_mean_empty").message
    assert any("not shown: it contained the text of a hidden test" in note for note in result.notes), result.notes
    # A check without hidden tests keeps the kernel's message: it is what students learn from.
    assert result.check("c_mean").message.startswith("RuntimeError: from math import isclose")
