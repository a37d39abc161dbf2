"""Fixtures for the website's tests: the site built once per session by ``make site``.

``built_site`` runs ``make site`` exactly as a maintainer would, into ``_build/html`` of this
repository, through the execution cache in ``_build/.jupyter_cache``: in CI (a fresh clone) that
executes every chapter, and it is the suite's run of ``course/`` (nbval runs the chapters on the
other Pythons, in .ci/notebooks_on_pythons); on a developer's machine it reruns only the chapters
whose code changed. A chapter that fails fails here, with its file and cell.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HTML = REPO / "_build" / "html"
BUILD_LOG = REPO / "artifacts" / "site-build.log"


@pytest.fixture(scope="session")
def built_site(terminal_summary) -> Path:
    """``_build/html`` after ``make site`` (run once per session); fails with the build's last lines."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    BUILD_LOG.parent.mkdir(exist_ok=True)
    venv = Path(sys.prefix)
    # The running interpreter's venv builds the site: `-o` keeps make from reinstalling it mid-run.
    argv = ["make", "--no-print-directory", "-o", str(venv / ".installed"), "site", f"VENV={venv}"]
    start = time.monotonic()
    with BUILD_LOG.open("w", encoding="utf-8") as log:
        done = subprocess.run(argv, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"}, timeout=3600)
    terminal_summary(f"site: `make site` took {time.monotonic() - start:.0f} s; its log: {BUILD_LOG}")
    if done.returncode != 0:
        lines = BUILD_LOG.read_text(encoding="utf-8").splitlines()
        problems = [line for line in lines if "failed to execute" in line or "WARNING" in line or "ERROR" in line]
        pytest.fail("`make site` failed:\n" + "\n".join(problems[-20:] or lines[-40:]), pytrace=False)
    return HTML
