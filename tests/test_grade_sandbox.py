"""The grading sandbox (``edumatcher.grading.sandbox``): attacks from issue 14, graded with and without it.

Each attack is the toy exercise's student copy with the ``a_add`` answer cell replaced by hostile
code (``ATTACKS`` below; the honest ``mean`` answer stays, so a surviving run still scores the
other checks). One ``grade_submissions(jobs=2)`` run grades the whole class under bubblewrap;
a second, smaller one grades the attacks whose point is the sandbox with ``sandbox="none"``, to
show they really work without it. Skipped where bubblewrap cannot run, except in CI (which
installs it: ``.ci/run``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import nbformat
import pytest

from edumatcher.grading import notebook_text, release_notebook
from edumatcher.grading.execute import DEFAULT_MAX_TOTAL_OUTPUT_CHARS
from edumatcher.grading.notebook_cells import grade_id
from edumatcher.grading.sandbox import (
    SandboxUnavailable,
    _probe_bwrap,
    resolve_sandbox,
    sandbox_spec,
    sandboxed_kernel_manager,
)
from edumatcher.grading.submissions import Submission
from edumatcher.grading.supervise import grade_submissions

FIXTURES = Path(__file__).parent / "fixtures" / "grading"
TOY = FIXTURES / "solutions" / "ex_toy.ipynb"
CELL_TIMEOUT = 4
NOTEBOOK_TIMEOUT = 40  # generous: kernels start slowly on a loaded 2-core machine

HAS_BWRAP = bool(_probe_bwrap()[0])
needs_bwrap = pytest.mark.skipif(not HAS_BWRAP and not os.environ.get("CI"), reason=_probe_bwrap()[1] or "bwrap")

# Reads the exercise source (with its solutions) and runs its answer cells: what a cheater wants.
_STEAL = '''\
import json, os, pathlib
def _run_solutions(path):
    nb = json.loads(pathlib.Path(path).read_text())
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {{}}).get("solution") and cell["cell_type"] == "code":
            exec("".join(cell["source"]), globals())
def _find(root):
    for where in ("tests/fixtures/grading/solutions", "solutions"):
        if (pathlib.Path(root) / where / "ex_toy.ipynb").exists():
            return pathlib.Path(root) / where / "ex_toy.ipynb"
{how}
'''
_ROUTES = {
    # the grader's command line names its job file, and the job file names the source
    "steal_jobjson": '''\
for pid in [os.getppid()] + [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        args = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\\0")
    except OSError:
        continue
    for arg in args:
        if arg.endswith(b"job.json"):
            _run_solutions(json.loads(pathlib.Path(arg.decode()).read_text())["source"])
''',
    # the package knows where the repository is
    "steal_package": '''\
import edumatcher
_run_solutions(_find(pathlib.Path(edumatcher.__file__).resolve().parent.parent))
''',
    # the grader's working directory is the repository
    "steal_cwd": '''\
_run_solutions(_find(os.readlink(f"/proc/{os.getppid()}/cwd")))
''',
}
_ADD = "def add(a, b):\n    return a + b\n"
ATTACKS = {
    **{name: _STEAL.format(how=how) for name, how in _ROUTES.items()},
    # the grader and its parent (what ended the run with exit 137 in issue 14); the answer itself is honest.
    # Deliberately NOT "every pid in view": as root outside a sandbox that would kill the machine.
    "kill_parent": _ADD + '''\
import os, signal
def _parent(pid):
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])
for pid in (os.getppid(), _parent(os.getppid())):
    if pid > 0:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
''',
    # a grandchild in its own session that outlives the kernel, then writes outside the run folder
    "double_fork": _ADD + '''\
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(2)
        with open({marker!r}, "w") as f:
            f.write("still here")
    os._exit(0)
os.wait()
''',
    # overwrite a classmate's submitted notebook with a blank one
    "classmate": _ADD + '''\
import shutil
shutil.copyfile({blank!r}, {victim!r})
''',
    "memory": _ADD + "big = bytearray(10 * 1024 ** 3)  # 10 GB\n",
    # 30 MB through one display_id (issue 14: 30 x 10 MB wrote a 300 MB notebook; at 10 MB each the
    # kernel now runs out of its own memory cap first, which is fine but not what this tests)
    "display_flood": _ADD + '''\
from IPython.display import display, update_display
display({"text/plain": "start"}, raw=True, display_id="flood")
for i in range(30):
    payload = {"text/plain": str(i % 10) * 1_000_000}
    if i % 2:
        update_display(payload, raw=True, display_id="flood")
    else:
        display(payload, raw=True, display_id="flood")
''',
    # a cell that overruns must be interrupted (as a message, through bwrap) and the run go on
    "sleeper": _ADD + "import time\ntime.sleep(120)\n",
}


def attack_notebook(code: str) -> nbformat.NotebookNode:
    """The toy student copy, answers from the source, then ``a_add`` replaced by ``code``."""
    source = nbformat.read(TOY, as_version=4)
    answers = {grade_id(cell): cell.source for cell in source.cells}
    nb = release_notebook(source)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = code if grade_id(cell) == "a_add" else answers[grade_id(cell)]
    return nb


def blank_notebook() -> nbformat.NotebookNode:
    return release_notebook(nbformat.read(TOY, as_version=4))


def build_class(root: Path, names: list[str]) -> tuple[list[Submission], dict[str, Path]]:
    """One folder per attacker, plus ``victim`` (a correct notebook the ``classmate`` attack targets)."""
    paths = {"victim": root / "submitted" / "victim" / "ex_toy.ipynb",
             "blank": root / "blank.ipynb", "marker": root / "survivor.txt"}
    for name in names:
        code = ATTACKS[name].format(marker=str(paths["marker"]), blank=str(paths["blank"]),
                                    victim=str(paths["victim"])) if name in ("double_fork", "classmate") else ATTACKS[name]
        target = root / "submitted" / name / "ex_toy.ipynb"
        target.parent.mkdir(parents=True)
        target.write_text(notebook_text(attack_notebook(code)), encoding="utf-8")
    paths["victim"].parent.mkdir(parents=True)
    paths["victim"].write_text(notebook_text(attack_notebook(_ADD)), encoding="utf-8")
    paths["blank"].write_text(notebook_text(blank_notebook()), encoding="utf-8")
    # The victim goes last, so an attack running beside it would have swapped its file already.
    students = [*names, "victim"]
    return [Submission(root / "submitted" / s / "ex_toy.ipynb", s, "ex_toy") for s in students], paths


def assert_kernel_is_sandboxed(cwd: Path) -> None:
    """The kernel command the graders use runs the kernel inside bwrap (checked before any hostile code runs)."""
    with sandboxed_kernel_manager(sandbox_spec(resolve_sandbox("bwrap")), cwd=str(cwd)) as km:
        argv = km.format_kernel_cmd()
    # A short launcher (which only joins the kernel's cgroups and asks to die with the worker) execs bwrap,
    # which runs everything else in namespaces of its own (no network, no view of the grader's processes).
    assert argv[3] == str(os.getpid()) and Path(argv[5]).name == "bwrap", argv
    separator = argv.index("--")
    assert {"--unshare-pid", "--unshare-net"} <= set(argv[6:separator]) or "--unshare-all" in argv[6:separator], argv
    assert "ipykernel_launcher" in " ".join(argv[separator:]), argv


def grade_class(root: Path, names: list[str], sandbox: str):
    from edumatcher.grading import load_exercise

    submissions, paths = build_class(root, names)
    results = grade_submissions(submissions, {"ex_toy": load_exercise(TOY)}, jobs=2, cell_timeout=CELL_TIMEOUT,
                                timeout=NOTEBOOK_TIMEOUT, executed_dir=root / "executed", sandbox=sandbox)
    return {r.student: r for r in results}, paths


@needs_bwrap
def test_attacks_are_contained_by_the_sandbox(tmp_path: Path) -> None:
    assert_kernel_is_sandboxed(tmp_path)  # never run kill_parent outside a sandbox (it would kill pytest)
    names = [*_ROUTES, "kill_parent", "double_fork", "classmate", "memory", "display_flood", "sandbox_view", "sleeper"]
    rows, paths = grade_class(tmp_path, names, "bwrap")
    assert sorted(rows) == sorted([*names, "victim"])  # the run survived everything: one row each
    for name in _ROUTES:  # the answers were not found: a blank answer for add scores 0 on c_add
        assert rows[name].status == "graded", rows[name]
        assert rows[name].check("c_add").points == 0, (name, rows[name].checks, rows[name].notes)
    assert rows["victim"].status == "graded" and rows["victim"].total == rows["victim"].max_points
    assert "raise NotImplementedError" not in paths["victim"].read_text(encoding="utf-8")  # file untouched
    assert rows["classmate"].total == rows["classmate"].max_points
    assert any("PermissionError" in n or "FileNotFoundError" in n or "Read-only" in n for n in rows["classmate"].notes)
    # the allocation fails in its cell; every check still runs (add was defined before it)
    assert rows["memory"].total == rows["memory"].max_points
    assert any("MemoryError" in note for note in rows["memory"].notes), rows["memory"].notes
    # its parent is the namespace's init, which ignores it: the rest of the class is graded
    assert rows["kill_parent"].status == "graded", rows["kill_parent"]
    flood = tmp_path / "executed" / "display_flood" / "ex_toy.ipynb"
    assert flood.stat().st_size < 1.5 * DEFAULT_MAX_TOTAL_OUTPUT_CHARS, flood.stat().st_size
    assert rows["display_flood"].total == rows["display_flood"].max_points
    # the overrunning cell was interrupted through bwrap and the checks after it ran
    assert rows["sleeper"].total == rows["sleeper"].max_points, rows["sleeper"]
    assert any("timed out" in note for note in rows["sleeper"].notes), rows["sleeper"].notes
    time.sleep(3)  # the double-forked child would have written by now
    assert not paths["marker"].exists()


ATTACKS["sandbox_view"] = _ADD + '''\
import os, pathlib, sys, edumatcher
seen = {
    "package": str(pathlib.Path(edumatcher.__file__).resolve().parent.parent),
    "repo": sorted(os.listdir(pathlib.Path(edumatcher.__file__).resolve().parent.parent)),
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "ppid": os.getppid(),
    "writable_tmp": os.access("/tmp", os.W_OK),
}
assert seen["repo"] == sorted(set(seen["repo"]) & {"edumatcher", ".venv", "venv"}), seen
assert seen["ppid"] == 1 and max(seen["pids"]) < 10, seen
'''


def test_the_attacks_work_without_the_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same notebooks with ``sandbox="none"``: the reason the sandbox exists (issue 14)."""
    monkeypatch.chdir(Path(__file__).parent.parent)  # the grader runs from the repository, as instructors do
    rows, paths = grade_class(tmp_path, [*_ROUTES, "double_fork", "classmate"], "none")
    for name in _ROUTES:
        assert rows[name].total == rows[name].max_points, (name, rows[name].checks, rows[name].notes)
    time.sleep(3)
    assert paths["marker"].read_text(encoding="utf-8") == "still here"  # outlived its submission
    assert "raise NotImplementedError" in paths["victim"].read_text(encoding="utf-8")  # swapped


def test_without_bwrap_both_auto_and_bwrap_refuse_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    _probe_bwrap.cache_clear()
    try:
        for mode in ("auto", "bwrap"):  # issue 25: auto used to grade unsandboxed, as the instructor
            with pytest.raises(SandboxUnavailable, match="bwrap is not installed") as refused:
                resolve_sandbox(mode)
            assert "apt-get install bubblewrap" in str(refused.value) and "--sandbox none" in str(refused.value)
            assert "\n" not in str(refused.value)
    finally:
        _probe_bwrap.cache_clear()
    assert resolve_sandbox("none").kind == "none"
    with pytest.raises(SandboxUnavailable, match="auto, bwrap, none"):
        resolve_sandbox("docker")


def _message(msg_type: str, content: dict) -> dict:
    return {"msg_type": msg_type, "header": {"msg_type": msg_type}, "parent_header": {"msg_id": "m"},
            "content": content, "metadata": {}}


def test_stored_output_is_capped_per_notebook_and_through_display_ids() -> None:
    """No kernel: messages fed straight to the grading client, as nbclient would."""
    from nbformat.v4 import new_code_cell, new_notebook

    from edumatcher.grading.execute import _GradingClient

    nb = new_notebook(cells=[new_code_cell("") for _ in range(40)])
    client = _GradingClient(nb, 20_000, 100_000, kernel_name="python3")
    client.clear_before_next_output = False  # what async_execute_cell sets before a cell runs
    for index, cell in enumerate(nb.cells[:30]):  # 30 cells, each just under the per-cell cap
        client.output(cell.outputs, _message("stream", {"name": "stdout", "text": "x" * 19_000}), None, index)
    flood = {"data": {"text/plain": "y" * 19_000}, "metadata": {}, "transient": {"display_id": "d"}}
    for index in range(30, 40):  # and a display_id shown in each further cell, then updated
        client.process_message(_message("display_data", flood), nb.cells[index], index)
        client.process_message(_message("update_display_data", flood), nb.cells[index], index)
    stored = len(nbformat.writes(nb))
    assert stored < 100_000 + 40 * 1_000, stored  # the cap plus notes and JSON framing
    assert "output cap reached" in nbformat.writes(nb)


def test_folders_under_tmp_are_bound_after_the_private_tmp(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clone in a temporary folder (CI's) keeps its venv and package visible inside the sandbox; the kernel's
    working folder is a tmpfs of its own, mounted after them."""
    from edumatcher.grading import sandbox
    from edumatcher.grading.sandbox import wrap_kernel_command

    monkeypatch.setattr(sandbox, "_python_folders", lambda: ["/tmp/clone/.venv", "/tmp/clone/edumatcher"])
    spec = {**sandbox_spec(resolve_sandbox("none")), "kind": "bwrap", "bwrap": "/usr/bin/bwrap"}
    argv = wrap_kernel_command(["python", "-m", "ipykernel_launcher"], spec, cwd="/tmp/run", ipc_dir="/tmp/ipc")
    tmpfs = {argv[i + 1]: i for i, word in enumerate(argv) if word == "--tmpfs"}
    binds = [i for i, word in enumerate(argv) if word in ("--ro-bind", "--bind") and argv[i + 1].startswith("/tmp")]
    assert len(binds) == 3 and all(i > tmpfs["/tmp"] for i in binds), argv  # the venv, the package, the sockets
    assert tmpfs["/tmp/run"] > tmpfs["/tmp"] and "/tmp/run" not in [argv[i + 1] for i in binds]
    # Every folder above a bound one is made readable by all: bwrap would make it 0700.
    made = {argv[i + 1]: argv[i - 1] for i, word in enumerate(argv) if word == "--dir"}
    assert made["/tmp/clone"] == "0755", made
