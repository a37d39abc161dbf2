"""Chapter 03's control: how many fields? ``S(**d)`` against ``__new__`` plus direct slot writes."""

from __future__ import annotations

import ipywidgets as widgets

from ..experiments.construction import measure_synthetic_from_dict
from ..figures.cost_bars import cost_bars
from .figure_control import FigureControl

__all__ = ["from_dict_explorer"]


def from_dict_explorer(*, target: float = 0.01) -> FigureControl:
    """A field-count slider (1 to 60, default 18); measures both constructions and draws them on every change."""
    controls = {
        "n_fields": widgets.IntSlider(value=18, min=1, max=60, step=1, description="fields", continuous_update=False),
    }

    def draw(n_fields: int) -> tuple[object, ...]:
        kwargs, direct = measure_synthetic_from_dict(n_fields, target=target)
        ratio = kwargs.median / direct.median
        note = widgets.HTML(f"<p><code>S(**d)</code> takes <b>{ratio:.1f}×</b> the time of the direct writes "
                            f"at {n_fields} field(s) (ratio of medians).</p>")
        return cost_bars([kwargs, direct], colours=["#b0bec5", "#1565c0"],
                         title=f"Building a slotted object of {n_fields} field(s) from a dict"), note

    return FigureControl(draw, controls, caption="Move the slider: which cost grows faster with the field count?")
