"""Open the built website's pages in Chromium, offline, and report what a reader would meet, as JSON.

Run by tests/site/test_site_in_browser.py in a process of its own (Playwright's sync API refuses
to start a second time in a process whose other tests already hold a session):

    python tests/site/browse_site.py SITE_URL SCREENSHOTS_DIR SLOTS_PAGE PAGE...

For each PAGE (relative to SITE_URL) it prints, in one JSON object keyed by page: requests that
left the site (refused), console errors, images not loaded (``naturalWidth == 0``), widget
pictures left blank, widget views left for a kernel, and internal links not answered (a missing
page, or an ``#anchor`` not on it). Under ``"search"``: the result links of ``search.html?q=slots``.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin, urlparse

CHROMIUM = os.environ.get("EDUMATCHER_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]

SCROLL_AND_WAIT = """async () => {
    for (let y = 0; y < document.body.scrollHeight; y += 600) { window.scrollTo(0, y); await new Promise(r => setTimeout(r, 20)); }
    window.scrollTo(0, 0);
    await Promise.all(Array.from(document.images).map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })));
}"""
UNLOADED = "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
# A widget's picture: an image that loaded, or the HTML it drew (a table, a question), beside its caption.
BLANK_WIDGETS = """Array.from(document.querySelectorAll('figure.widget-default')).filter(f =>
    !Array.from(f.querySelectorAll('img')).some(i => i.naturalWidth > 0)
    && !Array.from(f.querySelectorAll('.output')).some(o => o.textContent.trim() || o.querySelector('svg'))
).length"""
WIDGET_VIEWS = "document.querySelectorAll('script[type*=\"jupyter.widget\"], .jupyter-widgets').length"


@functools.cache
def fetch(url: str) -> tuple[int, str]:
    """Status and text of an internal URL (cached: many pages link the same pages)."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode("utf-8", errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, ""


def unanswered_links(hrefs: list[str], site_url: str) -> list[str]:
    broken = []
    for href in sorted(set(hrefs)):
        if not href.startswith(site_url):
            continue
        url, fragment = urldefrag(href)
        status, text = fetch(url)
        if status != 200:
            broken.append(f"{href} ({status})")
        elif fragment and urlparse(url).path.endswith(".html") and not re.search(
                rf"""\bid=["']{re.escape(fragment)}["']""", text):
            broken.append(f"{href} (no #{fragment} on that page)")
    return broken


def browse(site_url: str, screenshots: Path, pages: list[str]) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    report: dict[str, Any] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for path in [*pages, "search.html?q=slots"]:
            context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
            outside: list[str] = []
            errors: list[str] = []

            def route(route: Any, outside: list[str] = outside) -> None:
                if route.request.url.startswith((site_url, "data:")):
                    route.continue_()
                else:
                    outside.append(route.request.url)
                    route.abort()

            context.route("**/*", route)
            page = context.new_page()
            page.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            page.goto(urljoin(site_url, path), wait_until="load")
            if path.startswith("search.html"):
                page.wait_for_selector("#search-results ul.search li", timeout=30_000)
                links = page.eval_on_selector_all("#search-results ul.search li a", "a => a.map(x => x.href)")
                report["search"] = {"results": links, "outside": outside, "errors": errors}
                page.screenshot(path=str(screenshots / "search_slots.png"))
            else:
                page.evaluate(SCROLL_AND_WAIT)
                page.screenshot(path=str(screenshots / (path.replace("/", "_").removesuffix(".html") + ".png")))
                report[path] = {
                    "outside": outside,
                    "errors": errors,
                    "unloaded": page.evaluate(UNLOADED),
                    "blank_widgets": page.evaluate(BLANK_WIDGETS),
                    "widget_views": page.evaluate(WIDGET_VIEWS),
                    "broken_links": unanswered_links(page.eval_on_selector_all("a[href]", "a => a.map(x => x.href)"),
                                                     site_url),
                }
            context.close()
        browser.close()
    return report


if __name__ == "__main__":
    url, folder, *page_paths = sys.argv[1:]
    print(json.dumps(browse(url, Path(folder), page_paths)))
