"""The cyclic collector, observed: what reference counting frees, what only a collection frees, and what a pause costs.

Chapter 09's experiments, each leaving the collector as it found it (thresholds,
enabled flag, nothing left frozen):

* ``refcount_and_cycle`` shows a plain object freed the moment its last
  reference goes, and a two-object cycle that survives until ``gc.collect()``.
* ``collection_pauses`` times full collections with a real ``OrderBook`` of
  each size alive (or the notes' plain objects), each size in a fresh worker
  process (``edumatcher.kit._worker``), and counts the objects the collector tracks;
  ``pause_fit`` fits a line through the medians (``scipy.stats.linregress``) and
  words a ``verdict:`` from the slope's confidence interval.
* ``freeze_effect`` times a full collection before and after ``gc.freeze()``,
  in a fresh worker process too.
* ``recorded_collections`` lets allocation trigger collections on its own and
  returns what a ``GcMonitor`` on ``gc.callbacks`` saw.
* ``policy_walkthrough`` drives a ``GcPolicy`` with a fake clock through a
  trading day and returns its log, with the collector's settings after each step.
* ``frozen_cycles`` shows, with ``tracemalloc``, that a cycle which becomes
  garbage while frozen is not reclaimed until it is unfrozen.

``frozen()`` is the guard every freeze here goes through: it refuses to start if
something else already froze objects beyond the interpreter's start-up baseline
(``gc_policy.startup_freeze_count``: 375 on CPython 3.12.1, 0 on 3.10, 3.11 and
3.13.0; ``gc.unfreeze()`` cannot tell theirs from ours), and on the way out
unfreezes and gives the interpreter its own frozen objects back
(``gc_policy.unfreeze_to``).

>>> [step for step, _ in refcount_and_cycle()][:2]
['del plain', 'del a, b (a cycle)']
"""

from __future__ import annotations

import gc
import time
import tracemalloc
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from edumatcher.book import OrderBook
from edumatcher.gc_policy import GcPolicy, frozen_beyond_startup, unfreeze_to
from edumatcher.kit import Measurement, collector, measure, run_isolated
from edumatcher.metrics import GcMonitor
from edumatcher.workloads import SYMBOL, apply, opening_ramp

__all__ = [
    "collector_state", "frozen", "refcount_and_cycle", "resting_book", "tracked_objects",
    "PAUSE_SIZES", "OBJECT_KINDS", "PauseRow", "pause_worker", "collection_pauses", "PauseFit", "pause_fit",
    "freeze_worker", "freeze_effect", "recorded_collections",
    "PolicyStep", "policy_walkthrough", "FrozenCycles", "frozen_cycles",
]


def collector_state() -> tuple[tuple[int, ...], bool, int]:
    """``(gc.get_threshold(), gc.isenabled(), gc.get_freeze_count())``: what every experiment must restore."""
    return gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()


@contextmanager
def frozen() -> Iterator[int]:
    """Freeze every tracked object for the block, then unfreeze; yields how many this freeze took.

    Raises ``RuntimeError`` before freezing if objects beyond the interpreter's
    start-up baseline are already frozen: the unfreeze at the end would release
    someone else's freeze too. The interpreter's own frozen objects (CPython 3.12)
    are not counted in the yield and are frozen again on the way out.
    """
    others = frozen_beyond_startup()
    if others:
        raise RuntimeError(f"{others} objects are already frozen by someone else (beyond the interpreter's own); "
                           "this experiment would unfreeze them too, so it refuses to run")
    found = gc.get_freeze_count()
    gc.freeze()
    try:
        yield gc.get_freeze_count() - found
    finally:
        unfreeze_to(found)


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


PAUSE_SIZES = (0, 25_000, 50_000, 100_000, 200_000)
"""Chapter 09's book sizes: five points, a few seconds in all, about 150 MB at the largest (fits Binder)."""

OBJECT_KINDS = ("book", "seed")
"""What ``collection_pauses`` keeps alive: resting orders in an ``OrderBook``, or the Python engine notes' plain objects."""


class _SeedObject:
    """The Python engine notes' stand-in for a resting order (quoted): three slots, one a small dict."""

    __slots__ = ("id", "px", "meta")

    def __init__(self, i: int) -> None:
        self.id, self.px, self.meta = str(i), i, {"i": i}


def _keep_alive(objects: str, n: int, seed: int) -> object:
    if objects == "book":
        return resting_book(n, seed) if n else None
    return [_SeedObject(i) for i in range(n)]


@dataclass(frozen=True)
class PauseRow:
    """Full collections with ``resting`` orders (or plain objects) alive, and the objects tracked then.

    ``full`` is wall time (``time.perf_counter``): what a program waits. ``cpu``
    is the CPU time of the same collections (``time.thread_time``): the
    collector's own work, without the time slices other processes took on a
    busy machine (None when not measured).
    """

    resting: int
    tracked: int
    full: Measurement
    objects: str = "book"
    cpu: Measurement | None = None


def _timed_collections(repeat: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of ``repeat`` back-to-back full collections (the caller warmed up with one)."""
    wall, cpu = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.thread_time()
        gc.collect()
        c1, w1 = time.thread_time(), time.perf_counter()
        wall.append(w1 - w0)
        cpu.append(c1 - c0)
    return wall, cpu


def pause_worker(resting: int, repeat: int = 7, seed: int = 1, objects: str = "book") -> dict[str, Any]:
    """Keep ``resting`` objects alive, collect once (the warm-up), then time ``repeat`` full collections.

    The worker side of ``collection_pauses``, usable in any process: returns
    plain data (``tracked``, ``wall`` and ``cpu`` samples in seconds).
    """
    if objects not in OBJECT_KINDS:
        raise ValueError(f"objects must be one of {OBJECT_KINDS}, not {objects!r}")
    kept = _keep_alive(objects, resting, seed)
    gc.collect()  # the warm-up: whatever building left behind is collected, survivors reach the oldest generation
    tracked = tracked_objects()
    wall, cpu = _timed_collections(repeat)
    del kept
    return {"tracked": tracked, "wall": wall, "cpu": cpu}


def collection_pauses(sizes: Sequence[int], *, repeat: int = 7, seed: int = 1, objects: str = "book",
                      isolated: bool = True, timeout: float = 120.0) -> list[PauseRow]:
    """Time ``repeat`` full collections (``gc.collect()``) with ``n`` objects alive, for each ``n`` in ``sizes``.

    ``objects="book"`` keeps an ``OrderBook`` of ``n`` resting orders alive;
    ``objects="seed"`` keeps ``n`` of the Python engine notes' three-slot objects. With
    ``isolated`` (the default) each size runs in its own fresh worker process
    (``edumatcher.kit._worker.run_isolated``), so a size of 0 is the bare
    interpreter with ``edumatcher`` imported, not the notebook: a kernel's own
    heap (matplotlib, IPython, earlier cells) would be walked by every
    collection and added to every point. ``isolated=False`` measures in this
    process, for comparison. ``tracked`` is counted where the collections ran.
    O(sizes x (build + repeat x tracked objects)).
    """
    if objects not in OBJECT_KINDS:
        raise ValueError(f"objects must be one of {OBJECT_KINDS}, not {objects!r}")
    rows: list[PauseRow] = []
    for n in sizes:
        kwargs = {"resting": n, "repeat": repeat, "seed": seed, "objects": objects}
        if isolated:
            got = run_isolated("edumatcher.chapters.garbage_collection.gc_pauses:pause_worker", kwargs, timeout=timeout)
        else:
            got = pause_worker(**kwargs)  # type: ignore[arg-type]
        what = f"{n:,} resting orders" if objects == "book" else f"{n:,} plain objects"
        where = " (fresh process)" if isolated else " (this process)"
        rows.append(PauseRow(
            n, got["tracked"],
            Measurement.from_samples(got["wall"], number=1, warmup=1, label=f"full collection, {what}{where}"),
            objects,
            Measurement.from_samples(got["cpu"], number=1, warmup=1, label=f"CPU time of it, {what}{where}",
                                     clock="thread CPU time"),
        ))
    gc.collect()
    return rows


@dataclass(frozen=True)
class PauseFit:
    """A straight line through the median pauses against tracked objects (least squares, ``scipy.stats.linregress``).

    ``clock`` says which time was fitted ("cpu" or "wall", see ``PauseRow``).
    ``slope`` and its confidence interval ``ci`` are seconds per tracked object;
    ``intercept`` is seconds; ``r2`` the coefficient of determination over the
    ``points`` medians.
    """

    slope: float
    ci: tuple[float, float]
    intercept: float
    r2: float
    points: int
    confidence: float
    clock: str = "cpu"

    @property
    def per_100k_ms(self) -> tuple[float, float, float]:
        """Slope, CI low and CI high, as milliseconds per 100,000 tracked objects."""
        k = 1e5 * 1e3
        return self.slope * k, self.ci[0] * k, self.ci[1] * k

    @property
    def direction(self) -> str:
        """"grows", "shrinks" or "undetermined": the sign of the whole confidence interval."""
        if self.ci[0] > 0:
            return "grows"
        if self.ci[1] < 0:
            return "shrinks"
        return "undetermined"

    @property
    def verdict(self) -> str:
        """One line starting ``verdict:``; its wording depends only on ``direction``."""
        slope, lo, hi = self.per_100k_ms
        what = "CPU time" if self.clock == "cpu" else "wall time"
        fit = f"{slope:+.1f} ms of {what} per 100k tracked objects ({self.confidence * 100:.0f} % CI {lo:.1f} to {hi:.1f}), r² = {self.r2:.2f}"
        if self.direction == "grows":
            return f"verdict: a full collection grows with the objects kept alive: {fit}"
        if self.direction == "shrinks":
            return f"verdict: a full collection shrank as objects were added, against the mechanism; suspect the machine: {fit}"
        return f"verdict: no trend detectable at this noise, the slope's CI spans 0: {fit}"

    def __str__(self) -> str:
        return self.verdict


def pause_fit(rows: Sequence[PauseRow], *, clock: str = "cpu", confidence: float = 0.95) -> PauseFit:
    """Fit the median pause against tracked objects over ``rows`` (at least 3 sizes); CI from the t distribution.

    ``clock="cpu"`` (the default) fits the collections' CPU time, the
    collector's own work; ``"wall"`` fits wall time, which on a busy machine
    also holds the time slices other processes took. One point per size, its
    median: a disturbed collection moves a median less than it moves a
    least-squares fit through every sample.
    """
    if clock not in ("cpu", "wall"):
        raise ValueError(f"clock must be 'cpu' or 'wall', not {clock!r}")
    if len({r.tracked for r in rows}) < 3:
        raise ValueError("a fit with a confidence interval needs at least 3 different sizes")
    if clock == "cpu" and any(r.cpu is None for r in rows):
        raise ValueError("some rows have no CPU time; fit clock='wall'")
    from scipy import stats  # here, not at the top: a worker importing this module should not carry scipy's heap

    xs = [float(r.tracked) for r in rows]
    ys = [(r.cpu if clock == "cpu" else r.full).median for r in rows]  # type: ignore[union-attr]
    fit = stats.linregress(xs, ys)
    t = stats.t.ppf(0.5 + confidence / 2, len(xs) - 2)
    half = float(t * fit.stderr)
    return PauseFit(float(fit.slope), (float(fit.slope) - half, float(fit.slope) + half), float(fit.intercept),
                    float(fit.rvalue) ** 2, len(xs), confidence, clock)


def freeze_worker(resting: int, repeat: int = 7, seed: int = 1) -> dict[str, Any]:
    """The worker side of ``freeze_effect``: plain data for the parent (samples in seconds, frozen count)."""
    before, after, count = _freeze_here(resting, repeat, seed)
    return {"before": list(before.samples), "after": list(after.samples), "warmup": before.warmup, "frozen": count}


def _freeze_here(resting: int, repeat: int, seed: int) -> tuple[Measurement, Measurement, int]:
    book = resting_book(resting, seed)
    gc.collect()
    before = measure(gc.collect, number=1, repeat=repeat, label=f"full collection, {resting:,} resting orders")
    with frozen() as count:
        after = measure(gc.collect, number=1, repeat=repeat, label="the same after gc.freeze()")
    del book
    gc.collect()
    return before, after, count


def freeze_effect(resting: int, *, repeat: int = 5, seed: int = 1, isolated: bool = True,
                  timeout: float = 120.0) -> tuple[Measurement, Measurement, int]:
    """Time a full collection with a book of ``resting`` orders alive, then again after ``gc.freeze()``.

    Returns ``(before, after, frozen_objects)``. With ``isolated`` (the default)
    it all happens in a fresh worker process, so "before" walks the book and the
    interpreter, not a notebook kernel's heap, and the freeze cannot touch this
    process. In this process (``isolated=False``) the freeze is undone before
    returning (see ``frozen``).
    """
    if not isolated:
        return _freeze_here(resting, repeat, seed)
    got = run_isolated("edumatcher.chapters.garbage_collection.gc_pauses:freeze_worker",
                       {"resting": resting, "repeat": repeat, "seed": seed}, timeout=timeout)
    before = Measurement.from_samples(got["before"], number=1, warmup=got["warmup"],
                                      label=f"full collection, {resting:,} resting orders (fresh process)")
    after = Measurement.from_samples(got["after"], number=1, warmup=got["warmup"],
                                     label="the same after gc.freeze() (fresh process)")
    return before, after, got["frozen"]


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
    it was due. Real collections run; ``stop()`` restores the collector. The
    steps' ``frozen`` column is ``gc.get_freeze_count()``, the interpreter's own
    frozen objects included (CPython 3.12: see ``gc_policy.startup_freeze_count``).
    """
    others = frozen_beyond_startup()
    if others:
        raise RuntimeError(f"{others} objects are already frozen beyond the interpreter's own; "
                           "the walkthrough's stop() would unfreeze them too")
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

