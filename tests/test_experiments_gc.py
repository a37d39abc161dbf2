"""Chapter 09's experiments: what they show, and that each leaves the collector as it found it."""

from __future__ import annotations

import gc
import itertools
from collections.abc import Iterator

import pytest

from edumatcher.chapters.garbage_collection.figures import rush_timeline
from edumatcher.chapters.garbage_collection.gc_pauses import (
    PauseRow,
    collection_pauses,
    collector_state,
    freeze_effect,
    frozen,
    frozen_cycles,
    pause_fit,
    pause_worker,
    policy_walkthrough,
    recorded_collections,
    refcount_and_cycle,
)
from edumatcher.chapters.garbage_collection.gc_tail import (
    DictResize,
    TailRun,
    compare_tails,
    dict_resizes,
    resize_verdict,
    rush_young_verdict,
    tail_payloads,
    tail_verdicts,
    usable_slots,
)
from edumatcher.chapters.garbage_collection.opening_memory import ramp_profile
from edumatcher.gc_policy import SAFETY_THRESHOLDS, startup_freeze_count, unfreeze_to
from edumatcher.kit import Measurement, OpenLoopRun
from edumatcher.metrics import GcMonitor


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
    found = gc.get_freeze_count()
    keep = [[i] for i in range(100)]  # noqa: F841 - tracked objects for "someone else" to freeze
    gc.freeze()
    try:
        with pytest.raises(RuntimeError, match="already frozen"):
            with frozen():
                pass
    finally:
        unfreeze_to(found)


def test_frozen_runs_over_the_interpreters_own_and_gives_them_back() -> None:
    # CPython 3.12.1 starts with 375 immortal objects in the permanent generation; 3.10, 3.11, 3.13 with none.
    found = gc.get_freeze_count()
    assert found == startup_freeze_count()
    keep = [[i] for i in range(1_000)]
    with frozen() as count:
        assert count >= len(keep), "the yield counts what this freeze took, not the interpreter's own"
        assert found < gc.get_freeze_count() <= found + count  # frozen objects that die are still freed
    assert gc.get_freeze_count() == found


def test_pauses_count_tracked_objects_that_grow_with_the_book() -> None:
    rows = collection_pauses((0, 3_000), repeat=5)
    assert rows[1].tracked - rows[0].tracked >= 3_000  # the Order, per resting order (its heap key is an int)
    assert all(r.full.repeat == 5 and r.full.number == 1 and r.cpu is not None and r.cpu.repeat == 5 for r in rows)
    assert all("fresh process" in r.full.label for r in rows)


def test_pauses_run_in_a_fresh_process_whose_heap_is_not_ours() -> None:
    ballast = [[i] for i in range(30_000)]  # tracked here, so a worker that saw our heap would count them
    isolated = collection_pauses((0,), repeat=5)[0]
    here = collection_pauses((0,), repeat=5, isolated=False)[0]
    assert isolated.tracked < here.tracked - len(ballast)
    assert "this process" in here.full.label


def test_pause_worker_keeps_the_seed_objects_alive_while_it_collects() -> None:
    got = pause_worker(2_000, repeat=5, objects="seed")
    empty = pause_worker(0, repeat=5, objects="seed")
    assert got["tracked"] - empty["tracked"] >= 1_900  # one tracked object each: their dicts hold only atoms
    assert len(got["wall"]) == len(got["cpu"]) == 5
    with pytest.raises(ValueError, match="objects"):
        collection_pauses((0,), objects="dicts")


def _rows(pauses_ms: list[float], step: int = 50_000) -> list[PauseRow]:
    """Synthetic rows: CPU medians as given (five identical samples), tracked objects 0, step, 2 step, ..."""
    out = []
    for i, ms in enumerate(pauses_ms):
        m = Measurement.from_samples([ms / 1e3] * 5)
        out.append(PauseRow(i * step, 10_000 + i * step, m, "book", m))
    return out


def test_pause_fit_recovers_a_known_slope_and_words_its_direction() -> None:
    fit = pause_fit(_rows([1.0, 11.0, 21.5, 30.5, 41.0]))  # about 20 ms per 100k objects
    slope, lo, hi = fit.per_100k_ms
    assert lo < 20 < hi and slope == pytest.approx(20, rel=0.05) and fit.r2 > 0.99 and fit.points == 5
    assert fit.direction == "grows" and fit.verdict.startswith("verdict: a full collection grows")
    flat = pause_fit(_rows([10.0, 12.0, 9.0, 11.5, 9.5]))
    assert flat.direction == "undetermined" and flat.verdict.startswith("verdict: no trend detectable")
    assert pause_fit(_rows([40.0, 30.0, 20.0, 10.0, 1.0])).direction == "shrinks"
    with pytest.raises(ValueError, match="3 different sizes"):
        pause_fit(_rows([1.0, 2.0]))


def test_pause_fit_can_fit_wall_time_and_refuses_cpu_when_missing() -> None:
    rows = [PauseRow(r.resting, r.tracked, r.full) for r in _rows([1.0, 11.0, 21.0])]  # no CPU time
    assert pause_fit(rows, clock="wall").clock == "wall"
    with pytest.raises(ValueError, match="CPU"):
        pause_fit(rows)


def test_pause_curve_draws_the_fit_in_its_legend() -> None:
    from edumatcher.chapters.garbage_collection.figures import pause_curve

    rows = _rows([1.0, 11.0, 21.5, 30.5, 41.0])
    ax = pause_curve(rows).axes[0]
    legend = " ".join(t.get_text() for t in ax.get_legend().get_texts())
    assert "least-squares fit" in legend and "95 % CI" in legend and "r²" in legend
    assert "wall time" in legend, "wall time is drawn beside the CPU time it was fitted on"
    two = pause_curve(rows[:2]).axes[0]  # too few sizes for a fit: points only
    assert "least-squares" not in " ".join(t.get_text() for t in two.get_legend().get_texts())


def test_freeze_effect_takes_the_book_out_of_the_scan() -> None:
    before, after, count = freeze_effect(2_000)
    assert count > 2_000 and "fresh process" in before.label
    assert before.repeat == after.repeat and after.median >= 0  # which is faster is chapter 09's to show
    here_before, here_after, here_count = freeze_effect(2_000, isolated=False)
    assert here_count > count  # this process tracks the test session's objects too


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
    assert freeze.frozen > startup_freeze_count()
    assert steps[-1].action == "stop" and steps[-1].frozen == startup_freeze_count()  # only the interpreter's own
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


def test_tails_keep_every_latency_and_the_freeze_queues_messages_but_no_service_time() -> None:
    # A light offered load (2,000/s): the only queueing is behind what runs between messages.
    default, policy = compare_tails(2_000, 1_000, rate=2_000.0)
    # bench gc's steady stream drops the rare cancel_owner messages, so slightly fewer than asked for.
    n = len(policy.latencies_ns)
    assert len(default.latencies_ns) == n and 990 <= n <= 1_000
    assert len(policy.response_ns) == len(default.response_ns) == n
    assert policy.freeze_ns is not None and default.freeze_ns is None and default.freeze_window is None
    assert policy.actions == ["start", "arm", "freeze", "stop"]
    assert policy.collections == (0, 0, 0), "raised thresholds: no collection while 1,000 messages were handled"
    assert policy.idle_collections >= 1  # the freeze's own full collection, at least, ran between messages
    start, end = policy.freeze_window
    assert 0 <= start < end and end - start >= policy.freeze_ns
    # Whatever was due while the freeze ran waited for it: response, not service, time holds the wait.
    run = policy.run
    for i, due in enumerate(run.intended_ns):
        if start <= due < end:
            assert run.started_ns[i] >= end and policy.response_ns[i] >= end - due
    assert policy.queued_behind_freeze() == sum(start <= t < end for t in run.intended_ns)
    for tail in (default, policy):
        assert all(r >= s for r, s in zip(tail.response_ns, tail.latencies_ns, strict=True))
        s = tail.summary()
        assert s["p99 ex GC"] <= s["p99"] and s["max ex GC"] <= s["max"]
        assert s["response max"] >= s["response p99.9"] >= s["response p99"] >= s["response p50"]
        assert all(e <= t for e, t in zip(tail.ex_gc(), tail.latencies_ns, strict=True))


def test_dict_resizes_are_found_at_the_same_messages_every_time() -> None:
    ramp, steady = tail_payloads(2_600, 1_000)
    first = dict_resizes(ramp, steady)
    assert first == dict_resizes(ramp, steady)
    assert {r.name for r in first} <= {"_live", "_entries"}
    for r in first:
        assert r.bytes_after != r.bytes_before and 0 <= r.message < len(steady)
    # The ramp leaves 2,600 resting orders in tables with room for 2,730 (2/3 of 4,096 slots):
    # the steady stream's inserts use that room up and both dicts grow their tables.
    assert {"_live", "_entries"} <= {r.name for r in first}

def _synthetic_tail(label: str, service: list[int], intended: list[int], started: list[int], gc_ns: list[int],
                    window: tuple[int, int] | None, between: list[int]) -> TailRun:
    completed = [s + t for s, t in zip(started, service, strict=True)]
    run = OpenLoopRun(label, 1_000.0, intended, started, completed, gc_ns)
    return TailRun(label, service, gc_ns, (0, 0, 0), max(gc_ns), 5_000_000 if window else None, [], run, window,
                   len(between), between)


def test_tail_verdicts_are_computed_from_the_runs() -> None:
    n = 1_000
    intended = [i * 1_000_000 for i in range(n)]  # 1 kHz
    service = [10_000] * n
    default = _synthetic_tail("default collector", service, intended, intended, [0] * n, None, [])
    # The policy froze from 1 ms to 6 ms: messages due at 1..5 ms started at 6 ms.
    started = [max(t, 6_000_000) if 1_000_000 <= t < 6_000_000 else t for t in intended]
    policy = _synthetic_tail("GcPolicy", service, intended, started, [0] * n, (1_000_000, 6_000_000), [5_000_000, 20_000, 30_000])
    resizes = [DictResize(7, "_live", 100, 200, 50), DictResize(7, "_entries", 90, 180, 50)]
    lines = tail_verdicts(default, policy, resizes)
    assert all(line.startswith("verdict: ") for line in lines) and len(lines) == 5
    assert "5 messages due during its 5.0 ms waited up to 5.0 ms" in lines[0]
    assert "touched 0.5 % of a 1.0-s stream" in lines[1]
    assert "2 of them here, 50.0 µs in all, the longest 30.0 µs" in lines[2]
    assert "inside 0 of 1,000 messages" in lines[3] and "too few to move the service-time p99" in lines[3]
    assert lines[4].startswith("verdict: message 7, at which the book's _entries and _live dicts grew")
    # Collections inside 2 % of the messages: the wording says p99 can see them.
    busy = _synthetic_tail("default collector", service, intended, intended, [1_000 if i % 50 == 0 else 0 for i in range(n)], None, [])
    assert "at least 1 %: the service-time p99 can see them" in tail_verdicts(busy, policy, [])[3]
    for line in [*lines, *tail_verdicts(busy, policy, [])]:  # issue 21: the verdict line itself fits in 160 characters
        assert len(line.splitlines()[0]) <= 160 and not line.splitlines()[1].lstrip().startswith("verdict:")


def test_the_rush_is_timed_and_its_collections_kept() -> None:
    default, policy = compare_tails(2_000, 500, rate=2_000.0)
    for tail in (default, policy):
        assert tail.rush is not None and len(tail.rush.service_ns) == 2_000
        assert all(d >= 0 and g in (0, 1, 2) for g, d, _ in tail.rush_collections)
    # 2,000 resting orders never reach GcPolicy's 50,000: no young collection in its rush, several in the default's.
    assert policy.rush_pauses(0) == [] and len(default.rush_pauses(0)) >= 1
    assert "ran no young collection" in rush_young_verdict(default, policy, SAFETY_THRESHOLDS[0])
    assert policy.rush_rows() == [["GcPolicy", "none", "0", "", "", "0.0"]]


def _rush_tail(label: str, service: list[int], collections: list[tuple[int, int, int]]) -> TailRun:
    completed = list(itertools.accumulate(service))
    rush = OpenLoopRun(label, 0.0, [0] * len(service), [c - s for c, s in zip(completed, service, strict=True)],
                       completed, [0] * len(service))
    tail = _synthetic_tail(label, [10_000], [0], [0], [0], None, [])
    tail.rush, tail.rush_collections = rush, collections
    return tail


def test_rush_young_verdict_says_rarer_and_longer_from_the_counts_and_medians() -> None:
    default = _rush_tail("default collector", [5_000] * 100, [(0, 100_000, 50_000 * k) for k in range(1, 9)])
    policy = _rush_tail("GcPolicy", [5_000] * 100, [(0, 20_000_000, 400_000)])
    line = rush_young_verdict(default, policy, 50_000)
    assert line.startswith("verdict: before the freeze") and "rarer and longer than" in line and "1 during the rush" in line
    assert len(line.splitlines()[0]) <= 160
    assert "median 20.00 ms" in line and "default collector's 8 (median 0.10 ms" in line
    assert [r[1:3] for r in policy.rush_rows()] == [["0", "1"]]
    fig = rush_timeline(default, policy, [DictResize(50, "_live", 1, 2, 5_461, "rush")])
    legend = " ".join(t.get_text() for t in fig.axes[1].get_legend().get_texts())
    assert "generation-0 collection: 1, longest 20.00 ms" in legend and "grew its table" in legend


def test_rush_resizes_happen_exactly_at_two_thirds_of_the_table() -> None:
    ramp, steady = tail_payloads(6_000, 200)
    grown = [r for r in dict_resizes(ramp, steady, rush=True) if r.phase == "rush"]
    assert grown and {r.name for r in grown} == {"_live", "_entries"}
    first = [r for r in grown if r.entries == 1]  # an empty dict gets its own table at its first insert
    assert len(first) == 2 and all(r.old_slots == 0 and not r.at_two_thirds for r in first)
    for r in grown:  # the ramp only inserts: every later growth is at the old table's usable 2/3
        if r.entries > 1:
            assert r.at_two_thirds and r.entries - 1 == usable_slots(r.old_slots)
    assert any(r.entries - 1 == 5_461 for r in grown), "5,461 = 2/3 of 8,192 slots"
    service = [5_000] * len(ramp)
    last = max(r.message for r in grown)
    service[last] = 2_000_000
    default, policy = _rush_tail("default collector", service, []), _rush_tail("GcPolicy", service, [])
    line = resize_verdict(default, policy, grown)
    assert line is not None and line.startswith(f"verdict: rush message {last:,} grew the book's _entries and _live dicts")
    assert "took 2.00 ms and 2.00 ms of service time" in line and "exactly its usable two thirds" in line
    assert len(line.splitlines()[0]) <= 160
    assert resize_verdict(default, policy, []) is None


def test_scheduled_source_ticks_idle_only_after_the_timeout_and_times_every_message() -> None:
    from edumatcher.chapters.garbage_collection.gc_tail import ScheduledSource
    from edumatcher.sinks import END

    monitor = GcMonitor()
    # Two messages due at once, then one 30 ms later: the first two never see an idle tick between them.
    source = ScheduledSource([b"a", b"b", b"c"], [0, 0, 30_000_000], monitor=monitor, timeout_ns=5_000_000)
    source.start()
    got = []
    while (p := source.poll()) is not END:
        got.append(p)
    assert got[:2] == [b"a", b"b"] and got[-1] == b"c"
    idle = got.count(None)
    assert idle == source.idle_ticks and 1 <= idle <= 6  # about 30 ms / 5 ms of nothing
    run = source.run()
    assert run.intended_ns == [0, 0, 30_000_000] and all(c >= s for c, s in zip(run.completed_ns, run.started_ns, strict=True))


def test_fresh_tail_round_trips_and_the_lesson_is_worded_from_the_numbers() -> None:
    from edumatcher.chapters.garbage_collection.gc_tail import fresh_tail, tail_lesson

    d = TailRun.from_dict(fresh_tail(False, rush_orders=500, build_orders=300, rate=3_000.0))
    p = TailRun.from_dict(fresh_tail(True, rush_orders=500, build_orders=300, rate=3_000.0))
    assert TailRun.from_dict(p.as_dict()) == p
    assert len(d.response_ns) == len(p.response_ns) == 300
    assert p.freeze_ns is not None and p.freeze_window is not None and d.freeze_window is None
    assert d.full_on_path() == []  # 800 orders are far from a full collection's threshold
    line = tail_lesson(d, p)
    assert line.startswith("verdict: the default collector ran no full collection") and len(line) <= 160
    # A default run with a 100 ms full collection inside a message, against a 90 ms freeze: alike, so "moved".
    run = d.run
    d.stream_collections = [(2, 100_000_000, run.completed_ns[10])]
    run.completed_ns[10] = run.started_ns[10] + 100_000_000
    p.freeze_ns = 90_000_000
    line = tail_lesson(d, p)
    assert line.startswith("verdict: GcPolicy moved the pause, not removed it: 90 ms freeze") and len(line) <= 160
    assert "100 ms full collection in a message" in line
    p.freeze_ns = 30_000_000  # a third of the full collection: the policy pays
    assert tail_lesson(d, p).startswith("verdict: GcPolicy pays here")
    p.freeze_ns = 300_000_000
    assert tail_lesson(d, p).startswith("verdict: GcPolicy does not pay here")
