"""Sphinx configuration of the course's website (`make site`; see site/README.md).

The chapters are the notebooks in course/ (``site/course`` is a link to it), executed while the
site builds, through jupyter-cache: a chapter whose code cells have not changed since the last
build is not run again. Everything the pages load is served from the build itself (no CDN).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

SITE = Path(__file__).resolve().parent
REPO = SITE.parent
sys.path.insert(0, str(SITE / "_ext"))
sys.path.insert(0, str(REPO))

project = "EduMatcher"
author = "the EduMatcher maintainers"
copyright = "the EduMatcher maintainers (MIT licence)"

# Where Binder and the repository button point: GitHub Actions names the repository it builds;
# a local build uses the name the README's Binder badge uses.
REPOSITORY = os.environ.get("EDUMATCHER_REPOSITORY") or os.environ.get("GITHUB_REPOSITORY") or "edumatcher/edumatcher"
BRANCH = os.environ.get("EDUMATCHER_BRANCH", "main")

# The kernels that run the chapters load figure_text (a figure's text/plain names its titles and
# axes: the site's alt text), through an IPython profile of this build's own.
IPYTHONDIR = REPO / "_build" / "ipython"
(IPYTHONDIR / "profile_default").mkdir(parents=True, exist_ok=True)
(IPYTHONDIR / "profile_default" / "ipython_kernel_config.py").write_text(
    f"import sys\nsys.path.insert(0, {str(SITE / '_ext')!r})\n"
    "c.InteractiveShellApp.extensions = ['figure_text']\n", encoding="utf-8")
os.environ["IPYTHONDIR"] = str(IPYTHONDIR)
# The chapters' "python3" kernel is the interpreter that runs this build (its venv's kernelspec
# first, before one a user may have installed elsewhere): the site shows what this Python printed.
os.environ["JUPYTER_PATH"] = os.pathsep.join(
    p for p in (str(Path(sys.prefix) / "share" / "jupyter"), os.environ.get("JUPYTER_PATH")) if p)

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "course_pages",
    "notebook_outputs",
]

root_doc = "index"
exclude_patterns = ["_build", "README.md", "**.ipynb_checkpoints", "_ext"]
# SITE_CHAPTERS=02_* builds the pages of the matching chapters only (a quick look while writing one).
if os.environ.get("SITE_CHAPTERS"):
    keep = {p.name for p in (REPO / "course").glob(os.environ["SITE_CHAPTERS"] + ".ipynb")}
    exclude_patterns += [f"course/{p.name}" for p in (REPO / "course").glob("*.ipynb") if p.name not in keep]
suppress_warnings = ["myst.header"]

# -- execution: every chapter runs when the site builds, through a cache ----------------------
nb_execution_mode = "cache"
nb_execution_cache_path = str(REPO / "_build" / ".jupyter_cache")
nb_execution_timeout = 900          # seconds per cell; a chapter runs in about a minute
nb_execution_raise_on_error = False  # notebook_outputs stops the build instead, naming the chapter and the cell
nb_execution_show_tb = True
nb_merge_streams = True
# The widgets' pictures are chosen by notebook_outputs; no widget JavaScript is loaded from anywhere.
nb_ipywidgets_js: dict[str, dict[str, str]] = {}
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
    ("html", "application/javascript", None),
]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

edumatcher_repository = REPOSITORY
edumatcher_branch = BRANCH
# A change to the site's own extensions re-reads every page (the chapters come from the cache).
edumatcher_site_code = hashlib.sha256(b"".join(p.read_bytes() for p in sorted((SITE / "_ext").glob("*.py")))).hexdigest()

# -- API reference ------------------------------------------------------------------------------
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"

# -- HTML -----------------------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = "EduMatcher: performance engineering in Python"
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_last_updated_fmt = None
# The figures are drawn on white: the site opens light (the reader can switch to dark).
html_context = {"default_mode": "light"}
html_theme_options = {
    "repository_url": f"https://github.com/{REPOSITORY}",
    "repository_branch": BRANCH,
    "path_to_docs": "",
    "use_repository_button": True,
    "use_download_button": True,
    "use_fullscreen_button": False,
    "launch_buttons": {"binderhub_url": "https://mybinder.org", "notebook_interface": "jupyterlab"},
    "show_toc_level": 2,
    # One search box, in the sidebar (the theme also puts one in a header bar of its own).
    "navbar_persistent": [],
    "navigation_with_keys": False,
}
