"""Binder, rehearsed here: the course must run in exactly the environment ``binder/`` describes.

The fast tests check the three files repo2docker reads (``runtime.txt``, ``requirements.txt``,
``postBuild``). The rehearsal (marked ``binder`` and ``slow``) then does what a Binder build
does, on this machine, from nothing but those files:

1. make a fresh venv with the Python that ``runtime.txt`` names (from pyenv; skipped with the
   reason if this machine lacks it, and ``.ci/run`` makes sure it does not);
2. ``pip install -r binder/requirements.txt`` (pip's own cache is the only thing reused),
   then run ``binder/postBuild`` from the root of a copy of the repository;
3. check that ``pip check`` is clean and that the venv holds exactly the pinned packages
   plus edumatcher, so the pins are complete and nothing floats;
4. execute every chapter (``course/*.ipynb``) and every solution (``solutions/*.ipynb``)
   with that venv's own kernel, one fresh kernel per notebook, recording wall time and the
   kernel's peak memory (``ru_maxrss`` read inside the kernel by a cell appended at the end,
   which also reports ``sys.prefix`` to prove the kernel is the venv's interpreter).

It fails on any error output, on a kernel that is not the venv's, or on a notebook whose
kernel peaks above 1 GiB (Binder's guaranteed memory). The table of notebook, seconds and
peak MiB is printed and written to ``artifacts/binder/rehearsal.md``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
BINDER = REPO / "binder"
REPORT_DIR = REPO / "artifacts" / "binder"
MEMORY_LIMIT_MIB = 1024
NOTEBOOK_GLOBS = ("course/*.ipynb", "solutions/*.ipynb")
# Packages that only the developers need; a Binder image must not carry them.
DEV_TOOLS = {"pytest", "pytest-timeout", "playwright", "ruff", "hypothesis", "nbval", "coverage", "greenlet"}
_NOT_COPIED = shutil.ignore_patterns(
    ".venv", ".venv-*", ".git", "artifacts", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis",
    "*.egg-info", "build", "dist", ".ipynb_checkpoints", "gradebook",
)


# --- reading binder/ ----------------------------------------------------------------------

def runtime_version(text: str) -> tuple[int, int]:
    """Return (major, minor) from a repo2docker ``runtime.txt`` such as ``python-3.11``.

    >>> runtime_version("python-3.11\\n")
    (3, 11)
    """
    match = re.fullmatch(r"\s*python-(\d+)\.(\d+)(?:\.\d+)?\s*", text)
    if not match:
        raise ValueError(f"runtime.txt should read like 'python-3.11', not {text.strip()!r}")
    return int(match.group(1)), int(match.group(2))


def pinned_requirements(path: Path = BINDER / "requirements.txt") -> dict[str, str]:
    """Return {canonical name: version} of the ``name==version`` lines in *path*.

    Raises ValueError on any line that is not an exact pin, since a range would let the
    Binder image drift away from what the tests ran.
    """
    pins: dict[str, str] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        specifiers = list(requirement.specifier)
        if len(specifiers) != 1 or specifiers[0].operator != "==" or "*" in specifiers[0].version:
            raise ValueError(f"{path.name}:{number}: {raw!r} is not an exact pin (name==version)")
        name = canonicalize_name(requirement.name)
        if name in pins:
            raise ValueError(f"{path.name}:{number}: {requirement.name} is pinned twice")
        pins[name] = specifiers[0].version
    return pins


def find_runtime_python(version: tuple[int, int], environ: dict[str, str] | None = None) -> Path | None:
    """Return an interpreter for *version*, or None: ``$EDUMATCHER_BINDER_PYTHON``, pyenv, then PATH.

    Of several pyenv builds of the same minor version, the newest patch release wins.
    """
    environ = dict(os.environ) if environ is None else environ
    chosen = environ.get("EDUMATCHER_BINDER_PYTHON")
    if chosen:
        return Path(chosen) if Path(chosen).exists() else None
    major, minor = version
    pyenv_root = Path(environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    builds = []
    for candidate in (pyenv_root / "versions").glob(f"{major}.{minor}.*"):
        patch = candidate.name.split(".")[2]
        executable = candidate / "bin" / f"python{major}.{minor}"
        if patch.isdigit() and executable.exists():
            builds.append((int(patch), executable))
    if builds:
        return max(builds)[1]
    on_path = shutil.which(f"python{major}.{minor}", path=environ.get("PATH", os.defpath))
    return Path(on_path) if on_path else None


# --- the fast checks of binder/ -----------------------------------------------------------

def test_runtime_names_a_supported_python():
    major, minor = runtime_version((BINDER / "runtime.txt").read_text(encoding="utf-8"))
    assert (major, minor) >= (3, 10), "the project supports Python >= 3.10 (pyproject requires-python)"


def test_requirements_pin_every_course_dependency_exactly():
    pins = pinned_requirements()
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    declared = _declared_requirements(pyproject)
    assert declared, "found no dependencies in pyproject.toml"
    for requirement in declared:
        name = canonicalize_name(requirement.name)
        assert name in pins, f"binder/requirements.txt does not pin {requirement.name}, which pyproject needs"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"pin {name}=={pins[name]} is outside pyproject's {requirement}")
    assert not DEV_TOOLS & set(pins), f"dev tools pinned for Binder: {sorted(DEV_TOOLS & set(pins))}"
    assert "edumatcher" not in pins, "edumatcher is installed by postBuild, not from PyPI"


def test_postbuild_installs_edumatcher_from_the_repository():
    post_build = BINDER / "postBuild"
    text = post_build.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n") or text.startswith("#!/bin/bash\n")
    assert "set -euo pipefail" in text
    assert post_build.stat().st_mode & stat.S_IXUSR, "postBuild must be executable"
    commands = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert any(re.fullmatch(r"(python -m )?pip install (--no-deps )?(-e )?\.", c) for c in commands), commands


def test_dev_venv_runs_the_binder_pins():
    """When ``make`` installs with the pins as constraints, the tests run what Binder runs."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    if not re.search(r"(-c|--constraint)[ =]binder/requirements\.txt", makefile):
        pytest.skip("the Makefile does not install with `-c binder/requirements.txt`, so versions may differ")
    wanted = runtime_version((REPO / "binder" / "runtime.txt").read_text(encoding="utf-8"))
    if sys.version_info[:2] != wanted:
        pytest.skip(f"the pins are for Python {wanted[0]}.{wanted[1]}; on this Python `make` installs without them")
    from importlib import metadata

    differing = {}
    for name, version in pinned_requirements().items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue  # e.g. a platform-only dependency
        if installed != version:
            differing[name] = (installed, version)
    assert not differing, f"installed vs pinned: {differing}; rerun `make install` (or refresh the pins)"


def test_runtime_python_lookup_prefers_the_newest_pyenv_build(tmp_path):
    for patch in ("3.11.2", "3.11.10", "3.12.1"):
        executable = tmp_path / "versions" / patch / "bin" / f"python{patch.rsplit('.', 1)[0]}"
        executable.parent.mkdir(parents=True)
        executable.touch()
    found = find_runtime_python((3, 11), {"PYENV_ROOT": str(tmp_path), "PATH": ""})
    assert found == tmp_path / "versions" / "3.11.10" / "bin" / "python3.11"
    assert find_runtime_python((3, 9), {"PYENV_ROOT": str(tmp_path), "PATH": ""}) is None


def test_pinned_requirements_reject_ranges(tmp_path):
    loose = tmp_path / "requirements.txt"
    loose.write_text("numpy==2.0.0\nmatplotlib>=3.7\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not an exact pin"):
        pinned_requirements(loose)


def _declared_requirements(pyproject: str) -> list[Requirement]:
    """Return pyproject's runtime and ``course`` requirements (read with tomllib or tomli)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    project = tomllib.loads(pyproject)["project"]
    course = project.get("optional-dependencies", {}).get("course", [])
    return [Requirement(spec) for spec in [*project.get("dependencies", []), *course]]


# --- the rehearsal ------------------------------------------------------------------------

# Run by the rehearsal venv's own Python: executes each notebook with nbclient in a fresh
# kernel, then a last cell that reports the kernel's interpreter and peak memory.
_DRIVER = textwrap.dedent('''
    import json, sys, time
    import nbformat
    from nbclient import NotebookClient

    PROBE = (
        "import json as _j, resource as _r, sys as _s\\n"
        "print('EDUMATCHER-PROBE ' + _j.dumps({'executable': _s.executable, 'prefix': _s.prefix,"
        " 'maxrss_kib': _r.getrusage(_r.RUSAGE_SELF).ru_maxrss,"
        " 'children_maxrss_kib': _r.getrusage(_r.RUSAGE_CHILDREN).ru_maxrss}))"
    )

    for path in sys.argv[1:]:
        notebook = nbformat.read(path, as_version=4)
        notebook.cells.append(nbformat.v4.new_code_cell(PROBE))
        client = NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=True,
                                resources={"metadata": {"path": path.rpartition("/")[0] or "."}})
        cell_seconds = {}
        client.on_cell_execute = lambda cell, cell_index, **_: cell_seconds.__setitem__(cell_index, -time.perf_counter())
        client.on_cell_executed = lambda cell, cell_index, **_: cell_seconds.__setitem__(
            cell_index, cell_seconds[cell_index] + time.perf_counter())
        started = time.perf_counter()
        result = {"notebook": path, "errors": [], "probe": None}
        try:
            client.execute()
        except Exception as exc:  # a timeout or a dead kernel: report it, go on with the next
            result["errors"].append(f"{type(exc).__name__}: {str(exc)[-500:]}")
        result["seconds"] = time.perf_counter() - started
        finished = {i: t for i, t in cell_seconds.items() if t > 0}
        result["cells_seconds"] = sum(finished.values())
        result["slowest_cell"] = max(finished.items(), key=lambda item: item[1], default=None)
        for index, cell in enumerate(notebook.cells):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    result["errors"].append(f"cell {index}: {output['ename']}: {output['evalue']}")
                text = output.get("text", "")
                if output.get("output_type") == "stream" and text.startswith("EDUMATCHER-PROBE "):
                    result["probe"] = json.loads(text.split(" ", 1)[1])
        print(json.dumps(result), flush=True)
''')


@pytest.fixture(scope="module")
def runtime_python() -> Path:
    version = runtime_version((BINDER / "runtime.txt").read_text(encoding="utf-8"))
    found = find_runtime_python(version)
    if found is None:
        pytest.skip(f"binder/runtime.txt asks for Python {version[0]}.{version[1]}, which this machine lacks "
                    "(looked in $EDUMATCHER_BINDER_PYTHON, $PYENV_ROOT/versions and PATH)")
    reported = subprocess.run([str(found), "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, check=True).stdout.strip()
    assert reported == f"{version[0]}.{version[1]}", f"{found} is Python {reported}, runtime.txt says {version}"
    return found


def _run(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def _table(results: list[dict]) -> str:
    rows = ["| notebook | seconds | of which in cells | slowest cell (index: s) | peak MiB (kernel) "
            "| peak MiB (its largest child) | errors |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for result in results:
        probe = result["probe"] or {}
        peak = f"{probe['maxrss_kib'] / 1024:.0f}" if probe else "n/a"
        child = f"{probe['children_maxrss_kib'] / 1024:.0f}" if probe else "n/a"
        slowest = result.get("slowest_cell")
        slowest_text = f"{slowest[0]}: {slowest[1]:.1f}" if slowest else "n/a"
        rows.append(f"| {result['notebook']} | {result['seconds']:.1f} | {result.get('cells_seconds', 0):.1f} "
                    f"| {slowest_text} | {peak} | {child} | {len(result['errors'])} |")
    return "\n".join(rows)


def rehearse(source: Path, notebooks: list[str], runtime_python: Path) -> tuple[dict[str, float], list[dict], Path]:
    """Build the Binder environment from *source*'s ``binder/`` and run *notebooks* in it.

    Works in a temporary directory that is deleted afterwards (only pip's cache outlives
    it). Returns the seconds each stage took, one result per notebook (``notebook``,
    ``seconds``, ``errors``, ``probe``) and the venv path the kernels must report.
    """
    timings: dict[str, float] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="binder-rehearsal-", dir=_fast_scratch_root()) as scratch_name:
        scratch = Path(scratch_name)
        repo = scratch / "repo"
        shutil.copytree(source, repo, ignore=_NOT_COPIED)  # what a clone would hold: no .venv, no caches
        venv = scratch / "venv"
        python = venv / "bin" / "python"
        env = {k: v for k, v in os.environ.items()
               if k not in ("VIRTUAL_ENV", "PYTHONPATH", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "MPLBACKEND")}
        env.update(
            PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv),
            JUPYTER_CONFIG_DIR=str(scratch / "jupyter-config"), JUPYTER_DATA_DIR=str(scratch / "jupyter-data"),
            JUPYTER_RUNTIME_DIR=str(scratch / "jupyter-runtime"), MPLCONFIGDIR=str(scratch / "mpl"),
            IPYTHONDIR=str(scratch / "ipython"),
        )

        _run([str(runtime_python), "-m", "venv", str(venv)], cwd=repo, env=env, timeout=300)
        started = _lap(timings, "copy repository + make venv", started)
        _run([str(python), "-m", "pip", "install", "--quiet", "-r", "binder/requirements.txt"],
             cwd=repo, env=env, timeout=1200)
        started = _lap(timings, "pip install -r binder/requirements.txt", started)
        _run(["bash", "binder/postBuild"], cwd=repo, env=env, timeout=600)
        started = _lap(timings, "binder/postBuild", started)
        overrides = venv / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
        assert overrides.is_file() and json.loads(overrides.read_text()) == json.loads(
            (repo / "binder" / "overrides.json").read_text()), "postBuild must install the course's JupyterLab defaults"

        _run([str(python), "-m", "pip", "check"], cwd=repo, env=env, timeout=120)
        listed = _run([str(python), "-m", "pip", "list", "--format=json", "--exclude-editable"],
                      cwd=repo, env=env, timeout=120).stdout
        installed = {canonicalize_name(p["name"]): p["version"] for p in json.loads(listed)}
        pins = pinned_requirements(repo / "binder" / "requirements.txt")
        for tool in ("pip", "setuptools", "wheel"):  # the venv's own installers, unless the course pins one
            if tool not in pins:
                installed.pop(tool, None)
        assert installed == pins, (
            "the Binder venv does not hold exactly the pinned set; "
            f"unpinned: {sorted(set(installed) - set(pins))}, missing: {sorted(set(pins) - set(installed))}, "
            f"differing: {sorted(n for n in installed if pins.get(n, installed[n]) != installed[n])}")

        started = _lap(timings, "pip check + compare with pins", started)

        driver = scratch / "run_notebooks.py"
        driver.write_text(_DRIVER, encoding="utf-8")
        done = _run([str(python), str(driver), *notebooks], cwd=repo, env=env, timeout=1500)
        started = _lap(timings, f"execute {len(notebooks)} notebooks", started)
        results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    _lap(timings, "delete the scratch directory", started)
    return timings, results, venv


def _fast_scratch_root() -> str | None:
    """Return ``/dev/shm`` when it is a writable directory, else None (the default temp dir).

    The venv is some 20,000 small files written once and deleted minutes later; on a
    shared disk that costs minutes, in memory seconds. It takes about 0.5 GB of RAM while
    the rehearsal runs.
    """
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def _lap(timings: dict[str, float], stage: str, started: float) -> float:
    """Record the seconds since *started* under *stage*; return now (the next stage's start)."""
    now = time.perf_counter()
    timings[stage] = now - started
    return now


def problems_in(results: list[dict], venv: Path) -> list[str]:
    """Return one line per error, foreign kernel or memory overrun in the rehearsal *results*."""
    problems = []
    for result in results:
        name, probe = result["notebook"], result["probe"]
        problems += [f"{name}: {error}" for error in result["errors"]]
        if probe is None:
            problems.append(f"{name}: the measuring cell did not run")
            continue
        if Path(probe["prefix"]) != venv:
            problems.append(f"{name}: kernel ran in {probe['prefix']} ({probe['executable']}), not the Binder venv")
        peak_mib = max(probe["maxrss_kib"], probe["children_maxrss_kib"]) / 1024
        if peak_mib > MEMORY_LIMIT_MIB:
            problems.append(f"{name}: kernel peaked at {peak_mib:.0f} MiB > {MEMORY_LIMIT_MIB} MiB")
    return problems


def write_report(timings: dict[str, float], results: list[dict], runtime_python: Path) -> tuple[Path, str]:
    """Write ``artifacts/binder/rehearsal.md`` (and ``.json``); return its path and text."""
    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    version = subprocess.run([str(runtime_python), "-V"], capture_output=True, text=True).stdout.strip()
    stages = "\n".join(f"- {stage}: {seconds:.1f} s" for stage, seconds in timings.items())
    report = (f"# Binder rehearsal\n\nInterpreter: {runtime_python} ({version}); "
              f"limit {MEMORY_LIMIT_MIB} MiB per kernel.\n\n{stages}\n\n{_table(results)}\n")
    path = REPORT_DIR / "rehearsal.md"
    path.write_text(report, encoding="utf-8")
    (REPORT_DIR / "rehearsal.json").write_text(json.dumps({"timings": timings, "results": results}, indent=2),
                                               encoding="utf-8")
    return path, report


@pytest.mark.binder
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_binder_rehearsal(runtime_python: Path, terminal_summary):
    notebooks = sorted(p.relative_to(REPO).as_posix() for pattern in NOTEBOOK_GLOBS for p in REPO.glob(pattern))
    if not notebooks:
        pytest.skip("no course/*.ipynb or solutions/*.ipynb to rehearse yet")
    timings, results, venv = rehearse(REPO, notebooks, runtime_python)
    report_path, report = write_report(timings, results, runtime_python)
    print("\n" + report)
    terminal_summary(f"binder rehearsal report: {report_path}")
    for line in _table(results).splitlines():
        terminal_summary(line)
    assert [r["notebook"] for r in results] == notebooks, "the driver did not report on every notebook"
    problems = problems_in(results, venv)
    assert not problems, "\n".join(problems)
