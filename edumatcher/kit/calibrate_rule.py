"""Rerun the verdict rule on known effects, for real: ``python -m edumatcher.kit.calibrate_rule``.

Issue 21 asks of the rule: identical code (A/A) never called slower or faster in 60
fresh-process comparisons; a true 10 % effect found in every one of 30, in the right
direction; effects near the negligible band (3 %, 5 %) called "too close to call" or
"same", never the opposite direction. This script makes those effects *by construction*
and counts what ``compare_fresh`` says, on this machine, as busy as it is.

How a known effect is made: both sides run the same statement; side B runs
1 / (1 + effect) times as many calls per sample as A, divided by the same count
(``paired_rounds(scale_b=...)``), so A costs exactly (1 + effect) times B, loop
included. The statements rotate through three kinds (a dict lookup of a few
nanoseconds, a sum over 300 ints, a list comprehension that keeps the collector busy),
each comparison in ``WORKERS`` fresh processes with the default settings a chapter gets.

Example (about 4 minutes on a 2-CPU machine)::

    python -m edumatcher.kit.calibrate_rule --aa 60 --effect 0.10:30 --effect 0.05:20 --effect 0.03:20
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ._compare import CATEGORIES, NEGLIGIBLE, WORKERS, compare_fresh
from ._metadata import environment
from ._runner import Pass

__all__ = ["STATEMENTS", "calibrate", "example_pair", "example_passes", "main"]

STATEMENTS = (
    ("d[k]", "d = {i: i for i in range(100)}; k = 42"),
    ("sum(xs)", "xs = list(range(300))"),
    ("[i for i in r]", "r = range(50)"),
)
"""(statement, setup) pairs the comparisons rotate through."""


def example_pair(n: int = 1_000) -> tuple[Callable[[], object], Callable[[], object]]:
    """A contenders factory for ``compare_fresh`` (used by its tests and docs): ``sum(xs)`` against ``len(xs)``.

    A factory runs in each worker process and builds there what cannot travel from a
    notebook (objects, closures); it returns a pair of statements, callables or ``Pass``.
    """
    xs = list(range(n))
    return (lambda: sum(xs)), (lambda: len(xs))


def example_passes(n: int = 2_000) -> tuple[Pass, Pass]:
    """A factory of two ``Pass`` contenders: sorting a fresh reversed list against copying it."""
    return (Pass("sorted", sorted, lambda: list(range(n, 0, -1)), ops_per_call=n),
            Pass("copy", list, lambda: list(range(n)), ops_per_call=n))


def calibrate(effects: Sequence[tuple[float, int]], *, workers: int = WORKERS, say=print) -> dict[str, object]:
    """Run ``count`` fresh-process comparisons at each true ``effect``; return counts per category and costs."""
    results: dict[str, object] = {"workers": workers, "negligible": NEGLIGIBLE, "effects": []}
    for effect, count in effects:
        counts = dict.fromkeys(CATEGORIES, 0)
        seconds: list[float] = []
        ratios: list[float] = []
        for i in range(count):
            stmt, setup = STATEMENTS[i % len(STATEMENTS)]
            c = compare_fresh(stmt, stmt, setup=setup, labels=("A", "B"), workers=workers,
                              scale_b=1 / (1 + effect))
            counts[c.category] += 1
            seconds.append(c.seconds or 0.0)
            ratios.append(c.ratio)
            say(f"  effect {effect:+.0%} #{i + 1:>2}/{count} {stmt:<15} ratio {c.ratio:.3f} "
                f"({c.ci[0]:.3f}-{c.ci[1]:.3f}) {c.category:<17} {c.seconds:.1f} s")
        results["effects"].append({"effect": effect, "count": count, "categories": counts,
                                   "seconds_median": statistics.median(seconds), "seconds_max": max(seconds),
                                   "ratio_median": statistics.median(ratios)})
    return results


def _effect(text: str) -> tuple[float, int]:
    effect, _, count = text.partition(":")
    return float(effect), int(count or 30)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; prints one summary line per effect."""
    parser = argparse.ArgumentParser(prog="python -m edumatcher.kit.calibrate_rule", description=__doc__.split("\n")[0])
    parser.add_argument("--aa", type=int, default=60, help="A/A comparisons (default 60)")
    parser.add_argument("--effect", type=_effect, action="append", metavar="EFFECT:COUNT",
                        help="a true effect and how many comparisons (default: 0.10:30, 0.05:20, 0.03:20)")
    parser.add_argument("--workers", type=int, default=WORKERS, help=f"processes per comparison (default {WORKERS})")
    parser.add_argument("--json", type=Path, default=None, help="also write the results to FILE")
    args = parser.parse_args(argv)
    effects = [(0.0, args.aa)] + (args.effect or [(0.10, 30), (0.05, 20), (0.03, 20)])
    print(f"calibrate_rule: {' '.join(['python -m edumatcher.kit.calibrate_rule'] + list(argv or sys.argv[1:]))}")
    print(environment())
    started = time.perf_counter()
    results = calibrate(effects, workers=args.workers)
    results["seconds"] = time.perf_counter() - started
    print(f"summary (band ±{NEGLIGIBLE:.0%}, {args.workers} fresh processes per comparison):")
    for row in results["effects"]:  # type: ignore[attr-defined]
        counts = ", ".join(f"{k} {v}" for k, v in row["categories"].items())
        print(f"  true effect {row['effect']:+.0%}: {row['count']} comparisons: {counts}; median ratio "
              f"{row['ratio_median']:.3f}; one verdict took {row['seconds_median']:.1f} s (median), "
              f"{row['seconds_max']:.1f} s (max)")
    print(f"done in {results['seconds']:.0f} s")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
