"""What the site knows about the course, read from its files: chapters, exercises, glossary terms.

Everything a page lists is read here from ``course/*.ipynb`` and ``exercises/*.ipynb`` at build
time, so renaming, renumbering or adding a notebook changes the site with no edit to it. Only
student copies are read (``exercises/``), never ``solutions/``.

The conventions relied on are the course's own (COURSE_GUIDE.md): a notebook is named
``NN_topic.ipynb``; its first cell starts with a ``# NN · Title`` heading (an exercise's with
``# Exercise NN · Title``); an exercise belongs to the chapter with the same ``NN``; glossary
terms are the rows of two-column tables in a section whose heading says "Glossary".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

NUMBERED = re.compile(r"^(\d\d)_[A-Za-z0-9_]+\.ipynb$")
HEADING = re.compile(r"^#\s+(?:Exercise\s+)?(\d\d[a-z]?)\s*[·:.\-–]\s*(.+?)\s*$")
MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


@dataclass(frozen=True)
class Notebook:
    """One numbered notebook: where it is, its number, its title, its opening paragraph."""

    path: Path
    number: str
    title: str
    intro: str
    points: float

    @property
    def stem(self) -> str:
        return self.path.stem


def _first_sentence(text: str) -> str:
    """The first sentence of a paragraph, links reduced to their text."""
    text = " ".join(MD_LINK.sub(r"\1", text).split())
    match = re.search(r"(?<=[.!?])\s+(?=[A-Z`*])", text)
    return text[: match.start()] if match else text


def read_notebook(path: Path) -> Notebook:
    """Number, title and first paragraph of ``path``; ValueError when it breaks the conventions."""
    name = NUMBERED.match(path.name)
    if not name:
        raise ValueError(f"{path}: not named NN_topic.ipynb")
    nb = nbformat.read(path, as_version=4)
    markdown = [cell.source for cell in nb.cells if cell.cell_type == "markdown"]
    if not markdown:
        raise ValueError(f"{path}: no markdown cell, so no title")
    lines = markdown[0].strip().splitlines()
    heading = HEADING.match(lines[0]) if lines else None
    if not heading:
        raise ValueError(f"{path}: the first cell should start with '# {name.group(1)} · Title', not {lines[:1]}")
    paragraphs = [p for p in "\n".join(lines[1:]).split("\n\n") if p.strip() and not p.lstrip().startswith(("#", "|", "<"))]
    points = sum(float(cell.metadata.get("nbgrader", {}).get("points", 0) or 0) for cell in nb.cells
                 if cell.metadata.get("nbgrader", {}).get("grade"))
    return Notebook(path, name.group(1), heading.group(2), _first_sentence(paragraphs[0]) if paragraphs else "", points)


def chapters(repo: Path) -> list[Notebook]:
    """Every chapter in ``course/``, in file-name (so chapter) order."""
    return [read_notebook(p) for p in sorted((repo / "course").glob("*.ipynb")) if NUMBERED.match(p.name)]


def exercises(repo: Path) -> list[Notebook]:
    """Every student copy in ``exercises/``, in file-name order."""
    return [read_notebook(p) for p in sorted((repo / "exercises").glob("*.ipynb")) if NUMBERED.match(p.name)]


def exercises_of(chapter: Notebook, every: list[Notebook]) -> list[Notebook]:
    """The exercises that belong to ``chapter``: those whose file name starts with its number."""
    return [exercise for exercise in every if exercise.path.name[:2] == chapter.path.name[:2]]


def _cells(row: str) -> list[str]:
    """The cells of one markdown table row (pipes inside backticks are not split on)."""
    cells, current, code = [], "", False
    for char in row.strip().strip("|"):
        if char == "`":
            code = not code
        if char == "|" and not code:
            cells.append(current.strip())
            current = ""
        else:
            current += char
    cells.append(current.strip())
    return cells


def glossary_rows(repo: Path) -> list[tuple[str, str, Path]]:
    """``(term, definition, chapter)`` for each row of a two-column table under a "Glossary" heading."""
    rows: list[tuple[str, str, Path]] = []
    for chapter in sorted((repo / "course").glob("*.ipynb")):
        nb = nbformat.read(chapter, as_version=4)
        in_glossary = False
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            for line in cell.source.splitlines():
                heading = re.match(r"^(#+)\s+(.*)", line)
                if heading:
                    in_glossary = "glossary" in heading.group(2).lower()
                    continue
                if not in_glossary or not line.lstrip().startswith("|"):
                    continue
                cells = _cells(line)
                if len(cells) != 2 or set(cells[0]) <= set("-: ") or cells[0].lower() in ("term", ""):
                    continue
                rows.append((cells[0], cells[1], chapter))
    return rows
