"""Measure how long each chapter takes to run, and keep the figures chapter 00 quotes.

Run it from the repository's root with the course's venv::

    .venv/bin/python tests/chapter_run_times.py            # measure every chapter, rewrite the JSON
    .venv/bin/python tests/chapter_run_times.py --print    # show the stored figures

Each chapter (``course/*.ipynb``) runs once, in a fresh kernel, with nbclient; the wall time of
the whole run is kept in ``tests/fixtures/chapter_run_times.json`` with the date, the interpreter
and the machine's CPU count and load. Chapter 00 quotes the range from that file as measured on
the course's build machine (``tests/test_chapter_run_times.py`` keeps the two in step): the figures
are a quote, not a promise about the reader's machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TIMES = REPO / "tests" / "fixtures" / "chapter_run_times.json"


def run_chapter(path: Path, timeout: float = 600) -> float:
    """Execute one chapter in a fresh ``python3`` kernel; return the wall time in seconds. Raises on an error."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    started = time.perf_counter()
    client.execute()
    return time.perf_counter() - started


def measure(chapters: list[Path]) -> dict:
    """Run every chapter once and return the record written to ``TIMES``."""
    load_before = os.getloadavg()[0]
    seconds = {}
    for path in chapters:
        seconds[path.name] = round(run_chapter(path), 1)
        print(f"{path.name}: {seconds[path.name]:.1f} s", flush=True)
    return {
        "measured": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average_1min": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> int:
    """Measure (default) or print (``--print``) the chapters' run times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print", action="store_true", help="print the stored figures, measure nothing")
    parser.add_argument("chapters", nargs="*", help="chapters to run (default: course/*.ipynb)")
    args = parser.parse_args(argv)
    if not args.print:
        chapters = [Path(c).resolve() for c in args.chapters] or sorted((REPO / "course").glob("*.ipynb"))
        TIMES.write_text(json.dumps(measure(chapters), indent=1) + "\n")
    record = json.loads(TIMES.read_text())
    for name, s in record["seconds"].items():
        print(f"{name:45} {s:6.1f} s")
    print(f"measured {record['measured']}, CPython {record['python']}, {record['cpus']} CPUs, "
          f"load {record['load_average_1min']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
