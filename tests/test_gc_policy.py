"""Tests for edumatcher.gc_policy: every branch of GcPolicy.tick on a fake clock, and clean restoration."""

from __future__ import annotations

import gc

import pytest

from edumatcher import gc_policy
from edumatcher.gc_policy import GcPolicy, frozen_beyond_startup, startup_freeze_count, unfreeze_to


def collector_state() -> tuple[tuple[int, ...], bool, int]:
    return gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()


@pytest.fixture(autouse=True)
def restore_collector():
    """Leave the interpreter's collector exactly as found, whatever a test does."""
    thresholds, enabled, frozen = collector_state()
    assert frozen_beyond_startup() == 0, "tests expect nothing frozen beyond the interpreter's own at the start"
    yield
    if gc.get_freeze_count() != frozen:
        unfreeze_to(frozen)
    gc.set_threshold(*thresholds)
    (gc.enable if enabled else gc.disable)()


class FakeClock:
    """Seconds that only move when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def policy(clock):
    p = GcPolicy(clock, freeze_delay_s=180.0, freeze_force_after_s=60.0, full_collect_every_s=300.0)
    p.start()
    yield p
    p.stop()


def test_every_constant_is_named_and_sane():
    assert gc_policy.SAFETY_THRESHOLDS == (50_000, 10, 10)
    assert gc_policy.FREEZE_DELAY_S > 0 and gc_policy.FREEZE_FORCE_AFTER_S > 0
    assert gc_policy.FULL_COLLECT_EVERY_S > 0 and gc_policy.LOG_LENGTH > 0
    assert GcPolicy().freeze_delay_s == gc_policy.FREEZE_DELAY_S


def test_start_raises_thresholds_and_enables(clock):
    gc.disable()
    p = GcPolicy(clock, safety_thresholds=(40_000, 11, 12))
    p.start()
    try:
        assert gc.get_threshold() == (40_000, 11, 12)
        assert gc.isenabled()
        p.start()  # idempotent: must not remember the raised thresholds as "original"
    finally:
        p.stop()
    assert not gc.isenabled()


def test_tick_before_start_is_an_error(clock):
    with pytest.raises(RuntimeError, match="before start"):
        GcPolicy(clock).tick(idle=True)


def test_busy_tick_does_nothing(policy, clock):
    frozen = gc.get_freeze_count()
    assert policy.tick(idle=False) is None
    clock.now += 10_000  # long after any full-collection interval: still nothing while busy
    assert policy.tick(idle=False) is None
    assert gc.get_freeze_count() == frozen
    assert [a.action for a in policy.log] == ["start"]


def test_idle_tick_collects_young_generation(policy, clock, monkeypatch):
    calls = []
    real_collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *args: calls.append(args) or real_collect(*args))
    clock.now += 1.0
    assert policy.tick(idle=True) == "young"
    assert calls == [(gc_policy.YOUNG_GENERATION,)]
    last = policy.log[-1]
    assert last.action == "young" and last.at == clock.now and last.pause_ns >= 0


def test_idle_tick_runs_a_full_collection_at_most_every_interval(policy, clock, monkeypatch):
    calls = []
    real_collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *args: calls.append(args) or real_collect(*args))
    clock.now += 299.0
    assert policy.tick(idle=True) == "young"
    clock.now += 1.0  # 300 s since start
    assert policy.tick(idle=True) == "full"
    clock.now += 1.0
    assert policy.tick(idle=True) == "young"  # the interval restarts at the full collection
    clock.now += 299.0
    assert policy.tick(idle=True) == "full"
    assert calls == [(1,), (), (1,), ()]


def test_freeze_waits_for_the_delay_then_for_an_idle_tick(policy, clock):
    found = gc.get_freeze_count()  # the interpreter's own (CPython 3.12.1: 375), else 0
    policy.arm_freeze()
    assert policy.freeze_at == clock.now + 180.0
    clock.now += 179.9
    assert policy.tick(idle=True) == "young"  # not due yet: ordinary idle housekeeping
    assert gc.get_freeze_count() == found
    clock.now += 0.1
    assert policy.tick(idle=False) is None  # due, but busy and within the grace period
    assert gc.get_freeze_count() == found
    clock.now += 30.0
    assert policy.tick(idle=False) is None
    keep = [object() for _ in range(10)]  # noqa: F841 - tracked survivors to freeze
    assert policy.tick(idle=True) == "freeze"
    assert gc.get_freeze_count() > found
    assert policy.freeze_at is None and policy.freezes == 1
    assert [a.action for a in policy.log] == ["start", "arm", "young", "freeze"]
    # After the freeze, the next idle tick is young housekeeping again (the freeze's
    # collection counted as the latest full one).
    clock.now += 1.0
    assert policy.tick(idle=True) == "young"


def test_freeze_is_forced_after_the_grace_period_even_when_busy(policy, clock):
    found = gc.get_freeze_count()
    policy.arm_freeze()
    clock.now += 180.0 + 59.9
    assert policy.tick(idle=False) is None
    clock.now += 0.1
    assert policy.tick(idle=False) == "forced-freeze"
    assert gc.get_freeze_count() > found
    assert policy.tick(idle=False) is None  # done once, not on every tick


def test_frozen_objects_are_skipped_by_a_full_collection(policy, clock):
    """What the freeze buys: a full collection no longer visits the frozen set."""
    keep = [[i] for i in range(50_000)]  # tracked lists: work for the collector
    policy.arm_freeze()
    clock.now += 180.0
    policy.tick(idle=True)
    assert gc.get_freeze_count() >= len(keep)
    # Frozen objects are in no generation the collector walks, yet alive and intact.
    assert not any(obj is keep[0] for obj in gc.get_objects())
    assert keep[-1] == [49_999]
    policy.stop()
    assert any(obj is keep[0] for obj in gc.get_objects())  # unfrozen: back in the oldest generation


def test_arming_again_after_a_freeze_freezes_the_new_survivors(policy, clock):
    policy.arm_freeze()
    clock.now += 180.0
    assert policy.tick(idle=True) == "freeze"
    first = gc.get_freeze_count()
    later = [[i] for i in range(1000)]
    policy.arm_freeze()
    clock.now += 180.0
    assert policy.tick(idle=True) == "freeze"
    assert gc.get_freeze_count() >= first + len(later)
    assert policy.freezes == 2


def test_stop_leaves_the_collector_exactly_as_found(clock):
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        gc.set_threshold(1234, 5, 6)
        before = collector_state()
        p = GcPolicy(clock, freeze_delay_s=0.0)
        p.start()
        p.arm_freeze()
        assert p.tick(idle=True) == "freeze"
        assert collector_state() != before
        p.stop()
        assert collector_state() == before
        p.stop()  # idempotent
        assert collector_state() == before
        assert p.log[-1].action == "stop"


def test_context_manager_restores_even_on_error(clock):
    before = collector_state()
    with pytest.raises(KeyError), GcPolicy(clock, freeze_delay_s=0.0) as p:
        p.arm_freeze()
        p.tick(idle=True)
        raise KeyError("boom")
    assert collector_state() == before


def test_stop_keeps_a_freeze_made_by_someone_else_when_it_froze_nothing(clock):
    keep = [[i] for i in range(100)]  # noqa: F841
    gc.freeze()  # e.g. a server froze before forking
    theirs = gc.get_freeze_count()
    p = GcPolicy(clock, freeze_delay_s=60.0)
    p.start()
    p.arm_freeze()
    p.tick(idle=True)  # not due yet: the policy freezes nothing
    p.stop()
    assert gc.get_freeze_count() == theirs  # their objects stay frozen


def test_stop_unfreezes_what_it_froze_even_over_an_earlier_freeze(clock):
    # gc.unfreeze() cannot tell objects apart: releasing theirs too beats keeping our book frozen.
    keep = [[i] for i in range(100)]  # noqa: F841
    gc.freeze()
    p = GcPolicy(clock, freeze_delay_s=0.0)
    p.start()
    p.arm_freeze()
    p.tick(idle=True)
    assert p.freezes == 1
    p.stop()
    assert gc.get_freeze_count() == startup_freeze_count()  # theirs released; the interpreter's own frozen again


def test_startup_baseline_is_what_a_bare_interpreter_reports():
    import subprocess
    import sys

    bare = subprocess.run([sys.executable, "-I", "-c", "import gc; print(gc.get_freeze_count())"],
                          capture_output=True, text=True, check=True)
    assert startup_freeze_count() == int(bare.stdout)
    if sys.version_info[:2] in ((3, 10), (3, 11)):
        assert startup_freeze_count() == 0, "3.10 and 3.11 freeze nothing at start-up"


def test_the_interpreters_own_frozen_objects_survive_a_policy_run(clock):
    """CPython 3.12 starts with immortal objects in the permanent generation: stop() must leave them there."""
    found = gc.get_freeze_count()
    assert found == startup_freeze_count(), "this test needs the interpreter's start-up count, nothing more"
    with GcPolicy(clock, freeze_delay_s=0.0) as p:
        p.arm_freeze()
        assert p.tick(idle=True) == "freeze"
        assert gc.get_freeze_count() > found
    assert gc.get_freeze_count() == found
    assert frozen_beyond_startup() == 0


def test_unfreeze_to_releases_a_freeze_and_keeps_the_baseline():
    found = gc.get_freeze_count()
    keep = [[i] for i in range(1000)]
    gc.freeze()
    assert frozen_beyond_startup() >= len(keep)
    unfreeze_to(found)
    assert gc.get_freeze_count() == found
    assert any(obj is keep[0] for obj in gc.get_objects())  # released to the collector


def test_log_is_bounded(policy, clock):
    for _ in range(gc_policy.LOG_LENGTH + 10):
        clock.now += 0.001
        policy.tick(idle=True)
    assert len(policy.log) == gc_policy.LOG_LENGTH


@pytest.mark.parametrize(
    "kwargs",
    [{"freeze_delay_s": -1.0}, {"full_collect_every_s": -1.0}, {"safety_thresholds": (0, 10, 10)},
     {"safety_thresholds": (1, 2)}],
)
def test_bad_settings_are_refused(kwargs):
    with pytest.raises(ValueError):
        GcPolicy(**kwargs)
