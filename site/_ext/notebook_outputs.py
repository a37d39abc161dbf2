"""How the chapters' executed outputs become a page that needs no kernel and no network.

- **Widgets.** Every "play with it" control (``FigureControl`` and kin) puts in its display
  bundle, beside the widget view, the picture it drew with its defaults (``image/png``, or
  ``text/html`` for a table) and a one-line ``text/plain`` summary. A page has no kernel, so the
  widget view could only be drawn from the widget state the notebook saved, with ipywidgets'
  JavaScript from a CDN: that is what left every widget blank. Here the widget view and the saved
  state are dropped and the picture is shown, in a figure whose caption says that the notebook
  lets you change it. A widget output with no picture fails the build.
- **Alt text.** Every image from a notebook gets alt text: a widget's from its caption, a
  figure's from its titles and axis labels, which ``figure_text`` (loaded into the kernels
  this build starts) puts in the figure's ``text/plain``.
- **Failures.** A chapter whose execution fails stops the build with its file, the number
  of the failing cell, and the error (myst-nb alone names the file only).
- **Data outputs.** The kit's verdict records (``application/vnd.edumatcher.*`` in an output's
  bundle) are data for ``check-verdicts``, beside the HTML and text a reader sees: they are left
  out without the warning myst-nb gives an unknown mimetype (which stays on for any other).
- **Stale outputs.** jupyter-cache knows a chapter by its code cells; what the chapter prints also
  depends on the ``edumatcher`` package it imports. When the package's source changes, the cache
  is emptied and every page read again, so no page shows what older code printed (and the suite,
  which runs the chapters through this build, tests the code as it is).
"""

from __future__ import annotations

import hashlib
import logging as std_logging
import re
import shutil
from pathlib import Path
from typing import Any

import nbformat
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# What a page can show in a widget's place, most useful first (the widget's own order).
STATIC_MIMETYPES = ("image/png", "image/svg+xml", "text/html")
IMAGE_MIMETYPES = ("image/png", "image/svg+xml", "image/jpeg", "image/gif")
# FigureControl.summary(): "<caption> [<name>=<value>, ...] (interactive control: ...)"
SUMMARY = re.compile(r"^(?P<caption>.*?)\s*\[(?P<settings>[^\]]*)\]\s*\(interactive control[^)]*\)\s*$", re.S)
CHANGE_IT = ("In the notebook this is an interactive control: launch the chapter on Binder, or download it "
             "and run it, to change {what}.")


def _children_by_mimetype(bundle: nodes.Element) -> dict[str, nodes.Element]:
    return {child["mime_type"]: child for child in bundle.children if isinstance(child, nodes.container)}


def _plain_text(children: dict[str, nodes.Element]) -> str:
    text = children.get("text/plain")
    return " ".join(text.astext().split()) if text is not None else ""


def widget_caption(summary: str) -> tuple[str, str]:
    """``(alt text, caption)`` for a widget whose ``text/plain`` is ``summary``.

    >>> widget_caption("Move the slider. [size=3] (interactive control: run the notebook to change it)")[1]
    'Move the slider. Drawn with its defaults (size=3). In the notebook this is an interactive control: launch the chapter on Binder, or download it and run it, to change them.'
    """
    match = SUMMARY.match(summary)
    if not match:
        return summary or "An interactive control's default view", CHANGE_IT.format(what="it")
    caption = match.group("caption").strip()
    settings = match.group("settings").strip()
    drawn = f"Drawn with its defaults ({settings})." if settings else ""
    sentence = caption if not caption or caption.endswith((".", "!", "?", ":")) else caption + "."
    text = " ".join(part for part in (sentence, drawn, CHANGE_IT.format(what="them" if settings else "it")) if part)
    return caption or "An interactive control's default view", text


def _set_alt(images: list[nodes.image], alt: str) -> None:
    for image in images:
        if alt and not image.get("alt"):
            image["alt"] = alt


class NotebookPictures(SphinxPostTransform):
    """Replace each widget's bundle by its picture with a caption; give output images alt text.

    Runs just before myst-nb's ``SelectMimeType`` (priority 4), while the bundles still hold
    every mimetype the kernel sent.
    """

    default_priority = 3

    def run(self, **kwargs: Any) -> None:
        bundles = [node for node in self.document.findall(nodes.container)
                   if node.get("nb_element") == "mime_bundle"]
        for bundle in bundles:
            children = _children_by_mimetype(bundle)
            summary = _plain_text(children)
            if WIDGET_VIEW in children:
                self._widget(bundle, children, summary)
            elif not summary.startswith("<"):  # "<Figure size ...>": figure_text did not describe it
                for mimetype in IMAGE_MIMETYPES:
                    if mimetype in children:
                        _set_alt(list(children[mimetype].findall(nodes.image)), summary)

    def _widget(self, bundle: nodes.Element, children: dict[str, nodes.Element], summary: str) -> None:
        picture = next((children[m] for m in STATIC_MIMETYPES if m in children and children[m].children), None)
        if picture is None:
            LOGGER.warning("a widget's output has no picture (no %s in its display bundle): %s",
                           " or ".join(STATIC_MIMETYPES), summary or "(no text either)", location=bundle,
                           type="edumatcher", subtype="widget")
            return
        alt, caption = widget_caption(summary)
        content = [child.deepcopy() for child in picture.children]
        for child in content:
            _set_alt(list(child.findall(nodes.image)) + ([child] if isinstance(child, nodes.image) else []), alt)
        figure = nodes.figure("", *content, classes=["widget-default", "align-default"])
        figure += nodes.caption("", caption)
        self.document.set_id(figure)
        bundle.replace_self(figure)


def drop_widget_scripts(app: Sphinx, doctree: nodes.document) -> None:
    """Forget the widget state and the ipywidgets scripts myst-nb registered for this page."""
    data = getattr(app.env, "nb_metadata", {}).get(app.env.docname, {})
    for key in [k for k in data.get("js_files", {}) if k.startswith("ipywidgets")]:
        del data["js_files"][key]


def _failing_cell(path: Path, traceback: str) -> str:
    """Which cell of ``path`` failed, found from the cell source nbclient quotes in its message."""
    quoted = re.search(r"-{10,}\n(.*?)\n-{10,}", traceback, re.S)
    if not quoted:
        return "cell unknown"
    source = quoted.group(1).strip()
    cells = nbformat.read(path, as_version=4).cells
    for index, cell in enumerate(cells):
        if cell.cell_type == "code" and cell.source.strip() and (cell.source.strip() == source or source in cell.source):
            code_number = sum(c.cell_type == "code" for c in cells[: index + 1])
            first = cell.source.strip().splitlines()[0]
            return f"cell {index + 1} (code cell {code_number}, which starts {first!r})"
    return "cell unknown"


def fail_on_execution_error(app: Sphinx, doctree: nodes.document) -> None:
    """Report a page whose notebook failed to run as an error naming the chapter and the cell.

    ``make site`` builds with ``-W --keep-going``: the build goes on to report every chapter that
    fails, then exits non-zero. Nothing of a failed chapter is cached, so the next build runs it again.
    """
    docname = app.env.docname
    data = getattr(app.env, "nb_metadata", {}).get(docname, {}).get("exec_data") or {}
    if data.get("succeeded", True):
        return
    path = Path(app.env.doc2path(docname))
    traceback = data.get("traceback") or ""
    last = [line for line in re.sub(r"\x1b\[[0-9;]*m", "", traceback).splitlines() if line.strip()]
    LOGGER.error("%s failed to execute at %s: %s: %s (the traceback is above, and in %s)",
                 path.name, _failing_cell(path, traceback), data.get("error"), last[-1] if last else "no message",
                 Path(app.outdir) / "reports", location=docname, type="edumatcher", subtype="execution")


def package_digest(package: Path) -> str:
    """A digest of every Python source file of ``package`` (names and contents)."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def forget_stale_executions(app: Sphinx, config: Any) -> None:
    """Empty the execution cache when the package changed since it was filled (see the module docstring)."""
    cache = Path(config.nb_execution_cache_path)
    stamp = cache.with_name(cache.name + ".package-sha256")
    digest = package_digest(Path(config.edumatcher_repo) / "edumatcher")
    config.edumatcher_package_code = digest  # a changed value makes Sphinx read every page again
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == digest:
        return
    if cache.exists():
        LOGGER.info("the edumatcher package changed: every chapter runs again")
        shutil.rmtree(cache)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(digest, encoding="utf-8")


class _CourseDataOutputs(std_logging.Filter):
    """Drops myst-nb's "unknown mimetype" warning for the course's own data mimetypes only."""

    PREFIX = "skipping unknown output mime type: application/vnd.edumatcher."

    def filter(self, record: std_logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.PREFIX)


def setup(app: Sphinx) -> dict[str, Any]:
    # First among each handler's filters: before Sphinx counts the record as a warning.
    for handler in std_logging.getLogger("sphinx").handlers:
        handler.filters.insert(0, _CourseDataOutputs())
    app.add_config_value("edumatcher_package_code", "", "env")
    app.connect("config-inited", forget_stale_executions)
    app.add_post_transform(NotebookPictures)
    app.connect("doctree-read", drop_widget_scripts)
    app.connect("doctree-read", fail_on_execution_error)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}

