"""Chapters 00 and 01 render as written: no accidental lists, every exercise and chapter reference a working link.

JupyterLab's Markdown renderer starts an ordered list at any line that begins with a number and
``.`` or ``)``, even in the middle of a paragraph ("seed\\n000)" became a list numbered from 0).
A reference to an exercise or another chapter is a relative link the reader can click.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parent.parent
CHAPTERS = [REPO / "course" / "00_start_here.ipynb", REPO / "course" / "01_where_the_time_goes.ipynb"]

_NUMBERED = re.compile(r"^\s*(\d+)[.)](\s|$)")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^\s*```")


def _markdown(path: Path) -> list[tuple[str, str]]:
    nb = nbformat.read(path, as_version=4)
    return [(cell.get("id", "?"), cell.source) for cell in nb.cells if cell.cell_type == "markdown"]


def _prose_lines(source: str) -> list[str]:
    """The lines outside fenced code blocks."""
    out, fenced = [], False
    for line in source.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def numbering_breaks(source: str) -> list[str]:
    """Lines that start a numbered item out of sequence (a list starts at 1 and counts up by one).

    >>> numbering_breaks("quoted from seed\\n000) and more")
    ['000) and more']
    >>> numbering_breaks("1. a\\n   more of a\\n2. b\\n\\ntext\\n\\n1. again")
    []
    """
    breaks, expected = [], 1
    for line in _prose_lines(source):
        match = _NUMBERED.match(line)
        if match:
            number = int(match.group(1))
            if number not in (1, expected):
                breaks.append(line.strip())
            expected = number + 1
    return breaks


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_line_turns_into_a_list_by_accident(path: Path) -> None:
    found = {cid: numbering_breaks(source) for cid, source in _markdown(path)}
    assert not any(found.values()), f"{path.name}: lines that would render as a list: {found}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_exercise_and_chapter_references_are_links_that_exist(path: Path) -> None:
    for cid, source in _markdown(path):
        text = " ".join(_prose_lines(source))
        targets = _LINK.findall(text)
        for target in targets:
            if target.startswith(("http://", "https://", "#")):
                continue
            file = target.split("#", 1)[0]
            assert (path.parent / file).resolve().is_file(), f"{path.name} cell {cid} links {target}, which does not exist"
        bare = _LINK.sub("", text)
        unlinked = re.findall(r"exercises/\d\d_\w+\.ipynb", bare)
        assert not unlinked, f"{path.name} cell {cid} names {unlinked} without a link"


def test_chapter_00_lists_every_chapter_with_a_link() -> None:
    text = " ".join(source for _, source in _markdown(CHAPTERS[0]))
    linked = set(re.findall(r"\]\((\d\d_\w+\.ipynb)\)", text))
    on_disk = {p.name for p in (REPO / "course").glob("[0-9][0-9]_*.ipynb")}
    assert on_disk <= linked, f"chapter 00 does not link {sorted(on_disk - linked)}"
    assert "02_the_standard_tools.ipynb" in linked


def test_chapter_00_defines_the_order_terms_chapter_01_uses() -> None:
    source = next(source for _, source in _markdown(CHAPTERS[0]) if source.startswith("## Glossary"))
    defined = " ".join(line.split("|")[1] for line in source.splitlines() if line.startswith("| "))
    for term in ("GTC", "DAY", "IOC", "FOK", "iceberg", "SMP", "LIMIT", "MARKET", "STOP", "resting", "aggressor",
                 "marketable", "mid-price", "maker", "taker", "price-time priority"):
        assert term in defined, f"the glossary's first column does not define {term!r}"
