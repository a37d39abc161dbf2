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
answer     true      false  false   -         code only: region cleared on release; the student's
                                              version runs
manual     true      true   false   > 0       a written (Markdown) answer graded by a person: region
                                              cleared to YOUR ANSWER HERE, never locked; the student's
                                              text is kept and shown by ``review``; not autograded
                                              (``Exercise.manual``)
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
and a notebook without checks; and, for manual cells, a manual cell without points > 0, a locked
manual cell, one without a solution region, a code cell marked as both answer and graded, and a
Markdown answer with ``grade: false`` (nbgrader rejects it). Answer cells are released
``deletable: false``, as nbgrader does, so ``nbgrader generate_assignment`` writes exactly our
student copies (``tests/test_nbgrader_compat.py``).

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
6. Give every check a hidden part with two top-level ``assert X == <literal>`` (or ``isclose(X,
   <literal>)``) on values the right answer always gives (seeded data, counts, structure; never a
   timing or a machine-dependent figure). The grader runs a decoy twin of each check with the two
   values swapped (``decoys.py``): inside the hidden part the twin looks to the student like the
   check itself. A twin made otherwise (a contradiction, a changed ``except``, a change in the
   visible part the student has) can be told from the check by code that reads it, which then
   swallows the failures of exactly those checks and passes no twin
   (``tests/test_grade_attacks.py``). ``tests/test_grade_decoys.py`` fails an exercise with a check
   whose twin changes no value inside its hidden part.

What grading does (``grade``)
-----------------------------
discover -> plan -> (restore -> execute -> score) per submission -> record -> export:

* **discover** (``submissions.py``, ``name_matching.py``): files to submissions: student from the
  folder (or an LMS prefix), exercise from the file name (exact, then case, copy marks, LMS
  prefixes; the row's note says how), the newest of several copies, links never followed, saved
  outputs dropped before the size limit.
* **plan** (``run_plan.py``): resume (skip rows already in the gradebook with the same file
  digest), ``--regrade``, ``--roster``.
* **restore** (``restore.py``): checks and read-only cells come from the source (hidden tests
  included), matched by grade_id; deleted ones are re-inserted at their source position, edited or
  retyped ones replaced, copies dropped; cells claiming ``grade: true`` that the source does not
  have run as ordinary code and earn nothing; known cells return to source order. Missing answer
  cells, changed types and duplicates are reported in the feedback, never fatal. Student code
  never runs before this. It runs in the trusted worker, outside the sandbox.
* **execute** (``execute.py``, ``sandbox.py`` + ``kernel_cgroups.py``, ``guarded_checks.py`` +
  ``kernel_guard.py``, ``decoys.py``): nbclient, a fresh ``python3`` kernel inside bubblewrap
  (``--sandbox``; ``none`` must be asked for), cwd an empty size-capped tmpfs, every cell in order;
  errors do not stop the run; a cell over ``--cell-timeout`` is interrupted; output is capped per
  cell and per notebook (display metadata included, widget state never kept); memory, file size
  and processes are capped (a user of its own per kernel as root, a cgroup per kernel where one can
  be made). Before each check the kernel's cell machinery is put back as it was before any student
  code ran, and the check's pass is cross-checked on the grader's own channel; its decoy twin runs
  the same way, just before or after it. The worker parses the submission under a memory cap, is
  killed (kernel and children too) past ``--timeout``, and dies with the grader.
* **score** (``score.py``, ``check_messages.py``): a check earns its points when it runs to the end
  without an exception (stderr warnings are fine) and the cross-check agrees, 0 when it raises,
  times out, or the kernel dies; after a kernel death or an unstoppable cell, the remaining checks
  score 0 with that reason. A decoy twin that passes makes the row ``tampered``: 0 points, for the
  instructor to review. A failed check with hidden tests is explained in the grader's own words.
* **record** (``gradebook.py``): one committed SQLite transaction per finished submission in
  ``gradebook/gradebook.sqlite``, with the exercise version it was graded against (rows of an older
  version are graded again: ``run_plan.py``); a stop signal (``stopping.py``) or a database error
  kills the workers and keeps what is committed. One run per gradebook folder (``run_lock.py``);
  student names are one spelling per student (``identities.py``); temporary folders live under one
  folder per run, swept when that run is gone (``scratch.py``).
* **export** (``report.py``, ``class_report.py``): from the whole database, every run:
  ``grades.csv``, ``<exercise>.csv``, ``totals.csv``, ``feedback/<student>/<exercise>.md``,
  ``class_report.html``; ``autograded/<student>/<exercise>.ipynb`` is written by the worker.
  ``review`` (``review.py``) pages the written answers and imports the manual points.

Row statuses: graded, tampered, timeout, kernel-died, invalid, empty, unknown-exercise, error (see
``score.py``), and not-submitted (a roster student without a file). Checks that finished before a
timeout or kernel death keep their outcome; the rest score 0.

The autograded notebooks contain the hidden tests: do not hand them to students (the feedback
files show only each check's verdict and assertion message).

**What the sandbox, the guard and the decoys do not cover** (see ``sandbox.py``, ``guarded_checks.py``
and ``decoys.py``): the checks run in the student's interpreter, so code written against a check's
imports, the grader's in-kernel objects or its token can make checks pass; a decoy twin turns that
into a ``tampered`` row wherever it also makes the twin pass, which code that cannot tell the twin
from the check does. Code that tells them apart by comparing a check with the student's own copy
(checks without hidden tests) or by knowing the right value, and a check with no twin, remain: look
at surprising scores. Without bubblewrap (``--sandbox none``) student code runs with the grader's
permissions: grade untrusted work in a container.

Commands
--------
::

    python -m edumatcher release solutions/ exercises/          # write student copies
    python -m edumatcher release solutions/ exercises/ --check  # CI: exit 1 if out of date
    python -m edumatcher grade submitted/ --source solutions/ --out gradebook/ --jobs 2 \\
        --cell-timeout 60 --timeout 300 [--roster roster.csv] [--sandbox auto|bwrap|none]
    python -m edumatcher grade submitted/ --out gradebook/ --regrade ann/04_exact_ticks
    python -m edumatcher review gradebook/ [--import gradebook/review/manual_scores.csv]
    python -m edumatcher release --student-tree ../class-repo --binder-repo OWNER/REPO

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
    "manual_answer_cell": "authoring", "ManualSpec": "exercise",
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
