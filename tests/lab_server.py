"""Start and stop a JupyterLab server on a free local port, and leave nothing behind.

The browser tests drive the course through a real JupyterLab; they need a server that
answers on a port nobody else holds, whose token they know, and that takes its kernels
down with it when it stops. This module does exactly that and nothing else:

- :func:`free_port` asks the operating system for an unused TCP port;
- :func:`lab_argv` builds the ``jupyter lab`` command line (one place, so every test that
  starts a server agrees on the flags);
- :func:`isolated_env` gives a server its own Jupyter config, data and runtime folders;
- :func:`start_lab` starts the server, waits until ``/api/status`` answers, and returns a
  :class:`LabServer`, whose :meth:`LabServer.stop` shuts it down: politely through
  ``/api/shutdown`` first, then by signal, and finally kills any kernel that outlived it.

>>> server = start_lab(".")            # doctest: +SKIP
>>> server.api("api/status")["started"]  # doctest: +SKIP
'2026-...'
>>> server.stop()                      # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edumatcher.grading.process_groups import descendants, kill_all, signal_group

__all__ = ["LabServer", "LabStartError", "free_port", "isolated_env", "lab_argv", "start_lab"]

LOCALHOST = "127.0.0.1"


class LabStartError(RuntimeError):
    """JupyterLab did not come up; the message ends with the tail of its log."""


def free_port(host: str = LOCALHOST) -> int:
    """Return a TCP port on *host* that was free a moment ago.

    The kernel picks the port (bind to 0); another process may still take it before the
    server binds, which :func:`start_lab` handles by retrying on a fresh port.

    >>> 0 < free_port() < 65536
    True
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def isolated_env(home: str | os.PathLike[str], environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """``environ`` with Jupyter's config, data, runtime and workspace folders moved under ``home``.

    A server started with it neither reads the user's Jupyter settings nor leaves files
    among them. ``JUPYTER_PATH`` and ``JUPYTER_CONFIG_PATH`` are dropped for the same reason.
    """
    env = {k: v for k, v in environ.items() if k not in ("JUPYTER_PATH", "JUPYTER_CONFIG_PATH")}
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTERLAB_WORKSPACES_DIR"):
        env[name] = os.path.join(home, name.lower())
    return env


def lab_argv(
    *,
    python: str | os.PathLike[str],
    port: int,
    token: str,
    root_dir: str | os.PathLike[str],
    host: str = LOCALHOST,
    notebook: str | None = None,
    expose_app: bool = False,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """Return the command line that starts JupyterLab with the given settings.

    *expose_app* sets ``window.jupyterapp`` in the page so a test can run JupyterLab's own
    commands. Announcements and update checks are switched off: they would try to reach
    the internet, which a test machine may not have. ``--allow-root`` is added only when
    running as root (CI containers), since Jupyter refuses to start as root otherwise.

    >>> argv = lab_argv(python="py", port=8890, token="t", root_dir="/r", notebook="a.ipynb")
    >>> argv[:4], argv[-1]
    (['py', '-m', 'jupyterlab', '--no-browser'], 'a.ipynb')
    """
    argv = [str(python), "-m", "jupyterlab", "--no-browser"]
    argv += [
        f"--ServerApp.ip={host}",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={os.fspath(root_dir)}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if expose_app:
        argv.append("--LabApp.expose_app_in_browser=True")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")
    argv += list(extra_args)
    if notebook is not None:
        argv.append(notebook)
    return argv


@dataclass
class LabServer:
    """A running JupyterLab server started by :func:`start_lab`.

    ``url`` is the base URL with a trailing slash; ``token`` authenticates API calls and
    the first page load. Use it as a context manager or call :meth:`stop`.
    """

    process: subprocess.Popen[bytes]
    url: str
    token: str
    root_dir: Path
    log_path: Path
    _stopped: bool = field(default=False, repr=False)

    def page_url(self, path: str) -> str:
        """Return the browser URL of *path* (e.g. ``lab/tree/course/a.ipynb``), token included.

        >>> LabServer(None, "http://h:1/", "tk", Path("."), Path("l")).page_url("lab/tree/x.ipynb")
        'http://h:1/lab/tree/x.ipynb?token=tk'
        """
        return f"{self.url}{path.lstrip('/')}?token={self.token}"

    def api(self, path: str, *, method: str = "GET", timeout: float = 10.0) -> Any:
        """Call the server's REST API at *path* (GET, POST or DELETE); return its JSON (``{}`` if empty)."""
        request = urllib.request.Request(
            f"{self.url}{path.lstrip('/')}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
            data=b"" if method == "POST" else None,
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else {}

    def wait_until_ready(self, timeout: float) -> None:
        """Poll ``/api/status`` until it answers; raise :class:`LabStartError` if the server exits or *timeout* passes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LabStartError(
                    f"JupyterLab exited with code {self.process.returncode} before answering.\n{self.log_tail()}")
            try:
                self.api("api/status", timeout=2.0)
                return
            except (OSError, urllib.error.URLError, ValueError):
                time.sleep(0.25)
        raise LabStartError(f"JupyterLab did not answer /api/status within {timeout:.0f} s.\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        """Return the last *lines* lines the server wrote (stdout and stderr together)."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 20.0) -> None:
        """Stop the server and every process it started (kernels included); idempotent.

        Order: ``POST /api/shutdown`` (the server shuts its kernels down itself), then
        SIGTERM and SIGKILL to the server's process group, then SIGKILL to any descendant
        still alive. Kernels run in sessions of their own, so the group signal alone would
        miss them; their PIDs are collected before the server goes away.
        """
        if self._stopped:
            return
        self._stopped = True
        stragglers = descendants(self.process.pid)
        if self.process.poll() is None:
            try:
                self.api("api/shutdown", method="POST", timeout=5.0)
            except (OSError, urllib.error.URLError, ValueError):
                pass  # fall through to signals
            if not _wait(self.process, timeout / 2):
                signal_group(self.process.pid, signal.SIGTERM)
            if not _wait(self.process, timeout / 2):
                signal_group(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=timeout)
        kill_all(stragglers, timeout)

    def __enter__(self) -> LabServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_lab(
    root_dir: str | os.PathLike[str],
    *,
    python: str | os.PathLike[str] = sys.executable,
    host: str = LOCALHOST,
    token: str | None = None,
    env: Mapping[str, str] | None = None,
    log_path: str | os.PathLike[str] | None = None,
    timeout: float = 120.0,
    attempts: int = 3,
    extra_args: Sequence[str] = (),
) -> LabServer:
    """Start JupyterLab serving *root_dir* on a free port; return once ``/api/status`` answers.

    The server runs in a new session (its own process group) with output going to
    *log_path* (a temporary file by default) so a full pipe can never block it. If the
    port was taken in the meantime the start is retried on another port, up to *attempts*
    times. Raises :class:`LabStartError` with the log tail if the server does not answer
    within *timeout* seconds.
    """
    root = Path(root_dir).resolve()
    token = token or secrets.token_hex(24)
    if log_path is None:
        handle, name = tempfile.mkstemp(prefix="jupyterlab-", suffix=".log")
        os.close(handle)
        log_path = name
    log = Path(log_path)
    last_error = ""
    for _ in range(attempts):
        port = free_port(host)
        argv = lab_argv(python=python, port=port, token=token, root_dir=root, host=host, expose_app=True,
                        extra_args=extra_args)
        with log.open("ab") as sink:
            process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                env=dict(env) if env is not None else None, cwd=root, start_new_session=True,
            )
        server = LabServer(process, f"http://{host}:{port}/", token, root, log)
        try:
            server.wait_until_ready(timeout)
            return server
        except LabStartError as exc:
            server.stop(timeout=10.0)
            last_error = str(exc)
            if "address already in use" not in server.log_tail().lower():
                break
    raise LabStartError(last_error)


def _wait(process: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait up to *timeout* seconds for *process*; return whether it has exited."""
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    return True



