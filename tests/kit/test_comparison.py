"""The sound comparison, proved on synthetic timings whose answer is known.

Synthetic samplers stand in for the machine: each sample is log-normal noise
around a true mean, a slow sinusoidal drift of the whole machine, and, in 5 % of
samples, a disturbance that lengthens the sample 1.3-4x (another process took the
CPU). A fake clock advances by each sample's length, so "the default budget" means
what it means on a real machine: as many rounds as fit in ``BUDGET`` seconds of
``SAMPLE_TARGET`` samples. Everything is seeded, so the proportions below are the same on
every run; they measure the method, not this machine.
"""

from __future__ import annotations

import math
import random
import re

import pytest

from edumatcher.kit import (
    MAX_ROUNDS,
    MIN_ROUNDS,
    NEGLIGIBLE,
    OUTCOMES,
    SAMPLE_TARGET,
    Comparison,
    Measurement,
    Pass,
    compare,
    compare_interleaved,
    compare_passes,
    compare_sampled,
    interleave,
    ratio_interval,
)

SAMPLE_S = SAMPLE_TARGET
TRIALS = 200


class Machine:
    """A shared clock and a slowly drifting machine speed, for a pair of synthetic samplers."""

    def __init__(self, seed: int, *, noise: float = 0.03, disturbed: float = 0.05) -> None:
        self.rng = random.Random(seed)
        self.now = 0.0
        self.noise, self.disturbed = noise, disturbed

    def clock(self) -> float:
        return self.now

    def sampler(self, true_seconds: float):
        def sample() -> float:
            drift = 1 + 0.05 * math.sin(self.now / 0.3)  # the machine slows and speeds up over ~2 s
            value = true_seconds * drift * self.rng.lognormvariate(0, self.noise)
            if self.rng.random() < self.disturbed:
                value *= self.rng.uniform(1.3, 4.0)
            self.now += value
            return value
        return sample


def _trial(seed: int, gap: float) -> Comparison:
    machine = Machine(seed)
    return compare_sampled(
        machine.sampler(SAMPLE_S * (1 + gap)), machine.sampler(SAMPLE_S), labels=("A", "B"), clock=machine.clock,
    )


def test_a_real_ten_percent_gap_is_found_in_95_percent_of_trials_at_the_default_budget() -> None:
    outcomes = [_trial(seed, 0.10).outcome for seed in range(TRIALS)]
    found = outcomes.count("slower") / TRIALS
    assert found >= 0.95, f"found the 10 % gap in only {found:.1%} of trials: {sorted(set(outcomes))}"
    assert "faster" not in outcomes


def test_the_same_code_on_both_sides_is_called_no_difference_in_95_percent_of_trials() -> None:
    outcomes = [_trial(1000 + seed, 0.0).outcome for seed in range(TRIALS)]
    no_difference = sum(o in ("same", "undetermined") for o in outcomes) / TRIALS
    assert no_difference >= 0.95, f"A/A trials called different in {1 - no_difference:.1%}"


def test_the_budget_is_respected_and_the_stop_reason_says_why() -> None:
    c = _trial(7, 0.10)  # the default budget: this clear gap is settled well inside it
    assert MIN_ROUNDS <= c.rounds <= MAX_ROUNDS and c.stop_reason.startswith("stopped when the CI was within")
    machine = Machine(7)
    budget = 0.05  # an unreachable precision: only the budget can stop it
    tight = compare_sampled(machine.sampler(SAMPLE_S * 1.1), machine.sampler(SAMPLE_S), clock=machine.clock,
                            budget=budget, precision=1e-9)
    assert "budget" in tight.stop_reason
    # The budget can be overrun by at most one round (two samples, a disturbed one up to 4x long).
    assert sum(tight.a.samples) + sum(tight.b.samples) <= budget + 2 * 4 * SAMPLE_S * 1.2


def test_a_noisy_pair_that_runs_out_of_budget_says_so() -> None:
    machine = Machine(3, noise=0.4)
    c = compare_sampled(machine.sampler(SAMPLE_S), machine.sampler(SAMPLE_S), clock=machine.clock, budget=0.015)
    assert "budget" in c.stop_reason and c.outcome == "undetermined"
    assert c.verdict.startswith("no difference detectable at this noise: the CI spans 1.0")


def test_more_rounds_narrow_the_interval_and_never_flip_a_real_effect() -> None:
    verdicts, widths = [], []
    for budget in (0.025, 0.1, 0.4):
        machine = Machine(11)
        c = compare_sampled(machine.sampler(SAMPLE_S * 1.1), machine.sampler(SAMPLE_S), clock=machine.clock,
                            budget=budget, precision=1e-6, max_rounds=10_000)
        verdicts.append(c.outcome)
        widths.append(c.ci[1] - c.ci[0])
    assert verdicts == ["slower"] * 3
    assert widths[0] > widths[1] > widths[2]


def test_one_disturbed_sample_cannot_change_the_verdict() -> None:
    rng = random.Random(5)
    a = [1.1 * rng.lognormvariate(0, 0.03) for _ in range(30)]
    b = [rng.lognormvariate(0, 0.03) for _ in range(30)]
    clean = Comparison(Measurement.from_samples(a), Measurement.from_samples(b), paired=True)
    for index in (0, 15, 29):
        for side in ("a", "b"):
            xs, ys = list(a), list(b)
            (xs if side == "a" else ys)[index] *= 1000  # a sample that lasted a thousand times longer
            hit = Comparison(Measurement.from_samples(xs), Measurement.from_samples(ys), paired=True)
            assert hit.outcome == clean.outcome == "slower"
            assert abs(hit.ratio / clean.ratio - 1) < 0.03


@pytest.mark.parametrize(
    ("ratio", "spread", "outcome", "pattern"),
    [
        (2.0, 0.01, "slower", r"A is 2\.0\dx slower than B \(95 % CI \d\.\d\d–\d\.\d\d\)"),
        (0.5, 0.01, "faster", r"A is (1\.99|2\.0\d)x faster than B \(95 % CI \d\.\d\d–\d\.\d\d\)"),
        (1.01, 0.005, "same", r"A and B take the same time to within 5 % \(ratio 1\.01, 95 % CI "),
        (1.0, 0.5, "undetermined", r"no difference detectable at this noise: the CI spans 1\.0 \(0\.\d\d–1\.\d\d\)"),
    ],
)
def test_each_outcome_is_worded_from_its_interval(ratio: float, spread: float, outcome: str, pattern: str) -> None:
    rng = random.Random(1)
    a = Measurement.from_samples([ratio * rng.lognormvariate(0, spread) for _ in range(20)], label="A")
    b = Measurement.from_samples([rng.lognormvariate(0, spread) for _ in range(20)], label="B")
    c = Comparison(a, b, paired=True)
    assert c.outcome == outcome and c.outcome in OUTCOMES
    assert re.match(pattern, c.verdict), c.verdict
    assert f"verdict: {c.verdict}" in str(c).splitlines()
    assert "verdict:" in c._repr_html_()


def test_a_faster_verdict_inverts_the_interval() -> None:
    a = Measurement.from_samples([1.0, 1.01, 0.99, 1.0, 1.02, 0.98], label="fast")
    b = Measurement.from_samples([2.0, 2.02, 1.98, 2.0, 2.04, 1.96], label="slow")
    c = Comparison(a, b, paired=True)
    low, high = c.ci
    assert low < 0.5 < high or math.isclose(low, high)
    assert f"{1 / high:.2f}–{1 / low:.2f}" in c.verdict


def test_the_negligible_band_is_symmetric_in_ratio() -> None:
    same = Comparison(Measurement.from_samples([1.04] * 10), Measurement.from_samples([1.0] * 10), paired=True)
    also = Comparison(Measurement.from_samples([1.0] * 10), Measurement.from_samples([1.04] * 10), paired=True)
    beyond = Comparison(Measurement.from_samples([1.0] * 10),
                        Measurement.from_samples([1 + NEGLIGIBLE * 1.2] * 10), paired=True)
    assert (same.outcome, also.outcome, beyond.outcome) == ("same", "same", "faster")


def test_the_interval_is_reproducible_and_respects_pairing() -> None:
    rng = random.Random(2)
    drift = [1 + 0.5 * math.sin(i / 3) for i in range(40)]  # a machine whose speed swings ±50 %
    a = [1.1 * d * rng.lognormvariate(0, 0.01) for d in drift]
    b = [d * rng.lognormvariate(0, 0.01) for d in drift]
    paired, unpaired = ratio_interval(a, b, paired=True), ratio_interval(a, b, paired=False)
    assert paired == ratio_interval(a, b, paired=True)  # fixed seed
    assert paired[1] - paired[0] < unpaired[1] - unpaired[0]  # pairing cancels the shared drift
    with pytest.raises(ValueError, match="at least 2 samples"):
        ratio_interval([1.0], [1.0], paired=True)


def test_compare_pairs_measurements_from_one_interleave_call() -> None:
    fast, slow = interleave([Pass("fast", lambda _: sum(range(10))), Pass("slow", lambda _: sum(range(2000)))],
                            repeat=6)
    assert compare(slow, fast).paired
    assert not compare(slow, Measurement.from_samples(fast.samples, label="fast")).paired
    assert compare(slow, fast).outcome in OUTCOMES  # real timings: which outcome is the machine's business


def test_compare_interleaved_unpacks_and_times_real_code() -> None:
    c = compare_interleaved("sum(xs)", "len(xs)", setup="xs = list(range(2000))", labels=("sum", "len"),
                            budget=0.4, target=0.002)
    summed, counted = c
    assert (summed.label, counted.label) == ("sum", "len")
    assert c.outcome in OUTCOMES and c.rounds >= MIN_ROUNDS and summed.repeat == c.rounds
    assert summed.number >= 1 and summed.warmup == 1


def test_compare_passes_keeps_prepare_off_the_clock_and_sets_rates() -> None:
    prepared = []
    c = compare_passes(
        Pass("sort", lambda xs: sorted(xs), lambda: prepared.append(1) or list(range(3000, 0, -1)), ops_per_call=3000),
        Pass("copy", lambda xs: list(xs), lambda: list(range(3000)), ops_per_call=3000),
        budget=0.3, gc=False,
    )
    assert len(prepared) == c.rounds + 1  # one warm-up pass
    assert c.a.ops_per_call == 3000 and c.a.rate > 0


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="min_rounds"):
        compare_sampled(lambda: 1.0, lambda: 1.0, min_rounds=1)
    with pytest.raises(ValueError, match="positive"):
        compare_sampled(lambda: 1.0, lambda: 1.0, budget=0)
    with pytest.raises(TypeError, match="callable or a statement"):
        compare_interleaved(42, "pass")  # type: ignore[arg-type]
