"""Decoy checks: a copy of a check changed so that no honest answer can pass it.

The kernel guard (``kernel_guard``, ``guarded_checks``) puts IPython back before each check, but
the checks run in the student's interpreter: code that rewrites the guard itself (through
``sys.modules``, ``gc`` or ``ctypes``) and then swallows every failure makes every check pass. A
decoy turns that into evidence. Next to a check, the grader runs a **twin** of it, built here,
that honest code cannot pass, and runs it exactly as the real check (the same reset, the same
appended witness line with a fresh random token, at the same place, the two in a random order).
A twin that passes means the checks were made to pass whatever the answer: the row becomes
``tampered`` (``score``). Honest code never passes one, by construction:

* **An expected value changed** (preferred): a top-level ``assert X == literal`` (or ``isclose(X,
  literal)`` with literal tolerances, or a tuple, list or dict of literals) becomes ``X == other``.
  A correct answer makes ``X == literal``, so it fails there. Two expected values of one kind are
  **swapped** when the check compares with two distinct ones (both then look written by the
  author), else **one is changed** to a value no near-miss returns: a number to its negative (0 to
  -1), a string or bytes reversed, one element of a collection so changed. A wrong answer passing
  the twin would have to return exactly that value there and be right everywhere else.
* **Else a contradiction**: after a top-level ``assert C`` whose test calls nothing of the
  student's (names, subscripts, arithmetic, ``len``...), the twin adds ``assert`` of the opposite
  test. No code passes both, whatever it returns.

Only asserts that run on every path of a passing check are used: top-level ones, and those
directly in a top-level ``with`` or in a ``for`` over a non-empty literal with no ``break`` or
``continue``. The change goes **inside the hidden tests** when the check has usable ones there:
the student's copy holds the visible part of every check, so a twin whose visible part differed
from it would give itself away, while the hidden part is text they have never seen.

What a twin cannot hide (the module docstring of ``guarded_checks`` lists the rest): a check with
no usable assert has no twin (``decoy_for`` returns None); for a check without hidden tests, the
change is in text the student has, so one who compares every check with their copy can tell its
twin apart (and could as well hard-code the answers such a check expects: give checks hidden
parts); a contradiction is visible in the twin's own text to code that looks for one; and a
student who knows which of two values is right needs no tampering to pass. Since ``decoy_for`` is
public, code in the kernel can run it on each check it sees and make pass exactly the checks whose
twin it will spot, passing no twin: only a changed value inside the hidden tests protects a check
(``tests/test_grade_attacks.py`` prints the points each exercise leaves exposed).
"""

from __future__ import annotations

import ast
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .notebook_cells import BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS, RegionError, find_regions

__all__ = ["Decoy", "decoy_for", "plan_twins"]

# (relative, absolute): at least math.isclose's and numpy.isclose's defaults.
_DEFAULT_TOLERANCE = (1e-5, 1e-8)
# Calls a contradiction may repeat: the builtins that return the same for the same argument.
_PURE_CALLS = frozenset({"len", "abs", "isinstance", "issubclass", "type", "round"})
# An exception class no library, and so no answer, raises: a twin's handler catches it instead of the
# one a right answer raises (a subclass of ValueError, so "except ValueError" code is unaffected).
_UNRAISED = "UnicodeTranslateError"
_FLIPPED = {ast.Eq: "!=", ast.NotEq: "==", ast.Lt: ">=", ast.GtE: "<", ast.Gt: "<=", ast.LtE: ">",
            ast.Is: "is not", ast.IsNot: "is", ast.In: "not in", ast.NotIn: "in"}

Literal = Any  # int | float | str | bytes, or a tuple, list or dict of them


@dataclass(frozen=True)
class Decoy:
    """A check's twin: its ``source`` and, for the instructor, ``what`` was changed (one line)."""

    source: str
    what: str


@dataclass(frozen=True)
class _Site:
    """A literal a reachable assert compares with: where it is in the text, its value, how it is compared."""

    line: int  # 1-based, as ast gives it
    start: int  # character offsets in that line
    end: int
    value: Literal
    hidden: bool
    tolerance: tuple[float, float] | None  # (relative, absolute) for isclose; None for ==

    @property
    def kind(self) -> str:
        return "number" if isinstance(self.value, (int, float)) else type(self.value).__name__


def decoy_for(source: str, rng: random.Random) -> Decoy | None:
    """The twin of the check whose code is ``source``, or None when it has nothing usable. O(len(source)).

    ``rng`` chooses among the candidate places (see the module docstring).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    lines = source.split("\n")
    hidden = _hidden_lines(source)
    reachable = list(_reachable(tree.body))
    asserts = [node for node in reachable if isinstance(node, ast.Assert)]
    sites = [site for node in asserts for site in _sites(node.test, lines, hidden)]
    handlers = _expected_exceptions(tree, reachable, lines, hidden)
    contradictable = [node for node in asserts if node.test.end_lineno == node.test.lineno and _repeatable(node.test)]
    # The hidden part first (text the student has never seen), then the visible one; in each, a changed value
    # (it looks written by the author), then an exception no code raises, then a contradiction.
    for in_hidden in (True, False):
        part = "a hidden test" if in_hidden else "the visible part"
        changes = _value_changes([site for site in sites if site.hidden == in_hidden], rng)
        if changes:
            what = "; ".join(f"line {site.line} ({part}) expects {_shown(value)} instead of {_shown(site.value)}"
                             for site, value in changes)
            return _checked(_replace(lines, changes), what)
        caught = [group for group in handlers if group[0].hidden == in_hidden]
        if caught:
            group = rng.choice(caught)
            what = (f"line {group[0].line} ({part}) catches {_UNRAISED} instead of "
                    f"{' or '.join(site.value for site in group)}: the exception a right answer raises goes through")
            return _checked(_replace(lines, [(site, _UNRAISED) for site in group], literal=False), what)
        opposable = [node for node in contradictable if (node.lineno in hidden) == in_hidden]
        if opposable:
            node = rng.choice(opposable)
            what = f"line {node.lineno} ({part}) is followed by its opposite: assert {_negation(node.test, source)}"
            return _checked(_contradict(lines, node, source), what)
    return None


def plan_twins(checks: dict[int, str], rng: random.Random) -> dict[int, tuple[Decoy, bool]]:
    """For each check (cell index -> source), its twin and whether the twin runs first (a coin toss), drawn
    from ``rng`` in index order; checks with no twin are left out. The worker draws ``rng`` from the
    system's randomness; a test passes a seeded one to know the order."""
    plan: dict[int, tuple[Decoy, bool]] = {}
    for index in sorted(checks):
        decoy = decoy_for(checks[index], rng)
        if decoy is not None:
            plan[index] = (decoy, rng.random() < 0.5)
    return plan


def _checked(text: str, what: str) -> Decoy | None:
    try:
        ast.parse(text)
    except SyntaxError:  # not expected: each edit puts a literal or a name in place of one, or adds a statement
        return None
    return Decoy(text, what)


def _hidden_lines(source: str) -> set[int]:
    """1-based numbers of the lines inside hidden-test regions."""
    try:
        regions = find_regions(source, BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS)
    except RegionError:
        return set()
    return {number + 1 for first, last in regions for number in range(first, last + 1)}


def _reachable(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run on every path through ``body`` that ends without an exception: each statement
    of ``body``, and those directly in a ``with``, a ``try`` without handlers, or a ``for`` over a
    non-empty literal that has no ``break`` or ``continue``."""
    for node in body:
        yield node
        if isinstance(node, (ast.With, ast.AsyncWith)) or (isinstance(node, ast.Try) and not node.handlers):
            yield from _reachable(node.body)
        elif isinstance(node, ast.For) and _non_empty_literal(node.iter) and not _leaves_early(node.body):
            yield from _reachable(node.body)


def _non_empty_literal(node: ast.expr) -> bool:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.keys)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and node.args:
        stop = _literal_value(node.args[-1] if len(node.args) == 1 else node.args[1])
        start = 0 if len(node.args) == 1 else _literal_value(node.args[0])
        return len(node.args) <= 2 and isinstance(stop, int) and isinstance(start, int) and stop > start
    return False


def _leaves_early(body: list[ast.stmt]) -> bool:
    """True if a ``break`` or ``continue`` of this loop (not of a nested one) may skip statements."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                             ast.Lambda)):
            continue  # their break/continue belong to them
        stack.extend(ast.iter_child_nodes(node))
    return False


def _sites(test: ast.expr, lines: list[str], hidden: set[int]) -> list[_Site]:
    """The literals an assert's test compares with, each of which must match for the test to hold."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [site for value in test.values for site in _sites(value, lines, hidden)]
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        for node, other in ((test.comparators[0], test.left), (test.left, test.comparators[0])):
            if _literal_value(other) is None:  # literal == literal holds whatever the answer
                site = _site(node, lines, hidden, None)
                if site is not None:
                    return [site]
        return []
    if isinstance(test, ast.Call) and _called_name(test.func) == "isclose" and len(test.args) == 2:
        tolerance = _tolerance(test.keywords)
        if tolerance is None:
            return []
        for node, other in ((test.args[1], test.args[0]), (test.args[0], test.args[1])):
            if _literal_value(other) is None:
                site = _site(node, lines, hidden, tolerance)
                if site is not None and site.kind == "number":
                    return [site]
    return []


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _tolerance(keywords: list[ast.keyword]) -> tuple[float, float] | None:
    """``(relative, absolute)`` from literal keywords (math's and numpy's names); None if one is not literal."""
    relative, absolute = _DEFAULT_TOLERANCE
    for keyword in keywords:
        value = _literal_value(keyword.value)
        if keyword.arg in ("rel_tol", "rtol") and isinstance(value, (int, float)):
            relative = max(relative, float(value))
        elif keyword.arg in ("abs_tol", "atol") and isinstance(value, (int, float)):
            absolute = max(absolute, float(value))
        else:
            return None
    return relative, absolute


def _literal_value(node: ast.expr) -> Literal | None:
    """The value of a number, string or bytes literal (negative numbers included), or of a flat tuple,
    list or dict of them; None for anything else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _literal_value(node.operand)
        if isinstance(inner, (int, float)):
            return -inner if isinstance(node.op, ast.USub) else inner
        return None
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float, str, bytes)):
            return None
        return None if isinstance(value, float) and not math.isfinite(value) else value
    if isinstance(node, (ast.Tuple, ast.List)) and node.elts:
        items = [_literal_value(element) for element in node.elts]
        if any(item is None or isinstance(item, (tuple, list, dict)) for item in items):
            return None
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Dict) and node.keys and None not in node.keys:
        keys = [_literal_value(key) for key in node.keys]  # type: ignore[arg-type]
        values = [_literal_value(value) for value in node.values]
        if any(item is None or isinstance(item, (tuple, list, dict)) for item in keys + values):
            return None
        return dict(zip(keys, values, strict=True)) if len(set(keys)) == len(keys) else None
    return None


def _site(node: ast.expr, lines: list[str], hidden: set[int], tolerance: tuple[float, float] | None) -> _Site | None:
    value = _literal_value(node)
    if value is None or node.end_lineno != node.lineno or node.end_col_offset is None:
        return None  # a literal over several lines is left alone: edits stay on one line
    line = lines[node.lineno - 1].encode("utf-8")
    # ast gives offsets in UTF-8 bytes; the text is edited in characters.
    start = len(line[: node.col_offset].decode("utf-8", "replace"))
    end = len(line[: node.end_col_offset].decode("utf-8", "replace"))
    return _Site(node.lineno, start, end, value, node.lineno in hidden, tolerance)


def _value_changes(sites: list[_Site], rng: random.Random) -> list[tuple[_Site, Literal]]:
    """The places and new values of a twin: a swap of two distinct values of one kind, else one change."""
    preferred = sites
    pairs = [(a, b) for i, a in enumerate(preferred) for b in preferred[i + 1:]
             if a.kind == b.kind and _far(a, b.value) and _far(b, a.value)]
    if pairs:
        first, second = rng.choice(pairs)
        return [(first, second.value), (second, first.value)]
    candidates = [(site, _changed(site.value, rng)) for site in preferred]
    candidates = [(site, value) for site, value in candidates if value is not None and _far(site, value)]
    return [rng.choice(candidates)] if candidates else []


def _changed(value: Literal, rng: random.Random) -> Literal | None:
    """A value no near-miss returns: a number's negative (0: -1), a string or bytes reversed (or doubled);
    in a collection, one element (or one dict value) changed so."""
    if isinstance(value, (int, float)):
        return -value if value != 0 else type(value)(-1)
    if isinstance(value, (str, bytes)):
        if len(value) >= 2 and value[::-1] != value:
            return value[::-1]
        return value + value if value else None
    if isinstance(value, dict):
        key = rng.choice(list(value))
        changed = _changed(value[key], rng)
        return None if changed is None else {**value, key: changed}
    index = rng.randrange(len(value))
    changed = _changed(value[index], rng)
    if changed is None:
        return None
    items = list(value)
    items[index] = changed
    return tuple(items) if isinstance(value, tuple) else items


def _far(site: _Site, value: Literal) -> bool:
    """True when the site's comparison, true for ``site.value``, must be false for ``value``."""
    if site.kind != ("number" if isinstance(value, (int, float)) else type(value).__name__):
        return False
    if site.tolerance is None:
        return value != site.value
    relative, absolute = site.tolerance
    a, b = float(site.value), float(value)
    return abs(a - b) > 2 * (absolute + relative * max(abs(a), abs(b)))


def _shown(value: Literal) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _replace(lines: list[str], changes: list[tuple[_Site, Literal]], *, literal: bool = True) -> str:
    """``lines`` with each site's text replaced by its new value's literal (or, ``literal=False``, by the
    value itself: a name), right to left in each line."""
    edited = list(lines)
    for site, value in sorted(changes, key=lambda change: (change[0].line, change[0].start), reverse=True):
        line = edited[site.line - 1]
        text = repr(value) if literal else str(value)
        if literal and isinstance(value, (int, float)) and value < 0 and line[: site.start].rstrip()[-1:] in ("-", "+", "*", "/",
                                                                                              "%", "@", "~"):
            text = f"({text})"  # "x - -1" reads oddly and "x ** -1" binds differently
        edited[site.line - 1] = line[: site.start] + text + line[site.end:]
    return "\n".join(edited)


def _expected_exceptions(tree: ast.Module, reachable: list[ast.stmt], lines: list[str],
                         hidden: set[int]) -> list[list[_Site]]:
    """The exception classes of the ``except`` clauses of each ``try`` a passing check must leave through a
    handler: one list of sites per ``try`` (a twin changes them all, or another handler would still catch).

    A ``try`` qualifies when finishing its body normally leads straight to a ``raise`` (one in its
    ``else``, or the statement after it) and the body holds no ``return``: a check that passes got
    out of it through a handler. It must be reachable itself, or sit directly in a function defined
    at the top level and called by a reachable statement (``_raises(ValueError, f, x)`` helpers).
    """
    candidates = [node for node in reachable if isinstance(node, ast.Try) and _raises_after(node, None)]
    called = {node.value.func.id for node in reachable
              if isinstance(node, (ast.Expr, ast.Assign)) and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, ast.Name)}
    for function in tree.body:
        if isinstance(function, ast.FunctionDef) and function.name in called:
            candidates += [node for node, after in zip(function.body, [*function.body[1:], None], strict=True)
                           if isinstance(node, ast.Try) and _raises_after(node, after)]
    groups = []
    for node in candidates:
        kinds = [handler.type for handler in node.handlers]
        if not kinds or _returns(node.body) or any(kind is None or kind.end_lineno != kind.lineno
                                                   or kind.end_col_offset is None for kind in kinds):
            continue
        group = []
        for kind in kinds:
            line = lines[kind.lineno - 1].encode("utf-8")
            start = len(line[: kind.col_offset].decode("utf-8", "replace"))
            end = len(line[: kind.end_col_offset].decode("utf-8", "replace"))
            group.append(_Site(kind.lineno, start, end, lines[kind.lineno - 1][start:end], kind.lineno in hidden, None))
        groups.append(group)
    return groups


def _raises_after(node: ast.Try, following: ast.stmt | None) -> bool:
    """True when a ``try`` whose body finishes normally goes straight to a ``raise``."""
    return any(isinstance(statement, ast.Raise) for statement in node.orelse) or isinstance(following, ast.Raise)


def _returns(body: list[ast.stmt]) -> bool:
    """True if ``body`` may ``return`` (outside functions defined in it)."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _repeatable(test: ast.expr) -> bool:
    """True when evaluating ``test`` twice in a row must give the same truth: it calls nothing of the
    student's, and consumes no iterator (no comprehension or generator)."""
    for node in ast.walk(test):
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _PURE_CALLS):
            return False
        if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp, ast.Lambda, ast.NamedExpr,
                             ast.Await, ast.Yield, ast.YieldFrom, ast.Starred)):
            return False
    return True


def _negation(test: ast.expr, source: str) -> str:
    """The source of the opposite test: the comparison's operator flipped, ``not`` removed, or ``not (...)``."""
    text = ast.get_source_segment(source, test) or ast.unparse(test)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _FLIPPED:
        left = ast.get_source_segment(source, test.left) or ast.unparse(test.left)
        right = ast.get_source_segment(source, test.comparators[0]) or ast.unparse(test.comparators[0])
        return f"{left} {_FLIPPED[type(test.ops[0])]} {right}"
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return ast.get_source_segment(source, test.operand) or ast.unparse(test.operand)
    return f"not ({text})"


def _contradict(lines: list[str], node: ast.Assert, source: str) -> str:
    """``lines`` with ``assert <opposite test>, <same message>`` inserted after ``node``."""
    indent = lines[node.lineno - 1][: len(lines[node.lineno - 1]) - len(lines[node.lineno - 1].lstrip())]
    segment = ast.get_source_segment(source, node.msg) if node.msg is not None else None
    message = f", {segment}" if segment and "\n" not in segment else ""  # a message over lines is left out
    negated = _negation(node.test, source)  # one line: only single-line tests are contradicted
    end = node.end_lineno or node.lineno
    return "\n".join([*lines[:end], f"{indent}assert {negated}{message}", *lines[end:]])
