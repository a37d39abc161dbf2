"""Readers for the standard tools' raw output: pstats, line_profiler, tracemalloc and dis.

Chapter 02 runs each tool on the engine in plain sight (the tool's own API, in the
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
import re
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
    "loop_loads", "profiler_self_shares", "sampler_self_shares", "SharesCompared", "compare_self_shares",
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


# --- cProfile beside py-spy ----------------------------------------------------------------

_SPY_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def _where(file: str, line: int | str, name: str) -> str:
    # One label for a Python function under both tools: py-spy's --function frames carry the
    # function's first line, as cProfile's keys do; py-spy's qualified name is cut to cProfile's.
    place = "generated" if file.startswith("<") else file.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name.rsplit('.', 1)[-1]} ({place}:{line})"


def _c_function(key: tuple[str, int, str]) -> bool:
    return key[0] == "~"  # pstats files built-ins (C functions and methods) under "~"


def profiler_self_shares(stats: dict[Any, Any], *, fold_c: bool,
                         also_leave_out: Sequence[str] = ("run_all", "<lambda>")) -> dict[str, float]:
    """Own-time shares of a ``pstats.Stats(...).stats`` mapping, the harness left out. O(functions + edges).

    ``fold_c=False``: as pstats shows them, every C function its own entry (labelled by
    its name). ``fold_c=True``: each C function's own time is added to the Python
    functions that called it, pair by pair (cProfile records the callee's own time
    per caller), which is what a sampler without native frames sees. Left out: the
    harness (``profiling.is_harness``) and functions named in ``also_leave_out`` (a
    notebook's driver loop, the engines' stand-in clocks).
    """
    from edumatcher.chapters.where_the_time_goes.profiling import HARNESS_FRAMES, HARNESS_FUNCTIONS, is_harness

    leave = HARNESS_FUNCTIONS | HARNESS_FRAMES | frozenset(also_leave_out)
    own: Counter[str] = Counter()
    for key, (_cc, _nc, tottime, _ct, callers) in stats.items():
        if is_harness(key, leave):
            continue
        if not _c_function(key):
            own[_where(*key)] += tottime
        elif not fold_c:
            own[key[2]] += tottime
        else:
            for caller, edge in callers.items():
                if not is_harness(caller, leave) and not _c_function(caller):
                    own[_where(*caller)] += edge[2]
    total = sum(own.values())
    return {name: t / total for name, t in own.items()} if total > 0 else {}


def sampler_self_shares(folded: Sequence[str], under: str = "handle", under_file: str = "engine.py",
                        also_leave_out: Sequence[str] = ("<lambda>",)) -> tuple[dict[str, float], int]:
    """Self-sample shares per Python function from py-spy's folded stacks, below the frame ``under``; and the samples.

    A sample's *self* function is its innermost frame; without ``--native`` that is a
    Python function, charged also for any C function it was running. Only stacks that
    pass through ``under`` (in a file ending ``under_file``) count; a self function
    named in ``also_leave_out`` (a stand-in clock) is left out.
    """
    counts: Counter[str] = Counter()
    for line in folded:
        stack, _, count = line.strip().rpartition(" ")
        frames = [_SPY_FRAME.match(f) for f in stack.split(";")]
        if not any(m and m["func"].rsplit(".", 1)[-1] == under and m["file"].endswith(under_file) for m in frames):
            continue
        leaf = frames[-1]
        if leaf is None or leaf["func"].rsplit(".", 1)[-1] in also_leave_out:
            continue
        counts[_where(leaf["file"], leaf["line"] or 0, leaf["func"])] += int(count)
    samples = sum(counts.values())
    return ({name: c / samples for name, c in counts.items()} if samples else {}), samples


def _apart(p: dict[str, float], q: dict[str, float]) -> float:
    # total variation distance: the share of time the two would have to move to agree
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q))


@dataclass(frozen=True)
class SharesCompared:
    """cProfile's own-time shares, as shown and with C callees folded, beside py-spy's self samples."""

    as_shown: dict[str, float]
    folded: dict[str, float]
    sampled: dict[str, float]
    samples: int

    @property
    def apart_as_shown(self) -> float:
        """How far apart pstats' shares and py-spy's are: half the sum of their differences (0 = equal, 1 = disjoint)."""
        return _apart(self.as_shown, self.sampled)

    @property
    def apart_folded(self) -> float:
        """The same distance once every C function is folded into its Python caller: like compared with like."""
        return _apart(self.folded, self.sampled)

    def table(self, top: int = 10) -> SideBySide:
        """The ``top`` functions by py-spy's share, then the C functions pstats lists on their own."""
        names = sorted(self.sampled, key=lambda k: -self.sampled[k])[:top]
        c_names = sorted((k for k in self.as_shown if k not in self.folded), key=lambda k: -self.as_shown[k])[:4]

        def pct(d: dict[str, float], k: str) -> str:
            return f"{d[k] * 100:.1f} %" if k in d else "—"

        rows = [(k, pct(self.as_shown, k), pct(self.folded, k), pct(self.sampled, k)) for k in names]
        rows += [(k[:60], pct(self.as_shown, k), "folded in", "folded in") for k in c_names]
        return side_by_side(["function", "cProfile, as pstats shows it", "cProfile, C folded into callers",
                             f"py-spy ({self.samples:,} samples)"], rows,
                            note="Own time for cProfile, self samples for py-spy, below Engine.handle; "
                                 "the harness (driver loop, stand-in clock) left out.")

    def sentence(self) -> str:
        """What the two distances say, worded from them."""
        shown, folded = self.apart_as_shown * 100, self.apart_folded * 100
        head = (f"cProfile's shares as pstats shows them are {shown:.0f} points apart from py-spy's; "
                f"with C functions folded into their callers, {folded:.0f}.")
        if folded < shown:
            return (head + f" Folding closes {shown - folded:.0f} of them: that part was structural. The rest is "
                    f"cProfile's per-call cost and noise (py-spy's {self.samples:,} samples, a busy machine's clock).")
        return head + (" Folding does not bring them closer here: the gap is cProfile's per-call cost and noise "
                       f"(py-spy's {self.samples:,} samples, a busy machine's clock).")


def compare_self_shares(stats: dict[Any, Any], folded: Sequence[str]) -> SharesCompared:
    """cProfile's ``stats`` (a ``pstats.Stats(...).stats``) beside py-spy's ``folded`` stacks, like with like."""
    sampled, samples = sampler_self_shares(folded)
    return SharesCompared(profiler_self_shares(stats, fold_c=False), profiler_self_shares(stats, fold_c=True),
                          sampled, samples)


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
