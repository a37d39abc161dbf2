"""Sphinx directives that write the site's generated pages from the course's files.

- ``chapter-table``: the landing page's table of chapters, with their exercises;
- ``exercise-list``: one entry per student copy in ``exercises/``, with its download link;
- ``course-glossary``: the glossary, from the chapters' glossary tables;
- ``api-modules``: ``automodule`` for each module of a package (the API reference).

A chapter links to an exercise as ``../exercises/NAME.ipynb`` (right in JupyterLab, where the
repository is the root); on the site that link goes to the exercise's entry on the exercises
page, which holds the download link. Read from the files at every build (see course_files).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from typing import Any

import course_files
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.util.docutils import SphinxDirective
from sphinx.util.parsing import nested_parse_to_nodes

EXERCISE_LINK = re.compile(r"^(?:\.\./)+exercises/(\d\d_[A-Za-z0-9_]+)\.ipynb$")
EXERCISE_DOC = re.compile(r"^exercises/(\d\d_[A-Za-z0-9_]+)$")


def _repo(directive: SphinxDirective) -> Path:
    return Path(directive.config.edumatcher_repo)


def _read(directive: SphinxDirective, what: str) -> list[course_files.Notebook]:
    """``course_files.chapters`` or ``.exercises``; a notebook that breaks the conventions is a build error."""
    try:
        return getattr(course_files, what)(_repo(directive))
    except ValueError as exc:
        raise directive.error(str(exc)) from exc


def _binder(config: Any, path: str) -> str:
    return (f"https://mybinder.org/v2/gh/{config.edumatcher_repository}/{config.edumatcher_branch}"
            f"?urlpath=lab/tree/{path}")


def _markdown(directive: SphinxDirective, text: str) -> list[nodes.Node]:
    """``text`` (MyST markdown) parsed as if it were written where the directive stands."""
    return nested_parse_to_nodes(directive.state, text, source=f"<{directive.name}>", allow_section_headings=True)


def _label(exercise: course_files.Notebook | str) -> str:
    """The label of an exercise's entry on the exercises page (``exercise-01-next-one-percent``)."""
    stem = exercise if isinstance(exercise, str) else exercise.stem
    return "exercise-" + stem.replace("_", "-")


def _escape_cell(text: str) -> str:
    return text.replace("|", "\\|")


class ChapterTable(SphinxDirective):
    """A table of every chapter: number and title (linked), what it is about, its exercises."""

    def run(self) -> list[nodes.Node]:
        repo = _repo(self)
        every_exercise = _read(self, "exercises")
        for path in (repo / "course").glob("*.ipynb"):
            self.env.note_dependency(str(path))
        lines = ["| chapter | what it is about | graded exercise(s) |", "| --- | --- | --- |"]
        for chapter in _read(self, "chapters"):
            exercises = "; ".join(f"[{_escape_cell(e.title)}](exercises.md#{_label(e)})"
                                  for e in course_files.exercises_of(chapter, every_exercise))
            lines.append(f"| [{chapter.number} {_escape_cell(chapter.title)}](course/{chapter.stem}.ipynb) "
                         f"| {_escape_cell(chapter.intro)} | {exercises or '—'} |")
        return _markdown(self, "\n".join(lines))


class ExerciseList(SphinxDirective):
    """A section per exercise: title, chapter, points, first sentence, download and Binder links."""

    def run(self) -> list[nodes.Node]:
        chapters = _read(self, "chapters")
        text: list[str] = []
        for exercise in _read(self, "exercises"):
            self.env.note_dependency(str(exercise.path))
            chapter = next((c for c in chapters if c.number == exercise.path.name[:2]), None)
            of_chapter = (f"Chapter [{chapter.number} {chapter.title}](course/{chapter.stem}.ipynb)"
                          if chapter else "No chapter")
            points = f"{exercise.points:g} points" if exercise.points else "ungraded"
            relative = f"exercises/{exercise.path.name}"
            text += [
                f"({_label(exercise)})=",
                f"## {exercise.number} · {exercise.title}",
                "",
                f"{of_chapter} · {points} · `{relative}`",
                "",
                exercise.intro,
                "",
                f"{{download}}`Download the notebook <../{relative}>` · "
                f"[open it on Binder]({_binder(self.config, relative)})",
                "",
            ]
        return _markdown(self, "\n".join(text))


def _glossary_terms(cell: str) -> list[str]:
    """The term(s) a glossary row defines: each bold part of a list of bold parts, else the cell."""
    bold = re.findall(r"\*\*(.+?)\*\*", cell)
    if bold and re.fullmatch(r"\s*\*\*.+?\*\*(\s*,\s*\*\*.+?\*\*)*\s*", cell):
        return bold
    return [re.sub(r"\*+([^*]+)\*+", r"\1", cell).strip()]


class CourseGlossary(SphinxDirective):
    """Sphinx's ``glossary``, its entries read from the chapters' glossary tables."""

    def run(self) -> list[nodes.Node]:
        repo = _repo(self)
        rows = course_files.glossary_rows(repo)
        if not rows:
            raise self.error("no glossary table found in course/*.ipynb (a two-column table under a 'Glossary' heading)")
        lines = [":sorted:", ""]
        for term_cell, definition, chapter in rows:
            self.env.note_dependency(str(chapter))
            lines += _glossary_terms(term_cell)
            lines += [f"  {definition} ({{doc}}`chapter {chapter.name[:2]} <course/{chapter.stem}>`)", ""]
        return _markdown(self, "```{glossary}\n" + "\n".join(lines) + "\n```")


def _defines_something(module_name: str) -> bool:
    """Whether a module defines a public name of its own (a module that only re-exports is left out)."""
    module = importlib.import_module(module_name)
    return any(getattr(value, "__module__", None) == module_name for name, value in vars(module).items()
               if not name.startswith("_"))


class ApiModules(SphinxDirective):
    """``automodule`` for a package's modules: its top-level modules, or the package itself.

    By default each top-level module of the package is documented, except those named in
    ``:exclude:`` and those that define nothing of their own (aliases that re-export another
    module); ``:package:`` documents the package's public names (its ``__all__``) instead.
    """

    required_arguments = 1
    option_spec = {"exclude": directives.unchanged, "package": directives.flag}

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        try:
            package = importlib.import_module(name)
        except ImportError as exc:
            raise self.error(f"cannot import {name}: {exc}") from exc
        if "package" in self.options:
            modules = [name]
        else:
            exclude = set((self.options.get("exclude") or "").split())
            modules = [f"{name}.{info.name}" for info in pkgutil.iter_modules(package.__path__)
                       if not info.ispkg and not info.name.startswith("_") and info.name not in exclude
                       and _defines_something(f"{name}.{info.name}")]
        text = []
        for module in modules:
            path = getattr(importlib.import_module(module), "__file__", None)
            if path:
                self.env.note_dependency(path)
            options = ["   :members:"] + (["   :imported-members:"] if "package" in self.options else [])
            # Docstrings are reStructuredText: autodoc's output is parsed as such, not as Markdown.
            text += [f"## `{module}`", "", "```{eval-rst}", f".. automodule:: {module}", *options, "```", ""]
        return _markdown(self, "\n".join(text))


class CourseLinks(SphinxTransform):
    """Resolve a chapter's links the way JupyterLab does, with the repository as the root.

    ``site/course`` is a link to ``course/``, and Sphinx resolves a relative link through it: a
    chapter's ``01_where_the_time_goes.ipynb`` or ``../exercises/NAME.ipynb`` comes out as a path
    in the repository, which is no page of the site. This sends the first to that chapter's page
    and the second to the exercise's entry on the exercises page (which holds the download link).
    """

    default_priority = 100  # a read-time transform: before myst-parser resolves references

    def apply(self, **kwargs: Any) -> None:
        repo = Path(self.config.edumatcher_repo)
        for node in list(self.document.findall(addnodes.pending_xref)):
            if node.get("reftype") != "myst":
                continue
            target = node.get("reftarget", "")
            exercise = EXERCISE_LINK.match(target) or EXERCISE_DOC.match(target.removeprefix(str(repo) + "/"))
            if exercise:
                node.replace_self(addnodes.pending_xref(
                    "", *node.children, refdomain="std", reftype="ref", reftarget=_label(exercise.group(1)),
                    refexplicit=True, refwarn=True, refdoc=node.get("refdoc", self.env.docname)))
            elif node.get("refdomain") == "doc" and target.startswith(str(repo / "course") + "/"):
                node["reftarget"] = target.removeprefix(str(repo) + "/")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("edumatcher_repo", str(Path(__file__).resolve().parents[2]), "env")
    app.add_config_value("edumatcher_repository", "edumatcher/edumatcher", "env")
    app.add_config_value("edumatcher_branch", "main", "env")
    app.add_config_value("edumatcher_site_code", "", "env")
    app.add_directive("chapter-table", ChapterTable)
    app.add_directive("exercise-list", ExerciseList)
    app.add_directive("course-glossary", CourseGlossary)
    app.add_directive("api-modules", ApiModules)
    app.add_transform(CourseLinks)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
