"""Chapters 08-12 leave the interpreter's collector as they found it, run one after another in ONE kernel.

Each chapter changes the collector on purpose (it freezes, raises thresholds,
disables automatic collection, installs ``gc.callbacks`` hooks) and promises to
put everything back. Run separately, a chapter that forgets would still pass:
its kernel dies with it. Here the five chapters share one kernel, as they do for
a student who reads them in order, and after each one a probe cell records the
collector's state: ``gc.get_threshold()``, ``gc.isenabled()``,
``gc.get_freeze_count()`` and how many callbacks are on ``gc.callbacks``. Each
record must equal the one taken before that chapter ran.

A second, quick test runs the same harness on two tiny notebooks, one of which
leaves the collector frozen and disabled, to prove the harness notices.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
COURSE = REPO / "course"
CHAPTERS = (
    "08_off_the_message_path",
    "09_garbage_collection",
    "11_the_java_question",
    "03_measuring_honestly",
    "12_beyond_heaps",
)
MARK = "EDUMATCHER-COLLECTOR-STATE "
PROBE = (
    "import gc as _gc, json as _json\n"
    f"print({MARK!r} + _json.dumps([list(_gc.get_threshold()), _gc.isenabled(), _gc.get_freeze_count(), len(_gc.callbacks)]))"
)

State = list[object]


def _probe_state(cell: nbformat.NotebookNode) -> State:
    for output in cell.get("outputs", []):
        for line in output.get("text", "").splitlines():
            if line.startswith(MARK):
                return json.loads(line[len(MARK):])
    raise AssertionError(f"the probe cell printed no state; outputs: {cell.get('outputs')!r}")


def collector_states(notebooks: Sequence[Path], cwd: Path) -> list[tuple[str, State]]:
    """Run every code cell of ``notebooks``, in order, in one kernel; probe the collector before and after each.

    Returns ``[("start", state), (notebook stem, state after it), ...]``. A failing
    cell raises ``nbclient``'s ``CellExecutionError``, naming the cell.
    """
    states: list[tuple[str, State]] = []
    holder = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                               "language": "python"}})
    client = NotebookClient(holder, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}})

    def probe(after: str) -> None:
        cell = nbformat.v4.new_code_cell(PROBE)
        client.nb = nbformat.v4.new_notebook(cells=[cell])  # execute_cell stores the cell back into client.nb
        client.execute_cell(cell, 0)
        states.append((after, _probe_state(cell)))

    with client.setup_kernel():
        probe("start")
        for path in notebooks:
            notebook = nbformat.read(path, as_version=4)
            client.nb = notebook  # the notebook's own cells, executed in the shared kernel
            for index, cell in enumerate(notebook.cells):
                if cell.cell_type == "code":
                    client.execute_cell(cell, index)
            probe(path.stem)
    return states


def changed(states: Sequence[tuple[str, State]]) -> list[str]:
    """One line per notebook whose probe differs from the probe taken just before it."""
    return [
        f"{name}: before it [thresholds, enabled, frozen, callbacks] = {before}, after it {after}"
        for (_, before), (name, after) in zip(states, states[1:], strict=False)
        if before != after
    ]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_chapters_06_to_10_restore_the_collector_in_one_kernel() -> None:
    states = collector_states([COURSE / f"{name}.ipynb" for name in CHAPTERS], COURSE)
    assert [name for name, _ in states] == ["start", *CHAPTERS]
    assert changed(states) == [], "\n".join(changed(states))


@pytest.mark.timeout(120)
def test_the_harness_notices_a_notebook_that_does_not_restore(tmp_path: Path) -> None:
    polite, careless = tmp_path / "polite.ipynb", tmp_path / "careless.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import gc\nt = gc.get_threshold()\ngc.set_threshold(5)\ngc.set_threshold(*t)")]), polite)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import gc\ngc.freeze()\ngc.disable()")]), careless)
    states = collector_states([polite, careless], tmp_path)
    report = changed(states)
    assert len(report) == 1 and report[0].startswith("careless:")
    _, after = states[-1]
    assert after[1] is False and isinstance(after[2], int) and after[2] > 0
