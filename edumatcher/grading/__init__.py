"""Exercise tooling: ``release`` (student copies from solutions) and ``grade`` (score submissions).

AUTHORING GUIDE - how to write an exercise notebook
===================================================

Files
-----
* ``solutions/NN_topic.ipynb`` - the source: narrative, solutions, checks, hidden tests. Trusted.
* ``exercises/NN_topic.ipynb`` - the student copy, generated: ``python -m edumatcher release``.
  Never edit it by hand; commit it. ``tests/test_release.py`` fails while it is out of date
  (the same comparison as ``python -m edumatcher release --check``).
* Submissions are matched to sources by file name, so keep the name stable once released.

Marking cells (nbgrader schema 3, compatible with nbgrader)
-----------------------------------------------------------
Every marked cell has ``metadata.nbgrader`` with ``grade``, ``solution``, ``locked`` (booleans),
``schema_version: 3`` and a ``grade_id`` unique in the notebook (1-64 letters, digits, ``_``, ``-``;
it becomes a gradebook column). Build cells with ``edumatcher.grading.authoring`` rather than
typing metadata: ``answer_cell(id, source)``, ``check_cell(id, source, points)``,
``readonly_cell(id, source, cell_type)``.

=========  ========  =====  ======  ========  ==============================================
kind       solution  grade  locked  points    what happens
=========  ========  =====  ======  ========  ==============================================
answer     true      false  false   -         region cleared on release; the student's version runs
check      false     true   true    > 0       locked + checksummed on release; RESTORED from the
                                              source before grading; full points if it runs cleanly
read-only  false     false  true    -         locked on release; restored before grading. Use it
                                              for narrative and setup code (checks still import
                                              what they use: rule 1 below)
plain      (no nbgrader metadata)             left to the student; runs as they left it
=========  ========  =====  ======  ========  ==============================================

Inside an **answer** cell (code or Markdown), wrap what the student must write::

    def best_bid(book):
        ### BEGIN SOLUTION
        return max(book.bids) if book.bids else None
        ### END SOLUTION

The student sees ``# YOUR CODE HERE`` and ``raise NotImplementedError()`` at the BEGIN line's
indentation (Markdown: ``YOUR ANSWER HERE``). Every answer cell needs at least one region.

Inside a **check** cell, instructor-only tests go between ``### BEGIN HIDDEN TESTS`` and
``### END HIDDEN TESTS``; release deletes them, grade runs them. The visible part should still
test something, so students can check themselves.

``release`` refuses (``Error: ...``, exit 1) a duplicate grade_id, a check without points > 0, a
cell that is both answer and check, a non-code check, unbalanced or nested markers, an answer cell
without a region, solution markers outside answer cells, hidden-test markers outside check cells,
and a notebook without checks.

Writing checks that cannot be fooled
------------------------------------
1. **Import what you use inside the check cell itself** (``from edumatcher.book import OrderBook``,
   ``import math``), never rely on a helper defined earlier in the notebook: a student's answer
   cell can redefine any global, and the checks run in the same kernel. A check that calls a
   global helper is fooled when an answer cell redefines that helper; one that imports it is not.
2. Compare with plain ``==`` on values the check computes itself, and give every ``assert`` a
   message - the message is what the student reads in the feedback::

       assert result == expected, f"best_bid of {bids} should be {expected}, got {result}"

3. Test correctness and behaviour, **never speed** (no timed assertions: the grading machine is
   shared and slow). Keep each check well under a few seconds and deterministic (fixed seeds);
   the whole solution must run well inside the defaults (60 s a cell, 300 s a notebook, 1 CPU).
   Grading runs in a temporary directory: read no file by a path relative to the notebook; get
   data from ``edumatcher`` functions instead.
4. The blank student copy must score 0 on every check (each check must call the student's code,
   which raises ``NotImplementedError``) and the solution must score full marks. Test both for
   every exercise (see "Testing an exercise").
5. One check = one idea, worth 1-3 points; points may be fractional (shown as ``1.5``).

What grading does (``grade``)
-----------------------------
restore -> execute -> score -> report, one worker subprocess per submission:

* **restore** (``restore.py``): checks and read-only cells come from the source (hidden tests
  included), matched by grade_id; deleted ones are re-inserted at their source position, edited or
  retyped ones replaced, copies dropped; cells claiming ``grade: true`` that the source does not
  have run as ordinary code and earn nothing; known cells return to source order. Missing answer
  cells, changed types and duplicates are reported in the feedback, never fatal. Student code
  never runs before this.
* **execute** (``execute.py``): nbclient, a fresh ``python3`` kernel, cwd a temporary directory,
  every cell in order; errors do not stop the run; a cell over ``--cell-timeout`` is interrupted;
  output is capped per cell. The worker is killed (kernel and children too) past ``--timeout``.
* **score** (``score.py``): a check earns its points when it runs to the end without an
  exception (stderr warnings are fine), 0 when it raises, times out, or the kernel dies; after a
  kernel death or an unstoppable cell, the remaining checks score 0 with that reason.
* **report** (``report.py``): ``gradebook/grades.csv`` (student, exercise, total, max, status,
  reason, submission), ``gradebook/<exercise>.csv`` (a column per check grade_id; first data row,
  student ``(points)``, gives each check's worth), ``gradebook/feedback/<student>/<exercise>.md``,
  ``gradebook/autograded/<student>/<exercise>.ipynb``, and a summary table on the terminal.

Student identity comes from folders (nbgrader's ``submitted/<student>/<exercise>.ipynb`` layout):
the first folder below a folder argument, else the folder holding the file. Row statuses: graded,
timeout, kernel-died, invalid, empty, unknown-exercise, error (see ``score.py``). Checks that
finished before a timeout or kernel death keep their outcome; the rest score 0.

The autograded notebooks contain the hidden tests: do not hand them to students (the feedback
files show only each check's verdict and assertion message).

**Student code runs unsandboxed** with the grader's permissions; only the timeouts and a temporary
directory protect you. Restoring checks defeats edited, deleted and added cells, not a determined
attack on the kernel (e.g. monkeypatching a library module the checks import): grade untrusted
work in a container and look at surprising scores.

Commands
--------
::

    python -m edumatcher release solutions/ exercises/          # write student copies
    python -m edumatcher release solutions/ exercises/ --check  # CI: exit 1 if out of date
    python -m edumatcher grade submitted/ --source solutions/ --out gradebook/ --jobs 2 \\
        --cell-timeout 60 --timeout 300

Testing an exercise
-------------------
In the test suite, for each source notebook::

    from edumatcher.grading import check_exercise

    def test_exercise_01(tmp_path):
        blank, solution = check_exercise("solutions/01_topic.ipynb", tmp_path, cell_timeout=60)
        assert blank.status == "graded" and all(c.points == 0 for c in blank.checks), blank.checks
        assert solution.status == "graded" and solution.total == solution.max_points, solution.checks

``grade_one(source, submission)`` grades a single notebook the same way and returns a
``SubmissionResult`` (status, reason, ``checks`` with points and messages, notes).
"""

from __future__ import annotations

import importlib
from typing import Any

# Where each public name lives. Loaded on first use (PEP 562), so ``python -m edumatcher --help``
# and ``bench`` do not pay for importing nbformat and nbclient.
_EXPORTS = {
    "answer_cell": "authoring", "check_cell": "authoring", "readonly_cell": "authoring",
    "CheckSpec": "exercise", "Exercise": "exercise", "SourceError": "exercise",
    "find_exercises": "exercise", "load_exercise": "exercise",
    "compute_checksum": "notebook_cells", "notebook_text": "notebook_cells",
    "release_notebook": "release", "release_tree": "release", "check_release": "release",
    "restore_checks": "restore",
    "CheckResult": "score", "SubmissionResult": "score",
    "grade_one": "supervise", "grade_submissions": "supervise", "check_exercise": "supervise",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import a public name from its submodule on first access."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
