"""Chapter 03's handoff experiment: every consumer hands over every payload; verdicts from known runs."""

from __future__ import annotations

import threading

import pytest

from edumatcher.chapters.measuring_honestly.handoff import (
    KINDS,
    Handoff,
    blocking_queue,
    busy_poll,
    can_pin,
    comparison_line,
    core_sets,
    gil_enabled,
    handoff,
    handoff_verdicts,
    handoff_worker,
    yield_poll,
)


@pytest.mark.parametrize("consumer", [busy_poll, yield_poll, blocking_queue])
def test_each_consumer_hands_over_every_payload_in_order(consumer) -> None:  # type: ignore[no-untyped-def]
    payloads = [b"%d" % i for i in range(50)]
    seen: list[bytes] = []
    waits: list[float] = []
    consumer(payloads, seen.append, waits, 4)
    assert seen == payloads, "every payload, once, in the order sent"
    assert len(waits) == 50 and min(waits) >= 0
    assert threading.active_count() == 1 or all(t.name not in ("producer", "consumer") for t in threading.enumerate())


def test_core_sets_match_what_the_platform_allows() -> None:
    sets = core_sets()
    if can_pin():
        assert len(sets["one core"]) == 1 and all(len(v) == 2 for k, v in sets.items() if k == "two cores")
    else:
        assert sets == {"unpinned": None}
    assert gil_enabled() in (True, False)


def test_worker_reports_every_kind_per_round() -> None:
    row = handoff_worker(cores=None, rounds=2, messages=40, busy_messages=8)
    assert sorted(row["runs"]) == sorted(KINDS)
    assert all(len(runs) == 2 and all(len(r) == 3 and r[0] > 0 and r[2] >= r[1] >= 0 for r in runs)
               for runs in row["runs"].values())
    assert row["switch_interval"] > 0


def _handoff(busy: float, yielding: float) -> Handoff:
    runs = {"busy poll": [[busy * (1 + 0.01 * i), busy, busy * 2] for i in range(12)],
            "yield poll": [[yielding * (1 + 0.01 * i), yielding, yielding * 2] for i in range(12)],
            "blocking queue": [[1e-5 * (1 + 0.01 * ((i * 7) % 12)), 1e-5, 2e-5] for i in range(12)]}
    return Handoff("one core", [0], "3.x", 600, 0.005, True, runs)


def test_verdicts_cover_the_busy_poll_only_and_follow_the_intervals() -> None:
    lines = handoff_verdicts({"one core": _handoff(1e-3, 1.02e-5)})
    assert len(lines) == 1 and lines[0].startswith("verdict: one core, busy poll")
    assert "throughput lower" in lines[0] and "median wait longer" in lines[0]
    line = comparison_line(_handoff(1e-3, 5e-6), "yield poll")
    assert "throughput higher" in line and "median wait shorter" in line


def test_handoff_runs_a_fresh_process_per_core_setting() -> None:
    result = handoff(rounds=1, messages=30, busy_messages=4)
    assert list(result) == list(core_sets())
    assert all(h.seconds("blocking queue").repeat == 1 for h in result.values())
