"""Finding submissions as instructors receive them: LMS names, copies, links, odd bytes, big outputs.

Most tests only discover and read files (no kernel). One test grades a small class of such files
(``--jobs 2``, three kernels) to show the rows an instructor gets.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_output

from edumatcher.grading import load_exercise, notebook_text, release_notebook
from edumatcher.grading import submissions as subs
from edumatcher.grading.name_matching import match_exercise
from edumatcher.grading.submissions import (
    DEFAULT_MAX_NOTEBOOK_BYTES,
    Submission,
    SubmissionUnreadable,
    discover_submissions,
    printable_name,
    read_submission,
    safe_name,
    student_folder_name,
    submission_digest,
)
from edumatcher.grading.supervise import grade_submissions

FIXTURES = Path(__file__).parent / "fixtures" / "grading"
TOY = FIXTURES / "solutions" / "ex_toy.ipynb"
EXERCISES = ["04_exact_ticks", "04_slots_memory", "exact_ticks", "ex_toy"]
needs_symlinks = pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")


def write(path: Path, text: str = "{}", *, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def found(tmp_path: Path, *names: str, exercises: list[str] | None = EXERCISES) -> list[Submission]:
    for name in names:
        write(tmp_path / "submitted" / "ann" / name)
    return discover_submissions([tmp_path / "submitted"], exercises)[0]


# --- matching file names to exercises -------------------------------------------------------------

@pytest.mark.parametrize(("file_name", "exercise", "how"), [
    ("04_exact_ticks.ipynb", "04_exact_ticks", None),
    ("04_Exact_Ticks.ipynb", "04_exact_ticks", ": case"),
    ("04_exact_ticks (1).ipynb", "04_exact_ticks", ": copy suffix"),
    ("04_Exact_Ticks (1).ipynb", "04_exact_ticks", ": case, copy suffix"),
    ("04_exact_ticks-1.ipynb", "04_exact_ticks", ": copy suffix"),
    ("04_exact_ticks copy.ipynb", "04_exact_ticks", ": copy suffix"),
    ("04_exact_ticks - Copy (2).ipynb", "04_exact_ticks", ": copy suffix"),
    ("04-exact-ticks.ipynb", "04_exact_ticks", ": spelling"),
    ("annlee_12345_67890_04_exact_ticks.ipynb", "04_exact_ticks", "prefix 'annlee_12345_67890_'"),
    ("annlee_LATE_12345_67890_04_exact_ticks-1.ipynb", "04_exact_ticks", "prefix 'annlee_LATE_12345_67890_', copy"),
    ("LATE_04_exact_ticks.ipynb", "04_exact_ticks", "prefix 'LATE_'"),
    ("Ann Lee_12345_assignsubmission_file_04_exact_ticks.ipynb", "04_exact_ticks",
     "prefix 'Ann Lee_12345_assignsubmission_file_'"),
    ("HW2_annlee_attempt_2026-11-30-12-00-00_04_exact_ticks.ipynb", "04_exact_ticks", "_attempt_2026-11-30"),
    ("annlee_123_exact_ticks.ipynb", "exact_ticks", "prefix 'annlee_123_'"),  # the longest name wins
    ("04_exact_ticks.ipynb.txt", "04_exact_ticks", None),
    ("04_exact_ticks.ipynb.json", "04_exact_ticks", None),
])
def test_file_names_match_their_exercise_and_say_how(tmp_path: Path, file_name: str, exercise: str,
                                                     how: str | None) -> None:
    (sub,) = found(tmp_path, file_name)
    assert sub.exercise == exercise and sub.student == "ann"
    if how is None:
        assert sub.note == ""
    else:
        assert sub.note.startswith(f"matched {file_name!r} to {exercise}") and how in sub.note, sub.note


def test_an_unmatched_file_still_gets_a_submission(tmp_path: Path) -> None:
    (sub,) = found(tmp_path, "my_homework.ipynb")
    assert (sub.exercise, sub.note) == ("my_homework", "")
    (sub,) = found(tmp_path / "b", "ticks_04_exact.ipynb")  # words reordered: not guessed
    assert sub.exercise == "ticks_04_exact"


def test_ambiguous_names_are_left_unknown_with_the_candidates() -> None:
    match = match_exercise("lab_Ex-One", ["ex_one", "EX-ONE", "other"])
    assert match.exercise is None and match.candidates == ("EX-ONE", "ex_one")
    assert match.describe("lab_Ex-One.ipynb") == ("'lab_Ex-One.ipynb' could be any of EX-ONE, ex_one: not graded; "
                                                   "rename it to one exercise's name")


def test_without_exercises_the_exercise_is_the_stem(tmp_path: Path) -> None:
    subs_found = found(tmp_path, "04_Exact_Ticks.ipynb", "notes.ipynb.txt", exercises=None)
    assert [(s.exercise, s.note) for s in subs_found] == [("04_Exact_Ticks", ""), ("notes", "")]


def test_macos_zip_debris_and_hidden_folders_are_skipped(tmp_path: Path) -> None:
    write(tmp_path / "submitted" / "ann" / "04_exact_ticks.ipynb")
    junk = [write(tmp_path / "submitted" / "ann" / "._04_exact_ticks.ipynb"),
            write(tmp_path / "submitted" / "__MACOSX" / "ann" / "04_exact_ticks.ipynb"),
            write(tmp_path / "submitted" / "ann" / ".git" / "04_exact_ticks.ipynb")]
    submissions, skipped = discover_submissions([tmp_path / "submitted"], EXERCISES)
    assert [(s.student, s.path.name, s.superseded) for s in submissions] == [("ann", "04_exact_ticks.ipynb", ())]
    assert junk[0] in skipped


# --- duplicates -----------------------------------------------------------------------------------

def test_the_newest_copy_is_graded_and_the_others_listed(tmp_path: Path) -> None:
    now = time.time()
    old = write(tmp_path / "ann" / "04_exact_ticks.ipynb", mtime=now - 100)
    new = write(tmp_path / "ann" / "ps2" / "04_Exact_Ticks (1).ipynb", mtime=now - 10)
    mid = write(tmp_path / "ann" / "LATE_04_exact_ticks.ipynb.txt", mtime=now - 50)
    (sub,) = discover_submissions([tmp_path], EXERCISES)[0]
    assert (sub.path, sub.exercise) == (new, "04_exact_ticks")
    assert sub.superseded == (mid, old)
    assert "newest of 3 files, not graded: 'LATE_04_exact_ticks.ipynb.txt', '04_exact_ticks.ipynb'" in sub.note


def test_equal_times_prefer_the_higher_copy_number(tmp_path: Path) -> None:
    names = ["04_exact_ticks.ipynb", "04_exact_ticks (2).ipynb", "04_exact_ticks (1).ipynb"]
    for name in names:
        write(tmp_path / "ann" / name, mtime=1_700_000_000)
    (sub,) = discover_submissions([tmp_path], EXERCISES)[0]
    assert sub.path.name == "04_exact_ticks (2).ipynb" and len(sub.superseded) == 2


def test_copies_of_different_students_stay_apart(tmp_path: Path) -> None:
    write(tmp_path / "ann" / "04_exact_ticks.ipynb")
    write(tmp_path / "bo" / "04_exact_ticks (1).ipynb")
    submissions, _ = discover_submissions([tmp_path], EXERCISES)
    assert [(s.student, s.superseded) for s in submissions] == [("ann", ()), ("bo", ())]


def test_a_flat_lms_download_keeps_one_student_per_prefix(tmp_path: Path) -> None:
    names = ["annlee_12345_67890_04_exact_ticks.ipynb", "annlee_late_12345_67999_04_exact_ticks-1.ipynb",
             "bocho_22222_67891_04_Exact_Ticks.ipynb", "Cy Diaz_333_assignsubmission_file_04_exact_ticks.ipynb",
             "HW2_dee_attempt_2026-11-30-12-00-00_04_exact_ticks.ipynb", "04_exact_ticks.ipynb"]
    for age, name in enumerate(names):
        write(tmp_path / "downloads" / name, mtime=1_700_000_000 - age)
    submissions, _ = discover_submissions([tmp_path / "downloads"], EXERCISES)
    assert [(s.student, s.path.name, len(s.superseded)) for s in submissions] == [
        ("Cy Diaz", names[3], 0), ("annlee", names[0], 1), ("bocho", names[2], 0), ("dee", names[4], 0),
        ("downloads", names[5], 0)]
    # Inside a student's folder, the folder names the student whatever the file is called.
    (sub,) = found(tmp_path / "nested", names[2])
    assert sub.student == "ann"


def test_blackboard_usernames_with_underscores_stay_two_students(tmp_path: Path) -> None:
    # Taking the last word before "_attempt" made ann_lee and bob_lee one student "lee": one grade went
    # to the other, the other file listed as superseded.
    names = ["HW_2_ann_lee_attempt_2026-11-30-12-00-00_04_exact_ticks.ipynb",
             "HW_2_bob_lee_attempt_2026-11-30-12-05-00_04_exact_ticks.ipynb",
             "HW_2_cy_attempt_2026-11-30-12-09-00_04_exact_ticks (1).ipynb"]
    for name in names:
        write(tmp_path / "downloads" / name)
    submissions, _ = discover_submissions([tmp_path / "downloads"], EXERCISES)
    assert sorted((s.student, s.path.name, s.superseded) for s in submissions) == [
        ("ann_lee", names[0], ()), ("bob_lee", names[1], ()), ("cy", names[2], ())]


# --- symbolic links -------------------------------------------------------------------------------

@needs_symlinks
def test_a_link_to_a_classmates_notebook_is_its_own_invalid_submission(tmp_path: Path) -> None:
    bo = write(tmp_path / "bo" / "04_exact_ticks.ipynb", notebook_text(release_notebook(nbformat.read(TOY, 4))))
    (tmp_path / "eve").mkdir()
    (tmp_path / "eve" / "04_exact_ticks.ipynb").symlink_to(bo)
    (tmp_path / "mal").symlink_to(tmp_path / "bo", target_is_directory=True)  # a whole folder linked
    submissions, _ = discover_submissions([tmp_path], EXERCISES)
    assert [(s.student, s.path) for s in submissions] == [
        ("bo", bo), ("eve", tmp_path / "eve" / "04_exact_ticks.ipynb"), ("mal", tmp_path / "mal")]
    assert "symbolic link" in submissions[1].note
    read_submission(bo)  # bo's own file reads fine
    for link in submissions[1:]:
        with pytest.raises(SubmissionUnreadable, match="is a symbolic link .*not followed"):
            read_submission(link.path)


@needs_symlinks
def test_a_real_file_beats_a_link_and_a_named_link_is_followed(tmp_path: Path) -> None:
    real = write(tmp_path / "ann" / "04_exact_ticks.ipynb", mtime=1_700_000_000)
    (tmp_path / "ann" / "04_exact_ticks (1).ipynb").symlink_to(tmp_path / "elsewhere.ipynb")  # newer, dangling
    (sub,) = discover_submissions([tmp_path], EXERCISES)[0]
    assert sub.path == real and sub.superseded == (tmp_path / "ann" / "04_exact_ticks (1).ipynb",)
    # A link the instructor names on the command line is theirs to follow.
    target = write(tmp_path / "store" / "cy" / "04_exact_ticks.ipynb")
    (tmp_path / "named.ipynb").symlink_to(target)
    (sub,) = discover_submissions([tmp_path / "named.ipynb"], EXERCISES)[0]
    assert (sub.path, sub.student) == (target, "cy")


@needs_symlinks
def test_digests_never_follow_links(tmp_path: Path) -> None:
    (tmp_path / "zero.ipynb").symlink_to("/dev/zero")  # reading through it would never end
    (tmp_path / "other.ipynb").symlink_to("/dev/null")
    real = write(tmp_path / "real.ipynb", "{}")
    digests = {name: submission_digest(tmp_path / name) for name in ("zero.ipynb", "other.ipynb", "real.ipynb")}
    assert len(set(digests.values())) == 3 and all(len(d) == 64 for d in digests.values())
    assert digests["real.ipynb"] == hashlib.sha256(real.read_bytes()).hexdigest()
    assert submission_digest(tmp_path / "missing.ipynb") == "" and submission_digest(tmp_path) == ""


# --- names from any bytes -------------------------------------------------------------------------

@pytest.mark.skipif(os.name == "nt" or os.uname().sysname == "Darwin", reason="needs a byte-name file system")
def test_any_byte_sequence_names_a_distinct_printable_student(tmp_path: Path) -> None:
    raw = [b"ann\xff", b"ann\\xff", b"b\xc3\xb6", b"cy\x1b[31m", b"dee\nx"]
    for name in raw:
        os.makedirs(os.path.join(os.fsencode(tmp_path), name))
        write(Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), name))) / "04_exact_ticks.ipynb")
    students = [s.student for s in discover_submissions([tmp_path], EXERCISES)[0]]
    assert sorted(students) == sorted(["ann\\xff", "ann\\\\xff", "bö", "cy\\x1b[31m", "dee\\x0ax"])
    for student in students:
        assert student.isprintable() and student.encode("utf-8")


def test_printable_names_are_unchanged_when_ordinary() -> None:
    assert printable_name("Zoë Ann-Lee_2") == "Zoë Ann-Lee_2"
    assert printable_name("\u200bx") == "\\u200bx"  # zero-width space is not printable


def test_student_folder_names_are_distinct_and_safe() -> None:
    students = ["ann lee", "ann_lee", "ann/lee", "Ann_Lee", "ann_lee-e4959174", "..", "", "con", "Zoë",
                "zoë", "x" * 300, "x" * 301, "ann\\xff", "ann\\\\xff", "bo", "\u6f22" * 200]
    folders = [student_folder_name(s) for s in students]
    assert len({f.casefold() for f in folders}) == len(students)  # distinct even on a case-insensitive disk
    for folder in folders:
        assert re.fullmatch(r"[\w.-]+", folder) and not folder.startswith("."), folder
        assert len(folder.encode("utf-8")) < 255 and folder.isprintable()
    assert student_folder_name("bo") == "bo" and student_folder_name("ann_lee") == "ann_lee"
    assert student_folder_name("ann lee").startswith("ann_lee-")
    assert safe_name("ann lee") == safe_name("ann_lee")  # the old, lossy form stays for compatibility


# --- reading: outputs stripped before the size limit ----------------------------------------------

def output_laden(path: Path, megabytes: float, *, source: str = "x = 1") -> Path:
    """A small notebook whose one code cell carries ``megabytes`` of saved (base64-like) output."""
    nb = nbformat.v4.new_notebook(cells=[new_code_cell(source)])
    nb.cells[0].outputs = [new_output("display_data", data={"image/png": "A" * int(megabytes * 1e6)})]
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    return path


def test_saved_outputs_do_not_count_toward_the_limit(tmp_path: Path) -> None:
    path = output_laden(tmp_path / "04_exact_ticks.ipynb", 25)
    assert path.stat().st_size > DEFAULT_MAX_NOTEBOOK_BYTES
    nb = read_submission(path)
    assert [c.source for c in nb.cells] == ["x = 1"] and "outputs" not in nb.cells[0] or not nb.cells[0].outputs
    assert read_submission(path, None).cells[0].source == "x = 1"  # None (from a job file): the default


def test_a_large_notebook_names_the_limit_and_the_flag(tmp_path: Path) -> None:
    path = output_laden(tmp_path / "big.ipynb", 0, source="s = '" + "y" * 2_000_000 + "'")
    with pytest.raises(SubmissionUnreadable, match=r"2\.0 MB without its saved outputs, over the 1 MB limit "
                                                   r"\(--max-notebook-mb\)"):
        read_submission(path, max_bytes=1_000_000)
    assert read_submission(path, max_bytes=3_000_000).cells


def test_absurd_files_are_refused_unparsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = output_laden(tmp_path / "huge.ipynb", 1)
    monkeypatch.setattr(subs, "HARD_MAX_NOTEBOOK_BYTES", 500_000)
    monkeypatch.setattr(subs, "_parse", lambda data: pytest.fail("parsed a file over the hard cap"))
    with pytest.raises(SubmissionUnreadable, match="over the 0.5 MB read at all"):
        read_submission(path)


def test_reading_keeps_its_old_messages(tmp_path: Path) -> None:
    cases = {b"": "file is empty", b"  \n": "file is empty", b"{not json": "invalid JSON",
             b"\xff\xfe{}": "not UTF-8", b"[1]": "no 'nbformat' version",
             b'{"nbformat": 4, "cells": {}}': "no list of cells", b"[" * 5000 + b"]" * 5000: "nested too deeply|no .nbformat. version"}  # 3.13 parses it
    for index, (data, reason) in enumerate(cases.items()):
        path = tmp_path / f"{index}.ipynb"
        path.write_bytes(data)
        with pytest.raises(SubmissionUnreadable, match=reason):
            read_submission(path)
    with pytest.raises(SubmissionUnreadable, match="not a regular file"):
        read_submission(tmp_path)
    big_int = b'{"nbformat": 4, "metadata": {"n": 123456789012345678901234567890}, "cells": ' \
              b'[{"cell_type": "code", "source": "y = 2", "metadata": {"k": 99999999999999999999999}}]}'
    (tmp_path / "int.ipynb").write_bytes(big_int)
    assert read_submission(tmp_path / "int.ipynb").cells[0].source == "y = 2"


# --- one small class, graded ----------------------------------------------------------------------

@needs_symlinks
def test_a_class_of_awkward_files_gets_one_right_row_each(tmp_path: Path) -> None:
    solution = notebook_text(nbformat.read(TOY, as_version=4))
    blank = notebook_text(release_notebook(nbformat.read(TOY, as_version=4)))
    sub = tmp_path / "submitted"
    write(sub / "ann" / "ex_toy.ipynb", blank, mtime=time.time() - 3600)  # an early draft
    write(sub / "ann" / "annlee_123_456_EX_Toy (1).ipynb", solution)  # the final one, LMS-named
    bo = write(sub / "bo" / "ex_toy.ipynb.txt", solution)
    (sub / "eve").mkdir()
    (sub / "eve" / "ex_toy.ipynb").symlink_to(bo)
    odd = os.fsdecode(os.path.join(os.fsencode(sub), b"d\xe9bora"))
    write(Path(odd) / "ex_toy.ipynb", solution)
    fay = nbformat.read(TOY, as_version=4)  # the solution, with 25 MB of saved output in a scratch cell
    fay.cells.append(new_code_cell("", outputs=[new_output("display_data", data={"text/plain": "B" * 25_000_000})]))
    (sub / "fay").mkdir()
    (sub / "fay" / "ex_toy.ipynb").write_text(nbformat.writes(fay), encoding="utf-8")

    submissions, _ = discover_submissions([sub], {"ex_toy": None})
    results = grade_submissions(submissions, {"ex_toy": load_exercise(TOY)}, jobs=2, cell_timeout=10, timeout=60)
    rows = {r.student: (r.total, r.max_points, r.status) for r in results}
    assert rows == {"ann": (5, 5, "graded"), "bo": (5, 5, "graded"), "eve": (0, 5, "invalid"),
                    "d\\xe9bora": (5, 5, "graded"), "fay": (5, 5, "graded")}, rows
    eve = next(r for r in results if r.student == "eve")
    assert "symbolic link" in eve.reason
    ann = next(s for s in submissions if s.student == "ann")
    assert ann.superseded == (sub / "ann" / "ex_toy.ipynb",)
    assert "to ex_toy: case, prefix 'annlee_123_456_', copy suffix" in ann.note
