"""Widgets of chapters 00-07: each draws a default on creation and redraws when a control changes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from edumatcher.chapters.construction_and_conversion.widget import from_dict_explorer  # noqa: E402
from edumatcher.chapters.data_representation.widget import slots_explorer  # noqa: E402
from edumatcher.chapters.heaps_and_indexes.widget import compaction_explorer  # noqa: E402
from edumatcher.chapters.serialisation.widget import codec_explorer  # noqa: E402
from edumatcher.chapters.start_here import depth_explorer  # noqa: E402
from edumatcher.chapters.where_the_time_goes.widget import latency_explorer  # noqa: E402
from edumatcher.kit.figure_control import FigureControl  # noqa: E402


def test_figure_control_draws_on_creation_and_on_every_change() -> None:
    calls: list[int] = []

    def draw(n: int) -> Figure:
        calls.append(n)
        return Figure()

    slider = widgets.IntSlider(value=3, min=1, max=10)
    control = FigureControl(draw, {"n": slider}, caption="c")
    assert calls == [3] and isinstance(control.last[0], Figure)
    slider.value = 7
    assert calls == [3, 7]
    assert control.values() == {"n": 7}
    assert control.output in control.children


def _default_and_one_change(control: FigureControl, name: str, value: object) -> None:
    assert isinstance(control, widgets.VBox)
    assert isinstance(control.last[0], Figure), "a default picture is drawn on creation"
    first = control.last
    control.controls[name].value = value
    assert control.last is not first and isinstance(control.last[0], Figure)


def test_depth_explorer() -> None:
    _default_and_one_change(depth_explorer(), "operations", 50)


def test_latency_explorer() -> None:
    control = latency_explorer()
    assert "p50" in control.last[1].value
    _default_and_one_change(control, "depth", 100)


def test_slots_explorer() -> None:
    control = slots_explorer(instances=500, budget=0.05, target=0.001)
    assert "slots save" in control.last[1].value
    _default_and_one_change(control, "n_fields", 3)


def test_from_dict_explorer() -> None:
    control = from_dict_explorer(budget=0.05, target=0.001)
    assert "95 % CI" in control.last[1].value
    _default_and_one_change(control, "n_fields", 2)


def test_codec_explorer() -> None:
    _default_and_one_change(codec_explorer(budget=0.05, target=0.001), "keys", 3)


def test_compaction_explorer() -> None:
    control = compaction_explorer(n=400)
    assert "rebuild" in control.last[1].value
    _default_and_one_change(control, "factor", 8)
    assert "compact_factor = 8" in control.last[0].axes[0].get_title()
