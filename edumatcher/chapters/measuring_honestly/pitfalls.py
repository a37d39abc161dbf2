"""Benchmark pitfalls, each as something that runs: one run against a median, cold against warm, alone against a neighbour.

* ``single_vs_median``: many one-pass samples of the same work; the range a
  single run could have reported, against the range of medians of five.
* ``cold_start``: a fresh interpreter (a worker process, ``edumatcher.kit._worker``)
  times its first pass over the payloads, then more passes: the first one pays
  for everything not yet done in that process (specialising bytecode, filling
  caches, touching memory). ``cold_starts`` repeats that in several fresh
  processes and ``cold_comparison`` compares the first messages of the first
  passes with the same messages of the later passes (``comparison.compare``).
* ``colocated``: the same passes alone, then beside ``load.cpu_hog`` workers,
  one per core this process may use (``available_cores`` reads the CPU affinity
  and, on Linux, the cgroup CPU quota, so a Binder pod with a share of one CPU
  gets one worker, not one per host CPU).

(The fourth pitfall, timing one leg instead of the whole path, is chapter 01's
``experiments.message_path.compare_decode_and_handle``.) Each experiment that
concludes has its comparison (``comparison.compare``) or a ``verdict`` line of
figures only, so what the chapter prints is worded from the data.

>>> available_cores() >= 1
True
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from edumatcher.engine import Engine
from edumatcher.kit import Comparison, Measurement, compare, cpu_hog, measure_passes, run_isolated
from edumatcher.kit.message_path import encode_workload
from edumatcher.workloads import SYMBOL, steady_state

__all__ = [
    "engine_pass", "SingleVsMedian", "single_vs_median", "ColdStart", "cold_worker", "cold_start", "cold_starts",
    "cold_comparison",
    "available_cores", "Colocated", "colocated",
]


def _handle_all(engine: Engine, payloads: Sequence[bytes]) -> int:
    handle = engine.handle
    for payload in payloads:
        handle(payload)
    return len(payloads)


def _fresh_engine() -> Engine:
    return Engine([SYMBOL], clock=lambda: 1)


def engine_pass(payloads: Sequence[bytes], *, repeat: int = 5, label: str = "") -> Measurement:
    """Time ``Engine.handle`` over every payload on a fresh engine per sample; ``ops_per_call`` = messages."""
    return measure_passes(lambda engine: _handle_all(engine, payloads), _fresh_engine, label=label or "one pass",
                          ops_per_call=len(payloads), repeat=repeat)


@dataclass(frozen=True)
class SingleVsMedian:
    """Many single-pass samples of the same work, and the medians of consecutive groups of ``group`` of them.

    Widths are measured on throughput (messages per second), the figure a
    benchmark reports: (fastest - slowest) / median.
    """

    measurement: Measurement
    group: int

    @property
    def group_medians(self) -> list[float]:
        """Median of each consecutive group of ``group`` samples (seconds per pass)."""
        xs = self.measurement.samples
        return [statistics.median(xs[i:i + self.group]) for i in range(0, len(xs) - self.group + 1, self.group)]

    def _width(self, seconds: Sequence[float]) -> float:
        rates = [self.measurement.ops_per_call / s for s in seconds]
        return (max(rates) - min(rates)) / statistics.median(rates) if len(rates) > 1 else 0.0

    @property
    def single_range(self) -> float:
        """Width of the single passes' throughputs: what one run could have reported."""
        return self._width(self.measurement.samples)

    @property
    def median_range(self) -> float:
        """The same width for the medians of groups."""
        return self._width(self.group_medians)

    @property
    def verdict(self) -> str:
        """One ``verdict:`` line of figures only: how far apart two single passes, and two medians, fell.

        The medians of groups always lie inside the range of the single passes,
        so "medians vary less" would be true by construction; the figures are
        the finding: how large a difference noise alone produced here.
        """
        xs, meds = self.measurement.samples, self.group_medians
        return (f"verdict: two single passes of the same work differed by up to {max(xs) / min(xs):.2f}x; "
                f"two medians of {self.group} by up to {max(meds) / min(meds):.2f}x")


def single_vs_median(payloads: Sequence[bytes], *, samples: int = 15, group: int = 5) -> SingleVsMedian:
    """Take ``samples`` one-pass samples of the engine over ``payloads``; group them to compare ranges."""
    if samples < 2 * group:
        raise ValueError(f"need at least two groups: samples >= {2 * group}, got {samples}")
    return SingleVsMedian(engine_pass(payloads, repeat=samples, label="single passes"), group)


@dataclass(frozen=True)
class ColdStart:
    """Pass times measured in a fresh interpreter: whole passes, and the first ``first_k`` messages of each (seconds)."""

    seconds: list[float]
    first_k_seconds: list[float]
    messages: int
    first_k: int
    clock: str = "thread CPU time"  # what the worker timed with (``CLOCK_NAMES``)

    @property
    def warm(self) -> Measurement:
        """The later whole passes as a measurement (seconds per pass, ``ops_per_call`` = messages)."""
        return Measurement.from_samples(self.seconds[1:], label="whole pass, 2nd onwards", ops_per_call=self.messages,
                                        clock=self.clock)

    @property
    def warm_first_k(self) -> Measurement:
        """The first ``first_k`` messages of the later passes, as a measurement."""
        return Measurement.from_samples(self.first_k_seconds[1:], label=f"first {self.first_k} messages, 2nd pass onwards",
                                        ops_per_call=self.first_k, clock=self.clock)

    @property
    def cold_ratio(self) -> float:
        """First pass's first ``first_k`` messages over the later passes' median for the same messages."""
        return self.first_k_seconds[0] / self.warm_first_k.median

    @property
    def whole_ratio(self) -> float:
        """First whole pass over the later passes' median."""
        return self.seconds[0] / self.warm.median


_CLOCKS = {"cpu": time.thread_time, "wall": time.perf_counter}
CLOCK_NAMES = {"cpu": "thread CPU time", "wall": "wall time"}
"""How each ``clock`` choice is named on a ``Measurement``."""


def cold_worker(messages: int = 2_000, passes: int = 6, first_k: int = 20, seed: int = 11,
                clock: str = "cpu") -> list[list[float]]:
    """The worker side of ``cold_start``: ``[whole pass seconds, first_k seconds]``, one entry per pass.

    Meant for a fresh process; the payloads are encoded before the first pass,
    and each pass uses a fresh ``Engine``. ``clock`` "cpu" (``time.thread_time``)
    leaves out the time slices other processes take on a busy machine, which
    would otherwise land on a few hundred microseconds at random; "wall" is
    ``time.perf_counter``.
    """
    if clock not in _CLOCKS:
        raise ValueError(f"clock must be one of {sorted(_CLOCKS)}, not {clock!r}")
    payloads = encode_workload(steady_state(messages, seed=seed))
    now = _CLOCKS[clock]
    whole, head = [], []
    for _ in range(passes):
        handle = _fresh_engine().handle
        start = now()
        for i, payload in enumerate(payloads):
            handle(payload)
            if i + 1 == first_k:
                head.append(now() - start)
        whole.append(now() - start)
    return [whole, head]


def cold_start(messages: int = 2_000, passes: int = 6, *, first_k: int = 20, seed: int = 11, clock: str = "cpu",
               timeout: float = 60.0) -> ColdStart:
    """Run ``passes`` passes over ``steady_state(messages)`` payloads in a new interpreter; return their times.

    Every pass uses a fresh ``Engine``, so the difference between the first pass
    and the others is what the *process* had not done yet: specialising the
    bytecode, first-time imports and caches, untouched memory. The payloads are
    encoded before the first pass. Times are CPU time by default (see
    ``cold_worker``). Raises ``isolated.IsolatedRunError`` with the child's
    error output if it fails.
    """
    if passes < 6 or not 1 <= first_k <= messages:
        raise ValueError(f"need passes >= 6 (one cold, five warm) and 1 <= first_k <= messages; got {passes}, {first_k}")
    whole, head = run_isolated("edumatcher.chapters.measuring_honestly.pitfalls:cold_worker",
                               {"messages": messages, "passes": passes, "first_k": first_k, "seed": seed,
                                "clock": clock},
                               timeout=timeout)
    return ColdStart(whole, head, messages, first_k, CLOCK_NAMES[clock])


def cold_starts(messages: int = 2_000, passes: int = 6, *, first_k: int = 20, seed: int = 11, processes: int = 5,
                clock: str = "cpu", timeout: float = 60.0) -> list[ColdStart]:
    """``cold_start`` in ``processes`` fresh processes, one after another (pyperf's several workers)."""
    return [cold_start(messages, passes, first_k=first_k, seed=seed, clock=clock, timeout=timeout)
            for _ in range(processes)]


def cold_comparison(colds: Sequence[ColdStart]) -> Comparison:
    """The first ``first_k`` messages of each process's first pass against the same messages of its later passes.

    ``a`` holds one sample per process (its cold start), ``b`` every later
    pass of every process; ``comparison.compare`` draws the interval
    (unpaired bootstrap), so the spread between processes is part of it.
    """
    if len(colds) < 2:
        raise ValueError("need at least two processes: one cold start is one sample")
    k = colds[0].first_k
    cold = Measurement.from_samples([c.first_k_seconds[0] for c in colds], label=f"first {k} messages, cold process",
                                    ops_per_call=k, clock=colds[0].clock)
    warm = Measurement.from_samples([x for c in colds for x in c.first_k_seconds[1:]],
                                    label=f"the same {k} messages, later passes", ops_per_call=k, clock=colds[0].clock)
    return compare(cold, warm)


def _cgroup_cpus() -> float | None:
    """CPUs allowed by a cgroup quota (v2 ``cpu.max`` or v1 ``cfs_quota_us``), or None if unlimited/unknown."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int(Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").read_text())
        period_us = int(Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us").read_text())
        return None if quota_us <= 0 else quota_us / period_us
    except (OSError, ValueError):
        return None


def available_cores() -> int:
    """How many cores this process can really use: CPU affinity, capped by a cgroup quota (rounded up), at least 1."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = _cgroup_cpus()
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota)))
    return max(1, cores)


@dataclass(frozen=True)
class Colocated:
    """The same passes alone and beside ``hogs`` CPU-burning processes."""

    alone: Measurement
    loaded: Measurement
    hogs: int
    running_after: int  # hog workers still alive when the loaded passes ended

    @property
    def slowdown(self) -> float:
        """Median pass time beside the hogs over median pass time alone."""
        return self.loaded.median / self.alone.median

    @property
    def comparison(self) -> Comparison:
        """``loaded`` against ``alone`` (``comparison.compare``: ratio of medians and its interval)."""
        return compare(self.loaded, self.alone)


def colocated(payloads: Sequence[bytes], *, hogs: int | None = None, repeat: int = 9, blocks: int = 3,
              max_seconds: float = 20.0, settle_s: float = 0.5) -> Colocated:
    """Time engine passes alone and beside ``hogs`` workers (default: ``available_cores()``), in alternating blocks.

    ``repeat`` passes per condition are taken in ``blocks`` blocks: alone, beside
    the hogs, alone, beside the hogs... Alternating spreads whatever else the
    machine is doing over both conditions, instead of charging it all to
    whichever ran first. For each block the workers are started, given
    ``settle_s`` to start spinning, and always stopped when the block ends; each
    exits by itself after ``max_seconds`` whatever happens (``load.cpu_hog``).
    Both measurements are wall time: what the engine's clients would wait.
    """
    n = hogs if hogs is not None else available_cores()
    if blocks < 1 or repeat < blocks:
        raise ValueError(f"need 1 <= blocks <= repeat, not blocks={blocks}, repeat={repeat}")
    per_block = [repeat // blocks + (1 if i < repeat % blocks else 0) for i in range(blocks)]
    alone: list[float] = []
    loaded: list[float] = []
    running = n
    _timed_passes(payloads, 1)  # warm-up, untimed
    for count in per_block:
        alone += _timed_passes(payloads, count)
        with cpu_hog(n, max_seconds=max_seconds) as hog:
            deadline = time.monotonic() + 10.0
            while hog.alive() < n and time.monotonic() < deadline:  # spawned interpreters take a moment to start
                time.sleep(0.05)
            time.sleep(settle_s)
            if hog.alive() < n:
                raise RuntimeError(f"only {hog.alive()} of {n} CPU hog workers are running; "
                                   "the comparison would be meaningless")
            loaded += _timed_passes(payloads, count)
            running = min(running, hog.alive())
    ops = len(payloads)
    return Colocated(
        Measurement.from_samples(alone, label="alone", ops_per_call=ops, warmup=1),
        Measurement.from_samples(loaded, label=f"beside {n} CPU hog process{'es' if n > 1 else ''}",
                                 ops_per_call=ops, warmup=1),
        n, running,
    )


def _timed_passes(payloads: Sequence[bytes], count: int) -> list[float]:
    """Wall time of ``count`` passes of ``Engine.handle`` over every payload, a fresh engine each (built untimed)."""
    out = []
    for _ in range(count):
        engine = _fresh_engine()
        start = time.perf_counter()
        _handle_all(engine, payloads)
        out.append(time.perf_counter() - start)
        del engine
    return out
