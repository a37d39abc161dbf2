"""The measuring harness: calibration, collector control, statistics, warnings, verdicts, renderings.

Nothing here asserts how fast anything is: timings are only checked against bounds
that a loaded machine cannot break (a no-op never takes 100 ms).
"""

from __future__ import annotations

import gc
import itertools
import random
import statistics
import time

import pytest

from edumatcher import kit as M
from edumatcher.kit import (
    Measurement,
    Pass,
    bimodal_split,
    compare,
    format_rate,
    format_seconds,
    interleave,
    interpreter,
    machine,
    measure,
    measure_passes,
    significance,
    table,
)


@pytest.fixture
def restore_gc():
    """Whatever a test does to the collector, leave it as it was."""
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


# ----------------------------------------------------------------- measure()


def test_calibration_reaches_the_target_roughly():
    m = measure(lambda: sum(range(200)), target=0.02, repeat=5, label="sum")
    assert m.number > 1
    assert m.repeat == 5 and len(m.samples) == 5
    # One sample is number calls; calibration aimed it at >= 20 ms. Wide margin:
    # the machine may have been slower during calibration than during sampling.
    assert m.min * m.number >= 0.02 * 0.25


def test_explicit_number_setup_and_warmup_counts():
    calls = {"fn": 0, "setup": 0}

    def fn():
        calls["fn"] += 1

    def setup():
        calls["setup"] += 1

    m = measure(fn, number=3, repeat=6, warmup=2, setup=setup)
    assert (m.number, m.repeat, m.warmup) == (3, 6, 2)
    assert calls == {"fn": 3 * (6 + 2), "setup": 6 + 2}


def test_statement_string_with_string_setup_and_globals():
    seen = []
    m = measure("seen.append(x)", setup="x = 41 + 1", globals={"seen": seen}, number=2, repeat=5)
    assert set(seen) == {42} and len(seen) == 2 * (5 + 1)
    assert m.median >= 0


def test_callable_with_string_setup_runs_it_in_globals():
    namespace: dict = {"log": []}
    measure(lambda: None, setup="log.append(1)", globals=namespace, number=1, repeat=5, warmup=1)
    assert namespace["log"] == [1] * 6


def test_statement_syntax_error_is_reported_before_running():
    with pytest.raises(SyntaxError):
        measure("x = = 1", number=1)


@pytest.mark.parametrize("bad", [{"repeat": 3}, {"repeat": 0}, {"warmup": 0}, {"number": 0}, {"target": 0}])
def test_bad_counts_are_refused(bad):
    with pytest.raises(ValueError):
        measure(lambda: None, **bad)


def test_few_repeats_need_the_flag_and_carry_a_warning():
    m = measure(lambda: None, number=10, repeat=2, allow_few_repeats=True)
    assert m.repeat == 2
    assert any("only 2 sample" in w for w in m.warnings)


def test_gc_false_disables_during_timing_and_restores(restore_gc):
    gc.enable()
    seen = []
    m = measure(lambda: seen.append(gc.isenabled()), gc=False, number=2, repeat=5)
    assert seen and not any(seen)
    assert gc.isenabled()
    assert m.gc_enabled is False


def test_gc_true_enables_during_timing_and_restores_disabled(restore_gc):
    gc.disable()
    seen = []
    m = measure(lambda: seen.append(gc.isenabled()), gc=True, number=2, repeat=5)
    assert seen and all(seen)
    assert not gc.isenabled()
    assert m.gc_enabled is True


@pytest.mark.parametrize("was_enabled", [True, False])
def test_gc_state_restored_even_when_the_code_raises(restore_gc, was_enabled):
    gc.enable() if was_enabled else gc.disable()
    with pytest.raises(ZeroDivisionError):
        measure(lambda: 1 / 0, gc=not was_enabled, number=1)
    assert gc.isenabled() is was_enabled
    with pytest.raises(ZeroDivisionError):
        interleave([Pass("boom", lambda _: 1 / 0)], gc=not was_enabled)
    assert gc.isenabled() is was_enabled


def test_interpreter_and_machine_describe_this_process():
    import platform

    assert interpreter().version == platform.python_version()
    assert platform.python_version() in str(interpreter())
    assert machine().cpu_count >= 1
    assert f"{machine().cpu_count} CPUs" in str(machine())
    m = Measurement.from_samples([1.0] * 5)
    assert m.interpreter == interpreter() and m.machine == machine()


# ----------------------------------------------------------------- passes


def test_interleave_alternates_and_keeps_prepare_off_the_clock():
    order = []
    prepared = []

    def prepare_a():
        time.sleep(0.1)  # would dominate the sample if it were timed
        prepared.append("a")
        return "input-a"

    contenders = [
        Pass("A", lambda data: data, prepare_a, ops_per_call=10),
        Pass("B", lambda data: data is None),
    ]
    results = interleave(contenders, repeat=5, warmup=1, on_pass=lambda r: order.append((r.label, r.round, r.warmup, r.result)))
    # every round holds each contender once, in an order drawn at random
    assert all(sorted(label for label, *_ in order[i:i + 2]) == ["A", "B"] for i in range(0, 12, 2))
    assert [r for _, r, _, _ in order[::2]] == [-1, 0, 1, 2, 3, 4]
    assert order[0][2] is True and order[2][2] is False
    assert {res for label, _, _, res in order if label == "A"} == {"input-a"}  # run got prepare's value
    assert {res for label, _, _, res in order if label == "B"} == {True}  # no prepare: run gets None
    assert len(prepared) == 6
    a, b = results
    assert (a.label, a.repeat, a.number, a.ops_per_call, a.warmup) == ("A", 5, 1, 10, 1)
    assert a.max < 0.1  # a no-op call cannot take the 100 ms that prepare slept


def test_measure_passes_is_one_contender():
    m = measure_passes(sorted, lambda: [3, 1, 2], label="sort3", ops_per_call=3, gc=False)
    assert (m.label, m.number, m.repeat, m.ops_per_call, m.gc_enabled) == ("sort3", 1, 5, 3, False)
    assert m.rate == pytest.approx(3 / m.median)


def test_interleave_refuses_too_few_repeats_and_no_contenders():
    with pytest.raises(ValueError):
        interleave([Pass("a", lambda _: None)], repeat=4)
    with pytest.raises(ValueError):
        interleave([])


# ----------------------------------------------------------------- statistics


def test_summary_statistics_from_given_samples():
    m = Measurement.from_samples([1.0, 2.0, 3.0, 4.0, 10.0], number=7, label="x", ops_per_call=100)
    assert (m.median, m.min, m.max, m.mean) == (3.0, 1.0, 10.0, 4.0)
    assert m.stdev == pytest.approx(statistics.stdev([1, 2, 3, 4, 10]))
    assert m.spread == pytest.approx((10 - 1) / 3)
    assert m.rel_stdev == pytest.approx(m.stdev / 4)
    assert m.rate == pytest.approx(100 / 3)
    assert m.rate_range == (pytest.approx(10.0), pytest.approx(100.0))
    assert m.per_op == pytest.approx(0.03)
    assert m.as_dict()["samples"] == [1.0, 2.0, 3.0, 4.0, 10.0]


def test_bad_samples_are_refused():
    with pytest.raises(ValueError):
        Measurement.from_samples([])
    with pytest.raises(ValueError):
        Measurement.from_samples([1.0, -1.0])


def test_tight_samples_raise_no_warning():
    assert Measurement.from_samples([1.00, 1.01, 0.99, 1.02, 1.00]).warnings == []


@pytest.mark.parametrize(
    "samples, phrase",
    [
        ([1.0, 1.0, 1.0, 1.0, 1.55], "max is 55.0 % above"),  # max 50 % or more above the median
        ([1.0, 1.0, 1.0, 1.0, 0.45], "min 55.0 % below"),  # min 50 % or more below
        ([1.0, 1.1, 1.2, 0.9, 0.8], "standard deviation is"),  # stdev >= 10 % of the mean
    ],
)
def test_spread_warnings(samples, phrase):
    m = Measurement.from_samples(samples, label="noisy")
    assert any(phrase in w for w in m.warnings), m.warnings
    assert "WARNING" in str(m) and phrase in str(m)
    assert phrase in m._repr_html_()


def test_spread_just_under_the_limits_is_quiet():
    m = Measurement.from_samples([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.45])
    assert not any("max is" in w for w in m.warnings)


# ----------------------------------------------------------------- bimodality


def test_bimodal_samples_are_detected_and_warned():
    samples = [1.00, 1.02, 1.01, 1.50, 1.52, 1.01, 1.51, 1.00, 1.02, 1.53]
    low, high = bimodal_split(samples)
    assert len(low) == 6 and len(high) == 4 and max(low) < min(high)
    m = Measurement.from_samples([s * 1e-3 for s in samples], label="two modes")
    assert any("bimodal" in w for w in m.warnings)


@pytest.mark.parametrize(
    "samples",
    [
        [1.0, 1.1, 1.2, 1.3, 1.4],  # evenly spread: no gap stands out
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 5.0],  # one outlier is not a mode
        [1.000, 1.000, 1.001, 1.001, 1.000],  # timer-resolution clusters: gap far under 10 %
        [1.0, 2.0, 3.0],  # too few samples to say
    ],
)
def test_not_bimodal(samples):
    assert bimodal_split(samples) is None


def test_bimodal_detector_rarely_fires_on_unimodal_noise():
    # False alarms on seeded Gaussian noise stay rare, even with 5 samples at 5 % noise.
    for n, sd, limit in ((5, 0.05, 0.02), (10, 0.10, 0.01), (20, 0.20, 0.01)):
        rng = random.Random(n)
        alarms = sum(bimodal_split([rng.gauss(1.0, sd) for _ in range(n)]) is not None for _ in range(500))
        assert alarms / 500 <= limit, (n, sd, alarms)


def test_bimodal_detector_finds_separated_clusters_most_of_the_time():
    rng = random.Random(5)
    hits = 0
    for _ in range(200):
        samples = [rng.gauss(1.0, 0.02) for _ in range(6)] + [rng.gauss(1.5, 0.02) for _ in range(4)]
        hits += bimodal_split(samples) is not None
    assert hits >= 180


# ----------------------------------------------------------------- compare and significance


def test_compare_names_the_slower_and_the_ratio():
    fast = Measurement.from_samples([1.0, 1.01, 0.99, 1.0, 1.02], label="fast")
    slow = Measurement.from_samples([2.3, 2.31, 2.29, 2.3, 2.32], label="slow")
    c = compare(slow, fast)
    assert c.ratio == pytest.approx(2.3)
    assert c.outcome == "slower" and not c.paired
    assert c.verdict == "slow is 2.30x slower than fast" and "95 % CI 2.2" in c.details()
    assert compare(fast, slow).verdict == "fast is 2.30x faster than slow"


def test_compare_of_overlapping_noisy_samples_is_undetermined():
    a = Measurement.from_samples([1.0, 1.2, 1.1, 1.05, 1.15], label="a")
    b = Measurement.from_samples([1.1, 1.3, 1.2, 1.15, 1.25], label="b")
    c = compare(a, b)
    assert c.outcome == "undetermined" and c.category == "too close to call"
    assert c.verdict.startswith("too close to call: a against b is 0.92x")
    assert "too close to call" in str(c) and "too close to call" in c._repr_html_()


def test_significance_exact_values():
    assert significance([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == pytest.approx(2 / 252)
    assert significance([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]) == pytest.approx(2 / 252)
    assert significance([1, 2, 3], [1, 2, 3]) == 1.0
    assert significance([1.0], [2.0]) == 1.0  # one against one: either order is as likely


def _brute_force_p(a, b):
    """Two-sided permutation p-value of the rank sum, by listing every split."""
    pooled = sorted(a + b)
    rank = {}
    for value, group in itertools.groupby(enumerate(pooled, 1), key=lambda t: t[1]):
        positions = [i for i, _ in group]
        rank[value] = sum(positions) / len(positions)
    ranks = [rank[x] for x in a + b]
    expected = len(a) * (len(pooled) + 1) / 2
    observed = abs(sum(rank[x] for x in a) - expected)
    splits = list(itertools.combinations(range(len(ranks)), len(a)))
    extreme = sum(abs(sum(ranks[i] for i in s) - expected) >= observed - 1e-9 for s in splits)
    return extreme / len(splits)


@pytest.mark.parametrize("seed", range(8))
def test_significance_exact_matches_brute_force_with_ties(seed):
    rng = random.Random(seed)
    a = [rng.randint(1, 6) for _ in range(rng.randint(2, 6))]
    b = [rng.randint(2, 8) for _ in range(rng.randint(2, 6))]
    assert significance(a, b) == pytest.approx(_brute_force_p(a, b))


def test_significance_normal_approximation_for_large_samples():
    rng = random.Random(1)
    same = significance([rng.gauss(1, 0.1) for _ in range(40)], [rng.gauss(1, 0.1) for _ in range(40)])
    shifted = significance([rng.gauss(1, 0.1) for _ in range(40)], [rng.gauss(1.2, 0.1) for _ in range(40)])
    assert same > 0.05
    assert shifted < 1e-6
    # Near the switch-over the approximation agrees with the exact answer.
    # (15 + 15 samples: exact; 15 + 16: normal approximation.)
    a, b = [rng.gauss(1, 0.1) for _ in range(15)], [rng.gauss(1.08, 0.1) for _ in range(16)]
    exact = significance(a, b[:15])
    assert abs(significance(a, b) - exact) < 0.1


def test_significance_needs_samples():
    with pytest.raises(ValueError):
        significance([], [1.0])


def test_throughput_row_only_when_ops_per_call_given():
    assert "throughput" not in str(Measurement.from_samples([1.0] * 5))
    text = str(Measurement.from_samples([2.0] * 5, ops_per_call=1_000_000))
    assert "throughput" in text and "500 k ops/s" in text


def test_html_escapes_labels_and_shows_warnings():
    evil = "<script>alert('x')</script> & co"
    m = Measurement.from_samples([1.0, 1.0, 1.0, 1.0, 3.0], label=evil)
    for rendered in (m._repr_html_(), table([m])._repr_html_(), compare(m, m)._repr_html_()):
        assert "<script>" not in rendered
        assert "&lt;script&gt;" in rendered and "&amp; co" in rendered
    assert "Do not trust these figures" in m._repr_html_() and "Do not trust these figures" in table([m])._repr_html_()
    assert "⚠" in compare(m, m)._repr_html_()  # a comparison's warnings: one line each, above its details


def test_table_text_and_html():
    a = Measurement.from_samples([1e-3] * 5, label="fast")
    b = Measurement.from_samples([3e-3, 3e-3, 3e-3, 3e-3, 9e-3], label="slow")
    t = table([a, b])
    lines = str(t).splitlines()
    assert lines[0].split()[:3] == ["median", "min", "max"]
    assert lines[1].startswith("fast") and lines[1].rstrip().endswith("1.00")
    assert lines[2].startswith("slow") and lines[2].rstrip().endswith("3.00")
    assert any(line.startswith("WARNING slow:") for line in lines)
    assert "interpreter:" in str(t)
    html_text = t._repr_html_()
    assert html_text.count("<tr>") == 3
    assert str(table([])) == "(no measurements)"


@pytest.mark.parametrize(
    "seconds, text",
    [(0.0, "0.00 ns"), (4.2e-9, "4.20 ns"), (999e-9, "999 ns"), (1e-6, "1.00 µs"), (0.25, "250 ms"),
     (3.0, "3.00 s"), (4000.0, "4,000 s"), (0.0009999, "1.00 ms"), (9.9996e-7, "1.00 µs"), (999.6e-9, "1.00 µs")],
)
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text


def test_format_rate():
    assert format_rate(999) == "999 ops/s"
    assert format_rate(1500, "msg/s") == "1.50 k msg/s"
    assert format_rate(2.5e9) == "2.50 G ops/s"


def test_limits_are_the_documented_ones():
    assert (M.MIN_REPEAT, M.SPREAD_LIMIT, M.RSTDEV_LIMIT, M.DEFAULT_TARGET, M.REPEAT) == (5, 0.5, 0.10, 0.0005, 31)


def test_measure_reads_short_cpu_clock_samples_and_shows_the_loop_overhead():
    m = measure("d[k]", setup="d = {i: i for i in range(100)}; k = 42")
    assert m.repeat == M.REPEAT and m.clock == M.TIMER_NAME
    assert m.min * m.number >= M.SAMPLE_TARGET * 0.25  # calibrated to half a millisecond, not 50 ms
    assert 0 < m.loop_overhead < m.median * 3
    assert "of which the timing loop" in str(m)
    wall = measure("d[k]", setup="d = {1: 1}; k = 1", timer=time.perf_counter)
    assert wall.clock == "wall time"


def test_interleave_times_on_the_cpu_clock():
    slept = interleave([Pass("sleeps", lambda _: time.sleep(0.01)), Pass("nothing", lambda _: None)], repeat=5)
    assert slept[0].clock == M.TIMER_NAME
    if M.TIMER_NAME == "thread CPU time":
        assert slept[0].max < 0.005  # a sleep costs no CPU time
