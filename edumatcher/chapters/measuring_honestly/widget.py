"""Chapter 03's control: walk the checklist before touching a hot path, one yes/no answer at a time."""

from __future__ import annotations

import html
import re
from typing import Any

import ipywidgets as widgets

from .checklist import ChecklistWalk, Outcome

__all__ = ["ChecklistControl", "checklist_walker"]


class ChecklistControl(widgets.VBox):
    """The current question (or the outcome), Yes / No / Back / Start over buttons, and the answers so far.

    It renders the first question as soon as it is created, so a notebook run by
    nobody still shows where the walk starts. ``press(label)`` does what clicking
    the button with that label does (tests, and scripted demonstrations).
    """

    def __init__(self, walk: ChecklistWalk | None = None) -> None:
        self.walk = walk if walk is not None else ChecklistWalk()
        self.prompt = widgets.HTML()
        self.trail = widgets.HTML()
        self.buttons = {
            "Yes": widgets.Button(description="Yes", button_style="success"),
            "No": widgets.Button(description="No", button_style="danger"),
            "Back": widgets.Button(description="Back"),
            "Start over": widgets.Button(description="Start over"),
        }
        for label, button in self.buttons.items():
            button.on_click(lambda _button, label=label: self.press(label))
        super().__init__([self.prompt, widgets.HBox(list(self.buttons.values())), self.trail])
        self.render()

    def press(self, label: str) -> None:
        """Act as if the button ``label`` was clicked, then redraw."""
        if label in ("Yes", "No"):
            if not self.walk.done:
                self.walk.answer(label == "Yes")
        elif label == "Back":
            self.walk.back()
        elif label == "Start over":
            self.walk.restart()
        else:
            raise ValueError(f"no button called {label!r}")
        self.render()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        """The widget view, plus the current question as HTML and text where no kernel runs.

        GitHub, nbviewer and nbconvert skip the widget view of a notebook saved without widget
        state; they show this HTML instead (the same fallback ``FigureControl`` gives).
        """
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        question = re.sub(r"<[^>]+>", "", self.prompt.value)
        return {"text/html": self.prompt.value + self.trail.value, **bundle,
                "text/plain": f"{html.unescape(question)} (interactive checklist: run the notebook to answer)"}

    def render(self) -> None:
        """Show the current question or outcome, enable the buttons that make sense, list the answers so far."""
        node = self.walk.current
        step = len(self.walk.path) + 1
        if isinstance(node, Outcome):
            colour = "#2e7d32" if node.proceed else "#c62828"
            self.prompt.value = (f"<p style='font-size:1.05em;color:{colour}'><b>{'Go ahead' if node.proceed else 'Stop'}:</b> "
                                 f"{html.escape(node.text)}</p>")
        else:
            self.prompt.value = f"<p style='font-size:1.05em'><b>Question {step}.</b> {html.escape(node.text)}</p>"
        self.buttons["Yes"].disabled = self.buttons["No"].disabled = self.walk.done
        self.buttons["Back"].disabled = not self.walk.path
        items = "".join(f"<li>{html.escape(q)} <b>{'yes' if a else 'no'}</b></li>" for q, a in self.walk.path)
        self.trail.value = f"<ol style='font-size:0.9em'>{items}</ol>" if items else "<p style='font-size:0.9em'><i>No answers yet.</i></p>"


def checklist_walker() -> ChecklistControl:
    """A fresh walk of ``experiments.checklist.CHECKLIST``, showing its first question."""
    return ChecklistControl()
