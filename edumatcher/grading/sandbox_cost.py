"""What the grading sandbox costs: one class graded with ``--sandbox bwrap`` and ``none``, back to back.

``python -m edumatcher.grading.sandbox_cost [--students 20] [--rounds 2] [--jobs 2] [SOURCE.ipynb ...]``

Builds a class in a temporary folder: each student submits, for every SOURCE (default: the toy
exercise of the grading tests), the blank student copy or the solution, alternately. Each round
grades the whole class once per mode, the order of the two modes swapped from one round to the
next (so neither always runs on a warmer machine), and prints the wall time of each run, the
ratio bwrap / none of each round and the spread of those ratios. Nothing here is a fixed number:
every figure printed is measured by this run.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from .exercise import load_exercise
from .notebook_cells import notebook_text
from .release import release_notebook
from .sandbox import SandboxUnavailable, resolve_sandbox
from .submissions import Submission
from .supervise import grade_submissions

__all__ = ["build_class", "main"]

_TOY = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "grading" / "solutions" / "ex_toy.ipynb"


def build_class(folder: Path, sources: list[Path], students: int) -> list[Submission]:
    """``students`` folders under ``folder``, each with the blank copy or the solution of every source."""
    submissions = []
    for number in range(students):
        student = f"student{number:03d}"
        for index, source in enumerate(sources):
            exercise = load_exercise(source)
            path = folder / student / f"{exercise.name}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            if (number + index) % 2:
                shutil.copyfile(source, path)
            else:
                path.write_text(notebook_text(release_notebook(exercise.notebook)), encoding="utf-8")
            submissions.append(Submission(path, student, exercise.name))
    return submissions


def main(argv: list[str] | None = None) -> int:
    """Grade one class under both modes ``--rounds`` times; print times and ratios."""
    parser = argparse.ArgumentParser(prog="python -m edumatcher.grading.sandbox_cost", description=__doc__.split("\n")[0])
    parser.add_argument("sources", nargs="*", type=Path, help="exercise sources (default: the toy exercise)")
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    sources = args.sources or [_TOY]
    missing = [str(s) for s in sources if not s.is_file()]
    if missing:
        parser.error(f"no such exercise source: {', '.join(missing)} (the toy exercise exists only in a checkout)")
    try:
        choice = resolve_sandbox("auto")
    except SandboxUnavailable as exc:
        print(f"nothing to compare: {exc}")
        return 1
    print(choice.describe())
    exercises = {load_exercise(s).name: load_exercise(s) for s in sources}
    with tempfile.TemporaryDirectory(prefix="edumatcher-sandbox-cost-") as tmp:
        submissions = build_class(Path(tmp), sources, args.students)
        print(f"{len(submissions)} submissions ({args.students} students x {len(sources)} exercises), "
              f"--jobs {args.jobs}, Python {platform.python_version()} ({sys.executable})")
        ratios = []
        for round_number in range(args.rounds):
            modes = ("none", "bwrap") if round_number % 2 == 0 else ("bwrap", "none")
            seconds = {}
            for mode in modes:
                started = time.perf_counter()
                results = grade_submissions(submissions, exercises, jobs=args.jobs, sandbox=mode)
                seconds[mode] = time.perf_counter() - started
                graded = sum(r.status == "graded" for r in results)
                print(f"round {round_number + 1}: {mode:5s} {seconds[mode]:7.1f} s  ({graded}/{len(results)} graded)")
            ratios.append(seconds["bwrap"] / seconds["none"])
            print(f"round {round_number + 1}: bwrap / none = {ratios[-1]:.2f}")
        spread = f" (min {min(ratios):.2f}, max {max(ratios):.2f})" if len(ratios) > 1 else ""
        print(f"median ratio bwrap / none over {len(ratios)} rounds: {statistics.median(ratios):.2f}{spread}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
