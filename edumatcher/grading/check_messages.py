"""What a student reads about a failed check: never text that could carry a hidden test out.

An exception's message is whatever the code that raised it chose, and that code may be the
student's: an answer called by a check can raise an error whose text is the running check's
source (``get_ipython().kernel.get_parent()``), hidden tests included, or the source of an
earlier check kept in IPython's history. Feedback files go to students, so:

* for a check **with hidden tests**, the message is the grader's own: the exception's class name,
  and where the check stopped: in its visible part, the message of the statement there when the
  check gives it as a plain string (so ``AssertionError: mean([]) should raise ValueError`` reads
  as before), else that line quoted from the student's own copy; or "in a hidden test";
* for any other check, and for an answer cell's error, the kernel's message is shown (it is what
  students learn from: ``add(2, 3) should be 5, got 4``) unless it holds a line of a hidden test of
  the exercise, in which case it is replaced the same way.

The line number comes from the traceback, which the student's code could also shape; the most
it can do with that is pick which of the check's own lines is quoted.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from .notebook_cells import BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS, RegionError, find_regions

__all__ = ["HiddenText", "check_message", "answer_message", "describe_error"]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# IPython's frame header for a cell ("Cell In[12], line 7"), and an older form ("<ipython-input-3-...>").
_CELL_FRAME = re.compile(r"(?:Cell In\s*\[\d*\],\s*line\s+(\d+))|(?:<ipython-input-[^>]*>)")
_ARROW_LINE = re.compile(r"^\s*-+>\s*(\d+)")
_ARROW = re.compile(r"^-+>\s*\d*\s*")  # IPython's "----> 12 " prefix on the failing line
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]{0,79}$")
# Hidden lines shorter than this are too common ("else:", "pass") to tell a leak from a coincidence.
_MIN_LEAK = 16


class HiddenText:
    """The hidden-test lines of an exercise, to recognise them in text the kernel sends back."""

    def __init__(self, check_sources: Iterable[str]) -> None:
        """Collect every hidden line of ``check_sources`` (whitespace-normalised, long enough to tell) that no
        visible part shows too (``from math import isclose``, hidden here and visible there, is no secret)."""
        sources = list(check_sources)
        hidden = {_normal(line) for source in sources for line in _hidden_part(source).split("\n")}
        shown = "\n".join(_normal(line) for source in sources for line in _visible_part(source).split("\n"))
        self.lines = {line for line in hidden if len(line) >= _MIN_LEAK and line not in shown}

    def leaks(self, text: str) -> bool:
        """True if ``text`` holds one of the hidden lines."""
        flat = _normal(text)
        return any(line in flat for line in self.lines)


def check_message(message: str, ename: str, traceback: Iterable[str], source: str, hidden: HiddenText) -> str:
    """The feedback for a check (code ``source``) that failed with ``message`` (see the module docstring).

    ``ename`` is empty when ``message`` is the grader's own (a timeout, a kernel death, the guard's
    verdict): such messages are returned as they are.
    """
    if not ename:
        return message
    if _hidden_part(source).strip() == "" and not hidden.leaks(message):
        return message
    return _own_words(ename, _failing_line(traceback), source)


def answer_message(message: str, ename: str, hidden: HiddenText) -> str:
    """The note for an answer cell that failed: the kernel's message unless it holds hidden-test text."""
    if not ename or not hidden.leaks(message):
        return message
    return f"{_name(ename)} (its message is not shown: it contained the text of a hidden test)"


def _own_words(ename: str, line: int | None, source: str) -> str:
    lines = source.split("\n")
    hidden = _hidden_lines(source)
    what = _name(ename)
    if line is None or not 1 <= line <= len(lines):
        return f"{what} (where in the check is not known)"
    if line in hidden:
        return f"{what} in a hidden test"
    said = _literal_message(source, line)
    if said:
        return f"{what}: {said}"
    shown = lines[line - 1].strip()
    if shown.startswith(("except", "else", "finally")):
        # IPython points at the handler a passing exception went through, not at the call that raised it.
        return f"{what}, raised in the `try` block that ends before line {line}"
    shown = shown if len(shown) <= 200 else shown[:197] + "..."
    return f"{what} at line {line}: `{shown}`"


def _name(ename: str) -> str:
    return ename if _NAME.match(ename) else "an exception"


def _failing_line(traceback: Iterable[str]) -> int | None:
    """The check's own line where it stopped: from the first cell frame of the traceback."""
    for entry in traceback:
        text = _ANSI.sub("", str(entry))
        match = _CELL_FRAME.search(text)
        if not match:
            continue
        if match.group(1):
            return int(match.group(1))
        for row in text.splitlines():
            arrow = _ARROW_LINE.match(row)
            if arrow:
                return int(arrow.group(1))
        return None
    return None


def _literal_message(source: str, line: int) -> str:
    """The message the check's own statement on ``line`` gives when it is a plain string: an ``assert``'s,
    or the one argument of a ``raise AssertionError("...")``; else ""."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Assert, ast.Raise)) or not node.lineno <= line <= (node.end_lineno or node.lineno):
            continue
        message = node.msg if isinstance(node, ast.Assert) else None
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and len(node.exc.args) == 1:
            message = node.exc.args[0]
        if isinstance(message, ast.Constant) and isinstance(message.value, str):
            return message.value
    return ""


def _hidden_lines(source: str) -> set[int]:
    try:
        regions = find_regions(source, BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS)
    except RegionError:
        return set(range(1, source.count("\n") + 2))  # unbalanced: treat it all as hidden
    return {number + 1 for first, last in regions for number in range(first, last + 1)}


def _hidden_part(source: str) -> str:
    lines = source.split("\n")
    return "\n".join(lines[number - 1] for number in sorted(_hidden_lines(source)) if number <= len(lines))


def _visible_part(source: str) -> str:
    lines = source.split("\n")
    hidden = _hidden_lines(source)
    return "\n".join(line for number, line in enumerate(lines, start=1) if number not in hidden)


def _normal(text: str) -> str:
    return " ".join(text.split())


def describe_error(ename: str, evalue: str, traceback: list[str] | None = None) -> str:
    """One readable line for an exception raised in a cell: ``Name: message``, or the failing line.

    A bare ``assert`` has no message, so the line IPython marks with an arrow is shown instead.

    >>> describe_error("AssertionError", "add(2, 3) should be 5")
    'AssertionError: add(2, 3) should be 5'
    >>> describe_error("AssertionError", "", ["Cell In[3], line 2", "----> 2 assert f(1) == 2"])
    'AssertionError at: assert f(1) == 2'
    """
    if evalue and evalue.strip():
        text = f"{ename}: {evalue.strip()}"
    else:
        lines = [line for entry in traceback or [] for line in _ANSI.sub("", str(entry)).splitlines()]
        marked = [line.strip() for line in lines if line.lstrip().startswith("---->")]
        if marked:
            text = f"{ename} at: {_ARROW.sub('', marked[-1])}"
        else:
            text = ename or "error"
    return text if len(text) <= 1000 else text[:997] + "..."
