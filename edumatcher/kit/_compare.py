"""A comparison a student can trust: paired rounds, a ratio with its interval, and a verdict a rerun keeps.

The question is always "how much slower is A than B, on this interpreter, on this
machine?", and the *verdict* must not change when the cell runs again, on a busy
machine too. These choices make it so.

1. **Paired rounds on the CPU clock.** A round takes one sample of A and one of B,
   in an order drawn at random for each round (AB or BA; a fresh seed for every
   comparison, recorded as ``Comparison.seed``). Samples last about half a
   millisecond on this thread's CPU clock (``edumatcher.kit._runner``), so time the
   scheduler gave to other processes is not charged to either side, and a slow
   drift of the machine lands on both sides of a round.
2. **An estimator from the pairs.** The ratio is the median of the per-round
   ratios A_i / B_i, not median(A) / median(B): a round's two samples share the
   machine's state, and their ratio cancels it. Measured when this was written
   (±20 % drift, 2 % noise, 100 rounds): an interval 0.014 wide from the per-round
   ratios against 0.051 from the ratio of medians.
3. **An interval that covers what a rerun varies.** Some things are fixed for a
   whole process: where the code and data landed in memory, the string hash seed,
   the calibrated loop count. Two copies of the same function in one process were
   measured 14 % apart here (CPython 3.11.7, a 2-CPU VM); in the next process they
   were not. One process's interval cannot see that, so a verdict a chapter teaches
   comes from ``compare_fresh``: ``WORKERS`` fresh worker processes (pyperf's model),
   each taking ``ROUNDS`` paired rounds; each process gives one ratio (the median of
   its per-round ratios), and the interval is the distribution-free confidence
   interval of the median of those per-process ratios (order statistics, the sign
   test's interval), so one odd process cannot move it. In-process comparisons
   (``compare_interleaved``, ``compare_passes``) use the same interval over their
   rounds, and say that it covers one process only.
4. **An equivalence-style rule** with a *negligible* band (±5 % by default):

   * ``slower`` / ``faster``: the whole interval lies beyond the band;
   * ``same``: the whole interval lies inside it;
   * ``too close to call``: anything else (``outcome`` calls it "undetermined").

   "Different" and "important" are one question: an effect inside the band is
   never called slower, and an effect near the band's edge is never called both
   slower and same on different runs; it is too close to call. Chapters judge only
   comparisons far from the band or truly null, and report the others as a ratio
   without a verdict (``Comparison.as_ratio()``).
5. **Families.** A chapter with k judged comparisons can pass ``family=k``: each
   interval is then drawn at confidence 1 - 0.05/k (Bonferroni), so the chance of
   any spurious direction in the chapter stays near 5 %.
6. **The collector.** When the collector ran inside the timed samples of a fresh
   worker (``CollectorTally``), or one side's samples are bimodal with the collector
   on, the comparison judges the *mean* cost (the ratio of sums), which includes
   the pauses, and its line says so: a median would judge only the samples the
   collector missed.

What a comparison shows: one line, conclusion first, at most ``MAX_LINE``
characters ("orjson encodes 14.3x faster than json"), and a warning line where
there is one; the table, the interval, the rounds, processes, seeds and budget are
in its HTML view, in a collapsible detail. Displayed in a notebook it also carries
a verdict record (``verdict_check.VerdictRecord``) that ``check-verdicts`` compares.

``tests/kit/test_comparison.py`` proves the rule on synthetic timings with known
answers; ``python -m edumatcher.kit.calibrate_rule`` reruns it for real, in fresh
processes, on this machine.

>>> import itertools, random
>>> rng, ticks = random.Random(7), itertools.count()
>>> c = compare_sampled(lambda: rng.gauss(2.0, 0.02), lambda: rng.gauss(1.0, 0.01),
...                     labels=("slow", "fast"), clock=lambda: next(ticks) * 0.01, budget=1.0)
>>> c.category, round(c.ratio, 1)  # the rounds' order is random: the second decimal may move
('slower', 2.0)
"""

from __future__ import annotations

import functools
import gc as _gc
import html
import inspect
import math
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._formatter import _align, _percent, format_interval, format_ratio, format_seconds
from ._measurement import Measurement, bimodal_split
from ._runner import Pass, _interleave_ids, calibrated_sampler, new_seed
from ._timing import ROUNDS, SAMPLE_TARGET, TIMER, TIMER_NAME, CollectorTally, _clock_name, collector, one_round
from .verdict_check import MEAN_NOTE, RECORD_MIME, VerdictRecord

__all__ = [
    "CONFIDENCE", "NEGLIGIBLE", "PRECISION", "BUDGET", "SAMPLE_TARGET", "MIN_ROUNDS", "MAX_ROUNDS", "WORKERS",
    "TIMER", "TIMER_NAME", "OUTCOMES", "CATEGORIES", "MAX_LINE", "Comparison", "RatioReport", "ratio_interval",
    "median_interval", "calibrated_sampler", "compare", "compare_sampled", "compare_interleaved", "compare_passes",
    "compare_fresh", "compare_processes", "significance",
]

CONFIDENCE = 0.95
"""Confidence level of the interval around the ratio (of each interval, before a family's correction)."""

NEGLIGIBLE = 0.05
"""Ratios within this fraction of 1 (0.952–1.05 at 5 %) count as "the same time"."""

PRECISION = 0.03
"""An in-process comparison stops adding rounds once the interval's half-width is within this fraction."""

BUDGET = 2.5
"""Seconds one adaptive in-process comparison may take, calibration and warm-up included."""

MIN_ROUNDS = 12
"""Fewest rounds before an in-process interval is drawn."""

MAX_ROUNDS = 400
"""Most rounds one in-process comparison takes, whatever the budget."""

WORKERS = 12
"""Fresh worker processes one ``compare_fresh`` runs (two at a time on two CPUs).

With 12 processes the 95 % interval of the median is [3rd, 10th] of the sorted
per-process ratios (96.1 % coverage): two odd processes on one side cannot move
it past the others. Measured here (40 fresh processes of an A/A, three kinds of
statement): per-process ratios within 1 % of 1 but for one in 40 about 5 % off,
and one in 10 14 % off in an earlier run. Cost: about 2 s (see ``compare_fresh``)."""

RESAMPLES = 2000
"""Bootstrap resamples, where a bootstrap is used (ratios of means and of unpaired medians)."""

CATEGORIES = ("slower", "faster", "same", "too close to call")
"""The four verdicts (see the module docstring); ``Comparison.category``."""

OUTCOMES = ("slower", "faster", "same", "undetermined")
"""The same four under their older names (``Comparison.outcome``): "undetermined" is "too close to call"."""

MAX_LINE = 160
"""Longest verdict line, in characters."""

_SEED = 20_261_201
"""Fixed seed for bootstraps, so the same samples always give the same interval."""


# --------------------------------------------------------------------------- intervals


def median_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """Distribution-free interval for the median of ``values``, and its exact coverage. O(n log n).

    The interval is [x_(l), x_(n+1-l)] of the sorted values with the largest l whose
    coverage, 1 - 2 P(Binomial(n, 1/2) <= l - 1), is at least ``confidence`` (the
    sign test's interval: it assumes only that the values are independent draws).
    With too few values for ``confidence`` it is [min, max] and the coverage says
    how much less it is (5 values: 93.8 %).

    >>> median_interval([5, 1, 4, 2, 3, 9, 8, 7, 6, 10])
    (2, 9, 0.978515625)
    >>> median_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    (1.0, 5.0, 0.9375)
    """
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        raise ValueError("an interval needs at least one value")
    if n == 1:
        return xs[0], xs[0], 0.0
    below = 0.0  # P(B <= rank - 1)
    best_l, best_coverage = 1, 1 - 2 * 0.5**n
    for rank in range(1, n // 2 + 1):
        below += math.comb(n, rank - 1) / 2**n
        coverage = 1 - 2 * below
        if coverage < confidence:
            break
        best_l, best_coverage = rank, coverage
    return xs[best_l - 1], xs[n - best_l], best_coverage


@functools.lru_cache(maxsize=1)
def _bootstrap() -> tuple[Callable[..., Any], str]:
    """``scipy.stats.bootstrap`` and the name of its generator argument, imported on first use.

    SciPy costs about a second to import; only ``ratio_interval`` (unpaired
    medians) needs it. SciPy 1.15 renamed the generator argument (SPEC 7).
    """
    from scipy import stats

    seed_arg = "rng" if "rng" in inspect.signature(stats.bootstrap).parameters else "random_state"
    return stats.bootstrap, seed_arg


def _median_ratio(a: Any, b: Any, axis: int = -1) -> Any:
    import numpy as np

    return np.median(a, axis=axis) / np.median(b, axis=axis)


def ratio_interval(
    a: Sequence[float], b: Sequence[float], *, paired: bool, confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Bootstrap confidence interval of ``median(a) / median(b)``. O(RESAMPLES * n).

    ``paired=True`` resamples whole rounds (index i of ``a`` goes with index i of
    ``b``); ``paired=False`` resamples each side on its own (two measurements
    taken at different times). Percentile method of ``scipy.stats.bootstrap``,
    fixed seed. Comparisons of paired rounds no longer use it (``median_interval``
    of the per-round ratios is narrower and needs no SciPy); kept for callers.

    >>> ratio_interval([2.0] * 12, [1.0] * 12, paired=True)
    (2.0, 2.0)
    """
    import numpy as np

    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(xa) < 2 or len(xb) < 2 or (paired and len(xa) != len(xb)):
        raise ValueError(f"an interval needs at least 2 samples a side (and equal counts when paired), "
                         f"not {len(xa)} and {len(xb)}")
    if np.ptp(xa) == 0 and np.ptp(xb) == 0:  # nothing to resample: the interval is the point
        point = float(_median_ratio(xa, xb))
        return point, point
    bootstrap, seed_arg = _bootstrap()
    result = bootstrap(
        (xa, xb), _median_ratio, paired=paired, vectorized=True, n_resamples=RESAMPLES, batch=200,
        confidence_level=confidence, method="percentile", **{seed_arg: np.random.default_rng(_SEED)},
    )
    low, high = result.confidence_interval
    return float(low), float(high)


def _mean_ratio_interval(a: Sequence[float], b: Sequence[float], *, paired: bool,
                         confidence: float) -> tuple[float, float]:
    """Percentile bootstrap of ``sum(a) / sum(b)`` (rounds resampled together when paired), fixed seed."""
    import numpy as np

    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rng = np.random.default_rng(_SEED)
    ia = rng.integers(0, len(xa), (RESAMPLES, len(xa)))
    ib = ia if paired else rng.integers(0, len(xb), (RESAMPLES, len(xb)))
    ratios = xa[ia].sum(axis=1) / xb[ib].sum(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return float(low), float(high)


def _log_ratios(a: Sequence[float], b: Sequence[float]) -> list[float]:
    tiny = 1e-300  # a zero sample (a synthetic one) must not make log() fail
    return [math.log(max(x, tiny) / max(y, tiny)) for x, y in zip(a, b, strict=True)]


def _judge(ci: tuple[float, float], negligible: float) -> str:
    low, high = ci
    band_low, band_high = 1 / (1 + negligible), 1 + negligible
    if low > band_high:
        return "slower"
    if high < band_low:
        return "faster"
    if band_low <= low and high <= band_high:
        return "same"
    return "too close to call"


# --------------------------------------------------------------------------- the result


@dataclass
class Comparison:
    """Two measurements, the ratio a/b, its interval and the verdict (see the module docstring).

    ``ratio`` is above 1 when a costs more. ``ci`` is its interval at
    ``confidence`` (corrected for a ``family`` of comparisons); ``category`` is one
    of ``CATEGORIES`` and ``outcome`` the same under ``OUTCOMES``' names; ``verdict``
    the one line to read. ``processes`` holds, for a comparison made in worker
    processes, how many samples of a and of b came from each (in the order of the
    samples); empty for one process. ``rounds`` and ``stop_reason`` say how many
    paired rounds were taken and why sampling stopped. ``key`` names the
    comparison in verdict records (default "a vs b"); ``verb`` words the line
    ("orjson encodes 14.3x faster than json"). Iterating gives ``(a, b)``.
    """

    a: Measurement
    b: Measurement
    paired: bool = False
    rounds: int = 0
    stop_reason: str = ""
    confidence: float = CONFIDENCE
    negligible: float = NEGLIGIBLE
    key: str = ""
    verb: str = "is"
    family: int = 1
    seed: int | None = None
    processes: tuple[tuple[int, int], ...] = ()
    hash_seeds: tuple[str, ...] = ()
    collections: tuple[int, int] | None = None
    seconds: float | None = None
    ratio: float = field(init=False)
    ci: tuple[float, float] = field(init=False)
    coverage: float = field(init=False)
    category: str = field(init=False)
    outcome: str = field(init=False)
    judged_on: str = field(init=False)
    per_process: tuple[float, ...] = field(init=False)

    def __post_init__(self) -> None:
        if self.family < 1:
            raise ValueError(f"family must be at least 1, not {self.family!r}")
        self.processes = tuple((int(x), int(y)) for x, y in self.processes)
        level = self.level
        self.judged_on = "mean" if self._collector_in_cost() else "median"
        self.per_process = ()
        self.coverage = level
        xa, xb = self.a.samples, self.b.samples
        if len(self.processes) >= 2:
            estimates, start_a, start_b = [], 0, 0
            for n_a, n_b in self.processes:
                part_a, part_b = xa[start_a:start_a + n_a], xb[start_b:start_b + n_b]
                start_a, start_b = start_a + n_a, start_b + n_b
                estimates.append(self._estimate(part_a, part_b, self.paired and n_a == n_b))
            self.per_process = tuple(estimates)
            logs = [math.log(e) if e > 0 else -math.inf for e in estimates]
            low, high, self.coverage = median_interval(logs, level)
            self.ratio = math.exp(statistics.median(logs))
            self.ci = (math.exp(low), math.exp(high))
        elif self.paired and len(xa) == len(xb) >= 2:
            if self.judged_on == "mean":
                self.ratio = sum(xa) / sum(xb) if sum(xb) else math.inf
                self.ci = _mean_ratio_interval(xa, xb, paired=True, confidence=level)
            else:
                logs = _log_ratios(xa, xb)
                low, high, self.coverage = median_interval(logs, level)
                self.ratio = math.exp(statistics.median(logs))
                self.ci = (math.exp(low), math.exp(high))
        elif len(xa) >= 2 and len(xb) >= 2 and self.b.median:
            if self.judged_on == "mean":
                self.ratio = self.a.mean / self.b.mean
                self.ci = _mean_ratio_interval(xa, xb, paired=False, confidence=level)
            else:
                self.ratio = self.a.median / self.b.median
                self.ci = ratio_interval(xa, xb, paired=False, confidence=level)
        else:  # one sample a side: no interval can be drawn
            self.ratio = self.a.median / self.b.median if self.b.median else math.inf
            self.ci = (0.0, math.inf)
            self.coverage = 0.0
        self.category = _judge(self.ci, self.negligible)
        self.outcome = OUTCOMES[CATEGORIES.index(self.category)]

    # How it was judged ------------------------------------------------------

    @property
    def level(self) -> float:
        """The confidence each interval is drawn at: ``confidence``, Bonferroni-corrected for ``family``."""
        return 1 - (1 - self.confidence) / self.family

    def _collector_in_cost(self) -> bool:
        if not (self.a.gc_enabled or self.b.gc_enabled):
            return False
        if self.processes and self.collections is not None:
            return sum(self.collections) > 0
        return bimodal_split(self.a.samples) is not None or bimodal_split(self.b.samples) is not None

    def _estimate(self, xa: Sequence[float], xb: Sequence[float], paired: bool) -> float:
        if self.judged_on == "mean":
            return (statistics.fmean(xa) / statistics.fmean(xb)) if sum(xb) else math.inf
        if paired:
            return math.exp(statistics.median(_log_ratios(xa, xb)))
        median_b = statistics.median(xb)
        return statistics.median(xa) / median_b if median_b else math.inf

    def __iter__(self) -> Iterator[Measurement]:
        return iter((self.a, self.b))

    @property
    def names(self) -> tuple[str, str]:
        """The labels of a and b ("a" and "b" when unlabelled)."""
        return self.a.label or "a", self.b.label or "b"

    @property
    def n_processes(self) -> int:
        """How many processes the samples came from (1: this one)."""
        return max(1, len(self.processes))

    @property
    def estimator(self) -> str:
        """What the ratio is, in words."""
        what = "ratio of means (the collector's pauses counted)" if self.judged_on == "mean" else (
            "median of the per-round ratios" if self.paired else "ratio of medians")
        if self.processes:
            return f"median over {self.n_processes} fresh processes of each one's {what}"
        return what

    @property
    def ci_text(self) -> str:
        """'95 % CI 2.10–2.55', for the ratio a/b (the level shows the family's correction)."""
        return f"{self.level * 100:.4g} % CI {format_interval(self.ci, self._marks())}"

    def _marks(self) -> tuple[float, ...]:
        return (1.0, 1 + self.negligible, 1 / (1 + self.negligible))

    # The line a reader reads --------------------------------------------------

    @property
    def verdict(self) -> str:
        """The conclusion in one line, first words first, at most ``MAX_LINE`` characters (no "verdict:" prefix).

        Names are shortened to fit the line without ``MEAN_NOTE``, which follows only where
        it fits: whether the collector ran inside a window (mean cost) must not change the
        words of the conclusion, or ``check-verdicts`` would read one verdict as two.
        """
        limit = MAX_LINE - len("verdict: ")
        line = _fit(self.names, self._line, limit)
        if self.judged_on == "mean" and len(line) + len(MEAN_NOTE) <= limit:
            line += MEAN_NOTE
        return line

    def _line(self, name_a: str, name_b: str) -> str:
        band = f"{self.negligible * 100:g} %"
        low, high = self.ci
        if self.category == "slower":
            line = f"{name_a} {self.verb} {format_ratio(self.ratio, self.ci)}x slower than {name_b}"
        elif self.category == "faster":
            inverted = (1 / high, 1 / low) if low > 0 else (1 / high, math.inf)
            line = f"{name_a} {self.verb} {format_ratio(1 / self.ratio, inverted)}x faster than {name_b}"
        elif self.category == "same":
            line = f"{name_a} {self.verb} as fast as {name_b}, to within {band}"
        else:
            line = (f"too close to call: {name_a} against {name_b} is {self.ratio:.2f}x, "
                    f"and its interval reaches past the ±{band} band")
        return line

    @property
    def warnings(self) -> list[str]:
        """One line per warning (at most ``MAX_LINE`` characters each)."""
        found: list[str] = []
        if not self.processes:
            for m, name in zip((self.a, self.b), self.names, strict=True):
                for w in m.warnings:
                    short = w.split(";")[0]
                    found.append(_clip(f"⚠ {name}: {short}"))
        if self.coverage + 1e-9 < self.level:
            found.append(_clip(f"⚠ too few samples for a {self.level * 100:.4g} % interval: it covers "
                               f"{self.coverage * 100:.1f} %"))
        return found

    @property
    def record(self) -> VerdictRecord:
        """What ``check-verdicts`` compares between runs: comparison, category, direction."""
        name_a, name_b = self.names
        sign = {"slower": ">", "faster": "<", "same": "=", "too close to call": "?"}[self.category]
        return VerdictRecord(comparison=self.key or f"{name_a} vs {name_b}", category=self.category,
                             direction=f"{name_a} {sign} {name_b}", processes=self.n_processes, line=self.verdict)

    def as_ratio(self) -> RatioReport:
        """This comparison as a figure without a verdict: for comparisons a chapter shows but does not judge."""
        return RatioReport(self)

    # Details -------------------------------------------------------------------

    @property
    def method(self) -> str:
        """How the samples were taken and the interval drawn, in one line."""
        if self.processes:
            how = (f"{self.n_processes} fresh worker processes, {self.rounds} paired rounds in all "
                   f"({self.rounds // self.n_processes} each), random AB/BA order")
        elif self.rounds:
            how = f"{self.rounds} paired rounds in one process, random AB/BA order; {self.stop_reason}"
        else:
            how = f"{self.a.repeat} and {self.b.repeat} samples, " + ("paired" if self.paired else "taken apart")
        interval = ("order-statistic interval of the median (distribution-free)" if self.judged_on == "median"
                    and (self.paired or self.processes) else f"bootstrap ({RESAMPLES:,} resamples)")
        return f"{how}; {self.a.clock}; {self.estimator}; {interval}"

    def _notes(self) -> list[str]:
        name_a, name_b = self.names
        notes = [
            f"ratio {name_a}/{name_b}: {self.ratio:.4g} ({self.ci_text}; negligible band ±{self.negligible * 100:g} %)",
            f"method: {self.method}",
        ]
        if self.family > 1:
            notes.append(f"family: one of {self.family} comparisons judged together, each interval at "
                         f"{self.level * 100:.4g} % (Bonferroni)")
        if self.processes:
            spread = ", ".join(f"{r:.3f}" for r in sorted(self.per_process))
            notes.append(f"per-process ratios (sorted): {spread}")
            if self.hash_seeds:
                notes.append(f"worker hash seeds (PYTHONHASHSEED): {', '.join(self.hash_seeds)}")
        else:
            notes.append("covers this process only: what is fixed for a whole process (memory layout, hash seed) "
                         "can move a rerun by more; a chapter's verdict comes from compare_fresh")
        if self.collections is not None:
            notes.append(f"collections inside the timed samples: {self.collections[0]} during {name_a}'s, "
                         f"{self.collections[1]} during {name_b}'s")
        overheads = [(n, m.loop_overhead) for m, n in zip((self.a, self.b), self.names, strict=True)
                     if m.loop_overhead is not None]
        if overheads:
            notes.append("the timing loop's own cost, inside both figures: "
                         + ", ".join(f"{n} {format_seconds(o)} per call" for n, o in overheads))
        if self.seed is not None:
            notes.append(f"round-order seed: {self.seed}")
        if self.seconds is not None:
            notes.append(f"this comparison took {self.seconds:.1f} s")
        return notes

    def _rows(self) -> list[list[str]]:
        return [
            [m.label or name, format_seconds(m.median), format_seconds(m.min), format_seconds(m.max), _percent(m.spread)]
            for m, name in ((self.a, "a"), (self.b, "b"))
        ]

    def details(self) -> str:
        """The table, interval, method and notes as text (what the HTML view folds away)."""
        lines = _align([["", "median", "min", "max", "spread"]] + self._rows())
        return "\n".join(lines + self._notes())

    def __str__(self) -> str:
        return "\n".join([f"verdict: {self.verdict}"] + self.warnings)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        esc = html.escape
        head = "".join(f"<th>{esc(h)}</th>" for h in ("", "median", "min", "max", "spread"))
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:{'left' if i == 0 else 'right'}'>{esc(c)}</td>"
                             for i, c in enumerate(r)) + "</tr>"
            for r in self._rows()
        )
        notes = "".join(f"<li>{esc(n)}</li>" for n in self._notes())
        warnings = "".join(f"<div style='color:#8a1c00'>{esc(w)}</div>" for w in self.warnings)
        return (f"<div><p>verdict: <b>{esc(self.verdict)}</b></p>{warnings}"
                f"<details><summary style='font-size:smaller'>how this was measured</summary>"
                f"<table><tr>{head}</tr>{body}</table><ul style='font-size:smaller'>{notes}</ul></details></div>")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": str(self), "text/html": self._repr_html_(), RECORD_MIME: [self.record.as_dict()]}

    def as_dict(self) -> dict[str, Any]:
        """Plain-data form (for JSON)."""
        return {
            "a": self.a.as_dict(), "b": self.b.as_dict(), "ratio": self.ratio, "ci": list(self.ci),
            "confidence": self.confidence, "level": self.level, "negligible": self.negligible,
            "category": self.category, "outcome": self.outcome, "verdict": self.verdict, "paired": self.paired,
            "rounds": self.rounds, "stop_reason": self.stop_reason, "processes": [list(p) for p in self.processes],
            "per_process": list(self.per_process), "judged_on": self.judged_on, "family": self.family,
            "seed": self.seed, "hash_seeds": list(self.hash_seeds), "record": self.record.as_dict(),
        }


def _fit(names: tuple[str, str], make: Callable[[str, str], str], limit: int) -> str:
    """``make(name_a, name_b)``, the longer name shortened (with "…") until the line fits in ``limit``."""
    name_a, name_b = names
    line = make(name_a, name_b)
    while len(line) > limit and max(len(name_a), len(name_b)) > 12:
        excess = len(line) - limit
        if len(name_a) >= len(name_b):
            name_a = name_a[: max(11, len(name_a) - excess - 1)].rstrip() + "…"
        else:
            name_b = name_b[: max(11, len(name_b) - excess - 1)].rstrip() + "…"
        line = make(name_a, name_b)
    return _clip(line, limit)


def _clip(text: str, limit: int = MAX_LINE) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class RatioReport:
    """A comparison shown as a figure, with its interval, and deliberately no verdict.

    Its text never starts with "verdict:", so ``check-verdicts`` does not hold a
    rerun to it: for the comparisons near the negligible band, whose category a
    rerun may change, and for the many a chapter shows beside the few it judges.
    """

    comparison: Comparison

    def __str__(self) -> str:
        c = self.comparison
        where = f"{c.n_processes} processes" if c.processes else "one process"
        return _fit(c.names, lambda name_a, name_b: f"{name_a} / {name_b}: {format_ratio(c.ratio, c.ci)}x "
                    f"({c.ci_text}, {where}); a figure, not a verdict", MAX_LINE)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        c = self.comparison
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in c._notes())
        return (f"<div><p>{html.escape(str(self))}</p><details><summary style='font-size:smaller'>how this was "
                f"measured</summary><ul style='font-size:smaller'>{notes}</ul></details></div>")


def compare(a: Measurement, b: Measurement, *, confidence: float = CONFIDENCE, negligible: float = NEGLIGIBLE,
            key: str = "", verb: str = "is", family: int = 1) -> Comparison:
    """Compare two ready-made measurements; ``ratio`` is a's cost over b's.

    The comparison is paired when both come from one ``interleave()`` call with the
    same number of samples (round i of a was taken next to round i of b), and
    unpaired otherwise. Prefer ``compare_fresh`` for a verdict (several processes),
    or ``compare_interleaved`` (it also chooses how many samples to take).

    >>> fast = Measurement.from_samples([1.0, 1.01, 1.02, 0.99, 1.0], label="fast")
    >>> slow = Measurement.from_samples([2.3, 2.31, 2.29, 2.3, 2.32], label="slow")
    >>> compare(slow, fast).category
    'slower'
    """
    paired = (a.interleave_id is not None and a.interleave_id == b.interleave_id and a.repeat == b.repeat)
    return Comparison(a, b, paired=paired, confidence=confidence, negligible=negligible, key=key, verb=verb,
                      family=family)


# --------------------------------------------------------------------------- in one process, adaptive


def compare_sampled(
    sample_a: Callable[[], float],
    sample_b: Callable[[], float],
    *,
    labels: tuple[str, str] = ("a", "b"),
    budget: float = BUDGET,
    precision: float = PRECISION,
    confidence: float = CONFIDENCE,
    negligible: float = NEGLIGIBLE,
    min_rounds: int = MIN_ROUNDS,
    max_rounds: int = MAX_ROUNDS,
    clock: Callable[[], float] = time.perf_counter,
    measurement_fields: dict[str, Any] | None = None,
    on_round: Callable[[int, float, float], None] | None = None,
    started: float | None = None,
    seed: int | None = None,
    key: str = "",
    verb: str = "is",
    family: int = 1,
) -> Comparison:
    """Take paired rounds of two samplers in this process until the interval is narrow or the budget is spent.

    ``sample_a()`` and ``sample_b()`` each return one sample in seconds. Each round
    takes A then B or B then A, drawn from ``random.Random(seed)`` (None: a fresh
    seed, recorded on the result). After ``min_rounds``, and then after every fifth
    of the rounds taken so far, the interval is drawn; sampling stops when its
    half-width is within ``precision`` of the ratio, or when ``clock`` says
    ``budget`` seconds have passed, or at ``max_rounds``. ``clock`` is injectable so
    tests can replay synthetic timings. ``measurement_fields`` go to both
    ``Measurement`` objects; ``labels`` name them. ``started`` is the ``clock``
    reading the budget counts from (default: now). Collections that start during
    each side's samples are counted (``Comparison.collections``).
    """
    import random

    if min_rounds < 2 or max_rounds < min_rounds:
        raise ValueError(f"need 2 <= min_rounds <= max_rounds, not {min_rounds} and {max_rounds}")
    if budget <= 0 or precision <= 0:
        raise ValueError(f"budget and precision must be positive, not {budget!r} and {precision!r}")
    started = clock() if started is None else started
    seed = new_seed() if seed is None else seed
    order = random.Random(seed)
    level = 1 - (1 - confidence) / family
    xs: list[float] = []
    ys: list[float] = []
    next_check = min_rounds
    reason = ""
    tally = CollectorTally()
    with tally:
        while True:
            x, y = one_round(sample_a, sample_b, order, tally)
            xs.append(float(x))
            ys.append(float(y))
            if on_round is not None:
                on_round(len(xs), x, y)
            rounds = len(xs)
            spent = clock() - started
            if rounds >= next_check:
                next_check = rounds + max(4, rounds // 5)
                low, high, _ = median_interval(_log_ratios(xs, ys), level)
                half = (high - low) / 2  # in log units: a relative precision
                settled = _judge((math.exp(low), math.exp(high)), negligible) != "too close to call"
                # Narrow enough, and on one side of each band edge; or so narrow that more rounds cannot help.
                if (half <= precision and settled) or half <= precision / 4:
                    reason = f"stopped when the CI was within ±{half * 100:.1f} % ({spent:.1f} s)"
                    break
            if rounds >= max_rounds:
                reason = f"stopped at the cap of {max_rounds} rounds ({spent:.1f} s)"
                break
            if spent >= budget and rounds >= min_rounds:
                reason = f"the time budget of {budget:g} s ran out before the CI was within ±{precision * 100:.0f} %"
                break
    extra = dict(measurement_fields or {})
    interleave_id = next(_interleave_ids)
    a = Measurement(samples=tuple(xs), label=labels[0], interleave_id=interleave_id, **extra)
    b = Measurement(samples=tuple(ys), label=labels[1], interleave_id=interleave_id, **extra)
    return Comparison(a, b, paired=True, rounds=len(xs), stop_reason=reason, confidence=confidence,
                      negligible=negligible, seed=seed, collections=(tally.counts[0], tally.counts[1]), key=key,
                      verb=verb, family=family)


def compare_interleaved(
    a: Callable[[], object] | str,
    b: Callable[[], object] | str,
    *,
    labels: tuple[str, str] = ("a", "b"),
    setup: Callable[[], object] | str | None = None,
    globals: dict[str, Any] | None = None,
    gc: bool = True,
    budget: float = BUDGET,
    target: float = SAMPLE_TARGET,
    precision: float = PRECISION,
    confidence: float = CONFIDENCE,
    negligible: float = NEGLIGIBLE,
    ops_per_call: int = 1,
    timer: Callable[[], float] | None = None,
    seed: int | None = None,
    key: str = "",
    verb: str = "is",
    family: int = 1,
) -> Comparison:
    """Time ``a`` against ``b`` in paired rounds in this process and compare them (see the module docstring).

    ``a`` and ``b`` are zero-argument callables or statement strings (run in
    ``globals``, inlined in the timing loop as ``measure`` does, after a string
    ``setup``). Each side is calibrated so one sample lasts about ``target``
    seconds, then warmed up once. ``gc=False`` switches the collector off for the
    whole comparison and restores it afterwards. ``timer`` is the clock samples
    are read from (``TIMER`` by default). Cost: about ``budget`` seconds (2.5 s).
    Its interval covers this process only: for a chapter's verdict use ``compare_fresh``.

    >>> c = compare_interleaved("sum(xs)", "len(xs)", setup="xs = list(range(1000))",
    ...                         labels=("sum", "len"), budget=0.3, target=0.002)
    >>> c.category
    'slower'
    """
    from ._timing import _loop_overhead

    namespace = {} if globals is None else globals
    timer = TIMER if timer is None else timer
    with collector(gc):
        started = time.perf_counter()
        sample_a, number_a = calibrated_sampler(a, setup=setup, namespace=namespace, target=target, timer=timer)
        sample_b, number_b = calibrated_sampler(b, setup=setup, namespace=namespace, target=target, timer=timer)
        overhead_a = _loop_overhead(a, setup, namespace, timer, number_a)
        overhead_b = _loop_overhead(b, setup, namespace, timer, number_b)
        result = compare_sampled(
            sample_a, sample_b, labels=labels, budget=budget, started=started, precision=precision,
            confidence=confidence, negligible=negligible, seed=seed, key=key, verb=verb, family=family,
            measurement_fields={"warmup": 1, "gc_enabled": _gc.isenabled(), "ops_per_call": ops_per_call,
                                "clock": _clock_name(timer)},
        )
    result.a.number, result.b.number = number_a, number_b
    result.a.loop_overhead, result.b.loop_overhead = overhead_a, overhead_b
    result.seconds = time.perf_counter() - started
    return result


def compare_passes(
    pass_a: Pass,
    pass_b: Pass,
    *,
    gc: bool = True,
    budget: float = BUDGET,
    precision: float = PRECISION,
    confidence: float = CONFIDENCE,
    negligible: float = NEGLIGIBLE,
    min_rounds: int = MIN_ROUNDS,
    max_rounds: int = MAX_ROUNDS,
    warmup: int = 1,
    timer: Callable[[], float] | None = None,
    seed: int | None = None,
    key: str = "",
    verb: str = "is",
    family: int = 1,
) -> Comparison:
    """Compare two ``Pass`` contenders in this process: each sample is one ``run(prepare())``, paired and adaptive.

    ``prepare`` runs before the clock starts and what it built is released after
    the clock stops, as in ``interleave``. With ``gc=False`` a young collection
    runs after every pass, off the clock, so cycles never pile up. Samples are
    seconds per pass (on ``timer``, ``TIMER`` by default); ``ops_per_call`` of each
    pass gives the rates. For a chapter's verdict, pass the same contenders to
    ``compare_fresh`` through a factory.
    """
    clock = TIMER if timer is None else timer

    def sampler(contender: Pass) -> Callable[[], float]:
        def sample() -> float:
            data = contender.prepare() if contender.prepare is not None else None
            start = clock()
            result = contender.run(data)
            elapsed = clock() - start
            del data, result
            if not gc:
                _gc.collect(0)
            return elapsed
        return sample

    sample_a, sample_b = sampler(pass_a), sampler(pass_b)
    with collector(gc):
        started = time.perf_counter()
        for _ in range(warmup):
            sample_a()
            sample_b()
        result = compare_sampled(
            sample_a, sample_b, labels=(pass_a.label, pass_b.label), budget=budget, started=started,
            precision=precision, confidence=confidence, negligible=negligible, min_rounds=min_rounds,
            max_rounds=max_rounds, seed=seed, key=key, verb=verb, family=family,
            measurement_fields={"warmup": warmup, "gc_enabled": _gc.isenabled(), "clock": _clock_name(clock)},
        )
    result.a.ops_per_call, result.b.ops_per_call = pass_a.ops_per_call, pass_b.ops_per_call
    result.seconds = time.perf_counter() - started
    return result


# --------------------------------------------------------------------------- across fresh processes


def compare_processes(
    a_by_process: Sequence[Sequence[float]],
    b_by_process: Sequence[Sequence[float]],
    *,
    labels: tuple[str, str] = ("a", "b"),
    paired: bool = True,
    confidence: float = CONFIDENCE,
    negligible: float = NEGLIGIBLE,
    key: str = "",
    verb: str = "is",
    family: int = 1,
    gc_enabled: bool = True,
    collections: tuple[int, int] | None = None,
    clock: str = TIMER_NAME,
    ops_per_call: int = 1,
    hash_seeds: Sequence[str] = (),
    seed: int | None = None,
    seconds: float | None = None,
) -> Comparison:
    """Compare values gathered in several processes: each process is one unit of evidence.

    ``a_by_process[i]`` and ``b_by_process[i]`` are process i's samples (seconds,
    or any cost). Each process gives one ratio: the median of its per-round ratios
    when ``paired`` (equal counts, sample j of a taken beside sample j of b), else
    median(a) / median(b) (a cold first pass against that process's warm passes,
    say). The interval is ``median_interval`` of those ratios: the spread between
    processes is the spread a rerun sees. ``compare_fresh`` builds on this.

    >>> c = compare_processes([[2.0, 2.1]] * 3 + [[2.2, 2.0]] * 3, [[1.0, 1.0]] * 6, labels=("cold", "warm"))
    >>> c.category, c.n_processes
    ('slower', 6)
    """
    if len(a_by_process) != len(b_by_process) or len(a_by_process) < 2:
        raise ValueError(f"need the same number (at least 2) of processes a side, not {len(a_by_process)} "
                         f"and {len(b_by_process)}")
    xs = [float(x) for group in a_by_process for x in group]
    ys = [float(y) for group in b_by_process for y in group]
    sizes = tuple((len(ga), len(gb)) for ga, gb in zip(a_by_process, b_by_process, strict=True))
    if any(n_a == 0 or n_b == 0 for n_a, n_b in sizes):
        raise ValueError("every process needs at least one value a side")
    pairs = paired and all(n_a == n_b for n_a, n_b in sizes)
    interleave_id = next(_interleave_ids) if pairs else None
    fields = {"gc_enabled": gc_enabled, "clock": clock, "ops_per_call": ops_per_call, "interleave_id": interleave_id}
    a = Measurement(samples=tuple(xs), label=labels[0], **fields)
    b = Measurement(samples=tuple(ys), label=labels[1], **fields)
    return Comparison(a, b, paired=pairs, rounds=len(xs) if pairs else 0, confidence=confidence,
                      negligible=negligible, key=key, verb=verb, family=family, seed=seed, processes=sizes,
                      hash_seeds=tuple(hash_seeds), collections=collections, seconds=seconds)


def compare_fresh(
    a: str | None = None,
    b: str | None = None,
    *,
    setup: str | None = None,
    contenders: str | None = None,
    kwargs: dict[str, Any] | None = None,
    labels: tuple[str, str] = ("a", "b"),
    verb: str = "is",
    key: str = "",
    workers: int = WORKERS,
    jobs: int | None = None,
    rounds: int = ROUNDS,
    target: float = SAMPLE_TARGET,
    gc: bool = True,
    confidence: float = CONFIDENCE,
    negligible: float = NEGLIGIBLE,
    family: int = 1,
    seed: int | None = None,
    timeout: float = 60.0,
    scale_b: float = 1.0,
    wall: bool = False,
    ops_per_call: int = 1,
) -> Comparison:
    """A chapter's verdict: ``a`` against ``b`` in ``workers`` fresh processes, ``jobs`` at a time.

    The contenders are statement strings ``a`` and ``b`` with a ``setup`` string
    (stdlib code, or imports of what they need), or a factory ``contenders``
    ("package.module:function", called in each worker with ``kwargs``, JSON-able)
    returning a pair of statements, zero-argument callables or ``Pass`` objects:
    what lives in a notebook's memory cannot travel, so the chapter's support
    module builds it. Each worker (``edumatcher.kit._runner.paired_rounds``)
    calibrates, warms up and takes ``rounds`` paired rounds in random order (seed:
    ``seed`` + its index; None draws one), with its own ``PYTHONHASHSEED``; the
    statistics are computed here (``compare_processes``). ``jobs``: None runs two
    at a time where two CPUs are usable (``_worker.default_jobs``).

    Cost, measured when this was written (CPython 3.11.7, a 2-CPU VM at load
    average 25-68 from other jobs, 130 comparisons of stdlib statements): 1.7-2.4 s
    median, 4.3 s at worst; each worker costs about 0.1 s of CPU (start, calibration,
    40 rounds). With one usable CPU (``jobs=1``) about twice that. A factory that
    imports the engine adds that import to every worker.

    >>> c = compare_fresh("sum(xs)", "len(xs)", setup="xs = list(range(1000))", labels=("sum", "len"), workers=4)
    >>> c.category, c.n_processes
    ('slower', 4)
    """
    from ._worker import default_jobs, worker_runs

    if workers < 2:
        raise ValueError(f"a verdict across processes needs at least 2 workers, not {workers}")
    if contenders is None and (a is None or b is None):
        raise ValueError("give the statements a and b (with a setup), or a contenders factory")
    seed = new_seed() if seed is None else seed
    base = {"a": a, "b": b, "setup": setup, "contenders": contenders, "kwargs": kwargs or {}, "rounds": rounds,
            "target": target, "gc": gc, "scale_b": scale_b, "wall": wall}
    per_worker = [{**base, "seed": (seed + i) % 2**32} for i in range(workers)]
    started = time.perf_counter()
    runs = worker_runs("edumatcher.kit._timing:paired_rounds", per_worker, processes=workers, timeout=timeout,
                       jobs=default_jobs() if jobs is None else jobs)
    seconds = time.perf_counter() - started
    values = [run.value for run in runs]
    collections = (sum(v["collections"][0] for v in values), sum(v["collections"][1] for v in values))
    result = compare_processes(
        [v["a"] for v in values], [v["b"] for v in values], labels=labels, paired=True, confidence=confidence,
        negligible=negligible, key=key, verb=verb, family=family, gc_enabled=all(v["gc"] for v in values),
        collections=collections, clock=values[0]["clock"], ops_per_call=ops_per_call,
        hash_seeds=[run.hash_seed for run in runs], seed=seed, seconds=seconds,
    )
    numbers = [v["number"] for v in values]
    result.a.number, result.b.number = numbers[0]
    overheads = [v["overhead"] for v in values]
    if all(o[0] is not None for o in overheads):
        result.a.loop_overhead = statistics.median(o[0] for o in overheads)
    if all(o[1] is not None for o in overheads):
        result.b.loop_overhead = statistics.median(o[1] for o in overheads)
    return result


# --------------------------------------------------------------------------- a rank test


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
