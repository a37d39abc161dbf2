"""Stopping a process together with everything it started: its process group, then stragglers.

The grader's workers and kernels, and the browser tests' JupyterLab server
(``tests/lab_server.py``), are each started in a new session (``start_new_session=True``), so each leads a process group
that one ``os.killpg`` reaches. A child that moved to another group is found with
``psutil`` when it is importable (it comes with ipykernel); ``edumatcher`` itself
depends only on orjson, so the import is lazy and its absence means "no stragglers".
"""

from __future__ import annotations

import os
import signal
from typing import Any

__all__ = ["signal_group", "descendants", "kill_all"]


def signal_group(pgid: int | None, sig: signal.Signals | None = None) -> None:
    """Send ``sig`` (None: SIGKILL) to process group ``pgid``.

    Nothing happens if the group is gone, not ours, None, or the OS has no groups.

    Equivalent to ``os.killpg(pgid, sig)`` with those cases ignored. SIGKILL is looked up
    only here, so this module imports where the OS has neither groups nor SIGKILL.
    """
    if pgid is None or not hasattr(os, "killpg"):
        return
    try:
        os.killpg(pgid, signal.SIGKILL if sig is None else sig)
    except (ProcessLookupError, PermissionError):
        pass


def descendants(pid: int) -> list[Any]:
    """``psutil`` handles for every live descendant of ``pid``; [] when psutil is missing or ``pid`` is gone."""
    try:
        import psutil
    except ImportError:
        return []
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def kill_all(processes: list[Any], timeout: float = 0.0) -> None:
    """Kill whichever of ``processes`` (``psutil`` handles, as ``descendants`` gives) still run; reap them.

    Waits up to ``timeout`` seconds for them to go (0: one look, no waiting).
    """
    if not processes:
        return
    import psutil

    alive = []
    for proc in processes:
        try:
            if proc.is_running():
                proc.kill()
                alive.append(proc)
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=timeout)
