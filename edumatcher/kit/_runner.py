"""Timing: calibration, warm-up, samples; ``measure``, ``interleave``, and what a worker process times.

Method
------
One *sample* is the time of ``number`` back-to-back calls, divided by ``number``:
seconds per call. A measurement is

1. **Calibration** (when ``number`` is None): run 1, then more calls, until one
   sample lasts at least ``target`` seconds (``SAMPLE_TARGET``, half a
   millisecond, by default: shorter than a scheduler time slice, see there).
2. **Warm-up**: at least one untimed sample. The first calls of a function pay
   for things the steady state does not: the interpreter's specialising
   (adaptive) bytecode, cold CPU caches, lazily built caches and imports.
3. **Samples**: ``repeat`` timed samples (``REPEAT`` by default, at least
   ``MIN_REPEAT``), read from ``TIMER``: this thread's CPU time where the
   platform gives it precisely, so time the scheduler gave to other processes is
   not charged to the code. ``setup`` runs before each one, outside the timed region.
4. **Summary**: the **median** is the headline figure; the min and max are shown
   beside it, and so is the timing loop's own cost per call (``loop_overhead``):
   for a statement of a few nanoseconds the loop is a large part of the figure.

Measured when this was written (CPython 3.11.7, a 2-CPU VM, load 10): 50 ms
wall-clock samples put ``d[k]`` at 175 ns; 0.5 ms samples on the thread's CPU
clock at 18.6 ns, of which 5.4 ns is the loop.

The collector
-------------
``gc=False`` switches the cyclic garbage collector off for the whole sampling
phase (calibration, warm-up, setups, samples) and restores its previous state
afterwards, even when the timed code raises. A collection is triggered by
allocation counts, not by the code under test, and a full collection walks
*every* tracked object in the process: the harness's own data included. With
the collector on, a few samples pay for that walk and the others do not, which
is a classic source of bimodal results (``Measurement.warnings`` says so).
``CollectorTally`` counts the collections that fell inside each side's samples.

In a worker process
-------------------
``paired_rounds`` is what a fresh worker process runs for ``compare_fresh``
(``edumatcher.kit._compare``): it builds both contenders from source or from an
importable factory, calibrates, warms up and takes paired rounds in random
order, and returns plain numbers; the statistics happen in the parent.

>>> m = measure("x * 2", setup="x = 21", repeat=5, label="double")
>>> m.repeat, m.label, m.clock == TIMER_NAME, m.loop_overhead is not None
(5, 'double', True, True)
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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ._measurement import MIN_REPEAT, Measurement

__all__ = [
    "DEFAULT_TARGET", "SAMPLE_TARGET", "REPEAT", "TIMER", "TIMER_NAME", "Pass", "PassRecord", "measure",
    "measure_passes", "interleave", "collector", "calibrated_sampler", "CollectorTally", "paired_rounds",
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

DEFAULT_TARGET = SAMPLE_TARGET
"""Seconds one calibrated sample of ``measure`` lasts at least (it was 50 ms of wall time before issue 21)."""

REPEAT = 31
"""Samples ``measure`` takes by default: 31 half-millisecond samples cost about 16 ms."""


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


def _check_counts(repeat: int, warmup: int, allow_few_repeats: bool) -> None:
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be a positive int, not {repeat!r}")
    if repeat < MIN_REPEAT and not allow_few_repeats:
        raise ValueError(
            f"repeat={repeat}: a median needs at least {MIN_REPEAT} samples "
            "(pass allow_few_repeats=True to accept a fragile figure, which will carry a warning)"
        )
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 1:
        raise ValueError(f"warmup must be an int >= 1 (the first calls are never representative), not {warmup!r}")


def measure(
    fn_or_stmt: Callable[[], object] | str,
    *,
    repeat: int | None = None,
    number: int | None = None,
    target: float = DEFAULT_TARGET,
    warmup: int = 1,
    gc: bool = True,
    setup: Callable[[], object] | str | None = None,
    globals: dict[str, Any] | None = None,
    label: str = "",
    ops_per_call: int = 1,
    allow_few_repeats: bool = False,
    timer: Callable[[], float] | None = None,
) -> Measurement:
    """Time ``fn_or_stmt`` honestly and return a ``Measurement`` (see the module docstring).

    ``fn_or_stmt`` is a callable taking no argument, or a statement string run in
    ``globals`` (a fresh namespace by default) and inlined in the timing loop.
    ``number`` calls make one sample; None calibrates it so one sample lasts at
    least ``target`` seconds. ``repeat`` samples are taken (None: ``REPEAT``).
    ``setup`` (callable or string) runs before every sample, untimed. ``gc`` turns
    the collector on or off while sampling and restores it afterwards. ``timer``:
    ``TIMER`` (this thread's CPU time) by default; ``time.perf_counter`` for code
    that waits. The timing loop's own cost is measured too (``loop_overhead``).
    Cost: about ``(repeat + warmup + 7) * target`` plus calibration, 20 ms by default.

    >>> m = measure("x * 2", setup="x = 21", repeat=5, target=0.001, label="double")
    >>> m.repeat, m.label, m.median > 0
    (5, 'double', True)
    """
    repeat = REPEAT if repeat is None else repeat
    _check_counts(repeat, warmup, allow_few_repeats)
    if number is not None and (isinstance(number, bool) or not isinstance(number, int) or number < 1):
        raise ValueError(f"number must be a positive int or None, not {number!r}")
    if not target > 0:
        raise ValueError(f"target must be a positive number of seconds, not {target!r}")
    if setup is not None and not (callable(setup) or isinstance(setup, str)):
        raise TypeError(f"setup must be a callable or a statement string, not {type(setup).__name__}")
    timer = TIMER if timer is None else timer
    namespace = globals if globals is not None else {}
    sample = _make_sampler(fn_or_stmt, setup, namespace, timer)

    with collector(gc):
        if number is None:
            number = _calibrate(sample, target)
        for _ in range(warmup):
            sample(number)
        samples = [sample(number) / number for _ in range(repeat)]
        gc_enabled = _gc.isenabled()
        overhead = _loop_overhead(fn_or_stmt, setup, namespace, timer, number)
    return Measurement(
        samples=tuple(samples), number=number, label=label, warmup=warmup,
        gc_enabled=gc_enabled, ops_per_call=ops_per_call, clock=_clock_name(timer), loop_overhead=overhead,
    )


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


# --------------------------------------------------------------------------- whole passes


@dataclass(frozen=True)
class Pass:
    """A contender whose every sample is one call of ``run(prepare())``.

    ``prepare`` builds fresh input (a new book, new order objects) outside the
    timed region; only ``run`` is timed, and what it returns and what ``prepare``
    built are released after the clock stops, so tearing down a large structure
    is not billed to ``run`` either. ``ops_per_call`` is how many operations one
    pass performs.
    """

    label: str
    run: Callable[[Any], object]
    prepare: Callable[[], Any] | None = None
    ops_per_call: int = 1


@dataclass(frozen=True)
class PassRecord:
    """What ``interleave`` reports after each pass: who, which round, how long, what ``run`` returned."""

    label: str
    round: int
    warmup: bool
    seconds: float
    result: object


_interleave_ids = itertools.count(1)
"""Numbers each interleaved run, so measurements taken side by side can be told apart."""


def new_seed() -> int:
    """A fresh random seed (from the OS), for a comparison's round order; recorded on the result."""
    return random.SystemRandom().randrange(2**32)


def interleave(
    contenders: Sequence[Pass],
    *,
    repeat: int = MIN_REPEAT,
    warmup: int = 1,
    gc: bool = True,
    on_pass: Callable[[PassRecord], None] | None = None,
    allow_few_repeats: bool = False,
    timer: Callable[[], float] | None = None,
    seed: int | None = None,
) -> list[Measurement]:
    """Time several contenders in rounds, each round in a random order, one pass per sample.

    Rounds spread slow drifts of the machine (another job starting, CPU
    frequency, thermal throttling) over every contender instead of charging them
    all to whichever ran last; the order within a round is shuffled (``seed``:
    None draws one) because a strict A B A B has a period that a periodic
    disturbance can lock onto. Passes are timed on ``timer`` (``TIMER``, this
    thread's CPU time, by default). Warm-up rounds come first and are not
    recorded. ``on_pass`` is called after every pass, warm-ups included (progress
    lines, checking results). With ``gc=False`` a young-generation collection runs
    after every pass, untimed, so garbage cycles never accumulate over a long run.
    Returns one ``Measurement`` per contender, in the order given.
    """
    _check_counts(repeat, warmup, allow_few_repeats)
    if not contenders:
        raise ValueError("interleave() needs at least one contender")
    clock = TIMER if timer is None else timer
    order = random.Random(new_seed() if seed is None else seed)
    samples: list[list[float]] = [[] for _ in contenders]
    slots = list(range(len(contenders)))
    with collector(gc):
        for round_no in range(-warmup, repeat):
            order.shuffle(slots)
            for slot in slots:
                contender = contenders[slot]
                data = contender.prepare() if contender.prepare is not None else None
                start = clock()
                result = contender.run(data)
                elapsed = clock() - start
                del data  # teardown happens here, after the clock stopped
                if round_no >= 0:
                    samples[slot].append(elapsed)
                if on_pass is not None:
                    on_pass(PassRecord(contender.label, round_no, round_no < 0, elapsed, result))
                del result
                if not gc:
                    # With the collector off, cycles made by one pass would pile up
                    # over the run; collect them here, off the clock. The youngest
                    # generation holds everything the pass allocated (no collection
                    # ran during it), so a cheap generation-0 collection suffices.
                    _gc.collect(0)
        gc_enabled = _gc.isenabled()
    interleave_id = next(_interleave_ids)
    return [
        Measurement(
            samples=tuple(s), number=1, label=c.label, warmup=warmup, gc_enabled=gc_enabled,
            ops_per_call=c.ops_per_call, interleave_id=interleave_id, clock=_clock_name(clock),
        )
        for c, s in zip(contenders, samples, strict=True)
    ]


def measure_passes(
    run: Callable[[Any], object],
    prepare: Callable[[], Any] | None = None,
    *,
    label: str = "",
    ops_per_call: int = 1,
    repeat: int = MIN_REPEAT,
    warmup: int = 1,
    gc: bool = True,
    allow_few_repeats: bool = False,
) -> Measurement:
    """Time ``run(prepare())`` with a fresh ``prepare()`` per sample (``number`` is 1).

    >>> m = measure_passes(sorted, lambda: list(range(1000, 0, -1)), label="sort 1000", ops_per_call=1000)
    >>> m.number, m.ops_per_call
    (1, 1000)
    """
    (result,) = interleave(
        [Pass(label, run, prepare, ops_per_call)],
        repeat=repeat, warmup=warmup, gc=gc, allow_few_repeats=allow_few_repeats,
    )
    return result


# --------------------------------------------------------------------------- samplers for comparisons


def calibrated_sampler(
    fn_or_stmt: Callable[[], object] | str, *, setup: Callable[[], object] | str | None = None,
    namespace: dict[str, Any] | None = None, target: float = SAMPLE_TARGET, timer: Callable[[], float] | None = None,
) -> tuple[Callable[[], float], int]:
    """Return ``(sample, number)``: a zero-argument sampler of seconds per call, and the calls in one sample.

    ``number`` is calibrated so one sample lasts about ``target`` seconds on
    ``timer`` (``TIMER`` by default), and one untimed sample has already run as a
    warm-up. For experiments that interleave more than two statements in one round.
    """
    sample = _make_sampler(fn_or_stmt, setup, {} if namespace is None else namespace, TIMER if timer is None else timer)
    number = _calibrate(sample, target)
    sample(number)  # warm-up: the specialising interpreter and caches settle before anything is kept
    return (lambda: sample(number) / number), number


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
    if isinstance(item, Pass):
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

    >>> r = paired_rounds("x + 1", "x + 1", setup="x = 1", rounds=5, seed=3)
    >>> len(r["a"]), len(r["b"]), r["collections"], r["seed"]
    (5, 5, [0, 0], 3)
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
                xs.append(x)
                ys.append(y)
        gc_enabled = _gc.isenabled()
    return {
        "a": xs, "b": ys, "number": [number_a, number_b], "collections": tally.counts,
        "overhead": [overhead_a, overhead_b], "clock": _clock_name(timer), "gc": gc_enabled, "seed": seed,
        "pid": os.getpid(), "hash_seed": os.environ.get("PYTHONHASHSEED", "random"),
        "python": sys.version.split()[0],
    }
