"""The built website in a real browser, offline: what a student opening it sees.

Debian's Chromium (``/usr/bin/chromium``, installed by ``.ci/run``) driven by Playwright opens
the landing page and every chapter page, served from ``_build/html`` on 127.0.0.1. Every request
that leaves the site is refused and recorded, so a page that needs the network fails here. On
each page: no console error, every image loaded (``naturalWidth > 0``), no widget output without
a picture, every internal link answered (the page exists, and so does the ``#anchor`` it names).
The search page finds the chapter on ``__slots__`` for "slots". Screenshots go to
``artifacts/site/``.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "artifacts" / "site"
CHROMIUM = Path(os.environ.get("EDUMATCHER_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site_url(built_site: Path) -> Iterator[str]:
    """The built site, served on a free port of 127.0.0.1 for the module's tests."""
    handler = functools.partial(_QuietHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(site_url: str) -> Iterator:
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium not found at {CHROMIUM}: `apt-get install chromium` (.ci/run does this)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser, site_url: str) -> Iterator:
    """A fresh page whose requests outside the site are refused and listed in ``page.outside``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    tab = context.new_page()
    tab.outside = []
    tab.errors = []

    def route(route) -> None:
        if route.request.url.startswith(site_url) or route.request.url.startswith("data:"):
            route.continue_()
        else:
            tab.outside.append(route.request.url)
            route.abort()

    context.route("**/*", route)
    tab.on("console", lambda message: tab.errors.append(message.text) if message.type == "error" else None)
    tab.on("pageerror", lambda error: tab.errors.append(str(error)))
    try:
        yield tab
    finally:
        context.close()


def chapter_pages() -> list[str]:
    return [f"course/{path.stem}.html" for path in sorted((REPO / "course").glob("[0-9][0-9]_*.ipynb"))]


@functools.cache
def _fetch(url: str) -> tuple[int, str]:
    """Status and text of an internal URL (cached: many pages link the same pages)."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode("utf-8", errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, ""


def _unanswered_links(page, site_url: str) -> list[str]:
    """Internal links of the page whose target is missing, or whose #anchor is not on it."""
    hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
    broken = []
    for href in sorted(set(hrefs)):
        if not href.startswith(site_url):
            continue
        url, fragment = urldefrag(href)
        status, text = _fetch(url)
        if status != 200:
            broken.append(f"{href} ({status})")
        elif fragment and urlparse(url).path.endswith(".html") and not re.search(
                rf"""\bid=["']{re.escape(fragment)}["']""", text):
            broken.append(f"{href} (no #{fragment} on that page)")
    return broken


def _open(page, url: str) -> None:
    page.goto(url, wait_until="load")
    # Scroll through the page so that anything loaded lazily is loaded, then wait for images.
    page.evaluate("""async () => {
        for (let y = 0; y < document.body.scrollHeight; y += 600) { window.scrollTo(0, y); await new Promise(r => setTimeout(r, 20)); }
        window.scrollTo(0, 0);
        await Promise.all(Array.from(document.images).map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })));
    }""")


@pytest.mark.parametrize("path", ["index.html", *chapter_pages()])
def test_page_loads_offline_with_every_picture_and_link(page, site_url: str, path: str) -> None:
    _open(page, urljoin(site_url, path))
    page.screenshot(path=str(SCREENSHOTS / (path.replace("/", "_").removesuffix(".html") + ".png")), full_page=False)
    assert not page.outside, f"{path} asked for something outside the site: {page.outside[:5]}"
    assert not page.errors, f"{path}: console errors: {page.errors[:5]}"
    unloaded = page.evaluate("Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
    assert not unloaded, f"{path}: images not loaded: {unloaded[:5]}"
    # A widget's picture: an image that loaded, or the HTML it drew (a table, a question), beside its caption.
    blank = page.evaluate("""Array.from(document.querySelectorAll('figure.widget-default')).filter(f =>
        !Array.from(f.querySelectorAll('img')).some(i => i.naturalWidth > 0)
        && !Array.from(f.querySelectorAll('.output')).some(o => o.textContent.trim() || o.querySelector('svg'))
    ).length""")
    assert blank == 0, f"{path}: {blank} widget output(s) without a picture"
    left = page.evaluate("document.querySelectorAll('script[type*=\"jupyter.widget\"], .jupyter-widgets').length")
    assert left == 0, f"{path}: widget views left for a kernel that is not there"
    broken = _unanswered_links(page, site_url)
    assert not broken, f"{path}: internal links not answered: {broken[:10]}"


def _slots_chapter() -> str:
    """The chapter with a heading on ``__slots__`` (found in the files, so renumbering cannot break it)."""
    for path in sorted((REPO / "course").glob("[0-9][0-9]_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown" and re.search(r"^#+ .*__slots__", cell.source, re.M):
                return path.stem
    raise AssertionError("no chapter has a heading on __slots__")


def test_search_finds_the_chapter_on_slots(page, site_url: str) -> None:
    chapter = _slots_chapter()
    page.goto(urljoin(site_url, "search.html?q=slots"), wait_until="load")
    page.wait_for_selector("#search-results ul.search li", timeout=30_000)
    page.screenshot(path=str(SCREENSHOTS / "search_slots.png"))
    results = page.eval_on_selector_all("#search-results ul.search li a", "links => links.map(a => a.href)")
    assert any(f"course/{chapter}.html" in href for href in results), f"no result for {chapter}: {results[:10]}"
    assert not page.outside and not page.errors, (page.outside, page.errors)
