"""The timing primitives, standard library only: what a fresh worker process loads without the package.

A worker started by ``compare_fresh`` runs ``python <kit>/_child.py``, which loads this
file alone (no ``edumatcher`` import, no numpy): measured here, that starts in about
0.05 s of CPU where importing the kit costs 0.2 s, and a verdict runs twelve workers.
``_runner`` builds ``measure`` and ``interleave`` on the same primitives, so a sample
is taken the same way in a notebook and in a worker.

* samplers: a statement inlined in the timing loop as ``timeit`` does, or a callable
  called; ``_calibrate`` finds the call count for ``SAMPLE_TARGET``;
* ``TIMER``: this thread's CPU clock where it is precise;
* ``collector``: the cyclic collector on or off for a block; ``CollectorTally``
  counts the collections inside each side's samples;
* ``paired_rounds``: the worker side of a fresh-process comparison.

>>> r = paired_rounds("x + 1", "x + 1", setup="x = 1", rounds=5, seed=3)
>>> len(r["a"]), len(r["b"]), r["collections"], r["seed"]
(5, 5, [0, 0], 3)
"""

from __future__ import annotations

import functools
import gc as _gc
import importlib
import itertools
import math
import os
import random
import statistics
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "SAMPLE_TARGET", "TIMER", "TIMER_NAME", "ROUNDS", "collector", "CollectorTally", "one_round", "paired_rounds",
]

SAMPLE_TARGET = 0.0005
"""Seconds one calibrated sample should last: half a millisecond, shorter than a scheduler time slice.

On a machine where other processes want the CPU, the scheduler takes it away from
us for a few milliseconds at a time; a wall-time sample that
lasts longer than a time slice is almost always cut at least once, by an amount
that has nothing to do with the code, so even the median is inflated (measured
when this was written, CPython 3.11.7 on a 2-CPU AMD EPYC VM beside two CPU hogs:
10 ms samples gave 300-700 ns for a 30 ns dict lookup and put the verdict on
either side). A 0.5 ms sample usually runs whole between
two preemptions, and the median picks those clean samples out.
"""

def _cpu_timer() -> tuple[Callable[[], float], str]:
    info = time.get_clock_info("thread_time") if hasattr(time, "thread_time") else None
    if info is not None and info.resolution <= 1e-6:
        return time.thread_time, "thread CPU time"
    # Windows counts thread time in 15.6 ms ticks: far too coarse for a 0.5 ms sample.
    return time.perf_counter, "wall time"


TIMER, TIMER_NAME = _cpu_timer()
"""The clock the kit times code with: this thread's CPU time where it is precise, else wall time.

The question a measurement answers is "what does this code cost", and on a shared
machine wall time also counts the milliseconds the scheduler gave to other
processes, by chance more to one side than the other. The thread's CPU time
(``time.thread_time``) leaves those out and keeps everything the code itself does
on the CPU, the collector included. Latency, which is what a client waits, is
always wall time (``edumatcher.kit.open_loop``). Pass ``timer=time.perf_counter`` to
time wall time instead (code that sleeps or waits for I/O).
"""


@contextmanager
def collector(enabled: bool) -> Iterator[None]:
    """Run the block with the cyclic collector on or off; restore its state afterwards.

    >>> import gc
    >>> with collector(False):
    ...     gc.isenabled()
    False
    """
    was_enabled = _gc.isenabled()
    if enabled:
        _gc.enable()
    else:
        _gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _gc.enable()
        else:
            _gc.disable()


_Inner = Callable[[Any, Callable[[], float]], float]


def _callable_inner(fn: Callable[[], object]) -> _Inner:
    def inner(iterations: Any, timer: Callable[[], float]) -> float:
        start = timer()
        for _ in iterations:
            fn()
        return timer() - start

    return inner


def _statement_inner(stmt: str, setup: str | None, namespace: dict[str, Any]) -> _Inner:
    # Inline the statement in the loop, as timeit does: no call per iteration, so
    # nanosecond-scale statements are not drowned by the cost of calling them.
    # A string setup sits in the same function, so the names it binds are locals
    # the statement can use; it runs before the clock starts.
    compile(stmt, "<measure stmt>", "exec")  # a clear SyntaxError naming the statement
    if setup is not None:
        compile(setup, "<measure setup>", "exec")
    source = (
        "def _measure_inner(_iterations, _timer):\n"
        + textwrap.indent(setup or "pass", "    ") + "\n"
        + "    _start = _timer()\n"
        + "    for _ in _iterations:\n"
        + textwrap.indent(stmt, "        ") + "\n"
        + "    return _timer() - _start\n"
    )
    local: dict[str, Any] = {}
    exec(compile(source, "<measure>", "exec"), namespace, local)
    return local["_measure_inner"]


class CollectorTally:
    """Counts the collections that start while each side of a comparison is being timed.

    Installed as a ``gc.callbacks`` entry for the duration of a ``with`` block;
    set ``side`` (0, 1, or None between samples) before each sample. ``counts[i]``
    is how many collections started during side i's samples. Collections during a
    ``setup`` that runs inside a sample call are counted too (it is rare).

    >>> tally = CollectorTally()
    >>> with tally:
    ...     tally.side = 0
    ...     _ = _gc.collect()
    ...     tally.side = None
    >>> tally.counts
    [1, 0]
    """

    def __init__(self) -> None:
        self.side: int | None = None
        self.counts = [0, 0]

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and self.side is not None:
            self.counts[self.side] += 1

    def __enter__(self) -> CollectorTally:
        _gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self in _gc.callbacks:
            _gc.callbacks.remove(self)


def _empty_twin(fn_or_stmt: Callable[[], object] | str) -> Callable[[], object] | str:
    """What ``fn_or_stmt`` costs without its work: ``pass`` inlined the same way, or a call of an empty function."""
    return "pass" if isinstance(fn_or_stmt, str) else _nothing


def _nothing() -> None:
    """The empty call a callable's loop overhead is measured with."""


def _loop_overhead(fn_or_stmt: Callable[[], object] | str, setup: Callable[[], object] | str | None,
                   namespace: dict[str, Any], timer: Callable[[], float], number: int, samples: int = 7) -> float:
    """Seconds per call of the timing loop alone (``_empty_twin`` timed ``number`` times a sample; median of 7).

    No setup runs (the empty twin needs no names): a setup with side effects runs
    exactly as often as the caller asked for. ``setup`` and ``namespace`` are
    accepted for a uniform call.
    """
    sample = _make_sampler(_empty_twin(fn_or_stmt), None, {}, timer)
    sample(number)
    return statistics.median(sample(number) / number for _ in range(samples))


def _make_sampler(
    fn_or_stmt: Callable[[], object] | str, setup: Callable[[], object] | str | None, namespace: dict[str, Any],
    timer: Callable[[], float] = TIMER,
) -> Callable[[int], float]:
    """Return ``sample(calls)``: run ``setup`` untimed, then time ``calls`` calls; seconds in all.

    Shared by ``measure``, the comparisons and ``paired_rounds``, so both time code
    the same way: a statement string is inlined in the loop (with a string setup
    in the same function), a callable is called.
    """
    before: Callable[[], object] | None
    if isinstance(fn_or_stmt, str):
        inner = _statement_inner(fn_or_stmt, setup if isinstance(setup, str) else None, namespace)
        before = setup if callable(setup) else None
    elif callable(fn_or_stmt):
        inner = _callable_inner(fn_or_stmt)
        if isinstance(setup, str):
            code = compile(setup, "<measure setup>", "exec")
            before = functools.partial(exec, code, namespace)
        else:
            before = setup
    else:
        raise TypeError(f"measure() needs a callable or a statement string, not {type(fn_or_stmt).__name__}")

    def sample(calls: int) -> float:
        if before is not None:
            before()
        return inner(itertools.repeat(None, calls), timer)

    return sample


def _calibrate(sample: Callable[[int], float], target: float) -> int:
    """Smallest call count found whose sample lasts at least ``target`` seconds."""
    calls = 1
    while True:
        elapsed = sample(calls)
        if elapsed >= target:
            return calls
        # Aim 20 % past the target, but grow at most tenfold per trial so one
        # unluckily fast trial cannot launch a sample lasting minutes.
        wanted = math.ceil(calls * target * 1.2 / elapsed) if elapsed > 0 else calls * 10
        calls = max(calls + 1, min(calls * 10, wanted))


def _clock_name(timer: Callable[[], float]) -> str:
    if timer is TIMER:
        return TIMER_NAME
    return "wall time" if timer is time.perf_counter else getattr(timer, "__name__", "custom clock")


ROUNDS = 40
"""Paired rounds one worker process takes in ``paired_rounds`` (about 40 ms of samples at 0.5 ms each).

Few, on purpose: what varies between processes (memory layout, hash seed, code
placement) is fixed within one, so more rounds in one worker narrow nothing that a
rerun varies; more workers do (``edumatcher.kit._compare.WORKERS``).
"""


def _load(target: str) -> Any:
    module, sep, name = target.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"a factory must look like 'package.module:function', not {target!r}")
    return getattr(importlib.import_module(module), name)


def _side_sampler(item: Any, setup: str | None, namespace: dict[str, Any], timer: Callable[[], float],
                  target: float, scale: float) -> tuple[Callable[[], float], int, float | None]:
    """(sample, number, loop overhead per call) for one side: a statement, a callable or a ``Pass``."""
    if not isinstance(item, str) and hasattr(item, "run") and hasattr(item, "prepare"):  # a Pass (duck-typed:
        # in a worker this module is loaded on its own, so the kit's Pass class may be another copy)
        if scale != 1.0:
            raise ValueError("scale_b applies to statements and callables, not to a Pass")

        def one_pass() -> float:
            data = item.prepare() if item.prepare is not None else None
            start = timer()
            result = item.run(data)
            elapsed = timer() - start
            del data, result
            return elapsed

        one_pass()  # warm-up
        return one_pass, 1, None
    sample = _make_sampler(item, setup, namespace, timer)
    number = _calibrate(sample, target)
    calls = max(1, round(number * scale))
    sample(calls)  # warm-up
    overhead = _loop_overhead(item, setup, namespace, timer, number)
    return (lambda: sample(calls) / number), number, overhead


def one_round(sample_a: Callable[[], float], sample_b: Callable[[], float], order: random.Random,
              tally: CollectorTally) -> tuple[float, float]:
    """One paired round: A then B or B then A, as ``order`` draws it, with ``tally`` told whose sample runs."""
    if order.random() < 0.5:
        tally.side = 0
        x = sample_a()
        tally.side = 1
        y = sample_b()
    else:
        tally.side = 1
        y = sample_b()
        tally.side = 0
        x = sample_a()
    tally.side = None
    return x, y


def paired_rounds(
    a: str | None = None,
    b: str | None = None,
    *,
    setup: str | None = None,
    contenders: str | None = None,
    kwargs: dict[str, Any] | None = None,
    rounds: int = ROUNDS,
    target: float = SAMPLE_TARGET,
    gc: bool = True,
    seed: int = 0,
    scale_b: float = 1.0,
    wall: bool = False,
) -> dict[str, Any]:
    """Take ``rounds`` paired samples of two contenders in this process; return plain numbers (the worker side).

    The contenders are statement strings ``a`` and ``b`` (run after ``setup`` in a
    fresh namespace, inlined in the loop as ``timeit`` does), or what the factory
    ``contenders`` ("package.module:function", called with ``kwargs``) returns: a
    pair whose items are statements, zero-argument callables or ``Pass`` objects.
    Each side is calibrated to ``target`` seconds a sample and warmed up; each
    round takes A then B or B then A, drawn from ``random.Random(seed)``. Samples
    are seconds per call on ``TIMER`` (``wall``: ``time.perf_counter``).
    ``scale_b`` makes B's samples ``scale_b`` times A's work by construction (B
    runs that many more calls per sample, divided by the same count): the known
    effects ``calibrate_rule`` tests the verdict rule with.

    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, not {rounds!r}")
    timer = time.perf_counter if wall else TIMER
    namespace: dict[str, Any] = {}
    if contenders is not None:
        pair = _load(contenders)(**(kwargs or {}))
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(f"{contenders} must return a pair (a, b), not {type(pair).__name__}")
        item_a, item_b = pair
    elif a is not None and b is not None:
        item_a, item_b = a, b
    else:
        raise ValueError("give the statements a and b, or a contenders factory")
    order = random.Random(seed)
    tally = CollectorTally()
    xs: list[float] = []
    ys: list[float] = []
    with collector(gc):
        sample_a, number_a, overhead_a = _side_sampler(item_a, setup, namespace, timer, target, 1.0)
        sample_b, number_b, overhead_b = _side_sampler(item_b, setup, namespace, timer, target, scale_b)
        with tally:
            for _ in range(rounds):
                x, y = one_round(sample_a, sample_b, order, tally)
                xs.append(x)
                ys.append(y)
        gc_enabled = _gc.isenabled()
    return {
        "a": xs, "b": ys, "number": [number_a, number_b], "collections": tally.counts,
        "overhead": [overhead_a, overhead_b], "clock": _clock_name(timer), "gc": gc_enabled, "seed": seed,
        "pid": os.getpid(), "hash_seed": os.environ.get("PYTHONHASHSEED", "random"),
        "python": sys.version.split()[0],
    }
