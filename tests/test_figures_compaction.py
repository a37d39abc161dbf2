"""Chapter 07's per-operation figure: every operation's time, the O(n) ones marked."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from edumatcher.chapters.heaps_and_indexes.figures import operation_times_figure  # noqa: E402
from edumatcher.chapters.heaps_and_indexes.heaps import OperationTimes  # noqa: E402


def test_operation_times_figure_draws_one_panel_per_run_with_markers() -> None:
    runs = [OperationTimes(1, [1_000, 2_000, 500_000, 40_000], [2], [(3, "_live", 2_000), (0, "_live", 5)]),
            OperationTimes(2, [1_000, 2_000, 1_500, 40_000], [], [(3, "_entries", 2_000)])]
    fig = operation_times_figure(runs, ramp=2)
    axes = fig.get_axes()
    assert len(axes) == 2 and axes[0].get_yscale() == "log"
    labels = [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert any("rebuilt the heaps (1)" in t for t in labels) and any("grew a dict" in t and "(1)" in t for t in labels)
    assert not any("rebuilt" in t.get_text() for t in axes[1].get_legend().get_texts())
    with pytest.raises(ValueError):
        operation_times_figure([])
