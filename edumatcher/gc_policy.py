"""``GcPolicy``: keep CPython's cyclic collector off the message path.

Reference counting frees almost every object the engine drops, the moment it
drops it. The cyclic collector exists only for reference cycles, which the
engine's long-lived objects do not form, yet a full collection still walks every
tracked object alive, and a book of resting orders is hundreds of thousands of
them. The pause lands on whatever message happened to allocate at that moment.
The policy therefore does three things:

1. **Raise the automatic thresholds into a safety net** (``start``): automatic
   collections still happen, but only when tracked objects really pile up, so a
   cycle-making bug cannot grow the heap without bound.
2. **Freeze the long-lived set once trading has settled** (``arm_freeze``, then
   ``tick``): one full collection, then ``gc.freeze()``.
3. **Collect when idle** (``tick(idle=True)``): a young-generation collection,
   and a full one at most every ``FULL_COLLECT_EVERY_S``. A busy tick does nothing.

About ``gc.freeze()`` (Python 3.7+): it moves every object the collector tracks
into a *permanent generation* that later collections skip; ``gc.unfreeze()``
moves them back into the oldest generation. It was added for servers that
``fork()`` workers: a collection writes to the header of each object it visits,
so the copy-on-write pages shared by parent and children get copied one by one.
Freezing in the parent before forking keeps those pages shared. The documented
recipe is: disable the collector early in the parent, ``freeze()`` just before
``fork()``, re-enable it in the children.

Using ``freeze()`` to shorten collection pauses (tail latency) is *our*
reasoning, not its documented purpose: frozen objects are never scanned, so a
full collection after the freeze only visits what was allocated since.
Frozen objects are still freed by reference counting the moment they die; what
is lost is that a cycle among frozen objects is not reclaimed while it stays
frozen (the engine's long-lived objects are kept acyclic for that reason).

**What the interpreter froze itself.** ``gc.get_freeze_count()`` is not always 0
before anyone calls ``gc.freeze()``: a bare CPython 3.12.1 reports 375 at start-up
(3.10.13, 3.11.7 and 3.13.0 report 0, measured on this machine's pyenv builds;
``startup_freeze_count`` asks the running version). On 3.12 a collection moves
every *immortal* container it meets (PEP 683: objects whose reference count
never changes, here tuples built into the interpreter at start-up) into the
permanent generation, because their reference counts say nothing about who
refers to them (``update_refs`` in ``Modules/gcmodule.c``). They are never freed,
``gc.unfreeze()`` puts them back in the oldest generation like any other frozen
object, and the next full collection parks them again. So the start-up count is
the *baseline*: only frozen objects beyond it belong to someone, and
``unfreeze_to`` undoes a freeze and then parks the interpreter's own objects
again, leaving the count where it was found.

Every action is logged (``GcPolicy.log``) with the policy clock's time and the
pause it caused, for tests and for chapter 10's notebook.
"""

from __future__ import annotations

import functools
import gc
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import NamedTuple

__all__ = [
    "FREEZE_DELAY_S", "FREEZE_FORCE_AFTER_S", "SAFETY_THRESHOLDS", "FULL_COLLECT_EVERY_S",
    "YOUNG_GENERATION", "LOG_LENGTH", "GcAction", "GcPolicy",
    "startup_freeze_count", "frozen_beyond_startup", "unfreeze_to",
]

FREEZE_DELAY_S = 180.0
"""Seconds from the start of continuous trading to the freeze. The book, caches and
per-client state fill in the first minutes after the open; freezing earlier would
leave all of that in the scanned generations."""

FREEZE_FORCE_AFTER_S = 60.0
"""Grace period for an idle tick once the freeze is due. A market that never goes
quiet must still get its freeze: after this, it runs on the next tick, busy or not,
as one pause chosen by us rather than by the allocator."""

SAFETY_THRESHOLDS = (50_000, 10, 10)
"""Automatic thresholds while the policy runs (the defaults are (700, 10, 10) on
CPython 3.10-3.12 and (2000, 10, 10) on 3.13). Generation 0 is collected after
50,000 *net* new tracked objects: an engine in steady state allocates about as
much as it frees and seldom reaches it, while a runaway allocation (a cycle leak)
still gets collected. The price: when it is reached, as in the open's rush before
the freeze, that one young collection walks all 50,000 young objects at once, so
young collections become rarer *and* longer than at the default threshold
(chapter 10 measures both)."""

FULL_COLLECT_EVERY_S = 300.0
"""Least time between two full collections run by idle ticks: frequent enough that
cycles among new objects are reclaimed, rare enough that their cost stays negligible."""

YOUNG_GENERATION = 1
"""``gc.collect(1)`` collects generations 0 and 1: the objects allocated since the
last collections, which is where new garbage is. Cheap after the freeze.

This holds for the generational collector, with three generations: CPython 3.10
to 3.13, and 3.14.5 and later. CPython 3.14.0 to 3.14.4 shipped an incremental
collector with two generations, young and old; there ``gc.collect(1)`` collects
the young generation and one *increment* of the old one (the ``gc`` docs for 3.14:
"generation=1 performs an increment of collection"), not generation 1. 3.14.5
went back to 3.13's generational collector (What's New in Python 3.15, gc
section), which 3.15 uses too."""

LOG_LENGTH = 256
"""The action log keeps this many latest entries (a deque with maxlen: fixed memory)."""


class GcAction(NamedTuple):
    """One thing the policy did: when (policy clock), what, and the pause it took in ns."""

    at: float
    action: str
    pause_ns: int = 0


class GcPolicy:
    """The collector policy the engine's run loop drives; see the module docstring.

    Contract: call ``start()`` before ``tick()`` and ``stop()`` when done (or
    use ``with``). ``stop()`` leaves the collector as ``start()`` found it:
    thresholds, enabled flag, and no objects left frozen by us (the
    interpreter's own frozen objects, see the module docstring, stay frozen).

    ``clock`` returns seconds (``time.monotonic`` by default; tests pass a fake).
    Actions in ``log`` are: ``start``, ``arm``, ``freeze`` (at an idle tick),
    ``forced-freeze`` (busy, after the grace period), ``young``, ``full``,
    ``stop``. ``tick`` returns the action it took, or None.

    >>> now = [0.0]
    >>> policy = GcPolicy(lambda: now[0], freeze_delay_s=10.0)
    >>> with policy:
    ...     policy.arm_freeze()
    ...     now[0] = 11.0
    ...     policy.tick(idle=False), policy.tick(idle=True), policy.tick(idle=False)
    (None, 'freeze', None)
    >>> [a.action for a in policy.log]
    ['start', 'arm', 'freeze', 'stop']
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        freeze_delay_s: float = FREEZE_DELAY_S,
        freeze_force_after_s: float = FREEZE_FORCE_AFTER_S,
        safety_thresholds: tuple[int, int, int] = SAFETY_THRESHOLDS,
        full_collect_every_s: float = FULL_COLLECT_EVERY_S,
    ) -> None:
        if freeze_delay_s < 0 or freeze_force_after_s < 0 or full_collect_every_s < 0:
            raise ValueError("GcPolicy delays must be >= 0 seconds")
        if len(safety_thresholds) != 3 or min(safety_thresholds) < 1:
            raise ValueError(f"safety_thresholds must be three positive ints, got {safety_thresholds!r}")
        self._clock = clock
        self.freeze_delay_s = freeze_delay_s
        self.freeze_force_after_s = freeze_force_after_s
        self.safety_thresholds = tuple(safety_thresholds)
        self.full_collect_every_s = full_collect_every_s
        self.log: deque[GcAction] = deque(maxlen=LOG_LENGTH)
        self.freeze_at: float | None = None  # when the freeze is due; None when not armed
        self.freezes = 0  # freezes done since start()
        self._started = False
        self._saved_thresholds: tuple[int, ...] = ()
        self._saved_enabled = True
        self._saved_freeze_count = 0
        self._last_full = 0.0

    @property
    def started(self) -> bool:
        """True between ``start()`` and ``stop()``."""
        return self._started

    def _record(self, action: str, pause_ns: int = 0, at: float | None = None) -> None:
        self.log.append(GcAction(self._clock() if at is None else at, action, pause_ns))

    def start(self) -> None:
        """Remember the collector's settings, then switch to the safety-net thresholds.

        Also enables automatic collection (the safety net does nothing while
        disabled). Idempotent: a second call changes nothing.
        """
        if self._started:
            return
        self._saved_thresholds = gc.get_threshold()
        self._saved_enabled = gc.isenabled()
        self._saved_freeze_count = gc.get_freeze_count()
        gc.set_threshold(*self.safety_thresholds)
        gc.enable()
        self._started = True
        self.freezes = 0
        self._last_full = self._clock()
        self._record("start", at=self._last_full)

    def arm_freeze(self) -> None:
        """Schedule the freeze ``freeze_delay_s`` from now (call when continuous trading starts).

        Arming again moves the due time; after a freeze, arming again (the next
        trading day) freezes that day's survivors too.
        """
        now = self._clock()
        self.freeze_at = now + self.freeze_delay_s
        self._record("arm", at=now)

    def tick(self, idle: bool) -> str | None:
        """Do the collector's housekeeping between messages; return the action taken.

        * Freeze due and ``idle``, or due for ``freeze_force_after_s`` already:
          ``gc.collect()`` then ``gc.freeze()`` ("freeze" / "forced-freeze").
        * Otherwise, if ``idle``: a full collection when the last one is
          ``full_collect_every_s`` old ("full"), else ``gc.collect(1)`` ("young").
        * Otherwise (busy): nothing, return None. This is the common case and costs
          one clock read and two comparisons.
        """
        if not self._started:
            raise RuntimeError("GcPolicy.tick() called before start()")
        now = self._clock()
        freeze_at = self.freeze_at
        if freeze_at is not None and now >= freeze_at:
            if idle or now >= freeze_at + self.freeze_force_after_s:
                t0 = time.perf_counter_ns()
                gc.collect()  # survivors only: no point freezing garbage
                gc.freeze()
                pause = time.perf_counter_ns() - t0
                self.freeze_at = None
                self.freezes += 1
                self._last_full = now
                action = "freeze" if idle else "forced-freeze"
                self._record(action, pause, at=now)
                return action
        if not idle:
            return None
        t0 = time.perf_counter_ns()
        if now - self._last_full >= self.full_collect_every_s:
            gc.collect()
            self._last_full = now
            action = "full"
        else:
            gc.collect(YOUNG_GENERATION)
            action = "young"
        self._record(action, time.perf_counter_ns() - t0, at=now)
        return action

    def stop(self) -> None:
        """Restore the thresholds and enabled flag saved by ``start()`` and unfreeze.

        Unfreezes only when the frozen count grew while the policy ran (it froze
        something), with ``unfreeze_to``: the interpreter's own frozen objects
        (CPython 3.12: the start-up baseline) are parked again, so with nothing
        beyond that baseline frozen at ``start()`` (the usual case) the collector
        ends exactly as found. ``gc.unfreeze()`` cannot tell our objects from
        those someone else froze before ``start()`` (a server may freeze before
        forking), so theirs are released to the collector too: leaving our whole
        book frozen for the life of the process would be the worse error. Idempotent.
        """
        if not self._started:
            return
        if gc.get_freeze_count() > self._saved_freeze_count:
            unfreeze_to(self._saved_freeze_count)
        gc.set_threshold(*self._saved_thresholds)
        if self._saved_enabled:
            gc.enable()
        else:
            gc.disable()
        self._started = False
        self.freeze_at = None
        self._record("stop")

    def __enter__(self) -> GcPolicy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@functools.cache
def startup_freeze_count() -> int:
    """``gc.get_freeze_count()`` of a bare interpreter of this version at start-up: the baseline. Cached.

    Asked of a fresh ``sys.executable -I`` (isolated mode: no environment
    variables, no user site-packages), once per process: about 20 ms. 375 on
    CPython 3.12.1, 0 on 3.10, 3.11 and 3.13.0 (see the module docstring). If no
    interpreter can be started, returns 0, which makes every guard built on it
    stricter, never looser.
    """
    try:
        done = subprocess.run([sys.executable, "-I", "-c", "import gc; print(gc.get_freeze_count())"],
                              capture_output=True, text=True, timeout=60, check=True)
        return int(done.stdout.strip())
    except (OSError, subprocess.SubprocessError, ValueError):
        return 0


def frozen_beyond_startup() -> int:
    """Objects frozen now beyond the start-up baseline (``startup_freeze_count``): frozen by someone, not the interpreter."""
    return max(0, gc.get_freeze_count() - startup_freeze_count())


def unfreeze_to(found: int) -> None:
    """Undo a freeze made after the frozen count was ``found``: ``gc.unfreeze()``, then park the interpreter's own again.

    ``gc.unfreeze()`` releases every frozen object. When ``found`` held the
    interpreter's start-up baseline (CPython 3.12: immortal objects, see the module
    docstring), one full collection moves those back into the permanent
    generation, so the count returns to ``min(found, baseline)``. With a baseline
    of 0 (3.10, 3.11, 3.13) this is just ``gc.unfreeze()``. O(tracked objects)
    when it collects.
    """
    gc.unfreeze()
    if found and startup_freeze_count():
        gc.collect()  # a full collection re-parks the interpreter's immortal objects (3.12)
