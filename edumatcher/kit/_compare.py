"""A comparison a student can trust: interleaved samples, a ratio with its confidence interval.

The question is always "how much slower is A than B, on this interpreter, on this
machine, today?", and the *verdict* must not change when the cell runs again. These
choices make it so.

1. **Interleaved rounds.** A round takes one sample of A and one of B, in
   an order drawn at random for each round (AB or BA). A slow drift of a shared machine (another
   job starting, the CPU clocking down) then lands on both sides instead of on
   whichever ran last; and the rounds are *paired*, which the interval uses.
2. **The ratio of medians, with a bootstrap confidence interval.** The headline
   is ``median(A) / median(B)``: a median ignores the few samples a disturbance
   lengthened, so one disturbed sample cannot change it much. Its 95 % confidence
   interval comes from ``scipy.stats.bootstrap`` (percentile method), resampling
   whole rounds so the pairing is kept. More rounds narrow the interval; they never
   turn a real effect into "no difference", which is what went wrong with the old
   rule (min-max ranges overlap), whose ranges only widen as samples are added.
3. **Short samples, on the thread's CPU clock.** Each sample lasts about half a
   millisecond (``SAMPLE_TARGET``), shorter than the time slice the scheduler gives
   a process on a busy machine, so most samples run uninterrupted and the median is
   theirs; and samples are read from this thread's CPU clock where it is precise
   (``TIMER``), so time the machine spent on other processes is not charged to
   either side.
4. **An adaptive sample count.** Rounds are added until the interval's half-width
   is within ``precision`` of the ratio (3 % by default), or a time ``budget``
   (2.5 s by default) runs out; the result says which happened.

The verdict is worded from the interval, and has one of four outcomes:

* ``slower`` / ``faster``: the interval excludes 1 and is not inside the
  *negligible* band (±5 % by default): "a is 2.31x slower than b (95 % CI 2.10–2.55)".
* ``same``: the interval lies inside the negligible band, whether or not it
  touches 1: "a and b take the same time to within 5 %". Without that band, two
  copies of the same code would be called different in about one run in twenty,
  and a real 2 % effect would flip between "slower" and "no difference" from run
  to run. Effects smaller than the band are not what a chapter teaches.
* ``undetermined``: the interval spans 1 and reaches outside the band: "no
  difference detectable at this noise: the CI spans 1.0 (0.93–1.08)".

What the interval covers: the noise *within this run*, sample to sample. A rerun in
a fresh process can land a few percent outside it, because some things are fixed
for a whole process (the calibrated call count, where objects sit in memory, the
string hash seed): when this was written (CPython 3.11.7, a 2-CPU VM), reruns of
chapter 03 in fresh processes moved its ratios by up to 10 %.
That is why verdicts are worded by category (slower, faster, same, undetermined),
which holds from run to run, and the ratio is printed as this run's estimate. A
statement is timed inside a ``for`` loop, as ``timeit`` does, and the loop's own
few nanoseconds per iteration are in both medians: for statements of tens of
nanoseconds that pulls the ratio towards 1, so the difference between the
operations themselves is, if anything, larger than printed.

``tests/test_comparison.py`` proves the rule on synthetic timings with a known
answer: a 10 % gap with 5 % of samples disturbed is found in at least 95 % of
trials, and two identical samplers are found "same" or "undetermined" in at least
95 % of trials.

>>> import itertools, random
>>> rng, ticks = random.Random(7), itertools.count()
>>> c = compare_sampled(lambda: rng.gauss(2.0, 0.02), lambda: rng.gauss(1.0, 0.01),
...                     labels=("slow", "fast"), clock=lambda: next(ticks) * 0.01, budget=1.0)
>>> c.outcome, round(c.ratio, 1)
('slower', 2.0)
"""

from __future__ import annotations

import functools
import gc as _gc
import html
import inspect
import math
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._formatter import _align, _percent, _warnings_html, format_seconds
from ._measurement import Measurement
from ._runner import (
    SAMPLE_TARGET,
    TIMER,
    TIMER_NAME,
    Pass,
    _clock_name,
    _interleave_ids,
    calibrated_sampler,
    collector,
)

__all__ = [
    "CONFIDENCE", "NEGLIGIBLE", "PRECISION", "BUDGET", "SAMPLE_TARGET", "MIN_ROUNDS", "MAX_ROUNDS",
    "TIMER", "TIMER_NAME", "OUTCOMES", "Comparison", "ratio_interval", "calibrated_sampler", "compare",
    "compare_sampled", "compare_interleaved", "compare_passes", "significance",
]

CONFIDENCE = 0.95
"""Confidence level of the interval around the ratio."""

NEGLIGIBLE = 0.05
"""Ratios within this fraction of 1 (0.952–1.05 at 5 %) count as "the same time"."""

PRECISION = 0.03
"""Stop adding rounds once the interval's half-width is within this fraction of the ratio."""

BUDGET = 2.5
"""Seconds one adaptive comparison may take, calibration and warm-up included."""

MIN_ROUNDS = 12
"""Fewest rounds before an interval is trusted (a bootstrap of fewer is too coarse)."""

MAX_ROUNDS = 400
"""Most rounds one comparison takes, whatever the budget."""

RESAMPLES = 2000
"""Bootstrap resamples per interval."""

OUTCOMES = ("slower", "faster", "same", "undetermined")
"""The four verdicts a comparison can reach (see the module docstring)."""

_SEED = 20_261_201
"""Fixed seed for the bootstrap, so the same samples always give the same interval."""


# --------------------------------------------------------------------------- the interval


def _median_ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.median(a, axis=axis) / np.median(b, axis=axis)


@functools.lru_cache(maxsize=1)
def _bootstrap() -> tuple[Callable[..., Any], str]:
    """``scipy.stats.bootstrap`` and the name of its generator argument, imported on first use.

    SciPy costs about a second to import; every command of the CLI imports this
    module, and only comparisons need it. The comparisons call this before their
    clock starts, so the import is never charged to a time budget. SciPy 1.15
    renamed the generator argument (SPEC 7); older releases only know random_state.
    """
    from scipy import stats

    seed_arg = "rng" if "rng" in inspect.signature(stats.bootstrap).parameters else "random_state"
    return stats.bootstrap, seed_arg


def ratio_interval(
    a: Sequence[float], b: Sequence[float], *, paired: bool, confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Bootstrap confidence interval of ``median(a) / median(b)``. O(RESAMPLES * n).

    ``paired=True`` resamples whole rounds (index i of ``a`` goes with index i of
    ``b``), which keeps what interleaving bought; ``paired=False`` resamples each
    side on its own (two measurements taken at different times). Percentile
    method of ``scipy.stats.bootstrap``, fixed seed: the same samples always give
    the same interval.

    >>> ratio_interval([2.0] * 12, [1.0] * 12, paired=True)
    (2.0, 2.0)
    """
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(xa) < 2 or len(xb) < 2 or (paired and len(xa) != len(xb)):
        raise ValueError(f"an interval needs at least 2 samples a side (and equal counts when paired), "
                         f"not {len(xa)} and {len(xb)}")
    if np.ptp(xa) == 0 and np.ptp(xb) == 0:  # nothing to resample: the interval is the point
        point = float(_median_ratio(xa, xb))
        return point, point
    bootstrap, seed_arg = _bootstrap()
    # batch bounds the resamples held at once (batch x n floats), whatever the sample count.
    result = bootstrap(
        (xa, xb), _median_ratio, paired=paired, vectorized=True, n_resamples=RESAMPLES, batch=200,
        confidence_level=confidence, method="percentile", **{seed_arg: np.random.default_rng(_SEED)},
    )
    low, high = result.confidence_interval
    return float(low), float(high)


# --------------------------------------------------------------------------- the result


@dataclass
class Comparison:
    """Two measurements, the ratio of their medians, its confidence interval and the verdict.

    ``ratio = a.median / b.median`` (above 1: a is slower). ``ci`` is the
    ``confidence`` interval of that ratio; ``outcome`` is one of ``OUTCOMES``;
    ``rounds`` and ``stop_reason`` say how many paired rounds were taken and why
    sampling stopped (empty for a comparison of two ready-made measurements).
    Iterating gives ``(a, b)``, so ``x, y = compare_interleaved(...)`` unpacks the
    two measurements.
    """

    a: Measurement
    b: Measurement
    paired: bool = False
    rounds: int = 0
    stop_reason: str = ""
    confidence: float = CONFIDENCE
    negligible: float = NEGLIGIBLE
    ratio: float = field(init=False)
    ci: tuple[float, float] = field(init=False)
    outcome: str = field(init=False)

    def __post_init__(self) -> None:
        self.ratio = self.a.median / self.b.median if self.b.median else math.inf
        if self.a.repeat >= 2 and self.b.repeat >= 2 and self.b.median:
            self.ci = ratio_interval(self.a.samples, self.b.samples, paired=self.paired, confidence=self.confidence)
        else:  # one sample a side: no interval can be drawn
            self.ci = (0.0, math.inf)
        self.outcome = self._outcome()

    def __iter__(self) -> Iterator[Measurement]:
        return iter((self.a, self.b))

    def _outcome(self) -> str:
        low, high = self.ci
        band_low, band_high = 1 / (1 + self.negligible), 1 + self.negligible
        if band_low <= low and high <= band_high:
            return "same"
        if low > 1:
            return "slower"
        if high < 1:
            return "faster"
        return "undetermined"

    @property
    def names(self) -> tuple[str, str]:
        """The labels of a and b ("a" and "b" when unlabelled)."""
        return self.a.label or "a", self.b.label or "b"

    @property
    def ci_text(self) -> str:
        """'95 % CI 2.10–2.55', for the ratio a/b."""
        return f"{self.confidence * 100:.0f} % CI {self.ci[0]:.2f}–{self.ci[1]:.2f}"

    @property
    def verdict(self) -> str:
        """The sentence to read, worded from the interval (see the module docstring)."""
        name_a, name_b = self.names
        low, high = self.ci
        level = f"{self.confidence * 100:.0f} % CI"
        if self.outcome == "slower":
            return f"{name_a} is {self.ratio:.2f}x slower than {name_b} ({level} {low:.2f}–{high:.2f})"
        if self.outcome == "faster":
            inv_low, inv_high = (1 / high, 1 / low) if low > 0 else (1 / high, math.inf)
            return f"{name_a} is {1 / self.ratio:.2f}x faster than {name_b} ({level} {inv_low:.2f}–{inv_high:.2f})"
        if self.outcome == "same":
            return (f"{name_a} and {name_b} take the same time to within {self.negligible * 100:.0f} % "
                    f"(ratio {self.ratio:.2f}, {level} {low:.2f}–{high:.2f})")
        return f"no difference detectable at this noise: the CI spans 1.0 ({low:.2f}–{high:.2f})"

    @property
    def method(self) -> str:
        """How the samples were taken and the interval drawn, in one line."""
        if self.rounds:
            how = f"{self.rounds} interleaved rounds; {self.stop_reason}"
        else:
            how = f"{self.a.repeat} and {self.b.repeat} samples, " + ("paired" if self.paired else "taken apart")
        return (f"{how}; {self.a.clock}; bootstrap over {'rounds' if self.paired else 'samples'} "
                f"({RESAMPLES:,} resamples): the CI covers this run's noise, a rerun may differ by a few %")

    def _rows(self) -> list[tuple[str, str, str, str, str]]:
        return [
            (m.label or name, format_seconds(m.median), format_seconds(m.min), format_seconds(m.max), _percent(m.spread))
            for m, name in ((self.a, "a"), (self.b, "b"))
        ]

    def _notes(self) -> list[str]:
        name_a, name_b = self.names
        return [
            f"ratio {name_a}/{name_b} of medians: {self.ratio:.3f} ({self.ci_text})",
            f"method: {self.method}",
        ]

    def __str__(self) -> str:
        head = ("", "median", "min", "max", "spread")
        lines = _align([list(head)] + [list(r) for r in self._rows()])
        lines += self._notes()
        lines.append(f"verdict: {self.verdict}")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        esc = html.escape
        head = "".join(f"<th>{esc(h)}</th>" for h in ("", "median", "min", "max", "spread"))
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:{'left' if i == 0 else 'right'}'>{esc(c)}</td>"
                             for i, c in enumerate(r)) + "</tr>"
            for r in self._rows()
        )
        notes = "<br>".join(esc(n) for n in self._notes())
        verdict = f"<p>verdict: <b>{esc(self.verdict)}</b><br><span style='font-size:smaller'>{notes}</span></p>"
        warnings = [f"{m.label or 'measurement'}: {w}" for m in (self.a, self.b) for w in m.warnings]
        return f"<div><table><tr>{head}</tr>{body}</table>{verdict}{_warnings_html(warnings)}</div>"

    def as_dict(self) -> dict[str, Any]:
        """Plain-data form (for JSON)."""
        return {
            "a": self.a.as_dict(), "b": self.b.as_dict(), "ratio": self.ratio, "ci": list(self.ci),
            "confidence": self.confidence, "negligible": self.negligible, "outcome": self.outcome,
            "verdict": self.verdict, "paired": self.paired, "rounds": self.rounds, "stop_reason": self.stop_reason,
        }


def compare(a: Measurement, b: Measurement, *, confidence: float = CONFIDENCE,
            negligible: float = NEGLIGIBLE) -> Comparison:
    """Compare two ready-made measurements; ``ratio`` is ``a.median / b.median``.

    The interval is paired when both come from one ``interleave()`` call with the
    same number of samples (round i of a was taken next to round i of b), and
    unpaired otherwise. Prefer ``compare_interleaved``: it also chooses how many
    samples to take.

    >>> fast = Measurement.from_samples([1.0, 1.01, 1.02, 0.99, 1.0], label="fast")
    >>> slow = Measurement.from_samples([2.3, 2.31, 2.29, 2.3, 2.32], label="slow")
    >>> compare(slow, fast).outcome
    'slower'
    """
    paired = (a.interleave_id is not None and a.interleave_id == b.interleave_id and a.repeat == b.repeat)
    return Comparison(a, b, paired=paired, confidence=confidence, negligible=negligible)


# --------------------------------------------------------------------------- adaptive sampling


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
) -> Comparison:
    """Interleave two samplers round by round until the interval is narrow or the budget is spent.

    ``sample_a()`` and ``sample_b()`` each return one sample in seconds. Each round
    takes A then B or B then A, chosen at random (seeded): a strict alternation
    repeats with a period that a periodic disturbance (a CPU hog's time slices)
    can lock onto and charge to one side. After
    ``min_rounds``, and then after every fifth of the rounds taken so far, the
    interval is drawn; sampling stops when its half-width is within ``precision``
    of the ratio, or when ``clock`` says ``budget`` seconds have passed, or at
    ``max_rounds``. ``clock`` is injectable so tests can replay synthetic timings.
    ``measurement_fields`` go to both ``Measurement`` objects (``number``,
    ``warmup``...); ``labels`` name them. ``started`` is the ``clock`` reading the
    budget counts from (default: now), so a caller's calibration can spend part of it.
    """
    if min_rounds < 2 or max_rounds < min_rounds:
        raise ValueError(f"need 2 <= min_rounds <= max_rounds, not {min_rounds} and {max_rounds}")
    if budget <= 0 or precision <= 0:
        raise ValueError(f"budget and precision must be positive, not {budget!r} and {precision!r}")
    _bootstrap()  # import SciPy now, not inside the budget
    started = clock() if started is None else started
    xs: list[float] = []
    ys: list[float] = []
    next_check = min_rounds
    reason = ""
    order = random.Random(_SEED)
    while True:
        if order.random() < 0.5:
            x = sample_a()
            y = sample_b()
        else:
            y = sample_b()
            x = sample_a()
        xs.append(float(x))
        ys.append(float(y))
        if on_round is not None:
            on_round(len(xs), x, y)
        rounds = len(xs)
        spent = clock() - started
        if rounds >= next_check:
            next_check = rounds + max(4, rounds // 5)
            low, high = ratio_interval(xs, ys, paired=True, confidence=confidence)
            ratio = float(np.median(xs) / np.median(ys)) if np.median(ys) else math.inf
            half_width = (high - low) / 2 / ratio if ratio and math.isfinite(ratio) else math.inf
            if half_width <= precision:
                reason = f"stopped when the CI was within ±{precision * 100:.0f} % ({spent:.1f} s)"
                break
        if rounds >= max_rounds:
            reason = f"stopped at the cap of {max_rounds} rounds ({spent:.1f} s)"
            break
        if spent >= budget and rounds >= min_rounds:
            reason = (f"the time budget of {budget:g} s ran out before the CI was within ±{precision * 100:.0f} %")
            break
    extra = dict(measurement_fields or {})
    interleave_id = next(_interleave_ids)
    a = Measurement(samples=tuple(xs), label=labels[0], interleave_id=interleave_id, **extra)
    b = Measurement(samples=tuple(ys), label=labels[1], interleave_id=interleave_id, **extra)
    return Comparison(a, b, paired=True, rounds=len(xs), stop_reason=reason, confidence=confidence,
                      negligible=negligible)


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
) -> Comparison:
    """Time ``a`` against ``b`` in interleaved rounds and compare them (see the module docstring).

    ``a`` and ``b`` are zero-argument callables or statement strings (run in
    ``globals``, inlined in the timing loop as ``measure`` does, after a string
    ``setup``). Each side is calibrated so one sample lasts about ``target``
    seconds, then warmed up once. ``gc=False`` switches the collector off for the
    whole comparison and restores it afterwards. ``timer`` is the clock samples
    are read from (``TIMER`` by default). Cost: about ``budget`` seconds.

    >>> c = compare_interleaved("sum(xs)", "len(xs)", setup="xs = list(range(1000))",
    ...                         labels=("sum", "len"), budget=0.3, target=0.002)
    >>> c.outcome
    'slower'
    """
    namespace = {} if globals is None else globals
    timer = TIMER if timer is None else timer
    _bootstrap()  # import SciPy before the budget's clock starts
    with collector(gc):
        started = time.perf_counter()
        sample_a, number_a = calibrated_sampler(a, setup=setup, namespace=namespace, target=target, timer=timer)
        sample_b, number_b = calibrated_sampler(b, setup=setup, namespace=namespace, target=target, timer=timer)
        result = compare_sampled(
            sample_a, sample_b, labels=labels, budget=budget, started=started, precision=precision,
            confidence=confidence,
            negligible=negligible, measurement_fields={"warmup": 1, "gc_enabled": _gc.isenabled(),
                                                       "ops_per_call": ops_per_call, "clock": _clock_name(timer)},
        )
    result.a.number, result.b.number = number_a, number_b
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
) -> Comparison:
    """Compare two ``Pass`` contenders: each sample is one ``run(prepare())``, interleaved and adaptive.

    ``prepare`` runs before the clock starts and what it built is released after
    the clock stops, as in ``interleave``. With ``gc=False`` a young collection
    runs after every pass, off the clock, so cycles never pile up. Samples are
    seconds per pass (on ``timer``, ``TIMER`` by default); ``ops_per_call`` of each
    pass gives the rates.
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
    _bootstrap()  # import SciPy before the budget's clock starts
    with collector(gc):
        started = time.perf_counter()
        for _ in range(warmup):
            sample_a()
            sample_b()
        result = compare_sampled(
            sample_a, sample_b, labels=(pass_a.label, pass_b.label), budget=budget, started=started,
            precision=precision,
            confidence=confidence, negligible=negligible, min_rounds=min_rounds, max_rounds=max_rounds,
            measurement_fields={"warmup": warmup, "gc_enabled": _gc.isenabled(), "clock": _clock_name(clock)},
        )
    result.a.ops_per_call, result.b.ops_per_call = pass_a.ops_per_call, pass_b.ops_per_call
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
