"""nbgrader 0.9.6 accepts our exercises: solutions validate, student copies fail every check, and
``nbgrader generate_assignment`` writes exactly our student copies.

nbgrader runs from its own tool environment, ``.venv-nbgrader`` (``make`` builds it; its Jupyter
server and lab extensions must stay out of ``.venv``, which ``make lab`` and the browser tests use).
Without it the tests skip with one line, except in CI, where they must run.

Cost: every notebook is executed once by nbgrader (15 solutions + 15 student copies), in two
processes at once, each with half the solutions and half the student copies (one nbgrader start
each); the wall time is printed (``-s``) and stored in ``artifacts/nbgrader-validate.txt``.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_markdown_cell, new_notebook

from edumatcher.grading import notebook_text

REPO = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("EDUMATCHER_NBGRADER_VENV", REPO / ".venv-nbgrader"))
PYTHON = VENV / "bin" / "python"
NBGRADER = VENV / "bin" / "nbgrader"
DRIVER = Path(__file__).with_name("nbgrader_validate_many.py")
SOLUTIONS = sorted((REPO / "solutions").glob("*.ipynb"))
EXERCISES = sorted((REPO / "exercises").glob("*.ipynb"))


@pytest.fixture(scope="module")
def nbgrader_python() -> Path:
    """The nbgrader environment's interpreter; skip (fail in CI) when it is missing."""
    if not (PYTHON.is_file() and NBGRADER.is_file()):
        message = f"no nbgrader tool environment at {VENV} (make test builds it; or: make nbgrader)"
        if os.environ.get("CI"):
            pytest.fail("CI must run the nbgrader compatibility tests: " + message)
        pytest.skip(message)
    return PYTHON


def _legacy_notebook() -> nbformat.NotebookNode:
    """A Markdown answer cell marked the old way (solution, not graded): nbgrader must refuse it."""
    nb = new_notebook(cells=[new_markdown_cell("### BEGIN SOLUTION\nBecause.\n### END SOLUTION", id="a_old",
                                               metadata={"nbgrader": {"grade": False, "solution": True,
                                                                      "locked": False, "grade_id": "a_old",
                                                                      "schema_version": 3}})])
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    return nb


@pytest.fixture(scope="module")
def validations(nbgrader_python: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """nbgrader's verdict on every solution (normal) and every student copy (--invert), keyed by file name
    with a ``solutions/`` or ``exercises/`` prefix; two processes share the notebooks, at the same time."""
    root = tmp_path_factory.mktemp("nbgrader_validate")
    # Copies: nbgrader runs each notebook in its own folder; nothing should land in the repository.
    for name, files in (("solutions", SOLUTIONS), ("exercises", EXERCISES)):
        (root / name).mkdir()
        for path in files:
            shutil.copy(path, root / name / path.name)
    (root / "solutions" / "zz_legacy_markdown_answer.ipynb").write_text(notebook_text(_legacy_notebook()),
                                                                         encoding="utf-8")
    solutions = [str(p) for p in sorted((root / "solutions").glob("*.ipynb"))]
    exercises = [str(p) for p in sorted((root / "exercises").glob("*.ipynb"))]
    # Alternate files between the two processes: solutions take longer than blanks, so each gets both.
    batches = {f"batch {k}": ["--normal", *solutions[k::2], "--invert", *exercises[k::2]] for k in (0, 1)}
    started, cpu_before = time.perf_counter(), _children_cpu()
    running = {name: subprocess.Popen([str(nbgrader_python), str(DRIVER), *args], cwd=root, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
               for name, args in batches.items()}
    report: dict[str, dict[str, Any]] = {}
    for name, process in running.items():
        out, err = process.communicate(timeout=1200)
        assert process.returncode == 0, f"nbgrader driver failed on {name}:\n{err[-3000:]}"
        for path, verdict in json.loads(out.strip().splitlines()[-1]).items():
            report[f"{Path(path).parent.name}/{Path(path).name}"] = verdict
    seconds, cpu = time.perf_counter() - started, _children_cpu() - cpu_before
    interpreter = subprocess.run([str(nbgrader_python), "-c", "import platform; print(platform.python_implementation(), "
                                  "platform.python_version())"], capture_output=True, text=True).stdout.strip()
    # CPU time (nbgrader and its kernels) beside wall time: on a shared machine the wall time mostly says
    # how busy the other processes were (the load average says how busy).
    line = (f"nbgrader validate: {len(SOLUTIONS)} solutions + {len(EXERCISES)} student copies (--invert) in "
            f"{seconds:.1f} s wall, {cpu:.1f} s CPU (nbgrader + kernels), 2 processes at once, load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; nbgrader in {VENV.name} on {interpreter}")
    print(line)
    (REPO / "artifacts").mkdir(exist_ok=True)
    (REPO / "artifacts" / "nbgrader-validate.txt").write_text(line + "\n", encoding="utf-8")
    return report


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _problems(verdict: dict[str, Any]) -> str:
    return verdict["error"] or json.dumps(verdict["results"])[:2000]


def test_every_solution_passes_nbgrader_validate(validations: dict[str, dict[str, Any]]) -> None:
    assert SOLUTIONS, "no solutions/*.ipynb"
    for path in SOLUTIONS:
        verdict = validations[f"solutions/{path.name}"]
        assert verdict["verdict"] == "pass", f"nbgrader validate {path.name}: {_problems(verdict)}"


def test_nbgrader_refuses_an_ungraded_markdown_answer(validations: dict[str, dict[str, Any]]) -> None:
    """The form our sources used before: proves the validation above can fail, for the reason the issue gave."""
    verdict = validations["solutions/zz_legacy_markdown_answer.ipynb"]
    assert verdict["verdict"] == "fail", verdict
    assert any("Markdown solution cell is not marked as a grade cell" in line for line in verdict["log"]), verdict


def test_every_student_copy_fails_every_check_under_invert(validations: dict[str, dict[str, Any]]) -> None:
    assert len(EXERCISES) == len(SOLUTIONS)
    for path in EXERCISES:
        verdict = validations[f"exercises/{path.name}"]
        assert verdict["verdict"] == "pass", f"nbgrader validate --invert {path.name}: {_problems(verdict)}"


def _cell_view(cell: nbformat.NotebookNode) -> dict[str, Any]:
    view = {"id": cell.get("id"), "cell_type": cell.cell_type, "source": cell.source,
            "metadata": json.loads(json.dumps(cell.metadata))}
    if cell.cell_type == "code":
        view["outputs"], view["execution_count"] = cell.outputs, cell.execution_count
    return view


def test_generate_assignment_writes_our_student_copies(nbgrader_python: Path, tmp_path: Path) -> None:
    """nbgrader's own release of solutions/ equals exercises/, cell by cell (type, source, all cell
    metadata including the nbgrader block and its checksum, ids, outputs)."""
    source = tmp_path / "source" / "ex"
    source.mkdir(parents=True)
    for path in SOLUTIONS:
        shutil.copy(path, source / path.name)
    done = subprocess.run([str(NBGRADER), "generate_assignment", "ex", "--no-db", "--force",
                           f"--CourseDirectory.root={tmp_path}"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    differences = []
    for path in EXERCISES:
        ours = nbformat.read(path, as_version=4)
        theirs = nbformat.read(tmp_path / "release" / "ex" / path.name, as_version=4)
        if len(ours.cells) != len(theirs.cells):
            differences.append(f"{path.name}: {len(ours.cells)} cells here, {len(theirs.cells)} from nbgrader")
            continue
        for index, (mine, nbgraders) in enumerate(zip(ours.cells, theirs.cells, strict=True)):
            a, b = _cell_view(mine), _cell_view(nbgraders)
            differences += [f"{path.name} cell {index} {key}: ours {a.get(key)!r} nbgrader {b.get(key)!r}"
                            for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]
    assert not differences, "\n".join(differences[:20])
