"""The website built by ``make site``: every page there, nothing fetched from outside, no answer in it.

One build per session (``built_site``, see conftest); each test reads ``_build/html``. What is
expected is read from the repository's files (``course/``, ``exercises/``, ``solutions/``), so a
renumbered or added chapter is expected without an edit here.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from edumatcher.grading.notebook_cells import (
    BEGIN_HIDDEN_TESTS,
    BEGIN_SOLUTION,
    END_HIDDEN_TESTS,
    END_SOLUTION,
    find_regions,
    source_text,
)

REPO = Path(__file__).resolve().parents[2]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
pytestmark = pytest.mark.slow


def chapters() -> list[Path]:
    return sorted((REPO / "course").glob("[0-9][0-9]_*.ipynb"))


def exercises() -> list[Path]:
    return sorted((REPO / "exercises").glob("[0-9][0-9]_*.ipynb"))


class _Page(HTMLParser):
    """The parts of an HTML page these tests read: its text, and the tags that load or link things."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tags: list[tuple[str, dict[str, str]]] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)


def read_page(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def test_every_chapter_has_a_page_with_its_outputs_binder_and_download(built_site: Path) -> None:
    for chapter in chapters():
        page_path = built_site / "course" / f"{chapter.stem}.html"
        assert page_path.is_file(), f"no page for {chapter.name}"
        html = page_path.read_text(encoding="utf-8")
        assert f"?urlpath=lab/tree/course/{chapter.name}" in html, f"{chapter.name}: no launch-on-Binder link"
        assert f"_sources/course/{chapter.name}" in html, f"{chapter.name}: no download-notebook link"
        assert (built_site / "_sources" / "course" / chapter.name).read_bytes() == chapter.read_bytes()
        assert "cell_output" in html, f"{chapter.name}: the page shows no executed output"
        assert 'class="prev-next-area"' in html, f"{chapter.name}: no previous/next links"
        assert 'id="searchbox"' in html or "search-button" in html, f"{chapter.name}: no search box"


def test_landing_page_lists_every_chapter_and_exercise(built_site: Path) -> None:
    page = read_page(built_site / "index.html")
    hrefs = [attrs.get("href", "") for tag, attrs in page.tags if tag == "a"]
    for chapter in chapters():
        assert f"course/{chapter.stem}.html" in hrefs, f"the chapter table has no link to {chapter.name}"
    for exercise in exercises():
        anchor = "exercises.html#exercise-" + exercise.stem.replace("_", "-")
        assert anchor in hrefs, f"the chapter table has no link to {exercise.name} ({anchor})"
    text = " ".join(" ".join(page.text).split())
    assert "make lab" in text and "Binder" in text, "the landing page does not say how to run the course"


def test_every_exercise_is_listed_with_its_student_copy_for_download(built_site: Path) -> None:
    page = read_page(built_site / "exercises.html")
    downloads = {Path(attrs["href"]).name: built_site / attrs["href"] for tag, attrs in page.tags
                 if tag == "a" and "_downloads/" in attrs.get("href", "")}
    for exercise in exercises():
        assert exercise.name in downloads, f"exercises.html has no download link for {exercise.name}"
        assert downloads[exercise.name].read_bytes() == exercise.read_bytes(), f"{exercise.name}: not the student copy"
    solutions = {p.name for p in (REPO / "solutions").glob("*.ipynb")}
    for path in built_site.rglob("*.ipynb"):
        if path.name in solutions:
            assert path.read_bytes() != (REPO / "solutions" / path.name).read_bytes(), f"{path} is a solution"


def _secret_lines() -> set[str]:
    """Lines inside solution or hidden-test regions of solutions/ that no public file shows.

    Short lines (``else:``) and lines the course, the exercises or the package show anyway
    (anywhere in a line of theirs) are no secret.
    """
    secret: set[str] = set()
    for path in sorted((REPO / "solutions").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            text = source_text(cell)
            lines = text.split("\n")
            for begin, end in ((BEGIN_SOLUTION, END_SOLUTION), (BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS)):
                for first, last in find_regions(text, begin, end):
                    secret.update(line.strip() for line in lines[first + 1:last])
    public = []
    for folder in ("course", "exercises", "edumatcher"):
        for path in (REPO / folder).rglob("*"):
            if path.suffix in (".py", ".ipynb", ".md"):
                text = path.read_text(encoding="utf-8")
                if path.suffix == ".ipynb":
                    text = "\n".join(source_text(c) for c in nbformat.reads(text, as_version=4).cells)
                public.append(text)
    shown = "\n".join(public)
    return {line for line in secret if len(line) >= 12 and line not in shown}


def test_no_solution_or_hidden_test_reaches_the_site(built_site: Path) -> None:
    secrets = _secret_lines()
    assert len(secrets) > 20, "found almost no solution lines to look for: is solutions/ where it was?"
    markers = (BEGIN_SOLUTION, BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS)
    found = []
    for path in built_site.rglob("*"):
        if path.suffix not in (".html", ".js", ".txt", ".ipynb", ".md", ".json"):
            continue
        raw = path.read_text(encoding="utf-8", errors="replace")
        text = "\n".join(read_page(path).text) if path.suffix == ".html" else raw.replace("\\n", "\n")
        lines = {line.strip() for line in text.split("\n")} | {line.strip() for line in raw.split("\n")}
        found += [f"{path.relative_to(built_site)}: {line}" for line in sorted(lines & secrets)]
        found += [f"{path.relative_to(built_site)}: {m}" for m in markers if m in raw]
    assert not found, "solution or hidden-test text in the site:\n" + "\n".join(found[:20])


EXTERNAL = re.compile(r"^(https?:)?//", re.I)


def test_nothing_is_loaded_from_outside(built_site: Path) -> None:
    """Scripts, styles, fonts, images and frames come from the build: the site works offline."""
    loaded_from_outside = []
    for path in built_site.rglob("*.html"):
        for tag, attrs in read_page(path).tags:
            sources = [attrs.get("src", "")]
            if tag == "link" and attrs.get("rel", "") != "canonical":
                sources.append(attrs.get("href", ""))
            loaded_from_outside += [f"{path.relative_to(built_site)}: <{tag}> {s}" for s in sources if EXTERNAL.match(s)]
    for path in list(built_site.rglob("*.css")) + list(built_site.rglob("*.js")):
        text = path.read_text(encoding="utf-8", errors="replace")
        urls = re.findall(r"""(?:url\(\s*['"]?|@import\s+['"]|importScripts\(\s*['"]|\bimport\s*\(\s*['"])((?:https?:)?//[^'")\s]+)""", text)
        loaded_from_outside += [f"{path.relative_to(built_site)}: {url}" for url in urls]
    assert not loaded_from_outside, "fetched from outside the site:\n" + "\n".join(loaded_from_outside[:20])


def _executed(chapter: Path) -> nbformat.NotebookNode:
    """The chapter as the site build executed it, from the build's jupyter-cache."""
    from jupyter_cache import get_cache

    cache = get_cache(REPO / "_build" / ".jupyter_cache")
    _, notebook = cache.merge_match_into_notebook(nbformat.read(chapter, as_version=4))
    return notebook


def test_every_widget_shows_its_default_picture_with_a_caption(built_site: Path) -> None:
    for chapter in chapters():
        notebook = _executed(chapter)
        widgets = sum(WIDGET_VIEW in output.get("data", {}) for cell in notebook.cells if cell.cell_type == "code"
                      for output in cell.outputs)
        html = (built_site / "course" / f"{chapter.stem}.html").read_text(encoding="utf-8")
        figures = re.findall(r'<figure class="[^"]*widget-default.*?</figure>', html, re.S)
        assert len(figures) == widgets, f"{chapter.name}: {widgets} widget outputs but {len(figures)} pictures"
        for figure in figures:
            assert "<img" in figure or "<table" in figure or "<div" in figure, f"{chapter.name}: a widget without a picture"
            assert "interactive control" in figure, f"{chapter.name}: a widget's caption does not say it can be changed"
        assert WIDGET_VIEW not in html and "widget-state+json" not in html, f"{chapter.name}: widget state left in"


def test_every_image_of_a_chapter_has_alt_text(built_site: Path) -> None:
    for chapter in chapters():
        for tag, attrs in read_page(built_site / "course" / f"{chapter.stem}.html").tags:
            if tag == "img":
                alt = attrs.get("alt", "")
                assert alt and not alt.endswith((".png", ".svg")), f"{chapter.name}: an image without alt text ({alt!r})"


def test_the_reference_pages_are_there(built_site: Path) -> None:
    glossary = " ".join(read_page(built_site / "glossary.html").text)
    assert "price-time priority" in glossary.lower()
    sources = " ".join(read_page(built_site / "sources.html").text)
    for name in ("Python matching engine", "CPython 3.14", "C++ engine", "Open Exchange"):
        assert name in sources, f"the sources page does not name {name!r}"
    api = (built_site / "api" / "engine.html").read_text(encoding="utf-8")
    assert 'id="edumatcher.book.OrderBook.submit"' in api, "the API reference does not document OrderBook.submit"
    assert (built_site / "api" / "kit.html").is_file()


def test_the_site_never_says_seed() -> None:
    """The site's own pages name the source documents for what they are, never "the Python engine notes".

    (What the chapters, exercises and docstrings say is theirs: issue 22 words them.)
    """
    said = [str(p.relative_to(REPO)) for p in (REPO / "site").rglob("*.md")
            if re.search(r"\bseeds? 0", p.read_text(encoding="utf-8"), re.I)]
    assert not said, "pages that call a source document 'seed 00N': " + ", ".join(said)
