"""Enter manual scores on ``review --serve``'s page in Chromium, as an instructor would, and report as JSON.

Run by tests/test_term_walkthrough.py in a process of its own (Playwright's sync API will not start
in a process where the JupyterLab browser tests hold their session, as tests/site/browse_site.py):

    python tests/term_review_browser.py URL EXERCISE SCREENSHOT STUDENT=POINTS[:COMMENT]...

It opens URL, follows the exercise's link, types each student's points and comment into the fields
labelled for them, presses Save, and prints what the page said afterwards (the saved banner, the
values the fields hold after the reload, and whether a graded-notebook link opens a page).
"""

from __future__ import annotations

import json
import os
import sys

CHROMIUM = os.environ.get("EDUMATCHER_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def main(argv: list[str]) -> int:
    """Fill the form; print the JSON report."""
    from playwright.sync_api import sync_playwright

    url, exercise, screenshot, *wanted = argv
    scores = {}
    for item in wanted:
        student, _, rest = item.partition("=")
        points, _, comment = rest.partition(":")
        scores[student] = (points, comment)
    report: dict[str, object] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
                                             timeout=60_000)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.goto(url)
            page.get_by_role("link", name=exercise).click()
            page.wait_for_load_state()
            report["title"] = page.title()
            report["rendered_markdown"] = page.locator(".answer.md strong, .answer.md em, .answer.md code, "
                                                       ".prompt code").count()
            for student, (points, comment) in scores.items():
                page.get_by_label(f"points of {student}", exact=True).fill(points)
                if comment:
                    page.get_by_label(f"comment for {student}", exact=True).fill(comment)
            page.get_by_role("button", name="Save").click()
            page.wait_for_load_state()
            report["banner"] = page.get_by_role("status").inner_text() if page.get_by_role("status").count() else ""
            report["alert"] = page.get_by_role("alert").inner_text() if page.get_by_role("alert").count() else ""
            report["values"] = {student: page.get_by_label(f"points of {student}", exact=True).input_value() for student in scores}
            page.screenshot(path=screenshot, full_page=True)
            links = page.get_by_role("link", name="graded notebook, with its outputs")
            report["notebook_links"] = links.count()
            if links.count():
                links.first.click()
                page.wait_for_load_state()
                report["notebook_title"] = page.title()
                report["notebook_outputs"] = page.locator(".output").count()
            report["console_errors"] = errors
        finally:
            browser.close()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
