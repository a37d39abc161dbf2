"""Which exercise a submitted file is for, from its name, as people and LMSs really name files.

Tried in order, the first that finds a single exercise wins (``stem`` is the file name without
``.ipynb``, ``.ipynb.txt`` or ``.ipynb.json``):

1. the exact stem (``04_exact_ticks``);
2. the stem up to case, Unicode normalisation and separators (``04_Exact_Ticks``, ``04-exact-ticks``);
3. the same after removing copy marks (``name (1)``, ``name-1``, ``name copy``, ``name - Copy (2)``,
   ``name 2``, ``Copy of name``);
4. the longest exercise name that ends the stem after a separator: the prefixes LMS exports add
   (Canvas ``annlee_12345_67890_name``, ``LATE_name``, Moodle ``Ann Lee_12345_assignsubmission_file_name``,
   Blackboard ``..._attempt_2026-11-30-12-00-00_name``), with or without a copy mark.

Two exercises equally good for one file (names differing only in case or separators) leave it
unmatched, with a note naming both: guessing would grade the wrong notebook.

>>> match_exercise("04_Exact_Ticks (1)", ["04_exact_ticks", "04_slots_memory"]).describe("04_Exact_Ticks (1).ipynb")
"matched '04_Exact_Ticks (1).ipynb' to 04_exact_ticks: case, copy suffix"
>>> match_exercise("LATE_annlee_1234_04_exact_ticks", ["04_exact_ticks", "exact_ticks"]).exercise
'04_exact_ticks'
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass

__all__ = ["NameMatch", "match_exercise", "lms_student", "blackboard_head", "blackboard_students", "strip_copy_marks"]

# Each removes one copy mark from the end (or start) of a stem; group "n" is the copy number if any.
_COPY_MARKS = [
    re.compile(r"^(?P<base>.+?)\s*\((?P<n>\d{1,4})\)$"),  # name (1)  -- browsers, Finder, Windows
    re.compile(r"^(?P<base>.+?)\s*-\s*copy(?:\s*\((?P<n>\d{1,4})\))?$", re.IGNORECASE),  # name - Copy (2)
    re.compile(r"^(?P<base>.+?)[\s_-]*copy(?:[\s_-]*(?P<n>\d{1,4}))?$", re.IGNORECASE),  # name copy 2, name_copy
    re.compile(r"^(?P<base>.+?)-(?P<n>\d{1,4})$"),  # name-1  -- Canvas resubmissions
    re.compile(r"^(?P<base>.+?)\s+(?P<n>\d{1,4})$"),  # name 2  -- macOS duplicates
    re.compile(r"^copy of\s+(?P<base>.+)$", re.IGNORECASE),  # Copy of name  -- Google Drive
]
_SEPARATORS = re.compile(r"[\s._-]+")


@dataclass(frozen=True)
class NameMatch:
    """The outcome of matching one stem: the exercise (or None), how, and the copy number seen."""

    exercise: str | None
    how: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()
    copy_number: int = 0

    def describe(self, file_name: str) -> str:
        """One line for the gradebook row: how ``file_name`` was matched, or why it was not ("" if exact)."""
        if self.exercise is not None:
            return f"matched {file_name!r} to {self.exercise}: {', '.join(self.how)}" if self.how else ""
        if len(self.candidates) > 1:
            return (f"{file_name!r} could be any of {', '.join(self.candidates)}: not graded; "
                    "rename it to one exercise's name")
        return ""


def match_exercise(stem: str, exercises: Collection[str]) -> NameMatch:
    """Match a file stem to one of ``exercises`` (see the module docstring for the rules)."""
    if stem in exercises:
        return NameMatch(stem)
    base, copy_number = strip_copy_marks(stem)
    keys: dict[str, list[str]] = {}
    for name in sorted(exercises):
        keys.setdefault(_key(name), []).append(name)
    tries = [(stem, ())] + ([(base, ("copy suffix",))] if base != stem else [])
    for text, how in tries:  # the whole name, up to spelling
        found = keys.get(_key(text), [])
        if len(found) > 1:
            return NameMatch(None, candidates=tuple(found), copy_number=copy_number)
        if found:
            return NameMatch(found[0], _spelling(text, found[0]) + how, copy_number=copy_number)
    for text, how in tries:  # an exercise name ending the stem, after a prefix
        key = _key(text)
        ends = [k for k in keys if key.endswith("_" + k)]
        if ends:
            longest = max(ends, key=len)
            found = keys[longest]
            if len(found) > 1:
                return NameMatch(None, candidates=tuple(found), copy_number=copy_number)
            prefix = _prefix_of(text, longest)
            spelling = _spelling(text[len(prefix):], found[0])
            return NameMatch(found[0], spelling + (f"prefix {prefix!r}",) + how, copy_number=copy_number)
    return NameMatch(None, copy_number=copy_number)


def lms_student(stem: str, blackboard: dict[str, str] | None = None) -> str | None:
    """The student an LMS export names in a file's prefix, or None (then the folder names the student).

    A flat download puts the whole class in one folder, so the prefix is the only identity:

    >>> lms_student("annlee_late_12345_67890_04_exact_ticks"), lms_student("LATE_annlee_1_2_x")  # Canvas
    ('annlee', 'annlee')
    >>> lms_student("Ann Lee_12345_assignsubmission_file_04_exact_ticks")  # Moodle
    'Ann Lee'
    >>> lms_student("HW 2_ann_lee_attempt_2026-11-30-12-00-00_04_exact_ticks"), lms_student("04_exact_ticks")
    ('ann_lee', None)

    A Blackboard name is ``ASSIGNMENT_USERNAME_attempt_...`` and both parts may hold
    underscores; ``blackboard`` maps each ``ASSIGNMENT_USERNAME`` of the folder to its
    username (``blackboard_students``). Without it, the first ``_`` ends the assignment.
    """
    head = blackboard_head(stem)
    if head is not None:
        if blackboard and head in blackboard:
            return blackboard[head]
        return blackboard_students([head])[head]
    for pattern in _LMS_STUDENT:
        found = pattern.match(stem)
        if found:
            return found.group("student")
    return None


_LMS_STUDENT = [
    re.compile(r"^(?P<student>.+?)_\d+_assignsubmission_(?:file|onlinetext)_", re.IGNORECASE),  # Moodle
    re.compile(r"^(?:late_)?(?P<student>[^_]+?)_(?:late_)?\d+_\d+_", re.IGNORECASE),  # Canvas
]


_BLACKBOARD = re.compile(r"^(?P<head>.+?)_attempt_\d{4}(?:-\d\d){5}(?:_|$)")


def blackboard_head(stem: str) -> str | None:
    """``ASSIGNMENT_USERNAME`` of a Blackboard download's file name, or None.

    >>> blackboard_head("HW2_ann_lee_attempt_2026-11-30-12-00-00_04_exact_ticks"), blackboard_head("x_1_2_y")
    ('HW2_ann_lee', None)
    """
    found = _BLACKBOARD.match(stem)
    return found.group("head") if found else None


def blackboard_students(heads: Collection[str]) -> dict[str, str]:
    """Each ``ASSIGNMENT_USERNAME`` head of one download mapped to its username. Never merges two heads.

    One download is one assignment, so every head starts with the same assignment name:
    it is the longest prefix, ending at a ``_``, that all heads share. Usernames may hold
    underscores (``ann_lee`` and ``bob_lee`` stay apart, where taking the last word
    would make both ``lee``). Distinct heads keep distinct usernames, as removing one
    shared prefix cannot make two strings equal. With a single head, the assignment name
    is taken to end at the first ``_``. Two usernames sharing their first word as well
    (``ann_lee``, ``ann_lim``) come out shortened (``lee``, ``lim``), still apart.

    >>> blackboard_students(["HW2_ann_lee", "HW2_bob_lee", "HW2_cy"])
    {'HW2_ann_lee': 'ann_lee', 'HW2_bob_lee': 'bob_lee', 'HW2_cy': 'cy'}
    >>> blackboard_students(["Homework_2_dee"])
    {'Homework_2_dee': '2_dee'}
    """
    distinct = sorted(set(heads))
    if len(distinct) == 1:
        head = distinct[0]
        _, sep, user = head.partition("_")
        return {head: user if sep and user else head}
    shared = os.path.commonprefix(distinct)
    cut = shared.rfind("_") + 1
    names = {head: head[cut:] or head for head in distinct}
    if len(set(names.values())) < len(names):  # cannot happen for distinct heads; never merge anyway
        return {head: head for head in distinct}
    return names


def strip_copy_marks(stem: str) -> tuple[str, int]:
    """Remove copy marks (``(1)``, ``-1``, `` copy``...) from a stem; return ``(base, copy number)``.

    The copy number is that of the outermost mark (1 for a mark without a number, 0 for none).

    >>> strip_copy_marks("ex (2)")
    ('ex', 2)
    >>> strip_copy_marks("Copy of ex - Copy")
    ('ex', 1)
    """
    number = 0
    for _ in range(4):  # a few nested marks at most ("name (1) (2)"); never loops on a weird name
        for pattern in _COPY_MARKS:
            found = pattern.match(stem.strip())
            if found and found.group("base").strip():
                if number == 0:
                    digits = found.groupdict().get("n")
                    number = int(digits) if digits else 1
                stem = found.group("base").strip()
                break
        else:
            break
    return stem, number


def _key(text: str) -> str:
    """Case, Unicode form and separator runs folded, so ``02-Exact Ticks`` and ``04_exact_ticks`` agree."""
    folded = unicodedata.normalize("NFC", text).casefold()
    return _SEPARATORS.sub("_", folded).strip("_")


def _spelling(text: str, name: str) -> tuple[str, ...]:
    if text == name:
        return ()
    if text.casefold() == name.casefold():
        return ("case",)
    return ("spelling (case, separators or Unicode form)",)


def _prefix_of(text: str, key_suffix: str) -> str:
    """The part of ``text`` before the exercise name its key ends with (for the note)."""
    words = [w for w in _SEPARATORS.split(text) if w]
    tail = len([w for w in key_suffix.split("_") if w])
    kept = words[: len(words) - tail]
    # Locate the start of the last `tail` words in the original text, to quote the prefix as written.
    position = len(text)
    for word in reversed(words[len(kept):]):
        position = text.rfind(word, 0, position)
    return text[:position]
