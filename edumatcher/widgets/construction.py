"""Chapter 03's control: how many fields? ``S(**d)`` against ``__new__`` plus direct slot writes."""

from __future__ import annotations

import ipywidgets as widgets

from ..comparison import SAMPLE_TARGET
from ..experiments.construction import measure_synthetic_from_dict
from ..figures.cost_bars import cost_bars
from .figure_control import FigureControl

__all__ = ["from_dict_explorer"]


def from_dict_explorer(*, budget: float = 0.8, target: float = SAMPLE_TARGET) -> FigureControl:
    """A field-count slider (1 to 60, default 18); compares both constructions and draws them on every change.

    Each position runs one interleaved comparison of at most ``budget`` seconds.
    """
    controls = {
        "n_fields": widgets.IntSlider(value=18, min=1, max=60, step=1, description="fields", continuous_update=False),
    }

    def draw(n_fields: int) -> tuple[object, ...]:
        comparison = measure_synthetic_from_dict(n_fields, budget=budget, target=target)
        note = widgets.HTML(f"<p><code>S(**d)</code> takes <b>{comparison.ratio:.1f}×</b> the time of the direct "
                            f"writes at {n_fields} field(s) (ratio of medians, {comparison.ci_text}).</p>")
        return cost_bars([comparison], colours=["#b0bec5", "#1565c0"],
                         title=f"Building a slotted object of {n_fields} field(s) from a dict"), note

    return FigureControl(draw, controls, caption="Move the slider: which cost grows faster with the field count?")
