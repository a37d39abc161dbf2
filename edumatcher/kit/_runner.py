"""Timing: calibration, warm-up, samples; ``measure``, ``interleave`` and the samplers comparisons use.

Method
------
One *sample* is the wall time (``time.perf_counter``) of ``number`` back-to-back
calls, divided by ``number``: seconds per call. A measurement is

1. **Calibration** (when ``number`` is None): run 1, then more calls, until one
   sample lasts at least ``target`` seconds (50 ms by default). Timer resolution
   and loop overhead are then negligible, and a sample is long enough to average
   over brief interruptions but short enough that ``repeat`` of them stay cheap.
2. **Warm-up**: at least one untimed sample. The first calls of a function pay
   for things the steady state does not: the interpreter's specialising
   (adaptive) bytecode, cold CPU caches, lazily built caches and imports.
3. **Samples**: ``repeat`` (at least 5) timed samples. ``setup`` runs before
   each one, outside the timed region.
4. **Summary**: the **median** is the headline figure. Interference on a shared
   machine only ever adds time, so the distribution is skewed to the right; the
   median ignores a few disturbed samples where the mean does not. The min and
   max are shown beside it, so the reader sees the run-to-run spread.

The collector
-------------
``gc=False`` switches the cyclic garbage collector off for the whole sampling
phase (calibration, warm-up, setups, samples) and restores its previous state
afterwards, even when the timed code raises. A collection is triggered by
allocation counts, not by the code under test, and a full collection walks
*every* tracked object in the process: the harness's own data included. With
the collector on, a few samples pay for that walk and the others do not, which
is a classic source of bimodal results. Turn it off to measure the algorithm;
leave it on (the default) to measure what a program really experiences, and let
the warnings below tell you when it disturbed the run.

Clocks
------
``measure`` reads wall time (``time.perf_counter``) by default; the comparisons read
``TIMER``, this thread's CPU time where it is precise (see ``TIMER``), in short
samples of ``SAMPLE_TARGET`` seconds made by ``calibrated_sampler``.

>>> m = measure("x * 2", setup="x = 21", repeat=5, target=0.001, label="double")
>>> m.repeat, m.label
(5, 'double')
"""

from __future__ import annotations

import functools
import gc as _gc
import itertools
import math
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ._measurement import MIN_REPEAT, Measurement

__all__ = [
    "DEFAULT_TARGET", "SAMPLE_TARGET", "TIMER", "TIMER_NAME", "Pass", "PassRecord", "measure", "measure_passes",
    "interleave", "collector", "calibrated_sampler",
]

DEFAULT_TARGET = 0.05
"""Seconds one calibrated sample of ``measure`` should last at least."""

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
"""The clock comparisons read: this thread's CPU time where it is precise, else wall time.

The question a comparison answers is "which code costs more", and on a shared
machine wall time also counts the milliseconds the scheduler gave to other
processes, by chance more to one side than the other. The thread's CPU time
(``time.thread_time``) leaves those out and keeps everything the code itself does
on the CPU, the collector included. Latency, which is what a client waits, is
always wall time (``edumatcher.kit.open_loop``). Pass ``timer=time.perf_counter`` to
compare wall times instead.
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
    repeat: int = MIN_REPEAT,
    number: int | None = None,
    target: float = DEFAULT_TARGET,
    warmup: int = 1,
    gc: bool = True,
    setup: Callable[[], object] | str | None = None,
    globals: dict[str, Any] | None = None,
    label: str = "",
    ops_per_call: int = 1,
    allow_few_repeats: bool = False,
) -> Measurement:
    """Time ``fn_or_stmt`` honestly and return a ``Measurement`` (see the module docstring).

    ``fn_or_stmt`` is a callable taking no argument, or a statement string run in
    ``globals`` (a fresh namespace by default) and inlined in the timing loop.
    ``number`` calls make one sample; None calibrates it so one sample lasts at
    least ``target`` seconds. ``setup`` (callable or string) runs before every
    sample, untimed. ``gc`` turns the collector on or off while sampling and
    restores it afterwards. Cost: about ``(repeat + warmup + calibration) * target``.

    >>> m = measure("x * 2", setup="x = 21", repeat=5, target=0.001, label="double")
    >>> m.repeat, m.label, m.median > 0
    (5, 'double', True)
    """
    _check_counts(repeat, warmup, allow_few_repeats)
    if number is not None and (isinstance(number, bool) or not isinstance(number, int) or number < 1):
        raise ValueError(f"number must be a positive int or None, not {number!r}")
    if not target > 0:
        raise ValueError(f"target must be a positive number of seconds, not {target!r}")
    if setup is not None and not (callable(setup) or isinstance(setup, str)):
        raise TypeError(f"setup must be a callable or a statement string, not {type(setup).__name__}")
    sample = _make_sampler(fn_or_stmt, setup, globals if globals is not None else {})

    with collector(gc):
        if number is None:
            number = _calibrate(sample, target)
        for _ in range(warmup):
            sample(number)
        samples = [sample(number) / number for _ in range(repeat)]
        gc_enabled = _gc.isenabled()
    return Measurement(
        samples=tuple(samples), number=number, label=label, warmup=warmup,
        gc_enabled=gc_enabled, ops_per_call=ops_per_call,
    )



def _make_sampler(
    fn_or_stmt: Callable[[], object] | str, setup: Callable[[], object] | str | None, namespace: dict[str, Any],
    timer: Callable[[], float] = time.perf_counter,
) -> Callable[[int], float]:
    """Return ``sample(calls)``: run ``setup`` untimed, then time ``calls`` calls; seconds in all.

    Shared by ``measure`` and ``comparison.compare_interleaved``, so both time code
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


def interleave(
    contenders: Sequence[Pass],
    *,
    repeat: int = MIN_REPEAT,
    warmup: int = 1,
    gc: bool = True,
    on_pass: Callable[[PassRecord], None] | None = None,
    allow_few_repeats: bool = False,
) -> list[Measurement]:
    """Time several contenders in alternation, A B A B ..., one pass per sample.

    Alternating spreads slow drifts of the machine (another job starting, CPU
    frequency, thermal throttling) over every contender instead of charging them
    all to whichever ran last. Warm-up rounds come first and are not recorded.
    ``on_pass`` is called after every pass, warm-ups included (progress lines,
    checking results). With ``gc=False`` a young-generation collection runs
    after every pass, untimed, so garbage cycles never accumulate over a long run. Returns one
    ``Measurement`` per contender, in order.
    """
    _check_counts(repeat, warmup, allow_few_repeats)
    if not contenders:
        raise ValueError("interleave() needs at least one contender")
    samples: list[list[float]] = [[] for _ in contenders]
    with collector(gc):
        for round_no in range(-warmup, repeat):
            for slot, contender in enumerate(contenders):
                data = contender.prepare() if contender.prepare is not None else None
                start = time.perf_counter()
                result = contender.run(data)
                elapsed = time.perf_counter() - start
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
            samples=tuple(s), number=1, label=c.label, warmup=warmup,
            gc_enabled=gc_enabled, ops_per_call=c.ops_per_call, interleave_id=interleave_id,
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
