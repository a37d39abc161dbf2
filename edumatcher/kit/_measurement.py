"""The data: a ``Measurement`` is samples plus the conditions they were taken under, and its warnings.

A measurement is what ``measure``, ``interleave`` and the comparisons return
(pyperf's ``Run`` plays this role there). Its summary (median, min, max, spread)
is computed from the samples; its ``warnings`` say, in plain words, why a figure
should not be trusted:

* large spread: the max or the min lies 50 % or more from the median, or the
  standard deviation is 10 % or more of the mean;
* bimodal samples (see ``bimodal_split``): two clusters separated by a gap;
* fewer than 5 samples (only possible with ``allow_few_repeats=True``).

>>> m = Measurement.from_samples([1.00e-6, 1.02e-6, 0.99e-6, 1.01e-6, 1.00e-6], label="demo")
>>> format_seconds(m.median), m.warnings
('1.00 µs', [])
"""

from __future__ import annotations

import html
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._formatter import _percent, _warnings_html, format_rate, format_seconds
from ._metadata import InterpreterInfo, MachineInfo, interpreter, machine

__all__ = ["MIN_REPEAT", "SPREAD_LIMIT", "RSTDEV_LIMIT", "Measurement", "bimodal_split"]

MIN_REPEAT = 5
"""Fewest samples a measurement may have without ``allow_few_repeats=True``."""

SPREAD_LIMIT = 0.5
"""Warn when the max or the min lies this far (relative) from the median or further."""

RSTDEV_LIMIT = 0.10
"""Warn when stdev / mean reaches this."""

BIMODAL_GAP_FACTOR = 3.0
"""A split is bimodal only if its gap is at least this many times the wider group's range."""

BIMODAL_MIN_GAP = 0.10
"""... and at least this fraction of the median (so timer-resolution clusters never count)."""


def bimodal_split(samples: Sequence[float]) -> tuple[list[float], list[float]] | None:
    """Return the two clusters if ``samples`` look bimodal, else None. O(n log n).

    The detector is deliberately conservative (a false alarm teaches people to
    ignore warnings). Sort the samples and consider each place where they could
    be cut into a low and a high group, each holding at least
    ``max(2, ceil(n / 10))`` samples (a collector that lengthens one sample in ten is worth a warning). Take the cut with the largest gap between
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
    smallest_group = max(2, math.ceil(n / 10))
    if n < 2 * smallest_group:
        return None
    cut = max(range(smallest_group, n - smallest_group + 1), key=lambda i: xs[i] - xs[i - 1])
    low, high = xs[:cut], xs[cut:]
    gap = high[0] - low[-1]
    within = max(low[-1] - low[0], high[-1] - high[0])
    if gap >= BIMODAL_GAP_FACTOR * within and gap >= BIMODAL_MIN_GAP * statistics.median(xs) and gap > 0:
        return low, high
    return None


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
    loop_overhead: float | None = None
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
        overhead = ""
        if self.loop_overhead is not None:
            overhead = f" (of which the timing loop: {format_seconds(self.loop_overhead)})"
        rows = [
            ("median", f"{format_seconds(self.median)} per call{overhead}"),
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
            "loop_overhead": self.loop_overhead,
        }
