"""Chapter 03's new figures: kept frames and the thread handoff draw what their labels say."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from matplotlib.collections import PathCollection  # noqa: E402

from edumatcher.chapters.measuring_honestly.figures import handoff_figure, kept_frames_figure  # noqa: E402
from edumatcher.chapters.measuring_honestly.handoff import KINDS, Handoff  # noqa: E402
from edumatcher.chapters.measuring_honestly.kept_frames import KeptFrames  # noqa: E402


def _kf(mode: str, ms: float, kept: int, per_frame: int) -> KeptFrames:
    return KeptFrames(mode, "3.x", 2_000, [ms / 1e3] * 5, [0] * 5, [kept * per_frame // 5] * 5, [kept // 5] * 5, 117.0)


def test_kept_frames_figure_one_dot_per_run_for_time_and_page_faults() -> None:
    fig = kept_frames_figure({"discard": _kf("discard", 10, 0, 0), "keep": _kf("keep", 18, 100, 4096)})
    left, right = fig.axes
    for ax in (left, right):
        scatters = [c for c in ax.collections if isinstance(c, PathCollection)]
        assert len(scatters) == 2 and all(len(c.get_offsets()) == 5 for c in scatters), "one dot per run, per sink"
    assert "page faults" in right.get_ylabel() and "ms" in left.get_ylabel()


def test_kept_frames_figure_says_when_page_faults_are_not_counted() -> None:
    none = KeptFrames("keep", "3.x", 2_000, [0.01] * 5, [-1] * 5, [0] * 5, [20] * 5, 117.0)
    fig = kept_frames_figure({"discard": none, "keep": none})
    assert "not counted" in fig.axes[1].texts[0].get_text()


def test_handoff_figure_one_bar_per_kind_and_setting_on_log_axes() -> None:
    runs = {k: [[1e-4 * (i + 1), 1e-4, 2e-4] for i in range(3)] for k in KINDS}
    result = {s: Handoff(s, None, "3.x", 600, 0.005, True, runs) for s in ("one core", "two cores")}
    fig = handoff_figure(result)
    left, right = fig.axes
    assert len(left.patches) == len(right.patches) == 2 * len(KINDS)
    assert left.get_yscale() == right.get_yscale() == "log"
    assert [t.get_text() for t in left.get_legend().get_texts()] == ["one core", "two cores"]


def test_method_figure_draws_the_rounds_and_places_the_interval_among_the_words() -> None:
    from edumatcher.chapters.measuring_honestly.figures import VERDICT_EXAMPLES, method_figure
    from edumatcher.kit import compare_interleaved

    small, large = list(range(100)), list(range(400))
    c = compare_interleaved(lambda: sum(large), lambda: sum(small), labels=("sum of 400", "sum of 100"), budget=0.2)
    fig = method_figure(c)
    left, right = fig.axes
    (dots,) = [col for col in left.collections if isinstance(col, PathCollection)]
    assert len(dots.get_offsets()) == c.rounds, "one dot per interleaved round"
    labels = [t.get_text() for t in right.texts]
    assert [f"{w} (example)" for w, _, _ in VERDICT_EXAMPLES] == labels[:0:-1], "each word's drawn example, top down"
    assert labels[0] == f"this comparison: {c.outcome}" and c.outcome == "slower"
    assert "sum of 400" in fig.get_suptitle() and right.get_xscale() == "log"
