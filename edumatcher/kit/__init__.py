"""The measuring kit: every number the course shows as measured comes through here.

A tour. Time one thing: short samples on this thread's CPU clock, the median, the
spread, the timing loop's own cost, warnings:

>>> from edumatcher.kit import measure, compare_fresh, compare_interleaved, claim
>>> m = measure("x * 2", setup="x = 21", label="double")
>>> m.repeat, m.clock
(31, 'thread CPU time')

A chapter's verdict: two contenders in ``WORKERS`` fresh processes (two at a time),
paired rounds in random order, the interval of the median of the per-process ratios,
and the equivalence rule (slower / faster only beyond the ±5 % band, same inside it,
else too close to call). About 2 s:

>>> c = compare_fresh("sum(xs)", "len(xs)", setup="xs = list(range(1000))", labels=("sum", "len"))
>>> c.category, c.n_processes
('slower', 12)

Displayed, it is one line (``verdict: sum is 200x slower than len``), its warnings, and
a collapsible detail (table, interval, processes, seeds, cost); it also carries a
verdict record for ``check-verdicts``. A comparison shown but not judged:
``c.as_ratio()``. A verdict that is not a timing comparison:
``claim(comparison, category, line)``. One process, for exploring (the interval
covers this process only):

>>> compare_interleaved("sum(xs)", "len(xs)", setup="xs = list(range(1000))", budget=0.3).category
'slower'

The rooms, one job each (pyperf's layout):

=============================  ===========================================================
``_metadata``                  who ran it and where: ``interpreter()``, ``machine()``, ``environment()``
``_formatter``                 units for people: ``format_seconds``, ``format_ratio``, ``table``
``_measurement``               the data: ``Measurement`` (samples, summary, warnings)
``_timing``                    the primitives, stdlib only: samplers, calibration, ``TIMER``,
                               ``paired_rounds`` (what a worker process loads on its own)
``_runner``                    timing: ``measure``, ``interleave``, ``Pass``
``_compare``                   comparison, interval, verdict rule: ``compare_fresh``,
                               ``compare_processes``, ``compare_interleaved``, ``compare``...
``_worker``, ``_child``        fresh processes: ``spawn``, ``run_isolated``, ``run_workers``
``open_loop``                  latency as clients see it: ``drive``, ``LatencyReport``
``load``                       CPU hogs beside a measurement: ``cpu_hog``
``traced_memory``              bytes kept and peak bytes: ``bytes_kept``, ``peak_bytes``
``verdict_check``              verdict records, ``claim``; ``python -m edumatcher check-verdicts``
``versions``                   ``python -m edumatcher versions``: interpreters side by side
``version_suite``              the suite ``versions`` runs in each interpreter (stdlib only)
``calibrate_rule``             ``python -m edumatcher.kit.calibrate_rule``: the rule on known effects
=============================  ===========================================================

What several chapters share, beside the rooms (a chapter's own code is in ``edumatcher.chapters``):

=============================  ===========================================================
``plots``                      the plotting style (its colours) and shared figures: ``cost_bars``,
                               ``ratio_bars``, ``latency_histogram``, ``depth_chart``...
``side_by_side``               quoted figures beside measured ones, in one table
``message_path``               the engine's message path as an experiment: payloads, latencies
``figure_control``             ``FigureControl``: a figure redrawn from a few controls
``versions_view``              chapter 00's interpreter picker over ``versions``
=============================  ===========================================================

The rooms import in one direction only (metadata, formatter, measurement, timing,
runner, verdict records, compare), so there is no import cycle; importing the kit
loads neither numpy nor SciPy, and a worker process loads ``_timing`` alone.
"""

from ._compare import (
    BUDGET,
    CATEGORIES,
    CONFIDENCE,
    MAX_LINE,
    MAX_ROUNDS,
    MIN_ROUNDS,
    NEGLIGIBLE,
    OUTCOMES,
    PRECISION,
    RESAMPLES,
    WORKERS,
    Comparison,
    RatioReport,
    compare,
    compare_fresh,
    compare_interleaved,
    compare_passes,
    compare_processes,
    compare_sampled,
    median_interval,
    ratio_interval,
    significance,
)
from ._formatter import MeasurementTable, format_interval, format_rate, format_ratio, format_seconds, table
from ._measurement import MIN_REPEAT, RSTDEV_LIMIT, SPREAD_LIMIT, Measurement, bimodal_split
from ._metadata import Environment, InterpreterInfo, MachineInfo, environment, interpreter, machine
from ._runner import (
    DEFAULT_TARGET,
    REPEAT,
    Pass,
    PassRecord,
    calibrated_sampler,
    interleave,
    measure,
    measure_passes,
)
from ._timing import ROUNDS, SAMPLE_TARGET, TIMER, TIMER_NAME, CollectorTally, collector
from ._worker import IsolatedRunError, WorkerRun, run_isolated, run_workers, spawn, worker_runs
from .load import cpu_hog
from .open_loop import LatencyReport, OpenLoopRun, Percentiles, arrival_offsets, drive
from .traced_memory import bytes_kept, peak_bytes
from .verdict_check import Claim, VerdictRecord, claim

__all__ = [
    # metadata and formatting
    "InterpreterInfo", "MachineInfo", "interpreter", "machine", "Environment", "environment",
    "format_seconds", "format_rate", "format_ratio", "format_interval", "MeasurementTable", "table",
    # the data
    "Measurement", "bimodal_split", "MIN_REPEAT", "SPREAD_LIMIT", "RSTDEV_LIMIT",
    # timing
    "DEFAULT_TARGET", "SAMPLE_TARGET", "REPEAT", "ROUNDS", "TIMER", "TIMER_NAME", "Pass", "PassRecord", "measure",
    "measure_passes", "interleave", "collector", "calibrated_sampler", "CollectorTally",
    # comparing and judging
    "CONFIDENCE", "NEGLIGIBLE", "PRECISION", "BUDGET", "MIN_ROUNDS", "MAX_ROUNDS", "WORKERS", "RESAMPLES",
    "OUTCOMES", "CATEGORIES", "MAX_LINE", "Comparison", "RatioReport", "compare", "compare_sampled",
    "compare_interleaved", "compare_passes", "compare_fresh", "compare_processes", "ratio_interval",
    "median_interval", "significance", "VerdictRecord", "Claim", "claim",
    # fresh processes, load, latency, memory
    "IsolatedRunError", "WorkerRun", "spawn", "run_isolated", "run_workers", "worker_runs", "cpu_hog",
    "arrival_offsets", "drive", "OpenLoopRun", "LatencyReport", "Percentiles", "bytes_kept", "peak_bytes",
]
