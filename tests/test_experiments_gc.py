"""Chapter 07's experiments: what they show, and that each leaves the collector as it found it."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from edumatcher.experiments.gc_pauses import (
    collection_pauses,
    collector_state,
    freeze_effect,
    frozen,
    frozen_cycles,
    policy_walkthrough,
    recorded_collections,
    refcount_and_cycle,
)
from edumatcher.experiments.gc_tail import compare_tails
from edumatcher.experiments.opening_memory import ramp_profile
from edumatcher.gc_policy import SAFETY_THRESHOLDS


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    before = collector_state()
    callbacks = list(gc.callbacks)
    yield
    assert collector_state() == before, "the experiment changed the collector's settings"
    assert gc.callbacks == callbacks, "the experiment left a callback on gc.callbacks"


def test_refcount_frees_at_once_and_only_the_collection_frees_the_cycle() -> None:
    steps = refcount_and_cycle()
    assert steps[0] == ("del plain", "plain")
    assert steps[1] == ("del a, b (a cycle)", "plain")
    assert steps[2][0].startswith("gc.collect()") and steps[2][1] == "plain, a, b"


def test_frozen_refuses_to_run_over_someone_elses_freeze() -> None:
    gc.freeze()
    try:
        with pytest.raises(RuntimeError, match="already frozen"):
            with frozen():
                pass
    finally:
        gc.unfreeze()


def test_pauses_count_tracked_objects_that_grow_with_the_book() -> None:
    rows = collection_pauses((0, 3_000), repeat=5)
    assert rows[1].tracked - rows[0].tracked >= 3_000  # the Order, per resting order (its heap key is an int)
    assert all(r.full.repeat == 5 and r.full.number == 1 for r in rows)


def test_freeze_effect_takes_the_book_out_of_the_scan() -> None:
    before, after, count = freeze_effect(2_000)
    assert count > 6_000
    assert after.median < before.median


def test_recorded_collections_sees_young_collections() -> None:
    records = recorded_collections(30_000)
    assert records and all(g in (0, 1, 2) and d >= 0 for g, d in records)
    assert any(g == 0 for g, _ in records)


def test_policy_walkthrough_freezes_at_the_idle_tick_and_restores() -> None:
    steps, log = policy_walkthrough()
    actions = [s.action for s in steps]
    assert actions[:2] == ["start", "arm"]
    assert actions[actions.index("freeze") - 1] == "nothing", "a busy tick never freezes"
    freeze = steps[actions.index("freeze")]
    assert freeze.at == 200.0 and freeze.frozen > 0 and freeze.threshold == SAFETY_THRESHOLDS
    assert "full" in actions and "young" in actions
    assert steps[-1].action == "stop" and steps[-1].frozen == 0
    assert [a for _, a, _ in log] == ["start", "arm", "young", "freeze", "young", "full", "stop"]


def test_busy_market_gets_a_forced_freeze_sixty_seconds_late() -> None:
    steps, _ = policy_walkthrough(busy_market=True)
    forced = [s for s in steps if s.action == "forced-freeze"]
    assert len(forced) == 1 and forced[0].at == 241.0


def test_frozen_cycles_stay_until_unfrozen() -> None:
    fc = frozen_cycles(2_000)
    assert fc.held_while_frozen > 0.8 * (fc.built - fc.baseline)
    assert fc.held_after_unfreeze < 0.05 * (fc.built - fc.baseline)


def test_ramp_profile_steps_up_during_the_ramp() -> None:
    profile = ramp_profile(2_000, then=1_000, every=100)
    i = profile.ops.index(profile.ramp_end)
    assert profile.traced_bytes[i] > 2 * (profile.traced_bytes[-1] - profile.traced_bytes[i])
    counts = profile.freeze_counts
    assert counts["end of the ramp"] - counts["start-up"] >= 2_000  # an Order each (heap keys are ints)
    assert profile.resting_at_end > 0


def test_tails_keep_every_latency_and_the_policy_freezes_off_the_path() -> None:
    default, policy = compare_tails(2_000, 1_000)
    # bench gc's steady stream drops the rare cancel_owner messages, so slightly fewer than asked for.
    assert len(default.latencies_ns) == len(policy.latencies_ns) and 990 <= len(policy.latencies_ns) <= 1_000
    assert policy.freeze_ns is not None and default.freeze_ns is None
    assert policy.actions[:3] == ["start", "arm", "freeze"] and policy.actions[-1] == "stop"
    assert policy.collections == (0, 0, 0), "raised thresholds: no collection while 1,000 messages were handled"
    summary = default.summary()
    assert summary["p99 ex GC"] <= summary["p99"] and summary["max ex GC"] <= summary["max"]
    assert all(e <= t for e, t in zip(default.ex_gc(), default.latencies_ns, strict=True))
