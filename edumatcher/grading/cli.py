"""The ``release`` and ``grade`` subcommands (registered by ``edumatcher.cli`` through ``add_parsers``).

Heavy imports (nbformat, nbclient) happen when a command runs, so ``--help`` works everywhere.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from edumatcher.cli import CliError

__all__ = ["add_parsers"]

_GRADE_WARNING = (
    "WARNING: student code runs UNSANDBOXED, with your user's permissions: it can read and write "
    "your files and use the network. Only the timeouts and a temporary working directory protect "
    "you. Grade untrusted submissions inside a container or a throwaway account."
)


def add_parsers(sub: Any) -> None:
    """Register ``release`` and ``grade`` on the top-level subparsers."""
    release = sub.add_parser(
        "release",
        help="write the student copies of the exercises (exercises/ from solutions/)",
        description=(
            "Write student copies of the source notebooks: answer regions become '# YOUR CODE HERE' + "
            "'raise NotImplementedError()', hidden tests are removed, outputs cleared, check cells locked "
            "and checksummed. With --check, write nothing and exit 1 listing each differing *.ipynb."
        ),
        epilog="Example: python -m edumatcher release solutions/ exercises/ --check",
    )
    release.add_argument("source", nargs="?", default="solutions", help="folder of source notebooks (default solutions)")
    release.add_argument("out", nargs="?", default="exercises", help="folder of student copies (default exercises)")
    release.add_argument("--check", action="store_true",
                         help="write nothing; exit 1 if OUT differs from what release would write")
    release.set_defaults(func=_release)

    grade = sub.add_parser(
        "grade",
        help="grade submitted notebooks: restore the checks, run, score, write a gradebook",
        description=(
            "Grade submitted notebooks (files, or folders laid out as SUBMITTED/<student>/<exercise>.ipynb). "
            "Each is matched to SOURCE/<exercise>.ipynb by file name, its check cells are restored from the "
            "source (hidden tests included), and it runs in a fresh python3 kernel in a temporary directory. "
            "Writes OUT/grades.csv, OUT/<exercise>.csv, OUT/feedback/<student>/<exercise>.md and "
            "OUT/autograded/<student>/<exercise>.ipynb. " + _GRADE_WARNING
        ),
        epilog="Example: python -m edumatcher grade submitted/ --source solutions/ --jobs 2 --cell-timeout 30",
    )
    grade.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="submitted notebook or folder of them")
    grade.add_argument("--source", default="solutions", help="folder of source notebooks (default solutions)")
    grade.add_argument("--out", default="gradebook", help="where to write the gradebook (default gradebook)")
    grade.add_argument("--jobs", type=_positive_int, default=1, help="notebooks graded at once (default 1)")
    grade.add_argument("--cell-timeout", type=_positive_int, default=60, metavar="S",
                       help="seconds one cell may run before it is interrupted (default 60)")
    grade.add_argument("--timeout", type=_positive_float, default=300.0, metavar="S",
                       help="seconds one whole notebook may take, kernel start included, before it is "
                            "killed (default 300)")
    grade.set_defaults(func=_grade)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def _release(args: argparse.Namespace) -> int:
    from .startup import avoid_slow_imports

    avoid_slow_imports()
    from .release import check_release, release_tree

    if args.check:
        differences = check_release(args.source, args.out)
        for line in differences:
            print(line)
        if differences:
            print(f"{len(differences)} file(s) differ; run: python -m edumatcher release {args.source} {args.out}",
                  file=sys.stderr)
            return 1
        print(f"{args.out} is up to date with {args.source}")
        return 0
    report = release_tree(args.source, args.out)
    for name in report.written:
        print(f"wrote {args.out}/{name}")
    for name in report.removed:
        print(f"removed {args.out}/{name} (no source)")
    print(f"{len(report.written)} written, {len(report.unchanged)} unchanged, {len(report.removed)} removed")
    return 0


def _grade(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .startup import avoid_slow_imports

    avoid_slow_imports()

    from .exercise import find_exercises
    from .report import summary_table, write_feedback, write_gradebook
    from .submissions import discover_submissions
    from .supervise import grade_submissions

    exercises = find_exercises(args.source)
    submissions, skipped = discover_submissions(args.submissions)
    if not submissions:
        raise CliError("no submissions found (expected *.ipynb files or folders of them)")
    if skipped:
        print(f"skipping {len(skipped)} file(s) that are not *.ipynb, e.g. {skipped[0]}", file=sys.stderr)
    print(_GRADE_WARNING, file=sys.stderr)
    print(f"grading {len(submissions)} submission(s) against {len(exercises)} exercise(s), {args.jobs} at a time",
          file=sys.stderr)

    def progress(done: int, total: int, result: Any) -> None:
        print(f"[{done}/{total}] {result.student}/{result.exercise}: {result.total:g}/{result.max_points:g} "
              f"{result.status} ({result.seconds:.1f} s)", file=sys.stderr, flush=True)

    out = Path(args.out)
    results = grade_submissions(submissions, exercises, jobs=args.jobs, cell_timeout=args.cell_timeout,
                                timeout=args.timeout, executed_dir=out / "autograded", progress=progress)
    write_gradebook(results, exercises, out)
    write_feedback(results, out)
    print(summary_table(results))
    print(f"gradebook: {out / 'grades.csv'} (per exercise: {out}/<exercise>.csv, feedback: {out}/feedback/)")
    return 0
