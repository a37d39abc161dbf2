"""Whole ``grade`` runs that nothing can derail (issue 25): locks, database errors, huge files, pipes, roster
spellings, a missing sandbox, rows graded against an older exercise, a killed run's temporary folders.

Most cases grade only files that never reach a kernel (empty, oversized, a pipe), so they run in
seconds; the stale-source and huge-file cases grade the toy solution for real.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import unicodedata
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_output
from toy_submissions import SOURCES, TOY, grade_command, solved, write

from edumatcher.cli import main
from edumatcher.grading import gradebook as gradebook_module
from edumatcher.grading import scratch
from edumatcher.grading.gradebook import Gradebook
from edumatcher.grading.run_lock import RunLock
from edumatcher.grading.sandbox import _probe_bwrap


def run(*args: str) -> tuple[int, str, str]:
    """``python -m edumatcher ARGS`` in this process; ``(exit code, stdout, stderr)``."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def grade(submitted: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    return run("grade", str(submitted), "--source", str(SOURCES), "--out", str(out), "--cell-timeout", "30",
               "--timeout", "120", *extra)


def rows(out: Path, name: str = "grades.csv") -> list[dict[str, str]]:
    with open(out / name, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def empty_files(root: Path, *students: str) -> Path:
    """``root/submitted/<student>/ex_toy.ipynb``, each empty: an ``invalid`` row, no kernel."""
    for student in students:
        path = root / "submitted" / student / "ex_toy.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    return root / "submitted"


def test_a_second_run_on_one_gradebook_says_who_holds_it(tmp_path: Path) -> None:
    submitted, out = empty_files(tmp_path, "ann"), tmp_path / "gradebook"
    with RunLock(out):
        code, _, err = grade(submitted, out)
    assert code == 1 and f"pid {os.getpid()}" in err and "in use by another run" in err, err
    assert len(err.strip().splitlines()) == 1
    code, _, err = grade(submitted, out)  # released: the next run goes ahead
    assert code == 0, err


def test_a_database_error_ends_the_run_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    submitted, out = empty_files(tmp_path, "ann", "bob", "cy"), tmp_path / "gradebook"
    real = Gradebook.record
    calls = []

    def record(self: Gradebook, *args: object, **kwargs: object) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise sqlite3.OperationalError("database or disk is full")
        real(self, *args, **kwargs)

    monkeypatch.setattr(gradebook_module.Gradebook, "record", record)
    code, _, err = grade(submitted, out)
    assert code == 1, err
    assert "could not record a result (OperationalError: database or disk is full)" in err
    assert "resume with the same command: python -m edumatcher grade" in err
    assert len(rows(out)) == 1  # what was committed is exported
    monkeypatch.setattr(gradebook_module.Gradebook, "record", real)
    code, _, err = grade(submitted, out)  # the resume grades the rest
    assert code == 0 and len(rows(out)) == 3, err


def test_a_pipe_among_the_submissions_gets_a_row(tmp_path: Path) -> None:
    folder = tmp_path / "submitted" / "ann"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "ex_toy.ipynb")  # opening it to read would block forever
    code, _, err = grade(tmp_path / "submitted", tmp_path / "gradebook")
    assert code == 0, err
    (row,) = rows(tmp_path / "gradebook")
    assert (row["student"], row["status"]) == ("ann", "invalid") and "a pipe" in row["reason"], row


def test_roster_spellings_name_one_student_each(tmp_path: Path) -> None:
    nfd = unicodedata.normalize("NFD", "zoë")
    submitted = empty_files(tmp_path, "ann", nfd, "Bob  Lee")
    roster = tmp_path / "roster.csv"
    roster.write_text("student\nAnn\nzoë\nbob lee\ncy\nCY\n", encoding="utf-8")  # NFC zoë; cy twice
    out = tmp_path / "gradebook"
    code, _, err = grade(submitted, out, "--roster", str(roster))
    assert code == 0, err
    statuses = {row["student"]: row["status"] for row in rows(out)}
    assert statuses == {"Ann": "invalid", "zoë": "invalid", "bob lee": "invalid", "cy": "not-submitted"}, statuses
    assert [row["student"] for row in rows(out, "totals.csv")] == ["Ann", "bob lee", "cy", "zoë"]  # no (points) row
    assert "'ann' is the roster's 'Ann' (case)" in err
    assert f"{nfd!r} is the roster's 'zoë' (Unicode form)" in err
    assert "'Bob  Lee' is the roster's 'bob lee' (spaces, case)" in err
    assert "roster: 'CY' is 'cy' written differently (case)" in err
    code, _, err = grade(submitted, out)  # a later run without --roster keeps the same names
    assert code == 0 and {row["student"] for row in rows(out)} == set(statuses), err


def test_without_bubblewrap_auto_refuses_unless_none_is_asked_for(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    submitted, out = empty_files(tmp_path, "ann"), tmp_path / "gradebook"
    monkeypatch.setenv("PATH", "/nonexistent")
    _probe_bwrap.cache_clear()
    try:
        code, _, err = grade(submitted, out)
        assert code == 1 and not out.exists(), err
        (line,) = err.strip().splitlines()
        assert "bwrap is not installed" in line and "apt-get install bubblewrap" in line and "--sandbox none" in line
        code, _, err = grade(submitted, out, "--sandbox", "none")
        assert code == 0 and "UNSANDBOXED" in err, err
    finally:
        _probe_bwrap.cache_clear()


def test_a_killed_runs_temporary_folders_are_removed_by_the_next(tmp_path: Path) -> None:
    root = Path(tempfile.gettempdir()) / f"edumatcher-grading-{os.getuid()}"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = root / f"p{dead.stdout.strip()}-1" / "job-x"  # a run that no longer exists
    left.mkdir(parents=True)
    (left / "events.jsonl").write_text("{}", encoding="utf-8")
    alive = root / f"p{os.getppid()}-{scratch._start_time(os.getppid())}"  # a run still going: kept
    alive.mkdir(parents=True, exist_ok=True)
    try:
        code, _, err = grade(empty_files(tmp_path, "ann"), tmp_path / "gradebook")
        assert code == 0, err
        assert not left.parent.exists() and alive.is_dir()
    finally:
        alive.rmdir()


def test_an_old_gradebook_opens_and_gains_the_exercise_version(tmp_path: Path) -> None:
    out = tmp_path / "gradebook"
    out.mkdir()
    with sqlite3.connect(out / "gradebook.sqlite") as db:  # the version 1 schema, as edumatcher wrote it
        db.executescript(gradebook_module._SCHEMA + "PRAGMA user_version = 1;")
        db.execute("INSERT INTO rows (student, exercise, status, graded_at, digest) VALUES "
                   "('ann', 'ex_toy', 'graded', '2026-01-01T00:00:00+00:00', 'abc')")
    with Gradebook.open(out) as book:
        (entry,) = book.entries()
        assert entry.result.student == "ann" and entry.source_digest == ""
        assert book.source_digests() == {("ann", "ex_toy"): ""}
    with sqlite3.connect(out / "gradebook.sqlite") as db:  # version 3 adds submission times and roster details
        assert db.execute("PRAGMA user_version").fetchone() == (3,)
    with Gradebook.open(out) as book:
        assert book.entries()[0].submitted_at == "" and book.roster_details() == {}
    with Gradebook.open(out):  # opening again changes nothing
        pass


# --- with kernels --------------------------------------------------------------------------------------

@pytest.mark.slow
def test_rows_graded_against_an_older_exercise_are_graded_again(tmp_path: Path) -> None:
    sources = tmp_path / "solutions"
    sources.mkdir()
    (sources / "ex_toy.ipynb").write_bytes(TOY.read_bytes())
    submitted, out = tmp_path / "submitted", tmp_path / "gradebook"
    for student in ("ann", "bob"):
        write(submitted, student, solved())
    command = grade_command(submitted, out)
    command[command.index(str(SOURCES))] = str(sources)
    first = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    # The instructor changes a check (c_add now worth 3): issue 25 saw ann 5/7 beside bob 5/5 after this.
    nb = nbformat.read(sources / "ex_toy.ipynb", as_version=4)
    next(cell for cell in nb.cells if cell.metadata.get("nbgrader", {}).get("grade_id") == "c_add") \
        .metadata["nbgrader"]["points"] = 3
    nbformat.write(nb, sources / "ex_toy.ipynb")
    second = subprocess.run([*command, "--regrade", "ann"], capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert "bob/ex_toy: graded against another version of ex_toy (its checks changed since); grading it again" \
        in second.stderr
    graded = {(row["student"], row["auto_points"], row["auto_max"]) for row in rows(out)}
    assert graded == {("ann", "7", "7"), ("bob", "7", "7")}, graded
    third = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert "resuming: 2 submission(s)" in third.stderr and "another version" not in third.stderr


@pytest.mark.slow
def test_a_huge_file_is_refused_before_the_grader_reads_it(tmp_path: Path) -> None:
    submitted, out = tmp_path / "submitted", tmp_path / "gradebook"
    huge = submitted / "ann" / "ex_toy.ipynb"
    huge.parent.mkdir(parents=True)
    with open(huge, "wb") as handle:  # 505 MB without a byte on disk (issue 25: a 4.2 GB grader)
        handle.truncate(505_000_000)
    heavy = nbformat.read(TOY, as_version=4)  # the solution with 50 MB of saved output: within 4 x 20 MB
    heavy.cells[2].outputs = [new_output("display_data", data={"image/png": "A" * 50_000_000})]
    write(submitted, "bob", nbformat.writes(heavy))
    # The grader's own peak memory, measured in its process: the parsing happens in a worker.
    # VmHWM, not ru_maxrss: after fork and exec, ru_maxrss keeps the forking parent's peak (pytest's,
    # hundreds of MB late in a full run), where VmHWM is this process's own address space only.
    probe = ("import json, re, sys\nfrom edumatcher.cli import main\ncode = main(sys.argv[1:])\n"
             "hwm = int(re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1))\n"
             "print(json.dumps({'maxrss_kb': hwm}), file=sys.stderr)\n"
             "sys.exit(code)")
    command = [sys.executable, "-c", probe, *grade_command(submitted, out)[3:]]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    by_student = {row["student"]: row for row in rows(out)}
    assert by_student["ann"]["status"] == "invalid" and "505.0 MB, over the 80 MB read at all" in \
        by_student["ann"]["reason"]
    assert (by_student["bob"]["status"], by_student["bob"]["total"]) == ("graded", "5")
    peak = json.loads(done.stderr.strip().splitlines()[-1])["maxrss_kb"] * 1024
    assert peak < 400_000_000, f"the grader itself peaked at {peak / 1e6:.0f} MB"
