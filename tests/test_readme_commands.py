"""The README's Quick start promises three commands; these tests keep that promise from drifting.

The Quick start holds one ``sh`` block with exactly three commands: the first opens the course
(``make lab``), the second proves it works (``make test``), the third builds the website
(``make site``). Here we check that the first is
a Makefile target that starts JupyterLab on ``course/00_start_here.ipynb`` (which exists),
and that it really serves that chapter when run; and that the second is what CI runs
(``.ci/run``) and runs the whole suite, browser and Binder tests included; and that the third runs
Sphinx into ``_build/html``. The Makefile is read through ``make -n`` so that its variables are
expanded exactly as make expands them.
"""

from __future__ import annotations

import re
import secrets
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lab_server import LabServer, free_port, isolated_env

REPO = Path(__file__).resolve().parent.parent
FIRST_NOTEBOOK = "course/00_start_here.ipynb"


def quick_start_commands(readme: str) -> list[str]:
    """Return the command lines of the one fenced ``sh`` block under ``## Quick start``.

    Raises ValueError when the section or its single ``sh`` block is missing.

    >>> quick_start_commands("# X\\n## Quick start\\n\\n```sh\\nmake lab\\nmake test\\n```\\n## Next\\n")
    ['make lab', 'make test']
    """
    section = re.search(r"^## Quick start[ \t]*\n(.*?)(?=^## |\Z)", readme, flags=re.M | re.S)
    if not section:
        raise ValueError("README.md has no '## Quick start' section")
    blocks = re.findall(r"^```(?:sh|bash|console|shell)[ \t]*\n(.*?)^```", section.group(1), flags=re.M | re.S)
    if len(blocks) != 1:
        raise ValueError(f"the Quick start should hold exactly one sh block, found {len(blocks)}")
    return [line.strip().removeprefix("$ ") for line in blocks[0].splitlines()
            if line.strip() and not line.strip().startswith("#")]


def runs_command(script: str, command: str) -> bool:
    """Whether *command* appears as a whole command in the shell *script* (comments ignored).

    >>> runs_command("set -e\\nif ! make test; then exit 1; fi", "make test")
    True
    >>> runs_command('X="$Y --durations=5" make test || status=$?', "make test")
    True
    >>> runs_command("# make test\\nmake tests\\necho make test", "make test")
    False
    """
    assignments = r"""(?:\w+=(?:"[^"]*"|'[^']*'|[^\s;&|]*)\s+)*"""  # VAR=value prefixes
    pattern = rf"(^|[;&|(!]|\bthen|\bdo|\belse)\s*{assignments}{re.escape(command)}\s*($|[;&|)])"
    return any(re.search(pattern, line.split(" #", 1)[0].strip()) for line in script.splitlines()
               if not line.lstrip().startswith("#"))


def make_dry_run(target: str) -> list[str]:
    """Return the recipe lines ``make -n TARGET`` would run, variables expanded."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(["make", "-n", target], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"`make -n {target}` failed: the Makefile has no working {target!r} target\n{done.stderr}"
    return done.stdout.splitlines()


@pytest.fixture(scope="module")
def commands() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = quick_start_commands(readme)
    assert len(found) == 3, f"the Quick start should have exactly three commands (open, test, site), has {found}"
    return found


def test_quick_start_commands_are_make_targets(commands):
    for command in commands:
        words = shlex.split(command)
        assert words[0] == "make" and len(words) == 2, f"{command!r} is not `make TARGET`"


def test_first_command_opens_the_first_chapter_in_jupyterlab(commands):
    target = shlex.split(commands[0])[1]
    recipe = make_dry_run(target)
    launches = [line for line in recipe if re.search(r"\bjupyter(-lab)?\s+lab\b|-m\s+jupyterlab\b", line)]
    assert launches, f"`make {target}` does not start JupyterLab; it runs:\n" + "\n".join(recipe)
    assert any(FIRST_NOTEBOOK in shlex.split(line) for line in launches), (
        f"`make {target}` does not open {FIRST_NOTEBOOK}: {launches}")
    assert (REPO / FIRST_NOTEBOOK).is_file(), f"{FIRST_NOTEBOOK} does not exist"


@pytest.mark.timeout(180)
def test_first_command_really_opens_the_first_chapter(commands, tmp_path):
    """Run the JupyterLab command of ``make lab`` with a stand-in browser; see what it would open.

    The stand-in browser copies the page JupyterLab asks it to open (a redirect file) so the
    test can read the URL: it must be the first chapter, served from the repository root so
    that the chapters' links to ``exercises/`` and ``edumatcher/`` work.
    """
    pytest.importorskip("jupyterlab")
    target = shlex.split(commands[0])[1]
    launch = next(line for line in make_dry_run(target) if re.search(r"\bjupyter(-lab)?\s+lab\b", line))
    token, port = secrets.token_hex(16), free_port()
    opened = tmp_path / "opened.html"
    copy_page = "import shutil, sys, urllib.parse as p; shutil.copy(p.unquote(p.urlparse(sys.argv[1]).path), sys.argv[2])"
    browser = f"{shlex.quote(sys.executable)} -c {shlex.quote(copy_page)} %s {shlex.quote(str(opened))}"
    # Options may follow the notebook argument; these only pick the port, token and browser.
    argv = [*shlex.split(launch), f"--ServerApp.browser={browser}", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}"]
    env = isolated_env(tmp_path)
    log = tmp_path / "lab.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(argv, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=sink,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    server = LabServer(process, f"http://127.0.0.1:{port}/", token, REPO, log)
    try:
        server.wait_until_ready(120)
        deadline = time.monotonic() + 60
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert opened.exists(), f"`make {target}` never opened a browser\n{server.log_tail()}"
        assert f"/lab/tree/{FIRST_NOTEBOOK}?" in opened.read_text(encoding="utf-8"), (
            f"`make {target}` opened something else than {FIRST_NOTEBOOK} at the repository root:\n"
            f"{opened.read_text(encoding='utf-8')}")
        chapter = server.api(f"api/contents/{FIRST_NOTEBOOK}?content=0")
        assert chapter["type"] == "notebook", chapter
        # A new student's first screen must not ask about Jupyter news: binder/overrides.json sets the
        # defaults JupyterLab serves (an override replaces the schema's default; the user set nothing).
        notification = server.api("lab/api/settings/@jupyterlab/apputils-extension:notification")
        defaults = {name: spec.get("default") for name, spec in notification["schema"]["properties"].items()}
        assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False, defaults
    finally:
        server.stop()


def test_second_command_is_what_ci_runs(commands):
    ci_script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert runs_command(ci_script, commands[1]), f".ci/run does not run the README's test command {commands[1]!r}"


def test_second_command_runs_the_whole_suite(commands):
    target = shlex.split(commands[1])[1]
    recipe = make_dry_run(target)
    runs = [line for line in recipe if re.search(r"(-m\s+pytest|\bpytest)\b", line)]
    assert runs, f"`make {target}` does not run pytest; it runs:\n" + "\n".join(recipe)
    for line in runs:
        # Deselecting markers or files here would hide the browser and Binder tests from CI.
        assert not re.search(r"\s(-m|-k|--deselect|--ignore)\b", line.split("pytest", 1)[1]), (
            f"`make {target}` narrows the suite: {line}")


def test_third_command_builds_the_website(commands):
    target = shlex.split(commands[2])[1]
    recipe = make_dry_run(target)
    builds = [line for line in recipe if re.search(r"-m\s+sphinx\b|\bsphinx-build\b", line)]
    assert builds, f"`make {target}` does not run Sphinx; it runs:\n" + "\n".join(recipe)
    assert any("-W" in shlex.split(line) and "_build/html" in shlex.split(line) for line in builds), (
        f"`make {target}` should build _build/html with warnings as errors: {builds}")


def test_ci_script_is_strict_bash():
    ci_script = REPO / ".ci" / "run"
    text = ci_script.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    done = subprocess.run(["bash", "-n", str(ci_script)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
