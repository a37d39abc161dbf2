"""A CPU hog for chapter 03's "co-located load" demonstration.

A single-threaded engine is only as fast as the core it gets. ``cpu_hog`` starts
worker processes that spin on the CPU, so a notebook can measure the engine's
latency with and without a neighbour competing for the cores.

The workers must never outlive the demonstration, so three things stop them:

1. leaving the ``with`` block closes the pipe they watch: they see end-of-file and
   exit; any worker still alive after ``STOP_GRACE_S`` is terminated, then killed;
2. if the parent dies without cleaning up (a killed kernel), the operating system
   closes the pipe too, and the workers exit the same way;
3. whatever happens, a worker exits after ``max_seconds`` (``MAX_SECONDS`` by default).

>>> with cpu_hog(1, max_seconds=5) as hog:   # doctest: +SKIP
...     latency_under_load = run_the_benchmark()
>>> hog.alive()                              # doctest: +SKIP
0
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

__all__ = ["MAX_SECONDS", "MAX_PROCESSES", "STOP_GRACE_S", "CHECK_EVERY_S", "CpuHog", "cpu_hog"]

MAX_SECONDS = 60.0
"""Safety net: a worker exits this long after it started, whatever the parent does."""

MAX_PROCESSES = 64
"""Refuse more workers than this: a typo such as ``cpu_hog(1000)`` must not fork-bomb a laptop."""

STOP_GRACE_S = 2.0
"""How long ``stop`` waits for workers to leave on their own before terminating them."""

CHECK_EVERY_S = 0.01
"""Workers look at the pipe this often: short enough that stopping feels instant,
long enough that checking costs nothing next to the spinning."""

# "spawn" starts a fresh interpreter, on every platform alike; "fork" would copy a
# Jupyter kernel's threads and state into the worker, which Python warns against.
_START_METHOD = "spawn"


def _spin(stop_reader: Connection, stop_writer: Connection, max_seconds: float) -> None:
    """Worker body: burn CPU until the pipe reports end-of-file or time runs out."""
    # Keep no copy of the writing end, or the end-of-file would never come.
    stop_writer.close()
    deadline = time.monotonic() + max_seconds
    x = 0
    while True:
        check_at = time.monotonic() + CHECK_EVERY_S
        while time.monotonic() < check_at:
            x = (x * 1_103_515_245 + 12_345) & 0xFFFF_FFFF  # pure CPU work, no allocation growth
        # poll() is True on data *and* on end-of-file (the parent closed or died).
        if stop_reader.poll() or time.monotonic() >= deadline:
            return


@dataclass
class CpuHog:
    """Busy worker processes; see ``cpu_hog``. ``pids`` lists them; ``stop()`` is idempotent."""

    n_processes: int
    max_seconds: float
    processes: list[BaseProcess] = field(default_factory=list)
    _writer: Connection | None = None

    @property
    def pids(self) -> list[int]:
        """Process ids of the workers."""
        return [p.pid for p in self.processes if p.pid is not None]

    def alive(self) -> int:
        """How many workers are still running."""
        return sum(p.is_alive() for p in self.processes)

    def start(self) -> None:
        """Start the workers and return once each has been launched."""
        ctx = multiprocessing.get_context(_START_METHOD)
        reader, writer = ctx.Pipe(duplex=False)
        self._writer = writer
        try:
            for k in range(self.n_processes):
                p = ctx.Process(
                    target=_spin, args=(reader, writer, self.max_seconds),
                    name=f"edumatcher-cpu-hog-{k}", daemon=True,
                )
                p.start()
                self.processes.append(p)
        finally:
            reader.close()  # the parent only writes (or rather, closes)

    def stop(self) -> None:
        """Stop every worker and reap it: close the pipe, wait, then terminate, then kill."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        deadline = time.monotonic() + STOP_GRACE_S
        for p in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))
        for escalate in ("terminate", "kill"):
            late = [p for p in self.processes if p.is_alive()]
            for p in late:
                getattr(p, escalate)()
            for p in late:
                p.join(STOP_GRACE_S)


@contextmanager
def cpu_hog(n_processes: int = 1, *, max_seconds: float = MAX_SECONDS) -> Iterator[CpuHog]:
    """Run ``n_processes`` CPU-burning worker processes for the duration of the block.

    Workers start before the block runs and are stopped and reaped when it ends,
    even on error; each also exits by itself if this process dies, or after
    ``max_seconds``. Starting takes a fraction of a second per worker (a fresh
    interpreter each).

    Raises ``ValueError`` unless ``1 <= n_processes <= MAX_PROCESSES`` and
    ``0 < max_seconds <= MAX_SECONDS * 10``.
    """
    if isinstance(n_processes, bool) or not isinstance(n_processes, int) or not 1 <= n_processes <= MAX_PROCESSES:
        raise ValueError(f"n_processes must be an int from 1 to {MAX_PROCESSES}, got {n_processes!r}")
    if not 0 < max_seconds <= MAX_SECONDS * 10:
        raise ValueError(f"max_seconds must be within (0, {MAX_SECONDS * 10:g}], got {max_seconds!r}")
    hog = CpuHog(n_processes, float(max_seconds))
    try:
        hog.start()
        yield hog
    finally:
        hog.stop()

