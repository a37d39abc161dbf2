"""The built website in a real browser, offline: what a student opening it sees.

Debian's Chromium (``/usr/bin/chromium``, installed by ``.ci/run``) driven by Playwright opens
the landing page and every chapter page, served from ``_build/html`` on 127.0.0.1. Every request
that leaves the site is refused and recorded, so a page that needs the network fails here. On
each page: no console error, every image loaded (``naturalWidth > 0``), no widget output without
a picture, every internal link answered (the page exists, and so does the ``#anchor`` it names).
The search page finds the chapter on ``__slots__`` for "slots". Screenshots go to
``artifacts/site/``.

The browser runs in a child process (``browse_site.py``), once for all pages: Playwright's sync API
will not start again in a process where the JupyterLab browser tests hold their session.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "artifacts" / "site"
CHROMIUM = Path(os.environ.get("EDUMATCHER_CHROMIUM", "/usr/bin/chromium"))

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def chapter_pages() -> list[str]:
    return [f"course/{path.stem}.html" for path in sorted((REPO / "course").glob("[0-9][0-9]_*.ipynb"))]


PAGES = ["index.html", *chapter_pages()]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site_url(built_site: Path) -> Iterator[str]:
    """The built site, served on a free port of 127.0.0.1 for the module's tests."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(built_site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browsed(site_url: str, terminal_summary) -> dict[str, Any]:
    """What Chromium met on every page (see browse_site.py), keyed by page."""
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium not found at {CHROMIUM}: `apt-get install chromium` (.ci/run does this)")
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    terminal_summary(f"site: screenshots of the website in {SCREENSHOTS}")
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("browse_site.py")), site_url,
                           str(SCREENSHOTS), *PAGES], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"browse_site.py failed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_offline_with_every_picture_and_link(browsed: dict[str, Any], path: str) -> None:
    seen = browsed[path]
    assert not seen["outside"], f"{path} asked for something outside the site: {seen['outside'][:5]}"
    assert not seen["errors"], f"{path}: console errors: {seen['errors'][:5]}"
    assert not seen["unloaded"], f"{path}: images not loaded: {seen['unloaded'][:5]}"
    assert seen["blank_widgets"] == 0, f"{path}: {seen['blank_widgets']} widget output(s) without a picture"
    assert seen["widget_views"] == 0, f"{path}: widget views left for a kernel that is not there"
    assert not seen["broken_links"], f"{path}: internal links not answered: {seen['broken_links'][:10]}"


def _slots_chapter() -> str:
    """The chapter with a heading on ``__slots__`` (found in the files, so renumbering cannot break it)."""
    for path in sorted((REPO / "course").glob("[0-9][0-9]_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown" and re.search(r"^#+ .*__slots__", cell.source, re.M):
                return path.stem
    raise AssertionError("no chapter has a heading on __slots__")


def test_search_finds_the_chapter_on_slots(browsed: dict[str, Any]) -> None:
    chapter = _slots_chapter()
    search = browsed["search"]
    assert any(f"course/{chapter}.html" in href for href in search["results"]), (
        f"searching 'slots' does not find {chapter}: {search['results'][:10]}")
    assert not search["outside"] and not search["errors"], (search["outside"], search["errors"])
