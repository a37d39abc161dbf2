"""Widgets of chapters 08-12: each shows a sensible default when created and redraws when a control changes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import gc  # noqa: E402

import ipywidgets as widgets  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from edumatcher.chapters.beyond_heaps.widget import egress_explorer  # noqa: E402
from edumatcher.chapters.garbage_collection import widget as gc_sizes  # noqa: E402
from edumatcher.chapters.garbage_collection.gc_pauses import PauseRow, collector_state  # noqa: E402
from edumatcher.chapters.measuring_honestly.widget import checklist_walker  # noqa: E402
from edumatcher.chapters.off_the_message_path.widget import sample_rate_explorer  # noqa: E402
from edumatcher.chapters.the_java_question.held_values import HOLDINGS  # noqa: E402
from edumatcher.chapters.the_java_question.widget import tracking_explorer  # noqa: E402
from edumatcher.kit import Measurement  # noqa: E402


def test_sample_rate_explorer_defaults_to_one_in_sixteen_and_redraws() -> None:
    control = sample_rate_explorer(list(range(1, 5_001)))
    assert isinstance(control.last[0], Figure) and "1 in 16" in control.last[1].value
    control.controls["every"].value = 256
    assert "1 in 256" in control.last[1].value
    with pytest.raises(ValueError):
        sample_rate_explorer(list(range(100)))


def test_gc_size_explorer_reuses_given_rows_then_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, ...]] = []

    def fake(sizes: tuple[int, ...]) -> list[PauseRow]:
        calls.append(tuple(sizes))
        return [PauseRow(n, 1_000 + 3 * n, Measurement.from_samples([0.001 + n * 1e-8] * 5)) for n in sizes]

    monkeypatch.setattr(gc_sizes, "collection_pauses", fake)
    initial = fake((0, 20_000, 40_000))
    calls.clear()
    control = gc_sizes.gc_size_explorer(initial=initial)
    assert calls == [] and isinstance(control.last[0], Figure), "the default draws the rows it was given"
    assert "Fit: a full collection grows" in control.last[1].value
    control.controls["preset"].value = "small: up to 20,000 resting"
    assert calls == [gc_sizes.PRESETS["small: up to 20,000 resting"]]


def test_tracking_explorer_measures_its_default_in_a_fresh_process_and_leaves_ours_alone() -> None:
    before = collector_state()
    control = tracking_explorer(n=10_000)
    assert isinstance(control.last[0], Figure) and "10,000 values" in control.last[1].value
    assert "one fresh process" in control.last[1].value and "Order objects" in control.last[1].value
    assert len(control.last[0].axes[0].get_yticklabels()) == len(HOLDINGS), "one row per way of holding values"
    assert collector_state() == before and gc.isenabled() == before[1]
    with pytest.raises(ValueError):
        tracking_explorer(n=12_345)


def test_checklist_walker_starts_at_question_one_and_walks() -> None:
    control = checklist_walker()
    assert isinstance(control, widgets.VBox)
    assert "Question 1." in control.prompt.value and control.buttons["Back"].disabled
    control.buttons["Yes"].click()
    assert "Question 2." in control.prompt.value
    control.press("No")
    assert "Stop" in control.prompt.value and control.buttons["Yes"].disabled
    control.press("Back")
    assert "Question 2." in control.prompt.value
    control.press("Start over")
    assert "Question 1." in control.prompt.value and "No answers yet" in control.trail.value
    with pytest.raises(ValueError):
        control.press("Maybe")


def test_egress_explorer_default_and_change() -> None:
    control = egress_explorer()
    assert isinstance(control.last[0], Figure) and "16,384 bytes" in control.last[1].value
    control.controls["max_payload"].value = 1_024
    assert "1,024 bytes" in control.last[1].value
