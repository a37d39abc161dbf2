"""Tail latency with the default collector and with ``GcPolicy``, as clients see it: a small ``bench gc``.

``tail_run`` plays an opening ramp (resting orders that build a long-lived book:
the open's *rush*, all due at once and so handled back to back, each message
timed) then a steady stream through a fresh ``Engine``
with the open-loop generator (``edumatcher.kit.open_loop.drive``): every steady
message has an intended send time fixed in advance (Poisson arrivals at
``STEADY_RATE`` per second), and the engine's maintenance (``Engine.maintain``:
snapshots and the policy's tick) runs between messages, once per idle gap and
after every message, as ``Engine.run`` does. For each steady message it keeps

* **response time**: completion - intended send time, what the client waited,
  including time queued behind the freeze, a collection or a slow message;
* **service time** (``latencies_ns``): the ``handle`` call alone, and the
  collection time that fell inside it (``gc_ns``; ``GcMonitor.total_ns`` before
  and after), which gives service p99 *ex GC*.

With ``use_policy`` a ``GcPolicy`` on a market clock is started before the ramp
and armed at the open. During the rush its freeze is not due yet and no tick is
idle, so its only effect is its raised threshold: young collections become rarer
and each walks up to 50,000 young objects, inside whichever message allocated
past the threshold (``TailRun.rush_collections`` keeps every collection of the
rush, ``rush_young_verdict`` words the comparison). The steady stream starts at
the moment its freeze is due,
so the first idle gap of the stream runs the freeze (one full collection, then
``gc.freeze()``), and every later idle gap a young collection. The freeze runs
between messages, so no message's *service* time contains it; the messages due
while it runs wait for it, and their *response* times do.

``dict_resizes`` replays the same messages untimed and finds the messages, in
the rush and in the steady stream, at which the book's two big dicts grew their
tables (every entry rehashed into a new table, the other source of a slow
message); ``resize_verdict`` puts their service times beside the median. ``TailSetup`` is ``tail_run`` taken
apart, so a chapter can show its timed loop (the ``drive`` call) in a cell, and
``tail_verdicts`` words the conclusions from the numbers.

Chapter 10 runs ``isolated_tails``: each contender in a fresh process
(``fresh_tail`` via the kit's ``run_isolated``, so the freeze walks the engine's
objects, not a notebook kernel's), the stream played through ``Engine.run``
itself from a ``ScheduledSource`` that returns None (an idle tick) only after
``POLL_TIMEOUT_NS`` with nothing arriving, and a stream of ``BUILD_ORDERS`` more
resting orders, so that the default collector's next full collection falls in
it. ``tail_lesson`` words the outcome from the freeze and that collection.

>>> default, policy = compare_tails(300, 300, rate=20_000.0)
>>> default.label, policy.label, len(policy.latencies_ns), len(policy.response_ns)
('default collector', 'GcPolicy', 300, 300)
"""

from __future__ import annotations

import gc
import sys
import time
from dataclasses import dataclass, field

from edumatcher.benchmarks.gc_bench import steady_ops
from edumatcher.engine import Engine
from edumatcher.gc_policy import FREEZE_DELAY_S, GcAction, GcPolicy
from edumatcher.kit import LatencyReport, OpenLoopRun, arrival_offsets, drive
from edumatcher.kit.open_loop import spin_until
from edumatcher.metrics import GcMonitor, nearest_rank
from edumatcher.sinks import END, DiscardingSink
from edumatcher.workloads import SYMBOL, encode_workload, opening_ramp

__all__ = ["STEADY_RATE", "RUSH_ORDERS", "BUILD_ORDERS", "POLL_TIMEOUT_NS", "ScheduledSource", "stream_payloads",
           "fresh_tail", "isolated_tails", "tail_lesson", "TailRun", "TailSetup", "DictResize", "tail_run", "compare_tails", "dict_resizes",
           "tail_payloads", "TRADING_DAY_S", "tail_verdicts", "rush_young_verdict", "resize_verdict", "usable_slots"]

STEADY_RATE = 5_000.0
"""Offered rate of the steady stream, messages per second (Poisson arrivals): a light load for this engine."""

RUSH_ORDERS = 70_000
"""Chapter 10's opening rush: enough resting orders that the net count of new tracked
objects passes ``GcPolicy``'s generation-0 threshold of 50,000 (about 1.03 tracked
objects per resting order), so the rush shows what that threshold costs, and, with
``BUILD_ORDERS`` after it, that the default collector's first full collection
(about 85,000 net new tracked objects at thresholds 700, 10, 10) falls in the stream."""

TRADING_DAY_S = 6.5 * 3600
"""A trading day's continuous session, for scale: 6.5 hours (a US equities session; our choice of example)."""

_MONITOR_RING = 1 << 15


@dataclass
class TailRun:
    """One run's steady phase: service times (ns), the collection time inside each, what the collector did.

    ``collections``: collections inside a message, by generation. ``longest_pause_ns``:
    the most collection time inside one message. ``freeze_ns``: the policy's freeze (None: no freeze);
    ``freeze_window``: when it ran, ns from the start of the stream.
    ``idle_collections``: collections run between messages, by the engine's
    maintenance (with the policy: the freeze and its young collections);
    ``between_ns``: the collection time of each maintenance call that collected. ``run``: the open-loop record (intended, start and completion
    times), from which ``response_ns`` and ``report()`` come. ``rush``: the opening
    rush's record (all due at once: its service times count, its response times do
    not), and ``rush_collections`` every collection during it, ``(generation,
    duration_ns, ended_ns)`` with ``ended_ns`` on the rush's time axis.
    """

    label: str
    latencies_ns: list[int]
    gc_ns: list[int]
    collections: tuple[int, int, int]
    longest_pause_ns: int
    freeze_ns: int | None = None
    actions: list[str] = field(default_factory=list)
    run: OpenLoopRun | None = None
    freeze_window: tuple[int, int] | None = None
    idle_collections: int = 0
    between_ns: list[int] = field(default_factory=list)
    rush: OpenLoopRun | None = None
    rush_collections: list[tuple[int, int, int]] = field(default_factory=list)
    stream_collections: list[tuple[int, int, int]] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        """Plain data (JSON-ready), so a run made in a fresh process travels back (``from_dict``). O(n)."""
        return {"label": self.label, "latencies_ns": self.latencies_ns, "gc_ns": self.gc_ns,
                "collections": list(self.collections), "longest_pause_ns": self.longest_pause_ns,
                "freeze_ns": self.freeze_ns, "actions": self.actions,
                "run": self.run.as_dict() if self.run is not None else None,
                "freeze_window": list(self.freeze_window) if self.freeze_window is not None else None,
                "idle_collections": self.idle_collections, "between_ns": self.between_ns,
                "rush": self.rush.as_dict() if self.rush is not None else None,
                "rush_collections": [list(c) for c in self.rush_collections],
                "stream_collections": [list(c) for c in self.stream_collections]}

    @classmethod
    def from_dict(cls, d: dict) -> TailRun:
        """Rebuild a ``TailRun`` from ``as_dict``'s output. O(n)."""
        def run(x: dict | None) -> OpenLoopRun | None:
            return OpenLoopRun.from_dict(x) if x is not None else None
        window = d.get("freeze_window")
        return cls(d["label"], list(d["latencies_ns"]), list(d["gc_ns"]), tuple(d["collections"]),
                   int(d["longest_pause_ns"]), d.get("freeze_ns"), list(d.get("actions", [])), run(d.get("run")),
                   (int(window[0]), int(window[1])) if window else None, int(d.get("idle_collections", 0)),
                   list(d.get("between_ns", [])), run(d.get("rush")),
                   [tuple(c) for c in d.get("rush_collections", [])],
                   [tuple(c) for c in d.get("stream_collections", [])])

    def full_on_path(self) -> list[tuple[int, int]]:
        """Full (generation-2) collections of the stream that ran inside a message: ``(start_ns, end_ns)`` on the stream's axis. O(n log n)."""
        if self.run is None:
            return []
        import bisect
        started, completed = self.run.started_ns, self.run.completed_ns
        out = []
        for g, d, end in self.stream_collections:
            i = bisect.bisect_right(started, end) - 1
            if g == 2 and i >= 0 and end <= completed[i]:
                out.append((end - d, end))
        return out

    def rush_pauses(self, generation: int) -> list[int]:
        """Durations (ns) of the rush's collections of ``generation``, in order. O(n)."""
        return [d for g, d, _ in self.rush_collections if g == generation]

    def rush_rows(self) -> list[list[str]]:
        """One row per generation collected during the rush: count, median, longest, total (ms). O(n log n)."""
        rows = []
        for g in (0, 1, 2):
            d = sorted(self.rush_pauses(g))
            if d:
                rows.append([self.label, str(g), f"{len(d):,}", f"{d[len(d) // 2] / 1e6:,.2f}", f"{d[-1] / 1e6:,.2f}",
                             f"{sum(d) / 1e6:,.1f}"])
        return rows or [[self.label, "none", "0", "", "", "0.0"]]

    @property
    def response_ns(self) -> list[int]:
        """Completion - intended send time of each steady message (empty without an open-loop record). O(n)."""
        return self.run.response_ns if self.run is not None else []

    def ex_gc(self) -> list[int]:
        """Each service time minus the collection time inside it. O(n)."""
        return [t - g if t > g else 0 for t, g in zip(self.latencies_ns, self.gc_ns, strict=True)]

    def report(self) -> LatencyReport:
        """Response beside service time, in HDR histograms (``open_loop.LatencyReport``). O(n)."""
        if self.run is None:
            raise ValueError(f"{self.label}: no open-loop record, so no response times")
        return self.run.report()

    def queued_behind_freeze(self) -> int:
        """Messages whose intended send time fell while the freeze ran (0 without a freeze). O(n)."""
        if self.freeze_window is None or self.run is None:
            return 0
        start, end = self.freeze_window
        return sum(1 for t in self.run.intended_ns if start <= t < end)

    def summary(self) -> dict[str, float]:
        """Service p50, p99, p99 ex GC, p99.9, max, max ex GC and, with a record, response p50 ... max; µs. O(n log n)."""
        xs, ex = sorted(self.latencies_ns), sorted(self.ex_gc())
        out = {
            "p50": nearest_rank(xs, 50) / 1e3, "p99": nearest_rank(xs, 99) / 1e3,
            "p99 ex GC": nearest_rank(ex, 99) / 1e3, "p99.9": nearest_rank(xs, 99.9) / 1e3,
            "max": xs[-1] / 1e3, "max ex GC": ex[-1] / 1e3,
        }
        if self.run is not None:
            r = self.report().response
            out.update({"response p50": r.p50 / 1e3, "response p99": r.p99 / 1e3, "response p99.9": r.p99_9 / 1e3,
                        "response p99.99": r.p99_99 / 1e3, "response max": r.max / 1e3})
        return out


class _MarketClock:
    """The policy's seconds: pinned during the ramp, then following real time from a chosen market time."""

    def __init__(self) -> None:
        self.base = 0.0
        self.live = False

    def __call__(self) -> float:
        return self.base + time.perf_counter() if self.live else self.base

    def follow_from(self, seconds: float) -> None:
        self.base, self.live = seconds - time.perf_counter(), True


def tail_payloads(ramp_orders: int, steady_messages: int, seed: int = 1) -> tuple[list[bytes], list[bytes]]:
    """The ramp's and the steady stream's payloads (``bench gc``'s workload pieces), encoded once. O(n)."""
    return encode_workload(opening_ramp(ramp_orders, seed)), encode_workload(steady_ops(steady_messages, seed))


class TailSetup:
    """A fresh ``Engine`` ready for the opening rush and then an open-loop stream; a context manager.

    On entry: a full collection (a clean slate, as ``bench gc`` does), a
    ``GcMonitor`` installed, and with ``use_policy`` a ``GcPolicy`` started and
    armed on a market clock pinned at the open. Drive the rush (``ramp``, all due
    at once) through ``handle`` and ``maintain`` with ``open_loop.drive``, then
    call ``open(rush)``: it keeps the rush's record and collections and moves the
    market clock to the moment the freeze is due; the clock then follows real
    time. Drive the steady stream, then ``result(run)`` after the block. On exit
    the policy is stopped (thresholds restored, unfrozen) and the monitor
    removed, even on error.
    """

    def __init__(self, ramp: list[bytes], *, use_policy: bool) -> None:
        self.ramp = ramp
        self.label = "GcPolicy" if use_policy else "default collector"
        self.market = _MarketClock()
        self.policy = GcPolicy(self.market) if use_policy else None
        self.engine = Engine([SYMBOL], gc_policy=self.policy)
        self.handle = self.engine.handle
        self.monitor = GcMonitor(_MONITOR_RING)
        self._sink = DiscardingSink()
        self._between = [0, 0, 0]  # collections run by maintenance (between messages), by generation
        self._freeze: list[int] = []  # perf_counter_ns at the start and end of the maintenance call that froze
        self._froze: list[GcAction] = []
        self._between_ns: list[int] = []
        self._head: list[GcAction] = []
        self._start_counts = [0, 0, 0]
        self._during = [0, 0, 0]
        self._rush: OpenLoopRun | None = None
        self._rush_collections: list[tuple[int, int, int]] = []

    def maintain(self, idle: bool) -> None:
        """``Engine.maintain`` between messages, counting the collections it runs and timing the freeze."""
        monitor, policy, between = self.monitor, self.policy, self._between
        counts = monitor.count_by_generation
        c0, c1, c2, spent = counts[0], counts[1], counts[2], monitor.total_ns
        if policy is not None and policy.freeze_at is not None:
            t0 = time.perf_counter_ns()
            self.engine.maintain(self._sink, idle)
            if policy.freeze_at is None:  # this call froze: keep when, and the policy's own record of it
                self._freeze.extend((t0, time.perf_counter_ns()))
                self._froze.append(policy.log[-1])
        else:
            self.engine.maintain(self._sink, idle)
        between[0] += counts[0] - c0
        between[1] += counts[1] - c1
        between[2] += counts[2] - c2
        if monitor.total_ns != spent:
            self._between_ns.append(monitor.total_ns - spent)

    def __enter__(self) -> TailSetup:
        gc.collect()
        try:
            self.monitor.install()
            if self.policy is not None:
                self.policy.start()
                self.policy.arm_freeze()
        except BaseException:
            self.__exit__()
            raise
        return self

    def open(self, rush: OpenLoopRun) -> None:
        """The rush is over: keep its record and its collections; from now on the freeze is due. O(collections)."""
        self._rush = rush
        origin = rush.origin_ns
        self._rush_collections = [(g, d, end - origin) for g, d, end in self.monitor.records()]
        self._head = list(self.policy.log) if self.policy is not None else []
        self._between, self._between_ns = [0, 0, 0], []  # count the steady stream's alone
        self.market.follow_from(FREEZE_DELAY_S)  # the open's rush is over: the freeze is due from now on
        self._start_counts = list(self.monitor.count_by_generation)

    def __exit__(self, *exc: object) -> None:
        counts = self.monitor.count_by_generation
        self._during = [counts[k] - self._start_counts[k] for k in range(3)]
        self.monitor.uninstall()
        if self.policy is not None:
            self.policy.stop()

    def result(self, run: OpenLoopRun) -> TailRun:
        """The ``TailRun`` of ``run`` (call after the ``with`` block)."""
        # Collections inside messages: all the stream's collections but those run between messages.
        on_path = [max(d - b, 0) for d, b in zip(self._during, self._between, strict=True)]
        window = (self._freeze[0] - run.origin_ns, self._freeze[1] - run.origin_ns) if self._freeze else None
        # The policy's routine young collections would flood its log (a deque of LOG_LENGTH): keep the rest.
        actions = [a.action for a in self._head] + [a.action for a in self._froze]
        if self.policy is not None:
            actions.append("stop")
        return TailRun(
            self.label, run.service_ns, run.gc_ns, (on_path[0], on_path[1], on_path[2]), max(run.gc_ns, default=0),
            self._froze[0].pause_ns if self._froze else None, actions, run, window, sum(self._between),
            self._between_ns, self._rush, self._rush_collections,
        )


def tail_run(ramp: list[bytes], steady: list[bytes], *, use_policy: bool, rate: float = STEADY_RATE, seed: int = 1) -> TailRun:
    """Run ``ramp`` back to back (all due at once), then ``steady`` open-loop at ``rate`` msg/s (Poisson, ``seed``). O(n).

    Equivalent to::

        with TailSetup(ramp, use_policy=use_policy) as t:
            t.open(drive(t.handle, ramp, [0] * len(ramp), maintain=t.maintain, gc_monitor=t.monitor, label=t.label))
            run = drive(t.handle, steady, arrival_offsets(len(steady), rate, seed=seed),
                        maintain=t.maintain, gc_monitor=t.monitor, offered_rate=rate, label=t.label)
        return t.result(run)
    """
    with TailSetup(ramp, use_policy=use_policy) as t:
        t.open(drive(t.handle, ramp, [0] * len(ramp), maintain=t.maintain, gc_monitor=t.monitor, label=t.label))
        run = drive(t.handle, steady, arrival_offsets(len(steady), rate, seed=seed),
                    maintain=t.maintain, gc_monitor=t.monitor, offered_rate=rate, label=t.label)
    return t.result(run)


def compare_tails(ramp_orders: int = 20_000, steady_messages: int = 6_000, *, rate: float = STEADY_RATE, seed: int = 1) -> tuple[TailRun, TailRun]:
    """The same ramp and steady stream with the default collector, then with ``GcPolicy``. O(n).

    Payloads are encoded once, before either run (``tail_payloads``).
    """
    ramp, steady = tail_payloads(ramp_orders, steady_messages, seed)
    return (tail_run(ramp, steady, use_policy=False, rate=rate, seed=seed),
            tail_run(ramp, steady, use_policy=True, rate=rate, seed=seed))


def usable_slots(slots: int) -> int:
    """Entries a CPython dict table of ``slots`` slots holds before it must grow: two thirds, rounded down.

    CPython's ``USABLE_FRACTION(n)`` is ``(n << 1) / 3``; inserting one entry more
    (deleted entries still hold their slots until the next resize) makes a new,
    larger table and rehashes every live entry into it.

    >>> usable_slots(8), usable_slots(65_536)
    (5, 43690)
    """
    return (slots << 1) // 3


@dataclass(frozen=True)
class DictResize:
    """A message at which one of the book's dicts grew its table: bytes before and after, entries after.

    ``message`` indexes ``phase``'s messages: ``"rush"`` (the opening ramp) or ``"steady"``.
    """

    message: int
    name: str
    bytes_before: int
    bytes_after: int
    entries: int
    phase: str = "steady"

    @property
    def old_slots(self) -> int:
        """The smallest table (a power of two, at least 8 slots) whose 2/3 mark the entries before this insert reach.

        0 for a dict's first entry: an empty dict has no table of its own yet.
        """
        if self.entries <= 1:
            return 0
        slots = 8
        while usable_slots(slots) < self.entries - 1:
            slots <<= 1
        return slots

    @property
    def at_two_thirds(self) -> bool:
        """True when the entries before the insert were exactly the old table's usable 2/3 (no deleted slots counted)."""
        return self.entries > 1 and usable_slots(self.old_slots) == self.entries - 1


def dict_resizes(ramp: list[bytes], steady: list[bytes], *, rush: bool = False) -> list[DictResize]:
    """Replay ``ramp`` then ``steady`` untimed and report each message that grew ``_live`` or ``_entries``. O(n).

    Steady messages always; with ``rush``, the ramp's messages too (``phase="rush"``).
    ``sys.getsizeof`` of a dict counts its table, so a change means the table was
    reallocated and every entry rehashed into it, inside that message. Table
    sizes depend only on the sequence of inserts and deletes, so the same
    messages resize in any run of the same workload. (A resize that keeps the
    size, to clear deleted slots, would not show here.)
    """
    engine = Engine([SYMBOL])
    book = engine.books[SYMBOL]
    handle = engine.handle
    watched = {"_live": book._live, "_entries": book._entries}
    sizes = {name: sys.getsizeof(d) for name, d in watched.items()}
    out = []
    for phase, payloads in (("rush", ramp), ("steady", steady)):
        watch = phase == "steady" or rush
        if not watch:
            for payload in payloads:
                handle(payload)
            sizes = {name: sys.getsizeof(d) for name, d in watched.items()}
            continue
        for i, payload in enumerate(payloads):
            handle(payload)
            for name, d in watched.items():
                now = sys.getsizeof(d)
                if now != sizes[name]:
                    out.append(DictResize(i, name, sizes[name], now, len(d), phase))
                    sizes[name] = now
    return out


def _ms(ns: float) -> str:
    return f"{ns / 1e6:,.2f} ms"


def rush_young_verdict(default: TailRun, policy: TailRun, threshold: int) -> str:
    """One ``verdict:`` line on the young (generation-0) collections of the two rushes. O(n log n).

    Its wording depends only on the counts, which allocation alone decides (the same
    workload allocates the same objects in every run), and on whether the policy's
    median young pause is longer than the default's, by a margin of ten times or more
    in practice (50,000 young objects against the default threshold's hundreds).
    """
    d, p = sorted(default.rush_pauses(0)), sorted(policy.rush_pauses(0))
    if not p:
        return (f"verdict: during the rush GcPolicy ran no young collection: its threshold of {threshold:,} net new "
                f"objects was not reached\n    the default collector ran {len(d):,}; make the rush longer to see its cost.")
    dm, pm = (d[len(d) // 2] if d else 0), p[len(p) // 2]
    shape = ("rarer and longer than the default collector's" if len(p) < len(d) and pm > dm
             else "not rarer and longer than the default's: suspect the machine")
    return (f"verdict: before the freeze, GcPolicy's threshold of {threshold:,} made young collections {shape}\n"
            f"    {len(p):,} during the rush (median {_ms(pm)}, longest {_ms(p[-1])}) against the default collector's "
            f"{len(d):,} (median {_ms(dm)}, longest {_ms(d[-1]) if d else '-'}); each ran inside the message that "
            "allocated past the threshold, so its whole pause is in that message's service time.")


def resize_verdict(default: TailRun, policy: TailRun, resizes: list[DictResize]) -> str | None:
    """One ``verdict:`` line on the rush message that grew the largest dict table, from the rush records (None: no rush resize). O(n log n)."""
    grown = [r for r in resizes if r.phase == "rush"]
    if not grown or default.rush is None or policy.rush is None:
        return None
    last = max(grown, key=lambda r: (r.bytes_after, r.message))
    i = last.message
    names = " and ".join(sorted({r.name for r in grown if r.message == i}))
    ds, ps = default.rush.service_ns, policy.rush.service_ns
    med_d, med_p = sorted(ds)[len(ds) // 2], sorted(ps)[len(ps) // 2]
    where = ("exactly its usable two thirds" if last.at_two_thirds else "two thirds of it, deleted slots counted")
    return (f"verdict: rush message {i:,} grew the book's {names} dicts and took {_ms(ds[i])} and {_ms(ps[i])} of "
            f"service time, against rush medians of {med_d / 1e3:,.1f} and {med_p / 1e3:,.1f} µs\n"
            f"    (default collector, then GcPolicy; collection time inside it: {_ms(default.rush.gc_ns[i])} "
            f"and {_ms(policy.rush.gc_ns[i])}): with {last.entries - 1:,} entries its "
            f"{last.old_slots:,}-slot table was full ({where}), so the insert rehashed every entry into a new table "
            f"({last.bytes_before:,} -> {last.bytes_after:,} bytes).")


def tail_verdicts(default: TailRun, policy: TailRun, resizes: list[DictResize]) -> list[str]:
    """The chapter's conclusions about the two runs, as ``verdict:`` lines computed from their numbers. O(n log n).

    Each line's wording is fixed by facts that hold by construction (a pause between
    messages is in no service time) or by wide margins; only its numbers vary.
    """
    n = len(policy.latencies_ns)
    lines = []
    d, p = default.summary(), policy.summary()
    if policy.freeze_window is not None and policy.run is not None:
        start, end = policy.freeze_window
        waited = [r for r, t in zip(policy.response_ns, policy.run.intended_ns, strict=True) if start <= t < end]
        k = len(waited)
        lines.append(
            f"verdict: the freeze ran between messages, so no service time contains it, yet {k:,} messages due during "
            f"its {(end - start) / 1e6:,.1f} ms waited up to {max(waited, default=0) / 1e6:,.1f} ms\n"
            f"    it is on the clients' path: response max {p['response max'] / 1e3:,.1f} ms, "
            f"service max {p['max'] / 1e3:,.1f} ms.")
        seconds = policy.run.intended_ns[-1] / 1e9 if policy.run.intended_ns[-1] else 1.0
        day = policy.run.offered_rate * TRADING_DAY_S
        lines.append(
            f"verdict: a once-a-day freeze at {policy.run.offered_rate:,.0f} msg/s touches {100 * k / day:.5f} % of "
            f"{day:,.0f} messages, "
            + ("under the 1 % p99 ignores: a day's p99 would not show it" if k / day < 0.01 else
               "at least the 1 % p99 ignores: a day's p99 would show it")
            + f"\n    here the freeze touched {100 * k / n:.1f} % of a {seconds:.1f}-s stream (response p99 "
            f"{p['response p99'] / 1e3:,.1f} ms); the max always shows it.")
        # The first collection between messages was the freeze's own. How many idle ticks follow depends on
        # whether the queue behind the freeze drained (on a busy machine it may not): the count varies, not the words.
        young = sorted(policy.between_ns[1:])
        lines.append(
            "verdict: after the freeze, each collection GcPolicy ran between messages delays a message due during it, "
            "in response time, never in service time\n"
            f"    {len(young):,} of them here, "
            f"{sum(young) / 1e3:,.1f} µs in all, the longest {(young[-1] if young else 0) / 1e3:,.1f} µs "
            "(idle ticks come only once the queue behind the freeze has drained).")
    in_default = sum(1 for g in default.gc_ns if g)
    in_policy = sum(1 for g in policy.gc_ns if g)
    share = 100 * max(in_default, in_policy) / n
    lines.append(
        f"verdict: collections fell inside {in_default:,} of {n:,} messages with the default collector, {in_policy:,} with "
        "GcPolicy: "
        + ("under 1 %, too few to move the service-time p99\n"
           f"    {share:.2f} % at most: they cannot lift the p99 above what the messages without a collection "
           "give at that rank; the two p99s "
           f"here ({d['p99']:,.1f} vs {p['p99']:,.1f} µs) come from one run each, not interleaved, so this run "
           "cannot attribute their gap to anything: compare the max, p99.9 and response time instead."
           if share < 1 else
           f"at least 1 %: the service-time p99 can see them\n    ({share:.2f} % at most; "
           f"p99 {d['p99']:,.1f} vs {p['p99']:,.1f} µs)."))
    at = sorted({r.message for r in resizes if r.phase == "steady"})
    if at:
        i = at[0]
        names = " and ".join(sorted({r.name for r in resizes if r.message == i and r.phase == "steady"}))
        lines.append(
            f"verdict: message {i:,}, at which the book's {names} dicts grew their tables, took "
            f"{default.latencies_ns[i] / 1e3:,.1f} and {policy.latencies_ns[i] / 1e3:,.1f} µs against medians of "
            f"{d['p50']:,.1f} and {p['p50']:,.1f} µs\n"
            "    service time, default collector then GcPolicy; the message was found by replaying the workload untimed.")
    return lines


# ------------------------------------------------- the chapter's run: a fresh process, the run loop's own idle rule

POLL_TIMEOUT_NS = 1_000_000
"""How long the stream's source waits for a message before ``poll()`` returns None (an idle tick): 1 ms.

A network source polled with a timeout (``zmq.Poller.poll(timeout)``, ``selectors``)
behaves so: ``Engine.run`` ticks the policy as idle only when nothing has arrived
for that long, not in every gap between two arrivals."""

BUILD_ORDERS = 35_000
"""Resting orders that keep arriving after the rush (the book still filling): enough
net new tracked objects that the default collector runs a full collection inside
the stream on CPython 3.10-3.12 (thresholds 700, 10, 10)."""


class ScheduledSource:
    """An ``Engine.run`` source playing payloads at intended times fixed in advance, and timing each one.

    ``poll()``: if the next message is due, return it; otherwise wait for it up to
    ``timeout_ns`` and, if it is still not due, return None, so ``Engine.run``
    ticks as idle only when nothing has arrived for ``timeout_ns``. A message's
    completion is the next ``poll()`` (its frames sent, the busy tick done), and
    the collection time between its start and completion is read from ``monitor``.
    Idle ticks that took ``NOTE_NS`` or more are kept in ``maintenance``; the one
    that froze (``policy.freezes`` grew) is ``freeze_window``. Call ``start()`` first.
    """

    NOTE_NS = 10_000

    def __init__(self, payloads: list[bytes], offsets_ns: list[int], *, monitor: GcMonitor,
                 policy: GcPolicy | None = None, timeout_ns: int = POLL_TIMEOUT_NS, label: str = "",
                 offered_rate: float = 0.0) -> None:
        n = len(payloads)
        self.payloads, self.offsets, self.monitor, self.policy = payloads, offsets_ns, monitor, policy
        self.timeout_ns, self.label, self.offered_rate = timeout_ns, label, offered_rate
        self.intended, self.started, self.completed, self.gc_ns = [0] * n, [0] * n, [0] * n, [0] * n
        self.maintenance: list[tuple[int, int, bool]] = []
        self.freeze_window: tuple[int, int] | None = None
        self.idle_ticks = 0
        self.t0 = 0
        self._i = 0
        self._inflight = False
        self._idle_at = 0
        self._freezes = 0
        self._g0 = 0

    def start(self) -> None:
        """Time zero of the schedule: now."""
        self.t0 = time.perf_counter_ns()

    def poll(self) -> bytes | None | object:
        """The next payload once due, None after ``timeout_ns`` of nothing (idle), ``END`` after the last. O(1)."""
        clock = time.perf_counter_ns
        now = clock()
        t0, i = self.t0, self._i
        if self._inflight:
            self._inflight = False
            self.completed[i - 1] = now - t0
            self.gc_ns[i - 1] = self.monitor.total_ns - self._g0
        elif self._idle_at:
            if now - self._idle_at >= self.NOTE_NS:
                self.maintenance.append((self._idle_at - t0, now - t0, True))
            if self.policy is not None and self.policy.freezes != self._freezes:
                self.freeze_window = (self._idle_at - t0, now - t0)
            self._idle_at = 0
        if i == len(self.payloads):
            return END
        due = t0 + self.offsets[i]
        if now < due:
            spin_until(min(due, now + self.timeout_ns))
            now = clock()
            if now < due:  # nothing arrived within the timeout: an idle tick
                self.idle_ticks += 1
                self._idle_at = now
                self._freezes = self.policy.freezes if self.policy is not None else 0
                return None
        self.intended[i], self.started[i] = due - t0, now - t0
        self._g0 = self.monitor.total_ns
        self._i = i + 1
        self._inflight = True
        return self.payloads[i]

    def run(self) -> OpenLoopRun:
        """What was recorded, as an ``OpenLoopRun`` (times in ns from ``start()``)."""
        n = self._i
        return OpenLoopRun(self.label, self.offered_rate, self.intended[:n], self.started[:n], self.completed[:n],
                           self.gc_ns[:n], self.maintenance, self.t0)


def stream_payloads(rush_orders: int, build_orders: int, seed: int = 1) -> tuple[list[bytes], list[bytes]]:
    """The rush (``rush_orders`` resting orders) and the stream: ``build_orders`` more of the same opening ramp. O(n)."""
    payloads = encode_workload(opening_ramp(rush_orders + build_orders, seed))
    return payloads[:rush_orders], payloads[rush_orders:]


def fresh_tail(use_policy: bool, rush_orders: int = RUSH_ORDERS, build_orders: int = BUILD_ORDERS,
               rate: float = STEADY_RATE, seed: int = 1, timeout_ns: int = POLL_TIMEOUT_NS) -> dict[str, object]:
    """One contender, meant for a fresh process (``run_isolated``): the rush, then the stream through ``Engine.run``.

    The rush is played back to back (``drive``, all due at once); then
    ``Engine.run`` polls a ``ScheduledSource`` (Poisson arrivals at ``rate``, an
    idle tick after ``timeout_ns`` of nothing). Returns ``TailRun.as_dict()``. O(n).
    """
    ramp, stream = stream_payloads(rush_orders, build_orders, seed)
    offsets = arrival_offsets(len(stream), rate, kind="poisson", seed=seed)
    with TailSetup(ramp, use_policy=use_policy) as t:
        t.open(drive(t.handle, ramp, [0] * len(ramp), maintain=t.maintain, gc_monitor=t.monitor, label=t.label))
        source = ScheduledSource(stream, offsets, monitor=t.monitor, policy=t.policy, timeout_ns=timeout_ns,
                                 label=t.label, offered_rate=rate)
        before = t.monitor.pos
        source.start()
        t.engine.run(source, DiscardingSink())
        new = t.monitor.pos - before  # the stream's collections: the latest ``new`` records of the ring
        stream_records = t.monitor.records()[len(t.monitor.records()) - new:] if new else []
    run = source.run()
    tail = t.result(run)
    tail.freeze_window = source.freeze_window
    tail.idle_collections = source.idle_ticks
    tail.stream_collections = [(g, d, end - run.origin_ns) for g, d, end in stream_records]
    froze = [a for a in (t.policy.log if t.policy is not None else []) if a.action in ("freeze", "forced-freeze")]
    tail.freeze_ns = froze[0].pause_ns if froze else None
    if t.policy is not None:  # the policy's own log: start, arm, the freeze (idle or forced), stop; not its young collections
        tail.actions = [a.action for a in t.policy.log if a.action not in ("young", "full")]
    # Collections inside a message, by generation; the rest ran at idle ticks (between messages).
    import bisect
    on_path = [0, 0, 0]
    tail.between_ns = []
    for g, d, end in tail.stream_collections:
        i = bisect.bisect_right(run.started_ns, end) - 1
        if i >= 0 and end <= run.completed_ns[i]:
            on_path[g] += 1
        else:
            tail.between_ns.append(d)
    tail.collections = (on_path[0], on_path[1], on_path[2])
    return tail.as_dict()


def isolated_tails(rush_orders: int = RUSH_ORDERS, build_orders: int = BUILD_ORDERS, *, rate: float = STEADY_RATE,
                   seed: int = 1, timeout: float = 600.0) -> tuple[TailRun, TailRun]:
    """``fresh_tail`` for the default collector, then for ``GcPolicy``, each in its own fresh process. O(n).

    A fresh process holds the engine and little else, so the freeze walks the
    book, not a notebook kernel's objects.
    """
    from edumatcher.kit import run_isolated

    return tuple(TailRun.from_dict(run_isolated(  # type: ignore[return-value]
        "edumatcher.chapters.garbage_collection.gc_tail:fresh_tail",
        {"use_policy": p, "rush_orders": rush_orders, "build_orders": build_orders, "rate": rate, "seed": seed},
        timeout=timeout)) for p in (False, True))


LESSON_FACTOR = 3.0
"""The freeze and the default's longest full collection must differ by this factor before the
lesson says one side won. Both walk about the same objects (here the full collection a
quarter more: the book grew), and on a busy machine either pause's wall time can double,
so a smaller gap says nothing about the policy. The pauses are compared, not the longest
responses: a response adds the time the queue behind the pause took to drain, which on a
shared machine varies even more."""


def tail_lesson(default: TailRun, policy: TailRun) -> str:
    """The tail section's one-line verdict, chosen from the two runs' numbers (never fixed in advance). O(n log n).

    Which case holds is decided by what the collector did (a full collection on the
    message path or not, a freeze or not) and by the freeze against the longest such
    collection, compared with a factor of ``LESSON_FACTOR``; the longest response
    times are printed beside them.
    """
    full = default.full_on_path()
    dmax, pmax = max(default.response_ns) / 1e6, max(policy.response_ns) / 1e6
    freeze = f"a {policy.freeze_ns / 1e6:,.0f} ms freeze" if policy.freeze_ns else "no freeze"
    if not full:
        return (f"verdict: the default collector ran no full collection in this stream: GcPolicy bought nothing "
                f"here and cost {freeze} (max response {pmax:,.0f} vs {dmax:,.0f} ms)")
    pause = max(b - a for a, b in full) / 1e6
    if policy.freeze_ns is None:
        return (f"verdict: GcPolicy never froze in this stream, while the default collector ran a {pause:,.0f} ms full "
                f"collection (max response {pmax:,.0f} vs {dmax:,.0f} ms)")
    fz = policy.freeze_ns / 1e6
    if fz * LESSON_FACTOR <= pause:
        head = "GcPolicy pays here"
    elif pause * LESSON_FACTOR <= fz:
        head = "GcPolicy does not pay here"
    else:
        head = "GcPolicy moved the pause, not removed it"
    when = "when idle" if "freeze" in policy.actions else "forced while busy"
    at_freeze = policy.freeze_window[0] / 1e9 if policy.freeze_window else 0.0
    at_full = max(full, key=lambda w: w[1] - w[0])[0] / 1e9
    return (f"verdict: {head}: {freeze[2:]} {when} at {at_freeze:.1f} s vs {pause:,.0f} ms full collection in a "
            f"message at {at_full:.1f} s; max response {pmax:,.0f} vs {dmax:,.0f} ms")
