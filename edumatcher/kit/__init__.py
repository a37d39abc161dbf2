"""The measuring kit: every number the course shows as measured comes through here.

A tour. Time one thing (calibrated samples, a median, the spread, warnings):

>>> from edumatcher.kit import measure, compare_interleaved, format_seconds
>>> m = measure("x * 2", setup="x = 21", repeat=5, target=0.001, label="double")
>>> m.repeat, m.label
(5, 'double')

Compare two things in interleaved rounds on the CPU clock, with a verdict worded from the
interval of their ratio:

>>> c = compare_interleaved("sum(xs)", "len(xs)", setup="xs = list(range(1000))",
...                         labels=("sum", "len"), budget=0.3, target=0.002)
>>> c.outcome
'slower'

The rooms, one job each (pyperf's layout):

============================  ==========================================================
``_metadata``                 who ran it: interpreter, machine (``interpreter()``, ``machine()``)
``_formatter``                units and tables for people (``format_seconds``, ``table``)
``_measurement``              the data: ``Measurement`` (samples, summary, warnings)
``_runner``                   timing: calibration, warm-up, samples (``measure``, ``interleave``)
``_compare``                  comparison, interval, verdict (``compare_interleaved``...)
``_worker``                   fresh-process runs (``run_isolated``, ``run_workers``)
``open_loop``                 latency as clients see it (``drive``, ``LatencyReport``)
``load``                      CPU hogs beside a measurement (``cpu_hog``)
``traced_memory``             bytes kept and peak bytes (``bytes_kept``, ``peak_bytes``)
``verdict_check``             ``python -m edumatcher check-verdicts``
``versions``                  ``python -m edumatcher versions``: interpreters side by side
``version_suite``             the suite ``versions`` runs in each interpreter (stdlib only)
============================  ==========================================================

The rooms import in one direction only (metadata, formatter, measurement, runner,
compare), so there is no import cycle.
"""

from ._compare import (
    BUDGET,
    CONFIDENCE,
    MAX_ROUNDS,
    MIN_ROUNDS,
    NEGLIGIBLE,
    OUTCOMES,
    PRECISION,
    RESAMPLES,
    Comparison,
    compare,
    compare_interleaved,
    compare_passes,
    compare_sampled,
    ratio_interval,
    significance,
)
from ._formatter import MeasurementTable, format_rate, format_seconds, table
from ._measurement import MIN_REPEAT, RSTDEV_LIMIT, SPREAD_LIMIT, Measurement, bimodal_split
from ._metadata import InterpreterInfo, MachineInfo, interpreter, machine
from ._runner import (
    DEFAULT_TARGET,
    SAMPLE_TARGET,
    TIMER,
    TIMER_NAME,
    Pass,
    PassRecord,
    calibrated_sampler,
    collector,
    interleave,
    measure,
    measure_passes,
)
from ._worker import IsolatedRunError, run_isolated, run_workers
from .load import cpu_hog
from .open_loop import LatencyReport, OpenLoopRun, Percentiles, arrival_offsets, drive
from .traced_memory import bytes_kept, peak_bytes

__all__ = [
    # metadata and formatting
    "InterpreterInfo", "MachineInfo", "interpreter", "machine", "format_seconds", "format_rate",
    "MeasurementTable", "table",
    # the data
    "Measurement", "bimodal_split", "MIN_REPEAT", "SPREAD_LIMIT", "RSTDEV_LIMIT",
    # timing
    "DEFAULT_TARGET", "SAMPLE_TARGET", "TIMER", "TIMER_NAME", "Pass", "PassRecord", "measure", "measure_passes",
    "interleave", "collector", "calibrated_sampler",
    # comparing
    "CONFIDENCE", "NEGLIGIBLE", "PRECISION", "BUDGET", "MIN_ROUNDS", "MAX_ROUNDS", "RESAMPLES", "OUTCOMES",
    "Comparison", "compare", "compare_sampled", "compare_interleaved", "compare_passes", "ratio_interval",
    "significance",
    # fresh processes, load, latency, memory
    "IsolatedRunError", "run_isolated", "run_workers", "cpu_hog", "arrival_offsets", "drive", "OpenLoopRun",
    "LatencyReport", "Percentiles", "bytes_kept", "peak_bytes",
]
