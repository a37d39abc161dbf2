"""The grading worker: one submission, one process: read, restore the checks, execute, report.

Run as ``python -m edumatcher.grading.worker JOB.json`` by ``supervise``, which kills it (and its
kernel) when it overruns. It reports through an append-only file of JSON lines, one event per
line, flushed as soon as it is known, so a worker killed halfway still leaves the checks it scored:

* ``{"event": "note", "text": ...}`` - something the student should read in the feedback
* ``{"event": "kernel", "pid": N}`` - the kernel started (its process group is N)
* ``{"event": "check", "grade_id": ..., "passed": bool, "message": ...}`` - one check scored
* ``{"event": "decoy", "grade_id": ..., "passed": bool, "what": ...}`` - a check's twin ran (``decoys``):
  ``passed`` true is evidence of tampering
* ``{"event": "status", "status": ..., "reason": ...}`` - the run ended abnormally (see ``score``)
* ``{"event": "executed", "path": ...}`` - the executed notebook was saved
* ``{"event": "done"}`` - the worker finished normally
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .startup import avoid_slow_imports

avoid_slow_imports()  # before nbformat is first imported, below

# isort: split
from .check_messages import HiddenText, answer_message, check_message  # noqa: E402
from .decoys import Decoy, plan_twins  # noqa: E402
from .execute import DEFAULT_MAX_OUTPUT_CHARS, CellOutcome, Twin, run_cells  # noqa: E402
from .exercise import load_exercise  # noqa: E402
from .notebook_cells import notebook_text  # noqa: E402
from .restore import restore_checks  # noqa: E402
from .score import EMPTY, ERROR, INVALID, KERNEL_DIED, TIMEOUT  # noqa: E402
from .submissions import DEFAULT_MAX_NOTEBOOK_BYTES, SubmissionUnreadable, read_submission  # noqa: E402

__all__ = ["EventLog", "grade_in_worker", "main"]

# Failing answer cells are worth telling the student about, but a long list buries the checks.
_MAX_ANSWER_NOTES = 5
# Memory the worker may use while it parses the submission (a file within the default limits needs a
# fraction of it); past it, the file gets an "invalid" row instead of taking the machine's memory.
_PARSE_MEMORY_BYTES = 2_000_000_000


class EventLog:
    """Append-only JSON-lines event file, flushed after every event."""

    def __init__(self, path: str | Path) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def emit(self, **event: Any) -> None:
        """Write one event and flush it to the OS."""
        self._file.write(json.dumps(event) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file."""
        self._file.close()


def grade_in_worker(job: dict[str, Any], log: EventLog) -> None:
    """Grade the submission described by ``job``, reporting to ``log`` (see the module docstring).

    ``job`` keys: ``source``, ``submission``, ``run_dir`` (kernel cwd), ``cell_timeout``, ``sandbox``
    (``sandbox.sandbox_spec``), optional ``executed_path``, ``max_output_chars``, ``max_notebook_bytes``,
    ``decoys`` (false: no twins) and ``decoy_seed`` (a test's fixed order; None: the system's randomness).
    The submission is parsed here, under a memory cap, never in the grader's own process.
    """
    exercise = load_exercise(job["source"])
    try:
        with _memory_cap(_PARSE_MEMORY_BYTES):
            submission = read_submission(job["submission"],
                                         max_bytes=job.get("max_notebook_bytes") or DEFAULT_MAX_NOTEBOOK_BYTES)
    except SubmissionUnreadable as exc:
        log.emit(event="status", status=INVALID, reason=str(exc))
        return
    except MemoryError:
        log.emit(event="status", status=INVALID, reason=f"reading the notebook took more than "
                 f"{_PARSE_MEMORY_BYTES / 1e9:g} GB of memory: not graded")
        return
    if not submission.cells:
        log.emit(event="status", status=EMPTY, reason="the notebook has no cells")
        return

    # Restore first: no student code runs until the official checks are back in place.
    restored = restore_checks(exercise, submission)
    for note in restored.notes:
        log.emit(event="note", text=note)
    roles = restored.cells
    checks = {index for index, graded in enumerate(roles) if graded.role == "check"}
    hidden = HiddenText(roles[index].cell.source for index in checks)
    # A twin per check that has one, run before or after it by a coin toss nothing in the kernel can see.
    rng = random.Random(job["decoy_seed"]) if job.get("decoy_seed") is not None else random.SystemRandom()
    planned = plan_twins({index: roles[index].cell.source for index in checks}, rng) if job.get("decoys", True) else {}
    twins: dict[int, Decoy] = {index: decoy for index, (decoy, _) in planned.items()}
    order = {index: Twin(decoy.source, first) for index, (decoy, first) in planned.items()}
    answer_notes = 0

    def report(outcome: CellOutcome) -> None:
        nonlocal answer_notes
        graded = roles[outcome.index]
        if graded.role == "check":
            message = "" if outcome.status == "ok" else check_message(
                outcome.message, outcome.ename, outcome.traceback, graded.cell.source, hidden)
            log.emit(event="check", grade_id=graded.grade_id, passed=outcome.status == "ok", message=message)
        elif outcome.status != "ok" and answer_notes < _MAX_ANSWER_NOTES:
            answer_notes += 1
            label = f"answer cell {graded.grade_id}" if graded.role == "answer" else f"cell {outcome.index}"
            log.emit(event="note", text=f"{label} failed: {answer_message(outcome.message, outcome.ename, hidden)}")

    def report_decoy(index: int, passed: bool) -> None:
        log.emit(event="decoy", grade_id=roles[index].grade_id, passed=passed, what=twins[index].what)

    stopped = asyncio.run(run_cells(
        restored.notebook,
        cwd=str(job["run_dir"]),
        cell_timeout=int(job["cell_timeout"]),
        on_outcome=report,
        on_kernel_started=lambda pid: log.emit(event="kernel", pid=pid),
        max_output_chars=int(job.get("max_output_chars") or DEFAULT_MAX_OUTPUT_CHARS),
        sandbox=job.get("sandbox"),
        checks=checks,
        decoys=order,
        on_decoy=report_decoy,
    ))
    if stopped is not None:
        where = _describe_cell(roles[stopped.index], stopped.index)
        if stopped.status == "dead":
            log.emit(event="status", status=KERNEL_DIED,
                     reason=f"the kernel died while running {where}; later checks score 0")
        else:
            log.emit(event="status", status=TIMEOUT, reason=f"{where} {stopped.message}")
    if job.get("executed_path"):
        target = Path(job["executed_path"])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(notebook_text(restored.notebook).encode("utf-8"))
        log.emit(event="executed", path=str(target))


@contextlib.contextmanager
def _memory_cap(limit: int) -> Iterator[None]:
    """Lower this process's soft ``RLIMIT_DATA`` to ``limit`` bytes (above what it uses) while the block
    runs: an allocation past it raises ``MemoryError``. Put back after, since the soft limit can rise to
    the hard one again (the kernel's own limits are set by its launcher). No-op where rlimits do not exist."""
    try:
        import resource
    except ImportError:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    wanted = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (wanted, hard))
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def _describe_cell(graded: Any, index: int) -> str:
    if graded.role == "check":
        return f"check {graded.grade_id}"
    if graded.role == "answer":
        return f"answer cell {graded.grade_id}"
    return f"cell {index}"


def _die_with_supervisor(supervisor_pid: int | None) -> bool:
    """Ask Linux to SIGKILL this worker when the grader that started it dies; False if it already has.

    Workers lead their own sessions (so a timeout can kill each as a group), which also means a
    ``kill -9`` of the grader would leave them, and their kernels, running to the end. With
    ``PR_SET_PDEATHSIG`` they die with it; the sandbox's ``--die-with-parent`` (or the launcher's
    own death signal without a sandbox) then takes each kernel down with its worker. Elsewhere
    than Linux this is a no-op. The ``getppid`` check closes the race of a grader that died
    before the request was made.
    """
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        try:
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    return supervisor_pid is None or os.getppid() == supervisor_pid


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``python -m edumatcher.grading.worker JOB.json``; exit 0 unless the grader failed."""
    args = sys.argv[1:] if argv is None else argv
    job = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    if not _die_with_supervisor(job.get("supervisor_pid")):
        return 3  # the supervisor is already gone: nobody would read the result
    log = EventLog(job["events"])
    try:
        grade_in_worker(job, log)
    except Exception as exc:  # the submission gets an "error" row; the class goes on
        traceback.print_exc()
        log.emit(event="status", status=ERROR, reason=f"grader failed: {type(exc).__name__}: {exc}")
        return 2
    else:
        log.emit(event="done")
        return 0
    finally:
        log.close()


if __name__ == "__main__":
    raise SystemExit(main())
