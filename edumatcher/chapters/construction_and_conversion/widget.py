"""Chapter 05's control: how many fields, which keys? ``S(**d)`` against ``__new__`` plus direct slot writes."""

from __future__ import annotations

import ipywidgets as widgets

from edumatcher.kit import SAMPLE_TARGET
from edumatcher.kit.figure_control import FigureControl
from edumatcher.kit.plots import cost_bars

from .construction import KEY_KINDS, measure_synthetic_from_dict

__all__ = ["from_dict_explorer"]


def from_dict_explorer(*, budget: float = 0.8, target: float = SAMPLE_TARGET) -> FigureControl:
    """A field-count slider (1 to 60, default 18) and the kind of keys (default: decoded from the wire).

    Compares both constructions and draws them on every change; each position runs
    one interleaved comparison of at most ``budget`` seconds.
    """
    controls = {
        "n_fields": widgets.IntSlider(value=18, min=1, max=60, step=1, description="fields", continuous_update=False),
        "keys": widgets.ToggleButtons(options=list(KEY_KINDS), value="wire", description="keys"),
    }

    def draw(n_fields: int, keys: str) -> tuple[object, ...]:
        comparison = measure_synthetic_from_dict(n_fields, budget=budget, target=target, keys=keys)
        note = widgets.HTML(f"<p><code>S(**d)</code> with {keys} keys takes <b>{comparison.ratio:.1f}×</b> the time "
                            f"of the direct writes at {n_fields} field(s) (ratio of medians, "
                            f"{comparison.ci_text}).</p>")
        return cost_bars([comparison], colours=["#b0bec5", "#1565c0"],
                         legend=[("#b0bec5", "S(**d): keyword matching"), ("#1565c0", "__new__ + slot writes")],
                         title=f"Building a slotted object of {n_fields} field(s) from a dict, {keys} keys"), note

    return FigureControl(draw, controls, caption="Move the slider: which cost grows faster with the field count?")
