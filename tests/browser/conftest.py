"""Fixtures for the browser tests: a JupyterLab server, Debian's Chromium, and where screenshots go.

Session-wide: one JupyterLab (on a free port, random token) serving a *temporary copy* of
the repository, so that running cells and any save can never write outputs into the real
notebooks; one headless Chromium driven by Playwright. Both are torn down at the end, and
kernels are shut down after every test.

Chromium is Debian's (``/usr/bin/chromium``, installed by ``.ci/run``); Playwright's own
browser download is never used. Without Chromium or Playwright the tests skip with the
reason, and ``.ci/run`` turns that skip into a failure in CI.

The copy also holds ``_harness/``: small notebooks made here (a figure and a slider, an
error, a kernel that dies, a broken widget, an exercise with its solution) on which the tests prove that the
checks catch what they claim to catch, before and regardless of the real course.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "artifacts" / "browser"
CHROMIUM = Path(os.environ.get("EDUMATCHER_CHROMIUM", "/usr/bin/chromium"))
# The flags keep Chromium from reaching for the network (updates, sync, field trials): on a
# machine without internet those attempts are refused over and over and slow the start.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
]
VIEWPORT = {"width": 1280, "height": 900}

# Not copied into the server's root: environments, caches and our own outputs.
_NOT_COPIED = shutil.ignore_patterns(
    ".venv", ".venv-*", ".git", "artifacts", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis",
    "*.egg-info", "build", "dist", ".ipynb_checkpoints", "node_modules", "gradebook",
)

# JupyterLab user settings for the test server: no autosave (nothing to write back), every
# cell kept in the DOM (JupyterLab 4 otherwise leaves cells far off-screen unrendered, and
# their outputs could not be inspected), and no automatic bracket closing (so typed code
# lands in the editor exactly as typed). The news prompt is not set here: the defaults the
# repository ships (binder/overrides.json, installed by `make install`) must keep it away.
_LAB_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "windowingMode": "none",
        "codeCellConfig": {"autoClosingBrackets": False},
    },
}


def _missing_prerequisite() -> str | None:
    """Return why the browser tests cannot run here, or None when they can."""
    if not CHROMIUM.exists():
        return f"Chromium not found at {CHROMIUM}: `apt-get install chromium` (.ci/run does this)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed: `pip install -e '.[dev]'`"
    return None


@pytest.fixture(scope="session")
def screenshots_dir(terminal_summary) -> Path:
    """``artifacts/browser/``, emptied of an earlier run's pictures; its path goes in the summary."""
    if SCREENSHOTS.exists():
        for old in SCREENSHOTS.glob("*.png"):
            old.unlink()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    terminal_summary(f"browser screenshots and run summary: {SCREENSHOTS}")
    return SCREENSHOTS


@pytest.fixture(scope="session")
def lab_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository (without .venv/.git/caches) plus the ``_harness/`` notebooks."""
    root = tmp_path_factory.mktemp("lab-root") / "repo"
    shutil.copytree(REPO, root, ignore=_NOT_COPIED)
    write_harness(root / "_harness")
    return root


@pytest.fixture(scope="session")
def lab_server(lab_root: Path, tmp_path_factory: pytest.TempPathFactory, screenshots_dir: Path):
    """A JupyterLab server on a free port serving *lab_root*; stopped (kernels too) at the end."""
    reason = _missing_prerequisite()
    if reason:
        pytest.skip(reason)
    from lab_server import start_lab

    home = tmp_path_factory.mktemp("jupyter-home")
    env = {k: v for k, v in os.environ.items() if k not in ("JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "MPLBACKEND")}
    env.update(
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
    )
    for relative, values in _LAB_SETTINGS.items():
        target = home / "settings" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values), encoding="utf-8")
    server = start_lab(lab_root, python=sys.executable, env=env, token=secrets.token_hex(24),
                       log_path=screenshots_dir / "jupyterlab.log", timeout=120)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def chromium(lab_server):
    """Headless Debian Chromium under Playwright, for the whole session."""
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True, timeout=60_000)
    except Exception:
        playwright.stop()
        raise
    try:
        yield browser
    finally:
        browser.close()
        playwright.stop()


@pytest.fixture
def browser_context(chromium, lab_server) -> Iterator:
    """A fresh browser context (own cookies and storage) per test; afterwards no kernel is left."""
    context = chromium.new_context(viewport=VIEWPORT)
    context.set_default_timeout(60_000)
    try:
        yield context
    finally:
        context.close()
        for session in lab_server.api("api/sessions"):
            lab_server.api(f"api/sessions/{session['id']}", method="DELETE")


@pytest.fixture(scope="session")
def run_log(screenshots_dir: Path) -> Iterator[list[str]]:
    """Lines (one per notebook run) written to ``artifacts/browser/summary.txt`` at the end."""
    lines: list[str] = []
    yield lines
    (screenshots_dir / "summary.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


# --- the harness notebooks ----------------------------------------------------------------

def _notebook(*cells: nbformat.NotebookNode) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = list(cells)
    return notebook


def _graded(cell: nbformat.NotebookNode, grade_id: str, *, solution: bool, grade: bool) -> nbformat.NotebookNode:
    cell.metadata["nbgrader"] = {
        "grade_id": grade_id, "solution": solution, "grade": grade, "locked": not solution,
        "points": 1 if grade else 0, "schema_version": 3,
    }
    return cell


HARNESS_ANSWER = '''def spread(bids, asks):
    """Best ask minus best bid, or None when a side is empty."""
    ### BEGIN SOLUTION
    if not bids or not asks:
        return None

    best_bid = max(bids)
    best_ask = min(asks)
    return best_ask - best_bid
    ### END SOLUTION


example_spread = spread([99, 100], [101, 103])'''

HARNESS_STUB = '''def spread(bids, asks):
    """Best ask minus best bid, or None when a side is empty."""
    # YOUR CODE HERE
    raise NotImplementedError()


example_spread = spread([99, 100], [101, 103])'''

HARNESS_CHECK = '''assert example_spread == 1
assert spread([], [101]) is None
assert spread([5], [7, 6]) == 1
print("spread: all checks pass")'''


def write_harness(folder: Path) -> None:
    """Write the harness notebooks the browser tests use to prove their own checks."""
    new_code, new_md = nbformat.v4.new_code_cell, nbformat.v4.new_markdown_cell
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "exercises").mkdir(exist_ok=True)
    (folder / "solutions").mkdir(exist_ok=True)
    good = _notebook(
        new_md("# Harness: a figure, a slider and a warning"),
        new_code("import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(4, 2.5))\n"
                 "ax.plot([1, 3, 2])\nplt.show()"),
        new_code("import ipywidgets as widgets\nwidgets.IntSlider(value=3, min=0, max=10, description='n')"),
        new_code("import warnings\nwarnings.warn('a warning on stderr is not an error')"),
    )
    raises = _notebook(
        new_code("x = 1"),
        # The pause lets every later request reach the kernel before the error: ipykernel
        # aborts only the requests already queued when a cell fails, and on a loaded machine
        # an instant error let the last cell's request arrive after the abort and run.
        new_code("import time\ntime.sleep(3)\nx / 0"),
        new_code("print('never reached')"),
    )
    dies = _notebook(
        new_code("x = 1"),
        new_code("import os\nos._exit(1)  # what the kernel does when the memory limit kills it"),
        new_code("print('never reached')"),
    )
    broken_widget = _notebook(
        new_code("from IPython.display import display\n"
                 "display({'application/vnd.jupyter.widget-view+json':"
                 " {'model_id': 'no-such-model', 'version_major': 2, 'version_minor': 0}}, raw=True)"),
    )
    solution = _notebook(
        new_md("# Harness exercise: the spread"),
        _graded(new_code(HARNESS_ANSWER), "answer-spread", solution=True, grade=False),
        _graded(new_code(HARNESS_CHECK), "check-spread", solution=False, grade=True),
    )
    student = _notebook(
        new_md("# Harness exercise: the spread"),
        _graded(new_code(HARNESS_STUB), "answer-spread", solution=True, grade=False),
        _graded(new_code(HARNESS_CHECK), "check-spread", solution=False, grade=True),
    )
    nbformat.write(good, folder / "figure_and_slider.ipynb")
    nbformat.write(raises, folder / "raises.ipynb")
    nbformat.write(broken_widget, folder / "broken_widget.ipynb")
    nbformat.write(dies, folder / "dies.ipynb")
    nbformat.write(solution, folder / "solutions" / "00_spread.ipynb")
    nbformat.write(student, folder / "exercises" / "00_spread.ipynb")
