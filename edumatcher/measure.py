"""Honest timing: every number the course shows comes through this module.

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

Warnings
--------
``Measurement.warnings`` lists, in plain words, why a figure should not be
trusted, and both renderings show them:

* large spread: the max or the min lies 50 % or more from the median, or the
  standard deviation is 10 % or more of the mean;
* bimodal samples (see ``bimodal_split``): two clusters separated by a gap;
* fewer than 5 samples (only possible with ``allow_few_repeats=True``).

Reading the figures
-------------------
* ``spread`` = (max - min) / median: the width of the observed range relative to
  the headline figure.
* ``rel_stdev`` = stdev / mean: the coefficient of variation.
* ``compare_interleaved(a, b)`` (in ``edumatcher.comparison``, served from here
  too) is how two things are compared: interleaved rounds, the ratio of medians
  with a bootstrap confidence interval, and a verdict worded from the interval.
  ``compare(a, b)`` does the same for two measurements already taken.

>>> m = Measurement.from_samples([1.00e-6, 1.02e-6, 0.99e-6, 1.01e-6, 1.00e-6], label="demo")
>>> format_seconds(m.median), m.warnings
('1.00 µs', [])
"""

from __future__ import annotations

import functools
import gc as _gc
import html
import itertools
import math
import os
import platform
import statistics
import sys
import sysconfig
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MIN_REPEAT", "DEFAULT_TARGET", "SPREAD_LIMIT", "RSTDEV_LIMIT",
    "InterpreterInfo", "MachineInfo", "interpreter", "machine",
    "Measurement", "Pass", "PassRecord", "measure", "measure_passes", "interleave",
    "Comparison", "compare", "compare_interleaved", "compare_passes", "compare_sampled",  # noqa: F822 (PEP 562, below)
    "significance", "bimodal_split",
    "MeasurementTable", "table", "format_seconds", "format_rate", "collector",
]

MIN_REPEAT = 5
"""Fewest samples a measurement may have without ``allow_few_repeats=True``."""

DEFAULT_TARGET = 0.05
"""Seconds one calibrated sample should last at least."""

SPREAD_LIMIT = 0.5
"""Warn when the max or the min lies this far (relative) from the median or further."""

RSTDEV_LIMIT = 0.10
"""Warn when stdev / mean reaches this."""

BIMODAL_GAP_FACTOR = 3.0
"""A split is bimodal only if its gap is at least this many times the wider group's range."""

BIMODAL_MIN_GAP = 0.10
"""... and at least this fraction of the median (so timer-resolution clusters never count)."""


# --------------------------------------------------------------------------- who ran it


@dataclass(frozen=True)
class InterpreterInfo:
    """Which Python produced a figure: implementation, version, build and compiler."""

    implementation: str
    version: str
    build: str
    compiler: str
    flags: tuple[str, ...] = ()

    def __str__(self) -> str:
        extra = f", {', '.join(self.flags)}" if self.flags else ""
        return f"{self.implementation} {self.version} ({self.build}) [{self.compiler}]{extra}"


@dataclass(frozen=True)
class MachineInfo:
    """Where a figure was produced: operating system, CPU model and CPU counts."""

    system: str
    architecture: str
    processor: str
    cpu_count: int
    usable_cpus: int

    def __str__(self) -> str:
        cpus = f"{self.cpu_count} CPUs"
        if self.usable_cpus != self.cpu_count:
            cpus += f" ({self.usable_cpus} usable)"
        return f"{self.system} {self.architecture}, {self.processor}, {cpus}"


@functools.lru_cache(maxsize=1)
def interpreter() -> InterpreterInfo:
    """Describe the running interpreter (cached: it cannot change within a process).

    >>> interpreter().version == platform.python_version()
    True
    """
    build_no, build_date = platform.python_build()
    flags: list[str] = []
    if sysconfig.get_config_var("Py_DEBUG"):
        flags.append("debug build")
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        flags.append("free-threaded")
    jit = getattr(sys, "_jit", None)  # 3.13+: the experimental JIT, when compiled in
    if jit is not None and getattr(jit, "is_enabled", lambda: False)():
        flags.append("JIT on")
    return InterpreterInfo(
        implementation=platform.python_implementation(),
        version=platform.python_version(),
        build=f"{build_no}, {build_date}",
        compiler=platform.python_compiler(),
        flags=tuple(flags),
    )


def _cpu_model() -> str:
    name = platform.processor()
    if name and name not in ("x86_64", "aarch64", "arm", "i386"):
        return name
    try:  # Linux leaves platform.processor() empty or generic; the model is in /proc
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return name or "unknown CPU"


@functools.lru_cache(maxsize=1)
def machine() -> MachineInfo:
    """Describe the machine: OS, architecture, CPU model, CPU count (cached).

    >>> machine().cpu_count >= 1
    True
    """
    count = os.cpu_count() or 1
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on every platform
        usable = count
    return MachineInfo(
        system=f"{platform.system()} {platform.release()}",
        architecture=platform.machine(),
        processor=_cpu_model(),
        cpu_count=count,
        usable_cpus=usable,
    )


# --------------------------------------------------------------------------- formatting


def _sig3(value: float) -> str:
    """``value`` with three significant digits, trailing zeros kept (``2.50``, ``123``)."""
    if value >= 1000:
        return f"{value:,.0f}"
    text = f"{value:#.3g}"
    return text.rstrip(".") if "e" not in text else text


def format_seconds(seconds: float) -> str:
    """Format a duration with a unit that keeps 1 to 3 digits before the point.

    >>> format_seconds(1.5e-7), format_seconds(2.346e-5), format_seconds(0.0123), format_seconds(2.0)
    ('150 ns', '23.5 µs', '12.3 ms', '2.00 s')
    """
    if seconds != seconds or seconds in (math.inf, -math.inf):
        return str(seconds)
    magnitude = abs(seconds)
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if magnitude >= scale:
            return f"{'-' if seconds < 0 else ''}{_sig3(magnitude / scale)} {unit}"
    return f"{'-' if seconds < 0 else ''}{_sig3(magnitude / 1e-9)} ns"


def format_rate(per_second: float, unit: str = "ops/s") -> str:
    """Format a throughput with an SI prefix and three significant digits.

    >>> format_rate(312_450), format_rate(1_234_567), format_rate(87.26)
    ('312 k ops/s', '1.23 M ops/s', '87.3 ops/s')
    """
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if per_second >= scale:
            return f"{_sig3(per_second / scale)} {prefix} {unit}"
    return f"{_sig3(per_second)} {unit}"


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.1f} %"


# --------------------------------------------------------------------------- bimodality


def bimodal_split(samples: Sequence[float]) -> tuple[list[float], list[float]] | None:
    """Return the two clusters if ``samples`` look bimodal, else None. O(n log n).

    The detector is deliberately conservative (a false alarm teaches people to
    ignore warnings). Sort the samples and consider each place where they could
    be cut into a low and a high group, each holding at least
    ``max(2, ceil(n / 5))`` samples. Take the cut with the largest gap between
    neighbours. The samples are bimodal when that gap is

    * at least ``BIMODAL_GAP_FACTOR`` (3) times the range of the wider group, and
    * at least ``BIMODAL_MIN_GAP`` (10 %) of the median of all samples.

    Fewer than 4 samples are never called bimodal.

    >>> bimodal_split([1.0, 1.01, 1.02, 2.0, 2.01])
    ([1.0, 1.01, 1.02], [2.0, 2.01])
    >>> bimodal_split([1.0, 1.1, 1.2, 1.3, 1.4]) is None
    True
    """
    xs = sorted(samples)
    n = len(xs)
    smallest_group = max(2, math.ceil(n / 5))
    if n < 2 * smallest_group:
        return None
    cut = max(range(smallest_group, n - smallest_group + 1), key=lambda i: xs[i] - xs[i - 1])
    low, high = xs[:cut], xs[cut:]
    gap = high[0] - low[-1]
    within = max(low[-1] - low[0], high[-1] - high[0])
    if gap >= BIMODAL_GAP_FACTOR * within and gap >= BIMODAL_MIN_GAP * statistics.median(xs) and gap > 0:
        return low, high
    return None


# --------------------------------------------------------------------------- the result


@dataclass
class Measurement:
    """The samples of one measurement, their summary and the warnings they raise.

    ``samples`` are seconds per call, in the order they were taken. ``number`` is
    how many calls each sample timed; ``ops_per_call`` how many operations one
    call performs (a benchmark pass over a 1,000,000-op workload has
    ``ops_per_call=1_000_000``), which gives the ``rate`` figures. Build one from
    known samples with ``from_samples`` (tests, quoted data). ``interleave_id`` is
    shared by the measurements of one interleaved run, whose sample i were taken
    side by side (``comparison.compare`` then pairs them). ``clock`` names what the
    samples measured: wall time (``time.perf_counter``) unless a comparison used the
    thread's CPU time.
    """

    samples: tuple[float, ...]
    number: int = 1
    label: str = ""
    warmup: int = 0
    gc_enabled: bool = True
    ops_per_call: int = 1
    interpreter: InterpreterInfo = field(default_factory=interpreter)
    machine: MachineInfo = field(default_factory=machine)
    interleave_id: int | None = None
    clock: str = "wall time"
    warnings: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.samples = tuple(float(s) for s in self.samples)
        if not self.samples:
            raise ValueError("a measurement needs at least one sample")
        if any(s < 0 or s != s for s in self.samples):
            raise ValueError(f"samples must be non-negative numbers, not {self.samples!r}")
        self.warnings = self._diagnose()

    @classmethod
    def from_samples(cls, samples: Sequence[float], **fields: Any) -> Measurement:
        """Build a measurement from given per-call samples (seconds); other fields by keyword.

        >>> Measurement.from_samples([2.0, 2.0, 2.0, 2.0, 2.0], label="flat").spread
        0.0
        """
        return cls(samples=tuple(samples), **fields)

    # The summary -------------------------------------------------------------

    @property
    def repeat(self) -> int:
        """How many samples were timed."""
        return len(self.samples)

    @property
    def median(self) -> float:
        """Median seconds per call: the headline figure."""
        return statistics.median(self.samples)

    @property
    def min(self) -> float:
        """Fastest sample, seconds per call."""
        return min(self.samples)

    @property
    def max(self) -> float:
        """Slowest sample, seconds per call."""
        return max(self.samples)

    @property
    def mean(self) -> float:
        """Mean seconds per call."""
        return statistics.fmean(self.samples)

    @property
    def stdev(self) -> float:
        """Sample standard deviation (0 with a single sample)."""
        return statistics.stdev(self.samples) if len(self.samples) > 1 else 0.0

    @property
    def spread(self) -> float:
        """(max - min) / median: the observed range relative to the median (0.12 is 12 %)."""
        return (self.max - self.min) / self.median if self.median else 0.0

    @property
    def rel_stdev(self) -> float:
        """stdev / mean, the coefficient of variation (0.03 is 3 %)."""
        return self.stdev / self.mean if self.mean else 0.0

    @property
    def rate(self) -> float:
        """Median operations per second: ``ops_per_call / median``."""
        return self.ops_per_call / self.median if self.median else math.inf

    @property
    def rate_range(self) -> tuple[float, float]:
        """(slowest, fastest) operations per second over the samples."""
        return (
            self.ops_per_call / self.max if self.max else math.inf,
            self.ops_per_call / self.min if self.min else math.inf,
        )

    @property
    def per_op(self) -> float:
        """Median seconds per operation: ``median / ops_per_call``."""
        return self.median / self.ops_per_call

    def _diagnose(self) -> list[str]:
        found: list[str] = []
        med = self.median
        if self.repeat < MIN_REPEAT:
            found.append(f"only {self.repeat} sample(s): a median of fewer than {MIN_REPEAT} is fragile")
        if med > 0:
            above, below = self.max / med - 1, 1 - self.min / med
            if above >= SPREAD_LIMIT or below >= SPREAD_LIMIT:
                found.append(
                    f"large spread: the max is {_percent(above)} above the median and the min "
                    f"{_percent(below)} below it; something else was using the machine, or the work varies"
                )
        if self.rel_stdev >= RSTDEV_LIMIT:
            found.append(f"large spread: the standard deviation is {_percent(self.rel_stdev)} of the mean")
        split = bimodal_split(self.samples)
        if split is not None:
            low, high = split
            found.append(
                f"samples look bimodal: {len(low)} near {format_seconds(statistics.median(low))} and "
                f"{len(high)} near {format_seconds(statistics.median(high))}; something (the collector, "
                "another process, CPU frequency) changed between samples"
            )
        return found

    # Renderings ---------------------------------------------------------------

    def _rows(self) -> list[tuple[str, str]]:
        rows = [
            ("median", f"{format_seconds(self.median)} per call"),
            ("min / max", f"{format_seconds(self.min)} / {format_seconds(self.max)}"),
            ("mean ± stdev", f"{format_seconds(self.mean)} ± {format_seconds(self.stdev)}"),
            ("spread", f"{_percent(self.spread)} (max-min)/median; rel. stdev {_percent(self.rel_stdev)}"),
        ]
        if self.ops_per_call != 1:
            slow, fast = self.rate_range
            rows.append((
                "throughput",
                f"{format_rate(self.rate)} (min–max {format_rate(slow)}–{format_rate(fast)}), "
                f"{format_seconds(self.per_op)} per op, {self.ops_per_call:,} ops per call",
            ))
        rows += [
            ("method", f"{self.repeat} samples × {self.number:,} call(s), warm-up {self.warmup}, "
                       f"collector {'on' if self.gc_enabled else 'off'}, {self.clock}"),
            ("interpreter", str(self.interpreter)),
            ("machine", str(self.machine)),
        ]
        return rows

    def __str__(self) -> str:
        title = self.label or "measurement"
        width = max(len(k) for k, _ in self._rows())
        lines = [title] + [f"  {k:<{width}}  {v}" for k, v in self._rows()]
        lines += [f"  WARNING: {w}" for w in self.warnings]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        esc = html.escape
        body = "".join(
            f"<tr><th style='text-align:left'>{esc(k)}</th><td style='text-align:left'>{esc(v)}</td></tr>"
            for k, v in self._rows()
        )
        caption = f"<caption style='text-align:left'><b>{esc(self.label or 'measurement')}</b></caption>"
        return f"<div><table>{caption}{body}</table>{_warnings_html(self.warnings)}</div>"

    def as_dict(self) -> dict[str, Any]:
        """Plain-data form (for JSON): samples, summary, warnings, interpreter and machine."""
        return {
            "label": self.label, "samples": list(self.samples), "number": self.number, "repeat": self.repeat,
            "warmup": self.warmup, "gc_enabled": self.gc_enabled, "ops_per_call": self.ops_per_call,
            "median": self.median, "min": self.min, "max": self.max, "mean": self.mean, "stdev": self.stdev,
            "spread": self.spread, "rel_stdev": self.rel_stdev, "warnings": list(self.warnings),
            "interpreter": str(self.interpreter), "machine": str(self.machine), "clock": self.clock,
        }


def _align(rows: list[list[str]]) -> list[str]:
    """Lay out text rows as columns: the first left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
        for r in rows
    ]


def _warnings_html(warnings: Sequence[str], prefix: str = "") -> str:
    if not warnings:
        return ""
    items = "".join(f"<li>{html.escape(prefix + w)}</li>" for w in warnings)
    return (
        "<div style='color:#8a1c00;background:#fff3e0;border-left:4px solid #e65100;padding:4px 8px'>"
        f"<b>⚠ Do not trust these figures yet:</b><ul style='margin:2px 0'>{items}</ul></div>"
    )


# --------------------------------------------------------------------------- timing


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


# --------------------------------------------------------------------------- comparing


def significance(samples_a: Sequence[float], samples_b: Sequence[float]) -> float:
    """Two-sided p-value of the Mann-Whitney U (Wilcoxon rank-sum) test. Stdlib only.

    The question: could both sets of samples come from the same distribution?
    Pool them, rank them (ties share the mean of their ranks) and add up the ranks
    of ``samples_a``. The p-value is the probability, over every way of splitting
    the pooled ranks into groups of these sizes, of a rank sum at least as far from
    its expected value as the one observed.

    * 30 samples or fewer in total: that probability is computed **exactly**, by
      counting every split (dynamic programming over subset sizes and rank sums;
      exact with ties too).
    * More: the normal approximation with tie correction and continuity correction.

    The test assumes nothing about the shape of the distributions, which suits
    timings (skewed, with outliers). With 5 against 5 samples the smallest
    possible p-value is 2/252, about 0.008.

    >>> round(significance([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]), 4)
    0.0079
    >>> significance([1, 2, 3], [1, 2, 3])
    1.0
    """
    a, b = [float(x) for x in samples_a], [float(x) for x in samples_b]
    if not a or not b:
        raise ValueError("significance() needs at least one sample on each side")
    n1, n2 = len(a), len(b)
    n = n1 + n2
    pooled = sorted([(x, 0) for x in a] + [(x, 1) for x in b])
    # Doubled mid-ranks stay integers: a tie over ranks i..j gets i + j.
    ranks2: list[int] = []
    tie_sizes: list[int] = []
    i = 0
    while i < n:
        j = i
        while j + 1 < n and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        ranks2 += [i + 1 + j + 1] * (j - i + 1)
        tie_sizes.append(j - i + 1)
        i = j + 1
    observed2 = sum(r for r, (_, side) in zip(ranks2, pooled, strict=True) if side == 0)
    expected2 = n1 * (n + 1)  # twice the expected rank sum n1(n+1)/2
    if n <= 30:
        return _exact_rank_sum_p(ranks2, n1, abs(observed2 - expected2), expected2)
    u = observed2 / 2 - n1 * (n1 + 1) / 2
    mu = n1 * n2 / 2
    tie_term = sum(t**3 - t for t in tie_sizes) / (n * (n - 1))
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term))
    if sigma == 0:
        return 1.0
    z = max(abs(u - mu) - 0.5, 0.0) / sigma
    return min(1.0, math.erfc(z / math.sqrt(2)))


def _exact_rank_sum_p(ranks2: list[int], n1: int, observed_distance: int, expected2: int) -> float:
    # counts[k][s]: how many k-element subsets of the ranks seen so far have doubled sum s.
    total = sum(ranks2)
    counts = [[0] * (total + 1) for _ in range(n1 + 1)]
    counts[0][0] = 1
    for seen, r in enumerate(ranks2):
        for k in range(min(seen + 1, n1), 0, -1):
            below, row = counts[k - 1], counts[k]
            for s in range(total - r, -1, -1):
                if below[s]:
                    row[s + r] += below[s]
    final = counts[n1]
    extreme = sum(c for s, c in enumerate(final) if c and abs(s - expected2) >= observed_distance)
    return min(1.0, extreme / sum(final))


# --------------------------------------------------------------------------- tables


@dataclass
class MeasurementTable:
    """Several measurements as one table; ``x fastest`` is each median over the fastest median."""

    measurements: list[Measurement]

    def _header(self) -> list[str]:
        head = ["", "median", "min", "max", "spread", "rel. stdev", "samples", "x fastest"]
        if any(m.ops_per_call != 1 for m in self.measurements):
            head.append("throughput (median)")
        return head

    def _rows(self) -> list[list[str]]:
        fastest = min(m.median for m in self.measurements)
        with_rate = any(m.ops_per_call != 1 for m in self.measurements)
        rows = []
        for m in self.measurements:
            row = [
                m.label or "?", format_seconds(m.median), format_seconds(m.min), format_seconds(m.max),
                _percent(m.spread), _percent(m.rel_stdev), f"{m.repeat}×{m.number:,}",
                f"{m.median / fastest:.2f}" if fastest else "-",
            ]
            if with_rate:
                row.append(format_rate(m.rate) if m.ops_per_call != 1 else "")
            rows.append(row)
        return rows

    def _footer(self) -> list[str]:
        where = {(str(m.interpreter), str(m.machine)) for m in self.measurements}
        gcs = {m.gc_enabled for m in self.measurements}
        lines = [f"interpreter: {i}; machine: {mc}" for i, mc in sorted(where)]
        lines.append("collector: " + ("mixed" if len(gcs) > 1 else ("on" if gcs.pop() else "off")) + " while timing")
        return lines

    def _warnings(self) -> list[str]:
        return [f"{m.label or '?'}: {w}" for m in self.measurements for w in m.warnings]

    def __str__(self) -> str:
        if not self.measurements:
            return "(no measurements)"
        lines = _align([self._header()] + self._rows())
        lines += self._footer()
        lines += [f"WARNING {w}" for w in self._warnings()]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        if not self.measurements:
            return "<p>(no measurements)</p>"
        esc = html.escape
        head = "".join(f"<th>{esc(h)}</th>" for h in self._header())
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:{'left' if i == 0 else 'right'}'>{esc(c)}</td>" for i, c in enumerate(r)) + "</tr>"
            for r in self._rows()
        )
        footer = "<br>".join(esc(line) for line in self._footer())
        return f"<div><table><tr>{head}</tr>{body}</table><p style='font-size:smaller'>{footer}</p>{_warnings_html(self._warnings())}</div>"


def table(measurements: Sequence[Measurement]) -> MeasurementTable:
    """Render several measurements as one table (text in a terminal, HTML in Jupyter).

    >>> str(table([Measurement.from_samples([1e-3] * 5, label="a")])).splitlines()[1].split()[:3]
    ['a', '1.00', 'ms']
    """
    return MeasurementTable(list(measurements))


# The comparison has a module of its own (its method, its statistics). The chapters take every
# timing tool from ``edumatcher.measure``, so its names are served from here too, looked up on
# first use (PEP 562): ``comparison`` imports this module, so an import at the top would be circular.
_FROM_COMPARISON = frozenset({"Comparison", "compare", "compare_interleaved", "compare_passes", "compare_sampled"})


def __getattr__(name: str) -> Any:
    if name in _FROM_COMPARISON:
        from . import comparison

        return getattr(comparison, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
