"""Profile the engine's message path with ``cProfile`` and read the result as a table.

``profile_message_path`` runs ``Engine.handle`` over a list of payloads under the
deterministic profiler and returns a ``ProfileReport``: one row per function,
sorted by *own time* (``tottime``: time spent in the function's own code, not in
what it calls), with its share of the total and its calls per message. The
report renders as HTML in Jupyter and as aligned text elsewhere, so the chapter
needs no dataframe library.

Profiling has a cost of its own: every call and return is intercepted, which
inflates functions that make many small calls. Shares are comparable with each
other; absolute times are not the engine's real speed.

>>> from edumatcher.workloads import standard
>>> from edumatcher.kit.message_path import encode_workload
>>> report = profile_message_path(encode_workload(standard(200, seed=1)))
>>> report.messages, 0 < report.rows[0].own_share <= 1
(200, True)
"""

from __future__ import annotations

import cProfile
import html
import os
import pstats
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import CodeType
from typing import TypeVar

from edumatcher.kit.message_path import fresh_engine
from edumatcher.kit.side_by_side import QUOTED_000, SideBySide, measured_here, side_by_side

__all__ = [
    "ProfileRow", "ProfileReport", "profile_message_path", "report_from_stats", "function_label", "ONE_PERCENT",
    "SEED_PROFILE", "profile_beside_seed", "HARNESS_FUNCTIONS", "HARNESS_FRAMES", "is_harness", "without_harness",
]

ONE_PERCENT = 0.01
"""The gate of the Python engine notes' first rule: a target below this share of wall time is left alone."""


def function_label(key: tuple[str, int, str]) -> str:
    """A short name for a pstats key ``(file, line, function)``.

    >>> function_label(("/x/edumatcher/book.py", 12, "submit"))
    'book.py:12 submit'
    >>> function_label(("<edumatcher.messages order.new orjson 3.13.0>", 53, "check_order_new"))
    'messages (generated) check_order_new'
    >>> function_label(("~", 0, "<method 'get' of 'dict' objects>"))
    "<method 'get' of 'dict' objects>"
    """
    filename, line, name = key
    if filename == "~" or not filename:
        return name  # a built-in: the name says it all
    if filename.startswith("<edumatcher.messages"):
        return f"messages (generated) {name}"  # builders exec'd from the spec have a synthetic file name
    return f"{os.path.basename(filename)}:{line} {name}"


@dataclass(frozen=True)
class ProfileRow:
    """One function of the profile: calls, own and cumulative seconds, own share of the total."""

    function: str
    calls: int
    calls_per_message: float
    own_seconds: float
    cumulative_seconds: float
    own_share: float


@dataclass(frozen=True)
class ProfileReport:
    """A whole profile: rows sorted by own time, the total own time and the message count."""

    rows: tuple[ProfileRow, ...]
    total_seconds: float
    messages: int

    def top(self, n: int = 10) -> ProfileReport:
        """The same report cut to its first ``n`` rows (the total stays the whole profile's)."""
        return ProfileReport(self.rows[:n], self.total_seconds, self.messages)

    def above(self, share: float = ONE_PERCENT) -> list[ProfileRow]:
        """Rows whose own share is at least ``share`` (the 1 % rule's candidates)."""
        return [r for r in self.rows if r.own_share >= share]

    @property
    def largest_share(self) -> float:
        """The biggest own-time share of any single function."""
        return self.rows[0].own_share if self.rows else 0.0

    def dominance_sentence(self) -> str:
        """Whether one function dominates this profile, in a sentence computed from it.

        "Dominates" means half of all own time or more: then optimising that one
        function is the whole story. Below that, the time is spread out.
        """
        if not self.rows:
            return "The profile is empty."
        top = self.rows[0]
        gate = len(self.above())
        if top.own_share >= 0.5:
            return (f"One function dominates: {top.function} holds {top.own_share * 100:.1f} % of own time. "
                    "Optimise it first; nothing else can matter as much.")
        return (f"No single function dominates: the largest own-time share is {top.own_share * 100:.1f} % "
                f"({top.function}), and {gate} functions each hold at least 1 %. The time is a long "
                "checklist of cheap steps, so every improvement here will be individually small.")

    def _table(self) -> list[list[str]]:
        return [
            [r.function, f"{r.own_share * 100:.1f} %", f"{r.calls:,}", f"{r.calls_per_message:.2f}",
             f"{r.own_seconds * 1e3:.2f}", f"{r.cumulative_seconds * 1e3:.2f}"]
            for r in self.rows
        ]

    _HEAD = ("function", "own share", "calls", "calls / message", "own ms", "cumulative ms")

    def __str__(self) -> str:
        rows = [list(self._HEAD)] + self._table()
        widths = [max(len(row[i]) for row in rows) for i in range(len(self._HEAD))]
        lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))) for row in rows]
        lines.append(f"{self.messages:,} messages; total own time {self.total_seconds * 1e3:.1f} ms (under the profiler)")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        esc = html.escape
        head = "".join(f"<th>{esc(h)}</th>" for h in self._HEAD)
        body = "".join(
            "<tr>" + "".join(
                f"<td style='text-align:{'left' if i == 0 else 'right'};font-family:monospace'>{esc(c)}</td>"
                for i, c in enumerate(row)) + "</tr>"
            for row in self._table()
        )
        foot = (f"{self.messages:,} messages; total own time {self.total_seconds * 1e3:.1f} ms "
                "(under the profiler, which inflates call-heavy code)")
        return f"<div><table><tr>{head}</tr>{body}</table><p style='font-size:smaller'>{esc(foot)}</p></div>"


HARNESS_FUNCTIONS = frozenset({"_run_all", "<module>", "<method 'disable' of '_lsprof.Profiler' objects>"})
"""Names of pstats entries that belong to the profiling harness, not to the engine: the driver loop
of ``profile_message_path``, a loop written at the top level of a notebook cell or script
(``<module>``) between ``enable()`` and ``disable()``, and the profiler's own switch-off call."""

Key = tuple[str, int, str]
_V = TypeVar("_V")


def _key(code: CodeType) -> Key:
    # cProfile names a Python function by its code object: (co_filename, co_firstlineno, co_name).
    return (code.co_filename, code.co_firstlineno, code.co_name)


def _clock_code() -> CodeType:
    # The constant clock ``fresh_engine`` hands every engine (``lambda: 1``), found in its code
    # rather than by file name and line, so the key follows the module wherever it lives.
    return next(c for c in fresh_engine.__code__.co_consts if isinstance(c, CodeType) and c.co_name == "<lambda>")


def _run_all(engine: object, payloads: Sequence[bytes]) -> None:
    handle = engine.handle  # type: ignore[attr-defined]
    for payload in payloads:
        handle(payload)


HARNESS_FRAMES: frozenset[Key] = frozenset({_key(_clock_code()), _key(_run_all.__code__)})
"""pstats keys ``(file, line, function)`` of the harness's own Python functions, matched by module
*and* function: the stand-in clock of ``message_path.fresh_engine`` (a ``lambda`` the engine calls once
per message; its own time is the profiler's per-call cost plus whatever preemption lands in it, a
measuring artefact) and ``profile_message_path``'s driver loop. Another module's ``<lambda>`` is kept."""


def is_harness(key: Key, leave_out: Collection[str | Key] = HARNESS_FUNCTIONS | HARNESS_FRAMES) -> bool:
    """Whether the pstats ``key`` is the harness's: its whole key, or its function name, is in ``leave_out``.

    >>> is_harness(("~", 0, "<method 'disable' of '_lsprof.Profiler' objects>"))
    True
    >>> is_harness(_key(_clock_code())), is_harness(("/x/edumatcher/engine.py", 1, "<lambda>"))
    (True, False)
    """
    return key in leave_out or key[2] in leave_out


def without_harness(stats: Mapping[Key, _V], also: Iterable[str] = ()) -> dict[Key, _V]:
    """A ``pstats.Stats(...).stats`` mapping without the harness's entries (``is_harness``). O(functions).

    ``also`` names more functions to leave out, such as a notebook's own driver loop.
    """
    leave_out = HARNESS_FUNCTIONS | HARNESS_FRAMES | frozenset(also)
    return {key: value for key, value in stats.items() if not is_harness(key, leave_out)}


def report_from_stats(
    stats: pstats.Stats, messages: int, *,
    leave_out: Collection[str | Key] = HARNESS_FUNCTIONS | HARNESS_FRAMES,
) -> ProfileReport:
    """Read a ``pstats.Stats`` as a ``ProfileReport``: one row per function, sorted by own time. O(functions).

    ``messages`` is how many messages the profiled code handled (for calls per message).
    Entries that ``is_harness`` finds in ``leave_out`` (by function name, or by whole key
    for the harness's own functions: a driver loop, the stand-in clock, the profiler's
    ``disable``) are dropped from the rows and from the total. Calls are primitive calls
    (pstats' ``cc``: a recursive call is not counted again).
    """
    if messages < 1:
        raise ValueError(f"messages must be at least 1, not {messages!r}")
    entries = []
    for key, (primitive_calls, _calls, own, cumulative, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if is_harness(key, leave_out):
            continue
        entries.append((key, primitive_calls, own, cumulative))
    total = sum(own for _, _, own, _ in entries) or 1e-12
    rows = sorted(
        (ProfileRow(function_label(key), calls, calls / messages, own, cumulative, own / total)
         for key, calls, own, cumulative in entries),
        key=lambda r: r.own_seconds, reverse=True,
    )
    return ProfileReport(tuple(rows), total, messages)


def profile_message_path(payloads: Sequence[bytes]) -> ProfileReport:
    """Profile ``Engine.handle`` over ``payloads`` on a fresh engine; rows sorted by own time. O(n).

    The driver loop itself (``_run_all``) is left out of the rows and the total:
    it is the profiler's harness, not the engine. Chapter 01 writes the same
    profile out in a cell (``cProfile.Profile``, ``enable``/``disable``) and reads
    it with ``report_from_stats``.
    """
    if not payloads:
        raise ValueError("profile_message_path needs at least one payload")
    engine = fresh_engine()
    profiler = cProfile.Profile()
    profiler.runcall(_run_all, engine, payloads)
    return report_from_stats(pstats.Stats(profiler), len(payloads))


SEED_PROFILE: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("_handle_new_order, its own bytecode", "28 %", "1", ("_on_order_new",)),
    ("dict.get", "7.5 %", "28.8", ("<method 'get' of 'dict' objects>",)),
    ("Order.from_dict", "7.2 %", "1", (" from_dict",)),
    ("_apply_fill", "3.4 %", "0.5", ()),
    ("_update_position", "3.2 %", "1", ()),
    ("_publish_trade", "2.9 %", "0.5", (" _event_frames",)),
    ("from_ticks", "2.8 %", "2.5", (" from_ticks", " to_ticks")),
    ("orjson.dumps", "2.2 %", "2.5", ("<built-in method orjson.dumps>", "<orjson.dumps>")),
    # enum.py's descriptor only: a bare " __get__" also matched other libraries' descriptors.
    ("enum.__get__ (the .value descriptor)", "1.9 %", "3.5", ("enum.py:",)),
    ("logging.isEnabledFor", "1.4 %", "5.5", ()),
)
"""The Python engine notes' profile of 20 000 orders (quoted, CPython 3.14): component, share, calls per order,
and the names under which the nearest function of this engine appears in our profile (if any)."""


def profile_beside_seed(report: ProfileReport) -> SideBySide:
    """The Python engine notes' quoted profile, each row followed by this engine's nearest function, measured here.

    This engine is not the notes' (no positions, no logging on the message path),
    so some rows have no counterpart; they say so instead of borrowing a number.
    """
    here = measured_here()
    rows = []
    for component, share, calls, ours in SEED_PROFILE:
        rows.append((component, QUOTED_000, share, calls))
        match = next((r for r in report.rows if any(name in r.function for name in ours)), None) if ours else None
        if match is None:
            rows.append(("  (no counterpart in this engine)", here, "—", "—"))
        else:
            rows.append((f"  {match.function}", here, f"{match.own_share * 100:.1f} %",
                         f"{match.calls_per_message:.2f} per message"))
    return side_by_side(["component", "source", "own share", "calls per order"], rows,
                        note=f"Ours: {report.messages:,} messages of a mixed flow (not only new orders); "
                             "shares are of own time under cProfile.")
