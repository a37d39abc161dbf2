"""The cyclic collector, observed: what reference counting frees, what only a collection frees, and what a pause costs.

Chapter 07's experiments, each leaving the collector as it found it (thresholds,
enabled flag, nothing left frozen):

* ``refcount_and_cycle`` shows a plain object freed the moment its last
  reference goes, and a two-object cycle that survives until ``gc.collect()``.
* ``collection_pauses`` times full and young collections with a real
  ``OrderBook`` of growing size alive, and counts the objects the collector tracks.
* ``freeze_effect`` times a full collection before and after ``gc.freeze()``.
* ``recorded_collections`` lets allocation trigger collections on its own and
  returns what a ``GcMonitor`` on ``gc.callbacks`` saw.
* ``policy_walkthrough`` drives a ``GcPolicy`` with a fake clock through a
  trading day and returns its log, with the collector's settings after each step.
* ``frozen_cycles`` shows, with ``tracemalloc``, that a cycle which becomes
  garbage while frozen is not reclaimed until it is unfrozen.

``frozen()`` is the guard every freeze here goes through: it refuses to start if
something else already froze objects (``gc.unfreeze()`` cannot tell theirs from
ours), and always unfreezes on the way out.

>>> [step for step, _ in refcount_and_cycle()][:2]
['del plain', 'del a, b (a cycle)']
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..book import OrderBook
from ..gc_policy import GcPolicy
from ..measure import Measurement, collector, measure
from ..metrics import GcMonitor
from ..workloads import SYMBOL, apply, opening_ramp

__all__ = [
    "collector_state", "frozen", "refcount_and_cycle", "resting_book", "tracked_objects",
    "PauseRow", "collection_pauses", "freeze_effect", "recorded_collections",
    "PolicyStep", "policy_walkthrough", "FrozenCycles", "frozen_cycles",
]


def collector_state() -> tuple[tuple[int, ...], bool, int]:
    """``(gc.get_threshold(), gc.isenabled(), gc.get_freeze_count())``: what every experiment must restore."""
    return gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()


@contextmanager
def frozen() -> Iterator[int]:
    """Freeze every tracked object for the block, then unfreeze; yields how many were frozen.

    Raises ``RuntimeError`` before freezing if objects are already frozen: the
    unfreeze at the end would release someone else's freeze too.
    """
    if gc.get_freeze_count():
        raise RuntimeError(f"{gc.get_freeze_count()} objects are already frozen by someone else; "
                           "this experiment would unfreeze them too, so it refuses to run")
    gc.freeze()
    try:
        yield gc.get_freeze_count()
    finally:
        gc.unfreeze()


class _Node:
    """A plain object that can point at another one (and be weakly referenced)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.peer: _Node | None = None


def refcount_and_cycle() -> list[tuple[str, str]]:
    """Free a plain object and a two-object cycle; return ``(step, what was freed by then)`` pairs.

    ``weakref.finalize`` records each object's death. Automatic collection is off
    during the demonstration (and restored after), so nothing but the steps
    shown frees anything.
    """
    freed: list[str] = []
    steps: list[tuple[str, str]] = []

    def seen() -> str:
        return ", ".join(freed) if freed else "nothing"

    with collector(False):
        plain = _Node("plain")
        weakref.finalize(plain, freed.append, "plain")
        del plain
        steps.append(("del plain", seen()))
        a, b = _Node("a"), _Node("b")
        a.peer, b.peer = b, a
        weakref.finalize(a, freed.append, "a")
        weakref.finalize(b, freed.append, "b")
        del a, b
        steps.append(("del a, b (a cycle)", seen()))
        found = gc.collect()
        steps.append((f"gc.collect() (found {found} unreachable objects)", seen()))
    return steps


def resting_book(resting: int, seed: int = 1) -> OrderBook:
    """An ``OrderBook`` holding ``resting`` non-crossing orders from ``workloads.opening_ramp``. O(n log n)."""
    book = OrderBook(SYMBOL)
    apply(book, opening_ramp(resting, seed))
    return book


def tracked_objects() -> int:
    """How many objects the collector tracks in this process right now. O(objects)."""
    return len(gc.get_objects())


@dataclass(frozen=True)
class PauseRow:
    """A full collection's pause with a book of ``resting`` orders alive, and the objects tracked at the time."""

    resting: int
    tracked: int
    full: Measurement


def collection_pauses(sizes: Sequence[int], *, repeat: int = 5, seed: int = 1) -> list[PauseRow]:
    """Time a full collection (``gc.collect()``) with a book of each size alive.

    A size of 0 measures the process as it is: the interpreter, the notebook and
    everything already imported. Each sample is one collection (``number=1``).
    O(sizes x (build + repeat x tracked objects)).
    """
    rows: list[PauseRow] = []
    for resting in sizes:
        book = resting_book(resting, seed) if resting else None
        gc.collect()
        tracked = tracked_objects()
        full = measure(gc.collect, number=1, repeat=repeat, label=f"full collection, {resting:,} resting orders")
        rows.append(PauseRow(resting, tracked, full))
        del book
    gc.collect()
    return rows


def freeze_effect(resting: int, *, repeat: int = 5, seed: int = 1) -> tuple[Measurement, Measurement, int]:
    """Time a full collection with a book of ``resting`` orders alive, then again after ``gc.freeze()``.

    Returns ``(before, after, frozen_objects)``. The freeze is undone before
    returning (see ``frozen``).
    """
    book = resting_book(resting, seed)
    gc.collect()
    before = measure(gc.collect, number=1, repeat=repeat, label=f"full collection, {resting:,} resting orders")
    with frozen() as count:
        after = measure(gc.collect, number=1, repeat=repeat, label="the same after gc.freeze()")
    del book
    gc.collect()
    return before, after, count


def recorded_collections(containers: int = 50_000, *, keep_every: int = 4) -> list[tuple[int, int]]:
    """Allocate ``containers`` small lists (keeping one in ``keep_every``) with automatic collection on.

    Returns the ``(generation, duration_ns)`` of every collection the allocation
    triggered, as a ``GcMonitor`` on ``gc.callbacks`` recorded them. The monitor
    is removed and the enabled flag restored afterwards.
    """
    kept: list[list[int]] = []
    with collector(True), GcMonitor(size=1 << 12) as monitor:
        for i in range(containers):
            item = [i]
            if i % keep_every == 0:
                kept.append(item)
    return [(g, d) for g, d, _ in monitor.records()]


@dataclass(frozen=True)
class PolicyStep:
    """One step of the walkthrough: market time, what happened, what the policy did, the collector afterwards."""

    at: float
    event: str
    action: str
    pause_ns: int
    threshold: tuple[int, ...]
    frozen: int


def policy_walkthrough(*, busy_market: bool = False) -> tuple[list[PolicyStep], list[tuple[float, str, int]]]:
    """Drive a ``GcPolicy`` through a scripted day with a fake clock; return the steps and the policy's own log.

    The normal day: start at the pre-open, arm the freeze at the open (t = 0),
    busy ticks, an idle tick before the freeze is due (a young collection), the
    freeze due at 180 s while busy (nothing), an idle tick at 200 s (the freeze),
    later idle ticks (young, then a full collection 300 s after the freeze), stop.
    With ``busy_market`` no tick is ever idle, so the freeze is forced 60 s after
    it was due. Real collections run; ``stop()`` restores the collector.
    """
    if gc.get_freeze_count():
        raise RuntimeError("objects are already frozen; the walkthrough's stop() would not unfreeze its own freeze")
    now = [-60.0]
    policy = GcPolicy(lambda: now[0])
    steps: list[PolicyStep] = []

    def step(at: float, event: str, act: Callable[[], Any]) -> None:
        now[0] = at
        logged = len(policy.log)
        act()
        new = list(policy.log)[logged:]
        action = ", ".join(a.action for a in new) or "nothing"
        steps.append(PolicyStep(at, event, action, sum(a.pause_ns for a in new), gc.get_threshold(), gc.get_freeze_count()))

    if busy_market:
        script: list[tuple[float, str, bool | None]] = [
            (-60.0, "engine starts (pre-open)", None), (0.0, "the open: continuous trading", None),
            (179.0, "message handled", False), (181.0, "message handled (freeze due)", False),
            (239.0, "message handled", False), (241.0, "message handled (60 s past due)", False),
            (300.0, "message handled", False),
        ]
    else:
        script = [
            (-60.0, "engine starts (pre-open)", None), (0.0, "the open: continuous trading", None),
            (10.0, "message handled", False), (30.0, "idle tick", True), (179.0, "message handled", False),
            (185.0, "message handled (freeze due)", False), (200.0, "idle tick", True),
            (210.0, "message handled", False), (400.0, "idle tick", True), (520.0, "idle tick", True),
        ]
    try:
        for at, event, idle in script:
            if event.startswith("engine starts"):
                step(at, event, policy.start)
            elif event.startswith("the open"):
                step(at, event, policy.arm_freeze)
            else:
                step(at, event, lambda idle=idle: policy.tick(bool(idle)))
    finally:
        now[0] = script[-1][0] + 1
        policy.stop()
    steps.append(PolicyStep(now[0], "engine stops", "stop", 0, gc.get_threshold(), gc.get_freeze_count()))
    return steps, [(a.at, a.action, a.pause_ns) for a in policy.log]


@dataclass(frozen=True)
class FrozenCycles:
    """Traced bytes at each stage of the frozen-cycle demonstration."""

    pairs: int
    baseline: int
    built: int
    dropped_while_frozen: int
    after_unfreeze: int

    @property
    def held_while_frozen(self) -> int:
        """Bytes the dead cycles still held after a full collection, while frozen."""
        return self.dropped_while_frozen - self.baseline

    @property
    def held_after_unfreeze(self) -> int:
        """Bytes still held once unfrozen and collected (near 0: the cycles were reclaimed)."""
        return self.after_unfreeze - self.baseline


class _Cyclic:
    """Half of a two-object cycle, carrying a small payload so the bytes are easy to see."""

    __slots__ = ("peer", "payload")

    def __init__(self) -> None:
        self.peer: _Cyclic | None = None
        self.payload = bytearray(64)


def frozen_cycles(pairs: int = 20_000) -> FrozenCycles:
    """Build ``pairs`` two-object cycles, freeze, drop them, collect; then unfreeze and collect again.

    ``tracemalloc`` measures the bytes allocated since the start of the
    demonstration and still held at each stage. Reference counting cannot free a
    cycle, and a full collection does not look at frozen objects, so the cycles
    stay until ``gc.unfreeze()`` puts them back in reach of the collector.
    """
    started_here = not tracemalloc.is_tracing()
    if started_here:
        tracemalloc.start()
    try:
        gc.collect()
        baseline = tracemalloc.get_traced_memory()[0]
        cycles = []
        for _ in range(pairs):
            a, b = _Cyclic(), _Cyclic()
            a.peer, b.peer = b, a
            cycles.append(a)
        del a, b
        built = tracemalloc.get_traced_memory()[0]
        with frozen():
            del cycles  # the list goes at once (refcount); each pair keeps itself alive
            gc.collect()
            dropped = tracemalloc.get_traced_memory()[0]
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        if started_here:
            tracemalloc.stop()
    return FrozenCycles(pairs, baseline, built, dropped, after)

