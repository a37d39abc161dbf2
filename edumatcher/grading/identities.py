"""One student, one name: spellings that differ only in case, Unicode form or spaces are one student.

A roster typed on one machine says ``Zoë`` (NFC: one code point for ë) while the folder unzipped on a
Mac is ``Zoë`` (NFD: e + a combining diaeresis); a roster says ``Ann Lee`` and the folder ``ann  lee``.
Compared exactly, each becomes two students: one graded, one ``not-submitted``. Here every name has
a **key** (Unicode NFC, case folded, runs of spaces made one, ends trimmed), and each key one
**spelling**: the roster's when the roster has it, else the one the gradebook already holds, else
the first folder's (NFC). Every merge is said once in the terminal (``Unified.warnings``).
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .submissions import Submission

__all__ = ["name_key", "Unified", "unify_students", "unique_roster"]


def name_key(name: str) -> str:
    """The form two spellings of one student share.

    >>> name_key("  Zoe\\u0308  LEE ") == name_key("zoë lee")
    True
    """
    folded = unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())
    return " ".join(folded.split())


@dataclass
class Unified:
    """Submissions under one spelling per student, the old spelling of each renamed one, and what to say."""

    submissions: list[Submission]
    renamed: dict[str, str] = field(default_factory=dict)  # spelling seen -> spelling kept
    warnings: list[str] = field(default_factory=list)


def unique_roster(roster: Sequence[str]) -> tuple[list[str], list[str]]:
    """The roster with one entry per student (first spelling kept), and a warning per dropped duplicate."""
    kept: dict[str, str] = {}
    warnings = []
    for name in roster:
        key = name_key(name)
        if key in kept:
            if kept[key] != name:
                warnings.append(f"roster: {name!r} is {kept[key]!r} written differently ({_how(name, kept[key])}); "
                                f"listed once, as {kept[key]!r}")
            continue
        kept[key] = name
    return list(kept.values()), warnings


def unify_students(submissions: Iterable[Submission], roster: Sequence[str] = (),
                   recorded: Iterable[str] = ()) -> Unified:
    """Give every student one spelling (see the module docstring); two files of one student and exercise
    that end up under one name are settled as ``discover_submissions`` settles copies: the newest is graded.

    ``recorded`` are the students the gradebook already has rows for.
    """
    spelling: dict[str, str] = {}
    for name in roster:
        spelling.setdefault(name_key(name), name)
    for name in recorded:
        spelling.setdefault(name_key(name), name)
    items = sorted(submissions, key=lambda s: (s.student, s.exercise, str(s.path)))
    for item in items:
        spelling.setdefault(name_key(item.student), unicodedata.normalize("NFC", item.student))
    renamed: dict[str, str] = {}
    by_row: dict[tuple[str, str], list[Submission]] = {}
    for item in items:
        kept = spelling[name_key(item.student)]
        if kept != item.student:
            renamed[item.student] = kept
        by_row.setdefault((kept, item.exercise), []).append(dataclasses.replace(item, student=kept))
    for name in recorded:
        kept = spelling[name_key(name)]
        if kept != name:
            renamed[name] = kept
    result = Unified([_newest(group) for group in by_row.values()], renamed)
    roster_keys = {name_key(name) for name in roster}
    for seen, kept in sorted(renamed.items()):
        whose = "the roster's" if name_key(kept) in roster_keys else "the same student as"
        result.warnings.append(f"student names: {seen!r} is {whose} {kept!r} ({_how(seen, kept)}); graded as {kept!r}")
    return result


def _newest(group: list[Submission]) -> Submission:
    if len(group) == 1:
        return group[0]

    def modified(item: Submission) -> int:
        try:
            return item.path.lstat().st_mtime_ns
        except OSError:
            return 0

    ordered = sorted(group, key=modified, reverse=True)
    chosen, older = ordered[0], ordered[1:]
    paths = tuple(chosen.superseded) + tuple(p for item in older for p in (item.path, *item.superseded))
    extra = "newest of several files of one student under different spellings; not graded: " + ", ".join(
        repr(p.name) for p in paths[:3]) + (" ..." if len(paths) > 3 else "")
    note = f"{chosen.note}; {extra}" if chosen.note else extra
    return dataclasses.replace(chosen, note=note, superseded=paths)


def _how(one: str, other: str) -> str:
    """What differs between two spellings of one key: the Unicode form, spaces, case (in that order)."""
    ways = []
    for way, fold in (("Unicode form", lambda text: unicodedata.normalize("NFC", text)),
                      ("spaces", lambda text: " ".join(text.split())),
                      ("case", str.casefold)):
        if one == other:
            break
        folded = fold(one), fold(other)
        if folded != (one, other):
            ways.append(way)
            one, other = folded
    return ", ".join(ways) or "case"
