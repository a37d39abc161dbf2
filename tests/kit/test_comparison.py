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
    CATEGORIES,
    MAX_LINE,
    MAX_ROUNDS,
    MIN_ROUNDS,
    NEGLIGIBLE,
    OUTCOMES,
    SAMPLE_TARGET,
    WORKERS,
    Comparison,
    Measurement,
    Pass,
    compare,
    compare_fresh,
    compare_interleaved,
    compare_passes,
    compare_processes,
    compare_sampled,
    format_ratio,
    interleave,
    median_interval,
    ratio_interval,
)
from edumatcher.kit.verdict_check import RECORD_MIME

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
        seed=seed,
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
    tight = compare_sampled(machine.sampler(SAMPLE_S * 1.1), machine.sampler(SAMPLE_S), clock=machine.clock, seed=7,
                            budget=budget, precision=1e-9)
    assert "budget" in tight.stop_reason
    # The budget can be overrun by at most one round (two samples, a disturbed one up to 4x long).
    assert sum(tight.a.samples) + sum(tight.b.samples) <= budget + 2 * 4 * SAMPLE_S * 1.2


def test_a_noisy_pair_that_runs_out_of_budget_says_so() -> None:
    machine = Machine(3, noise=0.4)
    c = compare_sampled(machine.sampler(SAMPLE_S), machine.sampler(SAMPLE_S), clock=machine.clock, budget=0.015,
                        seed=3)
    assert "budget" in c.stop_reason and c.outcome == "undetermined" and c.category == "too close to call"
    assert c.verdict.startswith("too close to call: a against b is ")


def test_more_rounds_narrow_the_interval_and_never_flip_a_real_effect() -> None:
    verdicts, widths = [], []
    for budget in (0.025, 0.1, 0.4):
        machine = Machine(11)
        c = compare_sampled(machine.sampler(SAMPLE_S * 1.1), machine.sampler(SAMPLE_S), clock=machine.clock, seed=11,
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
        (2.0, 0.01, "slower", r"A is (1\.99|2\.0\d?)x slower than B$"),
        (0.5, 0.01, "faster", r"A is (1\.99|2\.0\d?)x faster than B$"),
        (1.01, 0.005, "same", r"A is as fast as B, to within 5 %$"),
        (1.0, 0.5, "undetermined", r"too close to call: A against B is \d\.\d\dx, and its interval reaches past"),
    ],
)
def test_each_outcome_is_worded_from_its_interval(ratio: float, spread: float, outcome: str, pattern: str) -> None:
    rng = random.Random(1)
    a = Measurement.from_samples([ratio * rng.lognormvariate(0, spread) for _ in range(20)], label="A")
    b = Measurement.from_samples([rng.lognormvariate(0, spread) for _ in range(20)], label="B")
    c = Comparison(a, b, paired=True)
    assert c.outcome == outcome and c.outcome in OUTCOMES and c.category == CATEGORIES[OUTCOMES.index(outcome)]
    assert re.match(pattern, c.verdict), c.verdict
    assert str(c).splitlines()[0] == f"verdict: {c.verdict}"
    assert "verdict:" in c._repr_html_() and "<details>" in c._repr_html_()
    assert "CI" in c.details() and "CI" not in c.verdict  # the interval is in the details, not the line


def test_a_faster_verdict_inverts_the_ratio_and_its_interval() -> None:
    a = Measurement.from_samples([1.0, 1.01, 0.99, 1.0, 1.02, 0.98], label="fast")
    b = Measurement.from_samples([2.0, 2.02, 1.98, 2.0, 2.04, 1.96], label="slow")
    c = Comparison(a, b, paired=True)
    low, high = c.ci
    assert low <= 0.5 <= high
    assert c.verdict == f"fast is {format_ratio(1 / c.ratio, (1 / high, 1 / low))}x faster than slow"


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


def test_the_interval_comes_from_the_per_round_ratios() -> None:
    """A drift of ±20 % with 2 % noise: the pairs cancel the drift; medians of each side do not."""
    rng = random.Random(4)
    drift = [1 + 0.2 * math.sin(i / 5) for i in range(100)]
    a = Measurement.from_samples([1.1 * d * rng.lognormvariate(0, 0.02) for d in drift])
    b = Measurement.from_samples([d * rng.lognormvariate(0, 0.02) for d in drift])
    paired = Comparison(a, b, paired=True)
    low, high = ratio_interval(a.samples, b.samples, paired=True)  # the old estimator: ratio of medians
    assert paired.ci[1] - paired.ci[0] < (high - low) / 2
    assert paired.ci[0] < 1.1 < paired.ci[1]


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


# ----------------------------------------------------------------- the rule across processes


def _processes(rng: random.Random, effect: float, *, workers: int = WORKERS, rounds: int = 40) -> Comparison:
    """Synthetic workers, shaped on what was measured here (3 x 40 fresh processes of an A/A): a process-fixed
    offset of 1 % spread, and 3 % of processes 14 % off either way (memory layout); then 3 % noise per sample and
    5 % of samples disturbed 1.3-4x. B is the true cost, A is (1 + effect) times it."""
    a_groups, b_groups = [], []
    for _ in range(workers):
        offset = rng.lognormvariate(0, 0.01)
        if rng.random() < 0.03:
            offset *= rng.choice((0.86, 1.14))
        a, b = [], []
        for _ in range(rounds):
            x = (1 + effect) * offset * rng.lognormvariate(0, 0.03)
            y = rng.lognormvariate(0, 0.03)
            if rng.random() < 0.05:
                x *= rng.uniform(1.3, 4.0)
            if rng.random() < 0.05:
                y *= rng.uniform(1.3, 4.0)
            a.append(x)
            b.append(y)
        a_groups.append(a)
        b_groups.append(b)
    return compare_processes(a_groups, b_groups, labels=("A", "B"), gc_enabled=False)


def _categories(effect: float, trials: int = 300, seed: int = 0) -> dict[str, int]:
    rng = random.Random(seed)
    counts = dict.fromkeys(CATEGORIES, 0)
    for _ in range(trials):
        counts[_processes(rng, effect).category] += 1
    return counts


def test_identical_code_is_never_called_slower_or_faster_across_processes() -> None:
    counts = _categories(0.0)
    assert counts["slower"] == counts["faster"] == 0, counts
    assert counts["same"] >= 0.9 * sum(counts.values()), counts


def test_a_ten_percent_effect_is_always_found_in_the_right_direction() -> None:
    assert _categories(0.10, seed=1)["slower"] == 300
    assert _categories(-1 / 11, seed=2)["faster"] == 300  # the same effect the other way round


@pytest.mark.parametrize("effect", [0.03, 0.05])
def test_effects_near_the_band_are_too_close_to_call_never_the_opposite(effect: float) -> None:
    counts = _categories(effect, seed=3)
    assert counts["faster"] == 0, counts
    if effect == 0.03:
        assert counts["slower"] == 0, counts  # 3 % is inside the band: never "slower"
    else:
        assert counts["same"] + counts["slower"] <= 0.05 * 300, counts  # at the edge: too close to call


def test_one_odd_process_cannot_move_the_interval() -> None:
    rng = random.Random(9)
    groups = [[rng.lognormvariate(0, 0.01) for _ in range(20)] for _ in range(WORKERS)]
    ones = [[1.0] * 20 for _ in range(WORKERS)]
    calm = compare_processes(groups, ones)
    groups[3] = [x * 1.5 for x in groups[3]]  # one process 50 % off
    odd = compare_processes(groups, ones)
    assert odd.category == calm.category == "same"
    assert abs(odd.ci[0] / calm.ci[0] - 1) < 0.01 and abs(odd.ci[1] / calm.ci[1] - 1) < 0.01


def test_median_interval_has_the_coverage_it_claims() -> None:
    rng = random.Random(5)
    hits = sum(low <= 0 <= high for low, high, _ in (median_interval([rng.gauss(0, 1) for _ in range(10)])
                                                     for _ in range(2000)))
    assert hits / 2000 >= 0.95  # 97.9 % in theory


def test_a_family_widens_each_interval() -> None:
    rng = random.Random(6)
    a = [[1.06 * rng.lognormvariate(0, 0.01) for _ in range(30)] for _ in range(16)]
    b = [[rng.lognormvariate(0, 0.01) for _ in range(30)] for _ in range(16)]
    alone, family = compare_processes(a, b), compare_processes(a, b, family=14)
    assert family.level == pytest.approx(1 - 0.05 / 14)
    assert family.ci[0] <= alone.ci[0] and family.ci[1] >= alone.ci[1]
    assert "Bonferroni" in family.details()


def test_a_collector_bimodal_side_is_judged_on_its_mean_and_says_so() -> None:
    """A side whose cost doubles in 25 % of samples (mean 25 % higher): the median alone would call it the same."""
    rng = random.Random(8)
    a = [rng.lognormvariate(0, 0.01) * (2.0 if rng.random() < 0.25 else 1.0) for _ in range(200)]
    b = [rng.lognormvariate(0, 0.01) for _ in range(200)]
    on = Comparison(Measurement.from_samples(a, gc_enabled=True, label="A"),
                    Measurement.from_samples(b, gc_enabled=True, label="B"), paired=True)
    off = Comparison(Measurement.from_samples(a, gc_enabled=False, label="A"),
                     Measurement.from_samples(b, gc_enabled=False, label="B"), paired=True)
    assert on.judged_on == "mean" and on.category == "slower" and "collector" in on.verdict
    assert off.judged_on == "median" and off.category == "same"
    assert any("bimodal" in w for w in on.warnings) and "⚠" in str(on)


def test_the_mean_note_never_changes_the_words_of_the_conclusion() -> None:
    """check-verdicts saw one verdict as two: with the note, the long names were cut shorter ("(…")."""
    rng = random.Random(8)
    a = [5.0 * rng.lognormvariate(0, 0.01) * (2.0 if rng.random() < 0.25 else 1.0) for _ in range(200)]
    b = [rng.lognormvariate(0, 0.01) for _ in range(200)]
    names = ("full collection, 20,000 resting orders (fresh process)", "the same after gc.freeze() (fresh process)")
    on = Comparison(Measurement.from_samples(a, gc_enabled=True, label=names[0]),
                    Measurement.from_samples(b, gc_enabled=True, label=names[1]), paired=True)
    off = Comparison(Measurement.from_samples(a, gc_enabled=False, label=names[0]),
                     Measurement.from_samples(b, gc_enabled=False, label=names[1]), paired=True)
    assert on.judged_on == "mean" and off.judged_on == "median"
    assert on.verdict.startswith(names[0]) and off.verdict.startswith(names[0])
    assert on.record.key == off.record.key
    assert len("verdict: " + on.verdict) <= MAX_LINE


def test_each_comparison_draws_its_own_round_order_and_records_it() -> None:
    machine = Machine(1)
    first = compare_sampled(machine.sampler(SAMPLE_S), machine.sampler(SAMPLE_S), clock=machine.clock, budget=0.01)
    second = compare_sampled(machine.sampler(SAMPLE_S), machine.sampler(SAMPLE_S), clock=machine.clock, budget=0.01)
    assert first.seed != second.seed and str(first.seed) in first.details()


def test_lines_are_short_conclusion_first_and_carry_a_record() -> None:
    long = "a label far longer than anyone would want to read in one verdict line, " * 3
    a = Measurement.from_samples([2.0] * 20, label=long)
    b = Measurement.from_samples([1.0] * 20, label="json")
    c = Comparison(a, b, paired=True, verb="encodes", key="encode")
    assert len(f"verdict: {c.verdict}") <= MAX_LINE and c.verdict.endswith("2.00x slower than json")
    bundle = c._repr_mimebundle_()
    (record,) = bundle[RECORD_MIME]
    assert (record["comparison"], record["category"], record["processes"]) == ("encode", "slower", 1)
    assert record["direction"].endswith("> json")
    assert not str(c.as_ratio()).startswith("verdict") and "not a verdict" in str(c.as_ratio())


def test_false_precision_and_intervals_that_seem_to_touch_one() -> None:
    assert format_ratio(19599.87, (18_700.0, 20_400.0)) == "19,600"
    ratios = [1.003, 1.004, 1.01, 1.02, 1.02, 1.03, 1.03, 1.04, 1.046, 1.05]
    c = compare_processes([[r] for r in ratios], [[1.0]] * 10)
    assert c.ci == (1.004, 1.046) and "CI 1.004–1.046" in c.ci_text


def test_compare_fresh_runs_workers_and_records_their_hash_seeds() -> None:
    c = compare_fresh("sum(xs)", "len(xs)", setup="xs = list(range(2000))", labels=("sum", "len"), workers=4,
                      rounds=10)
    assert c.category == "slower" and c.n_processes == 4 and len(c.per_process) == 4
    assert len(set(c.hash_seeds)) == 4 and c.rounds == 40 and c.a.clock
    assert c.a.loop_overhead is not None and c.seconds is not None
    assert c.record.processes == 4


def test_compare_fresh_builds_contenders_with_a_factory_in_each_worker() -> None:
    c = compare_fresh(contenders="edumatcher.kit.calibrate_rule:example_pair", kwargs={"n": 3000},
                      labels=("sum", "len"), workers=3, rounds=8)
    assert c.category == "slower" and c.n_processes == 3
    assert any("too few samples" in w for w in c.warnings)  # 3 processes cannot give a 95 % interval
    passes = compare_fresh(contenders="edumatcher.kit.calibrate_rule:example_passes", workers=2, rounds=6,
                           labels=("sorted", "copy"))
    assert passes.a.number == 1 and passes.a.loop_overhead is None and passes.rounds == 12


def test_compare_fresh_refuses_what_cannot_travel() -> None:
    with pytest.raises(ValueError, match="statements a and b"):
        compare_fresh("sum(xs)")
    with pytest.raises(ValueError, match="at least 2 workers"):
        compare_fresh("1", "2", workers=1)
