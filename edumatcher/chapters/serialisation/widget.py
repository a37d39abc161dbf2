"""Chapter 06's control: how big is the message? json against orjson as the payload grows."""

from __future__ import annotations

import ipywidgets as widgets

from edumatcher.kit import SAMPLE_TARGET
from edumatcher.kit.figure_control import FigureControl
from edumatcher.kit.plots import cost_bars

from .serialisation import measure_codecs, payload_with_keys

__all__ = ["codec_explorer"]


def codec_explorer(*, budget: float = 0.5, target: float = SAMPLE_TARGET) -> FigureControl:
    """A key-count slider (1 to 200, default 12); compares both codecs both ways, interleaved, and draws them.

    Each redraw runs two ``compare_interleaved`` calls of ``budget`` seconds (samples of ``target`` seconds).
    """
    controls = {
        "keys": widgets.IntSlider(value=12, min=1, max=200, step=1, description="keys", continuous_update=False),
    }

    def draw(keys: int) -> tuple[object, ...]:
        figures = measure_codecs(payload_with_keys(keys), budget=budget, target=target)
        note = widgets.HTML(
            f"<p>at {keys} key(s), json/orjson (ratio of medians): <b>{figures.dumps_ratio:.1f}×</b> to encode "
            f"({figures.encode.ci_text}), <b>{figures.loads_ratio:.1f}×</b> to decode ({figures.decode.ci_text}).</p>")
        return cost_bars(figures.all(), colours=["#b0bec5", "#1565c0"] * 2,
                         title=f"Encoding and decoding a payload of {keys} key(s)"), note

    return FigureControl(draw, controls, caption="Move the slider: does the gap between the codecs close or widen?")
