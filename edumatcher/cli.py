"""The ``edumatcher`` command line: a thin layer over the library.

Each subcommand lives in the module that does its work and registers itself
here: ``benchmarks.cli.add_bench_parser``, ``grading.cli.add_parsers``, ``kit.verdict_check.add_parser`` and
``kit.versions.add_parser``. Library errors that are the user's mistake (``CliError``, defined at the package's
root so that those modules need not import this one) become one ``Error: ...`` line and exit 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import CliError

__all__ = ["CliError", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser with every subcommand registered."""
    from .benchmarks import cli as bench
    from .grading import cli as grading_cli
    from .kit import verdict_check, versions

    parser = argparse.ArgumentParser(
        prog="python -m edumatcher",
        description="EduMatcher: a teaching order-matching engine, its benchmarks and the course's grading tools.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    bench.add_bench_parser(sub)
    grading_cli.add_parsers(sub)
    verdict_check.add_parser(sub)
    versions.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130
