"""Submitted files: find them, name their student and exercise, and read them without trusting them.

Student identity comes from folders, as in nbgrader's ``submitted/<student>/...`` layout: for a
notebook found inside a folder argument, it is the first folder below that argument
(``grade submitted/`` on ``submitted/ann/ex1.ipynb`` or ``submitted/ann/ps1/ex1.ipynb`` gives
``ann``); for a notebook directly inside the folder argument, or a file named on the command line,
it is the name of the folder holding it (``grade submitted/ann`` gives ``ann``), except that a file
directly inside a folder argument whose name carries an LMS prefix (a flat Canvas, Moodle or
Blackboard download: ``annlee_12345_67890_04_exact_ticks.ipynb``) belongs to the student that prefix
names (``annlee``); see ``name_matching.lms_student``. Folder names are
any bytes: ``Submission.student`` is a printable form of them (see ``printable_name``), and
``student_folder_name`` turns it into a distinct, file-system-safe folder name for outputs.

The exercise is matched from the file name (``name_matching``: exact, then case, copy marks and
LMS prefixes; ``*.ipynb``, ``*.ipynb.txt`` and ``*.ipynb.json`` are notebooks). Several files of
one student for one exercise give one submission: the newest is graded, the others are listed in
``superseded``. Symbolic links inside a submissions folder are never followed (a link to a
classmate's notebook would take their marks): the link gets its own ``invalid`` row.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import orjson
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from edumatcher import CliError

from .name_matching import blackboard_head, blackboard_students, lms_student, match_exercise

__all__ = [
    "Submission", "SubmissionUnreadable", "discover_submissions", "read_submission", "safe_name",
    "student_folder_name", "printable_name", "notebook_stem", "submission_digest", "DEFAULT_MAX_NOTEBOOK_BYTES",
    "HARD_MAX_NOTEBOOK_BYTES", "MAX_SUBMISSION_BYTES", "NOTEBOOK_SUFFIXES", "FILE_LIMIT_FACTOR", "file_limit",
    "check_file", "MAX_METADATA_DEPTH",
]

# Applied to the notebook once its saved outputs are dropped (grading never uses them): a real
# exercise is tens of kilobytes of source, so this only stops absurd files. --max-notebook-mb sets it.
DEFAULT_MAX_NOTEBOOK_BYTES = 20_000_000
MAX_SUBMISSION_BYTES = DEFAULT_MAX_NOTEBOOK_BYTES  # the name before the limit applied after stripping
# A file is refused before anything reads it when it is larger than this many times the limit above (its
# saved outputs are what can make it larger): 80 MB by default. Parsing holds several times the file in
# memory, so that happens only in a grading worker, under a memory cap (worker.py).
FILE_LIMIT_FACTOR = 4
# Whatever the limit given, nothing larger is read at all.
HARD_MAX_NOTEBOOK_BYTES = 512_000_000
# Cell metadata nested deeper than this is dropped on reading (nbgrader's is 2 deep): deeper JSON only
# serves to make copying or writing the notebook recurse too far.
MAX_METADATA_DEPTH = 32
# What LMSs and browsers make of a notebook's name; longest first, so ".ipynb.txt" is not read as ".txt".
NOTEBOOK_SUFFIXES = (".ipynb.json", ".ipynb.txt", ".ipynb")
# Folders never searched: Jupyter checkpoints, macOS zip debris, hidden folders (.git...).
_SKIPPED_FOLDERS = {".ipynb_checkpoints", "__MACOSX"}


@dataclass(frozen=True)
class Submission:
    """One submitted file, with the student and exercise it is graded as.

    ``student`` is printable and always encodable as UTF-8; ``note`` says how the file name was
    matched when it was not exact (or why it matched nothing); ``superseded`` lists older files of
    the same student and exercise that were not graded.
    """

    path: Path
    student: str
    exercise: str
    note: str = ""
    superseded: tuple[Path, ...] = ()


class SubmissionUnreadable(Exception):
    """The submitted file is not a notebook we can grade; ``str(exc)`` is the reason for the gradebook."""


@dataclass(frozen=True)
class _Found:
    """A notebook file seen while walking, before duplicates are settled."""

    path: Path
    student: str
    stem: str
    file_name: str
    is_link: bool
    mtime_ns: int


def discover_submissions(paths: Iterable[str | Path],
                         exercises: Collection[str] | None = None) -> tuple[list[Submission], list[Path]]:
    """Expand files and folders into submissions; return ``(submissions, skipped non-notebook files)``.

    Folders are searched recursively for notebooks (checkpoint and hidden folders ignored, symbolic
    links not followed); files named on the command line are always graded, whatever their suffix,
    so a wrongly named file still gets a row. The same file reached twice is graded once. With
    ``exercises`` (the known exercise names), file names are matched to them and each student gets
    one submission per exercise (the newest file); without, the exercise is the file stem. Raises
    ``CliError`` for a path that does not exist.
    """
    found: dict[tuple[str, str], _Found] = {}
    skipped: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            root_student = printable_name(path.resolve().name or "unknown")
            _walk(path, None, root_student, found, skipped)
        elif path.is_file():
            real = path.resolve()  # named by the instructor: a link here is followed
            student = printable_name(real.parent.name or "unknown")
            stem = notebook_stem(real.name) or notebook_stem(path.name) or Path(path.name).stem
            _remember(found, _Found(real if path.is_symlink() else path, student, stem, path.name, False,
                                    _mtime(real)))
        else:
            raise CliError(f"submission path {printable_name(str(path))} does not exist")
    submissions = _settle(list(found.values()), exercises)
    submissions.sort(key=lambda s: (s.exercise, s.student, str(s.path)))
    return submissions, skipped


def _walk(folder: Path, student: str | None, root_student: str, found: dict[tuple[str, str], _Found],
          skipped: list[Path]) -> None:
    """Collect notebooks below ``folder`` without following links; ``student`` is set below depth 1."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return  # unreadable folder: nothing to grade in it (its files would have no row either way)
    # A flat Blackboard download: usernames are found against the assignment name all files share.
    heads = [] if student is not None else [blackboard_head(notebook_stem(e.name) or e.name) for e in entries]
    blackboard = blackboard_students([head for head in heads if head is not None])
    for entry in entries:
        path = folder / entry.name
        who = student if student is not None else printable_name(entry.name)
        if entry.is_symlink():
            flat = notebook_stem(entry.name) or entry.name
            owner = who if student is not None or _is_dir(path) else _flat_owner(flat, root_student, blackboard)
            _add_link(path, entry, owner, found, skipped)
        elif entry.is_dir(follow_symlinks=False):
            if entry.name not in _SKIPPED_FOLDERS and not entry.name.startswith("."):
                _walk(path, who, root_student, found, skipped)
        elif entry.is_file(follow_symlinks=False):
            stem = notebook_stem(entry.name)
            if stem is None or entry.name.startswith("._"):  # "._x.ipynb": macOS metadata, not a notebook
                skipped.append(path)
                continue
            owner = student if student is not None else _flat_owner(stem, root_student, blackboard)
            _remember(found, _Found(path, owner, stem, entry.name, False, _mtime(path, follow=False)))
        elif notebook_stem(entry.name) is not None:
            # A pipe, socket or device named like a notebook gets a row (refused on reading, without blocking).
            stem = notebook_stem(entry.name) or entry.name
            owner = student if student is not None else _flat_owner(stem, root_student, blackboard)
            _remember(found, _Found(path, owner, stem, entry.name, False, _mtime(path, follow=False)))
        else:
            skipped.append(path)  # a pipe, socket or device: nothing to read (opening a pipe could block)


def _flat_owner(stem: str, root_student: str, blackboard: dict[str, str]) -> str:
    """Who a file directly in a folder argument belongs to: the LMS prefix's student, else the folder."""
    named = lms_student(stem, blackboard)
    return printable_name(named) if named else root_student


def _add_link(path: Path, entry: os.DirEntry[str], student: str, found: dict[tuple[str, str], _Found],
              skipped: list[Path]) -> None:
    """A link inside a submissions folder: one row per notebook it names, each to be refused on reading."""
    mtime = _mtime(path, follow=False)
    if _is_dir(path):
        # Only its top level is listed, to name the rows; nothing is read, nothing deeper is walked.
        try:
            names = sorted(e.name for e in os.scandir(path))
        except OSError:
            names = []
        stems = [(notebook_stem(name), name) for name in names]
        stems = [(stem, name) for stem, name in stems if stem is not None]
        for stem, name in stems or [(entry.name, entry.name)]:
            _remember(found, _Found(path, student, stem, name, True, mtime))
        return
    stem = notebook_stem(entry.name)
    if stem is None:
        skipped.append(path)
        return
    _remember(found, _Found(path, student, stem, entry.name, True, mtime))


def _remember(found: dict[tuple[str, str], _Found], item: _Found) -> None:
    # One file reached twice (a folder and a file in it both named) is one submission; the key keeps
    # the student, so a file never counts for two students.
    key = (os.path.abspath(item.path) if item.is_link else os.path.realpath(item.path)) + "\0" + item.stem, item.student
    found.setdefault(key, item)


def _settle(items: list[_Found], exercises: Collection[str] | None) -> list[Submission]:
    """Match each file to its exercise, then keep the newest file per student and exercise."""
    groups: dict[tuple[str, str], list[tuple[_Found, int, str]]] = {}
    for item in items:
        if exercises is None:
            exercise, copy_number, note = printable_name(item.stem), 0, ""
        else:
            match = match_exercise(item.stem, exercises)
            exercise = match.exercise if match.exercise is not None else printable_name(item.stem)
            copy_number, note = match.copy_number, match.describe(printable_name(item.file_name))
        if item.is_link:
            link_note = "a symbolic link: not followed, not graded"
            note = f"{note}; {link_note}" if note else link_note
        groups.setdefault((item.student, exercise), []).append((item, copy_number, note))
    submissions = []
    for (student, exercise), group in groups.items():
        # Real files before links, then the newest; ties: the higher copy number, then the name.
        group.sort(key=lambda g: (not g[0].is_link, g[0].mtime_ns, g[1], g[0].file_name), reverse=True)
        chosen, _, note = group[0]
        older = tuple(g[0].path for g in group[1:])
        if older:
            listed = ", ".join(repr(printable_name(p.name)) for p in older[:3]) + (" ..." if len(older) > 3 else "")
            extra = f"newest of {len(group)} files, not graded: {listed}"
            note = f"{note}; {extra}" if note else extra
        submissions.append(Submission(chosen.path, student, exercise, note, older))
    return submissions


def notebook_stem(file_name: str) -> str | None:
    """The name without its notebook suffix (``.ipynb``, ``.ipynb.txt``, ``.ipynb.json``, any case), or None.

    >>> notebook_stem("04_exact_ticks.IPYNB.txt"), notebook_stem("notes.txt")
    ('04_exact_ticks', None)
    """
    lower = file_name.lower()
    for suffix in NOTEBOOK_SUFFIXES:
        if lower.endswith(suffix) and len(file_name) > len(suffix):
            return file_name[: -len(suffix)]
    return None


def _mtime(path: Path, follow: bool = True) -> int:
    try:
        return os.stat(path, follow_symlinks=follow).st_mtime_ns
    except OSError:
        return 0


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


def printable_name(name: str) -> str:
    """A printable, UTF-8-encodable form of a file name, distinct for distinct names.

    Bytes that are not UTF-8 (``os.listdir`` gives them as surrogate escapes) become ``\\xNN``,
    unprintable characters (newline, escape...) ``\\xNN``/``\\uNNNN``, and a backslash is doubled,
    so the form can always be read back. Ordinary names are unchanged.

    >>> printable_name(os.fsdecode(b"ann\\xff")), printable_name("ann\\nlee"), printable_name("Zoë")
    ('ann\\\\xff', 'ann\\\\x0alee', 'Zoë')
    """
    # Through bytes first, so a name from any file-system encoding is read the same way.
    text = os.fsencode(name).decode("utf-8", "surrogateescape") if _has_surrogates(name) else name
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, kept by surrogateescape
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch.isprintable():
            out.append(ch)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return "".join(out)


def _has_surrogates(text: str) -> bool:
    return any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


def safe_name(name: str) -> str:
    """A file-system-safe form of a student or exercise name (lossy: see ``student_folder_name``).

    >>> safe_name("ann lee/../x")
    'ann_lee_.._x'
    """
    cleaned = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name).strip(".")
    return cleaned or "unknown"


# Names Windows reserves for devices, with or without an extension.
_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$", re.IGNORECASE)
_HASHED = re.compile(r"-[0-9a-f]{8}$")


def student_folder_name(student: str) -> str:
    """A file-system-safe folder name for a student, different for different students.

    A lowercase ASCII name of letters, digits, ``-``, ``_`` and ``.`` is kept as it is; any other name
    gets ``safe_name`` plus a short hash of the exact name, so "ann lee", "ann_lee" and "ann/lee" get
    three folders, and so do "Ann" and "ann" on a case-insensitive disk (macOS, Windows).

    >>> student_folder_name("ann_lee"), student_folder_name("ann lee")
    ('ann_lee', 'ann_lee-e4959174')
    """
    plain = (student.isascii() and student == safe_name(student) and student == student.lower()
             and not _RESERVED.match(student) and not _HASHED.search(student) and len(student) <= 100)
    if plain:
        return student
    digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe_name(student)[:60]}-{digest}"  # 60 characters: under 255 bytes even in UTF-8


def file_limit(max_bytes: int | None) -> int:
    """The size beyond which a file is refused unread, for a notebook limit of ``max_bytes`` (None: default)."""
    limit = DEFAULT_MAX_NOTEBOOK_BYTES if max_bytes is None else int(max_bytes)
    return min(FILE_LIMIT_FACTOR * limit, HARD_MAX_NOTEBOOK_BYTES)


def check_file(path: str | Path, max_bytes: int | None = DEFAULT_MAX_NOTEBOOK_BYTES) -> None:
    """Refuse, without reading a byte, what ``read_submission`` would refuse for its kind or size.

    ``SubmissionUnreadable`` for a symbolic link, anything but a regular file, an empty file, or a
    file over ``file_limit(max_bytes)``. Cheap: one ``lstat``; the grader calls it in its own
    process, and leaves parsing to a worker.
    """
    path = Path(path)
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise SubmissionUnreadable(f"cannot read file: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        raise SubmissionUnreadable(f"is a symbolic link (to {printable_name(os.readlink(path))}); links are "
                                   "not followed, as one could point at a classmate's work")
    _refuse_by_stat(info, max_bytes)


def _refuse_by_stat(info: os.stat_result, max_bytes: int | None) -> None:
    if not stat.S_ISREG(info.st_mode):
        kind = "a pipe" if stat.S_ISFIFO(info.st_mode) else "a folder" if stat.S_ISDIR(info.st_mode) else \
            "a socket" if stat.S_ISSOCK(info.st_mode) else "a device" if stat.S_ISCHR(info.st_mode) or \
            stat.S_ISBLK(info.st_mode) else "not a file"
        raise SubmissionUnreadable(f"not a regular file ({kind})")
    if info.st_size == 0:
        raise SubmissionUnreadable("file is empty (0 bytes of JSON)")
    limit = file_limit(max_bytes)
    if info.st_size > limit:
        raise SubmissionUnreadable(
            f"file is {info.st_size / 1e6:,.1f} MB, over the {limit / 1e6:g} MB read at all "
            f"({FILE_LIMIT_FACTOR} x --max-notebook-mb); refused unread")


def read_submission(path: str | Path, max_bytes: int | None = DEFAULT_MAX_NOTEBOOK_BYTES) -> NotebookNode:
    """Read an untrusted notebook into a clean nbformat v4 notebook, or raise ``SubmissionUnreadable``.

    Only what grading needs is kept from each cell (type, source, metadata): saved outputs and
    attachments are dropped, then ``max_bytes`` (None: the default) applies to what is left, so a
    correct notebook with large saved plots is still graded. Files over ``file_limit(max_bytes)``
    are refused unparsed (see ``check_file``), and a symbolic link is refused unread. Cells that are
    not objects or have an unknown type are dropped, and so is cell metadata nested deeper than
    ``MAX_METADATA_DEPTH``. Strict schema validation is skipped on purpose: a notebook with a stray
    field can still be graded. Parsing holds several times the file in memory: the grader calls
    this only in a worker, under a memory cap.
    """
    path = Path(path)
    limit = DEFAULT_MAX_NOTEBOOK_BYTES if max_bytes is None else int(max_bytes)
    data = _read_bytes(path, max_bytes)
    if not data or data.isspace():
        raise SubmissionUnreadable("file is empty (0 bytes of JSON)")
    document = _parse(data)
    del data
    if not isinstance(document, dict) or not isinstance(document.get("nbformat"), int):
        raise SubmissionUnreadable("not a notebook: JSON has no 'nbformat' version")
    if document["nbformat"] < 4:
        document = _upgrade(document)
    cells = document.get("cells")
    if not isinstance(cells, list):
        raise SubmissionUnreadable("not a notebook: no list of cells")
    nb = new_notebook()
    for raw in cells:
        cell = _clean_cell(raw)
        if cell is not None:
            nb.cells.append(cell)
    del document, cells  # the saved outputs go now, before the copy below
    size = _json_size(nb)
    if size > limit:
        raise SubmissionUnreadable(
            f"notebook is {size / 1e6:,.1f} MB without its saved outputs, over the {limit / 1e6:g} MB limit "
            "(--max-notebook-mb)")
    return nb


def submission_digest(path: str | Path) -> str:
    """sha256 (hex) of what a submission is; never follows a link, never holds the file in memory.

    A regular file hashes its bytes, read in blocks; a symbolic link hashes its target's name (so a
    link to ``/dev/zero`` or a classmate's file is never read); anything else (a pipe, a folder)
    hashes to "".
    """
    path = Path(path)
    try:
        if path.is_symlink():
            return hashlib.sha256(b"symlink:" + os.fsencode(os.readlink(path))).hexdigest()
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        digest = hashlib.sha256()
        while block := os.read(fd, 1 << 20):
            digest.update(block)
        return digest.hexdigest()
    except OSError:
        return ""
    finally:
        os.close(fd)


def _json_size(nb: NotebookNode) -> int:
    try:
        return len(orjson.dumps(nb))
    except TypeError:  # an integer beyond 64 bits in some metadata
        return len(json.dumps(nb).encode("utf-8", "surrogatepass"))


def _read_bytes(path: Path, max_bytes: int | None = DEFAULT_MAX_NOTEBOOK_BYTES) -> bytes:
    """The file's bytes, refusing links (atomically, where the OS can) and files over ``file_limit``."""
    try:
        if path.is_symlink():
            raise SubmissionUnreadable(f"is a symbolic link (to {printable_name(os.readlink(path))}); links are "
                                       "not followed, as one could point at a classmate's work")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise SubmissionUnreadable(f"cannot read file: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode) and info.st_size == 0:
            return b""
        _refuse_by_stat(info, max_bytes)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(file_limit(max_bytes) + 1)
    except OSError as exc:
        raise SubmissionUnreadable(f"cannot read file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _parse(data: bytes) -> Any:
    try:
        return orjson.loads(data)  # fast on large output-laden files; validates UTF-8 itself
    except orjson.JSONDecodeError:
        pass  # the standard library says what is wrong in words people know (and allows huge ints)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SubmissionUnreadable("not a notebook: file is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SubmissionUnreadable(f"not a notebook: invalid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise SubmissionUnreadable("not a notebook: JSON nested too deeply") from None


def _upgrade(document: dict[str, Any]) -> dict[str, Any]:
    """nbformat 3 (and older) kept cells in worksheets; let nbformat upgrade it, saved outputs emptied first
    (its converter expects a list of outputs on every code cell, and grading never reads them)."""
    for sheet in document.get("worksheets") or []:
        for cell in (sheet.get("cells") or []) if isinstance(sheet, dict) else []:
            if isinstance(cell, dict) and cell.get("cell_type") == "code":
                cell["outputs"] = []
    try:
        upgraded = nbformat.convert(nbformat.from_dict(document), 4)
    except Exception as exc:
        raise SubmissionUnreadable(f"not a notebook: cannot upgrade format {document.get('nbformat')} "
                                   f"({type(exc).__name__}: {exc})") from None
    return json.loads(json.dumps(upgraded))


_CELL_MAKERS = {"code": new_code_cell, "markdown": new_markdown_cell, "raw": new_raw_cell}


def _clean_cell(raw: Any) -> NotebookNode | None:
    if not isinstance(raw, dict) or raw.get("cell_type") not in _CELL_MAKERS:
        return None
    source = raw.get("source", "")
    if isinstance(source, list):
        source = "".join(part for part in source if isinstance(part, str))
    elif not isinstance(source, str):
        source = ""
    metadata = _clean_metadata(raw.get("metadata"))
    cell = _CELL_MAKERS[raw["cell_type"]](source=source, metadata=metadata)
    cell.pop("id", None)  # ids are assigned later, deterministically
    return cell


def _clean_metadata(metadata: Any) -> dict[str, Any]:
    """A cell's metadata, minus what would trip later steps: entries nested deeper than
    ``MAX_METADATA_DEPTH`` and ``tags`` that are not a list of strings (nbclient reads them)."""
    if not isinstance(metadata, dict):
        return {}
    kept = {key: value for key, value in metadata.items() if isinstance(key, str) and _depth(value) < MAX_METADATA_DEPTH}
    tags = kept.get("tags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(tag, str) for tag in tags)):
        del kept["tags"]
    return kept


def _depth(value: Any) -> int:
    """How deeply ``value`` nests lists and objects (without recursion; stops counting past the limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if depth > MAX_METADATA_DEPTH:
                return depth
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest
