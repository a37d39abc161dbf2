"""One ``grade`` run per gradebook folder at a time: a lock file that says who holds it.

Two runs on one ``--out`` would both grade everything and overwrite each other's exports. The
first run takes an exclusive ``flock`` on ``OUT/.grade.lock`` and writes who it is (pid, host,
start time, command); a second run finds the lock taken and stops with one line naming the
holder. The operating system drops the lock when its process ends, however it ends (``kill -9``
included), so a stale lock never blocks anyone. Where ``fcntl`` does not exist (Windows), runs
are not locked.
"""

from __future__ import annotations

import datetime
import json
import os
import shlex
import socket
import sys
from pathlib import Path
from typing import IO

from edumatcher import CliError

__all__ = ["LOCK_NAME", "GradebookBusy", "RunLock"]

LOCK_NAME = ".grade.lock"


class GradebookBusy(CliError):
    """Another run holds the gradebook folder (the message names it)."""


class RunLock:
    """Context manager: hold ``OUT/.grade.lock`` for the run, or raise ``GradebookBusy`` at once."""

    def __init__(self, out_dir: str | Path, what: str = "grade") -> None:
        """Prepare to lock ``out_dir`` for a run described as ``what`` (``grade``, ``review --import``)."""
        self.path = Path(out_dir) / LOCK_NAME
        self.what = what
        self._file: IO[str] | None = None

    def __enter__(self) -> RunLock:
        try:
            import fcntl
        except ImportError:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - closed in __exit__
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read()
            handle.close()
            raise GradebookBusy(f"{self.path.parent} is in use by another run: {_describe(holder)}; wait for it "
                                "to finish, or stop it (Ctrl-C, or kill -INT with its pid), then run this again") \
                from None
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "what": self.what,
                                 "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                                 "command": shlex.join(["python", "-m", "edumatcher", *sys.argv[1:]])}))
        handle.flush()
        self._file = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()  # closing releases the lock; the file stays, telling who held it last
            self._file = None


def _describe(holder: str) -> str:
    try:
        about = json.loads(holder)
    except json.JSONDecodeError:
        return "a run that has not said who it is yet"
    if not isinstance(about, dict):
        return "a run that did not say who it is"
    return (f"{about.get('what', 'grade')} (pid {about.get('pid', '?')} on {about.get('host', '?')}, started "
            f"{about.get('started', '?')}: {about.get('command', '?')})")
