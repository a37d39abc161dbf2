"""Figures of chapters 08-12: each returns a Figure with the parts the chapter's text refers to."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from edumatcher.chapters.beyond_heaps.array_book import level_memory  # noqa: E402
from edumatcher.chapters.beyond_heaps.egress import simulate  # noqa: E402
from edumatcher.chapters.beyond_heaps.figures import (
    egress_figure,  # noqa: E402
    level_memory_figure,  # noqa: E402
)
from edumatcher.chapters.garbage_collection.figures import (  # noqa: E402
    binned_percentiles,
    pause_curve,
    ramp_memory,
    tail_histograms,
    tail_timeline,
)
from edumatcher.chapters.garbage_collection.gc_pauses import PauseRow  # noqa: E402
from edumatcher.chapters.garbage_collection.gc_tail import TailRun  # noqa: E402
from edumatcher.chapters.garbage_collection.opening_memory import RampProfile  # noqa: E402
from edumatcher.chapters.measuring_honestly.bimodal import BimodalResult, RunRecord  # noqa: E402
from edumatcher.chapters.measuring_honestly.figures import before_after, runs_strip, single_vs_median_figure  # noqa: E402
from edumatcher.chapters.measuring_honestly.pitfalls import SingleVsMedian  # noqa: E402
from edumatcher.chapters.off_the_message_path.figures import (  # noqa: E402
    LOOP_ARROWS,
    LOOP_BOXES,
    percentile_comparison,  # noqa: E402
    run_loop_diagram,
    snapshot_cost_figure,  # noqa: E402
)
from edumatcher.chapters.off_the_message_path.snapshots import PublicationCost, SnapshotCost  # noqa: E402
from edumatcher.chapters.the_java_question.figures import tracked_bars  # noqa: E402
from edumatcher.chapters.the_java_question.pooling import TrackedRow  # noqa: E402
from edumatcher.kit import Measurement, OpenLoopRun, compare  # noqa: E402


def m(seconds: float, label: str = "x", ops: int = 1) -> Measurement:
    return Measurement.from_samples([seconds * k for k in (1.0, 1.1, 0.9, 1.05, 0.95)], label=label, ops_per_call=ops)


@pytest.fixture
def figures() -> Iterator[list[Figure]]:
    made: list[Figure] = []
    yield made
    import matplotlib.pyplot as plt

    for fig in made:
        plt.close(fig)


def texts(fig: Figure) -> str:
    return " ".join(t.get_text() for ax in fig.axes for t in ax.texts + [ax.title, ax.xaxis.label, ax.yaxis.label])


def test_run_loop_diagram_draws_every_box_and_names_the_message_path(figures: list[Figure]) -> None:
    for start, end, _ in LOOP_ARROWS:
        assert start in LOOP_BOXES and end in LOOP_BOXES
    fig = run_loop_diagram()
    figures.append(fig)
    assert "the message path" in texts(fig) and "GcPolicy.tick(idle)" in texts(fig)


def test_snapshot_and_sampling_figures(figures: list[Figure]) -> None:
    snaps = [SnapshotCost(1_000, 100, m(2e-5)), SnapshotCost(4_000, 400, m(5e-5))]
    pubs = [PublicationCost(n, lv, 400, compare(m(0.02, ops=400), m(0.004, ops=400)), 400, 4)
            for n, lv in ((1_000, 100), (4_000, 400))]
    fig = snapshot_cost_figure(snaps, pubs)
    figures.append(fig)
    assert len(fig.axes) == 2 and "Building one snapshot" in texts(fig)
    assert all(ax.get_ylim()[0] == 0 for ax in fig.axes), "both axes start at 0: a tenth looks like a tenth"
    assert all(ax.get_ylabel().startswith("µs per") for ax in fig.axes) and fig.get_suptitle()
    assert fig.legends and fig.axes[1].get_legend() is None, "the policies' legend is off the lines"
    fig = percentile_comparison(list(range(1, 4_001)), 16)
    figures.append(fig)
    assert "one in 16" in texts(fig) and "beyond" in texts(fig)
    with pytest.raises(ValueError):
        snapshot_cost_figure([], pubs)


def test_gc_figures(figures: list[Figure]) -> None:
    rows = [PauseRow(0, 50_000, m(0.01)), PauseRow(10_000, 80_000, m(0.02))]
    fig = pause_curve(rows)
    figures.append(fig)
    assert "10,000 resting" in texts(fig)
    profile = RampProfile([0, 50, 100, 150], [0, 500, 1_000, 1_050], 100, {"start-up": 10, "end of the ramp": 300}, 90)
    fig = ramp_memory(profile)
    figures.append(fig)
    assert "300 objects" in texts(fig)
    runs = [TailRun(label, [1_000 * (i % 50 + 1) for i in range(500)], [0] * 500, (3, 1, 0), 0) for label in ("a", "b")]
    fig = tail_histograms(*runs)
    figures.append(fig)
    assert len(fig.axes) == 2 and "p99 ex GC" in " ".join(t.get_text() for ax in fig.axes for t in ax.get_legend().get_texts())
    due = [i * 100_000_000 for i in range(100)]  # 10 per second: the 50 ms pause delays no other message
    default_run = OpenLoopRun("default collector", 1_000.0, due, due, [t + (50_000_000 if i == 40 else 20_000) for i, t in enumerate(due)], [0] * 100)
    policy_run = OpenLoopRun("GcPolicy", 1_000.0, due, due, [t + 20_000 for t in due], [0] * 100)
    default = TailRun("default collector", default_run.service_ns, [0] * 100, (0, 0, 1), 0, run=default_run,
                      stream_collections=[(2, 49_000_000, due[40] + 49_500_000)])
    policy = TailRun("GcPolicy", policy_run.service_ns, [0] * 100, (0, 0, 0), 0, 30_000_000, run=policy_run,
                     freeze_window=(5_000_000, 35_000_000))
    fig = tail_timeline(default, policy)
    figures.append(fig)
    legends = " ".join(t.get_text() for ax in fig.axes for t in ax.get_legend().get_texts())
    assert "full collection in a message (49 ms)" in legends and "freeze (30 ms)" in legends
    assert "median (p50)" in legends and "p99" in legends and "slowest (max)" in legends, "percentiles, not a cloud"
    centres, marks = binned_percentiles(default_run.intended_ns, default_run.response_ns, bins=5)
    assert len(centres) == 5 and marks["max"][2] == 50_000_000, "the 50 ms message is the max of its span"
    assert marks["p50"][0] == 20_000
    assert fig.axes[1].get_xlabel().startswith("intended send time") and "response time" in fig.axes[0].get_ylabel()


def test_pooling_figures(figures: list[Figure]) -> None:
    fig = tracked_bars([TrackedRow("ints", 100, 1, 1), TrackedRow("objects", 100, 101, 101)])
    figures.append(fig)
    assert "101" in texts(fig)
    assert "holding 100 values" in fig.axes[0].get_title(), "the figure has a title naming what is held"


def test_runs_figures(figures: list[Figure]) -> None:
    runs = {
        "a": [RunRecord("a", i, 0.01 * (1 + i % 2), 100, i % 2, 3, 0.001, 0) for i in range(1, 6)],
        "b": [RunRecord("b", i, 0.01, 100, 0, 0, 0.0, 0) for i in range(1, 6)],
    }
    result = BimodalResult([m(0.01, "a", 100), m(0.01, "b", 100)], runs)
    fig = runs_strip(result)
    figures.append(fig)
    assert "spread" in texts(fig)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels.count("run with a full collection inside") == 1
    fig = before_after(m(0.01, "alone", 100), m(0.02, "loaded", 100))
    figures.append(fig)
    fig = single_vs_median_figure(SingleVsMedian(Measurement.from_samples([0.01] * 9 + [0.03], ops_per_call=100), 5))
    figures.append(fig)
    assert "of the median" in texts(fig)


def test_memory_and_queue_figures(figures: list[Figure]) -> None:
    fig = level_memory_figure([level_memory(1_000, 200), level_memory(10_000, 200)],
                              [level_memory(10_000, 50, spread=10_000), level_memory(10_000, 500, spread=10_000)])
    figures.append(fig)
    assert len(fig.axes) == 2
    assert all(ax.get_ylabel().startswith("KiB held") for ax in fig.axes), "both panels say what their y axis is"
    assert fig.get_suptitle() and fig.legends, "a title over both panels, one legend off the lines"
    fig = egress_figure(simulate(ticks=30, max_payload=4_096, max_entries=100, max_bytes=100_000))
    figures.append(fig)
    legend = " ".join(t.get_text() for t in fig.axes[0].get_legend().get_texts())
    assert "entries" in legend and "MiB" in legend
