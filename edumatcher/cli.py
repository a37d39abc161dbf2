"""The ``edumatcher`` command line: a thin layer over the library.

Each subcommand lives in the module that does its work and registers itself
here: ``bench.add_bench_parser``, ``grading.cli.add_parsers``, ``verdict_check.add_parser`` and ``versions.add_parser``. Library errors that
are the user's mistake (``CliError``) become one ``Error: ...`` line and exit 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["CliError", "build_parser", "main"]


class CliError(Exception):
    """A mistake the user can fix; printed as one line, exit code 1."""


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser with every subcommand registered."""
    from . import bench, verdict_check, versions
    from .grading import cli as grading_cli

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
