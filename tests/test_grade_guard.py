"""Checks that cannot be talked past from inside the kernel (``kernel_guard``, ``guarded_checks``).

Each trick below sits in the first answer cell of a toy submission whose answers are all wrong, so
every check fails honestly; without the guard, each of ``TRICKS`` scored 5/5 (some while every
check cell of the autograded notebook showed a traceback). One module-scoped run grades them all,
two at a time; ``Snapshot`` is also tested in-process, without a kernel.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from edumatcher.grading import grade_one, notebook_text, release_notebook
from edumatcher.grading.guarded_checks import witness_line
from edumatcher.grading.kernel_guard import Snapshot
from edumatcher.grading.notebook_cells import grade_id
from edumatcher.grading.report import feedback_markdown
from edumatcher.grading.score import SubmissionResult

TOY = Path(__file__).parent / "fixtures" / "grading" / "solutions" / "ex_toy.ipynb"
CHECKS = ("c_add", "c_mean", "c_mean_empty")
WRONG_ADD = "def add(a, b):\n    return 0"
WRONG_MEAN = "def mean(values):\n    return 0"

# Tricks that changed how later cells run; each is followed by a wrong `add` in the same cell.
TRICKS = {
    "input_transformer_post": "get_ipython().input_transformers_post.append(lambda lines: [])",
    "input_transformer_cleanup": "get_ipython().input_transformers_cleanup.append(lambda lines: [])",
    "ast_try_except": (
        "import ast\n\n\nclass Swallow(ast.NodeTransformer):\n"
        "    def visit_Module(self, node):\n"
        "        handler = ast.ExceptHandler(type=ast.Name('BaseException', ast.Load()), name=None,\n"
        "                                    body=[ast.Pass()])\n"
        "        node.body = [ast.Try(body=node.body or [ast.Pass()], handlers=[handler], orelse=[],\n"
        "                             finalbody=[])]\n"
        "        return ast.fix_missing_locations(node)\n\n\n"
        "get_ipython().ast_transformers.append(Swallow())"),
    "post_run_cell_clears_error": (
        "def forget(result):\n    result.error_in_exec = None\n\n\n"
        "get_ipython().events.register('post_run_cell', forget)"),
    "wrapped_do_execute": (
        "kernel = get_ipython().kernel\noriginal = kernel.do_execute\n\n\n"
        "async def do_execute(*args, **kwargs):\n"
        "    reply = await original(*args, **kwargs)\n"
        "    return {'status': 'ok', 'execution_count': reply.get('execution_count'),\n"
        "            'user_expressions': reply.get('user_expressions', {}), 'payload': []}\n\n\n"
        "kernel.do_execute = do_execute"),
    "wrapped_run_cell_async": (
        "shell = get_ipython()\noriginal = shell.run_cell_async\n\n\n"
        "async def run_cell_async(*args, **kwargs):\n"
        "    result = await original(*args, **kwargs)\n    result.error_in_exec = None\n    return result\n\n\n"
        "shell.run_cell_async = run_cell_async"),
    "session_send_fakes_replies": (
        "session = get_ipython().kernel.session\noriginal = session.send\n\n\n"
        "def send(stream, kind, content=None, *args, **kwargs):\n"
        "    if kind == 'error':\n        return None\n"
        "    if kind == 'execute_reply' and content and content.get('status') == 'error':\n"
        "        content = {'status': 'ok', 'execution_count': content.get('execution_count'),\n"
        "                   'user_expressions': {}, 'payload': []}\n"
        "    return original(stream, kind, content, *args, **kwargs)\n\n\n"
        "session.send = send"),
    # A thread puts a statement-by-statement try/except back right after each reset.
    "thread_reinstalls_a_transformer": (
        "import ast\nimport threading\nimport time\n\n\nclass EachSwallowed(ast.NodeTransformer):\n"
        "    def visit_Module(self, node):\n"
        "        node.body = [ast.Try(body=[statement], handlers=[ast.ExceptHandler(\n"
        "            type=ast.Name('BaseException', ast.Load()), name=None, body=[ast.Pass()])],\n"
        "            orelse=[], finalbody=[]) for statement in node.body]\n"
        "        return ast.fix_missing_locations(node)\n\n\n"
        "swallow = EachSwallowed()\nshell = get_ipython()\n\n\ndef keep():\n    while True:\n"
        "        if swallow not in shell.ast_transformers:\n            shell.ast_transformers.append(swallow)\n"
        "        time.sleep(0.0005)\n\n\nthreading.Thread(target=keep, daemon=True).start()"),
}

# Tried too: these score 0 with or without the guard (the reply still says "error"), and must stay 0
# once the guard puts things back. They share one notebook, to save five kernel starts.
ALSO_TRIED = {
    "custom_exc": "get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)",
    "showtraceback_silenced": "get_ipython().showtraceback = lambda *args, **kwargs: None",
    "sys_hooks": "import sys\n\nsys.excepthook = lambda *args: None\nsys.displayhook = lambda value: None",
    "assertion_error_replaced": "import builtins\n\nbuiltins.AssertionError = type('AssertionError', (Warning,), {})",
    "pre_run_cell_raises": (
        "def boom(info):\n    raise RuntimeError('pre_run_cell hook')\n\n\n"
        "get_ipython().events.register('pre_run_cell', boom)"),
    "trace_function_jumps_over_asserts": (
        "import sys\n\n\ndef skip(frame, event, arg):\n"
        "    if event == 'line' and frame.f_code.co_filename.startswith('/tmp/ipykernel'):\n"
        "        import linecache\n"
        "        if linecache.getline(frame.f_code.co_filename, frame.f_lineno).lstrip().startswith('assert'):\n"
        "            try:\n                frame.f_lineno = frame.f_lineno + 1\n"
        "            except ValueError:\n                pass\n"
        "    return skip\n\n\nsys.settrace(skip)"),
}

# An honest answer that uses IPython's machinery for its own purposes: it must still score full.
HONEST_HOOKS = (
    "import ast\n\nruns = []\nget_ipython().events.register('post_run_cell', lambda result: runs.append(1))\n"
    "get_ipython().input_transformers_post.append(lambda lines: [line.rstrip() + '\\n' for line in lines])\n"
    "get_ipython().ast_transformers.append(ast.NodeTransformer())\n\n\n"
    "def add(a, b):\n    return a + b")

# An honest answer whose function, called by the checks, changes things while the check runs:
# matplotlib registers a post_execute callback on first use, and the print goes through a swapped
# sys.stdout. Neither can make a failing line pass, so neither may cost the student a point.
HONEST_PLOTS = (
    "import contextlib\nimport io\n\n\n"
    "def add(a, b):\n"
    "    import matplotlib\n    matplotlib.use('Agg')\n    import matplotlib.pyplot as plt\n\n"
    "    plt.figure()\n    plt.plot([a, b])\n    plt.close('all')\n"
    "    with contextlib.redirect_stdout(io.StringIO()):\n        print(a, b)\n"
    "    return a + b")


def submission(**answers: str) -> nbformat.NotebookNode:
    """The released toy notebook with the source's answers, ``answers`` overriding some."""
    source = nbformat.read(TOY, as_version=4)
    nb = release_notebook(source)
    by_id = {grade_id(cell): cell for cell in source.cells}
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = answers.get(grade_id(cell), by_id[grade_id(cell)].source)
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[SubmissionResult, nbformat.NotebookNode]]:
    root = tmp_path_factory.mktemp("guard")
    notebooks = {name: submission(a_add=f"{trick}\n\n\n{WRONG_ADD}", a_mean=WRONG_MEAN)
                 for name, trick in TRICKS.items()}
    together = "\n\n\n".join(ALSO_TRIED.values())
    notebooks["also_tried_together"] = submission(a_add=f"{together}\n\n\n{WRONG_ADD}", a_mean=WRONG_MEAN)
    notebooks["honest_hooks"] = submission(a_add=HONEST_HOOKS)
    notebooks["honest_plots"] = submission(a_add=HONEST_PLOTS)
    notebooks["honest_wrong_mean"] = submission(a_mean=WRONG_MEAN)

    def grade(name: str) -> tuple[SubmissionResult, nbformat.NotebookNode]:
        path = root / name / "ex_toy.ipynb"
        path.parent.mkdir()
        path.write_text(notebook_text(notebooks[name]), encoding="utf-8")
        executed = root / "executed" / f"{name}.ipynb"
        result = grade_one(TOY, path, cell_timeout=5, timeout=60, executed_path=executed)
        return result, nbformat.read(executed, as_version=4)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(notebooks, pool.map(grade, notebooks), strict=True))


def error_outputs(nb: nbformat.NotebookNode, gid: str) -> list[dict]:
    cell = next(cell for cell in nb.cells if grade_id(cell) == gid)
    return [out for out in cell.get("outputs", []) if out.get("output_type") == "error"]


@pytest.mark.slow
@pytest.mark.parametrize("trick", [*TRICKS, "also_tried_together"])
def test_a_trick_in_an_answer_cell_earns_nothing(graded: dict, trick: str) -> None:
    result, _ = graded[trick]
    # IPython 8 hangs on the wrapped run_cell_async: the run stops at c_add, with 0 all the same.
    assert result.status in ("graded", "timeout"), result.reason
    assert [(c.grade_id, c.passed) for c in result.checks] == [(gid, False) for gid in CHECKS], result.checks
    assert result.total == 0


@pytest.mark.slow
def test_the_stored_check_cells_show_the_checks_as_written(graded: dict) -> None:
    source = {grade_id(cell): cell.source for cell in nbformat.read(TOY, as_version=4).cells}
    for _, executed in graded.values():
        for cell in executed.cells:
            if grade_id(cell) in CHECKS:
                assert cell.source == source[grade_id(cell)]
                assert "edumatcher" not in cell.source


@pytest.mark.slow
def test_honest_answers_using_ipython_hooks_still_score_full(graded: dict) -> None:
    result, executed = graded["honest_hooks"]
    assert (result.status, result.total, result.max_points) == ("graded", 5, 5), result.checks
    assert all(not error_outputs(executed, gid) for gid in CHECKS)


@pytest.mark.slow
def test_honest_answers_that_plot_or_redirect_output_during_a_check_score_full(graded: dict) -> None:
    result, executed = graded["honest_plots"]
    assert (result.status, result.total, result.max_points) == ("graded", 5, 5), result.checks
    assert all(not error_outputs(executed, gid) for gid in CHECKS)


@pytest.mark.slow
def test_ordinary_failures_keep_their_message(graded: dict) -> None:
    result, _ = graded["honest_wrong_mean"]
    assert [c.passed for c in result.checks] == [True, False, False]
    assert result.check("c_mean").message == "AssertionError: mean([1, 2, 3, 4]) should be 2.5, got 0"
    assert result.check("c_mean_empty").message == "AssertionError: mean([]) should raise ValueError"


@pytest.mark.slow
def test_feedback_never_says_every_check_passed_beside_a_traceback(graded: dict) -> None:
    for name, (result, executed) in graded.items():
        shown = [gid for gid in CHECKS if error_outputs(executed, gid)]
        for gid in shown:
            assert not result.check(gid).passed, (name, gid)
        if shown:
            assert "Every check passed" not in feedback_markdown(result), name
    # The trick that clears error_in_exec still leaves its tracebacks in the notebook: they are why it fails.
    result, executed = graded["post_run_cell_clears_error"]
    assert error_outputs(executed, "c_add")
    assert result.check("c_add").message == "AssertionError: add(2, 3) should be 5, got 0"


# --- the snapshot, in-process -----------------------------------------------------------------------

@pytest.fixture
def shell(tmp_path: Path):
    """An in-process IPython shell with no history file (nothing written under ~/.ipython)."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    trace, profile = sys.gettrace(), sys.getprofile()
    shell = InteractiveShell.instance(config=config, ipython_dir=str(tmp_path))
    yield shell
    InteractiveShell.clear_instance()
    sys.settrace(trace)
    sys.setprofile(profile)


def test_snapshot_puts_the_machinery_back(shell) -> None:
    snapshot = Snapshot(shell)
    assert not shell.run_cell("assert False").success
    shell.input_transformers_post.append(lambda lines: [])
    shell.input_transformers_cleanup.append(lambda lines: [])
    shell.ast_transformers.append(object())
    shell.events.register("post_run_cell", lambda result: setattr(result, "error_in_exec", None))
    shell.set_custom_exc((BaseException,), lambda *args, **kwargs: None)
    shell.run_cell = lambda *args, **kwargs: None
    type(shell).showtraceback = lambda *args, **kwargs: None
    import builtins

    original_assertion = builtins.AssertionError
    builtins.AssertionError = Warning
    seen = snapshot.restore(apply=False)  # what the witness looks at: a report, nothing touched
    assert builtins.AssertionError is Warning and "run_cell" in vars(shell)
    changed = snapshot.restore()
    assert changed == seen
    assert builtins.AssertionError is original_assertion
    for name in ("shell.input_transformers_post", "transformers.cleanup_transforms", "shell.ast_transformers",
                 "events.post_run_cell", "shell.run_cell", "shell.CustomTB", "builtins.AssertionError"):
        assert name in changed
    assert any(name.endswith(".showtraceback") for name in changed)
    assert "run_cell" not in vars(shell)
    assert not shell.run_cell("assert False").success
    assert shell.run_cell("x = 1").success
    assert snapshot.restore() == []  # nothing left to put back


def test_the_witness_stays_silent_when_a_trace_function_was_set(shell) -> None:
    snapshot = Snapshot(shell)
    sent: list[dict] = []
    snapshot.send = lambda stream, kind, content, parent: sent.append(content)
    snapshot.iopub, snapshot.get_parent = object(), lambda channel: {}
    frame = sys._getframe()
    snapshot.witness("t1", frame)
    frame.f_trace = lambda *args: None  # what a function called by the check could set on the check's frame
    try:
        snapshot.witness("t2", frame)
    finally:
        frame.f_trace = None
    assert [content["data"] for content in sent] == [{"edumatcher_check_token": "t1"}]


def test_the_witness_line_calls_the_module_the_kernel_registers() -> None:
    line = witness_line("abc123")
    assert "_edumatcher_kernel_guard" in line and "'abc123'" in line
    compile(line, "<witness>", "exec")


def test_only_a_boolean_pass_from_the_worker_earns_points() -> None:
    from edumatcher.grading import load_exercise
    from edumatcher.grading.score import result_from_events

    events = [{"event": "check", "grade_id": "c_add", "passed": "true"},  # not the boolean the worker writes
              {"event": "check", "grade_id": "c_mean", "passed": True},
              {"event": "check", "grade_id": "c_bonus", "passed": True},  # no such check in the source
              {"event": "executed", "path": "/tmp/x.ipynb"}, {"event": "done"}]
    result = result_from_events(load_exercise(TOY), "s", "s/ex_toy.ipynb", events)
    assert [c.points for c in result.checks] == [0, 2, 0]
    assert result.seconds == 0.0  # the executed path once landed here
