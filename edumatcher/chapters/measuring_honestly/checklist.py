"""The checklist before touching a hot path, as a flow of yes/no questions a reader can walk.

The Python engine notes end with a decision procedure for every micro-optimisation; this
module states our version of it as data (``CHECKLIST``: questions that lead to
other questions or to an outcome) and ``ChecklistWalk`` walks it one answer at a
time, remembering the path so it can go back. Chapter 03's widget drives a walk;
``checklist_rows`` lays the whole flow out as a numbered table.

>>> walk = ChecklistWalk()
>>> walk.question
'Does a profile of the whole message path (not one leg of it) name this code?'
>>> walk.answer(False).text
'Profile the whole path first. Without it you cannot tell whether this code matters.'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Question", "Outcome", "CHECKLIST", "START", "ChecklistWalk", "checklist_rows", "all_paths"]


@dataclass(frozen=True)
class Question:
    """A yes/no question; ``yes`` and ``no`` name the next node."""

    text: str
    yes: str
    no: str


@dataclass(frozen=True)
class Outcome:
    """Where a walk ends: what to do, and whether the change goes in (``proceed``)."""

    text: str
    proceed: bool


CHECKLIST: dict[str, Question | Outcome] = {
    "profiled": Question("Does a profile of the whole message path (not one leg of it) name this code?", "share", "no-profile"),
    "share": Question("Does this code take at least 1 % of that profile?", "macro", "too-small"),
    "macro": Question("Is there a bigger cost above it: encoding, fan-out to many subscribers, an O(n) scan?", "macro-first", "guarantee"),
    "guarantee": Question("Does the change skip a check, or change the bytes on the wire?", "pinned", "tracked"),
    "pinned": Question("Is there a test that fails if the guarantee the shortcut relies on changes?", "tracked", "pin-first"),
    "tracked": Question("Does the change add a container (a tracked object) per message?", "tail", "remeasure"),
    "tail": Question("Have you measured p99 and p99 ex GC with the change, not only the median?", "remeasure", "measure-tail"),
    "remeasure": Question("Re-measured (median of many runs, spread shown, collector controlled): is the gain larger than the spread?", "recorded", "revert"),
    "recorded": Question("Is the measured gain and its reason written where the next reader will look?", "merge", "record"),
    "no-profile": Outcome("Profile the whole path first. Without it you cannot tell whether this code matters.", False),
    "too-small": Outcome("Leave it. Write down why, if someone is likely to ask again.", False),
    "macro-first": Outcome("Fix the bigger cost first, then come back with a new profile.", False),
    "pin-first": Outcome("Write that test first, so the shortcut cannot rot silently; then continue.", False),
    "measure-tail": Outcome("Measure the tail too: the collector pays for per-message containers later, in p99.", False),
    "revert": Outcome("Revert. A gain smaller than the run-to-run spread was not measured.", False),
    "record": Outcome("Record the number and the reason beside the code, then merge.", True),
    "merge": Outcome("Merge it.", True),
}
"""Node name -> question or outcome. Every ``yes``/``no`` names a node in this dict."""

START = "profiled"
"""The first question."""


class ChecklistWalk:
    """One walk through ``CHECKLIST``: ``answer`` moves on, ``back`` undoes, ``restart`` starts over.

    ``node`` is the current node's name; ``path`` the ``(question, answer)`` pairs so far.

    >>> walk = ChecklistWalk()
    >>> for a in (True, True, False, False, False, True, True):
    ...     node = walk.answer(a)
    >>> walk.done, node.proceed, len(walk.path)
    (True, True, 7)
    """

    def __init__(self, checklist: dict[str, Question | Outcome] | None = None, start: str = START) -> None:
        self.checklist = CHECKLIST if checklist is None else checklist
        if start not in self.checklist:
            raise KeyError(f"start node {start!r} is not in the checklist")
        self.start = start
        self.node = start
        self.path: list[tuple[str, bool]] = []
        self._visited: list[str] = []

    @property
    def current(self) -> Question | Outcome:
        """The node the walk is at."""
        return self.checklist[self.node]

    @property
    def done(self) -> bool:
        """True once the walk has reached an outcome."""
        return isinstance(self.current, Outcome)

    @property
    def question(self) -> str:
        """The current question's text; ``ValueError`` once the walk is done."""
        node = self.current
        if isinstance(node, Outcome):
            raise ValueError("the walk has reached an outcome; there is no question")
        return node.text

    def answer(self, yes: bool) -> Question | Outcome:
        """Answer the current question; return the node it leads to. ``ValueError`` if the walk is done."""
        node = self.current
        if isinstance(node, Outcome):
            raise ValueError("the walk has reached an outcome; restart() or back() first")
        self.path.append((node.text, bool(yes)))
        self._visited.append(self.node)
        self.node = node.yes if yes else node.no
        return self.current

    def back(self) -> Question | Outcome:
        """Undo the last answer (nothing happens at the start); return the current node."""
        if self._visited:
            self.node = self._visited.pop()
            self.path.pop()
        return self.current

    def restart(self) -> Question:
        """Go back to the first question and forget the path."""
        self.node = self.start
        self.path.clear()
        self._visited.clear()
        node = self.current
        assert isinstance(node, Question)
        return node


def checklist_rows(checklist: dict[str, Question | Outcome] | None = None) -> list[tuple[str, str, str, str]]:
    """``(number, question, if yes, if no)`` for every question in order; the answers name the next question's
    number, or the outcome (✔ go ahead, ✘ stop) where the walk ends.

    >>> checklist_rows()[0][2]
    'go to 2'
    """
    nodes = CHECKLIST if checklist is None else checklist
    numbers = {name: str(i) for i, name in enumerate((n for n, node in nodes.items() if isinstance(node, Question)), 1)}

    def where(name: str) -> str:
        node = nodes[name]
        if isinstance(node, Outcome):
            return ("✔ " if node.proceed else "✘ ") + node.text
        return f"go to {numbers[name]}"

    return [(numbers[name], n.text, where(n.yes), where(n.no)) for name, n in nodes.items() if isinstance(n, Question)]


def all_paths(checklist: dict[str, Question | Outcome] | None = None, start: str = START) -> list[list[tuple[str, bool]]]:
    """Every path from ``start`` to an outcome, as lists of ``(node, answer)``. Raises ``ValueError`` on a loop.

    >>> len(all_paths()) > 5
    True
    """
    nodes = CHECKLIST if checklist is None else checklist
    out: list[list[tuple[str, bool]]] = []

    def walk(name: str, path: list[tuple[str, bool]], seen: frozenset[str]) -> None:
        if name in seen:
            raise ValueError(f"the checklist loops back to {name!r}")
        node = nodes[name]
        if isinstance(node, Outcome):
            out.append(path)
            return
        for answer, nxt in ((True, node.yes), (False, node.no)):
            walk(nxt, path + [(name, answer)], seen | {name})

    walk(start, [], frozenset())
    return out
