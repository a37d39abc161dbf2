"""``python -m edumatcher review``: its options and what each does (the pages in ``review``, the forms in ``review_server``).

Its own module so that ``review`` and ``review_server`` stay one-way: the server uses the pages,
and only this command line needs both.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .review import CSV_NAME, import_scores, write_review
from .review_server import serve_review

__all__ = ["add_review_parser"]


def add_review_parser(sub: Any) -> None:
    """Register ``review GRADEBOOK_DIR [--source DIR] [--import FILE.csv]`` on the top-level subparsers."""
    review = sub.add_parser(
        "review",
        help="written answers: one HTML page per exercise and a CSV of manual scores; --import stores them",
        description=(
            "Collect every student's written answers (Markdown cells graded by hand) from a gradebook that "
            "'grade' wrote: GRADEBOOK_DIR/review/<exercise>.html shows each question with all answers side by "
            f"side and their autograde score; GRADEBOOK_DIR/review/{CSV_NAME} has a row per answer to fill in "
            "(points, comment). With --import FILE.csv, check the filled rows and store them in the gradebook."
        ),
        epilog=f"Example: python -m edumatcher review gradebook/ && python -m edumatcher review gradebook/ "
               f"--import gradebook/review/{CSV_NAME}",
    )
    review.add_argument("gradebook", metavar="GRADEBOOK_DIR", help="the --out folder of 'grade'")
    review.add_argument("--source", default="solutions", help="folder of source notebooks (default solutions)")
    review.add_argument("--import", dest="import_csv", metavar="FILE.csv",
                        help="store the points filled in this CSV (written by review) in the gradebook")
    review.add_argument("--serve", action="store_true",
                        help="serve the review pages on 127.0.0.1 with a form per exercise that saves points and "
                             "comments straight into the gradebook (Ctrl-C stops)")
    review.add_argument("--port", type=int, default=0, help="with --serve: the port (default: a free one)")
    review.set_defaults(func=_review)


def _review(args: argparse.Namespace) -> int:
    from .startup import avoid_slow_imports

    avoid_slow_imports()
    if args.serve:
        serve_review(args.gradebook, args.source, args.port)
        return 0
    if args.import_csv:
        from .run_lock import RunLock

        with RunLock(args.gradebook, "review --import"):  # not while a grade run rewrites the exports
            stored, skipped = import_scores(args.gradebook, args.import_csv, args.source)
        print(f"stored {stored} manual score(s) in {Path(args.gradebook) / 'gradebook.sqlite'}"
              + (f"; {skipped} row(s) without points were left out" if skipped else ""))
        return 0
    paths = write_review(args.gradebook, args.source)
    for path in paths:
        print(f"wrote {path}")
    print(f"fill in {paths[-1]}, then: python -m edumatcher review {args.gradebook} --import {paths[-1]}",
          file=sys.stderr)
    return 0
