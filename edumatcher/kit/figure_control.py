"""A control panel that redraws a figure: the shape every chapter widget shares.

``FigureControl`` is a ``VBox`` of some controls and an ``Output``. Whenever a
control's value changes, it calls ``draw(**values)`` and shows what that returns
(a Figure, or several things to display in order) in the output. It draws once
when it is created, so a notebook run by nobody (nbval, a static render) still
shows the default picture.

The drawing is put into the output by setting ``Output.outputs`` (one state
update that replaces the old picture), never by capturing ``display()`` calls
with ``with output:``. Capturing is what made headless runs stall: nbclient
imitates a front end's Output widget by answering every captured output with a
``comm_msg`` it sends on the shell socket while it is waiting on that same
socket for the cell's ``execute_reply``. jupyter_client sends through a raw
(non-asyncio) shadow of the socket, and that send can consume the socket's
edge-triggered wake-up, so a reply that arrives just then sits unread until the
cell timeout expires, and the run then goes on as if nothing had happened
(jupyter/nbclient#312; about 1 run in 20 for chapter 07's widget on a busy
2-CPU machine). With no capture there is nothing to imitate and nothing is sent.

Where no kernel runs (GitHub, nbviewer, ``jupyter nbconvert``, an untrusted
notebook reopened in JupyterLab) a widget view cannot be drawn: those renderers
skip the widget mimetype when the notebook holds no widget state. So the
control's display bundle also carries its default drawing as a static image
(or HTML) and a one-line text summary, and a reader there sees the picture the
cell drew instead of a bare ``FigureControl(...)``. A live front end still
prefers the widget view, so the picture is never shown twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets
from IPython import get_ipython
from IPython.core.formatters import DisplayFormatter

__all__ = ["FigureControl", "as_display_data", "static_fallback"]

# The mimetypes a static renderer can show in place of the widget, most useful first.
STATIC_MIMETYPES = ("image/png", "image/svg+xml", "text/html")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def as_display_data(item: Any) -> dict[str, Any]:
    """``item`` as a ``display_data`` output, formatted as ``display(item)`` would format it.

    Inside IPython the shell's own formatter is used (so ``%matplotlib inline`` figures
    become PNGs); elsewhere a plain ``DisplayFormatter`` (text and ``_repr_*_`` methods).
    """
    shell = get_ipython()
    formatter = shell.display_formatter if shell is not None else DisplayFormatter()
    data, metadata = formatter.format(item)
    return {"output_type": "display_data", "data": data, "metadata": metadata}


def _plain_text(html: str) -> str:
    """``html`` without its tags, whitespace collapsed: a caption fit for a text/plain line."""
    return " ".join(re.sub(r"<[^>]+>", "", html).split())


def static_fallback(outputs: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    """The richest static data among ``outputs`` (display_data dicts), one entry per mimetype.

    A display bundle holds one value per mimetype, so of several drawings the first that
    offers a mimetype wins it: the chapter's main figure comes first in every ``draw``.
    """
    bundle: dict[str, Any] = {}
    for output in outputs:
        for mimetype in STATIC_MIMETYPES:
            if mimetype in output.get("data", {}) and mimetype not in bundle:
                bundle[mimetype] = output["data"][mimetype]
    return bundle


class FigureControl(widgets.VBox):
    """Controls on top, the drawing below; ``redraw()`` draws now, ``last`` holds what was drawn last."""

    def __init__(self, draw: Callable[..., Any], controls: Mapping[str, widgets.ValueWidget], *,
                 caption: str = "") -> None:
        self._draw = draw
        self.controls = dict(controls)
        self.output = widgets.Output()
        self.last: tuple[Any, ...] = ()
        rows: list[widgets.Widget] = []
        self._caption_text = _plain_text(caption)
        if caption:
            rows.append(widgets.HTML(f"<p style='margin:0'>{caption}</p>"))
        rows.append(widgets.HBox(list(self.controls.values())))
        rows.append(self.output)
        super().__init__(rows)
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.redraw()

    def values(self) -> dict[str, Any]:
        """The current value of every control, by the name ``draw`` receives it under."""
        return {name: control.value for name, control in self.controls.items()}

    def summary(self) -> str:
        """One line for text-only renderers: the caption and the values the drawing was made with."""
        settings = ", ".join(f"{name}={value!r}" for name, value in self.values().items())
        caption = getattr(self, "_caption_text", "") or type(self).__name__
        return f"{caption} [{settings}] (interactive control: run the notebook to change it)"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        """The widget view, with the current drawing as a static fallback (see the module docstring)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        return {**static_fallback(tuple(self.output.outputs)), **bundle, "text/plain": self.summary()}

    def _on_change(self, change: Mapping[str, Any]) -> None:
        self.redraw()

    def redraw(self) -> tuple[Any, ...]:
        """Call ``draw`` with the current values and show the result; return it as a tuple."""
        result = self._draw(**self.values())
        self.last = result if isinstance(result, tuple) else (result,)
        # One assignment replaces the picture (no flicker, no clear_output) and captures nothing:
        # see the module docstring for why capturing with ``with self.output:`` is avoided.
        self.output.outputs = tuple(as_display_data(item) for item in self.last if item is not None)
        return self.last
