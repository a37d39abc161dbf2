"""Readers for the standard tools' raw output: pstats, line_profiler, tracemalloc and dis.

Chapter 11 runs each tool on the engine in plain sight (the tool's own API, in the
cell); these helpers only turn what the tool returns into a short table, or pick
out the one fact a cell prints:

* ``pstats_text``: ``pstats.Stats.print_stats`` (or ``print_callers``) captured
  as a string, directories stripped, cut to the rows asked for.
* ``line_rows``: line_profiler's timings of one function as rows (line, hits,
  share of the function's time, time per hit, the source line), slowest first.
* ``allocation_rows``: a tracemalloc ``compare_to`` diff restricted to this
  package, as rows (file:line, bytes and blocks per message, the source line).
* ``specialisations`` and friends: what ``dis`` shows about the specialising
  interpreter of CPython 3.11+ (``dis.get_instructions(f, adaptive=True)``), and
  the constants the compiler folded.

>>> def ended(status):
...     return status in {"FILLED", "CANCELLED"}
>>> folded_frozensets(ended) == [frozenset({"FILLED", "CANCELLED"})]
True
"""

from __future__ import annotations

import dis
import io
import linecache
import os
import pstats
import sys
import tracemalloc
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import CodeType
from typing import Any

from edumatcher.kit.side_by_side import SideBySide, side_by_side

__all__ = [
    "ADAPTIVE_DIS", "pstats_text", "LineRow", "line_rows", "line_table", "AllocationRow", "allocation_rows",
    "allocation_table", "package_filters", "opnames", "specialisations", "dis_text", "folded_frozensets",
    "loop_loads",
]

ADAPTIVE_DIS = sys.version_info >= (3, 11)
"""Whether ``dis`` can show specialised instructions (``adaptive=True``): CPython 3.11 and later."""

_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
"""The ``edumatcher`` package's folder (this file is ``edumatcher/chapters/the_standard_tools/tools.py``)."""


# --- pstats ------------------------------------------------------------------------------

def pstats_text(stats: pstats.Stats, sort: str = "tottime", rows: int = 10, *, callers_of: str | None = None) -> str:
    """``stats.print_stats(rows)`` sorted by ``sort`` (or ``print_callers(callers_of)``), as text.

    Directories are stripped (``strip_dirs``) on a copy, so ``stats`` keeps its paths.
    """
    out = io.StringIO()
    copy = pstats.Stats(stream=out)
    copy.add(stats)  # a copy: strip_dirs rewrites the table in place
    copy.strip_dirs().sort_stats(sort)
    if callers_of is None:
        copy.print_stats(rows)
    else:
        copy.print_callers(callers_of)
    lines = out.getvalue().splitlines()
    # pstats opens with blank lines and a "Ordered by" header; keep everything from the header on.
    start = next((i for i, line in enumerate(lines) if line.strip()), 0)
    return "\n".join(line.rstrip() for line in lines[start:]).rstrip()


# --- line_profiler -----------------------------------------------------------------------

@dataclass(frozen=True)
class LineRow:
    """One line of a line-profiled function: its number, hits, share of the function's time, ns per hit, text."""

    line: int
    hits: int
    share: float
    ns_per_hit: float
    source: str


def line_rows(timings: dict[Any, Sequence[tuple[int, int, int]]], unit: float, function: str) -> list[LineRow]:
    """Rows for ``function`` from ``LineProfiler.get_stats()`` (``.timings``, ``.unit``), slowest line first.

    ``timings`` maps ``(file, first line, name)`` to ``(line, hits, time in units)``
    triples; ``function`` is matched against the name or the end of the qualified
    name (``"_on_order_new"`` finds ``"Engine._on_order_new"``).
    """
    for (filename, _first, name), entries in timings.items():
        # line_profiler 4 names a method by its name, 5 by its qualified name.
        if (name == function or name.endswith("." + function)) and entries:
            total = sum(t for _, _, t in entries) or 1
            rows = [
                LineRow(line, hits, t / total, t * unit * 1e9 / hits if hits else 0.0,
                        linecache.getline(filename, line).strip())
                for line, hits, t in entries
            ]
            return sorted(rows, key=lambda r: r.share, reverse=True)
    raise KeyError(f"{function!r} was not profiled (did it run while the profiler was enabled?)")


def line_table(rows: Sequence[LineRow], top: int = 8) -> SideBySide:
    """The ``top`` slowest lines as a table."""
    return side_by_side(
        ["line", "hits", "share of function", "ns per hit", "code"],
        [(str(r.line), f"{r.hits:,}", f"{r.share * 100:.1f} %", f"{r.ns_per_hit:,.0f}", r.source[:70])
         for r in rows[:top]],
        note=("Times include line_profiler's own cost on every line run while it is enabled, in the named function "
              "and in everything it calls: a line that calls into much code is inflated most."),
    )


# --- tracemalloc -------------------------------------------------------------------------

def package_filters() -> list[tracemalloc.Filter]:
    """Keep only allocations made by this package's files (the generated message builders included)."""
    return [tracemalloc.Filter(True, os.path.join(_PACKAGE, "*")), tracemalloc.Filter(True, "<edumatcher*")]


@dataclass(frozen=True)
class AllocationRow:
    """One allocation site of a snapshot diff: where, bytes and blocks gained per message, its source line."""

    site: str
    bytes_per_message: float
    blocks_per_message: float
    source: str


def allocation_rows(diff: Sequence[tracemalloc.StatisticDiff], messages: int) -> list[AllocationRow]:
    """Rows of a ``Snapshot.compare_to(old, "lineno")`` diff, per message, biggest growth first."""
    if messages <= 0:
        raise ValueError("messages must be positive")
    rows = []
    for stat in diff:
        frame = stat.traceback[0]
        where = "generated builder" if frame.filename.startswith("<") else os.path.relpath(frame.filename, _PACKAGE)
        rows.append(AllocationRow(f"{where}:{frame.lineno}", stat.size_diff / messages, stat.count_diff / messages,
                                  linecache.getline(frame.filename, frame.lineno).strip()))
    return sorted(rows, key=lambda r: r.bytes_per_message, reverse=True)


def allocation_table(rows: Sequence[AllocationRow], top: int = 8) -> SideBySide:
    """The ``top`` sites that kept the most memory, per message handled."""
    return side_by_side(
        ["site", "bytes kept / message", "blocks / message", "code"],
        [(r.site, f"{r.bytes_per_message:,.1f}", f"{r.blocks_per_message:.3f}", r.source[:70]) for r in rows[:top]],
        note="Memory still allocated at the second snapshot and not at the first: what the messages left behind "
             "(resting orders, index entries). Temporaries freed before the snapshot do not appear.",
    )


# --- dis ---------------------------------------------------------------------------------

def _code(f: Callable[..., Any] | CodeType) -> CodeType:
    return f if isinstance(f, CodeType) else f.__code__  # type: ignore[union-attr]


def opnames(f: Callable[..., Any] | CodeType, *, adaptive: bool = False) -> list[str]:
    """The instruction names of ``f``, specialised ones if ``adaptive`` (3.11+; ignored before)."""
    if adaptive and ADAPTIVE_DIS:
        return [i.opname for i in dis.get_instructions(f, adaptive=True)]  # type: ignore[call-arg]
    return [i.opname for i in dis.get_instructions(f)]


def specialisations(f: Callable[..., Any]) -> Counter[tuple[str, str]]:
    """How often each generic instruction of ``f`` is now a specialised one: ``{(generic, specialised): n}``.

    Empty before 3.11 (no specialising interpreter) and before ``f`` has run
    enough times to warm up. Instructions are paired by offset.
    """
    if not ADAPTIVE_DIS:
        return Counter()
    generic = {i.offset: i.opname for i in dis.get_instructions(f)}
    found: Counter[tuple[str, str]] = Counter()
    for ins in dis.get_instructions(f, adaptive=True):  # type: ignore[call-arg]
        base = generic.get(ins.offset)
        # 3.11's *_ADAPTIVE (still counting towards a decision) and *_QUICK (a cheaper form of
        # the same thing, whatever the types) are not specialisations for a type.
        if base is not None and ins.opname != base and not ins.opname.endswith(("_ADAPTIVE", "_QUICK")):
            found[(base, ins.opname)] += 1
    return found


def dis_text(f: Callable[..., Any], *, adaptive: bool = False, only: Sequence[str] = ()) -> str:
    """``dis.dis(f)`` as text (``adaptive=True`` on 3.11+), optionally only lines naming one of ``only``."""
    out = io.StringIO()
    if adaptive and ADAPTIVE_DIS:
        dis.dis(f, file=out, adaptive=True)  # type: ignore[call-arg]
    else:
        dis.dis(f, file=out)
    lines = out.getvalue().rstrip().splitlines()
    if only:
        lines = [line for line in lines if any(name in line for name in only)]
    return "\n".join(line.rstrip() for line in lines)


def folded_frozensets(f: Callable[..., Any] | CodeType) -> list[frozenset[Any]]:
    """The frozenset constants in ``f``'s code object: set displays of constants the compiler folded."""
    return [c for c in _code(f).co_consts if isinstance(c, frozenset)]


def loop_loads(f: Callable[..., Any]) -> Counter[str]:
    """How many ``LOAD_ATTR*`` and ``LOAD_FAST*`` instructions sit inside ``f``'s first ``for`` loop (generic names).

    The loop body is everything from the first ``FOR_ITER`` to the backward jump
    that returns to it (``JUMP_BACKWARD`` on 3.11+, ``JUMP_ABSOLUTE`` on 3.10): the
    instructions executed on every pass. On 3.13 a pair of local reads can be one
    ``LOAD_FAST_LOAD_FAST`` instruction; it counts once.

    >>> def g(o, n):
    ...     a = o.x
    ...     for _ in range(n):
    ...         a += o.y
    ...     return a
    >>> loop_loads(g)["LOAD_ATTR"]
    1
    """
    ins = list(dis.get_instructions(f))
    start = next((i for i, x in enumerate(ins) if x.opname == "FOR_ITER"), None)
    if start is None:
        raise ValueError(f"{getattr(f, '__name__', f)!r} has no for loop")
    head = ins[start].offset
    end = max(i for i, x in enumerate(ins)
              if x.opname.startswith(("JUMP_BACKWARD", "JUMP_ABSOLUTE")) and x.argval <= head)
    return Counter("LOAD_ATTR" if x.opname.startswith("LOAD_ATTR") else "LOAD_FAST"
                   for x in ins[start:end] if x.opname.startswith(("LOAD_ATTR", "LOAD_FAST")))
