"""The site build's machinery on a small book of its own: cache, failure report, widget pictures, alt text.

Each test builds a tiny site in a temporary folder with the real configuration (site/conf.py,
its extensions and theme) and notebooks made here, so the claims hold whatever the chapters say:
a rebuild reruns only the notebook whose code changed, and every notebook when the package
changed; a notebook that fails stops the build
with its file, its cell and the error; a widget shows its default picture with a caption and
no widget JavaScript; a figure's alt text names its titles and axes.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow



def _figure_control_module() -> str:
    """Where ``FigureControl`` is defined (found in the source, so a move of the module cannot break this)."""
    for path in sorted((REPO / "edumatcher").rglob("*.py")):
        if re.search(r"^class FigureControl\b", path.read_text(encoding="utf-8"), re.M):
            return ".".join(path.relative_to(REPO).with_suffix("").parts)
    raise AssertionError("no module of edumatcher defines FigureControl")


WIDGET_CELL = (
    "%matplotlib inline\n"
    "import ipywidgets as widgets, matplotlib.pyplot as plt\n"
    f"from {_figure_control_module()} import FigureControl\n"
    "def draw(size):\n"
    "    fig, ax = plt.subplots()\n"
    "    ax.plot(range(size))\n"
    "    ax.set(title='A line of size points', xlabel='index', ylabel='value')\n"
    "    plt.close(fig)\n"
    "    return fig\n"
    "FigureControl(draw, {'size': widgets.IntSlider(value=4, min=1, max=9)}, caption='Move the slider')\n"
)
FIGURE_CELL = (
    "fig, ax = plt.subplots()\n"
    "ax.bar(['a', 'b'], [1, 2])\n"
    "ax.set(title='Two bars', xlabel='name', ylabel='height (ns)')\n"
    "plt.close(fig)\n"
    "fig\n"
)


def _notebook(path: Path, title: str, *cells: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}"), *(nbformat.v4.new_code_cell(c) for c in cells)]
    nbformat.write(nb, path)


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """A site folder: the real configuration (cache moved into the folder), an index, two notebooks."""
    source = tmp_path / "src"
    source.mkdir()
    conf = (f"import runpy\n"
            f"settings = runpy.run_path({str(REPO / 'site' / 'conf.py')!r})\n"
            "globals().update((k, v) for k, v in settings.items() if not k.startswith('__'))\n"
            f"nb_execution_cache_path = {str(tmp_path / 'cache')!r}\n"
            "exclude_patterns = ['_build']\nhtml_static_path = []\nhtml_css_files = []\n")
    (source / "conf.py").write_text(conf, encoding="utf-8")
    (source / "index.md").write_text("# Book\n\n```{toctree}\n:glob:\n\n*\n```\n", encoding="utf-8")
    _notebook(source / "a_widget.ipynb", "A widget", WIDGET_CELL, FIGURE_CELL)
    _notebook(source / "b_plain.ipynb", "Plain", "print(6 * 7)")
    return source


def build(source: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", str(source),
                           str(source.parent / "html")], capture_output=True, text=True, timeout=600)


def executed(log: str) -> list[str]:
    return sorted(re.findall(r"([\w.]+\.ipynb): Executing notebook", log))


def test_a_rebuild_runs_only_the_notebook_whose_code_changed(book: Path) -> None:
    first = build(book)
    assert first.returncode == 0, first.stdout + first.stderr
    assert executed(first.stdout + first.stderr) == ["a_widget.ipynb", "b_plain.ipynb"]
    _notebook(book / "b_plain.ipynb", "Plain", "print(6 * 9)")
    second = build(book)
    assert second.returncode == 0, second.stdout + second.stderr
    assert executed(second.stdout + second.stderr) == ["b_plain.ipynb"]
    assert "54" in (book.parent / "html" / "b_plain.html").read_text(encoding="utf-8")


def test_a_change_to_the_package_runs_every_notebook_again(book: Path) -> None:
    """What a chapter prints depends on the package it imports, not only on its own code."""
    package = book.parent / "repo" / "edumatcher"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("ANSWER = 42\n", encoding="utf-8")
    conf = book / "conf.py"
    conf.write_text(conf.read_text(encoding="utf-8") + f"edumatcher_repo = {str(package.parent)!r}\n", encoding="utf-8")
    assert build(book).returncode == 0
    assert executed(build(book).stdout) == [], "an unchanged rebuild ran a notebook"
    (package / "__init__.py").write_text("ANSWER = 54\n", encoding="utf-8")
    again = build(book)
    assert again.returncode == 0, again.stdout + again.stderr
    assert executed(again.stdout + again.stderr) == ["a_widget.ipynb", "b_plain.ipynb"]


def test_a_notebook_that_fails_stops_the_build_naming_its_cell(book: Path) -> None:
    _notebook(book / "c_broken.ipynb", "Broken", "x = 1", "print('fine')", "x / 0")
    done = build(book)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert re.search(r"c_broken\.ipynb failed to execute at cell 4 \(code cell 3, which starts 'x / 0'\): "
                     r"CellExecutionError: .*ZeroDivisionError", output), output[-3000:]


def test_a_widget_shows_its_default_picture_and_a_figure_has_alt_text(book: Path) -> None:
    done = build(book)
    assert done.returncode == 0, done.stdout + done.stderr
    html = (book.parent / "html" / "a_widget.html").read_text(encoding="utf-8")
    figure = re.search(r'<figure class="[^"]*widget-default.*?</figure>', html, re.S)
    assert figure, "the widget's output is not shown as a figure"
    assert re.search(r'<img alt="Move the slider" src="_images/[0-9a-f]+\.png"', figure.group(0)), figure.group(0)
    assert "Drawn with its defaults (size=4)" in figure.group(0)
    assert "interactive control" in figure.group(0)
    assert "widget-view+json" not in html and "widget-state+json" not in html and "require.min.js" not in html
    assert 'alt="Figure: Two bars (x: name; y: height (ns))."' in html
    for image in re.findall(r'src="(_images/[^"]+)"', html):
        assert (book.parent / "html" / image).stat().st_size > 1000
