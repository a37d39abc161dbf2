"""Benchmarks that print figures (never assert them): ``python -m edumatcher bench NAME``.

Every benchmark runs on the one ``edumatcher.kit`` harness, compares things
measured in the same process (ratios survive a noisy shared machine), and opens
its output with the method and the interpreter.
"""

from __future__ import annotations

import sys


def say(text: str = "") -> None:
    """Print one line of a benchmark's output at once (flushed, so progress shows while it runs)."""
    print(text, flush=True)


def peak_rss_mib() -> float | None:
    """Peak resident set size of this process in MiB, or None where ``resource`` is missing (Windows)."""
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # macOS reports bytes, Linux KiB


def peak_rss_text() -> str:
    """``peak_rss_mib()`` for a benchmark's output: ``"218 MiB"``, or ``"not available on this platform"``."""
    peak = peak_rss_mib()
    return "not available on this platform" if peak is None else f"{peak:,.0f} MiB"


def resolve_repeat(repeat: int | None) -> int:
    """Return the number of timed passes for ``--repeat`` (None: ``measure.MIN_REPEAT``); refuse fewer.

    >>> resolve_repeat(None), resolve_repeat(9)
    (5, 9)
    """
    from edumatcher import CliError

    from ..kit import MIN_REPEAT

    if repeat is None:
        return MIN_REPEAT
    if repeat < MIN_REPEAT:
        raise CliError(f"--repeat {repeat} is too few: a median needs at least {MIN_REPEAT} passes (use --quick for a short run)")
    return repeat
