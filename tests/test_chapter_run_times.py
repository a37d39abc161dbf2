"""Chapter 00's run times are a quote of ``tests/fixtures/chapter_run_times.json``, kept in step here.

The figures are measured by ``tests/chapter_run_times.py`` (one run of every chapter, on the
course's build machine); refresh them with ``.venv/bin/python tests/chapter_run_times.py`` and
update chapter 00's sentence to the range it prints. This test fails when the two disagree, or
when a chapter has no measured time.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
TIMES = REPO / "tests" / "fixtures" / "chapter_run_times.json"
QUOTE = re.compile(r"A chapter took (\d+) to (\d+) s, most of it\s+measuring \(quoted: one run on the course's build "
                   r"machine, two busy CPUs, (\w+ \d{4})\); Binder's one CPU is slower\.")


def _record() -> dict:
    return json.loads(TIMES.read_text())


def test_every_chapter_has_a_measured_time() -> None:
    assert set(_record()["seconds"]) == {p.name for p in (REPO / "course").glob("*.ipynb")}


def test_chapter_00_quotes_the_measured_range() -> None:
    record = _record()
    text = "\n".join(c.source for c in nbformat.read(REPO / "course" / "00_start_here.ipynb", as_version=4).cells
                     if c.cell_type == "markdown")
    found = QUOTE.search(text)
    assert found, "chapter 00 should quote the measured range of run times, labelled with where and when"
    seconds = record["seconds"].values()
    assert (int(found.group(1)), int(found.group(2))) == (round(min(seconds)), round(max(seconds))), (
        f"chapter 00 says {found.group(1)} to {found.group(2)} s; {TIMES.name} holds {min(seconds)} to {max(seconds)} s")
    year, month = record["measured"].split("-")[:2]
    assert found.group(3).split()[1] == year, "the quote's date is the measurement's"
    assert found.group(3).split()[0] == ["January", "February", "March", "April", "May", "June", "July", "August",
                                         "September", "October", "November", "December"][int(month) - 1]
