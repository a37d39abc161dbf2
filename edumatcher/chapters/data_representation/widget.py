"""Chapter 04's control: how many fields? Memory, construction and reads, plain against slotted."""

from __future__ import annotations

import ipywidgets as widgets

from edumatcher.kit import SAMPLE_TARGET
from edumatcher.kit.figure_control import FigureControl

from .figures import slots_panels
from .slots import SEED_FIELDS, measure_slots

__all__ = ["slots_explorer"]


def slots_explorer(*, instances: int = 5_000, budget: float = 0.6, target: float = SAMPLE_TARGET) -> FigureControl:
    """A field-count slider (1 to 60, default 18, the Python engine notes' class); measures and draws on every change.

    Each position runs two interleaved comparisons of at most ``budget`` seconds each.
    """
    controls = {
        "n_fields": widgets.IntSlider(value=SEED_FIELDS, min=1, max=60, step=1, description="fields",
                                      continuous_update=False),
    }

    def draw(n_fields: int) -> tuple[object, ...]:
        figures = measure_slots(n_fields, instances=instances, budget=budget, target=target,
                               seed_instances=instances)
        construction, read = figures.construction, figures.read
        note = widgets.HTML(f"<p>slots save <b>{figures.memory_saving * 100:.0f} %</b> of each instance's "
                            f"memory at {n_fields} field(s); time ratio plain / slotted: construction "
                            f"<b>{construction.ratio:.2f}</b> ({construction.ci_text}), read "
                            f"<b>{read.ratio:.2f}</b> ({read.ci_text}).</p>")
        return slots_panels(figures), note

    return FigureControl(draw, controls, caption="Move the slider: does the memory saving grow with the field count?")
