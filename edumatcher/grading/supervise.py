"""Run grading workers: one subprocess per submission, a notebook timeout each, N at a time.

The per-notebook timeout is enforced here, from outside, because a hang can happen anywhere: in
student code that ignores interrupts, in kernel start-up, in the kernel manager itself. On overrun
the worker's process group, the kernel's process group (it leads its own session) and every
descendant seen just before are killed with SIGKILL, so no kernel outlives its submission.
The worker itself runs as the grader; only its kernel goes into the sandbox ``sandbox`` describes
(``--sandbox``, resolved once per run), where a PID namespace ends whatever the kernel started.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from . import scratch
from .exercise import Exercise, load_exercise
from .notebook_cells import notebook_text
from .process_groups import descendants, kill_all, signal_group
from .release import release_notebook
from .sandbox import DEFAULT_MEMORY_MB, SandboxChoice, resolve_sandbox, sandbox_spec
from .score import INVALID, UNKNOWN_EXERCISE, SubmissionResult, result_from_events, result_without_run
from .submissions import (
    DEFAULT_MAX_NOTEBOOK_BYTES,
    Submission,
    SubmissionUnreadable,
    check_file,
    student_folder_name,
)

__all__ = [
    "DEFAULT_CELL_TIMEOUT", "DEFAULT_NOTEBOOK_TIMEOUT", "grade_one", "grade_submissions",
    "check_exercise", "kill_all_workers",
]

DEFAULT_CELL_TIMEOUT = 60
DEFAULT_NOTEBOOK_TIMEOUT = 300

# Running workers and their event files, so Ctrl-C can kill every worker and kernel; once _stopping
# is set no new worker starts.
_live: dict[subprocess.Popen[bytes], Path] = {}
_live_lock = threading.Lock()
_stopping = threading.Event()


def grade_one(source: str | Path | Exercise, submission: str | Path, *, student: str | None = None,
              cell_timeout: int = DEFAULT_CELL_TIMEOUT, timeout: float = DEFAULT_NOTEBOOK_TIMEOUT,
              executed_path: str | Path | None = None, max_output_chars: int | None = None,
              sandbox: str | SandboxChoice = "auto", max_notebook_bytes: int = DEFAULT_MAX_NOTEBOOK_BYTES,
              memory_mb: int = DEFAULT_MEMORY_MB, decoys: bool = True,
              decoy_seed: int | None = None) -> SubmissionResult:
    """Grade one submitted notebook against a source notebook, in a worker subprocess.

    Never raises for a bad submission: the result's ``status`` and ``reason`` say what happened.
    ``sandbox`` (``auto``, ``bwrap``, ``none`` or a resolved :class:`SandboxChoice`) is where the
    kernel runs, with ``memory_mb`` of data memory (see ``sandbox``); ``auto`` or ``bwrap`` where
    bubblewrap cannot run raises ``SandboxUnavailable`` (a ``CliError``). ``max_notebook_bytes``
    limits the submission once its saved outputs are stripped. Each check runs beside its decoy
    twin (``decoys``), in an order drawn from ``decoy_seed`` (None: the system's randomness; a
    number only for tests, which need the order known); ``decoys=False`` leaves them out.
    ``student`` defaults to the name of the submission's folder. ``executed_path``, if given,
    receives the executed notebook (outputs capped). Typical use in a test::

        result = grade_one("solutions/01_x.ipynb", tmp_path / "01_x.ipynb", cell_timeout=30)
        assert result.status == "graded" and result.total == result.max_points
    """
    exercise = source if isinstance(source, Exercise) else load_exercise(source)
    choice = sandbox if isinstance(sandbox, SandboxChoice) else resolve_sandbox(sandbox)
    submission = Path(submission)
    who = student if student is not None else (submission.resolve().parent.name or "unknown")
    started = time.monotonic()
    # Links, pipes, empty and oversized files are settled here from their size and kind, without reading
    # a byte. Nothing is parsed in this process: a worker does that, under a memory cap (worker.py).
    try:
        check_file(submission, max_notebook_bytes)
    except SubmissionUnreadable as exc:
        return result_without_run(exercise, who, exercise.name, str(submission), INVALID, str(exc))
    job_dir = scratch.new_folder("job-")
    # The kernel's cwd is a separate folder, so the worker's event file is not next to student code.
    run_dir = scratch.new_folder("run-")
    try:
        events_path = job_dir / "events.jsonl"
        job = {
            "source": str(exercise.path.resolve()),
            "submission": str(submission.resolve()),
            "run_dir": str(run_dir),
            "events": str(events_path),
            "cell_timeout": int(cell_timeout),
            "executed_path": str(Path(executed_path).resolve()) if executed_path else None,
            "max_output_chars": max_output_chars,
            "sandbox": sandbox_spec(choice, memory_mb=memory_mb, scratch=str(scratch.run_folder())),
            "supervisor_pid": os.getpid(),  # the worker dies with this process (worker._die_with_supervisor)
            "max_notebook_bytes": max_notebook_bytes,
            "decoys": bool(decoys),
            "decoy_seed": decoy_seed,
        }
        job_path = job_dir / "job.json"
        job_path.write_text(json.dumps(job), encoding="utf-8")
        overran, exit_reason = _run_worker(job_path, job_dir / "worker.log", events_path, timeout)
        result = result_from_events(exercise, who, str(submission), _read_events(events_path),
                                    overran=overran, worker_exit=exit_reason)
    finally:
        shutil.rmtree(job_dir, ignore_errors=True)
        shutil.rmtree(run_dir, ignore_errors=True)
    result.seconds = time.monotonic() - started
    return result


def _run_worker(job_path: Path, log_path: Path, events_path: Path, timeout: float) -> tuple[str | None, str | None]:
    """Run one worker to completion or to its timeout; return ``(overran reason, abnormal exit reason)``."""
    with open(log_path, "wb") as log, _live_lock:
        if _stopping.is_set():
            return None, "grading was interrupted before this submission started"
        proc = subprocess.Popen(
            [sys.executable, "-m", "edumatcher.grading.worker", str(job_path)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so it can be killed as a whole
        )
        _live[proc] = events_path
    try:
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_tree(proc, _kernel_pid(events_path))
            return f"the notebook did not finish within {timeout:g} s (--timeout) and was stopped", None
        kernel_pid = _kernel_pid(events_path)
        if kernel_pid is not None and not _kernel_stopped(events_path):
            signal_group(kernel_pid)  # the worker died before it could stop its kernel
    finally:
        with _live_lock:
            _live.pop(proc, None)
    if code == 0:
        return None, None
    tail = _tail(log_path)
    how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
    return None, f"the grading worker {how}" + (f": {tail}" if tail else "")


def _read_events(path: Path, limit: int = 5_000_000) -> list[dict]:
    """Parse the worker's JSON-lines events (at most ``limit`` bytes: the file is within student reach)."""
    events: list[dict] = []
    try:
        with open(path, "rb") as handle:
            lines = handle.read(limit).decode("utf-8", errors="replace").splitlines()
    except OSError:
        return events
    for line in lines:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a kill
        if isinstance(event, dict):
            events.append(event)
    return events


def _kernel_pid(events_path: Path) -> int | None:
    for event in _read_events(events_path):
        if event.get("event") == "kernel" and isinstance(event.get("pid"), int):
            return event["pid"]
    return None


def _kernel_stopped(events_path: Path) -> bool:
    # The worker reports "done" or a status only after run_cells has killed its kernel group.
    return any(e.get("event") in ("done", "status", "executed") for e in _read_events(events_path))


def _tail(path: Path, limit: int = 300) -> str:
    """The worker log's last line, skipping the kernel's own chatter (it shares the log)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    ours = [line.strip() for line in lines if line.strip() and not line.startswith("[IPKernelApp]")]
    return ours[-1][-limit:] if ours else ""


def _kill_tree(proc: subprocess.Popen[bytes], kernel_pid: int | None) -> None:
    """SIGKILL the worker, its kernel and everything they started; reap the worker."""
    stragglers = descendants(proc.pid)  # also catches children that left both process groups
    signal_group(proc.pid)
    signal_group(kernel_pid)
    kill_all(stragglers)  # no waiting: reaping the worker below is what matters
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def kill_all_workers() -> None:
    """Kill every running worker and its kernel, and start no new one (used on Ctrl-C)."""
    with _live_lock:
        _stopping.set()
        running = list(_live.items())
    for proc, events_path in running:
        _kill_tree(proc, _kernel_pid(events_path))


def grade_submissions(
    submissions: Iterable[Submission],
    exercises: dict[str, Exercise],
    *,
    jobs: int = 1,
    cell_timeout: int = DEFAULT_CELL_TIMEOUT,
    timeout: float = DEFAULT_NOTEBOOK_TIMEOUT,
    executed_dir: str | Path | None = None,
    progress: Callable[[int, int, SubmissionResult], None] | None = None,
    sandbox: str | SandboxChoice = "auto",
    max_notebook_bytes: int = DEFAULT_MAX_NOTEBOOK_BYTES,
    memory_mb: int = DEFAULT_MEMORY_MB,
    decoy_seed: int | None = None,
) -> list[SubmissionResult]:
    """Grade many submissions, ``jobs`` workers at a time; return one result per submission, in input order.

    ``sandbox``, ``max_notebook_bytes``, ``memory_mb`` and ``decoy_seed`` are as in :func:`grade_one`;
    the sandbox is resolved once, before anything runs (where it cannot run: ``SandboxUnavailable``).

    A submission named for no exercise gets an ``unknown-exercise`` row without running. Any
    failure while grading one submission becomes an ``error`` row; the others carry on.
    ``progress(done, total, result)`` is called as each one finishes.
    """
    items = list(submissions)
    choice = sandbox if isinstance(sandbox, SandboxChoice) else resolve_sandbox(sandbox)
    results: list[SubmissionResult | None] = [None] * len(items)
    _stopping.clear()
    scratch.remove_stale()  # what a grader killed outright (kill -9) left in the temporary folder

    # Decided up front, in order, so two submissions of one student and exercise never share a file.
    executed_paths: list[Path | None] = []
    taken: set[Path] = set()
    for item in items:
        if executed_dir is None:
            executed_paths.append(None)
            continue
        stem = Path(executed_dir) / student_folder_name(item.student) / item.exercise
        candidate, counter = stem.parent / f"{stem.name}.ipynb", 2
        while candidate in taken:
            candidate, counter = stem.parent / f"{stem.name}-{counter}.ipynb", counter + 1
        taken.add(candidate)
        executed_paths.append(candidate)

    def grade(index: int) -> SubmissionResult:
        item = items[index]
        exercise = exercises.get(item.exercise)
        if exercise is None:
            known = ", ".join(sorted(exercises)) or "none"
            return result_without_run(None, item.student, item.exercise, str(item.path), UNKNOWN_EXERCISE,
                                      f"no exercise named {item.exercise!r} (known: {known})")
        try:
            return grade_one(exercise, item.path, student=item.student, cell_timeout=cell_timeout,
                             timeout=timeout, executed_path=executed_paths[index], sandbox=choice,
                             max_notebook_bytes=max_notebook_bytes, memory_mb=memory_mb, decoy_seed=decoy_seed)
        except Exception as exc:
            return result_without_run(exercise, item.student, item.exercise, str(item.path), "error",
                                      f"grader failed: {type(exc).__name__}: {exc}")

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        futures = {pool.submit(grade, index): index for index in range(len(items))}
        for done, future in enumerate(as_completed(futures), start=1):
            result = future.result()
            results[futures[future]] = result
            if progress is not None:
                progress(done, len(items), result)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        kill_all_workers()
        raise
    pool.shutdown(wait=True)
    scratch.remove_if_empty()
    return [r for r in results if r is not None]


def check_exercise(source: str | Path, workdir: str | Path, *, cell_timeout: int = DEFAULT_CELL_TIMEOUT,
                   timeout: float = DEFAULT_NOTEBOOK_TIMEOUT, sandbox: str | SandboxChoice = "auto",
                   memory_mb: int = DEFAULT_MEMORY_MB) -> tuple[SubmissionResult, SubmissionResult]:
    """Grade an exercise's blank student copy and its solution, in parallel; return ``(blank, solution)``.

    The pattern every exercise must pass: the blank copy scores 0 on every check (the checks really
    test something) and the solution scores full marks (the checks are satisfiable)::

        blank, solution = check_exercise("solutions/01_x.ipynb", tmp_path)
        assert blank.status == solution.status == "graded"
        assert all(c.points == 0 for c in blank.checks) and solution.total == solution.max_points
    """
    exercise = load_exercise(source)
    workdir = Path(workdir)
    blank_path = workdir / "blank" / f"{exercise.name}.ipynb"
    solution_path = workdir / "solution" / f"{exercise.name}.ipynb"
    for path in (blank_path, solution_path):
        path.parent.mkdir(parents=True, exist_ok=True)
    blank_path.write_bytes(notebook_text(release_notebook(exercise.notebook)).encode("utf-8"))
    shutil.copyfile(exercise.path, solution_path)
    choice = sandbox if isinstance(sandbox, SandboxChoice) else resolve_sandbox(sandbox)
    with ThreadPoolExecutor(max_workers=2) as pool:
        blank = pool.submit(grade_one, exercise, blank_path, cell_timeout=cell_timeout, timeout=timeout,
                            sandbox=choice, memory_mb=memory_mb)
        solution = pool.submit(grade_one, exercise, solution_path, cell_timeout=cell_timeout, timeout=timeout,
                               sandbox=choice, memory_mb=memory_mb)
        return blank.result(), solution.result()
