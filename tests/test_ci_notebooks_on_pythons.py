"""``.ci/notebooks_on_pythons``: the CI step that runs the notebooks on 3.10, 3.12 and 3.13.

The real run (venvs, nbval on every notebook) is what CI does; here, what can be checked in a
second: it is strict bash, it covers the three versions by default, it is wired into
``.ci/run`` and ``make test-pythons``, and a version it cannot find fails with one clear line.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / ".ci" / "notebooks_on_pythons"


def test_the_script_is_strict_bash_and_covers_the_other_three_versions() -> None:
    text = SCRIPT.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in text
    assert "versions=(3.10 3.12 3.13)" in text
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)


def test_ci_and_make_run_it() -> None:
    assert "bash .ci/notebooks_on_pythons" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "bash .ci/notebooks_on_pythons" in (REPO / "Makefile").read_text(encoding="utf-8")


def test_a_missing_interpreter_fails_with_one_clear_line(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PYENV_ROOT": str(tmp_path / "no-pyenv"), "HOME": str(tmp_path)}
    done = subprocess.run(["bash", str(SCRIPT), "9.99"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1, done
    assert "notebooks on Python 9.99: FAILED" in done.stdout, done.stdout
    assert "no Python 9.99 under $PYENV_ROOT/versions or on PATH" in done.stdout, done.stdout
