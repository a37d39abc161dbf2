"""Tail latency with the default collector and with ``GcPolicy``: a small version of ``bench gc``.

``tail_run`` plays an opening ramp (resting orders that build a long-lived book)
then a steady stream through a fresh ``Engine``, timing **every** steady message
and recording, per message, how much of its time a collection took
(``GcMonitor.total_ns`` before and after). With ``use_policy`` a ``GcPolicy`` on
a market clock is started before the ramp, armed at the open, and freezes at the
lull after the ramp, as in ``bench gc`` (whose workload pieces it reuses:
``steady_ops``). ``TailRun`` keeps the raw latencies so
a chapter can draw them.

The figure that separates the collector from everything else is the pair p99
and p99 *ex GC* (each message's collection time subtracted): when they are
close, the tail is the code and the machine; when p99 is much larger, the tail
is the collector. The same holds for the max.

>>> default, policy = compare_tails(300, 300)
>>> default.label, policy.label, len(policy.latencies_ns)
('default collector', 'GcPolicy', 300)
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field

from ..benchmarks.gc_bench import steady_ops
from ..engine import Engine
from ..gc_policy import FREEZE_DELAY_S, GcPolicy
from ..metrics import GcMonitor, nearest_rank
from ..workloads import SYMBOL, encode_workload, opening_ramp

__all__ = ["STEADY_RATE", "TailRun", "tail_run", "compare_tails"]

STEADY_RATE = 1_000.0
"""Steady messages per second of market time (only the policy's clock sees it)."""

_MONITOR_RING = 1 << 14


@dataclass
class TailRun:
    """One run's steady-phase latencies (ns), the collection time inside each, and what the collector did."""

    label: str
    latencies_ns: list[int]
    gc_ns: list[int]
    collections: tuple[int, int, int]  # during the steady phase, by generation
    longest_pause_ns: int
    freeze_ns: int | None = None  # the policy's freeze at the lull (off the message path)
    actions: list[str] = field(default_factory=list)

    def ex_gc(self) -> list[int]:
        """Each latency minus the collection time inside it. O(n)."""
        return [t - g if t > g else 0 for t, g in zip(self.latencies_ns, self.gc_ns, strict=True)]

    def summary(self) -> dict[str, float]:
        """p50, p99, p99 ex GC, p99.9, max and max ex GC, in µs. O(n log n)."""
        xs, ex = sorted(self.latencies_ns), sorted(self.ex_gc())
        return {
            "p50": nearest_rank(xs, 50) / 1e3, "p99": nearest_rank(xs, 99) / 1e3,
            "p99 ex GC": nearest_rank(ex, 99) / 1e3, "p99.9": nearest_rank(xs, 99.9) / 1e3,
            "max": xs[-1] / 1e3, "max ex GC": ex[-1] / 1e3,
        }


def tail_run(ramp: list[bytes], steady: list[bytes], *, use_policy: bool) -> TailRun:
    """Run ``ramp`` then ``steady`` through a fresh ``Engine``; time every steady message. O(n).

    The collector is left as it was found: the policy's ``stop()`` restores the
    thresholds and unfreezes, and the monitor is uninstalled, even on error.
    """
    gc.collect()  # start from a clean slate, as bench gc does
    engine = Engine([SYMBOL])
    handle = engine.handle
    market = [0.0]
    policy = GcPolicy(lambda: market[0]) if use_policy else None
    monitor = GcMonitor(_MONITOR_RING)
    latencies = [0] * len(steady)
    inside = [0] * len(steady)
    clock = time.perf_counter_ns
    freeze_ns: int | None = None
    try:
        monitor.install()
        if policy is not None:
            policy.start()
            policy.arm_freeze()
        for payload in ramp:
            handle(payload)
        market[0] = FREEZE_DELAY_S  # the open's rush is over: the lull where the freeze is due
        if policy is not None and policy.tick(idle=True) in ("freeze", "forced-freeze"):
            freeze_ns = policy.log[-1].pause_ns
        first = monitor.pos
        tick = policy.tick if policy is not None else None
        step = 1 / STEADY_RATE
        for i, payload in enumerate(steady):
            g0 = monitor.total_ns
            t0 = clock()
            handle(payload)
            latencies[i] = clock() - t0
            inside[i] = monitor.total_ns - g0
            if tick is not None:
                market[0] += step
                tick(False)
        generations = monitor.generations()[first - monitor.pos:] if monitor.pos > first else []
        durations = monitor.durations()[first - monitor.pos:] if monitor.pos > first else []
    finally:
        monitor.uninstall()
        if policy is not None:
            policy.stop()
    by_generation = tuple(sum(1 for g in generations if g == k) for k in range(3))
    return TailRun(
        "GcPolicy" if use_policy else "default collector", latencies, inside,
        (by_generation[0], by_generation[1], by_generation[2]), max(durations, default=0), freeze_ns,
        [a.action for a in policy.log] if policy is not None else [],
    )


def compare_tails(ramp_orders: int = 20_000, steady_messages: int = 10_000, *, seed: int = 1) -> tuple[TailRun, TailRun]:
    """The same ramp and steady stream with the default collector, then with ``GcPolicy``. O(n).

    Payloads are encoded once, before either run (``bench gc``'s trimmed encoding).
    """
    ramp = encode_workload(opening_ramp(ramp_orders, seed))
    steady = encode_workload(steady_ops(steady_messages, seed))
    return tail_run(ramp, steady, use_policy=False), tail_run(ramp, steady, use_policy=True)
