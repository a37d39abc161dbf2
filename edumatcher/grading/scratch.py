"""Temporary folders of a grading run, kept under one folder per grader process, so a killed run's are found.

Each submission needs a few folders for a few seconds: the worker's job folder (job file, events
file, log), the kernel's working folder and the folder of its sockets. They are made under
``<temp>/edumatcher-grading-<uid>/p<pid>-<start>`` (``pid`` and start time of the grader process)
and removed when the submission is done. A grader killed outright (``kill -9``) cannot remove
them; the next grading run removes every such folder whose process is no longer running
(:func:`remove_stale`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["run_folder", "new_folder", "remove_stale", "remove_if_empty"]


def _root() -> Path:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"edumatcher-grading-{uid}"


def _start_time(pid: int) -> str:
    """The process's start time (clock ticks since boot), so a reused pid is not mistaken for it; "" if unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return ""
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else ""


def run_folder() -> Path:
    """This process's folder of temporary folders (made on first use)."""
    folder = _root() / f"p{os.getpid()}-{_start_time(os.getpid())}"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def new_folder(prefix: str) -> Path:
    """A fresh, empty folder in this run's folder (``prefix`` starts its name)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=run_folder()))


def remove_stale() -> list[Path]:
    """Remove the folders of grading runs whose process is gone; return what was removed."""
    removed = []
    try:
        entries = list(_root().iterdir())
    except OSError:
        return removed
    for entry in entries:
        pid, _, start = entry.name[1:].partition("-")
        if not entry.name.startswith("p") or not pid.isdigit():
            continue
        if not _running(int(pid), start):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _running(pid: int, start: str) -> bool:
    """True if process ``pid`` runs and is the one that started at ``start`` (where /proc tells)."""
    if Path("/proc/self/stat").exists():
        return Path(f"/proc/{pid}").exists() and _start_time(pid) == start
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def remove_if_empty() -> None:
    """Remove this process's folder if nothing is left in it (the end of a run)."""
    try:
        os.rmdir(_root() / f"p{os.getpid()}-{_start_time(os.getpid())}")
    except OSError:
        pass
