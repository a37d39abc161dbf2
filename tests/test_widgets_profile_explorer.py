"""Chapter 02's profile explorer: a default view when created, and a redraw on every control."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import cProfile  # noqa: E402
import pstats  # noqa: E402

import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from edumatcher.chapters.the_standard_tools.widget import profile_explorer, root_choices  # noqa: E402
from edumatcher.kit.message_path import fresh_engine  # noqa: E402
from edumatcher.workloads import encode_workload, standard  # noqa: E402


def _stats() -> pstats.Stats:
    payloads = encode_workload(standard(300, seed=2))
    engine = fresh_engine()

    def run() -> None:
        for p in payloads:
            engine.handle(p)

    prof = cProfile.Profile()
    prof.runcall(run)
    return pstats.Stats(prof)


def test_profile_explorer_shows_a_table_and_an_icicle_then_redraws() -> None:
    stats = _stats()
    choices = root_choices(stats)
    assert choices and choices[0][1][2] == "handle", "handle has the most cumulative time of the engine's functions"
    control = profile_explorer(stats)
    text, fig = control.last
    assert "internal time" in text.value and isinstance(fig, Figure)
    control.controls["sort"].value = "cumulative"
    assert "cumulative time" in control.last[0].value
    control.controls["root"].value = choices[1][1]
    assert choices[1][1][2] in control.last[1].axes[0].get_title()


def test_profile_explorer_refuses_an_unknown_sort_key() -> None:
    with pytest.raises(ValueError):
        profile_explorer(_stats(), sort="nonsense")
