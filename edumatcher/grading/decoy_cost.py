"""What decoy twins cost: each source's solution graded with and without twins, alternately.

``python -m edumatcher.grading.decoy_cost [--rounds 4] [SOURCE.ipynb ...]``

Each round grades the solution once with twins and once without, the order swapped from one
round to the next (so neither always runs on a warmer machine), and prints the median wall time
of each and the spread of the per-round ratios. Every figure printed is measured by this run.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from .exercise import load_exercise
from .sandbox_cost import _TOY
from .supervise import grade_one

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Grade each solution ``--rounds`` times with and without twins; print times and ratios."""
    parser = argparse.ArgumentParser(prog="python -m edumatcher.grading.decoy_cost", description=__doc__.split("\n")[0])
    parser.add_argument("sources", nargs="*", type=Path, help="exercise sources (default: the toy exercise)")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args(argv)
    for source in args.sources or [_TOY]:
        exercise = load_exercise(source)
        with tempfile.TemporaryDirectory(prefix="edumatcher-decoy-cost-") as tmp:
            submission = Path(tmp) / "student" / f"{exercise.name}.ipynb"
            submission.parent.mkdir()
            shutil.copyfile(source, submission)
            seconds: dict[bool, list[float]] = {True: [], False: []}
            for round_number in range(args.rounds):
                for twins in (True, False) if round_number % 2 == 0 else (False, True):
                    started = time.perf_counter()
                    result = grade_one(exercise, submission, decoys=twins)
                    seconds[twins].append(time.perf_counter() - started)
                    if result.status != "graded" or result.total != result.max_points:
                        print(f"{exercise.name}: the solution scored {result.total:g}/{result.max_points:g} "
                              f"({result.status}: {result.reason})")
                        return 1
        ratios = [a / b for a, b in zip(seconds[True], seconds[False], strict=True)]
        print(f"{exercise.name}: with twins {statistics.median(seconds[True]):.1f} s, without "
              f"{statistics.median(seconds[False]):.1f} s; ratio median {statistics.median(ratios):.2f} "
              f"(min {min(ratios):.2f}, max {max(ratios):.2f}, {args.rounds} rounds)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
