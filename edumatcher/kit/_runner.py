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
The samplers, the calibration and ``TIMER`` live in ``_timing`` (standard library
only), with ``paired_rounds``: what a fresh worker process runs for
``compare_fresh``. It builds both contenders from source or from an importable
factory, calibrates, warms up and takes paired rounds in random order, and
returns plain numbers; the statistics happen in the parent.

>>> m = measure("x * 2", setup="x = 21", repeat=5, label="double")
>>> m.repeat, m.label, m.clock == TIMER_NAME, m.loop_overhead is not None
(5, 'double', True, True)
"""

from __future__ import annotations

import gc as _gc
import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ._measurement import MIN_REPEAT, Measurement
from ._timing import (
    SAMPLE_TARGET,
    TIMER,
    TIMER_NAME,
    CollectorTally,
    _calibrate,
    _clock_name,
    _loop_overhead,
    _make_sampler,
    collector,
    paired_rounds,
)

__all__ = [
    "DEFAULT_TARGET", "SAMPLE_TARGET", "REPEAT", "TIMER", "TIMER_NAME", "Pass", "PassRecord", "measure",
    "measure_passes", "interleave", "collector", "calibrated_sampler", "CollectorTally", "paired_rounds",
]

DEFAULT_TARGET = SAMPLE_TARGET
"""Seconds one calibrated sample of ``measure`` lasts at least (it was 50 ms of wall time before issue 21)."""

REPEAT = 31
"""Samples ``measure`` takes by default: 31 half-millisecond samples cost about 16 ms."""


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
    timer: Callable[[], float] | None = None,
) -> Measurement:
    """Time ``run(prepare())`` with a fresh ``prepare()`` per sample (``number`` is 1), on ``timer`` (``TIMER``).

    >>> m = measure_passes(sorted, lambda: list(range(1000, 0, -1)), label="sort 1000", ops_per_call=1000)
    >>> m.number, m.ops_per_call
    (1, 1000)
    """
    (result,) = interleave(
        [Pass(label, run, prepare, ops_per_call)],
        repeat=repeat, warmup=warmup, gc=gc, allow_few_repeats=allow_few_repeats, timer=timer,
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
