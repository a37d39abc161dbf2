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
``sys.executable <kit>/_child.py`` (the same interpreter, its ``-X``
options not carried over, the environment inherited, this package put on
``PYTHONPATH``), sends the target and its keyword arguments as JSON on stdin, and
reads the function's JSON-able return value back from the child's stdout. While
the function runs, the child's ``sys.stdout`` points at its stderr, so a stray
``print`` cannot corrupt the result. ``run_workers`` does this ``processes``
times, one worker after another by default; ``jobs=2`` runs two at a time, which
suits workers whose figures are ratios of two things timed side by side on the
CPU clock (``compare_fresh``: both sides share whatever the neighbour costs).

Every worker gets its own ``PYTHONHASHSEED``: a random one drawn here (the
interpreter would draw one anyway) unless the environment sets it, so the seed
each run had is known and a surprising run can be replayed (``spawn`` returns it
with the result, in a ``WorkerRun``).

>>> run_isolated("edumatcher.kit._worker:echo", {"value": [1, 2]})["value"]
[1, 2]
>>> run_isolated("edumatcher.kit._worker:echo")["pid"] != os.getpid()
True
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..grading.process_groups import signal_group

__all__ = ["IsolatedRunError", "WorkerRun", "spawn", "run_isolated", "run_workers", "worker_runs", "default_jobs",
           "echo", "fail", "sleep"]

_ROOT = str(Path(__file__).resolve().parents[2])
_CHILD = str(Path(__file__).with_name("_child.py"))  # run by path: see _child's docstring
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


def _child_env(hash_seed: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = hash_seed
    # The package's own folder first, so the worker imports the same edumatcher as the caller
    # even when it is not installed (a notebook started in course/, a test in a temporary folder).
    env["PYTHONPATH"] = _ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


@dataclass(frozen=True)
class WorkerRun:
    """One worker's result and the conditions it ran under: its hash seed and its wall time in seconds."""

    value: Any
    hash_seed: str
    seconds: float


def _hash_seed() -> str:
    inherited = os.environ.get("PYTHONHASHSEED")
    if inherited:
        return inherited
    return str(random.SystemRandom().randrange(4_294_967_296))  # the interpreter's own range


def spawn(target: str, kwargs: Mapping[str, Any] | None = None, *, timeout: float = 60.0,
          hash_seed: str | int | None = None) -> WorkerRun:
    """Call ``target(**kwargs)`` in a fresh interpreter; return its result with the hash seed it ran with.

    ``hash_seed`` (None: the environment's ``PYTHONHASHSEED``, else a random one)
    becomes the worker's ``PYTHONHASHSEED``. Otherwise as ``run_isolated``.
    """
    _split_target(target)
    seed = _hash_seed() if hash_seed is None else str(hash_seed)
    request = orjson.dumps({"target": target, "kwargs": dict(kwargs or {})})
    started = time.perf_counter()
    # The child's output goes to files, not pipes: only the result and the tail of its error
    # output are read back, so a chatty target cannot fill this process's memory. It runs in a
    # session of its own, so on a timeout everything it started is killed with it.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, _CHILD], stdin=subprocess.PIPE, stdout=out,
                                stderr=err, env=_child_env(seed), start_new_session=True)
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
            raise IsolatedRunError(f"{target} failed in its worker process (exit code {proc.returncode}, "
                                   f"PYTHONHASHSEED={seed})", stderr)
        out.seek(0)
        result = out.read(_RESULT_LIMIT + 1)
    if len(result) > _RESULT_LIMIT:
        raise IsolatedRunError(f"{target}'s result is over {_RESULT_LIMIT:,} bytes; return a summary", stderr)
    try:
        value = orjson.loads(result)
    except orjson.JSONDecodeError:
        raise IsolatedRunError(f"{target}'s worker printed no JSON result", stderr) from None
    return WorkerRun(value, seed, time.perf_counter() - started)


def run_isolated(target: str, kwargs: Mapping[str, Any] | None = None, *, timeout: float = 60.0) -> Any:
    """Call ``target(**kwargs)`` in a fresh interpreter and return its result, decoded from JSON.

    ``target`` is ``"package.module:function"``; the function must be importable
    by that name and return something orjson can encode (dicts, lists, numbers,
    strings, None). Raises ``IsolatedRunError`` (with the tail of the child's
    stderr) if the child raises, exits non-zero, prints no result, or runs longer
    than ``timeout`` seconds (it is killed then). ``spawn`` also returns the hash seed.
    """
    return spawn(target, kwargs, timeout=timeout).value


def _tail(file: Any) -> str:
    """The last ``_STDERR_TAIL`` characters written to ``file`` (a binary temporary file)."""
    size = file.seek(0, os.SEEK_END)
    file.seek(max(0, size - 4 * _STDERR_TAIL))
    return file.read().decode("utf-8", "replace")[-_STDERR_TAIL:]


def default_jobs() -> int:
    """Workers run at once by ``compare_fresh``: 2, or 1 where this process may use only one CPU (Binder)."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 1
    return max(1, min(2, usable))


def worker_runs(target: str, kwargs: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None, *,
                processes: int = 3, timeout: float = 60.0, jobs: int = 1) -> list[WorkerRun]:
    """``spawn`` in ``processes`` fresh workers, ``jobs`` at a time; their ``WorkerRun`` in order.

    ``kwargs`` is one mapping for every worker, or a sequence of ``processes``
    mappings, one per worker (a different seed each, say). ``timeout`` applies to each.
    """
    if processes < 1:
        raise ValueError(f"processes must be at least 1, not {processes}")
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    if kwargs is None or isinstance(kwargs, Mapping):
        per_worker: list[Mapping[str, Any] | None] = [kwargs] * processes
    else:
        per_worker = list(kwargs)
        if len(per_worker) != processes:
            raise ValueError(f"{len(per_worker)} sets of kwargs for {processes} processes")
    if jobs == 1:
        return [spawn(target, kw, timeout=timeout) for kw in per_worker]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda kw: spawn(target, kw, timeout=timeout), per_worker))


def run_workers(target: str, kwargs: Mapping[str, Any] | None = None, *, processes: int = 3,
                timeout: float = 60.0, jobs: int = 1) -> list[Any]:
    """``run_isolated`` in ``processes`` fresh workers, ``jobs`` at a time (1: one after another); results in order.

    Each worker is a new process, so the results vary the way separate runs of a
    program do: use them for the between-process spread. ``timeout`` applies to
    each worker.
    """
    return [run.value for run in worker_runs(target, kwargs, processes=processes, timeout=timeout, jobs=jobs)]


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
