"""A widget cell still shows its picture where no kernel runs (GitHub, nbviewer, nbconvert).

Those renderers skip the widget-view mimetype when a notebook holds no widget state, so
``FigureControl`` puts its default drawing into the same display bundle as a static image.
The end-to-end test executes a small notebook headless, keeps no widget state (as a
notebook saved without it, or run by nbclient), and renders it with nbconvert: the image
must be there and the bare ``FigureControl(...)`` repr must not.
"""

from __future__ import annotations

import ipywidgets as widgets
import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

from edumatcher.kit.figure_control import WIDGET_VIEW, FigureControl, static_fallback


class _Picture:
    """Stands for a figure outside a kernel (no inline backend formats figures there): a PNG repr."""

    def __init__(self, size: int) -> None:
        self.size = size

    def _repr_png_(self) -> bytes:
        return b"\x89PNG fake " + bytes([self.size])


def _draw(size: int) -> _Picture:
    return _Picture(size)


def test_the_bundle_carries_the_widget_view_a_static_picture_and_a_summary() -> None:
    control = FigureControl(_draw, {"size": widgets.IntSlider(value=3, min=1, max=9)},
                            caption="<b>Move</b> the slider")
    bundle = control._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == control.model_id
    assert "image/png" in bundle, sorted(bundle)
    assert bundle["text/plain"].startswith("Move the slider [size=3]"), bundle["text/plain"]


def test_the_static_picture_follows_the_last_redraw() -> None:
    slider = widgets.IntSlider(value=3, min=1, max=9)
    control = FigureControl(_draw, {"size": slider})
    before = control._repr_mimebundle_()["image/png"]
    slider.value = 8
    after = control._repr_mimebundle_()
    assert after["image/png"] != before
    assert "[size=8]" in after["text/plain"]


def test_static_fallback_takes_the_first_drawing_of_each_mimetype() -> None:
    outputs = ({"data": {"text/plain": "a", "image/png": "PNG1"}},
               {"data": {"text/html": "<table/>", "image/png": "PNG2"}})
    assert static_fallback(outputs) == {"image/png": "PNG1", "text/html": "<table/>"}
    assert static_fallback(()) == {}


@pytest.mark.slow
def test_nbconvert_renders_the_picture_of_a_notebook_without_widget_state() -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(
        "%matplotlib inline\n"
        "import ipywidgets as widgets, matplotlib.pyplot as plt\n"
        "from edumatcher.kit.figure_control import FigureControl\n"
        "def draw(size):\n"
        "    fig, ax = plt.subplots()\n"
        "    ax.plot(range(size))\n"
        "    plt.close(fig)\n"
        "    return fig\n"
        "FigureControl(draw, {'size': widgets.IntSlider(value=4, min=1, max=9)}, caption='a caption')\n")]
    NotebookClient(nb, timeout=120, kernel_name="python3", store_widget_state=False).execute()
    nb.metadata.pop("widgets", None)
    html, _ = HTMLExporter().from_notebook_node(nb)
    assert "data:image/png;base64," in html
    assert "FigureControl(" not in html


def test_the_checklist_shows_its_first_question_without_a_kernel() -> None:
    from edumatcher.chapters.measuring_honestly.widget import checklist_walker

    walker = checklist_walker()
    bundle = walker._repr_mimebundle_()
    assert WIDGET_VIEW in bundle
    assert "Question 1." in bundle["text/html"]
    assert bundle["text/plain"].startswith("Question 1.") and "<" not in bundle["text/plain"]
