"""What the browser tests need to know about the course's notebooks, read from the files.

Discovery is by glob, so chapters and exercises are picked up as they are written:
``course/NN_*.ipynb`` are chapters; an exercise is a pair ``exercises/NAME.ipynb`` (the
student copy) and ``solutions/NAME.ipynb`` (the instructor copy), matched by file name.

Expectations come from the notebook's own source, before anything runs, so a chapter whose
widget or figure silently fails to appear cannot pass by producing nothing:

- a notebook *uses widgets* if a code cell names ``ipywidgets`` (or ``interact``) or a module
  of ``edumatcher`` that itself imports ipywidgets;
- it *makes figures* if a code cell names matplotlib/``plt`` or an ``edumatcher`` module that
  imports matplotlib.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import nbformat

SOLUTION_MARKER = re.compile(r"^\s*#+\s*(BEGIN|END)\s+SOLUTION\b.*$")


def chapters(repo: Path) -> list[Path]:
    """Return the chapter notebooks ``course/NN_*.ipynb``, in course order."""
    return sorted((repo / "course").glob("[0-9][0-9]_*.ipynb"))


@dataclass(frozen=True)
class ExercisePair:
    """A student copy and the solution notebook it was generated from."""

    student: Path
    solution: Path


def exercise_pairs(repo: Path) -> list[ExercisePair]:
    """Return every ``exercises/X.ipynb`` that has a ``solutions/X.ipynb``, sorted by name."""
    pairs = []
    for student in sorted((repo / "exercises").glob("[0-9][0-9]_*.ipynb")):
        solution = repo / "solutions" / student.name
        if solution.exists():
            pairs.append(ExercisePair(student, solution))
    return pairs


def code_sources(path: Path) -> list[str]:
    """Return the source of every code cell of the notebook at *path*."""
    notebook = nbformat.read(path, as_version=4)
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


@cache
def edumatcher_modules_importing(package: str, package_dir: Path) -> frozenset[str]:
    """Return dotted names of ``edumatcher`` modules (and their subpackages) that import *package*.

    >>> "edumatcher.kit.figure_control" in edumatcher_modules_importing("ipywidgets", Path("edumatcher").resolve())
    True
    """
    found = set()
    for source_file in package_dir.rglob("*.py"):
        try:
            tree = ast.parse(source_file.read_text(encoding="utf-8"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            if any(name == package or name.startswith(package + ".") for name in names):
                relative = source_file.relative_to(package_dir.parent).with_suffix("")
                parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
                # The module only, not the packages holding it: a package that merely holds such a
                # module (``edumatcher.kit``, ``edumatcher.chapters.x``) re-exports none of its controls,
                # and ``from edumatcher.chapters.x import widget`` is matched through the module's name.
                found.add(".".join(parts))
                break
    return frozenset(found)


def _names_module(source: str, dotted: str) -> bool:
    """Whether *source* refers to the module *dotted* (``a.b.c`` or ``from a.b import c``)."""
    parent, _, leaf = dotted.rpartition(".")
    direct = re.search(rf"\b{re.escape(dotted)}\b", source)
    imported = parent and re.search(rf"from\s+{re.escape(parent)}\s+import\s+[^\n]*\b{re.escape(leaf)}\b", source)
    return bool(direct or imported)


def uses_package(path: Path, package: str, direct_pattern: str, package_dir: Path) -> bool:
    """Whether a code cell of *path* matches *direct_pattern* or names a module importing *package*."""
    modules = edumatcher_modules_importing(package, package_dir)
    for source in code_sources(path):
        if re.search(direct_pattern, source):
            return True
        if any(_names_module(source, module) for module in modules if module != "edumatcher"):
            return True
    return False


def uses_widgets(path: Path, package_dir: Path) -> bool:
    """Whether the notebook at *path* should show at least one ipywidgets control."""
    return uses_package(path, "ipywidgets", r"\bipywidgets\b|\binteract(ive)?\(", package_dir)


def makes_figures(path: Path, package_dir: Path) -> bool:
    """Whether the notebook at *path* should show at least one matplotlib figure."""
    return uses_package(path, "matplotlib", r"\bmatplotlib\b|\bplt\.", package_dir)


@dataclass(frozen=True)
class AnswerCell:
    """An answer cell of a student copy and the text a student who knows the answer would type."""

    index: int
    grade_id: str
    stub: str
    answer: str


def answer_text(solution_source: str) -> str:
    """Return what the student types: the solution cell without its BEGIN/END SOLUTION lines.

    >>> answer_text("def f():\\n    ### BEGIN SOLUTION\\n    return 1\\n    ### END SOLUTION")
    'def f():\\n    return 1'
    """
    return "\n".join(line for line in solution_source.splitlines() if not SOLUTION_MARKER.match(line))


def answer_cells(pair: ExercisePair) -> list[AnswerCell]:
    """Return the student copy's code answer cells (nbgrader ``solution: true``) with their answers.

    Cells are matched to the solution notebook by ``grade_id``. Raises ``LookupError`` if an
    answer cell has no counterpart, since then there is nothing a student could type.
    """
    student = nbformat.read(pair.student, as_version=4)
    solution = nbformat.read(pair.solution, as_version=4)
    by_id = {
        cell.metadata.get("nbgrader", {}).get("grade_id"): cell
        for cell in solution.cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    }
    found = []
    for index, cell in enumerate(student.cells):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("solution"):
            continue
        grade_id = meta.get("grade_id", "")
        if grade_id not in by_id:
            raise LookupError(f"{pair.student.name}: answer cell {grade_id!r} has no match in {pair.solution}")
        found.append(AnswerCell(index, grade_id, cell.source, answer_text(by_id[grade_id].source)))
    return found


def check_cell_indices(path: Path) -> list[int]:
    """Return indices of the cells that grade (nbgrader ``grade: true`` and not ``solution``)."""
    notebook = nbformat.read(path, as_version=4)
    return [
        index for index, cell in enumerate(notebook.cells)
        if cell.metadata.get("nbgrader", {}).get("grade") and not cell.metadata.get("nbgrader", {}).get("solution")
    ]


def same_code(left: str, right: str) -> bool:
    """Whether two code texts parse to the same Python syntax tree (layout and comments aside).

    >>> same_code("x = ( 1 +\\n 2 )", "x = (1 + 2)  # sum")
    True
    >>> same_code("if a:\\n    b\\nc", "if a:\\n    b\\n    c")
    False
    """
    return ast.dump(ast.parse(left)) == ast.dump(ast.parse(right))
