"""Chapter 11's held-values experiment: the worker, the interval of a difference, the verdicts and the figure.

No test asserts a speed: the structure of the result, the counts of tracked objects
(exact, from ``gc``), and the verdict rules on synthetic samples with a known answer.
"""

from __future__ import annotations

import gc
import sys

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from edumatcher.chapters.garbage_collection.gc_pauses import collector_state  # noqa: E402
from edumatcher.chapters.the_java_question.figures import FLOOR, added_pause_figure  # noqa: E402
from edumatcher.chapters.the_java_question.held_values import (  # noqa: E402
    HOLDINGS,
    INTS,
    ORDERS,
    HeldCost,
    added_pause_worker,
    added_pauses,
    clock,
    contrast_verdict,
    difference_interval,
    growth_verdict,
)
from edumatcher.kit import Measurement  # noqa: E402


def row(holding: str, n: int, added: float, spread: float = 0.0, tracked: int = 1) -> HeldCost:
    """A synthetic row: baseline samples around 1 ms, loaded ones ``added`` seconds higher."""
    base = [1e-3 * (1 + spread * k) for k in (-1, -0.5, 0, 0.5, 1)]
    loaded = [b + added for b in base]
    return HeldCost(holding, n, tracked, Measurement.from_samples(base), Measurement.from_samples(loaded),
                    difference_interval(loaded, base), "3.x")


def test_worker_counts_tracked_objects_and_returns_samples_per_row() -> None:
    before = collector_state()
    got = added_pause_worker([[ORDERS, 500], [INTS, 500], ["dicts of ints, one per item, in a list", 500]],
                             collections=4)
    rows = {r["holding"]: r for r in got["rows"]}
    assert rows[ORDERS]["tracked_added"] >= 500, "each Order is a tracked object"
    assert rows[INTS]["tracked_added"] <= 2, "a list of ints is one tracked object"
    dicts = rows["dicts of ints, one per item, in a list"]["tracked_added"]
    assert (dicts <= 2) if sys.version_info < (3, 14) else (dicts >= 500), "dict untracking ended in 3.14 (gh-127010)"
    assert all(len(r["baseline"]) == len(r["loaded"]) == 4 for r in rows.values())
    assert got["clock"] == clock()[1] and got["python"] == sys.version.split()[0]
    assert collector_state() == before, "thresholds, enabled and the frozen count are as they were"


def test_worker_refuses_an_unknown_holding_before_freezing_anything() -> None:
    frozen = gc.get_freeze_count()
    with pytest.raises(ValueError, match="unknown holding"):
        added_pause_worker([["nonsense", 10]])
    assert gc.get_freeze_count() == frozen


def test_added_pauses_in_a_fresh_process_wraps_rows_as_measurements() -> None:
    rows = added_pauses([(INTS, 1_000), (ORDERS, 1_000)], collections=3)
    assert [r.holding for r in rows] == [INTS, ORDERS] and all(r.n == 1_000 for r in rows)
    assert all(r.loaded.repeat == r.baseline.repeat == 3 for r in rows)
    assert "fresh process" in rows[0].loaded.label and rows[1].tracked_added >= 1_000
    low, high = rows[1].added_ci
    assert low <= high


def test_difference_interval_brackets_a_known_shift_and_is_a_point_without_noise() -> None:
    low, high = difference_interval([3.0] * 5, [1.0] * 5)
    assert low == high == 2.0
    low, high = difference_interval([3.0, 3.1, 2.9, 3.05, 2.95], [1.0, 1.1, 0.9, 1.05, 0.95])
    assert low <= 2.0 <= high
    with pytest.raises(ValueError):
        difference_interval([1.0], [1.0, 2.0])


def test_growth_verdict_needs_disjoint_increasing_intervals() -> None:
    clear = [row(INTS, 1_000, 1e-4), row(INTS, 10_000, 1e-3), row(INTS, 100_000, 1e-2)]
    assert growth_verdict(clear).startswith("verdict: the pause ints in one list")
    assert "grows with n" in growth_verdict(clear)
    noisy = [row(INTS, 1_000, 1e-4, spread=0.5), row(INTS, 10_000, 1.5e-4, spread=0.5)]
    assert growth_verdict(noisy).startswith("verdict: no growth with n detectable")
    with pytest.raises(ValueError):
        growth_verdict([clear[1], clear[0]])


def test_contrast_verdict_words_only_what_the_intervals_allow() -> None:
    heavy, light = row(ORDERS, 100, 1e-2), row(INTS, 100, 1e-4)
    assert "add more to every full collection" in contrast_verdict(heavy, light)
    assert "add less" in contrast_verdict(light, heavy)
    close = row(ORDERS, 100, 1e-4, spread=0.5), row(INTS, 100, 1.1e-4, spread=0.5)
    assert contrast_verdict(*close).startswith("verdict: no difference detectable")
    # issue 21: the verdict line itself (first line) stays within 160 characters, the figures follow it
    big = row(ORDERS, 100_000, 1e-2), row(INTS, 100_000, 1e-4)
    for line in (contrast_verdict(*big), contrast_verdict(*close), growth_verdict([big[1], row(INTS, 1_000_000, 1e-3)])):
        first, detail = line.split("\n")
        assert len(first) <= 160 and not detail.lstrip().startswith("verdict:")


def test_added_pause_figure_draws_one_row_per_holding_and_floors_nothing() -> None:
    rows = [row(ORDERS, 100, 1e-2, tracked=100), row("deque(maxlen=64) after n appends", 100, 0.0)]
    fig = added_pause_figure(rows)
    assert isinstance(fig, Figure)
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "+10.00 ms" in texts and "nothing measurable" in texts and "100 tracked" in texts
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [f"100 {r.holding}" for r in rows]
    assert fig.axes[0].get_xlim()[0] < FLOOR * 1e3
    with pytest.raises(ValueError):
        added_pause_figure([])


def test_every_holding_builds_n_values() -> None:
    for name, build in HOLDINGS.items():
        held = build(10)
        assert held is not None, name
