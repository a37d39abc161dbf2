"""Stopping a process together with everything it started: its process group, then stragglers.

The grader's workers and kernels, and the JupyterLab server of ``make lab``, are each
started in a new session (``start_new_session=True``), so each leads a process group
that one ``os.killpg`` reaches. A child that moved to another group is found with
``psutil`` when it is importable (it comes with ipykernel); ``edumatcher`` itself
depends only on orjson, so the import is lazy and its absence means "no stragglers".
"""

from __future__ import annotations

import os
import signal
from typing import Any

__all__ = ["signal_group", "descendants"]


def signal_group(pgid: int | None, sig: signal.Signals = signal.SIGKILL) -> None:
    """Send ``sig`` to process group ``pgid``; nothing if it is gone, not ours, None, or the OS has no groups.

    Equivalent to ``os.killpg(pgid, sig)`` with those cases ignored.
    """
    if pgid is None or not hasattr(os, "killpg"):
        return
    try:
        os.killpg(pgid, sig)
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
