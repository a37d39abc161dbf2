"""``release --student-tree OUT``: the copy of the course students clone, with no answers in it.

The instructor's repository holds ``solutions/`` (answers and hidden tests) and ``tests/`` (whose
fixtures copy solution notebooks). The student tree is what a class repository needs and nothing
more: ``course/``, ``exercises/`` (released afresh from the sources, so never stale), the
``edumatcher/`` package without caches, ``binder/``, ``pyproject.toml``, a student ``Makefile``
(``make lab`` only: the test suite and the lint target need ``tests/``), ``LICENSE`` and
``.gitignore`` when present, and a student ``README.md`` derived from the course README without
its instructor sections and without anything that points at solutions or tests.

The tree is built in a temporary sibling folder and renamed into place, so a failure leaves no
half-written tree. ``OUT`` must be absent or empty; ``force=True`` replaces only a folder this
module wrote before (it carries ``MARKER_NAME``).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edumatcher import CliError

from .release import release_tree

__all__ = [
    "MARKER_NAME", "COPIED_FOLDERS", "COPIED_FILES", "StudentTreeError", "StudentTreeReport",
    "student_readme", "student_makefile", "student_pyproject", "course_section", "write_student_tree",
    "REMAINING_STEPS",
]

MARKER_NAME = ".edumatcher-student-tree"
_MARKER_TEXT = (
    "Written by `python -m edumatcher release --student-tree`: a student copy of the course.\n"
    "`--force` may replace this folder as a whole; it replaces no folder without this file.\n"
)
COPIED_FOLDERS = ("course", "edumatcher", "binder")
COPIED_FILES = ("pyproject.toml", "LICENSE", "LICENSE.md", "LICENSE.txt", ".gitignore")
# Build leftovers and editor state: never part of a release.
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".ipynb_checkpoints", "*.egg-info",
                                  ".pytest_cache", ".ruff_cache", ".hypothesis", ".DS_Store")
# A README block or Makefile line matching this points at instructor-only material.
_INSTRUCTOR_ONLY = re.compile(
    r"solutions|BEGIN SOLUTION|HIDDEN TESTS|hidden test|\btests/|\.ci/|make test|test-pythons|"
    r"edumatcher (?:grade|release)|nbgrader|gradebook",
    re.IGNORECASE,
)
# Internal references of the course's own history: meaningless to a student.
_INTERNAL = re.compile(r"\bseed \d{3}(?:'s)? (?:§\d+: )?|\bissue \d+'s |with the issues' | \(issues? [\d, and]+\)",
                       re.IGNORECASE)
_DROPPED_HEADINGS = re.compile(r"instructor|maintainer|contribut|grading|releas|teach", re.IGNORECASE)
# Makefile targets that need tests/ or .ci/, which the student tree does not have, and what marks
# other instructor-only parts of it (the nbgrader venv exists for the instructor's tests).
_DROPPED_TARGETS = ("test", "test-pythons", "lint")
_MAKE_INSTRUCTOR = re.compile(r"\bsolutions\b|\btests\b|\.ci/|nbgrader", re.IGNORECASE)
_MAKE_INSTRUCTOR_COMMENT = re.compile(r"solutions|\btests/|\.ci/|nbgrader", re.IGNORECASE)
_BINDER_LINK = re.compile(r"(https://mybinder\.org/v2/gh/)([^?)\s]+)")
_BINDER_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_./-]+)?$")

_STUDENT_QUICK_START = """\
## Quick start

On a machine with Python 3.10 or newer, `make` and `git`, from a clone of this repository:

```sh
make lab
```

`make lab` creates `.venv`, installs everything, and opens `course/00_start_here.ipynb` in
JupyterLab. There is no `make test` in this copy of the course: your exercises are checked by the
check cells inside each notebook in `exercises/` (run the notebook), and your instructor grades the
notebooks you hand in.

**No install at all:** the Binder badge above opens the first chapter in JupyterLab in your browser.
The badge must name this class repository (`https://mybinder.org/v2/gh/OWNER/REPOSITORY/BRANCH`,
followed by `?urlpath=lab/tree/course/00_start_here.ipynb`); it currently names `{binder}`.
Binder gives you about 1–2 GB of memory and a share of one CPU, and culls a session after some idle
minutes: download every notebook you changed before you leave, or your work is lost.
"""

_STUDENT_LAYOUT = """\
## Layout

| path | what |
| --- | --- |
| `course/` | the chapter notebooks, numbered, stored without outputs: open them in order |
| `exercises/` | the graded exercises: write your answers here and hand these notebooks in |
| `edumatcher/` | the engine, its measurement tools and the chapters' support code |
| `binder/` | what Binder needs: pinned `requirements.txt`, `runtime.txt`, `postBuild`, JupyterLab's `overrides.json` |
| `pyproject.toml`, `Makefile` | metadata and `make lab` |
"""

_STUDENT_MAKEFILE_HEADER = """\
# The student copy of the course: `make lab` opens it (creating .venv with the Python found as
# $(PYTHON), 3.10 or newer, on first use). The test suite lives in the instructor's repository.
"""


class StudentTreeError(CliError):
    """The student tree cannot be written (OUT not empty, a part missing, a file that would leak)."""


@dataclass
class StudentTreeReport:
    """What ``write_student_tree`` wrote: the folder, its file count, the exercises, and notes."""

    out: Path
    files: int = 0
    exercises: list[str] = field(default_factory=list)
    copied: list[str] = field(default_factory=list)
    binder: str = ""
    notes: list[str] = field(default_factory=list)


def _sections(text: str, level: int = 2) -> list[tuple[str, str]]:
    """Split Markdown into ``(heading line, body)`` pairs at headings of ``level`` (the preamble has heading "")."""
    sections: list[tuple[str, str]] = []
    heading, body = "", []
    in_fence = False
    prefix = "#" * level + " "
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            in_fence = not in_fence
        if not in_fence and line.startswith(prefix):
            sections.append((heading, "".join(body)))
            heading, body = line.rstrip("\n"), []
        else:
            body.append(line)
    sections.append((heading, "".join(body)))
    return sections


def _blocks(body: str) -> list[str]:
    """Split a section body into paragraphs, list items, table rows and fenced blocks, keeping their text."""
    blocks: list[str] = []
    current: list[str] = []
    in_fence = False

    def flush() -> None:
        if current:
            blocks.append("".join(current))
            current.clear()

    for line in body.splitlines(keepends=True):
        stripped = line.strip()
        if in_fence:
            current.append(line)
            if stripped.startswith("```"):
                in_fence = False
                flush()
            continue
        if stripped.startswith("```"):
            flush()
            current.append(line)
            in_fence = True
        elif not stripped:
            flush()
            blocks.append(line)
        elif stripped.startswith("|") or re.match(r"(?:[-*]|\d+\.)\s", stripped) and not line[0].isspace():
            # A table row or the first line of a list item starts a block of its own.
            flush()
            current.append(line)
            if stripped.startswith("|"):
                flush()
        else:
            current.append(line)
    flush()
    return blocks


def _without_instructor_blocks(body: str) -> str:
    """Drop every level-3 subsection for instructors, and every paragraph, list item, table row or code
    block that points at instructor-only material."""
    kept = ""
    for heading, text in _sections(body, level=3):
        if heading and _DROPPED_HEADINGS.search(heading[4:]):
            continue
        kept += (heading + "\n" if heading else "") + "".join(
            block for block in _blocks(text) if not _INSTRUCTOR_ONLY.search(block))
    return re.sub(r"\n{3,}", "\n\n", kept)


def student_readme(course_readme: str, *, binder_repo: str | None = None, course: Any = None) -> str:
    """The README of the student tree, derived from the course README.

    Keeps the preamble (title, badge, introduction) and every section for readers of the course;
    drops sections whose heading names instructors, maintainers or grading; replaces Quick start and
    Layout by student versions; drops any remaining block that mentions solutions, hidden tests,
    ``tests/``, ``make test``, CI, nbgrader or the grading commands. ``binder_repo``
    (``OWNER/REPO[/BRANCH]``, branch ``main`` by default) rewrites the Binder badge's repository.
    With ``course`` (``term.Course``, from ``assignments.toml``), the title is the course's name and
    the README opens with its instructor, how to hand in, and the assignments with their due dates.

    >>> text = ("# T\\n\\nIntro.\\n\\n## For instructors\\n\\nGrade it.\\n\\n## Notes\\n\\nA.\\n\\nSee tests/.\\n"
    ...         "\\n### Release to students\\n\\nRun it.\\n\\n### Kept\\n\\nB.\\n")
    >>> out = student_readme(text)
    >>> "Grade it" in out, "Run it" in out, "See tests/" in out, "Intro." in out, "A." in out, "### Kept\\n\\nB." in out
    (False, False, False, True, True, True)
    """
    if binder_repo is not None:
        if not _BINDER_REPO.match(binder_repo):
            raise StudentTreeError(f"--binder-repo {binder_repo!r} is not OWNER/REPO or OWNER/REPO/BRANCH")
        target = binder_repo if binder_repo.count("/") >= 2 else f"{binder_repo}/main"
        course_readme = _BINDER_LINK.sub(lambda m: m.group(1) + target, course_readme)
    link = _BINDER_LINK.search(course_readme)
    binder = link.group(2) if link else "no repository (the README has no Binder badge)"
    parts: list[str] = []
    for heading, body in _sections(course_readme):
        title = heading[3:].strip()
        if heading and _DROPPED_HEADINGS.search(title):
            continue
        if title.lower().startswith("quick start"):
            parts.append(_STUDENT_QUICK_START.format(binder=binder) + "\n")
        elif title.lower() == "layout":
            parts.append(_STUDENT_LAYOUT + "\n")
        else:
            parts.append((heading + "\n" if heading else "") + _without_instructor_blocks(body))
    if course is not None:
        title, _, rest = parts[0].partition("\n") if parts and parts[0].startswith("# ") else ("", "", "")
        if course.name:
            title = f"# {course.name}"
        opening = course_section(course)
        if title:
            parts[0] = title + "\n\n" + opening + rest
        else:
            parts.insert(0, opening)
    if not any(p.startswith("## Quick start") for p in parts):
        parts.insert(1, _STUDENT_QUICK_START.format(binder=binder) + "\n")
    return re.sub(r"\n{3,}", "\n\n", _INTERNAL.sub("", "".join(parts))).rstrip("\n") + "\n"


def course_section(course: Any) -> str:
    """The student README's opening: the course, its instructor, how to hand in, the assignments and due dates
    (from ``assignments.toml``: ``term.Course``)."""
    lines = []
    if course.instructor:
        lines.append(f"Instructor: {course.instructor}\n")
    lines.append("## Handing in\n")
    lines.append((course.hand_in or "Hand in each exercise notebook (`exercises/NN_name.ipynb`) as your "
                  "instructor tells you, under its own file name.") + "\n")
    lines.append("Keep each notebook's name: the grader matches your file to its exercise by name. Run the "
                 "notebook from top to bottom before you hand it in; some checks are only run by the grader.\n")
    if course.assignments:
        lines.append("## Assignments\n")
        lines.append("| assignment | exercises | due |\n| --- | --- | --- |")
        for assignment in course.assignments.values():
            exercises = ", ".join(f"`exercises/{name}.ipynb`" for name in assignment.exercises)
            late = (f" (late: -{assignment.late_per_day * 100:g}% a day, at most -{assignment.late_cap * 100:g}%)"
                    if assignment.late_per_day else "")
            lines.append(f"| {assignment.column} | {exercises} | {assignment.due}{late} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def student_pyproject(text: str) -> str:
    """The course ``pyproject.toml`` without the instructor's parts: the ``nbgrader`` extra (with the comment
    above it) and the ``[tool.pytest.ini_options]`` table, whose test paths do not exist in the tree.

    >>> out = student_pyproject('[project.optional-dependencies]\\ncourse = ["a"]\\n# for tests\\nnbgrader = [\\n'
    ...                         '    "nbgrader==0.9.6",\\n]\\n\\n[tool.pytest.ini_options]\\ntestpaths = ["tests"]\\n\\n'
    ...                         '[tool.ruff]\\nx = 1\\n')
    >>> "nbgrader" in out, "testpaths" in out, 'course = ["a"]' in out, "[tool.ruff]" in out
    (False, False, True, True)
    """
    out: list[str] = []
    comments: list[str] = []
    table, skipping_entry, skipping_table = "", False, False
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("[") and not line.startswith(" ") and "=" not in stripped:
            table = stripped
            skipping_table = table == "[tool.pytest.ini_options]"
            skipping_entry = False
        if skipping_table:
            comments = []
            continue
        if skipping_entry:
            if stripped == "]":
                skipping_entry = False
            continue
        if table == "[project.optional-dependencies]" and re.match(r"nbgrader\s*=", stripped):
            comments = []
            skipping_entry = not stripped.endswith("]")
            continue
        if stripped.startswith("#"):
            comments.append(line)
            continue
        out.extend(comments)
        comments = []
        out.append(line)
    out.extend(comments)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out))


REMAINING_STEPS = """\
The student tree is a git repository with one commit. Still to do:
  1. create the class repository (public for Binder, or private for your LMS) and push:
       git -C {tree} remote add origin git@github.com:OWNER/REPO.git && git -C {tree} push -u origin main
  2. open the README's Binder badge once, to build the image before the first class (the first build takes minutes)
  3. publish the due dates in your LMS too; students hand in notebooks as the README says"""


def student_makefile(makefile: str) -> str:
    """The course Makefile with only what students need: ``make lab``, ``make install``, ``make clean``.

    The Makefile is read as blocks separated by blank lines. A block that defines a rule for
    ``test``, ``test-pythons`` or ``lint``, or whose text names instructor-only material (``tests``,
    ``solutions``, ``.ci/``, nbgrader), is dropped with its comments; so are variable lines and
    comment runs that name such material elsewhere (recipe lines stay: an undefined variable
    expands to nothing). Raises ``StudentTreeError`` if a command or setting still names
    ``tests``, ``solutions`` or ``.ci/``, so a changed Makefile is noticed at release time instead of
    shipping a broken target.
    """
    rule_line = re.compile(r"^([^\t#=:][^=:]*):(?!=)", re.MULTILINE)
    dropped: set[str] = set(_DROPPED_TARGETS)
    kept: list[str] = []
    for index, block in enumerate(makefile.split("\n\n")):
        lines = block.splitlines()
        if index == 0:
            # The course Makefile's opening comment describes its own entry points; keep what follows it.
            while lines and lines[0].startswith("#"):
                lines.pop(0)
        targets = [t for match in rule_line.finditer("\n".join(lines)) for t in match.group(1).split()
                   if t != ".PHONY"]
        # A reference to a variable that gets dropped is harmless (it expands to nothing): look past them.
        literal = re.sub(r"\$\([^)]*\)", "", "\n".join(lines))
        if any(t in dropped for t in targets) or (targets and _MAKE_INSTRUCTOR.search(literal)):
            dropped.update(targets)
            continue
        kept.append("\n".join(_student_make_lines(lines)))
    phony = re.compile(r"^\.PHONY:(.*)$", re.MULTILINE)
    body = "\n\n".join(block for block in kept if block.strip())
    # References to variables whose definitions were dropped would expand to nothing; remove them.
    defined = set(re.findall(r"^([A-Za-z_][A-Za-z0-9_]*)\s*[:?+]?=", body, re.MULTILINE))
    body = re.sub(r" ?\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: m.group(0) if m.group(1) in defined or not m.group(1).isupper() else "", body)

    def kept_phony(match: re.Match[str]) -> str:
        targets = [t for t in match.group(1).split() if t not in dropped]
        return ".PHONY: " + " ".join(targets) if targets else ""

    body = re.sub(r"\n{3,}", "\n\n", phony.sub(kept_phony, body))
    text = _STUDENT_MAKEFILE_HEADER + "\n" + body.rstrip("\n") + "\n"
    # Students install the course's extras, not the developers' (pytest, ruff, playwright) or the site's.
    text = re.sub(r"(pip install[^\n]*-e )'?\.\[[^\]\n]*\]'?", r"\1'.[course]'", text)
    for match in rule_line.finditer(text):
        prerequisites = text[match.end():].split("\n", 1)[0].split()
        needed = sorted(dropped.intersection(prerequisites))
        if needed and match.group(1).strip() != ".PHONY":
            raise StudentTreeError(f"Makefile target {match.group(1).strip()} needs {', '.join(needed)}, "
                                   "which needs instructor-only files")
    for number, line in enumerate(text.splitlines(), 1):
        if not line.lstrip().startswith("#") and re.search(r"\bsolutions\b|\btests\b|\.ci/", line):
            raise StudentTreeError(f"Makefile line {number} still needs instructor-only files: {line.strip()}")
    return text


def _student_make_lines(lines: list[str]) -> list[str]:
    """Drop comment runs that name instructor-only paths and variable lines that name instructor-only material."""
    out: list[str] = []
    run: list[str] = []
    for line in [*lines, ""]:
        if line.startswith("#"):
            run.append(line)
            continue
        if not any(_MAKE_INSTRUCTOR_COMMENT.search(c) for c in run):
            out.extend(run)
        run = []
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*\s*[:?+]?=", line) and _MAKE_INSTRUCTOR.search(line):
            continue
        out.append(line)
    return out[:-1]


def _without_instructor_comments(text: str) -> str:
    """Drop a ``#`` comment block from its first line that names instructor-only material to its end.

    Used on ``binder/`` files, whose comments explain how the instructor's tests use them; the
    settings themselves never name such files (``write_student_tree`` refuses a file that still does).

    >>> print(_without_instructor_comments("# pins\\n# tests/x.py reads\\n# this file\\na==1\\n"), end="")
    # pins
    a==1
    """
    kept: list[str] = []
    dropping = False
    for line in text.splitlines(keepends=True):
        is_comment = line.lstrip().startswith("#")
        dropping = is_comment and (dropping or bool(_INSTRUCTOR_ONLY.search(line)))
        if not dropping:
            kept.append(line)
    return "".join(kept)


def _clean_binder(folder: Path) -> None:
    """Strip instructor-only comments from the tree's ``binder/`` files; refuse one that still names them."""
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        cleaned = _without_instructor_comments(text)
        if cleaned != text:
            path.write_bytes(cleaned.encode("utf-8"))
        if re.search(r"\bsolutions\b|\btests/|\.ci/", cleaned):
            raise StudentTreeError(f"{path.name} in binder/ still names instructor-only files; fix it in the course")


def _first_commit(tree: Path) -> list[str]:
    """``git init`` the tree (no hook samples) and commit everything; notes when git cannot."""
    import subprocess

    if shutil.which("git") is None:
        return ["git is not installed: the tree is not a git repository yet (git init, add, commit)"]
    identity: list[str] = []
    configured = subprocess.run(["git", "config", "user.email"], capture_output=True, text=True, cwd=tree)
    if not configured.stdout.strip():
        identity = ["-c", "user.name=EduMatcher release", "-c", "user.email=release@localhost"]
    for argv in (["git", "init", "-q", "--template=", "-b", "main"], ["git", "add", "-A"],
                 ["git", *identity, "commit", "-q", "-m", "The course, released for students"]):
        done = subprocess.run(argv, capture_output=True, text=True, cwd=tree)
        if done.returncode != 0:
            return [f"{' '.join(argv[:2])} failed ({done.stderr.strip()[:200]}): the tree has no first commit"]
    return []


def _check_out_dir(out: Path, root: Path, force: bool) -> bool:
    """Refuse an OUT that holds anything but an earlier student tree (with ``force``); True if it exists."""
    resolved = out.resolve()
    for part in COPIED_FOLDERS + ("solutions", "exercises", "tests"):
        inside = (root / part).resolve()
        if resolved == inside or inside in resolved.parents:
            raise StudentTreeError(f"{out} is inside {root / part}: choose a folder outside the course's parts")
    if resolved == root.resolve():
        raise StudentTreeError(f"{out} is the course repository itself: choose a new folder")
    if not out.exists():
        return False
    if not out.is_dir():
        raise StudentTreeError(f"{out} exists and is not a folder")
    if not any(out.iterdir()):
        return True
    if not (out / MARKER_NAME).is_file():
        raise StudentTreeError(f"{out} is not empty and was not written by --student-tree: choose an empty folder")
    if not force:
        raise StudentTreeError(f"{out} holds an earlier student tree: pass --force to replace it")
    return True


def write_student_tree(out_dir: str | Path, *, source_dir: str | Path = "solutions", root: str | Path | None = None,
                       force: bool = False, binder_repo: str | None = None, course: Any = None,
                       git: bool = True) -> StudentTreeReport:
    """Write the student copy of the course into ``out_dir`` and return what was written.

    ``root`` is the course repository (default: the folder that holds ``source_dir``). The exercises
    are released from ``source_dir`` into the tree; nothing of ``source_dir`` or ``tests/`` is copied.
    Raises ``StudentTreeError`` (one line) when OUT is not empty (or, with ``force``, not an earlier
    student tree), when a part of the course is missing, or when a source notebook is invalid.
    """
    source = Path(source_dir)
    root_path = Path(root) if root is not None else source.resolve().parent
    out = Path(out_dir)
    missing = [part for part in COPIED_FOLDERS if not (root_path / part).is_dir()]
    if missing:
        raise StudentTreeError(f"{root_path} is not the course repository: no {', '.join(missing)} folder")
    existed = _check_out_dir(out, root_path, force)
    out.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    report = StudentTreeReport(out=out)
    try:
        for part in COPIED_FOLDERS:
            shutil.copytree(root_path / part, building / part, ignore=_IGNORED)
            report.copied.append(part + "/")
        _clean_binder(building / "binder")
        for name in COPIED_FILES:
            if (root_path / name).is_file():
                shutil.copy2(root_path / name, building / name)
                report.copied.append(name)
        report.exercises = sorted(release_tree(source, building / "exercises").written)
        report.copied.append("exercises/")
        readme = root_path / "README.md"
        if readme.is_file():
            text = student_readme(readme.read_text(encoding="utf-8"), binder_repo=binder_repo, course=course)
            (building / "README.md").write_bytes(text.encode("utf-8"))
            report.copied.append("README.md (student version)")
            link = _BINDER_LINK.search(text)
            report.binder = link.group(2) if link else ""
        else:
            report.notes.append(f"no README.md in {root_path}: the tree has none")
        makefile = root_path / "Makefile"
        if makefile.is_file():
            (building / "Makefile").write_bytes(student_makefile(makefile.read_text(encoding="utf-8")).encode("utf-8"))
            report.copied.append("Makefile (make lab only)")
        if (building / "pyproject.toml").is_file():
            pyproject = building / "pyproject.toml"
            pyproject.write_text(student_pyproject(pyproject.read_text(encoding="utf-8")), encoding="utf-8")
        (building / MARKER_NAME).write_text(_MARKER_TEXT, encoding="utf-8")
        if git:
            report.notes.extend(_first_commit(building))
        report.files = sum(1 for path in building.rglob("*") if path.is_file())
        if existed:
            # Rename the old tree aside first, so a failure between the two renames loses nothing.
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            old.rmdir()
            out.rename(old)
            building.rename(out)
            shutil.rmtree(old)
        else:
            building.rename(out)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return report
