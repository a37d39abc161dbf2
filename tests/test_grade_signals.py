"""Stopping ``grade`` (SIGINT, SIGTERM, SIGHUP, SIGKILL), resuming it, and regrading into the same gradebook.

Each case runs ``python -m edumatcher grade`` as a subprocess on the toy exercise, ``--jobs 2``:
two quick submissions ("a1", "a2") are committed first, then two slow ones ("z1", "z2": their first
answer sleeps) are running when the signal arrives. The gradebook is polled, never slept on blindly.
"""

from __future__ import annotations

import csv
import os
import re
import signal
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from toy_submissions import grade_command, solved, write

from edumatcher.grading.gradebook import Gradebook

pytestmark = pytest.mark.slow

SLOW = "import time\n\ntime.sleep(45)  # still running when the grader is stopped\n\n"


def committed(out: Path) -> int:
    """Rows committed to the gradebook so far (0 before it exists)."""
    try:
        with sqlite3.connect(f"file:{out / 'gradebook.sqlite'}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT count(*) FROM rows").fetchone()[0]
    except sqlite3.Error:
        return 0


def workers_started(stderr: str) -> int:
    """Submissions graded by a run: one progress line ``[i/n] student/exercise: ...`` each."""
    return len(re.findall(r"^\[\d+/\d+\] ", stderr, flags=re.MULTILINE))


def grades_rows(out: Path) -> dict[tuple[str, str], dict[str, str]]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        return {(r["student"], r["exercise"]): r for r in csv.DictReader(handle)}


def make_class(root: Path) -> Path:
    submitted = root / "submitted"
    for student in ("a1", "a2"):
        write(submitted, student, solved())
    for student in ("z1", "z2"):
        write(submitted, student, solved(SLOW))
    return submitted


def start_and_wait_for_slow_workers(command: list[str], out: Path) -> tuple[subprocess.Popen[str], list[psutil.Process]]:
    """Start the grader; return once a1 and a2 are committed and both slow submissions are running."""
    grader = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if committed(out) >= 2:
            try:
                running = psutil.Process(grader.pid).children(recursive=True)
                # Kernels that have started, not launchers naming one: the sandbox's own death-with-its-
                # parent is set up by then (killing a worker in the middle of bwrap's set-up can leave
                # its init behind: sandbox.py lists that race).
                kernels = [p for p in running if p.cmdline()[1:3] == ["-m", "ipykernel_launcher"]]
            except psutil.Error:
                continue  # a process ended while we looked
            if len(kernels) >= 2:  # both slow submissions have a kernel
                return grader, running
        assert grader.poll() is None, grader.communicate()
        time.sleep(0.1)
    grader.kill()
    raise AssertionError(f"the slow submissions never started: {grader.communicate()}")


def assert_all_gone(processes: list[psutil.Process]) -> None:
    _, alive = psutil.wait_procs(processes, timeout=10)
    assert not alive, [" ".join(p.cmdline()) for p in alive]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_keeps_what_is_done_and_leaves_no_process(tmp_path: Path, sig: signal.Signals) -> None:
    out = tmp_path / "gradebook"
    command = grade_command(make_class(tmp_path), out)
    grader, children = start_and_wait_for_slow_workers(command, out)
    assert len(children) >= 4  # two workers and their two kernels
    grader.send_signal(sig)
    stdout, stderr = grader.communicate(timeout=60)
    assert grader.returncode == 128 + sig, stderr
    assert_all_gone(children)
    assert set(grades_rows(out)) == {("a1", "ex_toy"), ("a2", "ex_toy")}  # killed workers are not recorded
    assert f"stopped by {sig.name}: 2 row(s) saved" in stderr and "to resume, run the same command again" in stderr
    for export in ("totals.csv", "ex_toy.csv", "class_report.html", "feedback/a1/ex_toy.md", "feedback/a2/ex_toy.md"):
        assert (out / export).is_file(), export


def test_ctrl_c_then_resume_then_regrade_one_student(tmp_path: Path) -> None:
    out = tmp_path / "gradebook"
    submitted = make_class(tmp_path)
    command = grade_command(submitted, out)
    grader, children = start_and_wait_for_slow_workers(command, out)
    grader.send_signal(signal.SIGINT)
    _, stderr = grader.communicate(timeout=60)
    assert grader.returncode == 130, stderr
    assert_all_gone(children)
    assert committed(out) == 2
    resume = next(line for line in stderr.splitlines() if "to resume" in line)
    assert str(out) in resume and "grade" in resume

    # The same command resumes: only the two unfinished submissions run (now fixed so they are quick).
    for student in ("z1", "z2"):
        write(submitted, student, solved())
    again = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert again.returncode == 0, again.stderr
    assert "resuming: 2 submission(s) already in" in again.stderr
    assert workers_started(again.stderr) == 2
    rows = grades_rows(out)
    assert len(rows) == 4 and all(r["status"] == "graded" and r["total"] == r["auto_max"] for r in rows.values())

    # Regrading one student into the same --out keeps every other row as it was.
    with Gradebook.open(out) as book:
        before = {(e.result.student, e.result.exercise): e.graded_at for e in book.entries()}
    time.sleep(1.1)  # graded_at has one-second resolution
    regrade = subprocess.run([*command, "--regrade", "a1"], capture_output=True, text=True, timeout=180)
    assert regrade.returncode == 0, regrade.stderr
    assert workers_started(regrade.stderr) == 1 and "[1/1] a1/ex_toy" in regrade.stderr
    assert len(grades_rows(out)) == 4
    with Gradebook.open(out) as book:
        after = {(e.result.student, e.result.exercise): e.graded_at for e in book.entries()}
    assert after[("a1", "ex_toy")] != before[("a1", "ex_toy")]
    assert {k: v for k, v in after.items() if k[0] != "a1"} == {k: v for k, v in before.items() if k[0] != "a1"}

    # A file that changed since it was graded is graded again on a plain rerun, and the terminal says so.
    write(submitted, "a2", solved("x = 1\n"))
    changed = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert changed.returncode == 0, changed.stderr
    assert "a2/ex_toy: the file changed since it was graded; grading it again" in changed.stderr
    assert workers_started(changed.stderr) == 1 and len(grades_rows(out)) == 4


def test_a_killed_grader_leaves_a_gradebook_the_next_run_resumes(tmp_path: Path) -> None:
    out = tmp_path / "gradebook"
    submitted = make_class(tmp_path)
    command = grade_command(submitted, out)
    grader, children = start_and_wait_for_slow_workers(command, out)
    left = scratch_folders(grader.pid)
    grader.kill()  # SIGKILL: no handler runs, nothing is exported
    grader.communicate(timeout=30)
    # No handler ran, yet the workers die with the grader (PR_SET_PDEATHSIG) and the kernels with them.
    assert_all_gone(children)
    assert left and all(folder.exists() for folder in left)  # its temporary folders stay: nobody removed them
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert committed(out) == 2
    for student in ("z1", "z2"):
        write(submitted, student, solved())
    again = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert again.returncode == 0, again.stderr
    assert workers_started(again.stderr) == 2 and "resuming: 2 submission(s)" in again.stderr
    assert len(grades_rows(out)) == 4
    assert not any(folder.exists() for folder in left)  # the next run removed them (issue 25)


def scratch_folders(pid: int) -> list[Path]:
    """The temporary folders of the grader with this pid (``edumatcher.grading.scratch``)."""
    root = Path(tempfile.gettempdir()) / f"edumatcher-grading-{os.getuid()}"
    return sorted(root.glob(f"p{pid}-*"))
