"""Handing messages from one thread to another: a consumer that polls against one that blocks.

The C++ engine README (quoted, a C++ engine) built a lock-free single-producer/single-consumer
queue whose threads spin (``while (!queue.push(...)) std::this_thread::yield();``)
and measured it against ``std::mutex`` + ``std::condition_variable``: on an EC2
c6i.large, with the benchmark pinned to one core (``taskset -c 1``), the spinning
queue reached 0.56-0.59x the mutex queue's throughput, because a thread that spins
on a shared core takes the time slice the other thread needs, while a blocked
thread hands the core back at once.

The same bet, in Python: a producer thread puts payloads into a bounded channel,
a consumer thread takes each one and runs ``Engine.handle`` on it. Three consumers:

* ``busy poll``: ``deque.popleft`` in a loop until something is there (the
  producer polls the same way while the deque is full);
* ``yield poll``: the same, with ``time.sleep(0)`` after each empty poll (the
  notes' ``yield``: the GIL is released and the other thread may run);
* ``blocking queue``: ``queue.Queue(maxsize).get()`` and ``put()``, which wait on
  a ``threading.Condition`` (the mutex and condition variable).

In CPython with the GIL, only one thread runs Python code at a time whatever the
cores, so the two threads always share one "core" for bytecode: a polling thread
keeps the GIL until the interpreter forces a switch (``sys.getswitchinterval()``,
5 ms by default), while a blocked thread releases it at once. ``handoff_worker``
runs every consumer with the process pinned to one core
(``os.sched_setaffinity``, Linux only) and, where two cores are allowed, to two,
in rounds whose order is drawn at random, in a fresh process. Per run it records
the wall time (the pipeline's throughput; threads hand work to each other, so CPU
time of one thread would miss the point) and the wait of every message: from the
producer's ``put`` to the consumer's ``get``, queueing included.

>>> row = handoff_worker(cores=None, rounds=1, messages=30)
>>> sorted(row["runs"]) == sorted(KINDS)
True
"""

from __future__ import annotations

import collections
import os
import queue
import random
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from edumatcher.kit import Comparison, Measurement
from edumatcher.kit.message_path import fresh_engine
from edumatcher.workloads import encode_workload, steady_state

__all__ = ["KINDS", "CAPACITY", "busy_poll", "yield_poll", "blocking_queue", "can_pin", "core_sets",
           "gil_enabled", "handoff_worker", "Handoff", "handoff", "comparison_line", "handoff_verdicts"]

KINDS = ("busy poll", "yield poll", "blocking queue")
"""The consumers compared, in the order they are reported."""

CAPACITY = 16
"""Messages the channel holds before the producer must wait (the notes' ring has a fixed size too)."""

_END = None  # what the producer sends after the last payload

Handle = Callable[[bytes], Any]


def busy_poll(payloads: Sequence[bytes], handle: Handle, waits: list[float], capacity: int = CAPACITY) -> None:
    """Producer and consumer threads over a ``deque``; both poll without pause while they cannot proceed."""
    channel: collections.deque[tuple[float, bytes] | None] = collections.deque()
    now = time.perf_counter

    def produce() -> None:
        for payload in payloads:
            while len(channel) >= capacity:
                pass  # spin: keeps the GIL until the interpreter forces a switch
            channel.append((now(), payload))
        channel.append(_END)

    def consume() -> None:
        take = channel.popleft
        while True:
            try:
                item = take()
            except IndexError:
                continue  # spin
            if item is _END:
                return
            waits.append(now() - item[0])
            handle(item[1])

    _run_pair(produce, consume)


def yield_poll(payloads: Sequence[bytes], handle: Handle, waits: list[float], capacity: int = CAPACITY) -> None:
    """As ``busy_poll``, but each failed poll calls ``time.sleep(0)``: the GIL is offered to the other thread."""
    channel: collections.deque[tuple[float, bytes] | None] = collections.deque()
    now, pause = time.perf_counter, time.sleep

    def produce() -> None:
        for payload in payloads:
            while len(channel) >= capacity:
                pause(0)
            channel.append((now(), payload))
        channel.append(_END)

    def consume() -> None:
        take = channel.popleft
        while True:
            try:
                item = take()
            except IndexError:
                pause(0)
                continue
            if item is _END:
                return
            waits.append(now() - item[0])
            handle(item[1])

    _run_pair(produce, consume)


def blocking_queue(payloads: Sequence[bytes], handle: Handle, waits: list[float], capacity: int = CAPACITY) -> None:
    """Producer and consumer threads over ``queue.Queue(capacity)``: each blocks on a condition while it must wait."""
    channel: queue.Queue[tuple[float, bytes] | None] = queue.Queue(capacity)
    now = time.perf_counter

    def produce() -> None:
        put = channel.put
        for payload in payloads:
            put((now(), payload))
        put(_END)

    def consume() -> None:
        take = channel.get
        while True:
            item = take()
            if item is _END:
                return
            waits.append(now() - item[0])
            handle(item[1])

    _run_pair(produce, consume)


_CONSUMERS: dict[str, Callable[..., None]] = {"busy poll": busy_poll, "yield poll": yield_poll,
                                               "blocking queue": blocking_queue}


def _run_pair(produce: Callable[[], None], consume: Callable[[], None]) -> None:
    threads = [threading.Thread(target=consume, name="consumer"), threading.Thread(target=produce, name="producer")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def can_pin() -> bool:
    """True where this process can read and set its CPU affinity (``os.sched_setaffinity``: Linux)."""
    return hasattr(os, "sched_setaffinity") and hasattr(os, "sched_getaffinity")


def core_sets() -> dict[str, list[int] | None]:
    """The core settings to run: ``{"one core": [c]}``, plus ``"two cores"`` where two are allowed.

    Where affinity cannot be set (macOS, Windows), ``{"unpinned": None}``: the
    scheduler decides, and the one-core case cannot be shown.
    """
    if not can_pin():
        return {"unpinned": None}
    allowed = sorted(os.sched_getaffinity(0))
    sets: dict[str, list[int] | None] = {"one core": allowed[:1]}
    if len(allowed) >= 2:
        sets["two cores"] = allowed[:2]
    return sets


def gil_enabled() -> bool:
    """False only on a free-threaded build running without the GIL (``sys._is_gil_enabled``, 3.13+)."""
    check = getattr(sys, "_is_gil_enabled", None)
    return True if check is None else bool(check())


def handoff_worker(cores: list[int] | None = None, rounds: int = 12, messages: int = 600, busy_messages: int = 48,
                   capacity: int = CAPACITY, seed: int = 5) -> dict[str, Any]:
    """Every consumer of ``KINDS``, ``rounds`` times in a random order per round; meant for a fresh process.

    With ``cores`` given, the process is pinned to them first (threads started
    afterwards inherit it). One untimed warm-up run of each comes first. A busy
    poll hands over about ``capacity`` messages per forced GIL switch, so its
    runs carry ``busy_messages`` messages (fewer) to keep them short; every
    figure is per message. Returns, per kind, per run: wall seconds per message,
    the median and the 99th-percentile wait.
    """
    if cores is not None:
        os.sched_setaffinity(0, cores)
    payloads = encode_workload(steady_state(messages, seed=seed))
    runs: dict[str, list[list[float]]] = {kind: [] for kind in KINDS}
    order = random.Random(seed)
    for r in range(rounds + 1):
        kinds = list(KINDS)
        order.shuffle(kinds)
        for kind in kinds:
            work = payloads[:busy_messages] if kind == "busy poll" else payloads
            waits: list[float] = []
            engine = fresh_engine()
            start = time.perf_counter()
            _CONSUMERS[kind](work, engine.handle, waits, capacity)
            seconds = time.perf_counter() - start
            if r:  # round 0 is the warm-up
                waits.sort()
                runs[kind].append([seconds / len(work), statistics.median(waits),
                                   waits[min(len(waits) - 1, int(0.99 * len(waits)))]])
    return {"python": sys.version.split()[0], "cores": cores, "messages": messages, "capacity": capacity,
            "busy_messages": busy_messages,
            "switch_interval": sys.getswitchinterval(), "gil": gil_enabled(), "runs": runs}


@dataclass(frozen=True)
class Handoff:
    """One core setting's runs: per kind, wall seconds per message of each run and each run's median and p99 wait."""

    setting: str
    cores: list[int] | None
    python: str
    messages: int
    switch_interval: float
    gil: bool
    runs: dict[str, list[list[float]]]

    def seconds(self, kind: str) -> Measurement:
        """Wall seconds per message, one sample per run of ``kind`` (``.rate`` is the throughput, messages/s)."""
        return Measurement.from_samples([r[0] for r in self.runs[kind]], label=f"{kind}, {self.setting}",
                                        clock="wall time", warmup=1)

    def median_wait(self, kind: str) -> Measurement:
        """Each run's median wait (seconds), as a measurement."""
        return Measurement.from_samples([r[1] for r in self.runs[kind]], label=f"{kind}: median wait",
                                        clock="wall time")

    def p99_wait(self, kind: str) -> float:
        """Median over runs of each run's 99th-percentile wait (seconds)."""
        return statistics.median(r[2] for r in self.runs[kind])

    def throughput(self, kind: str, other: str = "blocking queue") -> Comparison:
        """``kind`` against ``other``: ratio of median time per message with its CI (paired: same rounds)."""
        return Comparison(self.seconds(kind), self.seconds(other), paired=True)

    def wait(self, kind: str, other: str = "blocking queue") -> Comparison:
        """``kind``'s median wait against ``other``'s: ratio with its CI (paired: same rounds)."""
        return Comparison(self.median_wait(kind), self.median_wait(other), paired=True)


def handoff(*, rounds: int = 12, messages: int = 600, busy_messages: int = 48, capacity: int = CAPACITY,
            timeout: float = 120.0) -> dict[str, Handoff]:
    """``handoff_worker`` in a fresh process per core setting of ``core_sets()``, one after another."""
    from edumatcher.kit import run_isolated

    out = {}
    for setting, cores in core_sets().items():
        got = run_isolated("edumatcher.chapters.measuring_honestly.handoff:handoff_worker",
                           {"cores": cores, "rounds": rounds, "messages": messages, "busy_messages": busy_messages,
                            "capacity": capacity},
                           timeout=timeout)
        out[setting] = Handoff(setting, got["cores"], got["python"], got["messages"], got["switch_interval"],
                               got["gil"], got["runs"])
    return out


def _direction(c: Comparison, slower: str, faster: str) -> str:
    if c.outcome == "slower":
        return f"{slower} ({c.ratio:.1f}x, {c.ci_text})"
    if c.outcome == "faster":
        return f"{faster} ({1 / c.ratio:.1f}x, {c.ci_text})"
    if c.outcome == "same":
        return f"the same to within {c.negligible:.0%} ({c.ci_text})"
    return f"no difference detectable at this noise ({c.ci_text})"


def comparison_line(h: Handoff, kind: str) -> str:
    """``kind`` against the blocking queue in one setting: throughput and median wait, worded from their intervals."""
    t, w = h.throughput(kind), h.wait(kind)
    return (f"{h.setting}, {kind} against the blocking queue: throughput " + _direction(t, "lower", "higher")
            + "; median wait " + _direction(w, "longer", "shorter"))


def handoff_verdicts(result: dict[str, Handoff]) -> list[str]:
    """``verdict:`` lines for the busy poll (one per core setting); the yielding poll's lines are not verdicts.

    The busy poll's gap comes from the GIL's forced switch (milliseconds against
    microseconds), far outside any noise. The yielding poll sits near the
    blocking queue, where a busy machine can move the interval from one side of
    1 to the other between runs, so its line is printed as a figure to read
    (``comparison_line``), not as a verdict.
    """
    return [f"verdict: {comparison_line(h, 'busy poll')}" for h in result.values()]
