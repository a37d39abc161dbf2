"""No submission can stop or poison the class run (issue 25, part 2): a sandbox's limits, tested for real.

Kernel cases (one module-scoped run, two at a time, bubblewrap, the grader as root when CI runs it): a
fork bomb graded beside an honest classmate, a kernel that fills its working folder and ``/tmp``, a
flood of display metadata and of widget state, a widget opened without ``_model_module``, metadata
nested 900 deep, an honest nbformat v3 notebook, and shared memory beyond ``--memory-mb``. The output
caps and the reading of notebooks are also tested without kernels.
"""

from __future__ import annotations

import json
import os
import resource
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from toy_submissions import SANDBOX, TOY

from edumatcher.grading import SubmissionResult, grade_one, load_exercise, notebook_text, release_notebook
from edumatcher.grading.execute import DEFAULT_MAX_TOTAL_OUTPUT_CHARS, _GradingClient
from edumatcher.grading.kernel_cgroups import CgroupSupport, probe
from edumatcher.grading.notebook_cells import grade_id
from edumatcher.grading.sandbox import SandboxChoice, resolve_sandbox
from edumatcher.grading.submissions import MAX_METADATA_DEPTH, read_submission

CELL_TIMEOUT = 6
NOTEBOOK_TIMEOUT = 60
ADD = "def add(a, b):\n    return a + b\n"


def with_add(code: str) -> nbformat.NotebookNode:
    """The solved toy notebook whose ``add`` answer cell also runs ``code`` (after defining add)."""
    source = nbformat.read(TOY, as_version=4)
    answers = {grade_id(cell): cell.source for cell in source.cells}
    nb = release_notebook(source)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = ADD + code if grade_id(cell) == "a_add" else answers[grade_id(cell)]
    return nb


def nested(depth: int) -> str:
    """JSON text of objects nested ``depth`` deep (built as text: nbformat itself recurses too far on it)."""
    return '{"down": ' * depth + '"bottom"' + "}" * depth


def deep_metadata() -> str:
    """The toy solution with metadata nested 900 deep (issue 25: a permanent "grader failed: RecursionError")."""
    nb = nbformat.read(TOY, as_version=4)
    nb.cells[0].metadata["trap"] = "TRAP"  # a read-only cell: restored from the source anyway
    nb.cells.append({"cell_type": "code", "source": "x = 1", "metadata": {"trap": "TRAP", "tags": 7},
                     "outputs": [], "execution_count": None})
    return json.dumps(nb).replace('"TRAP"', nested(900))  # as a file: nbformat would refuse to write it


def version_3() -> str:
    return nbformat.writes(nbformat.convert(nbformat.read(TOY, as_version=4), 3))


BOMB = '''
import os, time
started = time.monotonic()
while time.monotonic() - started < 20:
    try:
        os.fork()
    except OSError:
        pass
'''
FILL = '''
import os
written = {}
for folder in (".", "/tmp", "/dev/shm"):
    total = 0
    try:
        for i in range(200):
            with open(os.path.join(folder, f"fill{i}"), "wb") as handle:
                for _ in range(10):
                    handle.write(b"x" * 1_000_000)
                    total += 1_000_000
    except OSError:
        pass
    written[folder] = total
print("WRITTEN", written)
'''
METADATA_FLOOD = '''
from IPython.display import display
for i in range(40):
    display({"text/plain": "small"}, raw=True, metadata={"text/plain": {"blob": "m" * 10_000_000}})
'''
WIDGET_FLOOD = '''
from comm import create_comm
create_comm(target_name="jupyter.widget", data={"state": {"_model_name": "Junk"}})  # no _model_module
for i in range(20):
    c = create_comm(target_name="jupyter.widget", data={"state": {"_model_name": "X", "_model_module": "y",
                                                                    "blob": "w" * 10_000_000}})
    c.send({"method": "update", "state": {"blob": "v" * 10_000_000}})
'''
MMAP = '''
import mmap
m = mmap.mmap(-1, 3 * 1024 ** 3)
chunk = b"x" * 2 ** 24
for _ in range(3 * 64):
    m.write(chunk)
'''

CASES: dict[str, tuple[Any, dict[str, Any]]] = {
    # Graded first and together: the bomb runs beside its classmate.
    "bomb": (lambda: notebook_text(with_add(BOMB)), {}),
    "classmate": (lambda: notebook_text(with_add("")), {}),
    "fill": (lambda: notebook_text(with_add(FILL)), {}),
    "metadata_flood": (lambda: notebook_text(with_add(METADATA_FLOOD)), {}),
    "widget_flood": (lambda: notebook_text(with_add(WIDGET_FLOOD)), {}),
    "deep_metadata": (deep_metadata, {}),
    "version_3": (version_3, {}),
    "mmap": (lambda: notebook_text(with_add(MMAP)), {"memory_mb": 400}),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[SubmissionResult, Path]]:
    root = tmp_path_factory.mktemp("limits")
    exercise = load_exercise(TOY)

    def grade(name: str) -> tuple[SubmissionResult, Path]:
        build, options = CASES[name]
        path = root / name / "ex_toy.ipynb"
        path.parent.mkdir()
        path.write_text(build(), encoding="utf-8")
        executed = root / "executed" / name / "ex_toy.ipynb"
        return grade_one(exercise, path, cell_timeout=CELL_TIMEOUT, timeout=NOTEBOOK_TIMEOUT,
                         executed_path=executed, **options), executed

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(CASES, pool.map(grade, CASES), strict=True))


def slow(test: Any) -> Any:
    """Slow, and skipped where bubblewrap cannot run, except in CI (which installs it: .ci/run)."""
    skip = pytest.mark.skipif(SANDBOX == "none" and not os.environ.get("CI"), reason="bubblewrap cannot run here")
    return pytest.mark.slow(skip(test))


@slow
def test_a_fork_bomb_touches_no_classmate(graded: dict) -> None:
    result, _ = graded["classmate"]
    assert (result.status, result.total) == ("graded", 5), (result.reason, result.checks, result.notes)
    bomb, _ = graded["bomb"]
    assert bomb.status in ("graded", "timeout", "kernel-died"), bomb.reason
    assert "BlockingIOError" not in bomb.reason
    if (SANDBOX == "auto" and resolve_sandbox("auto").kernel_uid) or probe().has("pids"):
        assert not any("BlockingIOError" in note for note in result.notes)


@slow
def test_the_kernels_folders_are_capped_tmpfs(graded: dict) -> None:
    result, executed = graded["fill"]
    assert (result.status, result.total) == ("graded", 5), (result.reason, result.checks, result.notes)
    text = "".join(out.get("text", "") for cell in nbformat.read(executed, as_version=4).cells
                   for out in cell.get("outputs", []))
    written = eval(text[text.index("WRITTEN") + 8:].splitlines()[0])  # noqa: S307 - the test's own print
    mib = 1024 * 1024
    assert written["."] <= 256 * mib and written["/tmp"] <= 256 * mib and written["/dev/shm"] <= 64 * mib, written
    assert written["."] > 200 * mib, written  # the folder is usable: the cap stops it, nothing sooner


@slow
@pytest.mark.parametrize("name", ["metadata_flood", "widget_flood"])
def test_display_metadata_and_widget_state_count_toward_the_cap(graded: dict, name: str) -> None:
    result, executed = graded[name]
    # Its kernel may crash under its own flood (queued output counts against its address space); the
    # run goes on and the row is recorded either way. What matters: the stored notebook stays small.
    assert result.status in ("graded", "kernel-died"), (result.reason, result.checks, result.notes)
    assert result.status == "kernel-died" or result.total == 5, result.checks
    assert executed.stat().st_size < 1.5 * DEFAULT_MAX_TOTAL_OUTPUT_CHARS, executed.stat().st_size
    assert "widgets" not in nbformat.read(executed, as_version=4).metadata


@slow
def test_deep_metadata_and_a_version_3_notebook_are_graded(graded: dict) -> None:
    for name in ("deep_metadata", "version_3"):
        result, _ = graded[name]
        assert (result.status, result.total) == ("graded", 5), (name, result.reason, result.checks)


@slow
def test_shared_memory_is_counted_where_a_memory_cgroup_exists(graded: dict) -> None:
    result, _ = graded["mmap"]
    if probe().has("memory"):  # 3 GB of shared memory against 400 MB plus the folders: the kernel is ended
        assert result.status == "kernel-died" and "answer cell a_add" in result.reason, result
    else:
        pytest.skip(f"no memory cgroup here ({probe().reasons.get('memory')}): the run's header says so")


def test_the_header_says_what_bounds_memory_and_processes() -> None:
    without = SandboxChoice("bwrap", bwrap="/usr/bin/bwrap", cgroups=CgroupSupport(reasons={"memory": "no cgroups"}))
    line = without.describe_limits(2048)
    assert "shared memory (mmap) is not counted" in line and "no cgroups" in line and "\n" not in line
    full = SandboxChoice("bwrap", bwrap="/usr/bin/bwrap", kernel_uid=True,
                         cgroups=CgroupSupport(parents={"memory": "/m", "pids": "/p"}, version=1))
    assert "shared memory counted" in full.describe_limits(2048) and "a user of its own" in full.describe_limits(2048)
    assert "\n" not in full.describe_limits(2048)


# --- without kernels ---------------------------------------------------------------------------------

def _message(msg_type: str, content: Any) -> dict:
    return {"msg_type": msg_type, "header": {"msg_type": msg_type}, "parent_header": {"msg_id": "m"},
            "content": content, "metadata": {}}


def test_display_metadata_counts_like_data() -> None:
    nb = new_notebook(cells=[new_code_cell("") for _ in range(80)])
    client = _GradingClient(nb, 20_000, 100_000, kernel_name="python3")
    client.clear_before_next_output = False
    for index, cell in enumerate(nb.cells):  # 80 x 10 MB of metadata (issue 25: an 839 MB notebook)
        content = {"data": {"text/plain": "x"}, "metadata": {"text/plain": {"blob": "m" * 10_000_000}}}
        client.process_message(_message("display_data", content), cell, index)
    assert len(nbformat.writes(nb)) < 100_000 + 80 * 1_000


def test_comm_messages_keep_nothing_and_break_nothing() -> None:
    nb = new_notebook(cells=[new_code_cell("")])
    client = _GradingClient(nb, 20_000, 100_000, kernel_name="python3")
    cell = nb.cells[0]
    for msg_type, content in [
        ("comm_open", {"comm_id": "w1", "target_name": "jupyter.widget", "data": {"state": {"_model_name": "X"}}}),
        ("comm_open", {"comm_id": "w2", "target_name": "jupyter.widget",
                       "data": {"state": {"_model_name": "X", "_model_module": "m", "blob": "w" * 5_000_000}}}),
        ("comm_msg", {"comm_id": "w2", "data": {"method": "update", "state": {"blob": "v" * 5_000_000}}}),
        ("comm_msg", {"comm_id": "w3"}),  # no data at all
        ("display_data", [1, 2]),  # content that is not an object
        ("display_data", {"data": "not a dict", "metadata": {}}),
        ("stream", {"name": "stdout"}),  # no text
    ]:
        client.process_message(_message(msg_type, content), cell, 0)
    assert not client.widget_state and not getattr(client, "widget_buffers", None)
    client.set_widgets_metadata()
    assert "widgets" not in nb.metadata and len(nbformat.writes(nb)) < 10_000


def test_deeply_nested_metadata_is_dropped_on_reading(tmp_path: Path) -> None:
    path = tmp_path / "ex_toy.ipynb"
    path.write_text(deep_metadata(), encoding="utf-8")
    nb = read_submission(path)
    assert "trap" not in nb.cells[0].metadata and "trap" not in nb.cells[-1].metadata
    assert "tags" not in nb.cells[-1].metadata  # tags that are not a list of strings would break nbclient
    assert nb.cells[-1].source == "x = 1" and MAX_METADATA_DEPTH < 900
    notebook_text(nb)  # nothing left that recurses too deep


def test_a_version_3_notebook_reads_as_its_version_4_self(tmp_path: Path) -> None:
    path = tmp_path / "ex_toy.ipynb"
    path.write_text(version_3(), encoding="utf-8")
    original = nbformat.read(TOY, as_version=4)
    read = read_submission(path)
    assert [(c.cell_type, c.source) for c in read.cells] == [(c.cell_type, c.source) for c in original.cells]
    assert [grade_id(c) for c in read.cells] == [grade_id(c) for c in original.cells]


def test_the_worker_parses_under_a_memory_cap() -> None:
    from edumatcher.grading.worker import _memory_cap

    in_use = next(int(line.split()[1]) * 1024 for line in Path("/proc/self/status").read_text().splitlines()
                  if line.startswith("VmData:"))
    before = resource.getrlimit(resource.RLIMIT_DATA)
    with pytest.raises(MemoryError), _memory_cap(in_use + 300_000_000):
        bytearray(1_000_000_000)
    assert resource.getrlimit(resource.RLIMIT_DATA) == before
    assert os.path.exists("/proc/self/status")
