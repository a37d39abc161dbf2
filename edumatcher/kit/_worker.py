"""Run a measurement in a fresh interpreter and bring its numbers back.

Why: a notebook kernel is a bad place for anything sensitive to the heap, the
collector, memory or import history. A full collection walks *every* object the
process tracks, and a kernel tracks a great many that the experiment never made:
matplotlib and IPython's modules, the output history, every earlier cell's data.
Timed there, "a full collection with no book" is really "a full collection over
the kernel" (tens of milliseconds once matplotlib is imported), and the figure
changes with whatever ran before. A fresh process starts from the same small
heap every time. pyperf does the same for every benchmark it runs: the
measurement happens in worker processes, and several workers are run so the
variation *between processes* (memory layout, hash seeds, what the allocator
got from the system) is part of the spread, not hidden by it.

How: ``run_isolated("package.module:function", {"arg": 1})`` starts
``sys.executable -m edumatcher.kit._worker`` (the same interpreter, its ``-X``
options not carried over, the environment inherited, this package put on
``PYTHONPATH``), sends the target and its keyword arguments as JSON on stdin, and
reads the function's JSON-able return value back from the child's stdout. While
the function runs, the child's ``sys.stdout`` points at its stderr, so a stray
``print`` cannot corrupt the result. ``run_workers`` does this ``processes``
times, one worker after another (never at once: workers running side by side
would compete for the cores and time each other).

>>> run_isolated("edumatcher.kit._worker:echo", {"value": [1, 2]})["value"]
[1, 2]
>>> run_isolated("edumatcher.kit._worker:echo")["pid"] != os.getpid()
True
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from ..process_groups import signal_group

__all__ = ["IsolatedRunError", "run_isolated", "run_workers", "echo", "fail", "sleep"]

_ROOT = str(Path(__file__).resolve().parents[2])
_STDERR_TAIL = 2_000  # characters of the child's error output quoted in an IsolatedRunError
_RESULT_LIMIT = 100_000_000  # bytes of a result read back; the course's results are kilobytes


class IsolatedRunError(RuntimeError):
    """A worker process failed, timed out, or returned something that is not JSON.

    ``stderr`` holds the tail of the child's error output (its traceback, when
    the target raised).
    """

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(message + (f"\n--- worker's stderr (tail) ---\n{stderr}" if stderr else ""))
        self.stderr = stderr


def _split_target(target: str) -> tuple[str, str]:
    module, sep, name = target.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"target must look like 'package.module:function', not {target!r}")
    return module, name


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    # The package's own folder first, so the worker imports the same edumatcher as the caller
    # even when it is not installed (a notebook started in course/, a test in a temporary folder).
    env["PYTHONPATH"] = _ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_isolated(target: str, kwargs: Mapping[str, Any] | None = None, *, timeout: float = 60.0) -> Any:
    """Call ``target(**kwargs)`` in a fresh interpreter and return its result, decoded from JSON.

    ``target`` is ``"package.module:function"``; the function must be importable
    by that name and return something orjson can encode (dicts, lists, numbers,
    strings, None). Raises ``IsolatedRunError`` (with the tail of the child's
    stderr) if the child raises, exits non-zero, prints no result, or runs longer
    than ``timeout`` seconds (it is killed then).
    """
    _split_target(target)
    request = orjson.dumps({"target": target, "kwargs": dict(kwargs or {})})
    # The child's output goes to files, not pipes: only the result and the tail of its error
    # output are read back, so a chatty target cannot fill this process's memory. It runs in a
    # session of its own, so on a timeout everything it started is killed with it.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "edumatcher.kit._worker"], stdin=subprocess.PIPE, stdout=out,
                                stderr=err, env=_child_env(), start_new_session=True)
        try:
            proc.communicate(request, timeout=timeout)
        except subprocess.TimeoutExpired:
            signal_group(proc.pid)
            proc.wait()
            raise IsolatedRunError(f"{target} did not finish within {timeout:g} s; the worker was killed",
                                   _tail(err)) from None
        finally:
            signal_group(proc.pid)  # anything the target left running in its session
        stderr = _tail(err)
        if proc.returncode != 0:
            raise IsolatedRunError(f"{target} failed in its worker process (exit code {proc.returncode})", stderr)
        out.seek(0)
        result = out.read(_RESULT_LIMIT + 1)
    if len(result) > _RESULT_LIMIT:
        raise IsolatedRunError(f"{target}'s result is over {_RESULT_LIMIT:,} bytes; return a summary", stderr)
    try:
        return orjson.loads(result)
    except orjson.JSONDecodeError:
        raise IsolatedRunError(f"{target}'s worker printed no JSON result", stderr) from None


def _tail(file: Any) -> str:
    """The last ``_STDERR_TAIL`` characters written to ``file`` (a binary temporary file)."""
    size = file.seek(0, os.SEEK_END)
    file.seek(max(0, size - 4 * _STDERR_TAIL))
    return file.read().decode("utf-8", "replace")[-_STDERR_TAIL:]


def run_workers(target: str, kwargs: Mapping[str, Any] | None = None, *, processes: int = 3,
                timeout: float = 60.0) -> list[Any]:
    """``run_isolated`` in ``processes`` fresh workers, one after another; their results in order.

    Each worker is a new process, so the results vary the way separate runs of a
    program do: use them for the between-process spread. ``timeout`` applies to
    each worker.
    """
    if processes < 1:
        raise ValueError(f"processes must be at least 1, not {processes}")
    return [run_isolated(target, kwargs, timeout=timeout) for _ in range(processes)]


# --------------------------------------------------------------------------- targets for tests and doctests


def echo(value: Any = None) -> dict[str, Any]:
    """A trivial target: returns ``value``, the worker's pid and whether it imported matplotlib (it should not)."""
    return {"value": value, "pid": os.getpid(), "matplotlib": "matplotlib" in sys.modules}


def fail(message: str = "planted failure") -> None:
    """A target that always raises ``ValueError(message)``."""
    raise ValueError(message)


def sleep(seconds: float) -> float:
    """A target that sleeps ``seconds`` and returns them (for the timeout test)."""
    time.sleep(seconds)
    return seconds


# --------------------------------------------------------------------------- the worker side

def _worker() -> None:
    """Read one request from stdin, run it, write its JSON result to the real stdout."""
    request = orjson.loads(sys.stdin.buffer.read())
    module, name = _split_target(request["target"])
    function = getattr(importlib.import_module(module), name)
    out = sys.stdout
    sys.stdout = sys.stderr  # a print() inside the target must not land in the result
    try:
        result = function(**request["kwargs"])
    finally:
        sys.stdout = out
    out.buffer.write(orjson.dumps(result, option=orjson.OPT_SERIALIZE_NUMPY))
    out.flush()


if __name__ == "__main__":
    _worker()
