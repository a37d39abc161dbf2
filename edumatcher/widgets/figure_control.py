"""A control panel that redraws a figure: the shape every chapter widget shares.

``FigureControl`` is a ``VBox`` of some controls and an ``Output``. Whenever a
control's value changes, it calls ``draw(**values)`` and shows what that returns
(a Figure, or several things to display in order) in the output. It draws once
when it is created, so a notebook run by nobody (nbval, a static render) still
shows the default picture.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets
from IPython.display import display

__all__ = ["FigureControl"]


class FigureControl(widgets.VBox):
    """Controls on top, the drawing below; ``redraw()`` draws now, ``last`` holds what was drawn last."""

    def __init__(self, draw: Callable[..., Any], controls: Mapping[str, widgets.ValueWidget], *,
                 caption: str = "") -> None:
        self._draw = draw
        self.controls = dict(controls)
        self.output = widgets.Output()
        self.last: tuple[Any, ...] = ()
        rows: list[widgets.Widget] = []
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

    def _on_change(self, change: Mapping[str, Any]) -> None:
        self.redraw()

    def redraw(self) -> tuple[Any, ...]:
        """Call ``draw`` with the current values and show the result; return it as a tuple."""
        result = self._draw(**self.values())
        self.last = result if isinstance(result, tuple) else (result,)
        self.output.clear_output(wait=True)
        with self.output:
            for item in self.last:
                display(item)
        return self.last
